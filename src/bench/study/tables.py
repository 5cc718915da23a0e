"""The study's tables (pandas): one row per job, per config (mean/min/max over seeds, pooled
interval), per config and question type, per job and question; CSV writing.

    jobs_df = jobs_frame(jobs); configs = configs_frame(jobs_df, jobs); questions_frame(jobs)
    write_csv(configs, "configs.csv")    # cells that start like a formula are escaped
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

import pandas as pd

from bench.store.records import read_jsonl
from bench.study.cells import text_cell as _text
from bench.study.csvfile import csv_safe, write_csv
from bench.study.figure_text import short_labels
from bench.study.jobs import Job
from bench.study.panel_review import panel_columns
from bench.study.uncertainty import config_intervals

# answer usage keys that hold latency in seconds
_LATENCY_KEYS = ("latency_s", "latency", "elapsed_s", "duration_s", "seconds")

__all__ = ["job_row", "jobs_frame", "configs_frame", "types_frame", "questions_frame", "csv_safe", "write_csv",
           "SUMMARY_METRICS"]

# ---------------------------------------------------------------- frames


def _calls_numbers(paths: list[Path]) -> dict[str, Any] | None:
    """Latency and tokens of the job's model calls (``calls.jsonl``; a merged set of shards: all of
    theirs), as ``metrics.json`` sums them."""
    records = [r for path in paths for r in read_jsonl(path / "calls.jsonl")]
    if not records:
        return None
    try:
        from bench.llm import summarize_calls
    except ImportError:
        return None
    by_kind = summarize_calls(records)
    total = by_kind.get("total", {})
    row = {
        "latency_s": total.get("latency_s"),
        "tokens_spent": total.get("spent_input_tokens", 0) + total.get("spent_output_tokens", 0),
        "tokens_used": total.get("input_tokens", 0) + total.get("output_tokens", 0),
        "input_tokens": total.get("input_tokens"),
        "output_tokens": total.get("output_tokens"),
        "model_calls": total.get("calls"),
        "cache_hits": total.get("cache_hits"),
        "cached_input_tokens": total.get("cached_tokens"),
        "cost_usd": total.get("cost_usd"),
        "spent_cost_usd": total.get("spent_cost_usd"),
    }
    for kind, numbers in by_kind.items():
        if kind != "total":
            row[f"calls.{kind}"] = numbers.get("requests")
            row[f"latency_s.{kind}"] = numbers.get("latency_s")
    return row


def _usage_numbers(answers: list[dict[str, Any]]) -> dict[str, Any]:
    """Fallback without ``calls.jsonl``: the answers' own usage records."""
    totals: dict[str, float] = {}
    latency = 0.0
    timed = 0
    for answer in answers:
        usage = answer.get("usage") or {}
        for key, value in usage.items():
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                totals[key] = totals.get(key, 0) + value
        seconds = next((usage[k] for k in _LATENCY_KEYS if isinstance(usage.get(k), (int, float))), None)
        if seconds is not None:
            latency += float(seconds)
            timed += 1
    inputs = totals.get("input_tokens", totals.get("prompt_tokens", 0))
    outputs = totals.get("output_tokens", totals.get("completion_tokens", 0))
    return {
        "latency_s": round(latency, 3) if timed else None,
        "tokens_spent": inputs + outputs,
        "tokens_used": inputs + outputs,
        "input_tokens": inputs,
        "output_tokens": outputs,
        "model_calls": totals.get("calls"),
        "cache_hits": None,
    }


def _duration(run: dict[str, Any]) -> float | None:
    try:
        start = datetime.fromisoformat(run["started"])
        end = datetime.fromisoformat(run["ended"])
    except (KeyError, TypeError, ValueError):
        return None
    return (end - start).total_seconds()


def _interval(interval: Any) -> str | None:
    """A 95% interval as ``low-high`` (fractions), for CSV cells."""
    return f"{interval[0]:.4f}-{interval[1]:.4f}" if interval else None


def job_row(job: Job) -> dict[str, Any]:
    m = job.metrics
    config = job.config
    arm_cfg = config.get("arm") or {}
    git = job.run.get("git") or {}
    policy = job.policy
    uses_compact = policy["summary_prompt"] or policy["mechanisms"]  # matched N latest too
    row: dict[str, Any] = {
        "job": job.name,
        "config": job.label,
        "config_id": job.config_id,
        "experiment": job.experiment,
        "case_set": job.case_set,
        "source": job.source,
        "arm": job.arm,
        "role": policy["role"],
        "arm_order": policy["order"],
        "n": arm_cfg.get("n"),
        "match": arm_cfg.get("match"),
        "budget": arm_cfg.get("budget"),  # arm.budget: a share of each case's history tokens, or tokens
        "prompt": (config.get("prompt") or {}).get("name") if uses_compact else None,
        "mechanism": (config.get("mechanism") or {}).get("name") if uses_compact else None,
        "seed": job.seed,
        "status": job.status,
        "problems": "; ".join(job.problems),
        "overrides": " ".join(job.overrides),
        "n_cases": m["n_cases"],
        "n_questions": m["n_questions"],
        "n_scored": m["n_scored"],
        "accuracy": m["accuracy"],
        "accuracy_ci": _interval(m.get("accuracy_ci")),
        "n_in_task_text": (m.get("in_task_text") or {}).get("n", 0),
        "n_clusters": m.get("n_clusters"),
    }
    for qtype, by in m["by_type"].items():
        row[f"acc.{qtype}"] = by["accuracy"]
    for bucket, by in (m.get("by_distance") or {}).items():  # by tokens back to the latest evidence
        row[f"dist.{bucket}"] = by["accuracy"]
        row[f"distvis.{bucket}"] = by["evidence_visible"]
    for qtype, cells in (m.get("by_type_depth") or {}).items():  # by type x depth of the earliest evidence
        for bucket, cell in cells.items():
            row[f"depth.{qtype}@{bucket}"] = cell["accuracy"]
            row[f"depthn.{qtype}@{bucket}"] = cell["n"]
            row[f"depthci.{qtype}@{bucket}"] = _interval(cell.get("accuracy_ci"))
            row[f"depthvis.{qtype}@{bucket}"] = cell["evidence_visible"]
            row[f"depthvisci.{qtype}@{bucket}"] = _interval(cell.get("evidence_visible_ci"))
    row.update({
        "accuracy_relative_to_full": m.get("accuracy_relative_to_full"),
        "accuracy_relative_to_full_ci": _interval(m.get("accuracy_relative_to_full_ci")),
        "n_full_correct": m.get("n_full_correct"),
        "confidently_wrong_rate": m["confidently_wrong_rate"],
        "hedged_wrong_rate": m.get("hedged_wrong_rate"),
        "detectable_difference": m.get("detectable_difference"),
        "abstain_rate": m["abstain_rate"],
        "correct": m["verdicts"]["correct"],
        "wrong": m["verdicts"]["wrong"],
        "stale": m.get("stale", 0),  # wrong answers giving an earlier call's value (latest_value)
        "abstained": m["verdicts"]["abstained"],
        "unscored": m["verdicts"]["unscored"],
        "evidence_visible_rate": m.get("evidence_visible_rate"),
        "evidence_recoverable_rate": m.get("evidence_recoverable_rate"),
    })
    for qtype, flags in (m.get("evidence_by_type") or {}).items():
        row[f"visible.{qtype}"] = flags["visible"]
        row[f"recoverable.{qtype}"] = flags["recoverable"]
    row.update(panel_columns(m))  # judge=panel: the members' agreement
    if m.get("compactions_per_case") is not None:  # natural-trigger compaction (arm.auto_compact.force=false)
        row["context_window"] = ((arm_cfg.get("auto_compact") or {}).get("context_window"))
        row["compactions_per_case"] = m["compactions_per_case"]
        row["compactions_max"] = m.get("compactions_max")
        row["evidence_survived_compactions"] = m.get("evidence_survived_compactions")
        for count, by in (m.get("by_compactions") or {}).items():  # accuracy by the case's compactions
            row[f"ncomp.{count}"] = by["accuracy"]
            row[f"ncompn.{count}"] = by["n"]
    row.update({
        "mean_kept_tokens": m.get("mean_kept_tokens"),
        "mean_full_tokens": m.get("mean_full_tokens"),
        "tokens_kept_ratio": m.get("tokens_kept_ratio"),
        "mean_kept_messages": m.get("mean_kept_messages"),
        "summarizer_calls": m.get("summarizer_calls"),
        # arm.budget: target and realized shares of each case's history tokens, views > 20% over target
        "budget_target_share": (m.get("budget") or {}).get("target_share"),
        "budget_realized_share": (m.get("budget") or {}).get("realized_share"),
        "budget_median_ratio": (m.get("budget") or {}).get("median_realized_over_target"),
        "budget_n_over": (m.get("budget") or {}).get("n_over"),
        # summaries by the offline extractive stand-in: a lower bound, never ranked against exact figures
        "lower_bound": m.get("lower_bound") is not None,
        # what bench.estimate says of the job (from its views), beside what it spent (cost_usd, tokens)
        "estimated_cost_usd": ((job.stored_metrics or {}).get("estimate") or {}).get("cost_usd"),
        "estimated_input_tokens": ((job.stored_metrics or {}).get("estimate") or {}).get("input_tokens"),
        "retrievals": m["retrievals"],
        "context_overflow": m["outcomes"].get("context_overflow", 0),
        "errors": m["outcomes"].get("error", 0),
    })
    row.update(_calls_numbers(job.shard_paths or [job.path]) or _usage_numbers(job.answers))
    row.update({
        "wall_time_s": _duration(job.run),
        "missing_traces": len((job.stored_metrics or {}).get("missing_traces") or []),
        "case_set_hash": job.run.get("case_set_hash"),
        "prompt_hash": job.run.get("prompt_hash"),
        "git_commit": (git.get("commit") or "")[:12] or None,
        "git_dirty": git.get("dirty"),
        "started": job.run.get("started"),
        "path": str(job.path),
    })
    return row


def jobs_frame(jobs: list[Job]) -> pd.DataFrame:
    frame = pd.DataFrame([job_row(j) for j in jobs])
    if "n" in frame:
        frame["n"] = pd.to_numeric(frame["n"], errors="coerce").astype("Int64")
    return frame


# metrics averaged per config (mean, min, max over the seeds of complete jobs)
SUMMARY_METRICS = (
    "accuracy", "accuracy_relative_to_full", "confidently_wrong_rate", "hedged_wrong_rate", "abstain_rate",
    "evidence_visible_rate", "evidence_recoverable_rate", "mean_kept_tokens", "tokens_kept_ratio",
    "summarizer_calls", "retrievals", "latency_s", "tokens_spent", "cost_usd", "estimated_cost_usd", "stale",
    "compactions_per_case", "compactions_max", "evidence_survived_compactions",
    "budget_target_share", "budget_realized_share", "budget_median_ratio", "budget_n_over",
)


def _metric_columns(frame: pd.DataFrame) -> list[str]:
    per_type = [c for c in frame.columns
                if c.startswith(("acc.", "visible.", "recoverable.", "dist.", "distvis.", "ncomp.", "ncompn.",
                                 "depth.", "depthn.", "depthvis."))]
    return [c for c in (*SUMMARY_METRICS, *per_type) if c in frame.columns]


def _above_baseline(frame: pd.DataFrame) -> None:
    """``accuracy_above_none``: each config's accuracy minus the guessing baseline's (the arm
    that declares role ``baseline``, arm=none) on the same case set; absent without one."""
    if "accuracy.mean" not in frame or "role" not in frame:
        return
    baseline = (frame[frame["role"] == "baseline"].groupby("case_set")["accuracy.mean"].first().dropna())
    if baseline.empty:
        return
    base = frame["case_set"].map(baseline)
    for stat in ("mean", "min", "max"):
        frame[f"accuracy_above_none.{stat}"] = (pd.to_numeric(frame[f"accuracy.{stat}"], errors="coerce")
                                                - base).round(4)


def configs_frame(jobs_df: pd.DataFrame, jobs: list[Job] | None = None) -> pd.DataFrame:
    """One row per config: mean/min/max over the complete jobs' seeds; incomplete ones named.

    With the jobs, also the config's pooled 95% intervals (``accuracy.ci_low|ci_high``,
    ``accuracy_relative_to_full.ci_low|ci_high``: every complete seed's questions, clustered
    by instance). Configs are grouped by case set (the studies are kept apart), then ordered
    by arm and N."""
    if jobs_df.empty:
        return pd.DataFrame()
    metrics = _metric_columns(jobs_df)
    complete_jobs: dict[str, list[Job]] = {}
    for job in jobs or []:
        if job.complete:
            complete_jobs.setdefault(job.config_id, []).append(job)
    rows = []
    for config_id, group in jobs_df.groupby("config_id", sort=False):
        done = group[group["status"] == "complete"]
        first = group.iloc[0]
        row: dict[str, Any] = {
            "config": first["config"], "config_id": config_id, "experiment": first["experiment"],
            "case_set": first["case_set"], "source": first["source"],
            "arm": first["arm"], "role": first["role"], "arm_order": first["arm_order"], "n": first["n"], "match": first["match"], "prompt": first["prompt"],
            "budget": first["budget"], "lower_bound": bool(group["lower_bound"].any()),
            "mechanism": first["mechanism"],
            **({"context_window": first["context_window"]} if "context_window" in group.columns else {}),
            "n_jobs": len(group), "n_complete": len(done),
            "seeds": ",".join(str(s) for s in done["seed"].tolist()),
            "incomplete": ", ".join(group.loc[group["status"] != "complete", "job"].tolist()),
            "n_questions": int(done["n_questions"].max()) if len(done) else None,
            "n_in_task_text": int(done["n_in_task_text"].max()) if len(done) else None,
        }
        pooled = config_intervals(complete_jobs[config_id]) if config_id in complete_jobs else {}
        for metric in ("accuracy", "accuracy_relative_to_full"):
            interval = pooled.get(f"{metric}_ci")
            row[f"{metric}.ci_low"] = interval[0] if interval else None
            row[f"{metric}.ci_high"] = interval[1] if interval else None
        row["detectable_difference"] = pooled.get("detectable_difference")
        row["n_clusters"] = pooled.get("n_clusters")  # instances: what "not detectable with N instances" names
        row["interval_method"] = pooled.get("method")  # instances, or instances+types (stats.generalize_types)
        for metric in metrics:
            values = pd.to_numeric(done[metric], errors="coerce").dropna()
            row[f"{metric}.mean"] = round(float(values.mean()), 4) if len(values) else None
            row[f"{metric}.min"] = round(float(values.min()), 4) if len(values) else None
            row[f"{metric}.max"] = round(float(values.max()), 4) if len(values) else None
        rows.append(row)
    frame = pd.DataFrame(rows)
    _above_baseline(frame)
    frame["_order"] = range(len(frame))
    first_seen = {c: i for i, c in enumerate(dict.fromkeys(frame["case_set"]))}
    frame["_set"] = frame["case_set"].map(first_seen)
    frame["_arm"] = list(zip(frame["arm_order"], frame["arm"], strict=True))
    frame["_n"] = pd.to_numeric(frame["n"], errors="coerce")
    frame = frame.sort_values(["_set", "_arm", "_n", "_order"], na_position="last")
    frame = frame.drop(columns=["_order", "_set", "_arm", "_n"]).reset_index(drop=True)
    frame.insert(1, "short", short_labels(frame))
    frame["n"] = pd.to_numeric(frame["n"], errors="coerce").astype("Int64")
    return frame


def types_frame(configs: pd.DataFrame) -> pd.DataFrame:
    """Long table: config x question type -> accuracy and evidence survival (mean/min/max)."""
    rows = []
    for _, row in configs.iterrows():
        types = sorted({c.split(".")[1] for c in configs.columns
                        if c.startswith("acc.") and c.endswith(".mean")})
        for qtype in types:
            item = {"config": row["config"], "arm": row["arm"], "type": qtype}
            for prefix in ("acc", "visible", "recoverable"):
                for stat in ("mean", "min", "max"):
                    item[f"{prefix}.{stat}"] = row.get(f"{prefix}.{qtype}.{stat}")
            rows.append(item)
    return pd.DataFrame(rows)


def questions_frame(jobs: list[Job]) -> pd.DataFrame:
    """One row per job and question: question, reference, answer, verdict, reason, evidence."""
    rows = []
    for job in jobs:
        verdicts = {s["qid"]: s for s in job.scores}
        outcomes = {a["qid"]: a.get("outcome", "answered") for a in job.answers}
        answers = {a["qid"]: a.get("answer") for a in job.answers}
        flags = {qid: f for v in job.views for qid, f in (v.get("evidence") or {}).items()}
        for case in job.cases:
            for question in case["questions"]:
                qid = question["qid"]
                score = verdicts.get(qid) or {}
                rows.append({
                    "job": job.name, "path": str(job.path), "config": job.label, "config_id": job.config_id,
                    "arm": job.arm, "seed": job.seed, "case_id": case["case_id"], "qid": qid,
                    "type": question["type"], "question": _text(question.get("question")),
                    "reference": _text(question.get("reference")), "answer": _text(answers.get(qid)),
                    "verdict": score.get("verdict", "missing"),
                    "reason": score.get("reason"), "judge": score.get("judge"),
                    "outcome": outcomes.get(qid),
                    "visible": (flags.get(qid) or {}).get("visible"),
                    "recoverable": (flags.get(qid) or {}).get("recoverable"),
                })
    return pd.DataFrame(rows)
