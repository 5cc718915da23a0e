"""Re-judge stored answers with one common judge: one result row per question.

    uv run python -m bench.rescore multirun/2026-11-29/19-30-00_mechanisms --output rescored.jsonl
    uv run python -m bench.rescore JOB_A JOB_B --judge llm --output rescored.csv judge.name=gpt-4.1

The judge is built from ``conf/judge/<name>.yaml`` (``--judge exact``, the default, or
``--judge llm`` for the LLM judge), composed with the same Hydra overrides as
``bench.main`` (trailing ``key=value`` arguments, e.g. ``judge.name=...`` or
``cache.path=...``), so its calls go through the same response cache: a rescore spends
nothing twice. The job directories are only read, never changed.

Each output row: the job (directory, config label, arm, seed), ``case_id``, ``qid``,
``type``, the stored answer and its outcome, the reference, the job's original verdict
and judge, and the new ``verdict``, ``reason`` and ``judge`` (plus the judge's raw reply
when unscored). ``--output`` ending in ``.csv`` writes CSV (cells starting with ``= + - @`` get a leading
``'``, so no spreadsheet runs them as formulas), anything else JSONL. A
per-job summary (accuracy with the original and the common judge) is printed.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from bench.core.errors import console_script, program
from bench.store.records import safe_line
from bench.study.csvfile import write_csv
from bench.study.jobs import Job, find_job_dirs, load_jobs
from bench.study.output import write_output
from bench.study.text_tables import markdown_table

if TYPE_CHECKING:
    from bench.scoring.judge import Judge

# one stored answer to judge: its job, case and question records, the answer (None: none), the original score
_Task = tuple[Job, dict[str, Any], dict[str, Any], dict[str, Any] | None, dict[str, Any]]

__all__ = ["build_judge", "rescore_jobs", "write_rows", "main"]

log = logging.getLogger(__name__)

CONF_DIR = Path(__file__).resolve().parents[2] / "conf"


def build_judge(name: str = "exact", overrides: list[str] | None = None) -> tuple[Any, Any]:
    """The judge of ``conf/judge/<name>.yaml`` (composed with the overrides) and its config."""
    from hydra import compose, initialize_config_dir
    from hydra.utils import instantiate

    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose("config", overrides=[f"judge={name}", *(overrides or [])])
    from bench.core.components import preflight
    from bench.scoring.judge import check_judge

    judge = check_judge(instantiate(cfg.judge, _convert_="object"))  # its members, before any row
    preflight(judge)  # every model client of the judge (a panel's members too): unreachable fails now, not after the work
    return judge, cfg


def judge_workers(node: Any) -> int:
    """Worker threads for a judge config: its ``max_concurrency``, or its members' largest (a panel)."""
    from bench.llm.limiter import group_workers

    members = node.get("members") or {}
    return max([group_workers(node, "judge.max_concurrency"),
                *(group_workers(m, f"judge.members.{k}.max_concurrency") for k, m in members.items())])


def rescore_jobs(paths: list[Path | str], judge: Judge, workers: int = 1) -> list[dict[str, Any]]:
    """One row per question of every job under ``paths``, judged by ``judge``."""
    from bench.store.schema import Answer, Question

    jobs = load_jobs(paths)
    tasks: list[_Task] = []
    for job in jobs:
        answers = {a["qid"]: a for a in job.answers}  # a resumed job's later line wins
        original = {s["qid"]: s for s in job.scores}
        for case in job.cases:
            for q in case["questions"]:
                tasks.append((job, case, q, answers.get(q["qid"]), original.get(q["qid"]) or {}))
    fields = set(Answer.__dataclass_fields__)
    qfields = set(Question.__dataclass_fields__)

    def judge_one(task: _Task) -> dict[str, Any]:
        job, case, q, stored, original = task
        row = {
            "job": job.name, "job_dir": str(job.path), "config": job.label, "arm": job.arm, "seed": job.seed,
            "case_id": case["case_id"], "qid": q["qid"], "type": q["type"], "question": q["question"],
            "reference": json.dumps(q.get("reference"), ensure_ascii=False),
            "answer": (stored or {}).get("answer"), "outcome": (stored or {}).get("outcome"),
            "original_verdict": original.get("verdict", "missing"), "original_judge": original.get("judge"),
            "original_reason": original.get("reason"),
        }
        if stored is None:
            return {**row, "verdict": "unscored", "reason": "no stored answer", "judge": getattr(judge, "name", "")}
        question = Question(**{k: v for k, v in q.items() if k in qfields})
        answer = Answer(**{k: v for k, v in stored.items() if k in fields})
        try:
            score = judge.score(question, answer, case.get("repo_root"))
        except Exception as err:  # noqa: BLE001 - one failing call must not lose the other rows
            return {**row, "verdict": "unscored", "reason": f"judge failed: {type(err).__name__}: {err}",
                    "judge": getattr(judge, "name", "")}
        return {**row, "verdict": score.verdict, "reason": score.reason, "judge": score.judge,
                "raw": score.raw if score.verdict == "unscored" else None}

    if workers > 1:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            rows = list(pool.map(judge_one, tasks))
    else:
        rows = [judge_one(t) for t in tasks]
    for row, task in zip(rows, tasks, strict=True):
        # a question the job never answered or scored has no verdict that could have changed
        compared = task[3] is not None and row["original_verdict"] != "missing"
        row["changed"] = compared and row["verdict"] != row["original_verdict"]
    return rows


def write_rows(rows: list[dict[str, Any]], output: Path | str) -> Path:
    output = Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    if output.suffix.lower() == ".csv":
        write_csv(pd.DataFrame(rows), output)  # formula-like cells escaped
    else:
        with output.open("w", encoding="utf-8") as handle:
            for row in rows:
                handle.write(safe_line(json.dumps(row, ensure_ascii=False, default=str)) + "\n")
    return output


def summary(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "no question"
    frame = pd.DataFrame(rows)
    out = []
    for _, group in frame.groupby("job_dir", sort=False):
        n = len(group)
        out.append([group["config"].iloc[0], str(group["seed"].iloc[0]), str(n),
                    f"{100 * (group['original_verdict'] == 'correct').mean():.1f}%",
                    f"{100 * (group['verdict'] == 'correct').mean():.1f}%",
                    str(int(group["changed"].sum())), str(int((group["verdict"] == "unscored").sum()))])
    return markdown_table(["config", "seed", "questions", "accuracy (job's judge)", "accuracy (common judge)",
                           "verdicts changed", "unscored"], out)


@console_script
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=program("bench.rescore"), description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="+", metavar="DIR_OR_OVERRIDE",
                        help="job or sweep directories, then optional Hydra overrides (key=value)")
    parser.add_argument("--output", "-o", required=True, help="result file: .jsonl (default) or .csv")
    parser.add_argument("--judge", default="exact", help="conf/judge/<name>.yaml: exact (default) or llm")
    parser.add_argument("--workers", type=int, default=None,
                        help="concurrent judge calls (default: judge.max_concurrency, its cap for auto, else 1)")
    args = parser.parse_intermixed_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    dirs = [p for p in args.paths if "=" not in p or Path(p).exists()]
    overrides = [p for p in args.paths if p not in dirs]
    from bench.core import redact

    refusal = redact.guard_command_line(overrides)  # a key on the command line refused; URLs' secrets never printed
    if refusal:
        print(f"error: {refusal}", file=sys.stderr)
        return 2
    if Path(args.output).is_dir():  # before any judge call is paid for
        print(f"error: --output {args.output} is a directory: give a file name", file=sys.stderr)
        return 2
    if not find_job_dirs(dirs):
        print(f"error: no job directory (with run.json) under {' '.join(dirs)}", file=sys.stderr)
        return 2
    try:
        judge, cfg = build_judge(args.judge, overrides)
    except Exception as err:  # noqa: BLE001 - a config or key problem, in one line
        from bench.core.failures import one_line

        print(f"error: cannot build judge {args.judge!r}: {redact.scrub(one_line(err))}", file=sys.stderr)
        return 2

    workers = args.workers or judge_workers(cfg.judge)
    problem = write_output(Path(args.output), "")  # writable? (fails now, not after the judging)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    rows = rescore_jobs(dirs, judge, workers)
    try:
        path = write_rows(rows, args.output)
    except OSError as err:
        print(f"error: --output {args.output}: cannot write it ({err.strerror or err})", file=sys.stderr)
        return 2
    print(summary(rows))
    print(f"{len(rows)} row(s) written to {path}")
    failed = [r for r in rows if str(r.get("reason") or "").startswith("judge failed")]
    judged = [r for r in rows if r.get("reason") != "no stored answer"]
    if judged and len(failed) == len(judged):  # every call failed: the "accuracy" above is of nothing
        print(f"error: the judge failed on every answer ({len(failed)}): {redact.scrub(str(failed[0]['reason']))[:300]}",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
