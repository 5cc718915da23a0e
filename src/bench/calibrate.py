"""Judge calibration: a judge's verdicts against human verdicts on a labelled answer file.

    uv run python -m bench.calibrate tests/data/judge_calibration.jsonl                  # the exact judge
    uv run python -m bench.calibrate FILE judge=llm judge.name=gpt-4.1 --fail-under 0.9  # the LLM judge
    uv run python -m bench.calibrate FILE judge=panel judge.members.llm.name=gpt-4.1   # exact + LLM, majority

FILE is JSONL, one labelled answer a line::

    {"id": "...", "type": "first_error", "question": "...", "reference": {...},
     "answer": "...", "verdict": "correct|wrong|abstained", "repo_root": "/workspace/x"}

(``repo_root`` optional; other fields, e.g. a ``note`` on why, are ignored). The judge is
built from ``conf/judge/<name>.yaml`` with the trailing Hydra overrides exactly as
``bench.rescore`` builds it (``judge=exact`` by default), so LLM judge calls go through the
response cache. Each row becomes a :class:`~bench.store.schema.Question` (``qid`` = ``id``, no
evidence) and an answered :class:`~bench.store.schema.Answer`, scored by ``judge.score``; rows
are judged concurrently up to the judge's ``max_concurrency``. A judge that raises on a row
(e.g. a type it does not know) makes that row ``unscored``.

Printed: every disagreement (id, type, human and judge verdicts, the judge's reason, an
excerpt of the answer), then per type n, agreement and Cohen's kappa (categories correct,
wrong, abstained, and unscored when the judge gives it), and last the line
``agreement A/N (P%) kappa K``; under ``judge=panel`` (the panel's majority verdict is the
judge's) each member's agreement with the humans and the members' agreement come before it.
Exit 2 with one line naming the file and line on bad input; ``--fail-under FRACTION`` exits 1 when the overall agreement is below it (for CI).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.core import redact
from bench.core.errors import BenchError, console_script, program
from bench.data.cases import MAX_NESTING, too_deep
from bench.questions import QUESTION_TYPES
from bench.stats import cohen_kappa
from bench.store.schema import Answer, Question

__all__ = ["HUMAN_VERDICTS", "KNOWN_TYPES", "CalibrationError", "Row", "cohen_kappa", "load_rows", "judge_rows",
           "report_lines", "main"]

HUMAN_VERDICTS = ("correct", "wrong", "abstained")
# The coding types (bench.questions) and issue 11's domain-neutral ones; a file may use any of them.
KNOWN_TYPES = QUESTION_TYPES  # the registry's, in its order
REQUIRED = ("id", "type", "question", "reference", "answer", "verdict")


class CalibrationError(BenchError, ValueError):
    """Bad calibration input: the message names the file and line."""


@dataclass(frozen=True)
class Row:
    id: str
    type: str
    question: str
    reference: Any
    answer: str
    verdict: str  # the human verdict
    repo_root: str | None = None


def _row(data: Any, where: str, seen: set[str]) -> Row:
    if not isinstance(data, dict):
        raise CalibrationError(f"{where}: expected a JSON object, got {type(data).__name__}")
    missing = [k for k in REQUIRED if k not in data]
    if missing:
        raise CalibrationError(f"{where}: missing field(s) {', '.join(missing)}")
    for key in ("id", "type", "question", "answer", "verdict"):
        if not isinstance(data[key], str):
            raise CalibrationError(f"{where}: field {key!r} must be a string, got {type(data[key]).__name__}")
    if not data["id"].strip():
        raise CalibrationError(f"{where}: empty id")
    if data["id"] in seen:
        raise CalibrationError(f"{where}: duplicate id {data['id']!r}")
    if data["type"] not in KNOWN_TYPES:
        raise CalibrationError(f"{where}: unknown type {data['type']!r} (known: {', '.join(KNOWN_TYPES)})")
    if data["verdict"] not in HUMAN_VERDICTS:
        raise CalibrationError(f"{where}: unknown verdict {data['verdict']!r} (use {', '.join(HUMAN_VERDICTS)})")
    root = data.get("repo_root")
    if root is not None and not isinstance(root, str):
        raise CalibrationError(f"{where}: field 'repo_root' must be a string or null")
    seen.add(data["id"])
    return Row(id=data["id"], type=data["type"], question=data["question"], reference=data["reference"],
               answer=data["answer"], verdict=data["verdict"], repo_root=root)


def load_rows(path: Path | str) -> list[Row]:
    """The labelled rows of a calibration file; :class:`CalibrationError` on the first bad line."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CalibrationError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as err:
        raise CalibrationError(f"{path}: cannot read: {err}") from None
    rows: list[Row] = []
    seen: set[str] = set()
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            data = json.loads(line)
        except json.JSONDecodeError as err:
            raise CalibrationError(f"{where}: not valid JSON ({err.msg} at column {err.colno})") from None
        except RecursionError:
            raise CalibrationError(f"{where}: nested too deeply to read (JSON deeper than the parser's "
                                   "limit)") from None
        if too_deep(data):  # readable, but deep enough to break the judge's recursive code
            raise CalibrationError(f"{where}: nested more than {MAX_NESTING} levels deep")
        rows.append(_row(data, where, seen))
    if not rows:
        raise CalibrationError(f"{path}: no labelled rows")
    return rows


def _judge_one(judge: Any, row: Row) -> dict[str, Any]:
    question = Question(qid=row.id, type=row.type, question=row.question, reference=row.reference,
                        evidence_keys=[], evidence_messages=[])
    answer = Answer(case_id=row.id, qid=row.id, type=row.type, answer=row.answer, outcome="answered")
    try:
        score = judge.score(question, answer, row.repo_root)
        verdict, reason, panel = score.verdict, score.reason, score.panel
    except Exception as err:  # noqa: BLE001 - one row the judge cannot take must not stop the others
        verdict, reason, panel = "unscored", f"judge failed: {type(err).__name__}: {err}", None
    return {"id": row.id, "type": row.type, "human": row.verdict, "judge": verdict, "reason": reason,
            "answer": row.answer, "panel": panel}


def judge_rows(rows: Sequence[Row], judge: Any, workers: int = 1) -> list[dict[str, Any]]:
    """One result per row, in file order: human and judge verdicts, the judge's reason."""
    if workers > 1:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            return list(pool.map(lambda row: _judge_one(judge, row), rows))
    return [_judge_one(judge, row) for row in rows]


def _excerpt(text: str, width: int = 100) -> str:
    flat = re.sub(r"\s+", " ", text).strip()
    return json.dumps(flat if len(flat) <= width else flat[: width - 1] + "…", ensure_ascii=False)


def _kappa_text(kappa: float | None) -> str:
    return "n/a" if kappa is None else f"{kappa:.3f}"


def report_lines(results: Sequence[dict[str, Any]]) -> list[str]:
    """The printed report: disagreements, the per-type table, and last the overall line."""
    lines = []
    disagreements = [r for r in results if r["human"] != r["judge"]]
    lines.append(f"disagreements: {len(disagreements)}" if disagreements else "disagreements: none")
    for r in disagreements:
        lines.append(f"  {r['id']}  [{r['type']}]  human={r['human']}  judge={r['judge']}")
        reason = re.sub(r"\s+", " ", str(r["reason"])).strip()
        lines.append(f"      reason: {reason}")
        lines.append(f"      answer: {_excerpt(r['answer'])}")
    types = [t for t in KNOWN_TYPES if any(r["type"] == t for r in results)]
    width = max([len("type"), *(len(t) for t in types)])
    lines.append("")
    lines.append(f"{'type':<{width}}  {'n':>4}  {'agree':>5}  {'%':>6}  {'kappa':>6}")
    for qtype in types:
        mine = [r for r in results if r["type"] == qtype]
        agree = sum(r["human"] == r["judge"] for r in mine)
        kappa = cohen_kappa([r["human"] for r in mine], [r["judge"] for r in mine])
        lines.append(f"{qtype:<{width}}  {len(mine):>4}  {agree:>5}  {100 * agree / len(mine):>5.1f}%  "
                     f"{_kappa_text(kappa):>6}")
    lines.extend(_panel_lines(results))
    total = len(results)
    agree = sum(r["human"] == r["judge"] for r in results)
    kappa = cohen_kappa([r["human"] for r in results], [r["judge"] for r in results])
    percent = 100 * agree / total if total else 0.0
    lines.append(f"agreement {agree}/{total} ({percent:.1f}%) kappa {_kappa_text(kappa)}")
    return lines


def _panel_lines(results: Sequence[dict[str, Any]]) -> list[str]:
    """judge=panel: each member against the human verdicts, and the members among themselves."""
    from bench.scoring.panel import panel_metrics

    rows = [r for r in results if r.get("panel")]
    if not rows:
        return []
    members = list(dict.fromkeys(name for r in rows for name in r["panel"]))
    lines = ["", "panel members against the human verdicts:"]
    for name in members:
        mine = [(r["human"], r["panel"].get(name, "unscored")) for r in rows]
        agree = sum(h == j for h, j in mine)
        kappa = cohen_kappa([h for h, _ in mine], [j for _, j in mine])
        lines.append(f"  {name}: {agree}/{len(mine)} ({100 * agree / len(mine):.1f}%) kappa {_kappa_text(kappa)}")
    among = panel_metrics([{"qid": r["id"], "type": r["type"], "verdict": r["judge"], "panel": r["panel"]}
                           for r in rows])
    if among is not None and among["n"]:
        pairs = ", ".join(f"{' vs '.join(p['members'])} kappa {_kappa_text(p['kappa'])}" for p in among["pairs"])
        lines.append(f"  members agree on {100 * among['agreement']:.1f}% of {among['n']} ({pairs}); "
                     f"{among['n_disagreements']} disagreements")
    return lines


def _fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"must be a fraction between 0 and 1, got {text}")
    return value


@console_script
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=program("bench.calibrate"), description=__doc__.split("\n\n")[0])
    parser.add_argument("file", metavar="FILE", help="JSONL of labelled answers (see the module docstring)")
    parser.add_argument("overrides", nargs="*", metavar="KEY=VALUE",
                        help="Hydra overrides: judge=exact|llm and judge.* / cache.* keys")
    parser.add_argument("--fail-under", type=_fraction, default=None, metavar="FRACTION",
                        help="exit 1 when the overall agreement is below this fraction (e.g. 0.95)")
    args = parser.parse_intermixed_args(argv)
    try:
        rows = load_rows(args.file)
    except CalibrationError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    refusal = redact.guard_command_line(args.overrides)  # a key on the command line refused; URLs' secrets never printed
    if refusal:
        print(f"error: {refusal}", file=sys.stderr)
        return 2
    names = [o.split("=", 1)[1] for o in args.overrides if o.split("=", 1)[0] in ("judge", "+judge")]
    overrides = [o for o in args.overrides if o.split("=", 1)[0] not in ("judge", "+judge")]
    name = names[-1] if names else "exact"
    from bench.rescore import build_judge

    try:
        judge, cfg = build_judge(name, overrides)
    except Exception as err:  # noqa: BLE001 - a config, key or endpoint problem, in one line
        from bench.core.failures import one_line

        # the innermost cause's first line: Hydra wraps it ("Error in call to target") and adds its search path
        print(f"error: cannot build judge {name!r}: {redact.scrub(one_line(err))}", file=sys.stderr)
        return 2
    from bench.rescore import judge_workers

    workers = judge_workers(cfg.judge)
    results = judge_rows(rows, judge, workers)
    print(f"judge {getattr(judge, 'name', name)} on {args.file}: {len(results)} labelled answers")
    print("\n".join(report_lines(results)))
    failed = [r for r in results if str(r["reason"]).startswith("judge failed")]
    if len(failed) == len(results):  # no verdict at all: an agreement of 0% would be a figure of nothing
        print(f"error: the judge failed on every row ({len(failed)}): {redact.scrub(str(failed[0]['reason']))[:300]}",
              file=sys.stderr)
        return 1
    agreement = sum(r["human"] == r["judge"] for r in results) / len(results)
    if args.fail_under is not None and agreement < args.fail_under:
        print(f"agreement {agreement:.3f} is below --fail-under {args.fail_under}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
