"""The job directory: append-only JSONL records, provenance, and resume bookkeeping.

Each answer and score is appended (and flushed) as soon as it exists, so a killed job
loses at most the line being written; :meth:`JobStore.open` drops a torn last line and
reports which (case_id, qid) pairs are already answered and scored.

Files: ``cases.jsonl``, ``rejected.jsonl``, ``views.jsonl``, ``answers.jsonl``,
``scores.jsonl``, ``reference_scores.jsonl``, ``calls.jsonl``, ``metrics.json``, ``run.json`` (``.hydra/`` is Hydra's).

Records round-trip any text: a line ends at ``\n`` only (never ``str.splitlines``, which
also splits at U+2028, U+0085, \x1c ...), and a line is written with U+0085, U+2028,
U+2029 and lone surrogates (which a model reply can hold) as JSON escapes, so every byte
is valid UTF-8 and no other line-splitting tool can cut a record. A lone surrogate reads
back as itself; a high+low pair of lone surrogates reads back as the one character they
encode (what every JSON reader does). Configured secrets are scrubbed from every line.
A line that cannot be read (garbage, not an object, no ``case_id``/``qid``) is moved to
``<file>.bad`` on resume (:meth:`JobStore.quarantine`) and skipped with a warning by readers.
A failed write (disk full, read-only) raises :class:`JobFileError` naming the file and
leaves no ``.tmp`` file and no torn line behind.
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, is_dataclass
from pathlib import Path
from typing import Any, TextIO

from bench.core.redact import scrub

__all__ = ["JobStore", "JobFileError", "RECORD_JSON", "KEYED", "read_jsonl", "iter_jsonl", "iter_lines", "safe_line",
           "write_json", "read_json"]

log = logging.getLogger(__name__)

RECORD_JSON: dict[str, Any] = {"ensure_ascii": False, "default": str}  # one JSONL line of a record
# the fields that identify a record of each keyed file (a line without them is damaged)
KEYED: dict[str, tuple[str, ...]] = {"answers": ("case_id", "qid"), "scores": ("case_id", "qid"),
                                     "reference_scores": ("case_id", "qid"), "views": ("case_id",)}
_UNSAFE = re.compile(r"[\x85\u2028\u2029\ud800-\udfff]")


class JobFileError(OSError):
    """A job file that cannot be written or read (disk full, read-only, not JSON): one line naming it."""

    def __str__(self) -> str:  # the message names the file and the reason; no "[Errno 28]" prefix
        return self.strerror if self.errno is not None and self.strerror else super().__str__()


def _plain(record: object) -> object:
    if not is_dataclass(record) or isinstance(record, type):
        return record
    to_dict = getattr(record, "to_dict", None)  # a record type that leaves out its unset optional fields (Score, Answer)
    return to_dict() if callable(to_dict) else asdict(record)


def safe_line(text: str) -> str:
    """JSON text with line separators and lone surrogates escaped, configured secrets scrubbed."""
    if _UNSAFE.search(text):
        text = _UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    return scrub(text)


def iter_lines(path: Path) -> Iterator[tuple[int, bytes, bool]]:
    """``(line number from 1, bytes without the newline, ends with a newline)`` of a file, split at b"\\n" only.

    Read line by line (a binary file splits at b"\\n" only), so a job's largest file (``views.jsonl``,
    ``cases.jsonl``: about 0.1 MB a case) is never held whole."""
    with path.open("rb") as handle:
        for number, line in enumerate(handle, 1):
            complete = line.endswith(b"\n")
            yield number, line[:-1] if complete else line, complete


def parse_line(line: bytes, keys: tuple[str, ...] = ()) -> dict[str, Any] | None:
    """The record of one line, or None when it is damaged (not UTF-8, not a JSON object, missing ``keys``)."""
    try:
        record = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    if not isinstance(record, dict) or any(not isinstance(record.get(k), str) for k in keys):
        return None
    return record


def iter_jsonl(path: Path | str, keys: tuple[str, ...] | None = None,
               omit: tuple[str, ...] = ()) -> Iterator[dict[str, Any]]:
    """Records of a JSONL file one at a time; a torn last line is ignored, damaged lines are skipped with a
    warning (once the file is read). ``omit``: top-level fields left out of every record (a view's
    ``messages``: what a reader of many records need not hold)."""
    path = Path(path)
    if not path.exists():
        return
    keys = KEYED.get(path.name.removesuffix(".jsonl"), ()) if keys is None else keys
    bad = []
    for number, line, complete in iter_lines(path):
        if not line.strip():
            continue
        record = parse_line(line, keys)
        if record is None:
            if complete:
                bad.append(number)
            continue  # an incomplete last line was torn by a kill mid-write
        for field in omit:
            record.pop(field, None)
        yield record
    if bad:
        log.warning("%s: skipped %d damaged line(s) (line %s); resume moves them to %s.bad", path, len(bad),
                    _line_numbers(bad), path.name)


def read_jsonl(path: Path | str, keys: tuple[str, ...] | None = None,
               omit: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    """Records of a JSONL file (:func:`iter_jsonl`) as a list."""
    return list(iter_jsonl(path, keys, omit))


def _line_numbers(numbers: list[int]) -> str:
    """``3, 7, 12`` (the first ten, then ``...``) for a warning."""
    return ", ".join(map(str, numbers[:10])) + (" ..." if len(numbers) > 10 else "")


def read_json(path: Path | str) -> Any:
    """A JSON file; JobFileError naming the file when it is not valid JSON."""
    path = Path(path)
    try:
        return json.loads(path.read_bytes().decode("utf-8"))
    except json.JSONDecodeError as err:
        raise JobFileError(f"{path}: not valid JSON ({err.msg} at line {err.lineno} column {err.colno})") from None
    except UnicodeDecodeError as err:
        raise JobFileError(f"{path}: not UTF-8 text ({err.reason} at byte {err.start})") from None


def _failed(path: Path, err: OSError) -> JobFileError:
    return JobFileError(err.errno, f"cannot write {path}: {err.strerror or err}")


def _replace_atomically(path: Path, write: Callable[[TextIO], object]) -> None:
    """``write(handle)`` into ``<path>.tmp``, then rename over ``path``; the .tmp is removed on failure."""
    tmp = path.with_name(path.name + ".tmp")
    try:
        with tmp.open("w", encoding="utf-8", newline="\n") as handle:
            write(handle)
        os.replace(tmp, path)
    except OSError as err:
        try:
            tmp.unlink(missing_ok=True)
        except OSError:
            pass
        raise _failed(path, err) from None


def _writing(lines: list[str]) -> Callable[[TextIO], None]:
    """What writes ``lines`` into a handle (the list bound now, not a loop's name)."""
    return lambda handle: handle.writelines(lines)


def write_json(path: Path, data: Any) -> None:
    """Write JSON atomically (temp file + rename), so readers never see half a file."""
    text = safe_line(json.dumps(data, indent=2, ensure_ascii=False, default=str)) + "\n"
    _replace_atomically(path, lambda handle: handle.write(text))


def _repair_tail(path: Path) -> None:
    """Cut a torn last line so that appends start on a fresh line."""
    if not path.exists() or path.stat().st_size == 0:
        return
    with path.open("rb") as handle:
        handle.seek(-1, os.SEEK_END)
        if handle.read(1) == b"\n":
            return
    data = path.read_bytes()
    cut = data.rfind(b"\n") + 1
    log.info("%s: cut a torn last line (%d bytes, written when the job was stopped)", path, len(data) - cut)
    with path.open("r+b") as handle:
        handle.truncate(cut)


class JobStore:
    """Reads and appends the records of one job directory (thread-safe appends)."""

    RECORD_FILES = ("cases", "rejected", "views", "answers", "scores", "reference_scores", "calls")

    def __init__(self, directory: Path | str) -> None:
        self.dir = Path(directory)
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            what = "is a file, not a directory" if self.dir.is_file() or isinstance(err, FileExistsError) else \
                (err.strerror or str(err))
            raise JobFileError(err.errno, f"cannot use {self.dir} as a job directory: {what}") from None
        self._lock = threading.Lock()
        for name in self.RECORD_FILES:
            try:
                _repair_tail(self.path(name))
            except OSError as err:
                raise _failed(self.path(name), err) from None

    def path(self, name: str) -> Path:
        return self.dir / (name if "." in name else f"{name}.jsonl")

    def read(self, name: str, omit: tuple[str, ...] = ()) -> list[dict[str, Any]]:
        return read_jsonl(self.path(name), omit=omit)

    def iter(self, name: str, omit: tuple[str, ...] = ()) -> Iterator[dict[str, Any]]:
        return iter_jsonl(self.path(name), omit=omit)

    def quarantine(self, names: Iterable[str] = ("views", "answers", "scores", "reference_scores", "calls")) -> int:
        """Move damaged lines of these files to ``<file>.bad`` (warning with file and line numbers); count them.

        Their questions count as not done, so a resumed job asks them again.
        """
        moved = 0
        for name in names:
            path = self.path(name)
            if not path.exists():
                continue
            keys = KEYED.get(name, ())
            good, bad, numbers = [], [], []
            for number, line, _ in iter_lines(path):
                if not line.strip():
                    continue
                if parse_line(line, keys) is None:
                    bad.append(line + b"\n")
                    numbers.append(number)
                else:
                    good.append(line.decode("utf-8") + "\n")  # it parsed: valid UTF-8
            if not bad:
                continue
            try:
                with path.with_name(path.name + ".bad").open("ab") as handle:
                    handle.writelines(bad)
            except OSError as err:
                raise _failed(path, err) from None
            _replace_atomically(path, _writing(good))
            log.warning("%s: %d damaged line(s) (line %s) moved to %s.bad; their questions are asked again",
                        path, len(bad), _line_numbers(numbers), path.name)
            moved += len(bad)
        return moved

    def write_all(self, name: str, records: Iterable[Any]) -> None:
        """Replace the file with ``records``, one JSON line each."""
        self.write_lines(name, (self.encode(record) for record in records))

    def write_lines(self, name: str, lines: Iterable[str]) -> None:
        """Replace the file with ``lines`` made by :meth:`encode`."""
        _replace_atomically(self.path(name), lambda handle: handle.writelines(lines))

    @staticmethod
    def encode(record: Any) -> str:
        """One JSONL line of ``record`` (what :meth:`append` writes), to encode off the writing thread."""
        return safe_line(json.dumps(_plain(record), **RECORD_JSON)) + "\n"

    def append(self, name: str, record: Any) -> None:
        self.append_line(name, self.encode(record))

    def append_line(self, name: str, line: str) -> None:
        """Append one line made by :meth:`encode` and flush it; a failed write leaves no partial line."""
        path = self.path(name)
        with self._lock:
            size = None
            try:
                with path.open("a", encoding="utf-8", newline="\n") as handle:
                    size = handle.tell()  # opened at its end
                    handle.write(line)
                    handle.flush()
            except OSError as err:
                if size is not None:
                    try:
                        with path.open("r+b") as handle:
                            handle.truncate(size)
                    except OSError:
                        pass  # the next open cuts the torn line (_repair_tail)
                raise _failed(path, err) from None

    def keys(self, name: str) -> set[tuple[str, str]]:
        return {(r["case_id"], r["qid"]) for r in self.read(name)}

    def write_json(self, name: str, data: Any) -> None:
        write_json(self.path(name), data)

    def read_json(self, name: str) -> dict[str, Any] | None:
        path = self.path(name)
        return read_json(path) if path.exists() else None
