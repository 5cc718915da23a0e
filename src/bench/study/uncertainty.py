"""Uncertainty across jobs: a config's pooled interval, and paired comparisons of configs.

Both are about the case set's fixed mix of question types over instances like these, and take
:mod:`bench.stats` (one-way by instance, types as strata; the two-way method when a job ran with
``stats.generalize_types=true``, and then ``method`` says so):

- ``config_intervals(jobs)``: one config's accuracy (and relative to full) with its 95% interval,
  the questions of all its complete jobs (seeds) pooled per instance; the full arm relative to
  itself is exactly 1;
- ``compare_pair(a, b)``: config B minus config A on the same questions, paired job by job on the
  seed: the difference with its interval and the p-value of the sign-flip test over
  instances (mid-p) (:func:`bench.stats.paired_interval`), the discordant questions (correct in one config
  only) and the smallest difference the pair's case set detects (80% power, 5% level);
- ``pairs_frame(jobs, configs)``: every pair of configs of one case set, as a table.
"""

from __future__ import annotations

from collections import defaultdict
from itertools import combinations
from typing import Any

import pandas as pd

from bench.scoring.question_groups import headline_questions
from bench.stats import METHOD, METHOD_TYPES, accuracy_interval, detectable_difference, paired_interval, ratio_interval
from bench.study.jobs import Job

__all__ = ["compare_pair", "config_intervals", "pairs_frame"]

Records = tuple[list[dict[str, Any]], list[dict[str, Any]]]  # (cases, scores) of one job


def compare_pair(a: list[Records], b: list[Records], *, generalize_types: bool = False) -> dict[str, Any]:
    """Paired comparison of config A and config B; ``a[i]`` and ``b[i]`` are jobs of the same seed."""
    hits_a: list[bool] = []
    hits_b: list[bool] = []
    instances: list[str] = []
    types: list[str] = []
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
            types.append(questions[qid]["type"])
    pairs = list(zip(hits_a, hits_b, strict=True))
    out: dict[str, Any] = {"n_questions": len(pairs), "n_clusters": len(set(instances)),
                           "difference": None, "difference_ci": None, "p_value": None, "detectable_difference": None,
                           "method": METHOD_TYPES if generalize_types else METHOD,
                           "a_only": sum(x and not y for x, y in pairs), "b_only": sum(y and not x for x, y in pairs),
                           "both": sum(x and y for x, y in pairs), "neither": sum(not x and not y for x, y in pairs)}
    if pairs:
        difference, low, high, p_value = paired_interval(hits_a, hits_b, instances, types=types,
                                                         generalize_types=generalize_types)
        out.update(difference=round(difference, 4), difference_ci=(round(low, 4), round(high, 4)),
                   p_value=round(p_value, 4),
                   detectable_difference=detectable_difference(hits_a, hits_b, instances, types=types,
                                                               generalize_types=generalize_types))
    return out


def config_intervals(jobs: list[Job]) -> dict[str, Any]:
    """Pooled 95% intervals of a config's headline accuracy and accuracy relative to full."""
    hits: list[bool] = []  # every seed's headline questions
    in_full: list[bool] = []  # ... of which the full arm got right
    instances: list[str] = []
    types: list[str] = []
    for job in jobs:
        verdict = {s["qid"]: s["verdict"] for s in job.scores}
        for qid, question in headline_questions(job.cases).items():
            hits.append(verdict.get(qid) == "correct")
            in_full.append(job.full_correct is not None and qid in job.full_correct)
            instances.append(question["_instance"])
            types.append(question["type"])
    generalize = any(job.generalize_types for job in jobs)
    if not any(in_full):
        relative = None
    elif jobs and all(job.is_reference for job in jobs):
        relative = (1.0, 1.0)  # the full arm relative to itself: 1 by construction
    else:
        relative = ratio_interval([h and f for h, f in zip(hits, in_full, strict=True)], in_full, instances, types=types,
                                  generalize_types=generalize)
    return {"accuracy_ci": accuracy_interval(hits, instances, types=types, generalize_types=generalize) if hits else None,
            "accuracy_relative_to_full_ci": relative,
            "detectable_difference": detectable_difference(hits, None, instances, types=types, generalize_types=generalize)
            if hits else None,
            "n_clusters": len(set(instances)), "method": METHOD_TYPES if generalize else METHOD}


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
            jobs_a = [by_config[a["config_id"]][s] for s in seeds]
            jobs_b = [by_config[b["config_id"]][s] for s in seeds]
            pair = compare_pair([_records(j) for j in jobs_a], [_records(j) for j in jobs_b],
                                generalize_types=any(j.generalize_types for j in (*jobs_a, *jobs_b)))
            interval = pair["difference_ci"]
            rows.append({"case_set": case_set, "a": a["short"], "b": b["short"], "config_a": a["config"],
                         "config_b": b["config"], "seeds": ",".join(seeds), "difference": pair["difference"],
                         "difference_ci_low": interval[0] if interval else None,
                         "difference_ci_high": interval[1] if interval else None,
                         "p_value": pair["p_value"], "interval_method": pair["method"],
                         "detectable_difference": pair["detectable_difference"],
                         "correct_only_in_a": pair["a_only"], "correct_only_in_b": pair["b_only"],
                         "n_questions": pair["n_questions"], "n_clusters": pair["n_clusters"]})
    return pd.DataFrame(rows)


def _records(job: Job) -> Records:
    return job.cases, job.scores
