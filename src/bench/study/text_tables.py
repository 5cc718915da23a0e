"""The report's tables as text: header and rows of cells for the config table, the distances, the
compactions, type x depth, the paired comparisons and the frontier's data; and one table in markdown.

    header, rows = summary_table(configs)
    print(markdown_table(header, rows))
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from bench.scoring.question_groups import DISTANCE_BUCKETS
from bench.study.figure_text import (
    budget_text,
    detectable_text,
    difference_interval_text,
    fmt,
    interval_text,
    is_lower_bound,
    is_missing,
    pct_text,
    value_range,
)

__all__ = ["PCT_METRICS", "TABLE_COLUMNS", "DISTANCE_LABELS", "summary_table", "distance_table", "compactions_table",
           "depth_table", "pairs_table", "frontier_table", "markdown_table", "case_set_title"]

PCT_METRICS = {"accuracy", "accuracy_relative_to_full", "accuracy_above_none", "confidently_wrong_rate", "hedged_wrong_rate",
               "detectable_difference", "abstain_rate",
               "evidence_visible_rate", "evidence_recoverable_rate", "tokens_kept_ratio", "budget_target_share",
               "budget_realized_share"}
TABLE_COLUMNS = (  # (metric, header); accuracy and rel. full are followed by their 95% interval
    ("accuracy", "accuracy"), ("accuracy_relative_to_full", "rel. full"), ("accuracy_above_none", "above none"),
    ("confidently_wrong_rate", "conf. wrong"), ("hedged_wrong_rate", "hedged wrong"), ("abstain_rate", "abstain"),
    ("evidence_visible_rate", "ev. visible"), ("evidence_recoverable_rate", "ev. recoverable"),
    ("mean_kept_tokens", "tokens kept"), ("tokens_kept_ratio", "kept ratio"),
    ("summarizer_calls", "summ. calls"), ("retrievals", "retrievals"),
    ("latency_s", "latency s"), ("tokens_spent", "tokens spent"), ("cost_usd", "cost $"),
    ("estimated_cost_usd", "est. cost $"), ("stale", "stale"),
)


def summary_table(configs: pd.DataFrame) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the readable config table: mean [min–max] over seeds."""
    if configs.empty:
        return ["config"], []
    types = sorted({c.split(".")[1] for c in configs.columns if c.startswith("acc.") and c.endswith(".mean")})
    budgeted = "budget" in configs and configs["budget"].notna().any()
    header = ["config", "arm", "seed ids", "in task text"]
    if budgeted:  # arm.budget: what each config was allowed and what it kept (views > 20% over their target)
        header += ["budget", "target share", "realized share", "views >20% over"]
    for _, name in TABLE_COLUMNS:
        header += [name, f"{name} 95% CI"] if name in ("accuracy", "rel. full") else [name]
    header += ["detectable Δ"]  # smallest accuracy difference this case set detects (80% power, 5% level)
    header += [f"acc {t}" for t in types]
    rows = []
    for _, row in configs.iterrows():
        seeds = f"{row['n_complete']}/{row['n_jobs']}"
        if row["incomplete"]:
            seeds += " ⚠"
        arm = str(row["arm"]) + (f" (match {row['match']})" if isinstance(row.get("match"), str) else "")
        if is_lower_bound(row):
            arm += " (stand-in summary: lower bound)"
        cells = [str(row["config"]), arm, seeds, fmt(row.get("n_in_task_text"))]
        if budgeted:
            cells += [budget_text(row.get("budget")), value_range(row, "budget_target_share", True),
                      value_range(row, "budget_realized_share", True), value_range(row, "budget_n_over")]
        for metric, _ in TABLE_COLUMNS:
            cells.append(value_range(row, metric, metric in PCT_METRICS))
            if metric in ("accuracy", "accuracy_relative_to_full"):
                cells.append(interval_text(row.get(f"{metric}.ci_low"), row.get(f"{metric}.ci_high"),
                                           row.get("interval_method")))
        cells.append(detectable_text(row.get("detectable_difference"), row.get("n_clusters")))
        cells += [value_range(row, f"acc.{t}", True) for t in types]
        rows.append(cells)
    return header, rows


DISTANCE_LABELS = tuple(label for label, _, _ in DISTANCE_BUCKETS)


def distance_table(configs: pd.DataFrame) -> tuple[list[str], list[list[str]]]:
    """Accuracy and evidence visible by tokens back to the latest evidence, per config."""
    buckets = [b for b in DISTANCE_LABELS if f"dist.{b}.mean" in configs.columns]
    header = ["config", *[f"acc {b}" for b in buckets], *[f"visible {b}" for b in buckets]]
    rows = [[str(row["short"]), *[value_range(row, f"dist.{b}", True) for b in buckets],
             *[value_range(row, f"distvis.{b}", True) for b in buckets]] for _, row in configs.iterrows()]
    return header, rows


def compactions_table(configs: pd.DataFrame) -> tuple[list[str], list[list[str]]]:
    """Natural-trigger compaction per config: the window, compactions per case, evidence that
    survived every compaction of its case, accuracy overall and by the case's compactions."""
    counts = sorted({c.split(".")[1] for c in configs.columns if c.startswith("ncomp.") and c.endswith(".mean")},
                    key=int)
    header = ["config", "context window", "compactions/case", "max", "tokens kept", "ev. survived",
              "accuracy", "rel. full", *[f"acc {n} compactions" for n in counts]]
    rows = []
    for _, row in configs.iterrows():
        if is_missing(row.get("compactions_per_case.mean")):
            continue
        rows.append([str(row["short"]), fmt(row.get("context_window")), value_range(row, "compactions_per_case"),
                     value_range(row, "compactions_max"), value_range(row, "mean_kept_tokens"),
                     value_range(row, "evidence_survived_compactions", True), value_range(row, "accuracy", True),
                     value_range(row, "accuracy_relative_to_full", True),
                     *[value_range(row, f"ncomp.{n}", True) for n in counts]])
    return header, rows


def depth_table(configs: pd.DataFrame) -> tuple[list[str], list[list[str]]]:
    """Accuracy and evidence visible by question type x depth of the earliest evidence, per config,
    each cell with its n (a job's 95% intervals are in jobs.csv: ``depthci.``, ``depthvisci.``)."""
    cells = sorted({c[len("depth."):-len(".mean")] for c in configs.columns
                    if c.startswith("depth.") and c.endswith(".mean")},
                   key=lambda c: (c.split("@")[0], DISTANCE_LABELS.index(c.split("@")[1])
                                  if c.split("@")[1] in DISTANCE_LABELS else 99))
    header = ["config", "type@depth", "n", "accuracy", "visible"]
    rows = []
    for _, row in configs.iterrows():
        for cell in cells:
            n = row.get(f"depthn.{cell}.mean")
            if is_missing(n):
                continue
            rows.append([str(row["short"]), cell, f"{float(n):g}", value_range(row, f"depth.{cell}", True),
                         value_range(row, f"depthvis.{cell}", True)])
    return header, rows


def pairs_table(pairs: pd.DataFrame, limit: int | None = None,
                measure: str = "accuracy") -> tuple[list[str], list[list[str]]]:
    """The paired comparisons: B minus A with its 95% interval, and the discordant questions
    (``measure``: what the headline measures, e.g. evidence available with the offline reader)."""
    header = ["A", "B", "seed ids", f"{measure} B − A", "95% CI (sign-flip p)", "detectable Δ", "correct only in A",
              "correct only in B", "questions"]
    rows = []
    for _, row in pairs.head(limit).iterrows() if limit else pairs.iterrows():
        diff = row["difference"]
        rows.append([str(row["a"]), str(row["b"]), str(row["seeds"]),
                     "–" if is_missing(diff) else f"{100 * diff:+.1f} pp",
                     difference_interval_text((row["difference_ci_low"], row["difference_ci_high"]), row.get("p_value"),
                                              row.get("interval_method")),
                     detectable_text(row.get("detectable_difference"), row.get("n_clusters")),
                     str(row["correct_only_in_a"]), str(row["correct_only_in_b"]), str(row["n_questions"])])
    return header, rows


def frontier_table(frontier: pd.DataFrame, measure: str = "accuracy") -> tuple[list[str], list[list[str]]]:
    """The frontier plot's data as a table: arm, budget, target and realized share, answers kept."""
    what = "answers kept" if measure == "accuracy" else measure
    header = ["arm", "budget", "target share", "realized share", f"{what} (rel. full)", "95% CI", "views >20% over",
              "figure"]
    rows = []
    for _, row in frontier.iterrows():
        rows.append([str(row["arm"]), budget_text(row.get("budget")) if not is_missing(row.get("budget")) else "–",
                     pct_text(row.get("target_share")), pct_text(row.get("realized_share")), pct_text(row.get("answers_kept")),
                     interval_text(row.get("answers_kept_low"), row.get("answers_kept_high"), row.get("interval_method")),
                     "–" if is_missing(row.get("views_over")) else f"{float(row['views_over']):g}",
                     "lower bound (stand-in summary)" if row.get("lower_bound") else "exact"])
    return header, rows


def markdown_table(header: list[str], rows: list[list[str]]) -> str:
    def cell(text: Any) -> str:
        return str(text).replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(cell(h) for h in header) + " |",
             "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def case_set_title(configs: pd.DataFrame) -> str:
    """``case set <hash> (<source>, N questions)`` of a group of configs of one case set."""
    first = configs.iloc[0]
    n = first.get("n_questions")
    return f"case set {first['case_set']} ({first['source']}, {fmt(n)} questions)"
