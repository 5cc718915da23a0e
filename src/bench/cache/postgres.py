"""The PostgreSQL response cache (``cache.url``): the same keys, checksums and rules as the
SQLite file, for jobs on several machines."""

from __future__ import annotations

import logging
import queue
import threading
import time
from typing import Any

from bench.cache.sqlite import decode_reply, encode_reply
from bench.core.errors import ConfigError

log = logging.getLogger("bench.cache")


class CacheUnavailable(ConfigError):
    """``cache.url`` is malformed or its server cannot be reached when the job starts (one line, exit 2)."""


PG_SCHEMES = ("postgresql", "postgres")
TABLE = "bench_responses"  # one table; named apart from an application's own tables in a shared database
_PG_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS {TABLE} (
    key      TEXT PRIMARY KEY,
    kind     TEXT NOT NULL,
    model    TEXT NOT NULL,
    created  DOUBLE PRECISION NOT NULL,
    response TEXT NOT NULL,
    checksum TEXT
)
"""
COLUMNS = "key, kind, model, created, response, checksum"
_PG_SCHEMA_LOCK = 0x62656E6368  # advisory lock id: concurrent first jobs create the table once
POOL_SIZE = 4  # connections per process (each job's threads share them): the server's max_connections bounds jobs
RETRY_BROKEN_S = 60.0  # a server that went away is tried again after this long (a restart, a failover)
# libpq TCP keepalives unless the URL sets them: a dead server or link is noticed in about a minute,
# instead of the kernel's default of hours, during which the job's threads would wait on it
_KEEPALIVES = {"keepalives": "1", "keepalives_idle": "30", "keepalives_interval": "10", "keepalives_count": "3"}


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
    from bench.core.redact import scrub

    text = scrub(str(err).strip()).split("\n")[0]
    return text or type(err).__name__


def _pg_connect(url: str, timeout_s: float) -> Any:
    """A psycopg connection (autocommit) to a ``postgresql://`` URL; CacheUnavailable when it is refused."""
    from urllib.parse import urlsplit

    from bench.core import redact

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
        from psycopg.conninfo import conninfo_to_dict
    except ImportError as err:  # a dependency of the project: only a broken install lacks it
        raise CacheUnavailable(f"cache.url needs the psycopg package ({err}); run `uv sync`") from None
    try:
        given = conninfo_to_dict(url.strip())
        extra: dict[str, Any] = {k: v for k, v in _KEEPALIVES.items() if k not in given}
        return psycopg.connect(url.strip(), autocommit=True, connect_timeout=max(1, round(timeout_s)), **extra)
    except (psycopg.Error, ValueError) as err:  # ValueError: psycopg's own URL parsing (bad port ...)
        raise CacheUnavailable(f"cache.url={shown}: cannot use the PostgreSQL cache ({_pg_reason(err)})") from None


class PostgresCache:
    """The same cache on a PostgreSQL server, shared by jobs on several machines (``cache.url``).

    Same keys, stored text, checksums and decode rule (:func:`encode_reply`, :func:`decode_reply`)
    as :class:`ResponseCache`. ``INSERT ... ON CONFLICT DO NOTHING`` makes concurrent writers
    of one key safe (the first reply stays). The process's threads share at most ``pool_size``
    connections (autocommit), so a job holds a few connections, not one per worker thread.
    The server must answer when the job starts (else :class:`CacheUnavailable`: one line,
    exit 2); a connection lost later is opened again once, and if that fails the job goes on
    without the cache (one warning) and tries the server again every ``RETRY_BROKEN_S``.
    """

    def __init__(self, url: str, connect_timeout_s: float = 10.0, pool_size: int = POOL_SIZE) -> None:
        self.url = url.strip()
        self.path = shown_url(self.url)  # the name in warnings (as ResponseCache.path)
        self.connect_timeout_s = connect_timeout_s
        self.pool_size = max(1, pool_size)
        # one item per connection slot: an open connection, or None (a slot to open one in). LIFO: a
        # warm connection is taken before an empty slot. A discarded connection gives its slot back,
        # so a thread waiting for one is never left waiting on connections that are gone.
        self._slots: queue.LifoQueue[Any] = queue.LifoQueue()
        self._lock = threading.Lock()
        self.broken: str | None = None
        self._retry_at = 0.0  # broken: when the server is tried again
        conn = _pg_connect(self.url, connect_timeout_s)  # CacheUnavailable: the job stops before any call
        try:
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (_PG_SCHEMA_LOCK,))
                conn.execute(_PG_SCHEMA)
        except Exception as err:  # noqa: BLE001 - psycopg.Error: no rights, a read-only server ...
            conn.close()
            raise CacheUnavailable(f"cache.url={self.path}: cannot create the cache table {TABLE} "
                                   f"({_pg_reason(err)})") from None
        try:
            conn.execute(f"SELECT {COLUMNS} FROM {TABLE} LIMIT 0")
        except Exception as err:  # noqa: BLE001 - a table of that name made by something else
            conn.close()
            raise CacheUnavailable(f"cache.url={self.path}: table {TABLE} is not a response cache "
                                   f"({_pg_reason(err)})") from None
        for _ in range(self.pool_size - 1):
            self._slots.put(None)
        self._slots.put(conn)

    # ---- the pool
    def _acquire(self) -> Any:
        """A connection (waits while every slot is in use; statements are short)."""
        conn = self._slots.get()
        if conn is not None:
            return conn
        try:
            return _pg_connect(self.url, self.connect_timeout_s)
        except BaseException:
            self._slots.put(None)
            raise

    def _release(self, conn: Any) -> None:
        self._slots.put(conn)

    def _discard(self, conn: Any) -> None:
        try:
            conn.close()
        except Exception:  # noqa: BLE001, S110 - a connection already gone
            pass
        self._slots.put(None)

    def _skipping(self) -> bool:
        """True while the store is broken and its next try is not due; the first caller after that
        time tries (and sets the next), the others skip."""
        if not self.broken:
            return False
        with self._lock:
            now = time.monotonic()
            if now < self._retry_at:
                return True
            self._retry_at = now + RETRY_BROKEN_S
            return False

    def _run(self, sql: str, params: tuple[Any, ...], fetch: bool = False) -> Any:
        """One statement on a pooled connection; a lost connection is replaced once; None (and a
        warning) when that fails too."""
        import psycopg

        if self._skipping():
            return None
        trying_again = self.broken is not None  # this caller is the one try of this period
        for attempt in range(2):
            try:
                conn = self._acquire()
            except CacheUnavailable as err:
                if attempt == 1:
                    self._break(err)
                continue
            if self.broken and not trying_again:  # found gone by another thread while this one waited
                self._release(conn)
                return None
            try:
                cursor = conn.execute(sql, params)
                row = cursor.fetchone() if fetch else None
            except (psycopg.OperationalError, psycopg.InterfaceError) as err:  # the link or the server went
                self._discard(conn)
                if attempt == 1:
                    self._break(err)
                continue
            except psycopg.Error as err:
                self._release(conn)
                self._break(err)
                return None
            self._release(conn)
            if self.broken:
                log.warning("response cache %s can be used again", self.path)
                self.broken = None
            return row
        return None

    def _break(self, err: BaseException) -> None:
        self._retry_at = time.monotonic() + RETRY_BROKEN_S
        if self.broken is None:
            self.broken = _pg_reason(err)
            log.warning("response cache %s cannot be used (%s): the job goes on without it, every call goes to "
                        "the endpoint (the server is tried again every %d s)", self.path, self.broken,
                        RETRY_BROKEN_S)

    # ---- the store
    def get(self, key: str) -> dict[str, Any] | None:
        row = self._run(f"SELECT response, checksum FROM {TABLE} WHERE key = %s", (key,), fetch=True)
        if not row:
            return None
        text, stored = row
        value, problem = decode_reply(text, stored)
        if problem:
            log.warning("response cache %s: entry %s is damaged (%s): counted as missing and replaced by the "
                        "fresh reply", self.path, key[:16], problem)
            # only the damaged version: a concurrent writer may have replaced it already
            self._run(f"DELETE FROM {TABLE} WHERE key = %s AND checksum IS NOT DISTINCT FROM %s", (key, stored))
        return value

    def put(self, key: str, response: dict[str, Any], *, kind: str, model: str) -> None:
        text, digest = encode_reply(response)
        self._run(f"INSERT INTO {TABLE} ({COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s) "
                  "ON CONFLICT (key) DO NOTHING", (key, kind, model, time.time(), text, digest))

    def __len__(self) -> int:
        row = self._run(f"SELECT COUNT(*) FROM {TABLE}", (), fetch=True)
        return int(row[0]) if row else 0

    def close(self) -> None:
        """Close the pooled connections (call it when no thread uses the store; a later call opens new ones)."""
        conns = []
        while True:
            try:
                conns.append(self._slots.get_nowait())
            except queue.Empty:
                break
        for conn in conns:
            if conn is not None:
                try:
                    conn.close()
                except Exception:  # noqa: BLE001, S110 - a connection already gone
                    pass
        for _ in conns:
            self._slots.put(None)
