"""The SQLite response cache (one file shared by every job and process) and the key recipe
every store shares; the package docstring (:mod:`bench.cache`) says how it is safe and checked."""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any, Protocol

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
    from bench.store.records import safe_line  # lone surrogates escaped: stores keep UTF-8 text

    text = safe_line(json.dumps(response, ensure_ascii=False, default=str))
    return text, checksum(text)


def decode_reply(text: Any, stored: str | None) -> tuple[dict[str, Any] | None, str | None]:
    """The reverse of :func:`encode_reply`: a stored entry's reply, or None and what is wrong with it (checked on every read)."""
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
        value, problem = decode_reply(text, stored)
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
