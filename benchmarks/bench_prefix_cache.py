"""Prompt-cache-aware requests (issue 22 item 1): cached share of input tokens, warm versus naive order.

Every question of a view shares the request prefix system, tools, view (the question comes
last). A provider's automatic prefix cache serves a prefix only once a *completed* request
wrote it, so questions sent together all pay for it; with ``model.warm_prefix`` the pipeline
sends a view's first question alone and the others once its answer is in.

Runs the same job twice (``model=openai`` against ``tests/support/fake_openai.py --prefix-cache``, which
counts a request's leading tokens as cached when a completed earlier request had the same ones,
from 1,024 tokens on, in blocks of 128), ``model.warm_prefix=false`` then ``true``, response
cache off, and prints side by side: answer calls, input tokens, cached input tokens and their
share, the job's wall time, and the cost at an example price table (USD per million tokens:
input 0.15, cached 0.075, output 0.60). Target: >= 70% of input tokens cached with warm
prefixes on the shipped coding sample, wall time within 10% of the naive order.

The jobs are short (about a second on the sample), so ``--repeats`` runs of each order alternate
(naive, warm, naive, ...), each against a fresh server (an empty prefix cache), and the wall
time is their median (the spread is printed too); the token counts of the warm order do not
vary between runs, the naive order's cached share does (which requests happen to complete first).

    uv run python benchmarks/bench_prefix_cache.py [--data sample|dev|FILE] [--latency 0.2]
        [--concurrency 16] [--cases N] [--repeats 5]
"""

from __future__ import annotations

import os

os.environ.setdefault("TQDM_DISABLE", "1")

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from _common import compose, fake_server, resolve_data

PRICE = "{input: 0.15, cached_input: 0.075, output: 0.6}"


def run_job(base_url: str, data: str, warm: bool, out: Path, concurrency: int, cases: int | None) -> dict:
    from bench.runner import run

    source = [] if data == "sample" else ["dataset=local", f"dataset.path={resolve_data(data)}"]
    overrides = [*source, "model=openai", f"model.base_url={base_url}", "model.api_key_env=null",
                 "model.name=fake-model", f"model.max_concurrency={concurrency}", f"model.warm_prefix={str(warm).lower()}",
                 f"model.price={PRICE}", "judge=exact", "cache.enabled=false", f"output_dir={out}"]
    if cases:
        overrides.append(f"dataset.limit={cases}")
    started = time.perf_counter()
    metrics = run(compose(overrides))
    metrics["wall_s"] = time.perf_counter() - started
    return metrics


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default="sample", help="sample (shipped coding sample) | dev | FILE")
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per reply of the fake server")
    parser.add_argument("--concurrency", type=int, default=16, help="requests in flight")
    parser.add_argument("--cases", type=int, default=None, help="at most this many cases")
    parser.add_argument("--repeats", type=int, default=5, help="runs of each order, alternating; wall time: their median")
    args = parser.parse_args()
    runs: dict[str, list[dict]] = {"naive": [], "warm": []}
    with tempfile.TemporaryDirectory() as tmp:
        with fake_server("--latency", "0") as (url, _stats):  # imports and first-call set-up, not timed
            run_job(url, args.data, False, Path(tmp) / "warm-up", args.concurrency, 1)
        for repeat in range(max(1, args.repeats)):
            for warm in (False, True):
                with fake_server("--latency", str(args.latency), "--prefix-cache") as (url, _stats):
                    runs["warm" if warm else "naive"].append(
                        run_job(url, args.data, warm, Path(tmp) / f"{warm}-{repeat}", args.concurrency, args.cases))
    print(f"data={args.data} latency={args.latency}s concurrency={args.concurrency} repeats={args.repeats}")
    print(f"{'order':<8}{'answer calls':>14}{'input tok':>12}{'cached tok':>12}{'cached %':>10}{'wall s':>9}"
          f"{'min-max':>13}{'cost $':>10}")
    shares, walls, costs = {}, {}, {}
    for name, metrics_list in runs.items():
        answer = [m["model_calls"]["answer"] for m in metrics_list]
        cached = statistics.median(a["cached_tokens"] for a in answer)
        shares[name] = cached / max(1, answer[0]["input_tokens"])
        times = [m["wall_s"] for m in metrics_list]
        walls[name] = statistics.median(times)
        costs[name] = statistics.median(m["cost_usd"] or 0 for m in metrics_list)
        print(f"{name:<8}{answer[0]['calls']:>14}{answer[0]['input_tokens']:>12}{cached:>12.0f}"
              f"{100 * shares[name]:>9.1f}%{walls[name]:>9.2f}{f'{min(times):.2f}-{max(times):.2f}':>13}"
              f"{costs[name]:>10.4f}")
    print(json.dumps({"cached_share": {k: round(v, 3) for k, v in shares.items()},
                      "wall_ratio_warm_over_naive": round(walls["warm"] / walls["naive"], 3),
                      "cost_ratio_warm_over_naive": round(costs["warm"] / max(1e-12, costs["naive"]), 3),
                      "accuracy": {k: v[0]["accuracy"] for k, v in runs.items()}}))


if __name__ == "__main__":
    main()
