"""Persistent, content-addressed response cache for model calls (answers, summaries, judging).

A key is the SHA-256 of everything that changes a reply: model name, endpoint, sampling
parameters, seed, messages and tools (see :func:`request_key`). Arm names, job names and
API keys are never part of it, so the full-history arm's replies are shared by every
config of the same seed, and a repeated job makes zero model calls.

One SQLite file (``cache.path``) is shared by every job and process: WAL journal, a busy
timeout, and ``INSERT OR IGNORE`` make concurrent readers and writers safe (Hydra's
joblib launcher runs jobs in parallel processes). Each thread uses its own connection.

Integrity: each entry carries the SHA-256 of its stored text (``checksum``), checked on
every read. An entry whose bytes changed, or that is not a JSON object, counts as missing
(a warning names the cache file and the key; the entry is deleted, so the fresh reply
replaces it). A file that is not a readable SQLite database (or fails mid-run) is used as
no cache at all: one warning naming the path, the job goes on and calls the endpoint, the
file is left untouched for ``verify``. Entries written before checksums existed have none:
they are read as valid but unverified (``verify`` counts them, ``prune --unverified``
removes them). Keys never changed.

    cache = ResponseCache(".cache/responses.sqlite")
    key = request_key({"model": "gpt-4o-mini", "messages": [...]})
    hit = cache.get(key)            # dict or None
    cache.put(key, {"message": {...}, "usage": {...}}, kind="answer", model="gpt-4o-mini")

The file from the command line::

    uv run python -m bench.cache stats  [--path .cache/responses.sqlite]   # entries per kind and model, size
    uv run python -m bench.cache verify [--path ...]                        # integrity, bad and unverified entries
    uv run python -m bench.cache prune  [--path ...] [--older-than DAYS] [--kind K] [--model M] [--unverified]
                                        # removes bad entries, and those matching every filter given
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import sqlite3
import sys
import threading
import time
from pathlib import Path
from typing import Any

__all__ = ["CACHE_VERSION", "KEY_JSON", "ResponseCache", "open_cache", "request_key", "checksum", "main"]

log = logging.getLogger(__name__)
DEFAULT_PATH = ".cache/responses.sqlite"  # conf/config.yaml cache.path

CACHE_VERSION = 1  # bump when the stored reply format or the key recipe changes
# The key's canonical JSON.
KEY_JSON: dict[str, Any] = {"sort_keys": True, "ensure_ascii": False, "separators": (",", ":"), "default": str}

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key      TEXT PRIMARY KEY,
    kind     TEXT NOT NULL,
    model    TEXT NOT NULL,
    created  REAL NOT NULL,
    response TEXT NOT NULL,
    checksum TEXT
)
"""


def checksum(text: str) -> str:
    """SHA-256 hex digest of an entry's stored text."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _busy(err: sqlite3.Error) -> bool:
    return isinstance(err, sqlite3.OperationalError) and ("locked" in str(err) or "busy" in str(err))


def request_key(request: dict[str, Any]) -> str:
    """SHA-256 hex digest of a request in canonical JSON (sorted keys, no whitespace)."""
    canonical = json.dumps({"v": CACHE_VERSION, **request}, **KEY_JSON)
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()  # same bytes for valid text


class ResponseCache:
    """SQLite key -> JSON reply store, safe across threads and processes; damaged data reads as missing."""

    def __init__(self, path: str | Path, busy_timeout_s: float = 60.0) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.busy_timeout_s = busy_timeout_s
        self._local = threading.local()
        self.broken: str | None = None  # why the file is not used (then every get misses, put does nothing)
        self._warned: set[str] = set()
        try:
            conn = self._conn()
            with conn:
                conn.execute(_SCHEMA)
            columns = {row[1] for row in conn.execute("PRAGMA table_info(responses)")}
            if "checksum" not in columns:  # a cache from before checksums: its entries stay unverified
                try:
                    conn.execute("ALTER TABLE responses ADD COLUMN checksum TEXT")
                except sqlite3.OperationalError as err:
                    if "duplicate column" not in str(err):  # another process added it meanwhile
                        raise
        except sqlite3.Error as err:
            if _busy(err):
                raise
            self._break(err)

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=self.busy_timeout_s, isolation_level=None)
            conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout_s * 1000)}")
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            self._local.conn = conn
        return conn

    def _break(self, err: BaseException) -> None:
        """Stop using an unreadable file: one warning naming it; the job goes on without the cache."""
        if self.broken is None:
            self.broken = f"{type(err).__name__}: {err}"
            log.warning("response cache %s cannot be used (%s): the job goes on without it, every call goes to "
                        "the endpoint; check the file with `python -m bench.cache verify --path %s`",
                        self.path, self.broken, self.path)

    def _bad_entry(self, key: str, why: str, stored_checksum: str | None) -> None:
        log.warning("response cache %s: entry %s is damaged (%s): counted as missing and replaced by the "
                    "fresh reply", self.path, key[:16], why)
        try:  # delete only the damaged version (a concurrent writer may have replaced it already)
            self._retry(lambda c: c.execute("DELETE FROM responses WHERE key = ? AND checksum IS ?",
                                            (key, stored_checksum)))
        except sqlite3.Error as err:
            if not _busy(err):
                self._break(err)

    def get(self, key: str) -> dict[str, Any] | None:
        if self.broken:
            return None
        try:
            row = self._retry(lambda c: c.execute("SELECT response, checksum FROM responses WHERE key = ?",
                                                  (key,)).fetchone())
        except sqlite3.Error as err:
            if _busy(err):
                raise
            self._break(err)
            return None
        if not row:
            return None
        text, stored = row
        value, problem = _decode(text, stored)
        if problem:
            self._bad_entry(key, problem, stored)
        return value

    def put(self, key: str, response: dict[str, Any], *, kind: str, model: str) -> None:
        if self.broken:
            return
        from bench.store import safe_line  # lone surrogates escaped: SQLite stores UTF-8

        text = safe_line(json.dumps(response, ensure_ascii=False, default=str))
        try:
            self._retry(lambda c: c.execute(
                "INSERT OR IGNORE INTO responses (key, kind, model, created, response, checksum) "
                "VALUES (?, ?, ?, ?, ?, ?)", (key, kind, model, time.time(), text, checksum(text))))
        except sqlite3.Error as err:
            if _busy(err):
                raise
            if isinstance(err, sqlite3.OperationalError) and "full" in str(err):
                if "full" not in self._warned:  # disk full: the reply is used, only not kept
                    self._warned.add("full")
                    log.warning("response cache %s: cannot store replies (%s); the job goes on", self.path, err)
                return
            self._break(err)

    def __len__(self) -> int:
        if self.broken:
            return 0
        return self._retry(lambda c: c.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def _retry(self, action):
        """Run one statement; a lock held past the busy timeout is retried a few times."""
        for attempt in range(5):
            try:
                return action(self._conn())
            except sqlite3.OperationalError as err:
                if "locked" not in str(err) and "busy" not in str(err) or attempt == 4:
                    raise
                time.sleep(0.2 * (attempt + 1))
        return None  # unreachable

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None


_OPEN: dict[str, ResponseCache] = {}
_OPEN_LOCK = threading.Lock()


def open_cache(path: str | Path | None, enabled: bool = True) -> ResponseCache | None:
    """The process-wide cache object for a path (None when disabled or no path)."""
    if not enabled or not path:
        return None
    resolved = str(Path(path).expanduser().resolve())
    with _OPEN_LOCK:
        if resolved not in _OPEN:
            _OPEN[resolved] = ResponseCache(resolved)
        return _OPEN[resolved]


# --------------------------------------------------------------------------- command line


def _connect(path: Path) -> sqlite3.Connection:
    if not path.is_file():
        raise SystemExit(f"error: no cache file at {path}")
    conn = sqlite3.connect(path, timeout=60, isolation_level=None)
    conn.execute("PRAGMA busy_timeout = 60000")
    return conn


def _entries(conn: sqlite3.Connection):
    columns = {row[1] for row in conn.execute("PRAGMA table_info(responses)")}
    has_sum = "checksum" in columns
    query = f"SELECT key, kind, model, created, response, {'checksum' if has_sum else 'NULL'} FROM responses"
    yield from conn.execute(query)


def _decode(text: Any, stored: str | None) -> tuple[dict[str, Any] | None, str | None]:
    """A stored entry's reply, or None and what is wrong with it (checked on every read)."""
    if not isinstance(text, str):
        return None, "stored reply is not text"
    if stored is not None and stored != checksum(text):
        return None, "checksum mismatch: its bytes changed"
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        return None, f"not JSON: {err.msg}"
    if not isinstance(value, dict):
        return None, "not a JSON object"
    return value, None


def _state(text: Any, stored: str | None) -> str:
    """``ok``, ``unverified`` (no checksum) or ``bad`` for one entry."""
    if _decode(text, stored)[1]:
        return "bad"
    return "ok" if stored is not None else "unverified"


def cmd_stats(path: Path) -> int:
    conn = _connect(path)
    rows = conn.execute("SELECT kind, model, COUNT(*), MIN(created), MAX(created) FROM responses "
                        "GROUP BY kind, model ORDER BY kind, model").fetchall()
    total = sum(r[2] for r in rows)
    size = sum(p.stat().st_size for p in path.parent.glob(path.name + "*") if p.is_file())
    print(f"{path}: {total} entries, {size / 1e6:.1f} MB (with WAL files)")
    for kind, model, count, first, last in rows:
        print(f"  {kind:<11} {model:<40} {count:>8}  {time.strftime('%Y-%m-%d', time.localtime(first))}"
              f" .. {time.strftime('%Y-%m-%d', time.localtime(last))}")
    return 0


def cmd_verify(path: Path) -> int:
    conn = _connect(path)
    integrity = conn.execute("PRAGMA quick_check").fetchone()[0]
    counts = {"ok": 0, "unverified": 0, "bad": 0}
    bad = []
    for key, kind, model, _, text, stored in _entries(conn):
        state = _state(text, stored)
        counts[state] += 1
        if state == "bad":
            bad.append(f"{key[:16]} ({kind}, {model})")
    print(f"{path}: integrity {integrity}; {counts['ok']} ok, {counts['unverified']} unverified "
          f"(written before checksums), {counts['bad']} bad")
    for item in bad[:20]:
        print(f"  bad: {item}")
    if len(bad) > 20:
        print(f"  ... {len(bad) - 20} more")
    if bad:
        print("`python -m bench.cache prune` removes the bad entries (jobs treat them as missing meanwhile)")
    return 0 if integrity == "ok" and not bad else 1


def cmd_prune(path: Path, older_than: float | None, kind: str | None, model: str | None, unverified: bool) -> int:
    conn = _connect(path)
    filters = older_than is not None or kind is not None or model is not None or unverified
    cutoff = time.time() - older_than * 86400 if older_than is not None else None
    doomed = []
    for key, entry_kind, entry_model, created, text, stored in _entries(conn):
        state = _state(text, stored)
        matches = filters and ((cutoff is None or created < cutoff) and (kind is None or entry_kind == kind)
                               and (model is None or entry_model == model) and (not unverified or state == "unverified"))
        if state == "bad" or matches:
            doomed.append(key)
    with conn:
        conn.executemany("DELETE FROM responses WHERE key = ?", [(k,) for k in doomed])
    print(f"{path}: removed {len(doomed)} entries, {conn.execute('SELECT COUNT(*) FROM responses').fetchone()[0]} left")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.cache", description="The response cache file: "
                                     "stats, verify (checksums and integrity), prune (bad and selected entries).")
    parser.add_argument("command", choices=("stats", "verify", "prune"))
    parser.add_argument("--path", default=DEFAULT_PATH, help=f"cache file (default {DEFAULT_PATH}, as cache.path)")
    parser.add_argument("--older-than", type=float, metavar="DAYS", help="prune: also entries older than DAYS")
    parser.add_argument("--kind", help="prune: also entries of this kind (answer, judge, summarizer)")
    parser.add_argument("--model", help="prune: also entries of this model")
    parser.add_argument("--unverified", action="store_true", help="prune: also entries without a checksum")
    args = parser.parse_args(argv)
    path = Path(args.path)
    try:
        if args.command == "stats":
            return cmd_stats(path)
        if args.command == "verify":
            return cmd_verify(path)
        return cmd_prune(path, args.older_than, args.kind, args.model, args.unverified)
    except sqlite3.DatabaseError as err:
        print(f"error: {path} is not a readable SQLite database ({err}): move it aside or delete it; "
              "jobs run without the cache until then", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
