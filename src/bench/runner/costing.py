"""The estimate of a job's model calls, tokens and cost from its views (``bench.estimate``, and the
job's own ``metrics.json`` ``estimate``, computed the same way from the views it built, so a report
can show the estimate beside what the job spent).

    kinds = new_tally()
    tally(kinds, "answer", case, view.kept_tokens, view.guidance, bool(view.store), counter, warm=True)
    priced(kinds, prices)     # {"kinds": ..., "total": {calls, input_tokens, cached_tokens, ..., cost_usd}}
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Iterable
from types import SimpleNamespace
from typing import Any

from bench.answering.request import first_messages, tools_for
from bench.questions import REGISTRY
from bench.store.schema import Case
from bench.text.tokens import TokenCounter

__all__ = ["OUTPUT_TOKENS", "answer_tokens", "JUDGE_INPUT", "JUDGE_OUTPUT", "SUMMARY_OUTPUT", "MIN_CACHED", "new_tally", "tally",
           "tally_judge", "priced", "job_estimate"]

# A typical answer's output tokens (a typed JSON answer, a sentence or two of prose): each type's own
# (``answer_tokens``), this for a type that declares none
OUTPUT_TOKENS = 60
JUDGE_INPUT, JUDGE_OUTPUT, SUMMARY_OUTPUT, MIN_CACHED = 500, 40, 1500, 1024
KINDS = ("answer", "reference", "judge", "summarizer")


# Per kind of call: the expected calls and tokens (floats under a fractional --steps; a count nothing
# was added to stays the integer 0).
Tally = dict[str, defaultdict[str, float]]


def answer_tokens(qtype: str) -> int:
    """A typical answer's output tokens for a question type (its ``answer_tokens``, else OUTPUT_TOKENS)."""
    return int(getattr(REGISTRY.get(qtype), "answer_tokens", OUTPUT_TOKENS))


def new_tally() -> Tally:
    return {kind: defaultdict(int) for kind in KINDS}


def tally(kinds: Tally, kind: str, case: Case, kept_tokens: int, guidance: str | None,
          has_store: bool, counter: TokenCounter, *, warm: bool = False, steps: float = 1.0) -> None:
    """Add the answer requests of ``case``'s questions on a view of ``kept_tokens`` (the view's messages):
    system prompt (and guidance), tools, the view, the question; under warm prefixes every question
    after the view's first reads the shared prefix from the provider's cache (from 1,024 tokens on)."""
    view = SimpleNamespace(guidance=guidance, messages=[], store={"": ""} if has_store else {})  # its tokens given
    tools = counter.count_text(json.dumps(tools_for(case, view), sort_keys=True))
    if not case.questions:
        return
    row = kinds[kind]
    system = first_messages(case, view, case.questions[0])[0]  # the request as the agent sends it, view left out
    head = counter.count_messages([system]) + tools + kept_tokens  # what every question of the view shares
    for order, question in enumerate(case.questions):
        prompt = head + counter.count_messages(first_messages(case, view, question)[-1:])
        cached = head if warm and order > 0 and head >= MIN_CACHED else 0
        row["calls"] += steps
        row["input_tokens"] += prompt * steps
        row["cached_tokens"] += cached + (prompt * (steps - 1) if steps > 1 and prompt >= MIN_CACHED else 0)
        row["output_tokens"] += answer_tokens(question.type) * steps


def tally_judge(kinds: Tally, case: Case, counter: TokenCounter, calls: int = 1) -> None:
    """An LLM judge's call per question (``calls``: one per LLM member of a panel, each on the same
    prompt): the rubric prompt (about JUDGE_INPUT tokens) and the reference."""
    for question in case.questions:
        kinds["judge"]["calls"] += calls
        kinds["judge"]["input_tokens"] += calls * (JUDGE_INPUT + counter.count_text(json.dumps(question.reference,
                                                                                               default=str)))
        kinds["judge"]["output_tokens"] += calls * JUDGE_OUTPUT


def _cost(price: Any, entry: dict[str, Any], batch: bool = False) -> float | None:
    """The cost of a kind's tokens at ``price``: a Price, or a list of them (a judge panel's LLM members
    each make an equal share of the calls, on the same tokens: the mean of their costs over all the
    tokens, costs being linear in tokens); None when a table is missing."""
    tables = price if isinstance(price, list) else [price]
    if not tables or any(t is None for t in tables):
        return None
    return sum(t.cost(entry.get("input_tokens", 0), entry.get("cached_tokens", 0), entry.get("output_tokens", 0),
                      batch=batch) for t in tables) / len(tables)


def priced(kinds: Tally, prices: dict[str, Any]) -> dict[str, Any]:
    """Per kind and in total: calls, tokens, cached share and cost at ``prices`` (kind -> Price, a list of
    Price whose costs add up, or None), with and without the batch discount (None where a kind has no
    price table)."""
    out: dict[str, Any] = {"kinds": {}}
    total: Counter[str] = Counter()
    cost = batch_cost = 0.0
    every_priced = True
    for kind, row in kinds.items():
        if not row["calls"]:
            continue
        # every count present (a kind whose calls read no cache, the summarizer's, has no cached tokens)
        entry: dict[str, Any] = {"calls": 0, "input_tokens": 0, "cached_tokens": 0, "output_tokens": 0,
                                 **{k: round(v) for k, v in row.items()}}
        full, discounted = _cost(prices.get(kind), entry), _cost(prices.get(kind), entry, batch=True)
        if full is None or discounted is None:
            entry["cost_usd"] = entry["batch_cost_usd"] = None
            every_priced = False
        else:
            entry["cost_usd"], entry["batch_cost_usd"] = round(full, 6), round(discounted, 6)
            cost += entry["cost_usd"]
            batch_cost += entry["batch_cost_usd"]
        out["kinds"][kind] = entry
        total.update({k: v for k, v in entry.items() if k in ("calls", "input_tokens", "cached_tokens", "output_tokens")})
    out["total"] = {**dict(total), "cached_share": round(total["cached_tokens"] / total["input_tokens"], 3)
                    if total["input_tokens"] else None,
                    "cost_usd": round(cost, 6) if every_priced and total["calls"] else None,
                    "batch_cost_usd": round(batch_cost, 6) if every_priced and total["calls"] else None}
    return out


def job_estimate(cases: Iterable[Case], views: list[dict[str, Any]], counter: TokenCounter, prices: dict[str, Any], *,
                 warm: bool, judged: bool | int, reference: bool, summarized: bool, steps: float = 1.0) -> dict[str, Any]:
    """The estimate of a job from its views (``views.jsonl`` records, or ``bench.estimate``'s views built
    offline): one tally for both, so the report's estimate is the one the command prints. ``judged``: the
    LLM judge calls per answer (a panel: one per LLM member; False/0: no LLM judge); ``prices["judge"]``
    is then a list of the members' tables."""
    kinds = new_tally()
    by_case = {v["case_id"]: v for v in views}
    for case in cases:
        view = by_case.get(case.case_id)
        if view is None or not case.questions:
            continue
        tally(kinds, "answer", case, int(view["kept_tokens"]), view.get("guidance"), bool(view.get("handles")),
              counter, warm=warm, steps=steps)
        if summarized and view.get("summarizer_calls"):
            calls = int(view["summarizer_calls"])
            kinds["summarizer"]["calls"] += calls
            # what a summary reads: the history it replaces (a provider arm's view call: the history it sends)
            read = view.get("view_call_tokens", max(0, int(view["full_tokens"]) - int(view["kept_tokens"])))
            kinds["summarizer"]["input_tokens"] += calls * int(read)
            kinds["summarizer"]["output_tokens"] += calls * SUMMARY_OUTPUT
        if reference:
            tally(kinds, "reference", case, int(view["full_tokens"]), None, False, counter, warm=warm, steps=steps)
        for _ in range(2 if reference else 1) if judged else ():
            tally_judge(kinds, case, counter, calls=int(judged))
    return priced(kinds, prices)
