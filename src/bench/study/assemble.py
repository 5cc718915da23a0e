"""The study report over one or many job directories (a sweep directory or single jobs).

    uv run python -m bench.report multirun/2026-11-29/19-30-00_nlatest
    uv run python -m bench.report JOB_A JOB_B ... --output reports/ablation

Every number is recomputed from the job's records (``cases``, ``views``, ``answers``,
``scores``, ``reference_scores``) with :func:`bench.scoring.metrics.compute_metrics`, so a report
over a killed job shows what it holds and agrees with ``metrics.json`` of a finished one.

Written to the output directory (default ``DIR/report`` for one DIR, else
``multirun/reports/<date>_<time>``):

- ``jobs.csv``: one row per job: its overrides, config label, seed, status, ``accuracy``,
  per-type accuracy (``acc.<type>``), accuracy relative to full, confidently-wrong and
  abstain rates, evidence visible / recoverable, tokens kept, summarizer calls,
  retrievals, latency and tokens spent;
- ``configs.csv``: one row per config (jobs that differ only by seed): mean, min and max
  over the seeds of the *complete* jobs (``<metric>.mean|min|max``), the pooled 95%
  intervals (``accuracy.ci_low|ci_high``, same for relative to full), accuracy and evidence
  by distance (``dist.<bucket>``, ``distvis.<bucket>``), with ``n_jobs``, ``n_complete``
  and the incomplete jobs named; an incomplete job is never averaged in. Configs of
  different case sets (e.g. coding and operations) are separate studies;
- ``types.csv``: accuracy and evidence survival per config and question type;
- ``questions.csv``: one row per job and question: question, reference, answer, verdict, judge reason, evidence flags;
- ``pairs.csv``: every two configs of one case set compared on the same questions (paired by
  seed): accuracy B - A with its 95% interval, the discordant questions;
- ``report.md``: the config table in markdown; ``report.html``: one self-contained page
  (SVG plots: accuracy relative to full vs tokens kept per arm, per-type bars, the N curve;
  then the tables and the per-question outcome grid);
- with budgeted arms (``arm.budget``, ``+experiment=frontier``): ``frontier.csv`` (the frontier
  plot's data: arm, budget, target and realized share, answers kept with its interval) and
  ``frontier.svg``; ``report.md`` and ``report.html`` then lead with the answer, one sentence
  per budget (:mod:`bench.study.frontier`), and the frontier plot, above every table.

Jobs are listed by config (arm, N, mechanism chain, prompt, then the sweep's own order),
seeds together, not by start time. Failed jobs (``run.json`` ``status: failed``, a job of a
sweep that stopped with an error) are listed with their error, never averaged. CSV cells
that start with ``= + - @`` (or a tab / carriage return) are written with a leading ``'``,
so a spreadsheet never runs them as formulas (:func:`write_csv`).
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

import pandas as pd

from bench.core.errors import console_script, program
from bench.study.frontier import answer_sentences, frontier_frame, over_budget_line
from bench.study.html import report_html
from bench.study.jobs import find_job_dirs, load_jobs
from bench.study.markdown import measure_of, report_markdown
from bench.study.plots import plot_frontier
from bench.study.tables import configs_frame, jobs_frame, questions_frame, types_frame, write_csv
from bench.study.uncertainty import pairs_frame

__all__ = ["write_report", "main"]

log = logging.getLogger(__name__)


def write_report(paths: Iterable[Path | str], output: Path | str | None = None) -> dict[str, Any]:
    """Load the jobs under ``paths`` and write the CSVs, ``report.md`` and ``report.html``."""
    roots = [Path(p) for p in paths]
    jobs = load_jobs(roots)
    if output is None:
        output = roots[0] / "report" if len(roots) == 1 else Path("multirun") / "reports" / datetime.now().strftime(
            "%Y-%m-%d_%H-%M-%S")
    output = Path(output)
    output.mkdir(parents=True, exist_ok=True)
    jobs_df = jobs_frame(jobs)
    configs = configs_frame(jobs_df, jobs)
    pairs = pairs_frame(jobs, configs) if not configs.empty else pd.DataFrame()
    questions = questions_frame(jobs)
    types = types_frame(configs) if not configs.empty else pd.DataFrame()
    write_csv(jobs_df, output / "jobs.csv")
    write_csv(configs, output / "configs.csv")
    write_csv(types, output / "types.csv")
    write_csv(questions, output / "questions.csv")
    write_csv(pairs, output / "pairs.csv")
    measure = measure_of(jobs)
    frontier = frontier_frame(configs)
    sentences = answer_sentences(jobs, configs, measure)
    if not frontier.empty:  # the views over their target, said under the answer
        for case_set in sentences:
            sentences[case_set].append(over_budget_line([j for j in jobs if j.case_set == case_set]))
    svgs = {}
    if not frontier.empty:
        write_csv(frontier.drop(columns=["role", "arm_order"], errors="ignore"), output / "frontier.csv")
        for case_set, group in frontier.groupby("case_set", sort=False):
            svgs[str(case_set)] = plot_frontier(group, measure)
        named = [(case_set, svg) for case_set, svg in svgs.items() if svg]
        for case_set, svg in named:
            name = "frontier.svg" if len(named) == 1 else f"frontier_{case_set}.svg"
            (output / name).write_text(svg, encoding="utf-8")
    markdown = report_markdown(jobs, configs, pairs, frontier=frontier, sentences=sentences)
    (output / "report.md").write_text(markdown, encoding="utf-8", errors="backslashreplace")
    (output / "report.html").write_text(
        report_html(jobs, jobs_df, configs, questions, [str(p) for p in roots], pairs, frontier=frontier,
                    sentences=sentences, frontier_svgs=svgs), encoding="utf-8", errors="backslashreplace")
    log.info("report of %d job(s) written to %s", len(jobs), output)
    return {"output": output, "jobs": jobs, "jobs_df": jobs_df, "configs": configs, "pairs": pairs,
            "markdown": markdown, "frontier": frontier, "sentences": sentences}


@console_script
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=program("bench.report"), description=__doc__.split("\n\n")[0])
    parser.add_argument("dirs", nargs="+", help="sweep directories and/or job directories")
    parser.add_argument("--output", "-o", help="report directory (default: DIR/report for one DIR, "
                        "else multirun/reports/<date>_<time>)")
    args = parser.parse_intermixed_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    if not find_job_dirs(args.dirs):
        print(f"error: no job directory (with run.json) under {' '.join(args.dirs)}", file=sys.stderr)
        return 2
    if args.output is not None:  # a file there, or a directory that cannot be made: before any work
        from bench.store.jobdir import JobDirError, check_creatable

        try:
            check_creatable(args.output, "--output")
        except JobDirError as err:
            print(f"error: {err}", file=sys.stderr)
            return 2
    try:
        result = write_report(args.dirs, args.output)
    except OSError as err:
        print(f"error: cannot write the report to {args.output or 'its directory'}: {err.strerror or err}"
              + (f" ({err.filename})" if err.filename else ""), file=sys.stderr)
        return 2
    print(result["markdown"])
    extra = ", frontier.csv, frontier.svg" if not result["frontier"].empty else ""
    print(f"written: {result['output']}/report.html, jobs.csv, configs.csv, types.csv, questions.csv, pairs.csv, "
          f"report.md{extra}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
