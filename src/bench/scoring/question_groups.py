"""How a job's figures group its questions and count their verdicts: the headline questions (those
not readable in the task text), instances as the clusters of the intervals, the distance and depth
buckets of the evidence, and the verdict counts of a group of questions.

    questions = headline_questions(cases)    # qid -> question, with its instance as ``_instance``
    block = verdict_block(qids, verdict_of)  # n, accuracy (null when nothing scored), each verdict's count
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from typing import Any

from bench.store.schema import VERDICTS

__all__ = ["headline_questions", "instance_clusters", "DISTANCE_BUCKETS", "distance_bucket", "question_depth_label",
           "JUDGED", "rate", "verdict_block"]

# Tokens back from the end of the history to the latest message that shows the answer.
DISTANCE_BUCKETS = (("<2k", 0, 2_000), ("2-8k", 2_000, 8_000), ("8-32k", 8_000, 32_000), (">32k", 32_000, None))


def distance_bucket(question: dict[str, Any]) -> str | None:
    """The distance bucket of a question (by ``nearest_back`` tokens; None when unknown)."""
    back = question.get("nearest_back") or question.get("evidence_back")
    if not back:
        return None
    tokens = back.get("tokens", 0)
    for label, low, high in DISTANCE_BUCKETS:
        if tokens >= low and (high is None or tokens < high):
            return label
    return None


def question_depth_label(question: dict[str, Any]) -> str | None:
    """A question's depth (``depth``, else the bucket of its earliest evidence; None: unknown)."""
    if question.get("depth"):
        return question["depth"]
    back = question.get("evidence_back")
    return distance_bucket({"evidence_back": back}) if back else None


def headline_questions(cases: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """qid -> question (with its case's instance as ``_instance``), in_task_text ones left out."""
    return {q["qid"]: {**q, "_instance": c.get("instance_id") or c["case_id"]}
            for c in cases for q in c["questions"] if not q.get("in_task_text")}


def instance_clusters(hits: Iterable[tuple[str, bool]]) -> list[tuple[int, int]]:
    """Per instance, in instance order: (hits, questions), from ``(instance, hit)`` pairs (one
    per question, of one job or pooled over several): the clusters of the bootstrap intervals."""
    sums: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for instance, hit in hits:
        row = sums[instance]
        row[0] += 1 if hit else 0
        row[1] += 1
    return [(v[0], v[1]) for _, v in sorted(sums.items())]


def rate(numerator: float, denominator: float) -> float | None:
    """A share rounded to 4 places (None when the denominator is 0)."""
    return round(numerator / denominator, 4) if denominator else None


JUDGED = ("correct", "wrong", "abstained")  # verdicts that score an answer (unscored and missing do not)


def verdict_block(qids: list[str], verdict_of: dict[str, str]) -> dict[str, Any]:
    """The verdicts of these questions: n, accuracy (null when none is scored) and each verdict's count."""
    counts = Counter(verdict_of.get(q, "missing") for q in qids)
    judged = any(counts[v] for v in JUDGED)  # no scored answer is no accuracy (null), not 0%
    return {"n": len(qids), "accuracy": rate(counts["correct"], len(qids)) if judged else None,
            **{v: counts.get(v, 0) for v in VERDICTS}}
