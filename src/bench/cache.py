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
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Protocol

from bench.errors import ConfigError

__all__ = ["CACHE_VERSION", "KEY_JSON", "CacheUnavailable", "PostgresCache", "ReplyStore", "ResponseCache", "open_cache",
           "request_key", "checksum", "encode_reply", "shown_url", "main"]

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


def encode_reply(response: dict[str, Any]) -> tuple[str, str]:
    """The stored text of a reply and its checksum (one rule for every store)."""
    from bench.store import safe_line  # lone surrogates escaped: stores keep UTF-8 text

    text = safe_line(json.dumps(response, ensure_ascii=False, default=str))
    return text, checksum(text)


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
        text, digest = encode_reply(response)
        try:
            self._retry(lambda c: c.execute(
                "INSERT OR IGNORE INTO responses (key, kind, model, created, response, checksum) "
                "VALUES (?, ?, ?, ?, ?, ?)", (key, kind, model, time.time(), text, digest)))
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


class ReplyStore(Protocol):
    """What a client needs of a response cache: SQLite (:class:`ResponseCache`) or :class:`PostgresCache`."""

    broken: str | None

    def get(self, key: str) -> dict[str, Any] | None: ...
    def put(self, key: str, response: dict[str, Any], *, kind: str, model: str) -> None: ...
    def __len__(self) -> int: ...
    def close(self) -> None: ...


class CacheUnavailable(ConfigError):
    """``cache.url`` is malformed or its server cannot be reached when the job starts (one line, exit 2)."""


PG_SCHEMES = ("postgresql", "postgres")
_PG_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key      TEXT PRIMARY KEY,
    kind     TEXT NOT NULL,
    model    TEXT NOT NULL,
    created  DOUBLE PRECISION NOT NULL,
    response TEXT NOT NULL,
    checksum TEXT
)
"""
_PG_SCHEMA_LOCK = 0x62656E6368  # advisory lock id: concurrent first jobs create the table once


def shown_url(url: str) -> str:
    """A cache URL as output may show it: userinfo and query replaced by ``***`` (they may hold secrets)."""
    from urllib.parse import urlsplit, urlunsplit

    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return "<unparsable URL>"
    netloc = parts.netloc
    if "@" in netloc:
        netloc = "***@" + netloc.rpartition("@")[2]
    return urlunsplit((parts.scheme, netloc, parts.path, "***" if parts.query else "", ""))


def _pg_reason(err: BaseException) -> str:
    """The first line of a driver error, secrets scrubbed."""
    from bench.redact import scrub

    text = scrub(str(err).strip()).split("\n")[0]
    return text or type(err).__name__


def _pg_connect(url: str, timeout_s: float) -> Any:
    """A psycopg connection (autocommit) to a ``postgresql://`` URL; CacheUnavailable when it is refused."""
    from urllib.parse import urlsplit

    from bench import redact

    redact.register_url(url)  # its password and query (maybe from ${oc.env:...}) never reach a record or log
    shown = shown_url(url)
    try:
        scheme = urlsplit(url.strip()).scheme
    except ValueError as err:
        raise CacheUnavailable(f"cache.url={shown}: not a URL ({err})") from None
    if scheme not in PG_SCHEMES:
        raise CacheUnavailable(f"cache.url={shown}: give a postgresql://user@host:port/db URL (or leave it "
                               "null for the SQLite file at cache.path)")
    try:
        import psycopg
    except ImportError as err:  # a dependency of the project: only a broken install lacks it
        raise CacheUnavailable(f"cache.url needs the psycopg package ({err}); run `uv sync`") from None
    try:
        return psycopg.connect(url.strip(), autocommit=True, connect_timeout=max(1, round(timeout_s)))
    except (psycopg.Error, ValueError) as err:  # ValueError: psycopg's own URL parsing (bad port ...)
        raise CacheUnavailable(f"cache.url={shown}: cannot use the PostgreSQL cache ({_pg_reason(err)})") from None


class PostgresCache:
    """The same cache on a PostgreSQL server, shared by jobs on several machines (``cache.url``).

    Same keys, stored text, checksums and decode rule (:func:`encode_reply`, :func:`_decode`)
    as :class:`ResponseCache`. ``INSERT ... ON CONFLICT DO NOTHING`` makes concurrent writers
    of one key safe (the first reply stays); each thread has its own connection (autocommit).
    The server must answer when the job starts (else :class:`CacheUnavailable`: one line,
    exit 2); a connection lost later is opened again once, and if that fails the job goes on
    without the cache (one warning), as with a damaged SQLite file.
    """

    def __init__(self, url: str, connect_timeout_s: float = 10.0) -> None:
        self.url = url.strip()
        self.path = shown_url(self.url)  # the name in warnings (as ResponseCache.path)
        self.connect_timeout_s = connect_timeout_s
        self._local = threading.local()
        self.broken: str | None = None
        conn = self._conn()  # CacheUnavailable: the job stops before any call
        try:
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (_PG_SCHEMA_LOCK,))
                conn.execute(_PG_SCHEMA)
        except Exception as err:  # noqa: BLE001 - psycopg.Error: no rights, a read-only server ...
            raise CacheUnavailable(f"cache.url={self.path}: cannot create the cache table "
                                   f"({_pg_reason(err)})") from None

    def _conn(self) -> Any:
        conn = getattr(self._local, "conn", None)
        if conn is None or conn.closed:
            conn = _pg_connect(self.url, self.connect_timeout_s)
            self._local.conn = conn
        return conn

    def _run(self, sql: str, params: tuple[Any, ...], fetch: bool = False) -> Any:
        """One statement; a lost connection is opened again once; None (and a warning) when that fails too."""
        import psycopg

        for attempt in range(2):
            try:
                cur = self._conn().execute(sql, params)
                return cur.fetchone() if fetch else None
            except (psycopg.OperationalError, psycopg.InterfaceError, CacheUnavailable) as err:
                self.close()
                if attempt == 1:
                    self._break(err)
            except psycopg.Error as err:
                self._break(err)
                break
        return None

    def _break(self, err: BaseException) -> None:
        if self.broken is None:
            self.broken = _pg_reason(err)
            log.warning("response cache %s cannot be used (%s): the job goes on without it, every call goes to "
                        "the endpoint", self.path, self.broken)

    def get(self, key: str) -> dict[str, Any] | None:
        if self.broken:
            return None
        row = self._run("SELECT response, checksum FROM responses WHERE key = %s", (key,), fetch=True)
        if not row:
            return None
        text, stored = row
        value, problem = _decode(text, stored)
        if problem:
            log.warning("response cache %s: entry %s is damaged (%s): counted as missing and replaced by the "
                        "fresh reply", self.path, key[:16], problem)
            self._run("DELETE FROM responses WHERE key = %s AND checksum IS NOT DISTINCT FROM %s", (key, stored))
        return value

    def put(self, key: str, response: dict[str, Any], *, kind: str, model: str) -> None:
        if self.broken:
            return
        text, digest = encode_reply(response)
        self._run("INSERT INTO responses (key, kind, model, created, response, checksum) "
                  "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (key) DO NOTHING",
                  (key, kind, model, time.time(), text, digest))

    def __len__(self) -> int:
        if self.broken:
            return 0
        row = self._run("SELECT COUNT(*) FROM responses", (), fetch=True)
        return int(row[0]) if row else 0

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            try:
                conn.close()
            finally:
                self._local.conn = None


_OPEN: dict[str, ReplyStore] = {}
_OPEN_LOCK = threading.Lock()


def open_cache(path: str | Path | None, enabled: bool = True, url: str | None = None) -> ReplyStore | None:
    """The process-wide cache object for a URL (PostgreSQL) or else a path (SQLite); None when disabled."""
    if not enabled or not (path or url):
        return None
    resolved = url.strip() if url else str(Path(path).expanduser().resolve())  # type: ignore[arg-type]
    with _OPEN_LOCK:
        if resolved not in _OPEN:
            _OPEN[resolved] = PostgresCache(resolved) if url else ResponseCache(resolved)
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


class CacheAdmin(Protocol):
    """What ``stats``, ``verify`` and ``prune`` need of a store (the rules above them are shared)."""

    label: str  # how the store is named in output (a URL without its userinfo and query)

    def summary(self) -> list[tuple[str, str, int, float, float]]: ...  # kind, model, count, first, last
    def size(self) -> str: ...
    def integrity(self) -> str: ...  # "ok" when the store itself is sound
    def entries(self) -> Iterable[tuple[str, str, str, float, Any, str | None]]: ...
    def lock(self) -> None: ...  # hold writers off until delete() (what is counted is what is deleted)
    def delete(self, keys: list[str]) -> int: ...  # entries left


class _SqliteAdmin:
    def __init__(self, path: Path, wait_s: float) -> None:
        self.path, self.label = path, str(path)
        self.conn = _connect(path, wait_s)

    def summary(self) -> list[tuple[str, str, int, float, float]]:
        return self.conn.execute("SELECT kind, model, COUNT(*), MIN(created), MAX(created) FROM responses "
                                 "GROUP BY kind, model ORDER BY kind, model").fetchall()

    def size(self) -> str:
        size = sum(p.stat().st_size for p in self.path.parent.glob(self.path.name + "*") if p.is_file())
        return f"{size / 1e6:.1f} MB (with WAL files)"

    def integrity(self) -> str:
        return self.conn.execute("PRAGMA quick_check").fetchone()[0]

    def entries(self) -> Iterable[tuple[str, str, str, float, Any, str | None]]:
        return _entries(self.conn)

    def lock(self) -> None:
        self.conn.execute("BEGIN IMMEDIATE")

    def delete(self, keys: list[str]) -> int:
        self.conn.executemany("DELETE FROM responses WHERE key = ?", [(k,) for k in keys])
        self.conn.execute("COMMIT")
        return self.conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0]


class _PgAdmin:
    def __init__(self, url: str, wait_s: float) -> None:
        self.label = shown_url(url)
        self.conn = _pg_connect(url, min(wait_s, 30.0))
        self.wait_s = wait_s
        exists = self.conn.execute("SELECT to_regclass('responses')").fetchone()[0]
        if exists is None:
            raise CacheUnavailable(f"cache.url={self.label}: no cache table (responses) on that server")

    def summary(self) -> list[tuple[str, str, int, float, float]]:
        return self.conn.execute("SELECT kind, model, COUNT(*), MIN(created), MAX(created) FROM responses "
                                 "GROUP BY kind, model ORDER BY kind, model").fetchall()

    def size(self) -> str:
        size = self.conn.execute("SELECT pg_total_relation_size('responses')").fetchone()[0]
        return f"{size / 1e6:.1f} MB (table and index on the server)"

    def integrity(self) -> str:
        return "ok"  # the server keeps its own pages sound; what is checked here is every entry's checksum

    def entries(self) -> Iterable[tuple[str, str, str, float, Any, str | None]]:
        return self.conn.execute("SELECT key, kind, model, created, response, checksum FROM responses").fetchall()

    def lock(self) -> None:  # writers wait (at most lock_timeout for us to get the lock) until delete() commits
        self.conn.execute("BEGIN")
        self.conn.execute(f"SET LOCAL lock_timeout = {int(self.wait_s * 1000)}")
        self.conn.execute("LOCK TABLE responses IN SHARE ROW EXCLUSIVE MODE")

    def delete(self, keys: list[str]) -> int:
        with self.conn.cursor() as cur:
            cur.executemany("DELETE FROM responses WHERE key = %s", [(k,) for k in keys])
        self.conn.execute("COMMIT")
        return self.conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0]


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
    return _stats(_SqliteAdmin(path, wait_s))


def cmd_verify(path: Path, wait_s: float = 60.0) -> int:
    return _verify(_SqliteAdmin(path, wait_s))


def _stats(admin: CacheAdmin) -> int:
    rows = admin.summary()
    total = sum(r[2] for r in rows)
    print(f"{admin.label}: {total} entries, {admin.size()}")
    for kind, model, count, first, last in rows:
        print(f"  {kind:<11} {model:<40} {count:>8}  {time.strftime('%Y-%m-%d', time.localtime(first))}"
              f" .. {time.strftime('%Y-%m-%d', time.localtime(last))}")
    return 0


def _verify(admin: CacheAdmin) -> int:
    integrity = admin.integrity()
    counts = {"ok": 0, "unverified": 0, "bad": 0}
    bad = []
    for key, kind, model, _, text, stored in admin.entries():
        state = _state(text, stored)
        counts[state] += 1
        if state == "bad":
            bad.append(f"{key[:16]} ({kind}, {model})")
    print(f"{admin.label}: integrity {integrity}; {counts['ok']} ok, {counts['unverified']} without checksum "
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
    return _prune(_SqliteAdmin(path, wait_s), older_than, kind, model, dry_run)


def _prune(admin: CacheAdmin, older_than: float | None, kind: str | None, model: str | None,
           dry_run: bool = False) -> int:
    if not dry_run:  # the write lock first: what is counted is what is deleted (or: locked, nothing done)
        admin.lock()
    filters = older_than is not None or kind is not None or model is not None
    cutoff = time.time() - older_than * 86400 if older_than is not None else None
    doomed: list[str] = []
    why = {"bad": 0, "without checksum": 0, "selected": 0}
    total = 0
    for key, entry_kind, entry_model, created, text, stored in admin.entries():
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
    print(f"{admin.label}: {verb} {len(doomed)} of {total} entries" + (f": {detail}" if detail else ""))
    if dry_run:
        return 0
    left = admin.delete(doomed)
    print(f"{admin.label}: removed {len(doomed)} entries, {left} left")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.cache", description="The response cache: "
                                     "stats, verify (checksums and integrity), prune (bad and selected entries).")
    parser.add_argument("command", choices=("stats", "verify", "prune"))
    parser.add_argument("--path", default=DEFAULT_PATH, help=f"cache file (default {DEFAULT_PATH}, as cache.path)")
    parser.add_argument("--url", help="a PostgreSQL cache instead (as cache.url): postgresql://user@host:port/db; "
                        "the password from PGPASSWORD or ~/.pgpass")
    parser.add_argument("--older-than", type=float, metavar="DAYS", help="prune: also entries older than DAYS")
    parser.add_argument("--kind", help="prune: also entries of this kind (answer, judge, summarizer)")
    parser.add_argument("--model", help="prune: also entries of this model")
    parser.add_argument("--unverified", action="store_true",
                        help="prune: kept for old scripts; entries without a checksum are always removed")
    parser.add_argument("--dry-run", action="store_true", help="prune: say what would be removed, remove nothing")
    parser.add_argument("--wait", type=float, default=60.0, metavar="SECONDS",
                        help="how long to wait for a cache another process holds locked (default 60)")
    args = parser.parse_args(argv)
    if args.url:
        return _main_pg(args)
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


def _main_pg(args: argparse.Namespace) -> int:
    """The same commands on a PostgreSQL cache: every failure is one line, exit 2, nothing changed."""
    import psycopg

    refusal = check_age(args.older_than) if args.command == "prune" else None
    if refusal:
        print(f"error: {refusal}", file=sys.stderr)
        return 2
    shown = shown_url(args.url)
    try:
        admin = _PgAdmin(args.url, args.wait)
        if args.command == "stats":
            return _stats(admin)
        if args.command == "verify":
            return _verify(admin)
        return _prune(admin, args.older_than, args.kind, args.model, args.dry_run)
    except CacheUnavailable as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except psycopg.errors.LockNotAvailable:
        print(f"error: {shown} is locked by another process (a job or another cache command is using it): "
              "nothing was changed; retry when it is done, or give --wait SECONDS", file=sys.stderr)
        return 2
    except psycopg.Error as err:
        print(f"error: {shown}: {_pg_reason(err)}; nothing was changed", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
