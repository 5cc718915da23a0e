"""``python -m bench.cache stats|verify|prune``: the rules over a store's entries, for a SQLite
file or a PostgreSQL URL."""

from __future__ import annotations

import argparse
import logging
import sqlite3
import sys
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Protocol

from bench.cache.postgres import COLUMNS, TABLE, CacheUnavailable, _pg_connect, _pg_reason, shown_url
from bench.cache.sqlite import DEFAULT_PATH, _busy, decode_reply
from bench.core.errors import console_script, program

log = logging.getLogger("bench.cache")


def _connect(path: Path, wait_s: float = 60.0) -> sqlite3.Connection:
    if not path.is_file():
        raise SystemExit(f"error: no cache file at {path}")
    conn = sqlite3.connect(path, timeout=wait_s, isolation_level=None)
    conn.execute(f"PRAGMA busy_timeout = {int(wait_s * 1000)}")
    return conn


def _entries(conn: sqlite3.Connection) -> Iterator[tuple[str, str, str, float, Any, str | None]]:
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
    """One transaction on the server (autocommit off): prune's lock, its count and its deletes are one unit."""

    def __init__(self, url: str, wait_s: float) -> None:
        self.label = shown_url(url)
        self.conn = _pg_connect(url, min(wait_s, 30.0))
        self.conn.autocommit = False
        self.wait_s = wait_s
        if self.conn.execute("SELECT to_regclass(%s)", (TABLE,)).fetchone()[0] is None:
            raise CacheUnavailable(f"cache.url={self.label}: no cache table ({TABLE}) on that server")

    def summary(self) -> list[tuple[str, str, int, float, float]]:
        return self.conn.execute(f"SELECT kind, model, COUNT(*), MIN(created), MAX(created) FROM {TABLE} "
                                 "GROUP BY kind, model ORDER BY kind, model").fetchall()

    def size(self) -> str:
        size = self.conn.execute("SELECT pg_total_relation_size(%s)", (TABLE,)).fetchone()[0]
        return f"{size / 1e6:.1f} MB (table and index on the server)"

    def integrity(self) -> str:
        return "ok"  # the server keeps its own pages sound; what is checked here is every entry's checksum

    def entries(self) -> Iterable[tuple[str, str, str, float, Any, str | None]]:
        with self.conn.cursor(name="bench_cache_entries") as cur:  # server side: memory stays flat however large
            cur.itersize = 2000
            cur.execute(f"SELECT {COLUMNS} FROM {TABLE}")
            yield from cur

    def lock(self) -> None:  # writers wait (at most lock_timeout for us to get the lock) until delete() commits
        self.conn.execute(f"SET LOCAL lock_timeout = {int(self.wait_s * 1000)}")
        self.conn.execute(f"LOCK TABLE {TABLE} IN SHARE ROW EXCLUSIVE MODE")

    def delete(self, keys: list[str]) -> int:
        for start in range(0, len(keys), 1000):
            self.conn.execute(f"DELETE FROM {TABLE} WHERE key = ANY(%s)", (keys[start:start + 1000],))
        self.conn.commit()
        return self.conn.execute(f"SELECT COUNT(*) FROM {TABLE}").fetchone()[0]


def _state(text: Any, stored: str | None) -> str:
    """``ok``, ``unverified`` (no checksum: not trusted, read as missing) or ``bad`` for one entry."""
    if stored is None and isinstance(text, str):
        return "unverified"
    return "bad" if decode_reply(text, stored)[1] else "ok"


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


@console_script
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=program("bench.cache"), description="The response cache: "
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

    from bench.core.redact import secret_in_setting

    # a password in the URL is refused as a job refuses it in cache.url (PGPASSWORD or ~/.pgpass hold it)
    refusal = secret_in_setting("cache.url", args.url, command_line=False)
    refusal = refusal and refusal.replace("cache.url:", "--url:", 1)
    refusal = refusal or (check_age(args.older_than) if args.command == "prune" else None)
    if refusal:
        print(f"error: {refusal}", file=sys.stderr)
        return 2
    shown = shown_url(args.url)
    admin = None
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
    finally:
        if admin is not None:
            admin.conn.close()  # what was not committed (a prune cut short) is rolled back
