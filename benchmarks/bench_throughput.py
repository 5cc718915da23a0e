"""Throughput under a rate limit: fixed concurrency 4, 16, 64 and ``auto`` on the same job.

Each configuration runs the same real job (``bench.runner.run``: ``dataset=local`` with the
rows of ``dev.parquet`` repeated, ``arm=full``, ``model=openai`` and ``judge=llm`` on the
same endpoint, response cache off, so one answering and one judging call per question)
against its own fresh ``tests/support/fake_openai.py`` process that answers every chat request
after ``--latency`` seconds (1 s) and enforces a token bucket: ``--rate`` requests per
second (R), ``--burst`` requests (B); a request beyond it is refused at once with HTTP
429, ``Retry-After`` and ``retry-after-ms``. Everything else is the shipped default
(retries with backoff, ``max_retries=6``). ``auto`` is ``model.max_concurrency=auto``
(the adaptive limiter, shared by the answer and judge calls to the endpoint, up to the
cap of 64); a number N fixes ``model.max_concurrency`` and ``judge.max_concurrency`` at N.

Printed per configuration: the calls that succeeded, the requests the server saw and
the share it refused with 429, the answering and judging phase's wall time, the
achieved calls per second and its ratio to R, answers that failed for good, and the
limit over the job (``metrics.json`` ``concurrency``). ``ideal`` is the best any client
can do on this server: the bucket admits B requests at once and R per second after
that, and the last reply takes one latency, so N calls take at least (N - B) / R + latency.
With R x latency = 20, concurrency 20 is right; 4 is far below, 64 far above.

    uv run python benchmarks/bench_throughput.py [--rate 20] [--burst 10] [--latency 1.0]
        [--cases 56] [--configs 4,16,64,auto] [--data dev|sample|FILE]
"""

from __future__ import annotations

import os

os.environ.setdefault("TQDM_DISABLE", "1")  # before tqdm is imported: no progress bars here

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import compose, fake_server, make_cases_file, quiet, resolve_data  # noqa: E402


def trace_text(trace: list[list[float]], points: int = 12) -> str:
    """``limit@seconds`` at up to ``points`` changes, evenly picked (first and last kept)."""
    if len(trace) > points:
        step = (len(trace) - 1) / (points - 1)
        trace = [trace[round(i * step)] for i in range(points)]
    return " ".join(f"{int(limit)}@{t:.1f}" for t, limit in trace)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rate", type=float, default=20.0, help="R: requests per second the server admits")
    parser.add_argument("--burst", type=float, default=10.0, help="B: token bucket size (requests admitted at once)")
    parser.add_argument("--latency", type=float, default=1.0, help="seconds per reply")
    parser.add_argument("--cases", type=int, default=56, help="cases in the job (dev.parquet: ~2.7 questions each)")
    parser.add_argument("--configs", default="4,16,64,auto", help="comma list of max_concurrency values")
    parser.add_argument("--data", default="dev",
                        help="rows to repeat: dev (tests/data/real/dev.parquet), sample (shipped) or a FILE")
    args = parser.parse_args(argv)
    data_path = resolve_data(args.data)
    if not data_path.exists():
        print(f"error: dataset not found: {data_path} (pass --data FILE)", file=sys.stderr)
        return 2
    quiet()
    import bench.runner as runner
    from bench.runner.pipeline import Pipeline

    phase: dict[str, float] = {}
    original = Pipeline.run_phase

    def timed_run_arm(self, *a, **k):
        start = time.perf_counter()
        try:
            return original(self, *a, **k)
        finally:
            phase["s"] = time.perf_counter() - start

    Pipeline.run_phase = timed_run_arm
    configs = [c.strip() for c in args.configs.split(",") if c.strip()]
    server_args = ["--latency", str(args.latency), "--approx-tokens", "--lifetime", "600"]
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench_throughput_") as tmp:
        data = make_cases_file(data_path, args.cases, Path(tmp))

        def job(url: str, level: str, name: str, *extra: str):
            return runner_cfg(url, level, name, data, tmp, *extra)

        with fake_server(*server_args) as (url, _):  # imports and first connections: not measured
            runner.run(job(url, "4", "warmup", "dataset.limit=2"))
        load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
        print(f"token bucket R={args.rate:g}/s, B={args.burst:g}; {1000 * args.latency:.0f} ms per reply; "
              f"{args.cases} cases from {data_path.name} (answer + LLM judge calls); "
              f"{os.cpu_count()} CPUs, load average {load}\n")
        for level in configs:
            with fake_server(*server_args, "--rate-limit", str(args.rate), "--burst", str(args.burst)) as (url, stats):
                start = time.perf_counter()
                metrics = runner.run(job(url, level, f"job_{level}"))
                wall = time.perf_counter() - start
            total = metrics["model_calls"].get("total", {})
            ok = int(total.get("calls", 0)) - int(total.get("failed", 0))
            requests = int(stats.get("requests", 0))
            refused = int(stats.get("outcome_ratelimit", 0))
            limit = next(iter(metrics.get("concurrency", {}).values()), {})
            rows.append({"config": level, "calls": ok, "requests": requests, "refused": refused,
                         "phase_s": phase["s"], "wall_s": wall, "errors": metrics.get("n_errors", 0),
                         "peak": stats.get("peak_concurrency", 0), "limit": limit})
        Pipeline.run_phase = original

    header = (f"{'config':>7}{'calls':>7}{'requests':>10}{'429s':>7}{'refused':>9}{'phase s':>9}{'calls/s':>9}"
              f"{'/ R':>7}{'errors':>8}  limit (start -> final, min-max, decreases)")
    print(header)
    print("-" * len(header))
    for row in rows:
        rate = row["calls"] / row["phase_s"]
        limit = row["limit"]
        if limit.get("mode") == "auto":
            text = (f"{limit['start']} -> {limit['final']}, {limit['min']}-{limit['max']}, "
                    f"{limit['decreases']} decreases")
        else:
            text = f"fixed {row['config']}"
        print(f"{row['config']:>7}{row['calls']:>7}{row['requests']:>10}{row['refused']:>7}"
              f"{row['refused'] / max(1, row['requests']):>9.1%}{row['phase_s']:>9.1f}{rate:>9.1f}"
              f"{rate / args.rate:>7.0%}{row['errors']:>8}  {text}")
    calls = max((row["calls"] for row in rows), default=0)
    ideal_s = max(0.0, calls - args.burst) / args.rate + args.latency
    print(f"\nideal ({calls} calls on this server, any client): {ideal_s:.1f} s, {calls / ideal_s:.1f} calls/s = "
          f"{calls / ideal_s / args.rate:.0%} of R")
    for row in rows:
        if row["limit"].get("mode") == "auto":
            print(f"auto: limit trace (limit@seconds) {trace_text(row['limit']['trace'])}; "
                  f"{row['limit']['n_429']} x 429 seen by the limiter, {row['limit']['pauses']} Retry-After pauses "
                  f"({row['limit']['pause_s']:.2f} s)")
    print("\n" + json.dumps({"rate": args.rate, "burst": args.burst, "latency": args.latency,
                             "rows": [{k: v for k, v in r.items() if k != "limit"} for r in rows]}))
    return 0


def runner_cfg(url: str, level: str, name: str, data: Path, tmp: str, *extra: str):
    """The job's config: ``max_concurrency`` of the model and the judge set to ``level``."""
    return compose([
        "dataset=local", f"dataset.path={data}", "arm=full", "model=openai", "judge=llm",
        f"model.base_url={url}", "model.api_key_env=null", f"model.max_concurrency={level}",
        f"judge.max_concurrency={level}", "cache.enabled=false", f"output_dir={tmp}/{name}",
        "tracing.langfuse=false", *extra,
    ])


if __name__ == "__main__":
    sys.exit(main())
