"""The summary a job prints when it ends: cases, the headline with its interval, tokens kept,
model calls, one row per question type, and accuracy by evidence distance."""

from __future__ import annotations

from typing import Any

__all__ = ["format_summary"]


def format_summary(metrics: dict[str, Any]) -> str:
    if not metrics["n_cases"]:
        return (f"job: {metrics.get('job_dir')}\nno case to run: every row was rejected or filtered out "
                f"(reasons in {metrics.get('job_dir')}/rejected.jsonl)")
    flagged = metrics.get("in_task_text") or {}
    lines = [
        f"job: {metrics.get('job_dir')}",
        f"cases: {metrics['n_cases']} ({metrics.get('n_clusters', '?')} instances)  questions: "
        f"{metrics['n_questions']}, headline {metrics.get('n_headline_questions', metrics['n_questions'])}"
        f"  {metrics.get('measures', 'accuracy')}: {_pct(metrics['accuracy'])} {_ci(metrics.get('accuracy_ci'))}"
        + (f"  relative to full: {_pct(metrics['accuracy_relative_to_full'])} "
           f"{_ci(metrics.get('accuracy_relative_to_full_ci'))}"
           if metrics.get("accuracy_relative_to_full") is not None else ""),
    ]
    if metrics.get("accuracy_ci") is not None:
        lines.append(_about(metrics))
    if flagged.get("n"):
        lines.append(f"answerable from the task text (not in the headline): {flagged['n']} questions, "
                     f"accuracy {_pct(flagged['accuracy'])}")
    if "mean_kept_tokens" in metrics:
        lines.append(f"tokens kept: {metrics['mean_kept_tokens']:.0f} of {metrics['mean_full_tokens']:.0f} "
                     f"per case ({_pct(metrics['tokens_kept_ratio'])})")
    budget = metrics.get("budget")
    if budget:  # arm.budget: what the views were allowed and what they kept
        lines.append(f"budget: target {_pct(budget['target_share'])} of each case's history tokens, realized "
                     f"{_pct(budget['realized_share'])} (median {budget['median_realized_over_target']:.2f} of the "
                     f"target); {budget['n_over']} view(s) more than 20% over")
    if metrics.get("lower_bound"):
        lines.append(f"lower bound: {metrics['lower_bound']['note']}")
    calls = (metrics.get("model_calls") or {}).get("total")
    if calls and calls.get("requests"):
        lines.append(f"model calls: {calls['calls']} made, {calls['cache_hits']} from cache; tokens in "
                     f"{calls['input_tokens']} (cached {calls['cached_tokens']}), out {calls['output_tokens']}"
                     + (f"; cost ${calls['cost_usd']:.4f} (spent ${calls['spent_cost_usd']:.4f})"
                        if calls.get("cost_usd") is not None else ""))
    if metrics.get("n_errors"):
        lines.append(f"answer errors: {metrics['n_errors']} (status incomplete; rerun with resume=DIR to retry)")
    if metrics.get("n_judge_errors"):
        lines.append(f"judge errors: {metrics['n_judge_errors']} (status incomplete; rerun with resume=DIR to judge "
                     f"again): {str(metrics.get('judge_error'))[:200]}")
    lines.append(f"{'type':<17}{'n':>4}{'correct':>9}{'wrong':>7}{'abstain':>9}{'unscored':>10}{'accuracy':>10}"
                 f"{'in task':>9}")
    for qtype, row in metrics["by_type"].items():
        lines.append(f"{qtype:<17}{row['n']:>4}{row['correct']:>9}{row['wrong']:>7}{row['abstained']:>9}"
                     f"{row['unscored']:>10}{_pct(row['accuracy']):>10}{row.get('n_in_task_text', 0):>9}")
    if metrics.get("stale"):
        lines.append(f"stale: {metrics['stale']} wrong answers gave a value an earlier call returned (latest_value)")
    if metrics.get("by_distance"):
        lines.append("by distance (tokens back to the latest evidence): " + "  ".join(
            f"{label} {_pct(row['accuracy'])} (n={row['n']}, visible {_pct(row['evidence_visible'])})"
            for label, row in metrics["by_distance"].items()))
    return "\n".join(lines)


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def _about(metrics: dict[str, Any]) -> str:
    """What the interval is about, and the smallest difference the case set detects."""
    k = metrics.get("n_clusters") or 0
    detectable = metrics.get("detectable_difference")
    scope = ("over instances like these and over other question types (stats.generalize_types=true, two-way)"
             if metrics.get("interval_method") == "instances+types" else
             f"over instances like these ({k}), for this mix of question types")
    return (f"95% CI {scope}; detectable difference: "
            + (f"±{100 * detectable:.1f} pp" if detectable is not None else f"not detectable with {k} instances"))


def _ci(interval: list[float] | tuple[float, float] | None) -> str:
    return "" if not interval else f"[95% CI {100 * interval[0]:.1f}-{100 * interval[1]:.1f}]"
