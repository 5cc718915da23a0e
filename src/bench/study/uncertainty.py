"""Uncertainty across jobs: a config's pooled interval, and paired comparisons of configs.

Both take the score intervals of :mod:`bench.stats` (questions clustered by instance and by
template, i.e. question type):

- ``config_intervals(jobs)``: one config's accuracy (and relative to full) with its 95% interval,
  the questions of all its complete jobs (seeds) pooled per instance;
- ``compare_pair(a, b)``: config B minus config A on the same questions, paired job by job on the
  seed, with the discordant questions (correct in one config only) and the smallest difference
  the pair's case set detects (80% power, 5% level, from the observed paired variance);
- ``pairs_frame(jobs, configs)``: every pair of configs of one case set, as a table.
"""

from __future__ import annotations

from collections import defaultdict
from itertools import combinations
from typing import Any

import pandas as pd

from bench.metrics import headline_questions
from bench.stats import detectable_difference, paired_difference, proportion_interval, ratio_interval
from bench.study.jobs import Job

__all__ = ["compare_pair", "config_intervals", "pairs_frame"]

Records = tuple[list[dict[str, Any]], list[dict[str, Any]]]  # (cases, scores) of one job

def compare_pair(a: list[Records], b: list[Records]) -> dict[str, Any]:
    """Paired comparison of config A and config B; ``a[i]`` and ``b[i]`` are jobs of the same seed."""
    hits_a: list[bool] = []
    hits_b: list[bool] = []
    instances: list[str] = []
    templates: list[str] = []
    for (cases_a, scores_a), (cases_b, scores_b) in zip(a, b, strict=True):
        questions = headline_questions(cases_a)
        shared = set(questions) & set(headline_questions(cases_b))
        verdict_a = {s["qid"]: s["verdict"] for s in scores_a}
        verdict_b = {s["qid"]: s["verdict"] for s in scores_b}
        for qid in sorted(shared):
            if qid not in verdict_a or qid not in verdict_b:
                continue  # unscored in one of them: not comparable
            hits_a.append(verdict_a[qid] == "correct")
            hits_b.append(verdict_b[qid] == "correct")
            instances.append(questions[qid]["_instance"])
            templates.append(questions[qid]["type"])
    difference, interval = paired_difference(hits_a, hits_b, instances, templates)
    pairs = list(zip(hits_a, hits_b, strict=True))
    return {"n_questions": len(pairs), "n_clusters": len(set(instances)),
            "difference": difference, "difference_ci": interval,
            "detectable_difference": detectable_difference(hits_a, hits_b, instances, templates),
            "a_only": sum(x and not y for x, y in pairs), "b_only": sum(y and not x for x, y in pairs),
            "both": sum(x and y for x, y in pairs), "neither": sum(not x and not y for x, y in pairs)}


def config_intervals(jobs: list[Job]) -> dict[str, Any]:
    """Pooled 95% intervals of a config's headline accuracy and accuracy relative to full."""
    hits: list[bool] = []  # every seed's headline questions
    in_full: list[bool] = []  # ... of which the full arm got right
    instances: list[str] = []
    templates: list[str] = []
    for job in jobs:
        verdict = {s["qid"]: s["verdict"] for s in job.scores}
        for qid, question in headline_questions(job.cases).items():
            hits.append(verdict.get(qid) == "correct")
            in_full.append(job.full_correct is not None and qid in job.full_correct)
            instances.append(question["_instance"])
            templates.append(question["type"])
    relative = ratio_interval([h and f for h, f in zip(hits, in_full, strict=True)], in_full,
                              instances, templates) if any(in_full) else None
    return {"accuracy_ci": proportion_interval(hits, instances, templates),
            "accuracy_relative_to_full_ci": relative,
            "detectable_difference": detectable_difference(hits, None, instances, templates),
            "n_clusters": len(set(instances))}


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
                         "detectable_difference": pair["detectable_difference"],
                         "correct_only_in_a": pair["a_only"], "correct_only_in_b": pair["b_only"],
                         "n_questions": pair["n_questions"], "n_clusters": pair["n_clusters"]})
    return pd.DataFrame(rows)


def _records(job: Job) -> Records:
    return job.cases, job.scores
