"""The quality-size frontier of a study with budgeted arms (``+experiment=frontier``): per budget,
which arm keeps the most answers, and the data of the frontier plot.

    rows = frontier_frame(configs)                       # arm, budget, target / realized share, answers kept
    lines = answer_sentences(jobs, configs, measure)     # one sentence per case set and budget

**Estimand** of a sentence: at one budget, the difference in the share of the full arm's correct
answers that two arms still give (paired on the same questions, the same seeds), over the
population of runs like the recorded ones; its interval and p-value come from
:func:`paired_comparison` (instance-level paired differences). "Answers kept" is accuracy relative to
full (every headline question when no full arm is in the report). With ``model=offline`` the
answers are the offline reader's: the sentence then speaks of evidence available.

An arm whose views hold summaries of the offline extractive stand-in (``metrics.json``
``lower_bound``) is a lower bound: it is never ranked against arms measured exactly; the
sentence names it apart instead.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import pandas as pd

from bench.scoring.question_groups import headline_questions
from bench.stats import LEVEL, paired_interval
from bench.study.figure_text import budget_text, interval_text, is_lower_bound, is_missing, pct_text
from bench.study.jobs import Job

__all__ = ["frontier_frame", "over_budget_line", "answer_sentences", "paired_comparison", "has_frontier", "FRONTIER_COLUMNS"]

FRONTIER_COLUMNS = ("case_set", "arm", "budget", "target_share", "realized_share", "answers_kept", "answers_kept_low",
                    "answers_kept_high", "lower_bound", "views_over", "config", "interval_method")


def paired_comparison(correct_a: list[bool], correct_b: list[bool], instances: list[str],
                      level: float = LEVEL, *, generalize_types: bool = False) -> tuple[float, float, float, float]:
    """A's share minus B's on the same questions: ``(difference, low, high, p_value)``.

    The one door of the frontier's numbers to the statistics: :func:`bench.stats.paired_interval`
    (instance-level paired differences, exact sign-flip p-value; docs/uncertainty.md); the two-way
    method only when a job of the pair asked for it (``stats.generalize_types``), as in the pairs table."""
    difference, low, high, p_value = paired_interval(correct_b, correct_a, instances, level,  # its B minus its A
                                                     generalize_types=generalize_types)
    return round(difference, 4), round(low, 4), round(high, 4), round(p_value, 4)


def has_frontier(configs: pd.DataFrame) -> bool:
    """Configs with ``arm.budget`` are in the report."""
    return not configs.empty and "budget" in configs and configs["budget"].notna().any()


def _kept(row: pd.Series) -> tuple[Any, Any, Any, str]:
    """(answers kept, low, high, what it is): relative to full when the report has it, else accuracy."""
    if not is_missing(row.get("accuracy_relative_to_full.mean")):
        return (row["accuracy_relative_to_full.mean"], row.get("accuracy_relative_to_full.ci_low"),
                row.get("accuracy_relative_to_full.ci_high"), "relative to full")
    return row.get("accuracy.mean"), row.get("accuracy.ci_low"), row.get("accuracy.ci_high"), "accuracy"


def frontier_frame(configs: pd.DataFrame) -> pd.DataFrame:
    """The frontier plot's data: one row per config with a budget, plus the reference and the baseline."""
    if not has_frontier(configs):
        return pd.DataFrame(columns=list(FRONTIER_COLUMNS))
    rows = []
    for _, row in configs.iterrows():
        budgeted = not is_missing(row.get("budget"))
        if not budgeted and row.get("role") not in ("reference", "baseline"):
            continue
        kept, low, high, _ = _kept(row)
        realized = row.get("budget_realized_share.mean") if budgeted else row.get("tokens_kept_ratio.mean")
        rows.append({"case_set": row["case_set"], "arm": row["arm"], "budget": row.get("budget") if budgeted else None,
                     "target_share": row.get("budget_target_share.mean") if budgeted else None,
                     "realized_share": realized, "answers_kept": kept, "answers_kept_low": low,
                     "answers_kept_high": high, "lower_bound": is_lower_bound(row),
                     "views_over": row.get("budget_n_over.mean") if budgeted else None, "config": row["config"],
                     "interval_method": row.get("interval_method"),  # the ‡ mark where it is two-way
                     "role": row.get("role"), "arm_order": row.get("arm_order")})
    return pd.DataFrame(rows)


def _correct(job: Job) -> dict[str, bool]:
    return {s["qid"]: s.get("verdict") == "correct" for s in job.scores}


def _pair(a: list[Job], b: list[Job]) -> tuple[list[bool], list[bool], list[str]]:
    """Per question of the seeds both configs ran (complete jobs): A correct, B correct, instance;
    only the questions the full arm answered when the jobs know them (answers kept)."""
    by_seed_a = {str(j.seed): j for j in a}
    by_seed_b = {str(j.seed): j for j in b}
    hits_a: list[bool] = []
    hits_b: list[bool] = []
    instances: list[str] = []
    for seed in sorted(set(by_seed_a) & set(by_seed_b)):
        job_a, job_b = by_seed_a[seed], by_seed_b[seed]
        questions = headline_questions(job_a.cases)
        shared = set(questions) & set(headline_questions(job_b.cases))
        full = job_a.full_correct if job_a.full_correct is not None else job_b.full_correct
        correct_a, correct_b = _correct(job_a), _correct(job_b)
        for qid in sorted(shared):
            if qid not in correct_a or qid not in correct_b or (full is not None and qid not in full):
                continue
            hits_a.append(correct_a[qid])
            hits_b.append(correct_b[qid])
            instances.append(questions[qid]["_instance"])  # seeds of one instance: one cluster
    return hits_a, hits_b, instances


def answer_sentences(jobs: list[Job], configs: pd.DataFrame, measure: str = "accuracy") -> dict[str, list[str]]:
    """Per case set, one sentence per budget: the arm that keeps the most answers among the arms
    measured exactly, its paired difference to the next best (interval, p-value), and the arms
    with stand-in summaries named apart (never ranked)."""
    if not has_frontier(configs):
        return {}
    complete: dict[str, list[Job]] = defaultdict(list)
    for job in jobs:
        if job.complete:
            complete[job.config_id].append(job)
    what = "answers" if measure == "accuracy" else measure  # offline: evidence available (offline reader)
    out: dict[str, list[str]] = {}
    for case_set, group in configs.groupby("case_set", sort=False):
        budgeted = group[group["budget"].notna()]
        lines = []
        budgets = sorted({float(b) for b in budgeted["budget"]})
        for budget in budgets:
            at = budgeted[budgeted["budget"].astype(float) == budget]
            exact = [r for _, r in at.iterrows() if not is_lower_bound(r) and not is_missing(_kept(r)[0])]
            bound = [str(r["arm"]) for _, r in at.iterrows() if is_lower_bound(r)]
            exact.sort(key=lambda r: (-float(_kept(r)[0]), r["arm_order"]))
            head = f"**Budget {budget_text(budget)}{' of each case' + chr(39) + 's history tokens' if budget <= 1 else ''}:**"
            if not exact:
                sentence = f"{head} no arm measured exactly"
            else:
                best = exact[0]
                kept, low, high, basis = _kept(best)
                sentence = (f"{head} **{best['arm']}** keeps the most {what}: {pct_text(kept)} {basis} (95% CI "
                            f"{interval_text(low, high, best.get('interval_method'))}) with {pct_text(best.get('budget_realized_share.mean'))} "
                            "of the history's tokens")
                if len(exact) > 1:
                    best_jobs = complete.get(best["config_id"], [])
                    tied: list[dict[str, Any]] = []
                    rest: list[dict[str, Any]] = []
                    paired = 0
                    for other in exact[1:]:  # arms that gave the very same answers tie with the best
                        a, b, _ = _pair(best_jobs, complete.get(other["config_id"], []))
                        same = bool(a) and a == b and not rest
                        (tied if same else rest).append(other)
                        paired = len(a) if same else paired
                    if tied:
                        sentence = sentence.replace(f"**{best['arm']}**", f"**{best['arm']}** (tied with "
                                                    f"{', '.join(str(t['arm']) for t in tied)}: the same on all "
                                                    f"{paired} paired questions)", 1)
                    if rest:  # every arm measured exactly may tie with the best: then no difference to give
                        runner = rest[0]
                        runner_jobs = complete.get(runner["config_id"], [])
                        a, b, instances = _pair(best_jobs, runner_jobs)
                        if a:
                            two_way = any(job.generalize_types for job in (*best_jobs, *runner_jobs))
                            diff, lo, hi, p = paired_comparison(a, b, instances, generalize_types=two_way)
                            sentence += (f", {100 * diff:+.1f} pp over the next best, {runner['arm']} (paired on "
                                         f"{len(a)} questions: 95% CI {100 * lo:+.1f} to {100 * hi:+.1f} pp"
                                         f"{' ‡' if two_way else ''}, p = {_p(p)})")
                        else:
                            sentence += f"; the next best, {runner['arm']}, shares no complete seed with it"
                else:
                    sentence += " (the only arm measured exactly at this budget)"
            if bound:
                sentence += (f". Not ranked: {', '.join(bound)}: their summaries are the offline extractive "
                             "stand-in's, a lower bound")
            lines.append(sentence + ".")
        out[str(case_set)] = lines
    return out


def _p(p: float) -> str:
    return "< 0.001" if p < 0.001 else f"{p:.3f}" if p < 0.1 else f"{p:.2f}"



def over_budget_line(jobs: list[Job]) -> str:
    """The views more than 20% over their target, per job (``metrics.json`` ``budget``): one line."""
    items = []
    for job in jobs:
        budget = job.metrics.get("budget") or {}
        if budget.get("n_over"):
            cases = ", ".join(budget.get("over_cases") or [])
            items.append(f"{job.arm} at {budget_text(budget.get('value'))} (seed {job.seed}): {budget['n_over']} of "
                         f"{budget.get('n_views')} ({cases})")
    if not items:
        return "No view is more than 20% over its target."
    return "Views more than 20% over their target: " + "; ".join(items) + "."
