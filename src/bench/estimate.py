"""What a job or a sweep will cost, before any model call (issue 22 item 3).

    uv run python -m bench.estimate [--rate 5] [--latency 2] [--steps 1.5] [-m] <the job's overrides>
    uv run python -m bench.estimate -m +experiment=mechanisms model=openai 'model.price={input: 0.15, output: 0.6}'

Per job of the config (``-m``: every job of the sweep, expanded as Hydra's basic sweeper does:
the experiment's ``hydra.sweeper.params``, then the command line's sweeps), from the real cases,
views and questions (views are built offline: a model summarizer's calls are counted, its input is
the history the offline summarizer was given):

- **calls** of each kind: answers (``--steps`` model calls per question; the tool loop's first
  request is the one measured), the full-history reference of a non-full arm, LLM judge calls,
  summary calls;
- **input tokens** (system prompt, tools, the view, the question) and **output tokens** (a typical
  answer of the question's type, its ``answer_tokens``; a judge's verdict; a summary);
- **cached share**: under ``model.warm_prefix`` every question of a view after the first reads the
  view's prefix from a provider's prefix cache (from 1,024 tokens on);
- **cost** at the price tables (``model.price``, ``judge.price``, ``summarizer.price``), with and
  without the batch discount; ``null`` where a table is missing;
- **wall time** at ``--rate`` requests per second, or at the model's concurrency and ``--latency``.

An arm whose views come from a provider's server (``openai_compact``, ``anthropic_compact``,
``anthropic_clear``) cannot be built offline: its views are counted as the whole history (an upper
bound of what its answers read) and one view call per case sending the history, priced as the model.

Nothing is sent: the command needs no key and no server. Exit 2 with one line on a bad override.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import sys
from collections import Counter
from typing import Any

from bench.core.errors import console_script

__all__ = ["estimate_job", "estimate_jobs", "sweep_overrides", "main"]

def sweep_overrides(args: list[str], multirun: bool) -> list[list[str]]:
    """The override lists of the jobs: ``args`` alone, or the product of the sweep's parameters."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    from bench.config.checks import compose, mapping

    if not multirun:
        return [list(args)]
    cfg = compose([a for a in args if not _is_sweep(a)], return_hydra_config=True)
    params = mapping(cfg.hydra.sweeper.params, "hydra.sweeper.params", resolve=False) if cfg.hydra.sweeper.get(
        "params") else {}
    arguments = [f"{key}={value}" for key, value in params.items()] + list(args)
    choices: dict[str, list[str]] = {}
    for override in OverridesParser.create().parse_overrides(arguments):
        key = override.get_key_element()
        values = (list(override.sweep_string_iterator()) if override.is_sweep_override()
                  else [override.get_value_element_as_str()])
        choices[key] = [f"{key}={value}" for value in values]  # a later override of a key replaces it
    return [list(job) for job in itertools.product(*choices.values())]


def _is_sweep(arg: str) -> bool:
    from hydra.core.override_parser.overrides_parser import OverridesParser

    try:
        return OverridesParser.create().parse_overrides([arg])[0].is_sweep_override()
    except Exception:  # noqa: BLE001 - the compose below reports a bad override
        return False


def _price(node: Any, role: str) -> Any:
    from bench.llm.price import Price

    return Price.of(node.get("price") if node is not None and hasattr(node, "get") else None, role)


def _is_llm_judge(node: Any) -> bool:
    return node is not None and hasattr(node, "get") and "LLMJudge" in str(node.get("_target_", ""))


def _seedless(overrides: list[str]) -> tuple[str, ...]:
    """The overrides without the seeds (``seed=``, ``model.seed=`` ...): the seeds feed the models'
    sampling only, never the cases, views or questions an estimate counts, so jobs that differ only
    by seed have one estimate."""
    return tuple(o for o in overrides if o.partition("=")[0].lstrip("+~").rpartition(".")[2] != "seed")


def estimate_jobs(jobs: list[list[str]], steps: float = 1.0) -> list[dict[str, Any]]:
    """:func:`estimate_job` for each job's overrides, computed once for jobs that differ only by seed."""
    done: dict[tuple[str, ...], dict[str, Any]] = {}
    out = []
    for overrides in jobs:
        key = _seedless(overrides)
        if key not in done:
            done[key] = estimate_job(list(key), steps)
        out.append({**done[key], "overrides": overrides})
    return out


def _bad_number(name: str, value: float | None, *, at_least: float, strict: bool) -> str | None:
    """The refusal of ``--name value`` unless it is a finite number above (``strict``) or from ``at_least``."""
    if value is None:
        return None
    if not math.isfinite(value) or value < at_least or (strict and value == at_least):
        bound = f"> {at_least:g}" if strict else f">= {at_least:g}"
        return f"--{name} must be a finite number {bound}, got {value!r}"
    return None


def estimate_job(overrides: list[str], steps: float = 1.0) -> dict[str, Any]:
    """Calls, tokens, cached share and cost of the job ``python -m bench.main <overrides>`` would run."""
    from bench.config.arms import build_policy
    from bench.config.checks import compose
    from bench.config.job_cases import load_job_cases
    from bench.core.components import calls_model
    from bench.policies import FullHistory
    from bench.runner.costing import job_estimate
    from bench.text.tokens import TokenCounter

    cfg = compose(overrides)
    # the LLM judges: the judge, or a panel's LLM members (each makes a call per answer, at its own price)
    members = cfg.judge.get("members") or {}
    llm_judges = [(f"judge.members.{name}", node) for name, node in members.items() if _is_llm_judge(node)] \
        if members else ([("judge", cfg.judge)] if _is_llm_judge(cfg.judge) else [])
    prices = {"answer": _price(cfg.model, "model"), "reference": _price(cfg.model, "model"),
              "judge": [_price(node, role) for role, node in llm_judges],
              "summarizer": _price(cfg.get("summarizer"), "summarizer")}
    counter = TokenCounter(cfg.tokenizer.encoding)  # the prices are checked first: a refusal reads no row
    cases = load_job_cases(cfg, counter).cases
    if cfg.arm.get("provider"):  # its views come from the provider's server: the history, one call each
        full = {case.case_id: counter.count_messages(case.messages) for case in cases}
        views: list[dict[str, Any]] = [{"case_id": c.case_id, "kept_tokens": full[c.case_id], "full_tokens": full[c.case_id],
                  "guidance": None, "handles": [], "summarizer_calls": 1, "view_call_tokens": full[c.case_id]}
                 for c in cases if c.questions]
        prices["summarizer"] = prices["answer"]  # the view calls are the answering model's
        reference, summarized = True, True
    else:
        summarizes = cfg.get("summarizer") is not None and cfg.summarizer.get("_target_", "").endswith("LLMSummarizer")
        offline = compose([*overrides, "summarizer=offline"]) if summarizes else cfg  # views built without a call
        policy = build_policy(offline, counter)
        # what a job's views.jsonl would record of each view, the part the estimate reads (bench.runner.costing)
        views = [{"case_id": case.case_id, "kept_tokens": view.kept_tokens, "full_tokens": view.full_tokens,
                  "guidance": view.guidance, "handles": view.handles, "summarizer_calls": view.summarizer_calls}
                 for case in cases if case.questions for view in (policy(case),)]
        reference, summarized = not isinstance(policy, FullHistory), summarizes or calls_model(policy)
    judged = len(llm_judges)
    estimate = job_estimate(cases, views, counter, prices, warm=bool(cfg.model.get("warm_prefix", False)),
                            judged=judged, reference=reference, summarized=summarized, steps=steps)
    out: dict[str, Any] = {"overrides": overrides, "n_cases": len(cases),
                           "n_questions": sum(len(c.questions) for c in cases), **estimate}
    concurrency = cfg.model.get("max_concurrency")
    out["concurrency"] = concurrency if isinstance(concurrency, int) else cfg.model.get("max_concurrency_cap")
    return out


@console_script
def main(argv: list[str] | None = None) -> int:
    from bench.core.errors import BenchError, program

    parser = argparse.ArgumentParser(prog=program("bench.estimate"), description=__doc__.split("\n\n")[0])
    parser.add_argument("-m", "--multirun", action="store_true", help="every job of the sweep")
    parser.add_argument("--rate", type=float, default=None, help="requests per second the endpoint allows")
    parser.add_argument("--latency", type=float, default=2.0, help="seconds per request (with the concurrency)")
    parser.add_argument("--steps", type=float, default=1.0, help="model calls per question (the agent's loop)")
    parser.add_argument("--json", action="store_true", help="one JSON object per job, then the total")
    parser.add_argument("overrides", nargs="*", help="Hydra overrides, as for python -m bench.main")
    args = parser.parse_args(argv)
    from bench.core import redact

    refusal = redact.guard_command_line(args.overrides)  # a key on the command line refused; URLs' secrets never printed
    if refusal:
        print(f"error: {refusal}", file=sys.stderr)
        return 2

    def say(text: str, **kwargs: Any) -> None:  # every line printed scrubbed: a job's label is its overrides
        print(redact.scrub(text), **kwargs)

    refusal = (_bad_number("steps", args.steps, at_least=1.0, strict=False)  # at least the call that answers
               or _bad_number("rate", args.rate, at_least=0.0, strict=True)
               or _bad_number("latency", args.latency, at_least=0.0, strict=True))
    if refusal:
        say(f"error: {refusal}", file=sys.stderr)
        return 2
    try:
        jobs = estimate_jobs(sweep_overrides(args.overrides, args.multirun), args.steps)
    except (BenchError, Exception) as err:  # noqa: BLE001 - a bad override or config: one line
        from bench.cli.argv import config_error_line

        say(f"error: {config_error_line(err, args.overrides)}", file=sys.stderr)
        return 2
    grand: Counter[str] = Counter()
    cost: float | None = 0.0
    batch: float | None = 0.0
    for job in jobs:
        total = job["total"]
        grand.update({k: total.get(k, 0) for k in ("calls", "input_tokens", "cached_tokens", "output_tokens")})
        cost = None if cost is None or total["cost_usd"] is None else cost + total["cost_usd"]
        batch = None if batch is None or total["batch_cost_usd"] is None else batch + total["batch_cost_usd"]
        if args.json:
            say(json.dumps(job))
        else:
            usd = "n/a" if total["cost_usd"] is None else f"${total['cost_usd']:.2f} (batch ${total['batch_cost_usd']:.2f})"
            say(f"{' '.join(job['overrides']) or '(defaults)'}: {job['n_cases']} cases, {job['n_questions']} questions; "
                  f"{total.get('calls', 0):.0f} calls, {total.get('input_tokens', 0):,} input tokens "
                  f"({100 * (total['cached_share'] or 0):.0f}% cached), {total.get('output_tokens', 0):,} output; {usd}")
    concurrency = max(1, int(jobs[0]["concurrency"] or 1)) if jobs else 1
    seconds = grand["calls"] / args.rate if args.rate else grand["calls"] * args.latency / concurrency
    summary = {"jobs": len(jobs), **dict(grand),
               "cached_share": round(grand["cached_tokens"] / grand["input_tokens"], 3) if grand["input_tokens"] else None,
               "cost_usd": round(cost, 2) if cost is not None else None,
               "batch_cost_usd": round(batch, 2) if batch is not None else None,
               "wall_time_h": round(seconds / 3600, 3),
               "wall_time_at": f"{args.rate} requests/s" if args.rate else f"{concurrency} in flight x {args.latency}s"}
    say(json.dumps(summary) if args.json else
          f"in all: {summary['jobs']} job(s), {grand['calls']:.0f} calls, {grand['input_tokens']:,} input tokens "
          f"({100 * (summary['cached_share'] or 0):.0f}% cached), {grand['output_tokens']:,} output; cost "
          f"{'n/a (no price table)' if cost is None else f'${cost:.2f}'}"
          f"{'' if batch is None else f' (batch ${batch:.2f})'}; about "
          f"{f'{seconds / 3600:.1f} h' if seconds >= 3600 else f'{seconds / 60:.1f} min'} at "
          f"{summary['wall_time_at']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
