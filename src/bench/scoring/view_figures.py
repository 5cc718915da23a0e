"""What a job's views say beyond tokens kept: what an ``arm.budget`` kept against its target, whether its
summaries are the extractive stand-in's (a lower bound), and natural-trigger compaction (compactions
per case, accuracy by compactions, the generation its evidence was last seen in).

    budget = budget_metrics(views)           # None without arm.budget
    bound = lower_bound(views, policy)       # None unless the stand-in summarized
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from bench.scoring.question_groups import rate, verdict_block

__all__ = ["budget_metrics", "lower_bound", "LOWER_BOUND_NOTE", "compaction_metrics"]


def budget_metrics(views: list[dict[str, Any]]) -> dict[str, Any] | None:
    """What an arm with ``arm.budget`` kept against its target (``views.jsonl`` ``budget``), or None
    without a budget: the target and realized shares of each case's history tokens (means over the
    views), the median realized / target, and the views more than 20% over their target."""
    records = [(v, v["budget"]) for v in views if isinstance(v.get("budget"), dict)]
    if not records:
        return None
    ratios = sorted(float(b["realized_over_target"]) for _, b in records if b.get("realized_over_target") is not None)
    over = [v["case_id"] for v, b in records if b.get("over")]
    first = records[0][1]
    return {
        "value": first.get("value"), "kind": first.get("kind"), "n_views": len(records),
        "target_share": rate(sum(min(b["target_tokens"], v["full_tokens"]) / v["full_tokens"]
                                  for v, b in records if v["full_tokens"]), len(records)),
        "realized_share": rate(sum(v["kept_tokens"] / v["full_tokens"] for v, _ in records if v["full_tokens"]),
                                len(records)),
        "mean_target_tokens": round(sum(b["target_tokens"] for _, b in records) / len(records), 1),
        "mean_realized_tokens": round(sum(v["kept_tokens"] for v, _ in records) / len(records), 1),
        "median_realized_over_target": round(ratios[len(ratios) // 2] if len(ratios) % 2 else
                                             (ratios[len(ratios) // 2 - 1] + ratios[len(ratios) // 2]) / 2, 4)
        if ratios else None,
        "n_over": len(over),
        "over_cases": over[:20],  # the first 20; every view's record says "over"
    }


LOWER_BOUND_NOTE = ("summaries written by the offline extractive stand-in (no model): what the view keeps through "
                    "them is a lower bound of what a model's summary would keep")


def lower_bound(views: list[dict[str, Any]], policy: dict[str, Any]) -> dict[str, Any] | None:
    """A job whose views hold summaries of the extractive stand-in (the arm's declaration says its
    summarizer calls no model): its figures are a lower bound, never ranked against exact ones."""
    with_summary = sum(1 for v in views if v.get("summarizer_calls"))
    if not policy.get("stand_in_summary") or not with_summary:
        return None
    return {"summarizer": policy.get("summarizer"), "views_with_summary": with_summary, "note": LOWER_BOUND_NOTE}


def compaction_metrics(questions: dict[str, dict[str, Any]], case_of: dict[str, str], views: list[dict[str, Any]],
                        flags: dict[str, dict[str, Any]], verdict_of: dict[str, str]) -> dict[str, Any]:
    """Natural-trigger compaction (``info.compactions`` in the views): compactions per case,
    accuracy by the number of compactions its case went through, and per headline question
    the generation its evidence was last seen in (``never``: not even in the full history)."""
    count = {v["case_id"]: len((v.get("info") or {}).get("compactions") or []) for v in views}
    by_count: dict[int, list[str]] = defaultdict(list)
    for qid in questions:
        if case_of.get(qid) in count:
            by_count[count[case_of[qid]]].append(qid)
    last_seen = Counter(
        "never" if flags[q].get("generation") is None else str(flags[q]["generation"])
        for q in questions if q in flags and "generation" in flags[q])
    survived = [q for q in questions if q in flags and "generation" in flags[q]]
    return {
        "compactions_per_case": round(sum(count.values()) / len(count), 3) if count else None,
        "compactions_max": max(count.values(), default=0),
        "by_compactions": {str(n): verdict_block(qids, verdict_of) for n, qids in sorted(by_count.items())},
        "evidence_last_seen_generation": dict(sorted(last_seen.items())),
        "evidence_survived_compactions": rate(
            sum(1 for q in survived if flags[q]["generation"] is not None
                and flags[q]["generation"] == count.get(case_of.get(q))), len(survived)),
    }
