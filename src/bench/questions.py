"""Questions and references (spec 1.3), extracted by code from the recorded history.

Four types, asked in this order (``files_changed`` first, its view closes the history):
``files_changed``, ``first_edit``, ``test_counts``, ``first_error``. A question that
cannot be referenced exactly is dropped with a reason, never replaced.

    from bench.questions import add_questions
    add_questions(case)  # fills case.questions and case.dropped_questions
"""

from __future__ import annotations

import logging
import re

from bench.extract import (
    command_runs,
    edited_files,
    parse_first_exception,
    parse_test_counts,
    relative_to_repo,
    repo_edits,
    summary_line,
    tool_events,
)
from bench.schema import Case, DroppedQuestion, Question

__all__ = ["QUESTION_TYPES", "add_questions", "ordinal", "patch_paths", "question_text"]

log = logging.getLogger(__name__)

QUESTION_TYPES = ("files_changed", "first_edit", "test_counts", "first_error")

_DIFF_HEADER = re.compile(r"^diff --git a/(\S+) b/(\S+)", re.M)


def patch_paths(model_patch: str) -> list[str]:
    """Repo-relative paths named in the patch's ``diff --git`` headers, sorted."""
    paths = set()
    for old, new in _DIFF_HEADER.findall(model_patch or ""):
        paths.add(new if new != "/dev/null" else old)
    return sorted(paths)


def ordinal(k: int) -> str:
    suffix = "th" if 10 <= k % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(k % 10, "th")
    return f"{k}{suffix}"


def question_text(qtype: str, params: dict) -> str:
    if qtype == "files_changed":
        return (
            "Which files did you change in the repository? "
            "List every path relative to the repository root."
        )
    if qtype == "first_edit":
        return (
            "What exact code did your first edit of the repository insert? "
            "Give the file (path relative to the repository root) and the code."
        )
    nth, command = ordinal(params["ordinal"]), params["command"]
    if qtype == "test_counts":
        return (
            f"The {nth} time you ran `{command}`, how many tests passed and how many failed? "
            "Report errors separately if the test runner did."
        )
    if qtype == "first_error":
        return f"What exception (type and message) did the {nth} run of `{command}` print?"
    raise ValueError(f"unknown question type {qtype!r}")


def _question(case: Case, qtype: str, reference, keys, indices, params=None) -> Question:
    params = params or {}
    return Question(
        qid=f"{case.case_id}:{qtype}",
        type=qtype,
        question=question_text(qtype, params),
        reference=reference,
        evidence_keys=[k for k in keys if k],
        evidence_messages=sorted(set(indices)),
        params=params,
    )


def add_questions(case: Case) -> Case:
    """Extract every question type's reference; record drops with reasons."""
    events = tool_events(case.messages)
    edits = repo_edits(events, case.repo_root)
    runs = command_runs(events)
    questions: list[Question] = []
    dropped: list[DroppedQuestion] = []

    # files_changed: the patch headers, when the trajectory shows exactly those changes.
    changed = patch_paths(case.model_patch)
    shown = edited_files(edits, case.repo_root)
    if not changed:
        dropped.append(DroppedQuestion("files_changed", "model_patch names no file"))
    elif shown != changed:
        missing = sorted(set(changed) - set(shown))
        extra = sorted(set(shown) - set(changed))
        dropped.append(DroppedQuestion(
            "files_changed",
            f"patch files differ from the edits the trajectory shows "
            f"(in patch only: {missing}; edited only: {extra})",
        ))
    else:
        indices = [e.call_index for e in edits] + [e.result_index for e in edits if e.result_index is not None]
        questions.append(_question(case, "files_changed", changed, changed, indices))

    # first_edit: the first change inside the repository, if it can be cited exactly.
    first = next((e for e in edits if e.kind != "delete"), None)
    if case.repo_root is None:
        dropped.append(DroppedQuestion("first_edit", "repository root unknown (no <uploaded_files>)"))
    elif first is None:
        dropped.append(DroppedQuestion("first_edit", "no edit inside the repository"))
    elif first.kind != "editor" or first.code is None:
        dropped.append(DroppedQuestion(
            "first_edit",
            f"first edit of the repository was a shell command that cannot be cited exactly: "
            f"{first.command[:120]!r}",
        ))
    else:
        path = relative_to_repo(first.path, case.repo_root)
        indices = [first.call_index] + ([first.result_index] if first.result_index is not None else [])
        questions.append(_question(case, "first_edit", {"path": path, "code": first.code},
                                   [path, first.code], indices))

    # test_counts: the first run whose output carries a test-runner summary.
    for run in runs:
        counts = parse_test_counts(run.output)
        if counts is not None:
            params = {"command": run.command, "ordinal": run.ordinal}
            questions.append(_question(
                case, "test_counts", counts,
                [run.command, summary_line(run.output or "")],
                [run.call_index, *run.result_indices], params,
            ))
            break
    else:
        dropped.append(DroppedQuestion("test_counts", "no test-runner summary in any command output"))

    # first_error: the first command output that shows an exception.
    for run in runs:
        hit = parse_first_exception(run.output)
        if hit is not None:
            error, line = hit
            params = {"command": run.command, "ordinal": run.ordinal}
            questions.append(_question(
                case, "first_error", error, [run.command, line],
                [run.call_index, *run.result_indices], params,
            ))
            break
    else:
        dropped.append(DroppedQuestion("first_error", "no exception in any command output"))

    order = {t: i for i, t in enumerate(QUESTION_TYPES)}
    case.questions = sorted(questions, key=lambda q: order[q.type])
    case.dropped_questions = dropped
    for drop in dropped:
        log.debug("dropped %s question of %s: %s", drop.type, case.case_id, drop.reason)
    return case
