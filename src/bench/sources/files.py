"""Local files: a chat log (OpenAI format) and a parquet or jsonl file in the nebius column schema."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from bench.core.errors import ConfigError, DatasetError
from bench.sources.chatlog import ChatLogError, iter_chat_rows
from bench.sources.rows import empty_file, format_of, local_parquet_options, required_path, stream_rows
from bench.sources.source import Source

__all__ = ["ChatLog", "LocalFile"]

log = logging.getLogger("bench.data.selection")


@dataclass(kw_only=True)
class ChatLog(Source):
    """An OpenAI-format chat log, one conversation a line (README "Your own trajectories")."""

    source: str = "chat"
    path: str | None = None                # the .jsonl chat log
    profile: str = "generic"
    names: ClassVar[tuple[str, ...]] = ("chat",)

    def check(self) -> None:
        required_path(self.path, "dataset=chat needs dataset.path=FILE (a .jsonl chat log, one conversation a line)")

    def rows(self) -> Iterator[dict[str, Any]]:
        self.check()
        path = str(self.path)
        log.info("reading rows from %s ...", path)
        try:
            yield from iter_chat_rows(path)
        except (ChatLogError, UnicodeDecodeError) as err:
            raise DatasetError(f"cannot read {path}: {err}") from None

    def provenance(self) -> dict[str, Any]:
        return {"path": self.path, "hf_name": None, "revision": None}


_FORMATS = ("auto", "parquet", "json")


@dataclass(kw_only=True)
class LocalFile(Source):
    """A local parquet or jsonl file in the nebius column schema, read through ``datasets`` (streaming)."""

    source: str = "local"
    path: str | None = None                # the .parquet or .jsonl file
    format: str = "auto"                   # auto (from the extension) | parquet | json
    names: ClassVar[tuple[str, ...]] = ("local",)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.format not in _FORMATS:
            raise ConfigError(f"dataset.format: {self.format!r} is not one of {_FORMATS}")

    def check(self) -> None:
        required_path(self.path, "dataset=local needs dataset.path=FILE (a .parquet or .jsonl file)")

    def rows(self) -> Iterator[dict[str, Any]]:
        self.check()
        path = str(self.path)
        fmt = format_of(path, self.format)
        where = f"{path} ({fmt})"
        if empty_file(path, fmt):
            raise DatasetError(f"{where} has no rows")
        import datasets

        datasets.disable_progress_bars()
        try:
            options = local_parquet_options() if fmt == "parquet" else {}
            stream = datasets.load_dataset(fmt, data_files=path, split="train", streaming=True, **options)
        except Exception as err:  # noqa: BLE001 - datasets raises many types; report one message
            raise DatasetError(f"cannot read {where}: {type(err).__name__}: {err}") from err
        yield from stream_rows(stream, where)

    def provenance(self) -> dict[str, Any]:
        return {"path": self.path, "hf_name": None, "revision": None}

    def manifest_file(self) -> str | None:
        return self.path if self.path and self.path != "???" else None

    def label(self) -> str:
        return Path(self.path).stem if self.path else self.source
