"""The check: the written sample is what the rows build, and bench makes of each row what the row
expects (accepted or rejected with its reason, the trailing calls dropped, the question types kept
and dropped, each reference), read through bench's own code: ``bench.data.selection.load_cases`` on the
shipped source (what a job reads) and, with ``datasets``, on the same file as a local source.

    problems = check_sample(build_rows(), datasets=False)   # [] when all is well

Only what bench does not decide is checked on the file itself: its size, the row and message
shapes the README promises, and the long outputs the policies need.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bench.data.selection import Selection, load_cases
from bench.questions import CODING_TYPES
from bench.sources import LocalFile, Shipped, sample_path
from bench.store.schema import Case, Question
from samplegen.expected import QUESTIONS, Accepted, Rejected, SampleRow

__all__ = ["check_sample", "file_problems", "row_problems", "bench_problems"]

MAX_BYTES = 250_000  # the shipped sample stays small (it is in the wheel); 244.5 KB used by 11 rows
MESSAGES = (12, 40)  # messages a row has, system prompt included
LONG_OUTPUT = 2_000  # a tool output longer than this is long (two at least: the policies' cut-offs)
KEYS = {"role", "content", "tool_calls", "tool_call_id", "name"}


def row_problems(row: dict[str, Any]) -> list[str]:
    """What the sample promises about a row that no bench code decides: its size and message shape."""
    tid, messages = row.get("trajectory_id"), row["trajectory"]
    problems = []
    if not MESSAGES[0] <= len(messages) <= MESSAGES[1]:
        problems.append(f"{tid}: {len(messages)} messages (not {MESSAGES[0]}-{MESSAGES[1]})")
    if row.get("synthetic") is not True or not row.get("notes"):
        problems.append(f"{tid}: synthetic/notes missing")
    if [m["role"] for m in messages[:2]] != ["system", "user"]:
        problems.append(f"{tid}: must start with system, user")
    for m in messages:
        if set(m) != KEYS:
            problems.append(f"{tid}: message keys {sorted(m)}")
        if not isinstance(m["content"], str):
            problems.append(f"{tid}: non-string content")
    return problems


def file_problems(text: str) -> list[str]:
    """The file's size, each row's promises, and the long outputs the policies need."""
    problems: list[str] = []
    size = len(text.encode())
    if size > MAX_BYTES:
        problems.append(f"file is {size} bytes (> {MAX_BYTES // 1000} KB)")
    long_outputs = 0
    for number, line in enumerate(text.splitlines(), 1):
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(f"line {number}: not JSON ({exc})")
            continue
        problems += row_problems(row)
        long_outputs += sum(1 for m in row["trajectory"] if m["role"] == "tool" and isinstance(m["content"], str)
                            and len(m["content"]) > LONG_OUTPUT)
    if long_outputs < 2:
        problems.append(f"fewer than two tool outputs longer than {LONG_OUTPUT:,} characters")
    return problems


def _call_at(case: Case, index: int) -> str | None:
    """The id of the first call of the case's message ``index`` (an assistant message)."""
    calls = getattr(case.messages[index], "tool_calls", None) or []
    return calls[0]["id"] if calls else None


def _result_at(case: Case, index: int) -> str | None:
    return getattr(case.messages[index], "tool_call_id", None)


def _reference_problems(sample: SampleRow, expected: Accepted, case: Case) -> list[str]:
    """Each kept question's reference (and the messages its evidence is) against the expectation;
    trajectory positions are matched to case messages by call id (the system prompt is no message)."""
    tid, trajectory = sample.tid, sample.row["trajectory"]
    questions: dict[str, Question] = {q.type: q for q in case.questions}
    problems: list[str] = []

    def differs(what: str, got: Any, want: Any) -> None:
        if got != want:
            problems.append(f"{tid}: {what} is {got!r}, expected {want!r}")

    if expected.files_changed is not None:
        differs("files_changed", questions["files_changed"].reference, expected.files_changed)
    if (fe := expected.first_edit) is not None:
        q = questions["first_edit"]
        differs("first_edit path", q.reference["path"], fe.path)
        differs("first_edit code (its whole inserted text)", q.reference["context"], fe.code)
        differs("first_edit call", _call_at(case, min(q.evidence_messages)),
                trajectory[fe.message_index]["tool_calls"][0]["id"])
    if (tc := expected.test_counts) is not None:
        q = questions["test_counts"]
        counts = {k: q.reference.get(k, 0) for k in ("passed", "failed", "errors")}
        differs("test_counts", counts, {"passed": tc.passed, "failed": tc.failed, "errors": tc.errors})
        differs("test_counts run", (q.params["command"], q.params["ordinal"]), (tc.command, tc.k))
        differs("test_counts result", _result_at(case, max(q.evidence_messages)),
                trajectory[tc.message_index]["tool_call_id"])
    if (fr := expected.first_error) is not None:
        q = questions["first_error"]
        differs("first_error", f"{q.reference['type']}: {q.reference['message']}", fr.exception)
        differs("first_error run", (q.params["command"], q.params["ordinal"]), (fr.command, fr.k))
        if fr.message_index is not None:
            differs("first_error result", _result_at(case, max(q.evidence_messages)),
                    trajectory[fr.message_index]["tool_call_id"])
    return problems


def bench_problems(rows: list[SampleRow], selection: Selection, route: str) -> list[str]:
    """Each row's expectation against what ``load_cases`` made of it (``route`` names the reading)."""
    problems: list[str] = []
    cases = {c.trajectory_id: c for c in selection.cases}
    rejected = {r.trajectory_id: r for r in selection.rejected}
    if [c.trajectory_id for c in selection.cases] != [s.tid for s in rows if isinstance(s.expected, Accepted)]:
        problems.append(f"{route}: cases {sorted(cases)} are not the rows expected accepted, in order")
    for sample in rows:
        tid, expected = sample.tid, sample.expected
        if isinstance(expected, Rejected):
            if tid not in rejected:
                problems.append(f"{route}: {tid}: expected rejected ({expected.says}), bench accepted it")
                continue
            reason = rejected[tid].reason
            for part in (f"message {expected.message}", expected.call_id, expected.says):
                if part not in reason:
                    problems.append(f"{route}: {tid}: bench's rejection {reason!r} does not say {part!r}")
            continue
        if tid not in cases:
            why = rejected[tid].reason if tid in rejected else "not read"
            problems.append(f"{route}: {tid}: expected accepted, bench did not make a case of it ({why})")
            continue
        case = cases[tid]
        if tuple(case.dropped_trailing) != expected.trailing:
            problems.append(f"{route}: {tid}: the conversion dropped the trailing calls {case.dropped_trailing}, "
                            f"expected {list(expected.trailing)} ({expected.conversion})")
        kept = [q.type for q in case.questions if q.type in QUESTIONS]
        dropped = {d.type: d.reason for d in case.dropped_questions if d.type in QUESTIONS}
        if kept != expected.kept():
            problems.append(f"{route}: {tid}: kept {kept}, expected {expected.kept()} (dropped: {dropped})")
        if set(dropped) != {q for q, _ in expected.dropped}:
            problems.append(f"{route}: {tid}: dropped {sorted(dropped)}, expected "
                            f"{sorted(q for q, _ in expected.dropped)}")
        if kept == expected.kept():
            problems += [f"{route}: {p}" for p in _reference_problems(sample, expected, case)]
    return problems


def check_sample(rows: list[SampleRow], path: Path, datasets: bool = True) -> list[str]:
    """Every problem of the sample file at ``path`` (the shipped one) and of bench's reading of it."""
    problems = file_problems(path.read_text(encoding="utf-8"))
    if tuple(QUESTIONS) != tuple(CODING_TYPES):
        problems.append(f"the rows expect the coding question types {list(QUESTIONS)}, bench asks "
                        f"{list(CODING_TYPES)}: add their expectations (samplegen.expected)")
    if sample_path().resolve() != path.resolve():
        return problems + [f"bench reads its sample from {sample_path()}, not {path}: install this checkout "
                           "(uv sync) to check what it ships"]
    problems += bench_problems(rows, load_cases(Shipped(source="sample")), "shipped source")
    if datasets:  # the same file read through `datasets`, as dataset=local reads a user's jsonl
        problems += bench_problems(rows, load_cases(LocalFile(path=str(path))), "local source")
    return problems
