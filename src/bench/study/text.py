"""The study's text: formatting of numbers and ranges, the config table, markdown.

    header, rows = summary_table(configs)
    print(report_markdown(jobs, configs))
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from bench.study.jobs import Job

__all__ = ["is_missing", "short_labels", "PCT_METRICS", "TABLE_COLUMNS", "summary_table", "markdown_table", "report_markdown", "fmt", "value_range"]

# ---------------------------------------------------------------- text output


def fmt(value: Any, pct: bool = False) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if pct:
        return f"{100 * value:.1f}%"
    if isinstance(value, float):
        if value == int(value):
            return f"{int(value):,}"
        return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"  # 1,483, not 1,483.3
    return str(value)


def value_range(row: pd.Series | dict, metric: str, pct: bool = False) -> str:
    mean, low, high = (row.get(f"{metric}.{s}") for s in ("mean", "min", "max"))
    if mean is None or (isinstance(mean, float) and math.isnan(mean)):
        return "–"
    text = fmt(mean, pct)
    if low is not None and high is not None and low != high:
        text += f" [{fmt(low, pct)}–{fmt(high, pct)}]"
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
        cells += [value_range(row, metric, metric in PCT_METRICS) for metric, _ in TABLE_COLUMNS]
        cells += [value_range(row, f"acc.{t}", True) for t in types]
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


def is_missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


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
