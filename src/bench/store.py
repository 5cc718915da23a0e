"""The job directory: append-only JSONL records, provenance, and resume bookkeeping.

Each answer and score is appended (and flushed) as soon as it exists, so a killed job
loses at most the line being written; :meth:`JobStore.open` drops a torn last line and
reports which (case_id, qid) pairs are already answered and scored.

Files: ``cases.jsonl``, ``rejected.jsonl``, ``views.jsonl``, ``answers.jsonl``,
``scores.jsonl``, ``reference_scores.jsonl``, ``calls.jsonl``, ``metrics.json``, ``run.json`` (``.hydra/`` is Hydra's).
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterable
from dataclasses import asdict, is_dataclass
from pathlib import Path
from typing import Any

__all__ = ["JobStore", "RECORD_JSON", "read_jsonl", "write_json"]

RECORD_JSON: dict[str, Any] = {"ensure_ascii": False, "default": str}  # one JSONL line of a record


def _plain(record: Any) -> Any:
    return asdict(record) if is_dataclass(record) else record


def read_jsonl(path: Path | str) -> list[dict[str, Any]]:
    """Records of a JSONL file; a torn (unparseable) last line is ignored."""
    path = Path(path)
    if not path.exists():
        return []
    records = []
    lines = path.read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            if number == len(lines) - 1:
                break  # torn by a kill mid-write
            raise
    return records


def write_json(path: Path, data: Any) -> None:
    """Write JSON atomically (temp file + rename), so readers never see half a file."""
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def _repair_tail(path: Path) -> None:
    """Cut a torn last line so that appends start on a fresh line."""
    if not path.exists() or path.stat().st_size == 0:
        return
    data = path.read_bytes()
    if data.endswith(b"\n"):
        return
    cut = data.rfind(b"\n") + 1
    with path.open("r+b") as handle:
        handle.truncate(cut)


class JobStore:
    """Reads and appends the records of one job directory (thread-safe appends)."""

    RECORD_FILES = ("cases", "rejected", "views", "answers", "scores", "reference_scores", "calls")

    def __init__(self, directory: Path | str) -> None:
        self.dir = Path(directory)
        self.dir.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        for name in self.RECORD_FILES:
            _repair_tail(self.path(name))

    def path(self, name: str) -> Path:
        return self.dir / (name if "." in name else f"{name}.jsonl")

    def read(self, name: str) -> list[dict[str, Any]]:
        return read_jsonl(self.path(name))

    def write_all(self, name: str, records: Iterable[Any]) -> None:
        """Replace the file with ``records``, one JSON line each."""
        self.write_lines(name, (self.encode(record) for record in records))

    def write_lines(self, name: str, lines: Iterable[str]) -> None:
        """Replace the file with ``lines`` made by :meth:`encode` (or :func:`bench.wire.record_line`)."""
        tmp = self.path(name).with_suffix(".jsonl.tmp")
        with tmp.open("w", encoding="utf-8") as handle:
            handle.writelines(lines)
        os.replace(tmp, self.path(name))

    @staticmethod
    def encode(record: Any) -> str:
        """One JSONL line of ``record`` (what :meth:`append` writes), to encode off the writing thread."""
        return json.dumps(_plain(record), **RECORD_JSON) + "\n"

    def append(self, name: str, record: Any) -> None:
        self.append_line(name, self.encode(record))

    def append_line(self, name: str, line: str) -> None:
        """Append one line made by :meth:`encode` and flush it."""
        with self._lock, self.path(name).open("a", encoding="utf-8") as handle:
            handle.write(line)
            handle.flush()

    def keys(self, name: str) -> set[tuple[str, str]]:
        return {(r["case_id"], r["qid"]) for r in self.read(name)}

    def write_json(self, name: str, data: Any) -> None:
        write_json(self.path(name), data)

    def read_json(self, name: str) -> dict[str, Any] | None:
        path = self.path(name)
        return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None
