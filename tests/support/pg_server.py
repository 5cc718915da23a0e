"""A real PostgreSQL server on loopback for the tests of the PostgreSQL response cache (``cache.url``).

The server is the one ``.ci/run`` starts (its URL in ``BENCH_TEST_PG_URL``) or, when that is
not set, one started here from the server binaries of this machine with ``.ci/postgres.sh``
(about a second; stopped at the end of the session). No binaries: the tests that need it skip,
unless ``BENCH_REQUIRE_PG=1`` (set by ``.ci/run``), where they fail. Each test gets a database
of its own on the server (:func:`fresh_database`), so tests and pytest-xdist workers never share
a cache table.

    url, stop = start_server()          # postgresql://bench@127.0.0.1:PORT/postgres
    db = fresh_database(url)            # postgresql://bench@127.0.0.1:PORT/t_<hex>
"""

from __future__ import annotations

import os
import subprocess
import uuid
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

SCRIPT = Path(__file__).resolve().parents[2] / ".ci" / "postgres.sh"
URL_ENV = "BENCH_TEST_PG_URL"
REQUIRE_ENV = "BENCH_REQUIRE_PG"


class PgUnavailable(RuntimeError):
    """No server binaries, or the server did not start."""


def start_server() -> tuple[str, Callable[[], None]]:
    """A new throwaway server: its URL and a function that stops it (and deletes its data)."""
    # --watch: the server goes with this process even if it never gets to call stop() (a crashed worker)
    done = subprocess.run(["bash", str(SCRIPT), "start", "--watch", str(os.getpid())], capture_output=True, text=True,
                          timeout=120)
    if done.returncode != 0:
        raise PgUnavailable(done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "postgres.sh failed")
    values = dict(line.removeprefix("export ").split("=", 1) for line in done.stdout.splitlines()
                  if line.startswith("export "))
    url, data = values["BENCH_TEST_PG_URL"], values["BENCH_PG_DIR"]

    def stop() -> None:
        subprocess.run(["bash", str(SCRIPT), "stop", data], capture_output=True, timeout=60, check=False)

    return url, stop


def with_database(url: str, name: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, f"/{name}", parts.query, ""))


def fresh_database(url: str) -> str:
    """A new, empty database on the server of ``url``: its URL."""
    import psycopg

    name = f"t_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return with_database(url, name)


def drop_database(url: str) -> None:
    import psycopg

    name = urlsplit(url).path.lstrip("/")
    with psycopg.connect(with_database(url, "postgres"), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def server_url() -> tuple[str | None, Callable[[], None], str]:
    """The URL of the server for this session (``None`` and why when there is none) and how to stop it."""
    given = os.environ.get(URL_ENV)
    if given:
        return given, lambda: None, ""
    try:
        url, stop = start_server()
    except (PgUnavailable, OSError, subprocess.TimeoutExpired) as err:
        return None, lambda: None, f"no PostgreSQL server ({err}; or give one's URL in {URL_ENV})"
    return url, stop, ""
