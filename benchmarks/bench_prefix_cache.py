"""Prompt-cache-aware requests (issue 22 item 1): cached share of input tokens, warm versus naive order.

Every question of a view shares the request prefix system, tools, view (the question comes
last). A provider's automatic prefix cache serves a prefix only once a *completed* request
wrote it, so questions sent together all pay for it; with ``model.warm_prefix`` the pipeline
sends a view's first question alone and the others once its answer is in.

Runs the same job twice (``model=openai`` against ``tests/fake_openai.py --prefix-cache``, which
counts a request's leading tokens as cached when a completed earlier request had the same ones,
from 1,024 tokens on, in blocks of 128), ``model.warm_prefix=false`` then ``true``, response
cache off, and prints side by side: answer calls, input tokens, cached input tokens and their
share, the job's wall time, and the cost at an example price table (USD per million tokens:
input 0.15, cached 0.075, output 0.60). Target: >= 70% of input tokens cached with warm
prefixes on the shipped coding sample, wall time within 10% of the naive order.

    uv run python benchmarks/bench_prefix_cache.py [--data sample|dev|FILE] [--latency 0.2]
        [--concurrency 16] [--cases N]
"""

from __future__ import annotations

import os

os.environ.setdefault("TQDM_DISABLE", "1")

import argparse
import json
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
    args = parser.parse_args()
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        with fake_server("--latency", "0") as (url, _stats):  # imports and first-call set-up, not timed
            run_job(url, args.data, False, Path(tmp) / "warm-up", args.concurrency, 1)
        for warm in (False, True):
            with fake_server("--latency", str(args.latency), "--prefix-cache") as (url, _stats):
                rows["warm" if warm else "naive"] = run_job(url, args.data, warm, Path(tmp) / str(warm),
                                                            args.concurrency, args.cases)
    print(f"data={args.data} latency={args.latency}s concurrency={args.concurrency}")
    print(f"{'order':<8}{'answer calls':>14}{'input tok':>12}{'cached tok':>12}{'cached %':>10}{'wall s':>9}"
          f"{'cost $':>10}")
    shares = {}
    for name, metrics in rows.items():
        answer = metrics["model_calls"]["answer"]
        shares[name] = answer["cached_tokens"] / max(1, answer["input_tokens"])
        print(f"{name:<8}{answer['calls']:>14}{answer['input_tokens']:>12}{answer['cached_tokens']:>12}"
              f"{100 * shares[name]:>9.1f}%{metrics['wall_s']:>9.2f}{metrics['cost_usd'] or 0:>10.4f}")
    naive, warm = rows["naive"], rows["warm"]
    print(json.dumps({"cached_share": {k: round(v, 3) for k, v in shares.items()},
                      "wall_ratio_warm_over_naive": round(warm["wall_s"] / naive["wall_s"], 3),
                      "cost_ratio_warm_over_naive": round((warm["cost_usd"] or 0) / max(1e-12, naive["cost_usd"] or 0), 3),
                      "accuracy": {"naive": naive["accuracy"], "warm": warm["accuracy"]}}))


if __name__ == "__main__":
    main()
