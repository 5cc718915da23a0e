"""Study cost: input tokens of the prompt x mechanism grid, 3 seeds, with and without reuse.

Runs the grid the README's studies run (``arm=compact``, ``prompt`` x ``mechanism``, each
seed) as real jobs (``bench.runner.run``) with ``summarizer=openai`` and ``model=openai``
pointed at ``tests/support/fake_openai.py`` (no latency; it counts the prompt tokens of every
request with tiktoken and returns them as ``usage``), on the first ``--cases`` cases of
``dev.parquet``, with one fresh response cache shared by the whole grid. Every job
writes each model request to ``calls.jsonl`` (kind, phase, cache hit, input tokens), so
one pass gives all the counts (seeds run in parallel processes: they share no cache
entry, so the counts are those of a sequential sweep):

* ``naive``: every config recomputes everything (its summaries, its answers, its own
  full-history reference answers, its judging) = the input tokens of every request;
* ``full reuse``: only the full-history reference is shared (computed once per seed, as
  the reference answers of the same seed are the same requests);
* ``cache``: the response cache as shipped (the full reference, and any summary, answer
  or judge request repeated across configs of the same seed, e.g. the summaries of
  ``collapse`` and ``verify``, are made once) = the tokens actually spent;
* ``rerun``: the grid of the first ``--rerun-seeds`` seed(s) again with the warm cache
  (measured: zero calls expected).

Seeds are part of the cache key (the sampling seed changes replies), so nothing is shared
across seeds.

    uv run python benchmarks/bench_cost.py [--cases 3] [--seeds 0,1,2] [--judge exact|llm]
"""

from __future__ import annotations

import os

os.environ.setdefault("TQDM_DISABLE", "1")

import argparse
import json
import multiprocessing
import sys
import tempfile
import time
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import DEV, compose, fake_server, quiet  # noqa: E402

PROMPTS = ("sre", "generic", "hybrid", "hybrid_v2")
MECHANISMS = ("shipped", "tail", "stepcut", "offload", "collapse", "verify")


def run_grid(url: str, data: Path, out: Path, cache: Path, seeds: list[int], cases: int, judge: str,
             prompts, mechanisms) -> list[dict]:
    """Run every job of the grid; the call records of all jobs, tagged with the job's config."""
    quiet()
    import bench.runner as runner

    records: list[dict] = []
    for seed in seeds:
        for prompt in prompts:
            for mechanism in mechanisms:
                name = f"{prompt}-{mechanism}-s{seed}"
                cfg = compose([
                    "dataset=local", f"dataset.path={data}", f"dataset.limit={cases}", "arm=compact",
                    f"prompt={prompt}", f"mechanism={mechanism}", f"seed={seed}", "summarizer=openai",
                    "model=openai", f"model.base_url={url}", "model.api_key_env=null", f"judge={judge}",
                    "model.max_concurrency=4", "cache.enabled=true", f"cache.path={cache}", f"output_dir={out / name}",
                    "tracing.langfuse=false",
                ])
                metrics = runner.run(cfg)
                if metrics.get("n_errors"):
                    print(f"  {name}: {metrics['n_errors']} answer errors", file=sys.stderr)
                for line in (out / name / "calls.jsonl").read_text().splitlines():
                    record = json.loads(line)
                    record.update(job=name, seed_=seed)
                    records.append(record)
    return records


def run_seed(seed: int, url: str, data: Path, tmp: Path, cases: int, judge: str, prompts, mechanisms,
             rerun: bool):
    """One seed's grid, then (``rerun``) the same grid again on the warm cache; one process per seed.

    Seeds share no cache entry, so running them in parallel changes no count.
    """
    cache = tmp / "responses.sqlite"
    first = run_grid(url, data, tmp / "grid", cache, [seed], cases, judge, prompts, mechanisms)
    again = run_grid(url, data, tmp / "rerun", cache, [seed], cases, judge, prompts, mechanisms) if rerun else []
    return first, again


def bucket(record: dict) -> str:
    kind = record.get("kind", "?")
    if kind == "answer":
        return "reference answers" if record.get("phase") == "reference" else "arm answers"
    return {"summarizer": "summaries", "judge": "judging"}.get(kind, kind)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=str(DEV), help="parquet/jsonl in the nebius schema")
    parser.add_argument("--cases", type=int, default=3, help="cases per job (the first that pass the filters)")
    parser.add_argument("--seeds", default="0,1,2", help="comma list of seeds")
    parser.add_argument("--judge", default="exact", choices=("exact", "llm"), help="judge group (llm: judge calls)")
    parser.add_argument("--prompts", default=",".join(PROMPTS), help="comma list of summary prompts")
    parser.add_argument("--mechanisms", default=",".join(MECHANISMS), help="comma list of mechanism presets")
    parser.add_argument("--rerun-seeds", type=int, default=1, help="seeds whose grid is rerun on the warm cache")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                        help="processes, one seed each (seeds share nothing, so counts do not change)")
    args = parser.parse_args(argv)
    if not Path(args.data).exists():
        print(f"error: dataset not found: {args.data} (pass --data FILE)", file=sys.stderr)
        return 2
    seeds = [int(s) for s in args.seeds.split(",") if s]
    prompts = [p for p in args.prompts.split(",") if p]
    mechanisms = [m for m in args.mechanisms.split(",") if m]
    n_jobs = len(seeds) * len(prompts) * len(mechanisms)
    start = time.perf_counter()
    records: list[dict] = []
    rerun: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="bench_cost_") as tmp, fake_server("--latency", "0") as (url, stats):
        workers = max(1, min(len(seeds), args.workers))
        with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn")) as pool:
            futures = [pool.submit(run_seed, seed, url, Path(args.data), Path(tmp) / f"seed{seed}", args.cases,
                                   args.judge, prompts, mechanisms, seed in seeds[:args.rerun_seeds])
                       for seed in seeds]
            for future in futures:
                first_pass, again = future.result()
                records += first_pass
                rerun += again
    elapsed = time.perf_counter() - start

    rows: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    seen_reference: set[str] = set()
    for record in records:
        tokens = int(record.get("input_tokens") or 0)
        for name in (bucket(record), "total"):
            row = rows[name]
            row["requests"] += 1
            row["naive"] += tokens
            if bucket(record) != "reference answers" or record["key"] not in seen_reference:
                row["full_reuse"] += tokens
            if not record.get("cached"):
                row["calls"] += 1
                row["cache"] += tokens
        if bucket(record) == "reference answers":
            seen_reference.add(record["key"])
    rerun_calls = sum(1 for r in rerun if not r.get("cached"))
    rerun_tokens = sum(int(r.get("input_tokens") or 0) for r in rerun if not r.get("cached"))

    print(f"grid: {len(prompts)} prompts x {len(mechanisms)} mechanisms x {len(seeds)} seeds = {n_jobs} jobs, "
          f"{args.cases} cases each from {args.data}, judge={args.judge}; {elapsed:.0f}s in all "
          f"({workers} processes); the fake server saw {stats.get('requests', '?')} chat requests\n")
    header = (f"{'input tokens':<20}{'requests':>9}{'naive':>12}{'full reuse':>12}{'cache':>12}{'calls':>7}"
              f"{'cache/naive':>13}")
    print(header)
    print("-" * len(header))
    order = ["summaries", "arm answers", "reference answers", "judging", "total"]
    for name in [n for n in order if n in rows] + sorted(set(rows) - set(order)):
        row = rows[name]
        ratio = row["cache"] / row["naive"] if row["naive"] else 0.0
        print(f"{name:<20}{row['requests']:>9}{row['naive']:>12,}{row['full_reuse']:>12,}{row['cache']:>12,}"
              f"{row['calls']:>7}{ratio:>12.1%}")
    total = rows["total"]
    print(f"\nsaved by the full-arm reuse alone: {1 - total['full_reuse'] / total['naive']:.1%} of the naive tokens; "
          f"by the response cache: {1 - total['cache'] / total['naive']:.1%}")
    rerun_jobs = len({r["job"] for r in rerun})
    print(f"rerun of {rerun_jobs} jobs (seeds {seeds[:args.rerun_seeds]}) with the warm cache: {len(rerun)} requests, "
          f"{rerun_calls} calls, {rerun_tokens} input tokens spent")
    per_job = total["naive"] / n_jobs
    print(f"per job: {per_job:,.0f} input tokens naive, {total['cache'] / n_jobs:,.0f} with the cache "
          f"({args.cases} cases; scales linearly with cases)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
