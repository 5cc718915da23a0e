"""The study's text: formatting of numbers and ranges, the config table, markdown.

    header, rows = summary_table(configs)
    print(report_markdown(jobs, configs))
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from bench.scoring.metrics import DISTANCE_BUCKETS
from bench.stats import METHOD_TYPES
from bench.study.jobs import Job
from bench.study.panel_review import panel_section

__all__ = ["MEASURE_NOTE", "FRONTIER_NOTE", "frontier_table", "pct_text", "measure_of", "budget_text", "is_lower_bound", "is_missing", "short_labels", "interval_text", "difference_interval_text", "detectable_text", "METHODS_LINE", "distance_table", "compactions_table", "depth_table", "pairs_table", "DISTANCE_LABELS", "PCT_METRICS", "TABLE_COLUMNS", "summary_table", "markdown_table", "report_markdown", "fmt", "value_range"]

# ---------------------------------------------------------------- text output


def fmt(value: Any, pct: bool = False) -> str:
    if is_missing(value):
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
    if is_missing(mean):
        return "–"
    text = fmt(mean, pct)
    if low is not None and high is not None and low != high:
        text += f" [{fmt(low, pct)}–{fmt(high, pct)}]"
    return text


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


# What an offline job's headline measures, said in report.md and report.html alike.
MEASURE_NOTE = ("Every job answered with `model=offline`: the accuracy columns are the share of questions the offline "
                "reader answers from the view (the evidence is there), not a model's accuracy, and the paired "
                "comparisons compare evidence availability. The reader does not read the summary prompt's "
                "instructions, only what a summary lists, so prompts differ offline only through what their "
                "summaries keep.")


def is_lower_bound(row: pd.Series | dict) -> bool:
    """A config whose views hold the extractive stand-in's summaries (metrics "lower_bound")."""
    value = row.get("lower_bound")
    return not is_missing(value) and bool(value)


def budget_text(value: Any) -> str:
    """``arm.budget`` as the report shows it: ``10%`` (of each case's history tokens) or ``4,000 tokens``."""
    if is_missing(value):
        return "–"
    value = float(value)
    return f"{100 * value:g}%" if value <= 1 else f"{int(value):,} tokens"


def _pp(value: Any) -> str:
    """A difference of shares in percentage points (``–`` when there is none)."""
    return "–" if is_missing(value) else f"±{100 * float(value):.1f} pp"


def interval_text(low: Any, high: Any, method: Any = None) -> str:
    """A 95% interval of a share, in percent (``–`` when there is none; ``‡``: two-way, types random)."""
    if is_missing(low) or is_missing(high):
        return "–"
    return f"{100 * float(low):.1f}–{100 * float(high):.1f}%" + _two_way_mark(method)


def difference_interval_text(interval: Any, p_value: Any, method: Any = None) -> str:
    """The 95% interval of a paired difference in points, with the sign-flip test's p-value."""
    if not interval or is_missing(interval[0]) or is_missing(interval[1]):
        return "–"
    low, high = (100 * float(x) for x in interval)
    p = "" if is_missing(p_value) else f" (p {'< 0.001' if float(p_value) < 0.001 else f'= {float(p_value):.3g}'})"
    return f"{low:+.1f} to {high:+.1f} pp{p}{_two_way_mark(method)}"


def detectable_text(value: Any, instances: Any) -> str:
    """The detectable difference in points; none up to 100 points: "not detectable with N instances"."""
    if not is_missing(value):
        return f"±{100 * float(value):.1f} pp"
    if is_missing(instances) or not int(instances):
        return "–"
    return f"not detectable with {int(instances)} instance{'s' if int(instances) != 1 else ''}"


def _two_way_mark(method: Any) -> str:
    return " ‡" if method == METHOD_TYPES else ""


# The estimand and the method, stated wherever intervals are shown (docs/uncertainty.md)
METHODS_LINE = ("95% intervals are about this case set's fixed mix of question types and generalise over "
                "instances (runs) like these, not over other question types: one-way cluster-robust by instance "
                "(small-sample corrected, instances − 1 degrees of freedom), types as strata; at 0% or 100% a "
                "one-sided bound over the instances. A paired difference B − A carries the p-value of an exact "
                "sign-flip test over instances (every question of an instance swapped at once; with fewer than 6 "
                "instances no p-value reaches 0.05); its interval excludes 0 exactly when p ≤ 0.05. ‡: also over "
                "other question types (stats.generalize_types=true, two-way by instance and type, wider). "
                "docs/uncertainty.md.")


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


FRONTIER_NOTE = ("x: the share of each case's history tokens the views kept (mean over cases); y: the answers the "
                 "full arm gives that the arm still gives, with its 95% interval; one colour and marker per arm, a "
                 "line through its budgets; dotted verticals: the budgets. Hollow markers: summaries by the offline "
                 "extractive stand-in (summarizer=offline), a lower bound of what a model's summary keeps, never "
                 "ranked against the arms measured exactly.")


def pct_text(value: Any) -> str:
    """A share in percent with one decimal (``–`` when there is none)."""
    return "–" if is_missing(value) else f"{100 * float(value):.1f}%"
def frontier_table(frontier: pd.DataFrame, measure: str = "accuracy") -> tuple[list[str], list[list[str]]]:
    """The frontier plot's data as a table: arm, budget, target and realized share, answers kept."""
    what = "answers kept" if measure == "accuracy" else measure
    header = ["arm", "budget", "target share", "realized share", f"{what} (rel. full)", "95% CI", "views >20% over",
              "figure"]
    rows = []
    for _, row in frontier.iterrows():
        rows.append([str(row["arm"]), budget_text(row.get("budget")) if not is_missing(row.get("budget")) else "–",
                     pct_text(row.get("target_share")), pct_text(row.get("realized_share")), pct_text(row.get("answers_kept")),
                     interval_text(row.get("answers_kept_low"), row.get("answers_kept_high")),
                     "–" if is_missing(row.get("views_over")) else f"{float(row['views_over']):g}",
                     "lower bound (stand-in summary)" if row.get("lower_bound") else "exact"])
    return header, rows


def measure_of(jobs: list[Job]) -> str:
    """What the jobs' headline measures: one label when every job says the same, else accuracy."""
    found = {(j.metrics or {}).get("measures", "accuracy") for j in jobs}
    return found.pop() if len(found) == 1 else "accuracy"


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
