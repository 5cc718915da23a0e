"""Uncertainty across jobs: a config's pooled interval, and paired comparisons of configs.

Both resample instances (clusters) with the seeded bootstrap of :mod:`bench.stats`:

- ``config_intervals(jobs)``: one config's accuracy (and relative to full) with its 95% interval,
  the questions of all its complete jobs (seeds) pooled per instance;
- ``compare_pair(a, b)``: config B minus config A on the same questions, paired job by job on the
  seed, with the discordant questions (correct in one config only);
- ``pairs_frame(jobs, configs)``: every pair of configs of one case set, as a table.
"""

from __future__ import annotations

from collections import defaultdict
from itertools import combinations
from typing import Any

import pandas as pd

from bench.metrics import headline_questions, instance_clusters
from bench.stats import paired_difference, ratio_interval
from bench.study.jobs import Job

__all__ = ["compare_pair", "config_intervals", "pairs_frame"]

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


def config_intervals(jobs: list[Job]) -> dict[str, Any]:
    """Pooled 95% intervals of a config's headline accuracy and accuracy relative to full."""
    correct: list[tuple[str, bool]] = []  # (instance, answered correctly), every seed's questions
    relative: list[tuple[str, bool]] = []  # the same, of the questions the full arm got right
    for job in jobs:
        verdict = {s["qid"]: s["verdict"] for s in job.scores}
        for qid, question in headline_questions(job.cases).items():
            hit = (question["_instance"], verdict.get(qid) == "correct")
            correct.append(hit)
            if job.full_correct is not None and qid in job.full_correct:
                relative.append(hit)
    clusters = instance_clusters(correct)
    return {"accuracy_ci": ratio_interval(clusters),
            "accuracy_relative_to_full_ci": ratio_interval(instance_clusters(relative)) if relative else None,
            "n_clusters": len(clusters)}


def pairs_frame(jobs: list[Job], configs: pd.DataFrame) -> pd.DataFrame:
    """Paired comparisons of every two configs of one case set (complete jobs, paired by seed)."""
    by_config: dict[str, dict[Any, Job]] = defaultdict(dict)
    for job in jobs:
        if job.complete:
            by_config[job.config_id][str(job.seed)] = job
    rows = []
    for case_set, group in configs.groupby("case_set", sort=False):
        for (_, a), (_, b) in combinations(group.iterrows(), 2):
            seeds = sorted(set(by_config[a["config_id"]]) & set(by_config[b["config_id"]]))
            if not seeds:
                continue
            pair = compare_pair([_records(by_config[a["config_id"]][s]) for s in seeds],
                                [_records(by_config[b["config_id"]][s]) for s in seeds])
            interval = pair["difference_ci"]
            rows.append({"case_set": case_set, "a": a["short"], "b": b["short"], "config_a": a["config"],
                         "config_b": b["config"], "seeds": ",".join(seeds), "difference": pair["difference"],
                         "difference_ci_low": interval[0] if interval else None,
                         "difference_ci_high": interval[1] if interval else None,
                         "correct_only_in_a": pair["a_only"], "correct_only_in_b": pair["b_only"],
                         "n_questions": pair["n_questions"], "n_clusters": pair["n_clusters"]})
    return pd.DataFrame(rows)


def _records(job: Job) -> Records:
    return job.cases, job.scores
