"""The samples shipped with the package."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

from bench.core.errors import DatasetError
from bench.sources.chatlog import ChatLogError, iter_jsonl
from bench.sources.rows import check_columns
from bench.sources.source import SHIPPED, Source, sample_path

__all__ = ["Shipped"]

log = logging.getLogger("bench.data.selection")


@dataclass(kw_only=True)
class Shipped(Source):
    """A sample shipped with the package (``sample``: synthetic coding runs; ``ops``: real tau2-bench runs)."""

    source: str = "sample"
    names: ClassVar[tuple[str, ...]] = tuple(SHIPPED)

    def rows(self) -> Iterator[dict[str, Any]]:
        path = str(sample_path(self.source))
        if not os.path.isfile(path):
            raise DatasetError(f"dataset file not found: {path}")
        log.info("reading rows from %s ...", path)
        try:
            for number, row in iter_jsonl(path):
                check_columns(list(row), f"{path}, line {number}")
                yield row
        except (ChatLogError, UnicodeDecodeError) as err:
            raise DatasetError(f"cannot read {path}: {err}") from None

    def provenance(self) -> dict[str, Any]:
        return {"path": str(sample_path(self.source)), "hf_name": None, "revision": None}
