"""A config and metric diff of two jobs, in markdown (for a PR comment).

    uv run python -m bench.compare DIR_A DIR_B [--output FILE] [--questions N]

1. the config keys that differ (flattened dotted keys of the resolved config in
   ``run.json``, else ``.hydra/config.yaml``), long values shortened with a hash;
2. provenance that differs (git commit, dirty tree, case set, prompt hash, packages);
3. the metrics side by side with the delta B - A (recomputed from the records, as the
   report does; an incomplete job is flagged);
4. on the same case set, the paired comparison: the difference of headline accuracy B - A
   with its 95% interval and the p-value of the sign-flip test over instances (mid-p)
   (:func:`bench.stats.paired_interval`), the discordant questions, and the smallest difference
   the case set detects (80% power, 5% level, from the observed paired variance);
5. the questions whose verdict changed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

from bench.core.errors import console_script, program
from bench.study.figure_text import detectable_text, difference_interval_text
from bench.study.jobs import Job, flatten, load_job
from bench.study.markdown import METHODS_LINE
from bench.study.output import print_text, write_output
from bench.study.tables import job_row
from bench.study.text_tables import PCT_METRICS, markdown_table
from bench.study.uncertainty import compare_pair

__all__ = ["config_diff", "metric_rows", "compare_markdown", "main"]

# compared in this order (others found in both rows follow: per-type accuracy, evidence)
METRICS = (
    "n_cases", "n_questions", "n_scored", "accuracy", "accuracy_ci", "accuracy_relative_to_full",
    "accuracy_relative_to_full_ci", "n_in_task_text", "confidently_wrong_rate", "hedged_wrong_rate",
    "detectable_difference",
    "abstain_rate", "evidence_visible_rate", "evidence_recoverable_rate", "mean_kept_tokens",
    "tokens_kept_ratio", "mean_kept_messages", "summarizer_calls", "retrievals", "context_overflow", "errors",
    "latency_s", "tokens_spent", "model_calls", "cache_hits", "cost_usd", "spent_cost_usd", "estimated_cost_usd",
    "wall_time_s",
    "missing_traces",
)
_PROVENANCE = ("status", "case_set_hash", "prompt_hash", "git.commit", "git.dirty", "dataset.source",
               "dataset.path", "dataset.revision")


def _show(value: Any, width: int = 60) -> str:
    if value is None:
        return "`null`"
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    text = text.replace("\n", "⏎")
    if len(text) > width:
        digest = hashlib.sha256(text.encode()).hexdigest()[:8]
        text = f"{text[: width - 14]}… (sha {digest})"
    return f"`{text}`"


def config_diff(a: dict[str, Any], b: dict[str, Any]) -> list[tuple[str, Any, Any]]:
    """(key, value in A, value in B) for every flattened key that differs; missing = '(absent)'."""
    fa, fb = flatten(a), flatten(b)
    absent = "(absent)"
    keys = sorted(set(fa) | set(fb))
    return [(k, fa.get(k, absent), fb.get(k, absent)) for k in keys
            if json.dumps(fa.get(k, absent), sort_keys=True, default=str)
            != json.dumps(fb.get(k, absent), sort_keys=True, default=str)]


def _provenance(job: Job) -> dict[str, Any]:
    flat = flatten({k: v for k, v in job.run.items() if k != "config"})
    return {k: v for k, v in flat.items() if k in _PROVENANCE or k.startswith("packages.")}


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return None if number != number else number  # NaN


def _interval_cell(value: Any) -> str | None:
    """An accuracy interval (``[lo, hi]`` or the table's ``"lo-hi"`` fractions) in percent, as its value."""
    parts = value if isinstance(value, (list, tuple)) else str(value).split("-") if isinstance(value, str) else []
    bounds = [_number(p) for p in parts]
    if len(bounds) != 2:
        return None
    low, high = bounds
    if low is None or high is None:
        return None
    return f"{100 * low:.1f}-{100 * high:.1f}%"


def _cell(metric: str, value: Any) -> str:
    if metric.endswith("_ci") and value is not None and (interval := _interval_cell(value)) is not None:
        return interval
    number = _number(value)
    if number is None:
        return "–" if value is None else str(value)
    if metric in PCT_METRICS or metric.startswith(("acc.", "visible.", "recoverable.")):
        return f"{100 * number:.1f}%"
    return f"{number:,.0f}" if number == int(number) else f"{number:,.2f}"


def _delta(metric: str, a: Any, b: Any) -> str:
    x, y = _number(a), _number(b)
    if x is None or y is None:
        return ""
    diff = y - x
    if diff == 0:
        return "="
    if metric in PCT_METRICS or metric.startswith(("acc.", "visible.", "recoverable.")):
        return f"{100 * diff:+.1f} pp"
    text = f"{diff:+,.0f}" if diff == int(diff) else f"{diff:+,.2f}"
    return text + (f" ({100 * diff / x:+.0f}%)" if x else "")


def metric_rows(row_a: dict[str, Any], row_b: dict[str, Any]) -> list[list[str]]:
    order = {"acc": 0, "visible": 1, "recoverable": 2}
    extra = sorted((k for k in set(row_a) | set(row_b) if k.split(".")[0] in order),
                   key=lambda k: (order[k.split(".")[0]], k))
    rows = []
    for metric in (*METRICS, *extra):
        if metric not in row_a and metric not in row_b:
            continue
        a, b = row_a.get(metric), row_b.get(metric)
        rows.append([metric, _cell(metric, a), _cell(metric, b), _delta(metric, a, b)])
    return rows


def _pp(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:+.1f} pp"


def _verdicts(job: Job) -> dict[str, str]:
    return {s["qid"]: s["verdict"] for s in job.scores}


def compare_markdown(dir_a: Path | str, dir_b: Path | str, max_questions: int = 30) -> str:
    a, b = load_job(dir_a), load_job(dir_b)
    for job in (a, b):
        job.label = " ".join(job.label_overrides()) or f"arm={job.arm}"
    row_a, row_b = job_row(a), job_row(b)
    lines = ["## bench.compare", "",
             f"- **A** `{a.path}`: arm={a.arm} seed={a.seed} {a.status}"
             + (f" ({'; '.join(a.problems)})" if a.problems else ""),
             f"- **B** `{b.path}`: arm={b.arm} seed={b.seed} {b.status}"
             + (f" ({'; '.join(b.problems)})" if b.problems else "")]
    if a.run.get("case_set_hash") != b.run.get("case_set_hash"):
        lines.append(f"- ⚠ different case sets ({a.run.get('case_set_hash')} vs {b.run.get('case_set_hash')}): "
                     "the metrics are not over the same questions")
    diff = config_diff(a.config, b.config)
    lines += ["", f"### Config: {len(diff)} key(s) differ", ""]
    if diff:
        lines.append(markdown_table(["key", "A", "B"], [[f"`{k}`", _show(x), _show(y)] for k, x, y in diff]))
    else:
        lines.append("Same resolved config.")
    prov = config_diff(_provenance(a), _provenance(b))
    if prov:
        lines += ["", "### Provenance that differs", "",
                  markdown_table(["key", "A", "B"], [[f"`{k}`", _show(x), _show(y)] for k, x, y in prov])]
    lines += ["", "### Metrics (B − A)", "", markdown_table(["metric", "A", "B", "Δ"], metric_rows(row_a, row_b))]
    if a.run.get("case_set_hash") == b.run.get("case_set_hash"):
        pair = compare_pair([(a.cases, a.scores)], [(b.cases, b.scores)],
                            generalize_types=a.generalize_types or b.generalize_types)
        lines += ["", "### Paired comparison (same questions)", "", METHODS_LINE, "",
                  markdown_table(["accuracy B − A", "95% CI", "detectable difference (80% power, 5% level)",
                                  "correct only in A", "correct only in B", "questions", "instances"],
                                 [[_pp(pair["difference"]),
                                   difference_interval_text(pair["difference_ci"], pair["p_value"], pair["method"]),
                                   detectable_text(pair["detectable_difference"], pair["n_clusters"]),
                                   str(pair["a_only"]), str(pair["b_only"]),
                                   str(pair["n_questions"]), str(pair["n_clusters"])]])]
    va, vb = _verdicts(a), _verdicts(b)
    changed = [(q, va.get(q, "missing"), vb.get(q, "missing")) for q in sorted(set(va) | set(vb))
               if va.get(q, "missing") != vb.get(q, "missing")]
    lines += ["", f"### Questions whose verdict changed: {len(changed)}", ""]
    if changed:
        shown = changed[:max_questions]
        lines.append(markdown_table(["qid", "A", "B"], [[f"`{q}`", x, y] for q, x, y in shown]))
        if len(changed) > max_questions:
            lines.append(f"\n… and {len(changed) - max_questions} more.")
    return "\n".join(lines) + "\n"


@console_script
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=program("bench.compare"), description=__doc__.split("\n\n")[0])
    parser.add_argument("dir_a", help="job directory A (the baseline)")
    parser.add_argument("dir_b", help="job directory B")
    parser.add_argument("--output", "-o", help="also write the markdown to this file")
    parser.add_argument("--questions", type=int, default=30, help="changed questions listed at most")
    args = parser.parse_args(argv)
    for path in (args.dir_a, args.dir_b):
        problem = _not_a_job(Path(path))
        if problem:
            print(f"error: {problem}; give two job directories", file=sys.stderr)
            return 2
    text = compare_markdown(args.dir_a, args.dir_b, args.questions)
    if args.output:
        problem = write_output(Path(args.output), text)
        if problem:
            print(f"error: {problem}", file=sys.stderr)
            return 2
    return print_text(text)


def _not_a_job(path: Path) -> str | None:
    """Why ``path`` is not a job directory whose run.json can be read, else None."""
    run = path / "run.json"
    if not run.is_file():
        return f"{path} is not a job directory (no run.json)"
    try:
        data = json.loads(run.read_bytes().decode("utf-8"))
    except (OSError, ValueError) as err:
        return f"{run}: cannot read it ({err})"
    if not isinstance(data, dict):
        return f"{run}: a JSON {type(data).__name__}, not a job record (an object)"
    return None


if __name__ == "__main__":
    sys.exit(main())
