"""A cache a cluster can share: three jobs on one PostgreSQL cache, model calls per job.

Three ``python -m bench.main`` processes (``model=openai`` against ``tests/support/fake_openai.py``
in its own process, ``--latency`` per reply; the shipped sample, one seed), three arms that
each need the full-history reference: ``nlatest n=10``, ``nlatest n=20``, ``compact``.
Side by side, each on a fresh cache:

* ``PG, 1 then 2+3``: ``cache.url`` on a throwaway PostgreSQL server (``.ci/postgres.sh``);
  job 1 runs alone, then jobs 2 and 3 at once (the issue's acceptance: they make no call
  for the full arm);
* ``PG, all at once``: the same three started together (a sweep on a cluster): a reference
  call another job has in flight is made again;
* ``SQLite per node``: what a cluster without a shared cache does (SQLite over NFS is not
  safe): each job its own file, each pays for the whole reference.

Then the cost of a lookup: ``get`` of cached replies from 16 threads, SQLite file vs the
PostgreSQL server on loopback (a pool of 4 connections per process), microseconds per hit.

Needs the PostgreSQL server binaries (``bash .ci/postgres.sh install``) or a server's URL in
``BENCH_TEST_PG_URL``.

    uv run python benchmarks/bench_shared_cache.py [--latency 0.1] [--limit 0]
"""

from __future__ import annotations

import os

os.environ.setdefault("TQDM_DISABLE", "1")

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "support"))
from _common import fake_server  # noqa: E402

ARMS = (("nlatest n=10", ("arm=nlatest", "arm.n=10")), ("nlatest n=20", ("arm=nlatest", "arm.n=20")),
        ("compact", ("arm=compact", "summarizer=offline")))  # the extractive stand-in, chosen: no summary calls


def job(base_url: str, cache: str, out: Path, arm: tuple[str, ...], limit: int) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k not in ("HYDRA_FULL_ERROR", "OPENAI_API_KEY")}
    args = [sys.executable, "-m", "bench.main", "model=openai", f"model.base_url={base_url}", "model.api_key_env=null",
            cache, f"hydra.run.dir={out}", *arm, *([f"dataset.limit={limit}"] if limit else [])]
    return subprocess.Popen(args, cwd=out.parent, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def wait(procs: list[subprocess.Popen]) -> None:
    for proc in procs:
        _, err = proc.communicate(timeout=600)
        if proc.returncode != 0:
            raise SystemExit(f"a job failed: {err.strip().splitlines()[-1] if err.strip() else proc.returncode}")


def counts(out: Path) -> Counter:
    counter: Counter = Counter()
    for line in (out / "calls.jsonl").read_text().splitlines():
        record = json.loads(line)
        counter[(record["phase"], "hit" if record["cached"] else "call")] += 1
    return counter


def scenario(name: str, base_url: str, caches: list[str], tmp: Path, staged: bool, limit: int) -> list[Counter]:
    outs = [tmp / f"{name}-{i}" for i in range(3)]
    start = time.perf_counter()
    if staged:
        wait([job(base_url, caches[0], outs[0], ARMS[0][1], limit)])
        wait([job(base_url, caches[i], outs[i], ARMS[i][1], limit) for i in (1, 2)])
    else:
        wait([job(base_url, caches[i], outs[i], ARMS[i][1], limit) for i in range(3)])
    wall = time.perf_counter() - start
    result = [counts(out) for out in outs]
    label = {"pg-staged": "PG, 1 then 2+3", "pg-once": "PG, all at once", "sqlite": "SQLite per node"}[name]
    for i, count in enumerate(result):
        print(f"{label if i == 0 else '':<18} {i + 1:>3}  {ARMS[i][0]:<13} {count[('arm', 'call')]:>9} "
              f"{count[('reference', 'call')]:>9} {count[('reference', 'hit')]:>8}"
              + (f"  {wall:>6.1f}" if i == 0 else ""))
    return result


def lookups(store, keys: list[str], threads: int = 16) -> float:
    """Microseconds per cached ``get``, ``threads`` threads reading every key."""
    def read() -> None:
        for key in keys:
            assert store.get(key) is not None

    workers = [threading.Thread(target=read) for _ in range(threads)]
    start = time.perf_counter()
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return (time.perf_counter() - start) / (threads * len(keys)) * 1e6


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--latency", type=float, default=0.1, help="seconds per fake reply (default 0.1)")
    parser.add_argument("--limit", type=int, default=0, help="cases of the shipped sample (0: all)")
    parser.add_argument("--repeat", type=int, default=3, help="lookup timing repeats (median)")
    args = parser.parse_args(argv)

    from pg_server import URL_ENV, PgUnavailable, drop_database, fresh_database, start_server

    stop = None
    server_url = os.environ.get(URL_ENV)
    if not server_url:
        try:
            server_url, stop = start_server()
        except PgUnavailable as err:
            print(f"error: no PostgreSQL server ({err}); run `bash .ci/postgres.sh install` or set {URL_ENV}",
                  file=sys.stderr)
            return 2
    databases: list[str] = []
    try:
        with tempfile.TemporaryDirectory() as tmp, fake_server("--latency", str(args.latency), "--lifetime", "900") as (
                base_url, _):
            work = Path(tmp)
            print(f"three jobs, shipped sample{f' ({args.limit} cases)' if args.limit else ''}, "
                  f"fake endpoint {args.latency:g} s per reply; model calls per job")
            print(f"{'cache':<18} {'job':>3}  {'arm':<13} {'arm calls':>9} {'ref calls':>9} {'ref hits':>8}  {'wall s':>6}")
            totals = {}
            for name in ("pg-staged", "pg-once", "sqlite"):
                if name == "sqlite":
                    caches = [f"cache.path={work / f'node{i}.sqlite'}" for i in range(3)]
                else:
                    databases.append(fresh_database(server_url))
                    caches = [f"cache.url={databases[-1]}"] * 3
                result = scenario(name, base_url, caches, work, staged=name == "pg-staged", limit=args.limit)
                totals[name] = sum(c[("reference", "call")] for c in result), sum(
                    c[("arm", "call")] + c[("reference", "call")] for c in result)
            reference = counts(work / "pg-staged-0")[("reference", "call")]  # job 1 on an empty cache
            print(f"\nthe full-arm reference is {reference} calls; reference calls made by the three jobs "
                  f"(all calls): PG 1 then 2+3 {totals['pg-staged'][0]} ({totals['pg-staged'][1]}), "
                  f"PG all at once {totals['pg-once'][0]} ({totals['pg-once'][1]}), "
                  f"SQLite per node {totals['sqlite'][0]} ({totals['sqlite'][1]})")

            from bench.cache import PostgresCache, ResponseCache, request_key

            keys = [request_key({"bench": i}) for i in range(300)]
            reply = {"message": {"content": "x" * 2000}, "usage": {"input_tokens": 1000}}
            databases.append(fresh_database(server_url))
            stores = {"SQLite file": ResponseCache(work / "lookups.sqlite"), "PostgreSQL": PostgresCache(databases[-1])}
            for store in stores.values():
                for key in keys:
                    store.put(key, reply, kind="answer", model="m")
            timing = {name: statistics.median(lookups(store, keys) for _ in range(args.repeat))
                      for name, store in stores.items()}
            stores["PostgreSQL"].close()
            print("cached get, 16 threads: " + ", ".join(f"{name} {us:.0f} us" for name, us in timing.items())
                  + f" per hit (median of {args.repeat}; a model call is 1e5-1e7 us)")
    finally:
        for database in databases:
            drop_database(database)
        if stop is not None:
            stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
