"""Paired comparison of two configs on one case set: the difference of accuracy with its interval.

Both configs answered the same questions, so they are compared question by question: the
difference of headline accuracy (B - A) with a 95% interval from a paired bootstrap over
instance clusters (:func:`bench.stats.paired_difference`), and the discordant questions
(correct in one config, not in the other). Jobs of several seeds pool their questions, pairing
job by job on the seed.

    result = compare_pair(jobs_a, jobs_b)   # lists of (cases, scores) with matching seeds
    result["difference"], result["difference_ci"], result["a_only"], result["b_only"]
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from bench.metrics import headline_questions
from bench.stats import paired_difference

__all__ = ["compare_pair"]

Records = tuple[list[dict[str, Any]], list[dict[str, Any]]]  # (cases, scores) of one job


def compare_pair(a: list[Records], b: list[Records]) -> dict[str, Any]:
    """Paired comparison of config A and config B; ``a[i]`` and ``b[i]`` are jobs of the same seed."""
    clusters: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    a_only = b_only = both = neither = 0
    for (cases_a, scores_a), (cases_b, scores_b) in zip(a, b, strict=True):
        questions = headline_questions(cases_a)
        shared = set(questions) & set(headline_questions(cases_b))
        verdict_a = {s["qid"]: s["verdict"] for s in scores_a}
        verdict_b = {s["qid"]: s["verdict"] for s in scores_b}
        for qid in sorted(shared):
            if qid not in verdict_a or qid not in verdict_b:
                continue  # unscored in one of them: not comparable
            ok_a, ok_b = verdict_a[qid] == "correct", verdict_b[qid] == "correct"
            row = clusters[questions[qid]["_instance"]]
            row[0] += ok_a
            row[1] += 1
            row[2] += ok_b
            row[3] += 1
            a_only += ok_a and not ok_b
            b_only += ok_b and not ok_a
            both += ok_a and ok_b
            neither += not ok_a and not ok_b
    difference, interval = paired_difference([tuple(v) for _, v in sorted(clusters.items())])
    return {"n_questions": a_only + b_only + both + neither, "n_clusters": len(clusters),
            "difference": difference, "difference_ci": interval, "a_only": a_only, "b_only": b_only,
            "both": both, "neither": neither}
