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
file is left untouched for ``verify``. An entry without a checksum (written before checksums
existed, or one whose checksum was cleared) is not trusted: read as missing and replaced like a
damaged one (``verify`` counts it apart, ``prune`` removes it). Keys never changed.

    cache = ResponseCache(".cache/responses.sqlite")
    key = request_key({"model": "gpt-4o-mini", "messages": [...]})
    hit = cache.get(key)            # dict or None
    cache.put(key, {"message": {...}, "usage": {...}}, kind="answer", model="gpt-4o-mini")

The file from the command line::

    uv run python -m bench.cache stats  [--path .cache/responses.sqlite]   # entries per kind and model, size
    uv run python -m bench.cache verify [--path ...]                        # integrity, bad and unverified entries
    uv run python -m bench.cache prune  [--path ...] [--older-than DAYS] [--kind K] [--model M] [--dry-run]
                                        # removes bad and unchecksummed entries, and those matching every
                                        # filter given; says what and how many first (--dry-run: only that)
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


def _connect(path: Path, wait_s: float = 60.0) -> sqlite3.Connection:
    if not path.is_file():
        raise SystemExit(f"error: no cache file at {path}")
    conn = sqlite3.connect(path, timeout=wait_s, isolation_level=None)
    conn.execute(f"PRAGMA busy_timeout = {int(wait_s * 1000)}")
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
    if stored is None:  # nothing vouches for these bytes (a cleared checksum looks the same as an old entry)
        return None, "no checksum: not trusted"
    if stored != checksum(text):
        return None, "checksum mismatch: its bytes changed"
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        return None, f"not JSON: {err.msg}"
    if not isinstance(value, dict):
        return None, "not a JSON object"
    return value, None


def _state(text: Any, stored: str | None) -> str:
    """``ok``, ``unverified`` (no checksum: not trusted, read as missing) or ``bad`` for one entry."""
    if stored is None and isinstance(text, str):
        return "unverified"
    return "bad" if _decode(text, stored)[1] else "ok"


def cmd_stats(path: Path, wait_s: float = 60.0) -> int:
    conn = _connect(path, wait_s)
    rows = conn.execute("SELECT kind, model, COUNT(*), MIN(created), MAX(created) FROM responses "
                        "GROUP BY kind, model ORDER BY kind, model").fetchall()
    total = sum(r[2] for r in rows)
    size = sum(p.stat().st_size for p in path.parent.glob(path.name + "*") if p.is_file())
    print(f"{path}: {total} entries, {size / 1e6:.1f} MB (with WAL files)")
    for kind, model, count, first, last in rows:
        print(f"  {kind:<11} {model:<40} {count:>8}  {time.strftime('%Y-%m-%d', time.localtime(first))}"
              f" .. {time.strftime('%Y-%m-%d', time.localtime(last))}")
    return 0


def cmd_verify(path: Path, wait_s: float = 60.0) -> int:
    conn = _connect(path, wait_s)
    integrity = conn.execute("PRAGMA quick_check").fetchone()[0]
    counts = {"ok": 0, "unverified": 0, "bad": 0}
    bad = []
    for key, kind, model, _, text, stored in _entries(conn):
        state = _state(text, stored)
        counts[state] += 1
        if state == "bad":
            bad.append(f"{key[:16]} ({kind}, {model})")
    print(f"{path}: integrity {integrity}; {counts['ok']} ok, {counts['unverified']} without checksum "
          f"(not trusted: jobs read them as missing), {counts['bad']} bad")
    for item in bad[:20]:
        print(f"  bad: {item}")
    if len(bad) > 20:
        print(f"  ... {len(bad) - 20} more")
    if bad or counts["unverified"]:
        print("`python -m bench.cache prune` removes the bad and unchecksummed entries (jobs treat them as "
              "missing meanwhile)")
    return 0 if integrity == "ok" and not bad and not counts["unverified"] else 1


MAX_AGE_DAYS = 36500.0  # --older-than beyond a century is a typo, not an age


def check_age(older_than: float | None) -> str | None:
    """Why ``--older-than`` is refused (negative, not a number, absurdly large), else None."""
    if older_than is None:
        return None
    if older_than != older_than or older_than < 0 or older_than > MAX_AGE_DAYS:
        return (f"--older-than {older_than:g}: give an age in days from 0 to {MAX_AGE_DAYS:g} "
                "(a negative age would select every entry)")
    return None


def cmd_prune(path: Path, older_than: float | None, kind: str | None, model: str | None, unverified: bool,
              dry_run: bool = False, wait_s: float = 60.0) -> int:
    refusal = check_age(older_than)
    if refusal:
        print(f"error: {refusal}", file=sys.stderr)
        return 2
    conn = _connect(path, wait_s)
    if not dry_run:  # the write lock first: what is counted is what is deleted (or: locked, nothing done)
        conn.execute("BEGIN IMMEDIATE")
    filters = older_than is not None or kind is not None or model is not None
    cutoff = time.time() - older_than * 86400 if older_than is not None else None
    doomed: list[str] = []
    why = {"bad": 0, "without checksum": 0, "selected": 0}
    total = 0
    for key, entry_kind, entry_model, created, text, stored in _entries(conn):
        total += 1
        state = _state(text, stored)
        matches = filters and ((cutoff is None or created < cutoff) and (kind is None or entry_kind == kind)
                               and (model is None or entry_model == model))
        if state == "bad" or state == "unverified" or matches:
            doomed.append(key)
            why["bad" if state == "bad" else "without checksum" if state == "unverified" else "selected"] += 1
    selection = [f"older than {older_than:g} days" if older_than is not None else "",
                 f"kind {kind}" if kind is not None else "", f"model {model}" if model is not None else ""]
    detail = ", ".join(f"{n} {label}" + (f" ({', '.join(s for s in selection if s)})" if label == "selected" else "")
                       for label, n in why.items() if n)
    verb = "would remove" if dry_run else "removing"
    print(f"{path}: {verb} {len(doomed)} of {total} entries" + (f": {detail}" if detail else ""))
    if dry_run:
        return 0
    conn.executemany("DELETE FROM responses WHERE key = ?", [(k,) for k in doomed])
    conn.execute("COMMIT")
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
    parser.add_argument("--unverified", action="store_true",
                        help="prune: kept for old scripts; entries without a checksum are always removed")
    parser.add_argument("--dry-run", action="store_true", help="prune: say what would be removed, remove nothing")
    parser.add_argument("--wait", type=float, default=60.0, metavar="SECONDS",
                        help="how long to wait for a cache another process holds locked (default 60)")
    args = parser.parse_args(argv)
    path = Path(args.path)
    try:
        if args.command == "stats":
            return cmd_stats(path, args.wait)
        if args.command == "verify":
            return cmd_verify(path, args.wait)
        return cmd_prune(path, args.older_than, args.kind, args.model, args.unverified, args.dry_run, args.wait)
    except sqlite3.DatabaseError as err:
        if _busy(err):  # a lock is no damage: deleting the file would lose a running job's replies
            print(f"error: {path} is locked by another process (a job or another cache command is using it): "
                  "nothing was changed; retry when it is done, or give --wait SECONDS", file=sys.stderr)
            return 2
        print(f"error: {path} is not a readable SQLite database ({err}): move it aside or delete it; "
              "jobs run without the cache until then", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
