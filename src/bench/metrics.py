"""Job metrics from the stored records (so a resumed job and a report agree).

    metrics = compute_metrics(cases, views, answers, scores)
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from bench.schema import VERDICTS

__all__ = ["compute_metrics"]


def _rate(numerator: float, denominator: float) -> float | None:
    return round(numerator / denominator, 4) if denominator else None


def compute_metrics(
    cases: list[dict[str, Any]],
    views: list[dict[str, Any]],
    answers: list[dict[str, Any]],
    scores: list[dict[str, Any]],
    full_correct: set[str] | None = None,
) -> dict[str, Any]:
    """Accuracy overall and per type, verdict counts, tokens, evidence and usage.

    ``full_correct``: qids the full arm answered correctly, for accuracy relative to full.
    """
    questions = {q["qid"]: q for c in cases for q in c["questions"]}
    verdict_of = {s["qid"]: s["verdict"] for s in scores}
    by_type: dict[str, Counter] = defaultdict(Counter)
    for qid, question in questions.items():
        by_type[question["type"]]["n"] += 1
        by_type[question["type"]][verdict_of.get(qid, "missing")] += 1
    verdicts = Counter(verdict_of.get(qid, "missing") for qid in questions)
    n = len(questions)
    metrics: dict[str, Any] = {
        "n_cases": len(cases),
        "n_questions": n,
        "n_scored": sum(1 for qid in questions if qid in verdict_of),
        "accuracy": _rate(verdicts["correct"], n),
        "verdicts": {v: verdicts.get(v, 0) for v in (*VERDICTS, "missing")},
        "confidently_wrong_rate": _rate(verdicts["wrong"], n),
        "abstain_rate": _rate(verdicts["abstained"], n),
        "by_type": {
            t: {"n": c["n"], "accuracy": _rate(c["correct"], c["n"]),
                **{v: c.get(v, 0) for v in VERDICTS}}
            for t, c in sorted(by_type.items())
        },
    }
    if views:
        kept = sum(v["kept_tokens"] for v in views)
        full = sum(v["full_tokens"] for v in views)
        metrics.update(
            mean_kept_tokens=round(kept / len(views), 1),
            mean_full_tokens=round(full / len(views), 1),
            mean_kept_messages=round(sum(v["kept_messages"] for v in views) / len(views), 1),
            mean_full_messages=round(sum(v["full_messages"] for v in views) / len(views), 1),
            tokens_kept_ratio=_rate(kept, full),
            summarizer_calls=sum(v.get("summarizer_calls", 0) for v in views),
        )
        flags = {qid: f for v in views for qid, f in (v.get("evidence") or {}).items()}
        evidence: dict[str, Any] = {}
        for qtype in sorted(by_type):
            qids = [q for q, question in questions.items() if question["type"] == qtype and q in flags]
            evidence[qtype] = {
                "visible": _rate(sum(flags[q]["visible"] for q in qids), len(qids)),
                "recoverable": _rate(sum(flags[q]["recoverable"] for q in qids), len(qids)),
            }
        all_qids = [q for q in questions if q in flags]
        metrics["evidence_visible_rate"] = _rate(sum(flags[q]["visible"] for q in all_qids), len(all_qids))
        metrics["evidence_recoverable_rate"] = _rate(
            sum(flags[q]["recoverable"] for q in all_qids), len(all_qids))
        metrics["evidence_by_type"] = evidence
    if full_correct is not None:
        base = [q for q in questions if q in full_correct]
        metrics["accuracy_relative_to_full"] = _rate(
            sum(verdict_of.get(q) == "correct" for q in base), len(base))
        metrics["n_full_correct"] = len(base)
    outcomes = Counter(a.get("outcome", "answered") for a in answers)
    usage = Counter()
    for answer in answers:
        for key, value in (answer.get("usage") or {}).items():
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                usage[key] += value
    metrics["outcomes"] = dict(outcomes)
    metrics["retrievals"] = sum(len(a.get("retrievals") or []) for a in answers)
    metrics["usage"] = {k: round(v, 3) for k, v in usage.items()}
    return metrics
