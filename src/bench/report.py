"""The study report over one or many job directories (a sweep directory or single jobs).

    uv run python -m bench.report multirun/2026-11-29/19-30-00_nlatest
    uv run python -m bench.report JOB_A JOB_B ... --output reports/ablation

Every number is recomputed from the job's records (``cases``, ``views``, ``answers``,
``scores``, ``reference_scores``) with :func:`bench.metrics.compute_metrics`, so a report
over a killed job shows what it holds and agrees with ``metrics.json`` of a finished one.

Written to the output directory (default ``DIR/report`` for one DIR, else
``multirun/reports/<date>_<time>``):

- ``jobs.csv``: one row per job: its overrides, config label, seed, status, ``accuracy``,
  per-type accuracy (``acc.<type>``), accuracy relative to full, confidently-wrong and
  abstain rates, evidence visible / recoverable, tokens kept, summarizer calls,
  retrievals, latency and tokens spent;
- ``configs.csv``: one row per config (jobs that differ only by seed): mean, min and max
  over the seeds of the *complete* jobs (``<metric>.mean|min|max``), with ``n_jobs``,
  ``n_complete`` and the incomplete jobs named; an incomplete job is never averaged in;
- ``types.csv``: accuracy and evidence survival per config and question type;
- ``questions.csv``: one row per job and question: verdict, judge reason, evidence flags;
- ``report.md``: the config table in markdown; ``report.html``: one self-contained page
  (tables, SVG plots: accuracy relative to full vs tokens kept per arm, per-type bars,
  the N curve, the per-question outcome grid).

Jobs are listed by config (arm, N, mechanism chain, prompt, then the sweep's own order),
seeds together, not by start time. Failed jobs (``run.json`` ``status: failed``, a job of a
sweep that stopped with an error) are listed with their error, never averaged. CSV cells
that start with ``= + - @`` (or a tab / carriage return) are written with a leading ``'``,
so a spreadsheet never runs them as formulas (:func:`write_csv`).
"""

from __future__ import annotations

import argparse
import hashlib
import html
import io
import json
import logging
import math
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd

from bench.metrics import compute_metrics
from bench.store import read_jsonl

__all__ = [
    "Job", "find_job_dirs", "load_job", "load_jobs", "flatten", "jobs_frame", "configs_frame",
    "types_frame", "questions_frame", "write_report", "markdown_table", "csv_safe", "write_csv", "main",
]

log = logging.getLogger(__name__)

ARM_ORDER = {"full": 0, "nlatest": 1, "compact": 2}
MECHANISM_ORDER = {m: i for i, m in enumerate(("shipped", "tail", "stepcut", "offload", "collapse", "verify"))}
PROMPT_ORDER = {p: i for i, p in enumerate(("sre", "generic", "hybrid", "hybrid_v2"))}
VERDICT_STYLE = {  # verdict -> (symbol, background colour)
    "correct": ("✓", "#b7e1b0"),
    "wrong": ("✗", "#f4a6a6"),
    "abstained": ("?", "#f7dc8b"),
    "unscored": ("·", "#d0d0d0"),
    "missing": ("", "#ffffff"),
}
# keys that never make two jobs different configs (seed is what a config averages over)
_NOT_IDENTITY = re.compile(r"^(seed|resume|output_dir|cache\..*|tracing\..*)$|(^|\.)seed$")
# overrides that are not part of a config's readable label
_NOT_LABEL = re.compile(r"^(seed|resume|output_dir|dataset\.path|cache\.[\w.]+|tracing\.[\w.]+|hydra\.[\w.]+"
                        r"|hydra/[\w/]+)$")
# answer usage keys that hold latency in seconds
_LATENCY_KEYS = ("latency_s", "latency", "elapsed_s", "duration_s", "seconds")


# ---------------------------------------------------------------- loading jobs


@dataclass
class Job:
    """One job directory and what the report derives from it."""

    path: Path
    run: dict[str, Any]
    config: dict[str, Any]
    overrides: list[str]
    metrics: dict[str, Any]
    stored_metrics: dict[str, Any] | None
    cases: list[dict[str, Any]]
    views: list[dict[str, Any]]
    answers: list[dict[str, Any]]
    scores: list[dict[str, Any]]
    status: str = "incomplete"
    problems: list[str] = field(default_factory=list)
    label: str = ""
    shared: list[str] = field(default_factory=list)  # overrides of every job in the report, not in label

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def arm(self) -> str:
        return str(self.run.get("arm") or (self.config.get("arm") or {}).get("name") or "?")

    @property
    def seed(self) -> Any:
        return self.run.get("seed", self.config.get("seed"))

    @property
    def complete(self) -> bool:
        return self.status == "complete"

    @property
    def identity(self) -> dict[str, Any]:
        """Flattened config without the seed and bookkeeping keys: equal for seeds of a config."""
        return {k: v for k, v in flatten(self.config).items() if not _NOT_IDENTITY.search(k)}

    @property
    def config_id(self) -> str:
        text = json.dumps(self.identity, sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).hexdigest()[:10]

    @property
    def experiment(self) -> str | None:
        for item in self.overrides:
            key, _, value = item.lstrip("+~").partition("=")
            if key == "experiment":
                return value
        return None

    def label_overrides(self) -> list[str]:
        out = []
        for item in self.overrides:
            key = item.lstrip("+~").partition("=")[0]
            if key == "experiment" or _NOT_LABEL.match(key):
                continue
            text = re.sub(r"\\(.)", r"\1", item.lstrip("+"))  # Hydra's escapes: http\://h -> http://h
            out.append(text.removeprefix("experiment/"))  # +experiment/arm=nlatest -> arm=nlatest
        return out


def flatten(data: Any, prefix: str = "") -> dict[str, Any]:
    """Nested dicts as dotted keys; lists stay values (compared as a whole)."""
    if not isinstance(data, dict):
        return {prefix: data} if prefix else {}
    out: dict[str, Any] = {}
    for key, value in data.items():
        dotted = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(value, dict) and value:
            out.update(flatten(value, dotted))
        else:
            out[dotted] = value
    return out


def _yaml(path: Path) -> Any:
    from omegaconf import OmegaConf

    try:
        return OmegaConf.to_container(OmegaConf.load(path), resolve=False)
    except Exception:  # noqa: BLE001 - a broken file only costs the labels
        return None


def job_config(path: Path) -> dict[str, Any]:
    """The job's resolved config: ``run.json`` ``config``, else ``.hydra/config.yaml``."""
    run = _json(path / "run.json") or {}
    if isinstance(run.get("config"), dict):
        return run["config"]
    loaded = _yaml(path / ".hydra" / "config.yaml")
    return loaded if isinstance(loaded, dict) else {}


def _json(path: Path) -> dict[str, Any] | None:
    try:
        return json.loads(path.read_bytes().decode("utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as err:  # ValueError: JSON and UTF-8 errors
        log.warning("%s: cannot read it (%s)", path, err)
        return None


def find_job_dirs(paths: Iterable[Path | str]) -> list[Path]:
    """Job directories (holding ``run.json``) given as such or found under sweep directories."""
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if (path / "run.json").exists():
            found.append(path)
        elif path.is_dir():
            found.extend(p.parent for p in sorted(path.rglob("run.json")))
        else:
            log.warning("not a job or sweep directory: %s", path)
    unique: dict[Path, None] = {}
    for path in found:
        unique.setdefault(path.resolve(), None)
    return list(unique)


def load_job(path: Path | str) -> Job:
    """Read a job directory and recompute its metrics from the records."""
    path = Path(path)
    run = _json(path / "run.json") or {}
    config = job_config(path)
    overrides = _yaml(path / ".hydra" / "overrides.yaml")
    overrides = [str(o) for o in overrides] if isinstance(overrides, list) else []
    cases = read_jsonl(path / "cases.jsonl")
    views = read_jsonl(path / "views.jsonl")
    answers = read_jsonl(path / "answers.jsonl")
    scores = read_jsonl(path / "scores.jsonl")
    arm = run.get("arm") or (config.get("arm") or {}).get("name")
    reference = read_jsonl(path / "reference_scores.jsonl")
    if arm == "full":
        full_correct = {s["qid"] for s in scores if s.get("verdict") == "correct"}
    elif reference:
        latest = {s["qid"]: s for s in reference}  # a resumed job's later line wins
        full_correct = {qid for qid, s in latest.items() if s.get("verdict") == "correct"}
    else:
        full_correct = None
    metrics = compute_metrics(cases, views, answers, scores, full_correct)
    stored = _json(path / "metrics.json")
    problems = []
    if run.get("status") == "failed":
        problems.append(f"failed: {run.get('error') or 'no error recorded'}")
    elif run.get("status") != "complete":
        problems.append(f"run.json status {run.get('status', 'missing')!r}")
    if stored is None and run.get("status") != "failed":
        problems.append("no metrics.json")
    if metrics["n_scored"] < metrics["n_questions"]:
        problems.append(f"{metrics['n_questions'] - metrics['n_scored']} of "
                        f"{metrics['n_questions']} questions unscored")
    status = "incomplete" if problems else "complete"
    if status == "complete" and stored and stored.get("accuracy") != metrics["accuracy"]:
        log.warning("%s: metrics.json accuracy %s differs from the records' %s (using the records)",
                    path, stored.get("accuracy"), metrics["accuracy"])
    return Job(path=path, run=run, config=config, overrides=overrides, metrics=metrics,
               stored_metrics=stored, cases=cases, views=views, answers=answers, scores=scores,
               status=status, problems=problems)


def load_jobs(paths: Iterable[Path | str]) -> list[Job]:
    """Jobs ordered by config (see :func:`_config_order`), seeds together, each with a readable config label."""
    jobs = [load_job(p) for p in find_job_dirs(paths)]
    shared = _assign_labels(jobs)
    for job in jobs:
        job.shared = shared
    first: dict[str, tuple] = {}
    for job in sorted(jobs, key=_sweep_position):
        first.setdefault(job.config_id, _sweep_position(job))
    jobs.sort(key=lambda j: (*_config_order(j), first[j.config_id], j.label, _seed_key(j.seed), str(j.path)))
    return jobs


def _config_order(job: Job) -> tuple:
    """Arm (full, nlatest, compact), N, the mechanism chain, the prompt list: the study's reading order."""
    arm_cfg = job.config.get("arm") or {}
    try:
        n = float(arm_cfg.get("n")) if arm_cfg.get("n") is not None else math.inf
    except (TypeError, ValueError):
        n = math.inf
    compact = job.arm == "compact" or arm_cfg.get("match") == "compact"
    mechanism = (job.config.get("mechanism") or {}).get("name") if compact else None
    prompt = (job.config.get("prompt") or {}).get("name") if compact else None
    return (ARM_ORDER.get(job.arm, 9), arm_cfg.get("match") is not None, n,
            MECHANISM_ORDER.get(mechanism, len(MECHANISM_ORDER)), PROMPT_ORDER.get(prompt, len(PROMPT_ORDER)))


def _sweep_position(job: Job) -> tuple:
    """Where the job stands in its sweep (sweep directory, Hydra's job number): the grid's own order."""
    hydra = _yaml(job.path / ".hydra" / "hydra.yaml") if (job.path / ".hydra" / "hydra.yaml").exists() else None
    num = ((hydra or {}).get("hydra") or {}).get("job", {}).get("num") if isinstance(hydra, dict) else None
    return (str(job.path.parent), num if isinstance(num, int) else math.inf, str(job.path))


def _seed_key(seed: Any) -> tuple:
    return (0, float(seed), "") if isinstance(seed, (int, float)) else (1, 0.0, str(seed))


def _assign_labels(jobs: list[Job]) -> list[str]:
    """Label = the job's overrides without the seed; else the config keys that differ."""
    identities = [j.identity for j in jobs]
    keys = sorted({k for ident in identities for k in ident})
    varying = [k for k in keys if len({json.dumps(i.get(k), sort_keys=True, default=str)
                                         for i in identities}) > 1]
    named = {k.rsplit(".", 1)[0] for k in varying if k.endswith(".name")}
    varying = [k for k in varying
               if k.endswith(".name") or not any(k.startswith(g + ".") for g in named)]
    own = [job.label_overrides() for job in jobs]
    # overrides every job shares (model=..., dataset=...) do not tell configs apart: dropped,
    # unless all jobs are one config
    common = set.intersection(*map(set, own)) if len({tuple(o) for o in own}) > 1 else set()
    for job, mine in zip(jobs, own, strict=True):
        parts = [p for p in mine if p not in common]
        if not mine:
            ident = job.identity
            parts = [f"{k.removesuffix('.name')}={_short(ident.get(k))}" for k in varying[:5]
                     if k not in ("arm.name", "arm._target_")]
            parts = [f"arm={job.arm}"] + parts
        prefix = f"{job.experiment}: " if job.experiment else ""
        job.label = prefix + (",".join(parts) if parts else f"arm={job.arm}")
    return sorted(common)


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return text if len(text) <= 24 else text[:21] + "..."


# ---------------------------------------------------------------- frames


def _calls_numbers(path: Path) -> dict[str, Any] | None:
    """Latency and tokens of the job's model calls (``calls.jsonl``), as ``metrics.json`` sums them."""
    records = read_jsonl(path / "calls.jsonl")
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
    uses_compact = job.arm == "compact" or arm_cfg.get("match") == "compact"  # matched N latest too
    row: dict[str, Any] = {
        "job": job.name,
        "config": job.label,
        "config_id": job.config_id,
        "experiment": job.experiment,
        "arm": job.arm,
        "n": arm_cfg.get("n"),
        "match": arm_cfg.get("match"),
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
    row.update({
        "accuracy_relative_to_full": m.get("accuracy_relative_to_full"),
        "accuracy_relative_to_full_ci": _interval(m.get("accuracy_relative_to_full_ci")),
        "n_full_correct": m.get("n_full_correct"),
        "confidently_wrong_rate": m["confidently_wrong_rate"],
        "abstain_rate": m["abstain_rate"],
        "correct": m["verdicts"]["correct"],
        "wrong": m["verdicts"]["wrong"],
        "abstained": m["verdicts"]["abstained"],
        "unscored": m["verdicts"]["unscored"],
        "evidence_visible_rate": m.get("evidence_visible_rate"),
        "evidence_recoverable_rate": m.get("evidence_recoverable_rate"),
    })
    for qtype, flags in (m.get("evidence_by_type") or {}).items():
        row[f"visible.{qtype}"] = flags["visible"]
        row[f"recoverable.{qtype}"] = flags["recoverable"]
    row.update({
        "mean_kept_tokens": m.get("mean_kept_tokens"),
        "mean_full_tokens": m.get("mean_full_tokens"),
        "tokens_kept_ratio": m.get("tokens_kept_ratio"),
        "mean_kept_messages": m.get("mean_kept_messages"),
        "summarizer_calls": m.get("summarizer_calls"),
        "retrievals": m["retrievals"],
        "context_overflow": m["outcomes"].get("context_overflow", 0),
        "errors": m["outcomes"].get("error", 0),
    })
    row.update(_calls_numbers(job.path) or _usage_numbers(job.answers))
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
    "accuracy", "accuracy_relative_to_full", "confidently_wrong_rate", "abstain_rate",
    "evidence_visible_rate", "evidence_recoverable_rate", "mean_kept_tokens", "tokens_kept_ratio",
    "summarizer_calls", "retrievals", "latency_s", "tokens_spent",
)


def _metric_columns(frame: pd.DataFrame) -> list[str]:
    per_type = [c for c in frame.columns if c.startswith(("acc.", "visible.", "recoverable."))]
    return [c for c in (*SUMMARY_METRICS, *per_type) if c in frame.columns]


def configs_frame(jobs_df: pd.DataFrame) -> pd.DataFrame:
    """One row per config: mean/min/max over the complete jobs' seeds; incomplete ones named."""
    if jobs_df.empty:
        return pd.DataFrame()
    metrics = _metric_columns(jobs_df)
    rows = []
    for config_id, group in jobs_df.groupby("config_id", sort=False):
        done = group[group["status"] == "complete"]
        first = group.iloc[0]
        row: dict[str, Any] = {
            "config": first["config"], "config_id": config_id, "experiment": first["experiment"],
            "arm": first["arm"], "n": first["n"], "match": first["match"], "prompt": first["prompt"],
            "mechanism": first["mechanism"],
            "n_jobs": len(group), "n_complete": len(done),
            "seeds": ",".join(str(s) for s in done["seed"].tolist()),
            "incomplete": ", ".join(group.loc[group["status"] != "complete", "job"].tolist()),
            "n_questions": int(done["n_questions"].max()) if len(done) else None,
        }
        for metric in metrics:
            values = pd.to_numeric(done[metric], errors="coerce").dropna()
            row[f"{metric}.mean"] = round(float(values.mean()), 4) if len(values) else None
            row[f"{metric}.min"] = round(float(values.min()), 4) if len(values) else None
            row[f"{metric}.max"] = round(float(values.max()), 4) if len(values) else None
        rows.append(row)
    frame = pd.DataFrame(rows)
    frame["_order"] = range(len(frame))
    frame["_arm"] = frame["arm"].map(lambda a: ARM_ORDER.get(a, 9))
    frame["_n"] = pd.to_numeric(frame["n"], errors="coerce")
    frame = frame.sort_values(["_arm", "_n", "_order"], na_position="last")
    frame = frame.drop(columns=["_order", "_arm", "_n"]).reset_index(drop=True)
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
    """One row per job and question: verdict (``missing`` if unscored), reason, evidence."""
    rows = []
    for job in jobs:
        verdicts = {s["qid"]: s for s in job.scores}
        outcomes = {a["qid"]: a.get("outcome", "answered") for a in job.answers}
        flags = {qid: f for v in job.views for qid, f in (v.get("evidence") or {}).items()}
        for case in job.cases:
            for question in case["questions"]:
                qid = question["qid"]
                score = verdicts.get(qid) or {}
                rows.append({
                    "job": job.name, "path": str(job.path), "config": job.label, "config_id": job.config_id,
                    "arm": job.arm, "seed": job.seed, "case_id": case["case_id"], "qid": qid,
                    "type": question["type"], "verdict": score.get("verdict", "missing"),
                    "reason": score.get("reason"), "judge": score.get("judge"),
                    "outcome": outcomes.get(qid),
                    "visible": (flags.get(qid) or {}).get("visible"),
                    "recoverable": (flags.get(qid) or {}).get("recoverable"),
                })
    return pd.DataFrame(rows)


# ---------------------------------------------------------------- CSV

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")  # a spreadsheet runs such a cell as a formula


def _cell(value: Any) -> Any:
    return "'" + value if isinstance(value, str) and value.startswith(_FORMULA_START) else value


def csv_safe(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy whose text cells (and headers) starting with ``= + - @`` (tab, CR) get a leading ``'``."""
    out = frame.copy()
    for column in out.columns:
        if not (pd.api.types.is_numeric_dtype(out[column]) or pd.api.types.is_bool_dtype(out[column])):
            out[column] = out[column].map(_cell)
    out.columns = [_cell(c) for c in out.columns]
    return out


def write_csv(frame: pd.DataFrame, path: Path | str) -> None:
    """CSV with formula-like cells escaped; text a UTF-8 file cannot hold (lone surrogates) as ``\\udxxx``."""
    csv_safe(frame).to_csv(path, index=False, errors="backslashreplace")


# ---------------------------------------------------------------- text output


def _fmt(value: Any, pct: bool = False) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if pct:
        return f"{100 * value:.1f}%"
    if isinstance(value, float):
        if value == int(value):
            return f"{int(value):,}"
        return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"  # 1,483, not 1,483.3
    return str(value)


def _range(row: pd.Series | dict, metric: str, pct: bool = False) -> str:
    mean, low, high = (row.get(f"{metric}.{s}") for s in ("mean", "min", "max"))
    if mean is None or (isinstance(mean, float) and math.isnan(mean)):
        return "–"
    text = _fmt(mean, pct)
    if low is not None and high is not None and low != high:
        text += f" [{_fmt(low, pct)}–{_fmt(high, pct)}]"
    return text


PCT_METRICS = {"accuracy", "accuracy_relative_to_full", "confidently_wrong_rate", "abstain_rate",
               "evidence_visible_rate", "evidence_recoverable_rate", "tokens_kept_ratio"}
TABLE_COLUMNS = (  # (metric, header)
    ("accuracy", "accuracy"), ("accuracy_relative_to_full", "rel. full"),
    ("confidently_wrong_rate", "conf. wrong"), ("abstain_rate", "abstain"),
    ("evidence_visible_rate", "ev. visible"), ("evidence_recoverable_rate", "ev. recoverable"),
    ("mean_kept_tokens", "tokens kept"), ("tokens_kept_ratio", "kept ratio"),
    ("summarizer_calls", "summ. calls"), ("retrievals", "retrievals"),
    ("latency_s", "latency s"), ("tokens_spent", "tokens spent"),
)


def summary_table(configs: pd.DataFrame) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the readable config table: mean [min–max] over seeds."""
    if configs.empty:
        return ["config"], []
    types = sorted({c.split(".")[1] for c in configs.columns if c.startswith("acc.") and c.endswith(".mean")})
    header = ["config", "arm", "seeds", *[h for _, h in TABLE_COLUMNS], *[f"acc {t}" for t in types]]
    rows = []
    for _, row in configs.iterrows():
        seeds = f"{row['n_complete']}/{row['n_jobs']}"
        if row["incomplete"]:
            seeds += " ⚠"
        arm = str(row["arm"]) + (f" (match {row['match']})" if isinstance(row.get("match"), str) else "")
        cells = [str(row["config"]), arm, seeds]
        cells += [_range(row, metric, metric in PCT_METRICS) for metric, _ in TABLE_COLUMNS]
        cells += [_range(row, f"acc.{t}", True) for t in types]
        rows.append(cells)
    return header, rows


def markdown_table(header: list[str], rows: list[list[str]]) -> str:
    def cell(text: Any) -> str:
        return str(text).replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(cell(h) for h in header) + " |",
             "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def report_markdown(jobs: list[Job], configs: pd.DataFrame) -> str:
    header, rows = summary_table(configs)
    lines = [f"{len(jobs)} job(s), {len(configs)} config(s); values are mean [min–max] over the "
             "seeds of complete jobs."]
    if jobs and jobs[0].shared:
        lines.append(f"Overrides shared by every job: `{' '.join(jobs[0].shared)}`.")
    lines += ["", markdown_table(header, rows)]
    incomplete = [j for j in jobs if not j.complete]
    if incomplete:
        lines += ["", f"**{len(incomplete)} incomplete job(s), not averaged:**"]
        lines += [f"- `{j.path}`: {'; '.join(j.problems)}" for j in incomplete]
    hashes = {j.run.get("case_set_hash") for j in jobs} - {None}  # a failed job may have none
    if len(hashes) > 1:
        lines += ["", f"Note: the jobs ran on {len(hashes)} different case sets ({', '.join(map(str, hashes))})."]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- plots


def _svg(fig) -> str:
    import matplotlib.pyplot as plt

    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", bbox_inches="tight")
    plt.close(fig)
    text = buffer.getvalue()
    return text[text.find("<svg"):]


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({"svg.fonttype": "none", "font.size": 9})
    return plt


_ARM_MARKERS = {"full": ("s", "#333333"), "nlatest": ("o", "#1f77b4"), "compact": ("D", "#d62728")}


def _err(row: pd.Series, metric: str) -> tuple[float, float]:
    mean, low, high = (row.get(f"{metric}.{s}") for s in ("mean", "min", "max"))
    if mean is None or low is None or high is None or any(map(_nan, (mean, low, high))):
        return 0.0, 0.0
    return max(mean - low, 0.0), max(high - mean, 0.0)


def _nan(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def plot_tradeoff(configs: pd.DataFrame) -> str | None:
    """Accuracy relative to full (y) vs share of the history's tokens kept (x), per config."""
    data = configs.dropna(subset=["tokens_kept_ratio.mean"]) if "tokens_kept_ratio.mean" in configs else configs[:0]
    y_metric = "accuracy_relative_to_full"
    if data.empty or f"{y_metric}.mean" not in data or data[f"{y_metric}.mean"].isna().all():
        y_metric = "accuracy"
        if data.empty or data.get(f"{y_metric}.mean") is None:
            return None
    data = data.dropna(subset=[f"{y_metric}.mean"])
    if data.empty:
        return None
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    points: list[tuple[float, float, str]] = []
    groups = data["arm"].where(data["match"].isna(), data["arm"] + " matched to " + data["match"].astype(str))
    for arm, group in data.groupby(groups, sort=False):
        marker, colour = _ARM_MARKERS.get(arm, ("^", "#2ca02c"))
        xs = group["tokens_kept_ratio.mean"].astype(float)
        ys = group[f"{y_metric}.mean"].astype(float)
        xerr = list(zip(*[_err(r, "tokens_kept_ratio") for _, r in group.iterrows()], strict=True))
        yerr = list(zip(*[_err(r, y_metric) for _, r in group.iterrows()], strict=True))
        ax.errorbar(xs, ys, xerr=xerr, yerr=yerr, fmt=marker, color=colour, label=arm, capsize=3,
                    markersize=7, alpha=0.9)
        points.extend((x, y, _plot_label(row)) for (_, row), x, y in zip(group.iterrows(), xs, ys, strict=True))
    _annotate(ax, points)
    ax.set_xlabel("tokens kept (share of the full history, mean over cases)")
    ax.set_ylabel("accuracy relative to full" if y_metric != "accuracy" else "accuracy")
    ax.set_xlim(0, 1.05)
    ax.set_ylim(-0.03, 1.05)
    ax.grid(alpha=0.3)
    ax.legend(title="arm", loc="lower right")
    ax.set_title("What each config keeps vs what it still answers (bars: min–max over seeds)")
    return _svg(fig)


def _plot_label(row: pd.Series) -> str:
    label = str(row.get("short") or row["config"])
    label = label.split(": ", 1)[-1]
    return label if len(label) <= 40 else label[:37] + "..."


def short_labels(configs: pd.DataFrame) -> list[str]:
    """Config labels without the overrides every config shares, keys shortened (arm.n=10 -> n=10)."""
    parts = [str(c).split(": ", 1)[-1].split(",") for c in configs["config"]]
    common = set.intersection(*map(set, parts)) if len(parts) > 1 else set()
    out = []
    for items, arm in zip(parts, configs["arm"], strict=True):
        kept = [p for p in items if p not in common]
        kept = [f"{k.rsplit('.', 1)[-1]}={v}" if "=" in p else p
                for p in kept for k, _, v in [p.partition("=")]]
        out.append(",".join(kept) or str(arm))
    return out


def _annotate(ax, points: list[tuple[float, float, str]], step: float = 0.035) -> None:
    """Labels right of their points, moved up (with a leader line) until no two overlap."""
    placed: list[tuple[float, float]] = []
    for x, y, text in sorted(points, key=lambda p: (p[1], p[0])):
        lx, ly = x + 0.012, y + 0.012
        while any(abs(px - lx) < 0.16 and abs(py - ly) < step for px, py in placed):
            ly += step
        placed.append((lx, ly))
        moved = ly - y > 0.02
        ax.annotate(text, (x, y), xytext=(lx, ly), textcoords="data", fontsize=7, va="bottom",
                    arrowprops={"arrowstyle": "-", "color": "#999", "lw": 0.5} if moved else None)


def plot_types(configs: pd.DataFrame) -> str | None:
    """Grouped bars: accuracy per question type for each config, min–max whiskers."""
    types = sorted({c.split(".")[1] for c in configs.columns if c.startswith("acc.") and c.endswith(".mean")})
    if configs.empty or not types:
        return None
    plt = _plt()
    n_cfg = len(configs)
    width = 0.8 / max(n_cfg, 1)
    fig, ax = plt.subplots(figsize=(max(7.5, 1.6 * len(types) + 0.25 * n_cfg), 4.5))
    cmap = plt.get_cmap("tab20" if n_cfg > 10 else "tab10")
    for i, (_, row) in enumerate(configs.iterrows()):
        means = [row.get(f"acc.{t}.mean") for t in types]
        heights = [0.0 if _nan(m) else float(m) for m in means]
        errs = list(zip(*[_err(row, f"acc.{t}") for t in types], strict=True))
        xs = [k + (i - (n_cfg - 1) / 2) * width for k in range(len(types))]
        colour = cmap(i % cmap.N)
        ax.bar(xs, heights, width=width, yerr=errs, capsize=2, color=colour,
               label=_plot_label(row), edgecolor="white", linewidth=0.5)
        # a measured 0 is a flat mark in the config's colour; no data at all is "n/a" (no bar)
        for x, mean in zip(xs, means, strict=True):
            if _nan(mean):
                ax.text(x, 0.01, "n/a", ha="center", va="bottom", fontsize=6, rotation=90, color="#777777",
                        gid="no-data")
            elif float(mean) == 0.0:
                ax.plot([x - width * 0.45, x + width * 0.45], [0.004, 0.004], color=colour, linewidth=3,
                        solid_capstyle="butt", gid="zero-bar")
    ax.set_xticks(range(len(types)))
    ax.set_xticklabels(types)
    ax.set_ylabel("accuracy")
    ax.set_ylim(0, 1.08)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=7, ncol=2 if n_cfg > 6 else 1, bbox_to_anchor=(1.01, 1), loc="upper left")
    ax.set_title("Accuracy per question type (mean over seeds, whiskers: min–max; flat mark: 0, n/a: no data)")
    return _svg(fig)


def plot_n_curve(configs: pd.DataFrame) -> str | None:
    """The N-latest curve: accuracy and accuracy relative to full against N."""
    data = configs[(configs["arm"] == "nlatest") & configs["n"].notna()]
    if "match" in data:
        data = data[data["match"].isna()]
    if len(data) < 2:
        return None
    data = data.assign(_n=pd.to_numeric(data["n"], errors="coerce").astype(float)).sort_values("_n")
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for metric, colour, label in (("accuracy", "#1f77b4", "accuracy"),
                                  ("accuracy_relative_to_full", "#d62728", "relative to full"),
                                  ("evidence_visible_rate", "#7f7f7f", "evidence visible")):
        if f"{metric}.mean" not in data or data[f"{metric}.mean"].isna().all():
            continue
        ax.plot(data["_n"], data[f"{metric}.mean"].astype(float), marker="o", color=colour, label=label,
                linestyle="--" if metric == "evidence_visible_rate" else "-")
        ax.fill_between(data["_n"], data[f"{metric}.min"].astype(float), data[f"{metric}.max"].astype(float),
                        color=colour, alpha=0.15)
    full = configs[configs["arm"] == "full"]
    if _has_full(configs):
        ax.axhline(float(full.iloc[0]["accuracy.mean"]), color="#333333", linestyle=":", label="full arm accuracy")
    ax.set_xscale("log", base=2)
    ax.set_xticks(data["_n"].tolist())
    ax.set_xticklabels([str(int(n)) for n in data["_n"]])
    ax.set_xlabel("N (latest messages kept)")
    ax.set_ylim(-0.03, 1.05)
    ax.grid(alpha=0.3)
    ax.legend()
    ax.set_title("N latest: accuracy against N (band: min–max over seeds)")
    return _svg(fig)


def _has_full(configs: pd.DataFrame) -> bool:
    """A full-arm config with a measured accuracy is in the report (only then is it drawn and named)."""
    if configs.empty or "arm" not in configs:
        return False
    full = configs[configs["arm"] == "full"]
    return not full.empty and "accuracy.mean" in full and not _nan(full.iloc[0].get("accuracy.mean"))


def outcome_grid_html(questions: pd.DataFrame, jobs: list[Job], max_jobs: int = 80) -> str:
    """Questions (rows) x jobs (columns), coloured by verdict; hover shows the judge's reason."""
    if questions.empty:
        return "<p>No question.</p>"
    shown = jobs[:max_jobs]
    cells = {(r.path, r.qid): r for r in questions.itertuples()}
    qids = list(dict.fromkeys(questions["qid"]))
    out = ['<div class="grid"><table class="outcomes"><thead><tr><th>question</th>']
    for job in shown:
        title = html.escape(f"{job.label} seed={job.seed} ({job.status})")
        mark = "" if job.complete else " ⚠"
        out.append(f'<th class="rot" title="{title}"><div>{html.escape(_plot_label(pd.Series({"config": job.label})))}'
                   f" s{html.escape(str(job.seed))}{mark}</div></th>")
    out.append("</tr></thead><tbody>")
    for qid in qids:
        out.append(f"<tr><td class='qid'>{html.escape(qid)}</td>")
        for job in shown:
            row = cells.get((str(job.path), qid))
            verdict = row.verdict if row is not None else "missing"
            symbol, colour = VERDICT_STYLE.get(verdict, ("", "#fff"))
            tip = verdict
            if row is not None and isinstance(row.reason, str):
                tip += f": {row.reason}"
            if row is not None and row.visible is not None and not _nan(row.visible):
                tip += f" | evidence visible={bool(row.visible)} recoverable={bool(row.recoverable)}"
            out.append(f'<td style="background:{colour}" title="{html.escape(tip)}">{symbol}</td>')
        out.append("</tr>")
    out.append("</tbody></table></div>")
    if len(jobs) > max_jobs:
        out.append(f"<p>First {max_jobs} of {len(jobs)} jobs shown; all are in questions.csv.</p>")
    legend = " ".join(f'<span class="chip" style="background:{c}">{s or "&nbsp;"}</span> {v}'
                      for v, (s, c) in VERDICT_STYLE.items())
    return f"<p>{legend}</p>" + "".join(out)


# ---------------------------------------------------------------- HTML


_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:24px;color:#222;max-width:1400px}
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.8em;border-bottom:1px solid #ddd}
table{border-collapse:collapse;font-size:12px;margin:8px 0}
th,td{border:1px solid #ddd;padding:3px 6px;text-align:right;white-space:nowrap}
th{background:#f4f4f4}td:first-child,th:first-child{text-align:left}
.warn{background:#fff3cd;border:1px solid #e0c36a;padding:8px 12px;border-radius:4px}
.incomplete td{background:#fff3cd}
.grid,.scroll{overflow-x:auto;max-width:100%}svg{max-width:100%;height:auto}.outcomes td{text-align:center;padding:1px 4px;min-width:14px}
.outcomes td.qid{text-align:left;font-family:monospace;font-size:11px}
th.rot{height:150px;vertical-align:bottom;padding:2px}
th.rot div{writing-mode:vertical-rl;transform:rotate(180deg);font-weight:normal;font-size:11px}
.chip{display:inline-block;width:16px;text-align:center;border:1px solid #ccc}
.small{color:#666;font-size:12px}
"""


def _html_table(header: list[str], rows: list[list[str]], flagged: list[bool] | None = None) -> str:
    """A table inside a box that scrolls sideways when the table is wider than the page."""
    out = ['<div class="scroll"><table><thead><tr>', *[f"<th>{html.escape(h)}</th>" for h in header],
           "</tr></thead><tbody>"]
    for i, row in enumerate(rows):
        cls = ' class="incomplete"' if flagged and flagged[i] else ""
        out.append(f"<tr{cls}>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in row) + "</tr>")
    out.append("</tbody></table></div>")
    return "".join(out)


def report_html(jobs: list[Job], jobs_df: pd.DataFrame, configs: pd.DataFrame, questions: pd.DataFrame,
                sources: list[str]) -> str:
    header, rows = summary_table(configs)
    flagged = [bool(r) for r in configs["incomplete"]] if not configs.empty else []
    parts = [
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>bench report</title>",
        f"<style>{_CSS}</style></head><body>",
        "<h1>Context-compaction benchmark report</h1>",
        f"<p class='small'>Generated {datetime.now(UTC).isoformat(timespec='seconds')} from "
        f"{html.escape(', '.join(sources))}: {len(jobs)} job(s), {len(configs)} config(s). "
        "Values are mean [min–max] over the seeds of complete jobs.</p>",
    ]
    if jobs and jobs[0].shared:
        parts.append(f"<p class='small'>Overrides shared by every job: <code>{html.escape(' '.join(jobs[0].shared))}"
                     "</code></p>")
    incomplete = [j for j in jobs if not j.complete]
    if incomplete:
        items = "".join(f"<li><code>{html.escape(str(j.path))}</code>: {html.escape('; '.join(j.problems))}</li>"
                        for j in incomplete)
        parts.append(f"<div class='warn'><b>{len(incomplete)} incomplete job(s)</b> are listed but not "
                     f"averaged (rows marked ⚠):<ul>{items}</ul></div>")
    hashes = sorted({str(j.run.get("case_set_hash")) for j in jobs if j.run.get("case_set_hash")})
    if len(hashes) > 1:
        parts.append(f"<div class='warn'>The jobs ran on {len(hashes)} different case sets "
                     f"({html.escape(', '.join(hashes))}): compare configs within one case set.</div>")
    parts += ["<h2>Configs</h2>", _html_table(header, rows, flagged)]
    plots = (
        ("Accuracy relative to full vs tokens kept", plot_tradeoff(configs),
         "One point per config (marker per arm); x: share of the full history's tokens the view keeps, "
         "y: share of the questions the full arm answers that this config still answers."),
        ("Accuracy per question type", plot_types(configs), ""),
        ("The N curve", plot_n_curve(configs) if not configs.empty else None,
         "N latest messages kept (arm=nlatest) against accuracy"
         + ("; dotted: the full arm." if _has_full(configs) else
            " (no full-arm job in this report: relative to full uses each job's own full reference).")),
    )
    for title, svg, note in plots:
        if svg:
            parts += [f"<h2>{html.escape(title)}</h2>", f"<p class='small'>{html.escape(note)}</p>" if note else "",
                      svg]
    parts += ["<h2>Per-question outcomes</h2>",
              "<p class='small'>Rows: questions; columns: jobs. Hover a cell for the judge's reason and "
              "the evidence flags.</p>", outcome_grid_html(questions, jobs)]
    job_cols = ["job", "config", "seed", "status", "accuracy", "accuracy_relative_to_full",
                "confidently_wrong_rate", "abstain_rate", "evidence_visible_rate", "mean_kept_tokens",
                "summarizer_calls", "retrievals", "latency_s", "tokens_spent", "problems"]
    job_cols = [c for c in job_cols if c in jobs_df.columns]
    job_rows = [[_fmt(r[c], c in PCT_METRICS) if c not in ("job", "config", "seed", "status", "problems")
                 else ("" if _nan(r[c]) else str(r[c])) for c in job_cols] for _, r in jobs_df.iterrows()]
    parts += ["<h2>Jobs</h2>", _html_table(job_cols, job_rows, [s != "complete" for s in jobs_df["status"]]),
              "<p class='small'>All columns are in jobs.csv; per-question rows in questions.csv.</p>",
              "</body></html>"]
    return "\n".join(p for p in parts if p)


# ---------------------------------------------------------------- entry points


def write_report(paths: Iterable[Path | str], output: Path | str | None = None) -> dict[str, Any]:
    """Load the jobs under ``paths`` and write the CSVs, ``report.md`` and ``report.html``."""
    paths = [Path(p) for p in paths]
    jobs = load_jobs(paths)
    if output is None:
        output = paths[0] / "report" if len(paths) == 1 else Path("multirun") / "reports" / datetime.now().strftime(
            "%Y-%m-%d_%H-%M-%S")
    output = Path(output)
    output.mkdir(parents=True, exist_ok=True)
    jobs_df = jobs_frame(jobs)
    configs = configs_frame(jobs_df)
    questions = questions_frame(jobs)
    types = types_frame(configs) if not configs.empty else pd.DataFrame()
    write_csv(jobs_df, output / "jobs.csv")
    write_csv(configs, output / "configs.csv")
    write_csv(types, output / "types.csv")
    write_csv(questions, output / "questions.csv")
    markdown = report_markdown(jobs, configs)
    (output / "report.md").write_text(markdown, encoding="utf-8", errors="backslashreplace")
    (output / "report.html").write_text(
        report_html(jobs, jobs_df, configs, questions, [str(p) for p in paths]), encoding="utf-8",
        errors="backslashreplace")
    log.info("report of %d job(s) written to %s", len(jobs), output)
    return {"output": output, "jobs": jobs, "jobs_df": jobs_df, "configs": configs, "markdown": markdown}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.report", description=__doc__.split("\n\n")[0])
    parser.add_argument("dirs", nargs="+", help="sweep directories and/or job directories")
    parser.add_argument("--output", "-o", help="report directory (default: DIR/report for one DIR, "
                        "else multirun/reports/<date>_<time>)")
    args = parser.parse_intermixed_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    if not find_job_dirs(args.dirs):
        print(f"error: no job directory (with run.json) under {' '.join(args.dirs)}", file=sys.stderr)
        return 2
    result = write_report(args.dirs, args.output)
    print(result["markdown"])
    print(f"written: {result['output']}/report.html, jobs.csv, configs.csv, types.csv, questions.csv, report.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
