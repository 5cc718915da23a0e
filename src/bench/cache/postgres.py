"""The PostgreSQL response cache (``cache.url``): the same keys, checksums and rules as the
SQLite file, for jobs on several machines."""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from bench.cache.sqlite import decode_reply, encode_reply
from bench.errors import ConfigError

log = logging.getLogger("bench.cache")


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

    Same keys, stored text, checksums and decode rule (:func:`encode_reply`, :func:`decode_reply`)
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
        value, problem = decode_reply(text, stored)
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
