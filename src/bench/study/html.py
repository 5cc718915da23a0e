"""The study's HTML page: one self-contained file (inline SVG plots, tables, the outcome grid).

    page = report_html(jobs, jobs_df, configs, questions, sources)

It reads top-down as a study should: with budgeted arms, the answer per budget and the frontier
plot first (``#answer``, ``#frontier``); then per case set the plots, then its tables; the
per-question grid and the job list last. With ``model=offline`` every place that names the
measure says "evidence available (offline reader)", as ``report.md`` does.
"""

from __future__ import annotations

import html
from datetime import UTC, datetime

import pandas as pd

from bench.study.figure_text import fmt, is_missing
from bench.study.jobs import Job
from bench.study.markdown import FRONTIER_NOTE, MEASURE_NOTE, METHODS_LINE, measure_of
from bench.study.plots import has_full, plot_label, plot_n_curve, plot_tradeoff, plot_types
from bench.study.text_tables import (
    PCT_METRICS,
    case_set_title,
    compactions_table,
    depth_table,
    distance_table,
    frontier_table,
    pairs_table,
    summary_table,
)

__all__ = ["report_html", "outcome_grid_html", "VERDICT_STYLE"]

VERDICT_STYLE = {  # verdict -> (symbol, background colour)
    "correct": ("✓", "#b7e1b0"),
    "wrong": ("✗", "#f4a6a6"),
    "abstained": ("?", "#f7dc8b"),
    "unscored": ("·", "#d0d0d0"),
    "missing": ("", "#ffffff"),
}
def outcome_grid_html(questions: pd.DataFrame, jobs: list[Job], max_jobs: int = 80) -> str:
    """Questions (rows) x jobs (columns), coloured by verdict; hover shows the question and its
    reference (row), the answer and the judge's reason (cell)."""
    if questions.empty:
        return "<p>No question.</p>"
    shown = jobs[:max_jobs]
    cells = {(r.path, r.qid): r for r in questions.itertuples()}
    qids = list(dict.fromkeys(questions["qid"]))
    out = ['<div class="grid"><table class="outcomes"><thead><tr><th>question</th>']
    for job in shown:
        title = html.escape(f"{job.label} seed={job.seed} ({job.status})")
        mark = "" if job.complete else " ⚠"
        out.append(f'<th class="rot" title="{title}"><div>{html.escape(plot_label(pd.Series({"config": job.label})))}'
                   f" s{html.escape(str(job.seed))}{mark}</div></th>")
    out.append("</tr></thead><tbody>")
    asked = questions.drop_duplicates("qid").set_index("qid")
    for qid in qids:
        about = asked.loc[qid]
        row_tip = f"{about.get('question') or ''}\nreference: {about.get('reference') or ''}"
        out.append(f"<tr><td class='qid' title=\"{html.escape(row_tip)}\">{html.escape(qid)}</td>")
        for job in shown:
            row = cells.get((str(job.path), qid))
            verdict = row.verdict if row is not None else "missing"
            symbol, colour = VERDICT_STYLE.get(verdict, ("", "#fff"))
            tip = verdict
            if row is not None and isinstance(row.answer, str):
                tip += f" | answer: {row.answer[:300]}"
            if row is not None and isinstance(row.reason, str):
                tip += f": {row.reason}"
            if row is not None and row.visible is not None and not is_missing(row.visible):
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
.answer{font-size:14px;line-height:1.5}.answer li{margin:4px 0}
.measure{background:#eef4fb;border:1px solid #9fbfe0;padding:8px 12px;border-radius:4px}
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


def _md_inline(text: str) -> str:
    """A sentence of report.md as HTML: escaped, its **bold** kept."""
    out = html.escape(text)
    while out.count("**") >= 2:
        out = out.replace("**", "<b>", 1).replace("**", "</b>", 1)
    return out


def _lead_html(configs: pd.DataFrame, frontier: pd.DataFrame, sentences: dict[str, list[str]],
               svgs: dict[str, str | None], measure: str) -> list[str]:
    """The first section (the answer per budget) and the frontier plot, above every table."""
    sets = list(dict.fromkeys(frontier["case_set"]))
    parts = ['<section id="answer"><h2>The answer per budget</h2>']
    if measure != "accuracy":
        parts.append(f"<p class='small'>Measured with <code>model=offline</code>: {html.escape(measure)}, not a "
                     "model's accuracy.</p>")
    for case_set in sets:
        group = configs[configs["case_set"] == case_set]
        if len(sets) > 1 and not group.empty:
            parts.append(f"<h3>{html.escape(case_set_title(group))}</h3>")
        items = "".join(f"<li>{_md_inline(s)}</li>" for s in sentences.get(str(case_set), []))
        parts.append(f"<ul class='answer'>{items}</ul>")
    parts.append("</section>")
    parts.append('<section id="frontier"><h2>The quality-size frontier</h2>'
                 f"<p class='small'>{html.escape(FRONTIER_NOTE)}</p>")
    for case_set in sets:
        if len(sets) > 1:
            group = configs[configs["case_set"] == case_set]
            parts.append(f"<h3>{html.escape(case_set_title(group) if not group.empty else str(case_set))}</h3>")
        svg = svgs.get(str(case_set))
        if svg:
            parts.append(f'<div class="plot" id="frontier-plot-{html.escape(str(case_set))}">{svg}</div>')
        header, rows = frontier_table(frontier[frontier["case_set"] == case_set], measure)
        parts += ["<p class='small'>The plot's data (frontier.csv):</p>", _html_table(header, rows)]
    parts.append("</section>")
    return parts


def _case_set_html(configs: pd.DataFrame, pairs: pd.DataFrame | None, titled: bool,
                   measure: str = "accuracy") -> list[str]:
    """One study: its plots first, then the config table, paired comparisons and distances."""
    header, rows = summary_table(configs)
    flagged = [bool(r) for r in configs["incomplete"]]
    parts = [f"<h2>{html.escape(case_set_title(configs))}</h2>" if titled else "<h2>Configs</h2>"]
    plots = (
        ("Accuracy relative to full vs tokens kept", plot_tradeoff(configs),
         "One point per config (marker per arm); x: share of the full history's tokens the view keeps, "
         "y: share of the questions the full arm answers that this config still answers."),
        ("Accuracy per question type", plot_types(configs), ""),
        ("The N curve", plot_n_curve(configs),
         "N latest messages kept (arm=nlatest) against accuracy"
         + ("; dotted: the full arm." if has_full(configs) else
            " (no full-arm job in this report: relative to full uses each job's own full reference).")),
    )
    for title, svg, note in plots:
        if svg:
            parts += [f"<h3>{html.escape(title)}</h3>", f"<p class='small'>{html.escape(note)}</p>" if note else "",
                      f'<div class="plot">{svg}</div>']
    parts += ["<h3>Configs</h3>" if titled else "", _html_table(header, rows, flagged)]
    if pairs is not None and not pairs.empty:
        header, rows = pairs_table(pairs, limit=45, measure=measure)
        parts += [f"<h3>Paired comparisons of {html.escape(measure)}</h3>",
                  "<p class='small'>Config B minus config A on the same questions, paired by seed; 95% CI and p "
                  "from the exact sign-flip test over instances (docs/uncertainty.md); detectable Δ: "
                  "the smallest difference the pair's questions detect (80% power, 5% level); discordant questions: "
                  "correct in one config only"
                  + (f" (first 45 of {len(pairs)} pairs; all in pairs.csv)" if len(pairs) > 45 else "") + ".</p>",
                  _html_table(header, rows)]
    header, rows = distance_table(configs)
    if len(header) > 1:
        parts += ["<h3>By distance</h3>",
                  "<p class='small'>Accuracy and evidence still visible, by tokens from the end of the history "
                  "back to the latest message that shows the answer (nearest_back).</p>", _html_table(header, rows)]
    header, rows = compactions_table(configs)
    if rows:
        parts += ["<h3>Compaction as lived</h3>",
                  "<p class='small'>Natural trigger (arm.auto_compact.force=false): compactions per case, evidence "
                  "still seen after its case's last compaction, accuracy by the number of compactions the "
                  "question's case went through.</p>", _html_table(header, rows)]
    header, rows = depth_table(configs)
    if rows:
        parts += ["<h3>By type and depth</h3>",
                  "<p class='small'>Accuracy and evidence visible per question type and depth (tokens from the end "
                  "back to the earliest evidence), with n; per-job 95% intervals in jobs.csv "
                  "(depthci., depthvisci.).</p>", _html_table(header, rows)]
    return parts


def report_html(jobs: list[Job], jobs_df: pd.DataFrame, configs: pd.DataFrame, questions: pd.DataFrame,
                sources: list[str], pairs: pd.DataFrame | None = None, frontier: pd.DataFrame | None = None,
                sentences: dict[str, list[str]] | None = None, frontier_svgs: dict[str, str | None] | None = None
                ) -> str:
    measure = measure_of(jobs)
    parts = [
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>bench report</title>",
        f"<style>{_CSS}</style></head><body>",
        "<h1>Context-compaction benchmark report</h1>",
    ]
    if frontier is not None and not frontier.empty:
        parts += _lead_html(configs, frontier, sentences or {}, frontier_svgs or {}, measure)
    parts += [
        f"<p class='small'>Generated {datetime.now(UTC).isoformat(timespec='seconds')} from "
        f"{html.escape(', '.join(sources))}: {len(jobs)} job(s), {len(configs)} config(s). "
        "Values are mean [min–max] over the seeds of complete jobs; 95% CI: every complete seed's questions pooled; "
        "detectable Δ: the smallest accuracy difference the case set detects (80% power, 5% level); hedged "
        "wrong: wrong answers that hedge, apart from confidently wrong. Questions whose answer is readable in the task text are left out "
        "of every figure (counted in 'in task text').</p>",
        f"<p class='small'>{html.escape(METHODS_LINE)}</p>",
    ]
    if measure != "accuracy":  # report.md's paragraph, word for word
        note = html.escape(MEASURE_NOTE).replace("`model=offline`", "<code>model=offline</code>")
        parts.append(f"<p class='measure'><b>Measures: {html.escape(measure)}.</b> {note}</p>")
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
        parts.append(f"<div class='warn'>The jobs ran on {len(hashes)} different case sets: each is its own "
                     "study below, and configs are compared only within one.</div>")
    groups = list(configs.groupby("case_set", sort=False)) if not configs.empty else []
    for case_set, group in groups:
        parts += _case_set_html(group, pairs[pairs["case_set"] == case_set] if pairs is not None and not pairs.empty
                                else None, len(groups) > 1, measure)
    parts += ["<h2>Per-question outcomes</h2>",
              "<p class='small'>Rows: questions; columns: jobs. Hover a cell for the judge's reason and "
              "the evidence flags.</p>", outcome_grid_html(questions, jobs)]
    job_cols = ["job", "config", "seed", "status", "accuracy", "accuracy_relative_to_full",
                "confidently_wrong_rate", "abstain_rate", "evidence_visible_rate", "mean_kept_tokens",
                "summarizer_calls", "retrievals", "latency_s", "tokens_spent", "problems"]
    job_cols = [c for c in job_cols if c in jobs_df.columns]
    job_rows = [[fmt(r[c], c in PCT_METRICS) if c not in ("job", "config", "seed", "status", "problems")
                 else ("" if is_missing(r[c]) else str(r[c])) for c in job_cols] for _, r in jobs_df.iterrows()]
    parts += ["<h2>Jobs</h2>", _html_table(job_cols, job_rows, [s != "complete" for s in jobs_df["status"]]),
              "<p class='small'>All columns are in jobs.csv; per-question rows in questions.csv.</p>",
              "</body></html>"]
    return "\n".join(p for p in parts if p)
