"""The markdown report (report.md): per case set the config table, the compactions, the paired
comparisons, the judge panel's review and the incomplete jobs; with budgeted arms led by the answer per
budget and the frontier's data. The notes it shares with report.html (what an offline job measures, the
estimand and method of the intervals, how to read the frontier) are here.

    print(report_markdown(jobs, configs, pairs, frontier, sentences))
"""

from __future__ import annotations

import pandas as pd

from bench.study.figure_text import (
    budget_text,
    detectable_text,
    difference_interval_text,
    fmt,
    interval_text,
    is_lower_bound,
    is_missing,
    pct_text,
    short_labels,
    value_range,
)
from bench.study.jobs import Job
from bench.study.panel_review import panel_section
from bench.study.text_tables import (
    DISTANCE_LABELS,
    PCT_METRICS,
    TABLE_COLUMNS,
    case_set_title,
    compactions_table,
    depth_table,
    distance_table,
    frontier_table,
    markdown_table,
    pairs_table,
    summary_table,
)

# report_markdown, the shared notes, and the names imported from this module (study/text.py before issue 33)
# before they moved to figure_text (a figure as text) and text_tables (the tables as cells)
__all__ = ["report_markdown", "measure_of", "MEASURE_NOTE", "FRONTIER_NOTE", "METHODS_LINE", "fmt", "value_range",
           "is_missing", "pct_text", "budget_text", "interval_text", "difference_interval_text", "detectable_text",
           "is_lower_bound", "short_labels", "PCT_METRICS", "TABLE_COLUMNS", "DISTANCE_LABELS", "summary_table",
           "distance_table", "compactions_table", "depth_table", "pairs_table", "frontier_table", "markdown_table",
           "case_set_title"]

# What an offline job's headline measures, said in report.md and report.html alike.
MEASURE_NOTE = ("Every job answered with `model=offline`: the accuracy columns are the share of questions the offline "
                "reader answers from the view (the evidence is there), not a model's accuracy, and the paired "
                "comparisons compare evidence availability. The reader answers exactly what the view holds of each "
                "question's evidence, by provenance (recorded messages kept verbatim, the exact reference text in a "
                "summary or placeholder, or a handle it can read), so prompts differ offline only through what "
                "their summaries keep.")


# The estimand and the method, stated wherever intervals are shown (docs/uncertainty.md)
METHODS_LINE = ("95% intervals are about this case set's fixed mix of question types and generalise over "
                "instances (runs) like these, not over other question types: one-way cluster-robust by instance "
                "(small-sample corrected, instances − 1 degrees of freedom), types as strata; at 0% or 100% a "
                "one-sided bound over the instances. A paired difference B − A carries the p-value of a "
                "sign-flip test over instances (every question of an instance swapped at once; the observed pattern "
                "counts half, a mid-p; with fewer than 5 instances no p-value reaches 0.05); its interval excludes 0 exactly when p ≤ 0.05. ‡: also over "
                "other question types (stats.generalize_types=true, two-way by instance and type, wider). "
                "docs/uncertainty.md.")


FRONTIER_NOTE = ("x: the share of each case's history tokens the views kept (mean over cases); y: the answers the "
                 "full arm gives that the arm still gives, with its 95% interval; one colour and marker per arm, a "
                 "line through its budgets; dotted verticals: the budgets. Hollow markers: summaries by the offline "
                 "extractive stand-in (summarizer=offline), a lower bound of what a model's summary keeps, never "
                 "ranked against the arms measured exactly.")


def measure_of(jobs: list[Job]) -> str:
    """What the jobs' headline measures: one label when every job says the same, else accuracy."""
    found = {(j.metrics or {}).get("measures", "accuracy") for j in jobs}
    return found.pop() if len(found) == 1 else "accuracy"


def report_markdown(jobs: list[Job], configs: pd.DataFrame, pairs: pd.DataFrame | None = None,
                    frontier: pd.DataFrame | None = None, sentences: dict[str, list[str]] | None = None) -> str:
    """The config table, the paired comparisons and the distances, one section per case set; with
    budgeted arms, led by the answer per budget and the frontier plot's data (above every table)."""
    lines = _lead(configs, frontier, sentences or {}, measure_of(jobs))
    lines += [f"{len(jobs)} job(s), {len(configs)} config(s); values are mean [min–max] over the "
             "seeds of complete jobs; 95% CI: every complete seed's questions pooled (questions answerable from the "
             "task text left out, counted apart); detectable Δ: the smallest accuracy difference the case set "
             "detects at 80% power and the 5% level, from the observed variance; hedged wrong: wrong answers "
             "that hedge (bench.scoring.hedges), apart from confidently wrong.", "", METHODS_LINE]
    if jobs and jobs[0].shared:
        lines.append(f"Overrides shared by every job: `{' '.join(jobs[0].shared)}`.")
    measure = measure_of(jobs)
    if measure != "accuracy":
        lines.append(f"**Measures: {measure}.** {MEASURE_NOTE}")
    groups = list(configs.groupby("case_set", sort=False)) if not configs.empty else []
    for case_set, group in groups:
        if len(groups) > 1:
            lines += ["", f"## {case_set_title(group)}"]
        header, rows = summary_table(group)
        lines += ["", markdown_table(header, rows)]
        header, rows = compactions_table(group)
        if rows:
            lines += ["", "Compaction as lived (natural trigger: accuracy against the number of compactions; "
                      "ev. survived: evidence still seen after its case's last compaction):", "",
                      markdown_table(header, rows)]
        if pairs is not None and not pairs.empty and len(group) > 1:
            header, rows = pairs_table(pairs[pairs["case_set"] == case_set], measure=measure)
            if rows:
                lines += ["", f"Paired comparisons of {measure} (same questions, paired by seed):", "", markdown_table(header, rows)]
    lines += panel_section(jobs)
    incomplete = [j for j in jobs if not j.complete]
    if incomplete:
        lines += ["", f"**{len(incomplete)} incomplete job(s), not averaged:**"]
        lines += [f"- `{j.path}`: {'; '.join(j.problems)}" for j in incomplete]
    if len(groups) > 1:
        lines += ["", f"The jobs ran on {len(groups)} different case sets: each is its own study, compared within."]
    return "\n".join(lines) + "\n"


def _lead(configs: pd.DataFrame, frontier: pd.DataFrame | None, sentences: dict[str, list[str]],
          measure: str) -> list[str]:
    """The frontier's first section: per case set, the answer per budget, the plot, its data."""
    if frontier is None or frontier.empty:
        return []
    lines = ["# The answer per budget", ""]
    if measure != "accuracy":
        lines += [f"Measured with `model=offline`: {measure}, not a model's accuracy.", ""]
    sets = list(dict.fromkeys(frontier["case_set"]))
    for case_set in sets:
        group = configs[configs["case_set"] == case_set]
        if len(sets) > 1 and not group.empty:
            lines += [f"## {case_set_title(group)}", ""]
        lines += [f"- {s}" for s in sentences.get(str(case_set), [])]
        plot = "frontier.svg" if len(sets) == 1 else f"frontier_{case_set}.svg"
        lines += ["", f"![The quality-size frontier]({plot})", ""]
        header, rows = frontier_table(frontier[frontier["case_set"] == case_set], measure)
        lines += [FRONTIER_NOTE, "", "The frontier plot's data:", "", markdown_table(header, rows), ""]
    lines += ["# Every config", ""]
    return lines
