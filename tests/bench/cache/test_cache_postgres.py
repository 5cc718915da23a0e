"""The PostgreSQL response cache (``cache.url``) against a real server (``tests/support/pg_server.py``).

The same content addressing, stored text and checksums as the SQLite file; concurrent writers
of one key (threads, processes); ``python -m bench.cache stats|verify|prune`` on a URL; bad
URLs and unreachable servers as one line before any model call; secrets of the URL kept out
of every file; and the issue's acceptance: three jobs sharing one server, the second and third
make no call for the full arm. Without a server (no binaries, no ``BENCH_TEST_PG_URL``) these
tests skip; under ``.ci/run`` (``BENCH_REQUIRE_PG=1``) they fail.
"""

from __future__ import annotations

import json
import logging
import multiprocessing
import os
import socket
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path

import pytest

from bench.cache import PostgresCache, ResponseCache, open_cache, request_key
from bench.cache import main as cache_main
from bench.cache.postgres import TABLE, CacheUnavailable
from bench.core.errors import ConfigError
from bench.store.records import read_jsonl

from fake_openai import FakeOpenAI
from pg_server import REQUIRE_ENV, drop_database, fresh_database, server_url, with_database

psycopg = pytest.importorskip("psycopg")


@pytest.fixture(scope="session")
def pg_server() -> str:
    url, stop, why = server_url()
    if url is None:
        if os.environ.get(REQUIRE_ENV):
            pytest.fail(f"{REQUIRE_ENV} is set but {why}")
        pytest.skip(why)
    yield url
    stop()


@pytest.fixture
def pg_url(pg_server) -> str:
    """A database of this test's own on the server (dropped afterwards)."""
    url = fresh_database(pg_server)
    yield url
    drop_database(url)


def rows(url: str, sql: str, params: tuple = ()) -> list[tuple]:
    with psycopg.connect(url, autocommit=True) as conn:
        cursor = conn.execute(sql, params)
        return cursor.fetchall() if cursor.description else []


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]  # nothing listens there once the socket is closed


REPLY = {"message": {"type": "ai", "data": {"content": "Ünïcode \u2028 reply"}}, "usage": {"input_tokens": 7}}


# --------------------------------------------------------------------------- the store


def test_round_trip_stores_the_same_text_and_checksum_as_the_sqlite_file(pg_url, tmp_path):
    key = request_key({"model": "m", "messages": [{"role": "user", "content": "q"}]})
    cache = PostgresCache(pg_url)
    assert cache.get(key) is None and len(cache) == 0
    cache.put(key, REPLY, kind="answer", model="m")
    cache.put(key, {"message": "a second reply for the same key"}, kind="answer", model="m")  # the first stays
    assert cache.get(key) == REPLY and len(cache) == 1
    assert PostgresCache(pg_url).get(key) == REPLY  # another process's view of the server: persisted

    sqlite = ResponseCache(tmp_path / "c.sqlite")
    sqlite.put(key, REPLY, kind="answer", model="m")
    on_file = sqlite._conn().execute("SELECT key, kind, model, response, checksum FROM responses").fetchall()
    on_server = rows(pg_url, f"SELECT key, kind, model, response, checksum FROM {TABLE}")
    assert on_server == on_file  # one key recipe, one stored text, one checksum


def test_open_cache_takes_the_url_over_the_path_and_shares_one_store_per_url(pg_url, tmp_path):
    store = open_cache(tmp_path / "unused.sqlite", url=pg_url)
    assert isinstance(store, PostgresCache) and open_cache(None, url=f" {pg_url} ") is store
    assert not (tmp_path / "unused.sqlite").exists()
    assert open_cache(None, enabled=False, url=pg_url) is None


def test_a_damaged_entry_is_a_miss_replaced_by_the_fresh_reply_and_verify_reports_it(pg_url, caplog, capsys):
    cache = PostgresCache(pg_url)
    good, bad, unsummed = (request_key({"q": i}) for i in range(3))
    for key in (good, bad, unsummed):
        cache.put(key, REPLY, kind="answer", model="m")
    rows(pg_url, f"UPDATE {TABLE} SET response = replace(response, 'reply', 'REPLY') WHERE key = %s", (bad,))
    rows(pg_url, f"UPDATE {TABLE} SET checksum = NULL WHERE key = %s", (unsummed,))

    assert cache_main(["verify", "--url", pg_url]) == 1
    out = capsys.readouterr().out
    assert "1 ok, 1 without checksum" in out and "1 bad" in out and f"bad: {bad[:16]} (answer, m)" in out
    assert "bench@" not in out and "postgresql://***@127.0.0.1" in out

    with caplog.at_level(logging.WARNING, logger="bench.cache"):
        assert cache.get(bad) is None and cache.get(unsummed) is None  # never a different answer
    assert "checksum mismatch" in caplog.text and "no checksum" in caplog.text
    assert rows(pg_url, f"SELECT key FROM {TABLE}") == [(good,)]  # the damaged versions are gone
    cache.put(bad, REPLY, kind="answer", model="m")  # the fresh reply takes its place
    assert cache.get(bad) == REPLY
    assert cache_main(["verify", "--url", pg_url]) == 0


def test_stats_and_prune_on_a_url(pg_url, capsys):
    cache = PostgresCache(pg_url)
    for i in range(6):
        cache.put(request_key({"a": i}), REPLY, kind="answer" if i < 4 else "judge", model="m1" if i % 2 else "m2")
    rows(pg_url, f"UPDATE {TABLE} SET created = created - 10 * 86400 WHERE kind = 'judge'")
    rows(pg_url, f"UPDATE {TABLE} SET response = 'x' WHERE key = %s", (request_key({"a": 0}),))

    assert cache_main(["stats", "--url", pg_url]) == 0
    out = capsys.readouterr().out
    assert ": 6 entries" in out and "MB (table and index on the server)" in out
    assert [line.split()[:3] for line in out.splitlines()[1:]] == [
        ["answer", "m1", "2"], ["answer", "m2", "2"], ["judge", "m1", "1"], ["judge", "m2", "1"]]

    assert cache_main(["prune", "--url", pg_url, "--older-than", "5", "--dry-run"]) == 0
    assert "would remove 3 of 6 entries: 1 bad, 2 selected (older than 5 days)" in capsys.readouterr().out
    assert len(cache) == 6
    assert cache_main(["prune", "--url", pg_url, "--older-than", "5"]) == 0
    assert "removed 3 entries, 3 left" in capsys.readouterr().out
    assert cache_main(["prune", "--url", pg_url, "--model", "m1"]) == 0
    assert sorted(r[0] for r in rows(pg_url, f"SELECT model FROM {TABLE}")) == ["m2"]

    # the module itself, as a user runs it
    done = subprocess.run([sys.executable, "-m", "bench.cache", "verify", "--url", pg_url],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "1 ok, 0 without checksum" in done.stdout, done.stderr


def test_prune_waits_for_a_lock_then_gives_up_with_one_line_and_changes_nothing(pg_url, capsys):
    cache = PostgresCache(pg_url)
    cache.put(request_key({"x": 1}), {"broken": True}, kind="answer", model="m")
    rows(pg_url, f"UPDATE {TABLE} SET checksum = 'wrong'")
    with psycopg.connect(pg_url) as holder:  # another session holds the table
        holder.execute(f"LOCK TABLE {TABLE} IN ACCESS EXCLUSIVE MODE")
        assert cache_main(["prune", "--url", pg_url, "--wait", "0.5"]) == 2
        holder.rollback()
    assert "is locked by another process" in capsys.readouterr().err
    assert len(cache) == 1
    assert cache_main(["prune", "--url", pg_url]) == 0 and len(cache) == 0


def test_admin_errors_are_one_line_exit_2(pg_url, pg_server, capsys):
    empty = fresh_database(pg_server)  # a server without the cache's table
    try:
        assert cache_main(["stats", "--url", empty]) == 2
        assert f"no cache table ({TABLE})" in capsys.readouterr().err
    finally:
        drop_database(empty)
    assert cache_main(["verify", "--url", f"postgresql://bench@127.0.0.1:{closed_port()}/x?sslmode=disable"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot use the PostgreSQL cache" in err and "?***" in err
    assert cache_main(["stats", "--url", "mysql://db/x"]) == 2
    assert "give a postgresql://" in capsys.readouterr().err
    assert cache_main(["prune", "--url", pg_url, "--older-than", "-1"]) == 2


def test_a_table_of_that_name_that_is_not_a_cache_is_refused(pg_url):
    rows(pg_url, f"CREATE TABLE {TABLE} (id int)")
    with pytest.raises(CacheUnavailable, match=f"table {TABLE} is not a response cache"):
        PostgresCache(pg_url)


# --------------------------------------------------------------------------- concurrency


def _process_writer(url: str, worker: int, n: int) -> None:
    cache = PostgresCache(url)
    for i in range(n):
        shared = request_key({"i": i})
        cache.put(shared, {"i": i, "writer": worker}, kind="answer", model="m")  # every process: the same keys
        cache.put(request_key({"worker": worker, "i": i}), {"own": i}, kind="judge", model="m")
        got = cache.get(shared)
        assert got is not None and got["i"] == i


def test_processes_and_threads_writing_the_same_keys(pg_url):
    context = multiprocessing.get_context("spawn")
    procs = [context.Process(target=_process_writer, args=(pg_url, w, 40)) for w in range(3)]
    for proc in procs:
        proc.start()
    cache = PostgresCache(pg_url, pool_size=3)
    seen: dict[str, set[str]] = {}
    errors: list[BaseException] = []

    def work(thread: int) -> None:
        try:
            for i in range(40):
                key = request_key({"i": i})
                cache.put(key, {"i": i, "writer": f"thread {thread}"}, kind="answer", model="m")
                got = cache.get(key)
                seen.setdefault(key, set()).add(json.dumps(got, sort_keys=True))
        except BaseException as err:  # noqa: BLE001
            errors.append(err)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for proc in procs:
        proc.join(120)
    assert not errors and [p.exitcode for p in procs] == [0, 0, 0]
    assert all(len(replies) == 1 for replies in seen.values())  # every reader saw the one reply that stayed
    assert len(cache) == 40 + 3 * 40
    # twelve threads shared three connections: a job holds pool_size connections, not one per thread
    mine = rows(pg_url, "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                        "AND pid <> pg_backend_pid()")[0][0]
    assert 1 <= mine <= 3
    cache.close()


def test_a_lost_connection_is_replaced_and_a_server_gone_is_one_warning_then_tried_again(pg_url, caplog, monkeypatch):
    from bench.cache import postgres

    cache = PostgresCache(pg_url, pool_size=2)
    key = request_key({"k": 1})
    cache.put(key, REPLY, kind="answer", model="m")
    # the server ends the session (a restart, an idle timeout): the next statement reconnects
    rows(pg_url, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() "
                 "AND pid <> pg_backend_pid()")
    with caplog.at_level(logging.WARNING, logger="bench.cache"):
        assert cache.get(key) == REPLY and cache.broken is None
        assert not caplog.text

        # the database goes away while two statements hold both connections and sixteen threads wait
        # for one: one warning, every waiter returns (a miss), none waits for a connection that is gone
        name = pg_url.rsplit("/", 1)[1]
        held = [cache._acquire(), cache._acquire()]
        results: list[object] = []
        threads = [threading.Thread(target=lambda: results.extend(cache.get(key) for _ in range(5)))
                   for _ in range(16)]
        for thread in threads:
            thread.start()
        with psycopg.connect(with_database(pg_url, "postgres"), autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s", (name,))
            admin.execute(f'ALTER DATABASE "{name}" RENAME TO "{name}_away"')
            try:
                for conn in held:
                    cache._discard(conn)  # what a statement that lost its connection does
                for thread in threads:
                    thread.join(60)
                assert not any(t.is_alive() for t in threads) and results == [None] * 80
                assert cache.get(key) is None and cache.broken  # the job goes on and calls the endpoint
                cache.put(request_key({"k": 2}), REPLY, kind="answer", model="m")  # nothing kept, no error
                assert cache.get(key) is None
                assert caplog.text.count("cannot be used") == 1
            finally:
                admin.execute(f'ALTER DATABASE "{name}_away" RENAME TO "{name}"')
        monkeypatch.setattr(postgres, "RETRY_BROKEN_S", 0.0)
        cache._retry_at = 0.0
        assert cache.get(key) == REPLY and cache.broken is None  # back: the server is used again
        assert len(cache) == 1
    assert "can be used again" in caplog.text


# --------------------------------------------------------------------------- jobs


def bench_cli(cwd: Path, *args: str, background: bool = False) -> subprocess.Popen | subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("HYDRA_FULL_ERROR", "OPENAI_API_KEY")}
    command = [sys.executable, "-m", "bench.main", *args]
    if background:
        return subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=240)


def job_args(server: FakeOpenAI, url: str, job: Path, *extra: str) -> list[str]:
    return ["model=openai", f"model.base_url={server.base_url}", "model.api_key_env=null", f"cache.url={url}",
            "model.backoff_base=0.01", "dataset.limit=6", f"hydra.run.dir={job}", *extra]


def calls_by_phase(job: Path) -> Counter:
    return Counter((r["phase"], "hit" if r["cached"] else "call") for r in read_jsonl(job / "calls.jsonl"))


def canonical(path: Path) -> list[str]:
    return sorted(json.dumps(r, sort_keys=True) for r in read_jsonl(path))


@pytest.mark.slow  # three subprocess jobs, two at once: ~30 s on 2 busy cores; .ci/run runs it
def test_three_jobs_share_one_server_the_second_and_third_make_no_call_for_the_full_arm(pg_url, tmp_path):
    """The issue's acceptance: job 1 pays for the full-arm reference; jobs 2 and 3, other arms
    started together once job 1 is done, pay only for their own arm's calls."""
    jobs = [tmp_path / "j1", tmp_path / "j2", tmp_path / "j3"]
    with FakeOpenAI() as server:
        first = bench_cli(tmp_path, *job_args(server, pg_url, jobs[0], "arm=nlatest", "arm.n=10"))
        assert first.returncode == 0, first.stderr
        procs = [bench_cli(tmp_path, *job_args(server, pg_url, job, *arm), background=True)
                 for job, arm in ((jobs[1], ("arm=nlatest", "arm.n=20")), (jobs[2], ("arm=compact", "summarizer=offline")))]
        outs = [proc.communicate(timeout=240) for proc in procs]
        assert [p.returncode for p in procs] == [0, 0], [err for _, err in outs]
        requests = server.stats()["requests"]
    counts = [calls_by_phase(job) for job in jobs]
    reference = counts[0][("reference", "call")]
    assert reference > 0 and counts[0][("reference", "hit")] == 0  # a fresh database: job 1 paid for it
    for later in counts[1:]:
        assert later[("reference", "call")] == 0  # the figure: zero calls for the full arm
        assert later[("reference", "hit")] == reference
        assert later[("arm", "call")] > 0  # their own arm is not the full arm: those calls are made
    for job, count in zip(jobs, counts, strict=True):
        metrics = json.loads((job / "metrics.json").read_text())
        made = count[("arm", "call")] + count[("reference", "call")]
        assert metrics["model_calls"]["total"]["calls"] == made
        assert metrics["model_calls"]["total"]["cache_hits"] == count[("arm", "hit")] + count[("reference", "hit")]
    assert requests == sum(c[("arm", "call")] + c[("reference", "call")] for c in counts)  # nothing unrecorded
    assert canonical(jobs[1] / "reference_scores.jsonl") == canonical(jobs[0] / "reference_scores.jsonl")
    assert canonical(jobs[2] / "reference_scores.jsonl") == canonical(jobs[0] / "reference_scores.jsonl")
    entries = rows(pg_url, f"SELECT count(*) FROM {TABLE}")[0][0]
    assert entries == requests  # one entry per distinct request: no call was made twice


@pytest.mark.slow  # three jobs at once on a server with latency: ~30 s; .ci/run runs it
def test_three_jobs_started_at_once_share_what_is_done_and_agree(pg_url, tmp_path):
    """Started together, the jobs race: a reference call another job has in flight is made
    again (each job pays at most the whole reference once), every call is kept once, the jobs
    agree, and a job after them makes no call for the full arm."""
    jobs = [tmp_path / f"j{i}" for i in range(4)]
    arms = [("arm=nlatest", "arm.n=10"), ("arm=nlatest", "arm.n=20"), ("arm=compact", "summarizer=offline"),
            ("arm=nlatest", "arm.n=5")]
    with FakeOpenAI(latency=0.05) as server:
        procs = [bench_cli(tmp_path, *job_args(server, pg_url, job, *arm), background=True)
                 for job, arm in zip(jobs[:3], arms[:3], strict=True)]
        outs = [proc.communicate(timeout=300) for proc in procs]
        assert [p.returncode for p in procs] == [0, 0, 0], [err for _, err in outs]
        after = bench_cli(tmp_path, *job_args(server, pg_url, jobs[3], *arms[3]))
        assert after.returncode == 0, after.stderr
    counts = [calls_by_phase(job) for job in jobs]
    reference = counts[0][("reference", "call")] + counts[0][("reference", "hit")]
    made = sum(c[("reference", "call")] for c in counts[:3])
    assert reference <= made <= 3 * reference  # paid at least once, at most once per job
    assert counts[3][("reference", "call")] == 0 and counts[3][("reference", "hit")] == reference
    for job in jobs[1:]:
        assert canonical(job / "reference_scores.jsonl") == canonical(jobs[0] / "reference_scores.jsonl")
    assert cache_main(["verify", "--url", pg_url]) == 0


def test_jobs_in_one_process_share_the_full_arm_through_the_server(pg_url, tmp_path):
    """The acceptance's rule without its processes (fast): a second job, another arm, makes no
    call for the full arm; what it reads is what the server holds."""
    from bench.config.checks import compose
    from bench.runner import run

    with FakeOpenAI() as server:
        common = ["model=openai", f"model.base_url={server.base_url}", "model.api_key_env=null", f"cache.url={pg_url}",
                  "dataset.limit=3"]
        run(compose([*common, "arm=nlatest", "arm.n=10", f"output_dir={tmp_path / 'j1'}"]))
        first = server.stats()["requests"]
        run(compose([*common, "arm=compact", f"output_dir={tmp_path / 'j2'}"]))
        second = server.stats()["requests"] - first
    counts = [calls_by_phase(tmp_path / job) for job in ("j1", "j2")]
    assert counts[0][("reference", "call")] > 0 and counts[1][("reference", "call")] == 0
    assert counts[1][("reference", "hit")] == counts[0][("reference", "call")]
    assert second == counts[1][("arm", "call")] > 0
    assert rows(pg_url, f"SELECT count(*) FROM {TABLE}")[0][0] == first + second


def test_a_bad_url_or_an_unreachable_server_stops_the_job_before_any_call(tmp_path):
    from bench.config.checks import compose, validate
    from bench.core.failures import innermost
    from bench.core.redact import literal_secret
    from bench.runner import run

    with FakeOpenAI() as server:
        common = ["model=openai", f"model.base_url={server.base_url}", "model.api_key_env=null", "dataset.limit=2"]
        port = closed_port()
        for url, message in ((f"postgresql://bench@127.0.0.1:{port}/bench?sslmode=disable",
                              f"cache.url=postgresql://***@127.0.0.1:{port}/bench?***: cannot use the PostgreSQL cache"),
                             ("mysql://127.0.0.1/x", "cache.url=mysql://127.0.0.1/x: give a postgresql://user@host:port/db URL")):
            with pytest.raises(Exception) as caught:  # noqa: PT011 - Hydra wraps what the model's constructor raised
                run(compose([*common, f"cache.url='{url}'", f"output_dir={tmp_path / 'job'}"]))
            root = innermost(caught.value)  # what bench.main prints, as one line
            assert isinstance(root, CacheUnavailable) and message in str(root) and "\n" not in str(root)
            assert not (tmp_path / "job" / "cases.jsonl").exists()  # stopped at set-up, before any case work
        assert server.stats().get("requests", 0) == 0
    # a password: refused on the command line and in the config, with where it belongs
    for url in ("postgresql://bench:hunter2hunter2@db/bench", "postgresql://bench@db/bench?password=hunter2hunter2"):
        refusal = literal_secret([f"cache.url={url}"])
        assert refusal and "PGPASSWORD or ~/.pgpass" in refusal and "hunter2" not in refusal
        with pytest.raises(ConfigError, match="PGPASSWORD"):
            validate(compose(["model=openai", f"cache.url='{url}'"]))
    # a user alone is no credential: accepted in the config and as the model groups read it
    validate(compose(["model=openai", "judge=llm", "summarizer=openai", "cache.url=postgresql://bench@db/bench"]))


@pytest.mark.slow  # a refused job as the user sees it, then a job and a sweep: subprocesses; .ci/run runs it
def test_the_urls_user_and_query_reach_no_file_of_a_job_or_a_sweep_and_a_refusal_is_one_line(pg_url, tmp_path):
    secret = "appname-SECRET-7f3a9c"
    url = f"{pg_url}?application_name={secret}"
    with FakeOpenAI() as server:
        refused = bench_cli(tmp_path, *job_args(server, f"'postgresql://bench@127.0.0.1:{closed_port()}/db?application_name={secret}'",
                                                tmp_path / "refused"))
        assert refused.returncode == 2 and refused.stderr.count("\n") == 1, refused.stderr
        assert refused.stderr.startswith("error: cache.url=postgresql://***@127.0.0.1:") and "?***" in refused.stderr
        assert server.stats().get("requests", 0) == 0
        done = bench_cli(tmp_path, *job_args(server, f"'{url}'", tmp_path / "job", "dataset.limit=2", "arm=nlatest",
                                             "arm.n=4"))
        assert done.returncode == 0, done.stderr
    # a sweep's job directories are named after its overrides (offline model: only the names matter here)
    sweep = bench_cli(tmp_path, "-m", "+experiment=smoke", "dataset.limit=1", f"cache.url='{url}'",
                      f"hydra.sweep.dir={tmp_path / 'sweep'}")
    assert sweep.returncode == 0, sweep.stderr
    assert rows(pg_url, f"SELECT count(*) FROM {TABLE}")[0][0] > 0  # the job used the server
    run = json.loads((tmp_path / "job" / "run.json").read_text())
    shown = run["config"]["cache"]["url"]
    assert shown.startswith("postgresql://***@127.0.0.1:") and shown.endswith("?***")
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert {"main.log", "config.yaml", "overrides.yaml", "calls.jsonl", "jobs.csv", "multirun.yaml"} <= {p.name for p in files}
    for path in files:
        data = path.read_bytes()
        assert secret.encode() not in data and b"bench@127.0.0.1" not in data, path
    for path in tmp_path.rglob("*"):
        assert secret not in path.name and "bench@" not in path.name, path
    assert len(list((tmp_path / "sweep").glob("*seed=0"))) == 3
    for text in (done.stdout, done.stderr, sweep.stdout, sweep.stderr):
        assert secret not in text and "bench@127" not in text


@pytest.mark.slow  # a local Ray instance and its worker processes: ~60 s; .ci/run runs it
def test_a_ray_sweep_shares_the_server_with_any_later_job(pg_url, tmp_path):
    """docs/study.md's cluster sweep on one machine: Ray's worker processes answer through the
    fake endpoint and keep every reply on the server; a job after the sweep, in another process,
    makes no call for the full arm (the sweep's full job paid for it)."""
    pytest.importorskip("hydra_plugins.hydra_ray_launcher", reason="the ray extra is not installed (uv sync --extra ray)")
    from bench.config.checks import compose
    from bench.runner import run

    env = {k: v for k, v in os.environ.items() if not k.startswith("LANGFUSE_") and k != "RAY_ENABLE_UV_RUN_RUNTIME_ENV"}
    with FakeOpenAI() as server:
        model = ["model=openai", f"model.base_url={server.base_url}", "model.api_key_env=null",
                 "summarizer=offline"]  # chosen: the smoke sweep's compact job summarizes offline
        done = subprocess.run([sys.executable, "-m", "bench.main", "-m", "+experiment=smoke", *model,
                               f"cache.url={pg_url}", "hydra/launcher=ray_cluster", "+hydra.launcher.ray.init.num_cpus=2",
                               "+hydra.launcher.ray.init.include_dashboard=false", f"hydra.sweep.dir={tmp_path / 'sweep'}"],
                              cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-3000:]
        swept = server.stats()["requests"]
        metrics = run(compose([*model, "+experiment=smoke", "+experiment/arm=full", f"cache.url={pg_url}",
                               f"output_dir={tmp_path / 'after'}"]))
        assert server.stats()["requests"] == swept  # every reply of the full arm came from the server
    jobs = sorted((tmp_path / "sweep").glob("*/run.json"))
    assert len(jobs) == 3 and all(json.loads(p.read_text())["status"] == "complete" for p in jobs)
    assert "RayLauncher" in (tmp_path / "sweep" / "multirun.yaml").read_text()
    assert metrics["model_calls"]["total"]["calls"] == 0 and metrics["model_calls"]["total"]["cache_hits"] > 0
    made = sum(json.loads(p.with_name("metrics.json").read_text())["model_calls"]["total"]["calls"] for p in jobs)
    assert made == swept and 0 < rows(pg_url, f"SELECT count(*) FROM {TABLE}")[0][0] <= swept
    assert not (tmp_path / ".cache").exists()  # no job fell back to the SQLite file at cache.path
