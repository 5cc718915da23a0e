"""A Hugging Face dataset at a pinned revision."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

from bench.core.errors import DatasetError
from bench.sources.rows import PARQUET_BATCH_ROWS, check_hub_reachable, stream_rows
from bench.sources.source import Source

__all__ = ["Hub"]


@dataclass(kw_only=True)
class Hub(Source):
    """A Hugging Face dataset at a pinned revision, read page by page (streaming)."""

    source: str = "hf"
    hf_name: str = "nebius/SWE-rebench-openhands-trajectories"  # dataset id (or a local copy laid out like it)
    revision: str | None = None            # pinned revision
    split: str = "train"                   # dataset split
    names: ClassVar[tuple[str, ...]] = ("hf",)

    def check(self) -> None:
        if not os.path.isdir(str(self.hf_name)):  # a local copy laid out like the hub needs no network
            check_hub_reachable(f"hf://{self.hf_name}@{self.revision}")

    def rows(self) -> Iterator[dict[str, Any]]:
        where = f"hf://{self.hf_name}@{self.revision}"
        self.check()
        import datasets

        datasets.disable_progress_bars()
        try:
            stream = _open(datasets, self.hf_name, revision=self.revision, split=self.split, streaming=True)
        except Exception as err:  # noqa: BLE001
            raise DatasetError(
                f"cannot open {where}: {type(err).__name__}: {err}. The Hugging Face hub may be "
                "unreachable from this machine: download the parquet files elsewhere and run "
                "with dataset=local dataset.path=FILE"
            ) from err
        yield from stream_rows(stream, where)

    def provenance(self) -> dict[str, Any]:
        return {"path": None, "hf_name": self.hf_name, "revision": self.revision}

    def label(self) -> str:
        return str(self.hf_name).rsplit("/", 1)[-1]


def _open(datasets: Any, name: str, **kwargs: Any) -> Any:
    """The dataset's stream in small batches (:data:`PARQUET_BATCH_ROWS`) where its builder takes
    a batch size (parquet, as the pinned dataset is); as the builder reads otherwise."""
    try:
        return datasets.load_dataset(name, batch_size=PARQUET_BATCH_ROWS, **kwargs)
    except ValueError as err:  # "BuilderConfig ... doesn't have a 'batch_size' key": not parquet
        if "batch_size" not in str(err):
            raise
    return datasets.load_dataset(name, **kwargs)
