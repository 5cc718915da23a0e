"""The offline evidence reader reads a compact view's summary as text (spec 3).

Summaries here come from the real ``ExtractiveSummarizer`` through ``CompactPolicy`` where
possible, or are written by hand in its format when a test needs one exact item.

    uv run pytest tests/test_reader.py
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from bench.policies import CompactPolicy, PolicyContext
from bench.policies.summarize import ExtractiveSummarizer
from bench.reader import ABSTENTION, EvidenceReader, extract_answer
from bench.schema import Case, Question, View
from bench.tokens import TokenCounter

COUNTER = TokenCounter()
ROOT = "/repo"
BIG = "collecting ...\n" * 60  # over micro_compact's 500 characters
NO_AUTO = {"enabled": False}


def bash(call_id: str, command: str, output: str, code: int = 0, text: str = "") -> list[BaseMessage]:
    call = {"name": "execute_bash", "args": {"command": command}, "id": call_id, "type": "tool_call"}
    return [AIMessage(content=text, tool_calls=[call]),
            ToolMessage(content=f"{output}\n[Command finished with exit code {code}]", tool_call_id=call_id,
                        name="execute_bash")]


def edit(call_id: str, command: str, path: str, reply: str | None = None, **args: Any) -> list[BaseMessage]:
    if reply is None:
        reply = (f"File created successfully at: {path}" if command == "create"
                 else f"The file {path} has been edited. Review the changes and make sure they are as expected.")
    call = {"name": "str_replace_editor", "args": {"command": command, "path": path, **args}, "id": call_id,
            "type": "tool_call"}
    return [AIMessage(content="", tool_calls=[call]),
            ToolMessage(content=reply, tool_call_id=call_id, name="str_replace_editor")]


def case_of(messages: list[BaseMessage]) -> Case:
    return Case(case_id="c", instance_id="i", repo="r", source_row=0, trajectory_id="t", system_prompt="",
                messages=messages, tools=[], model_patch="", repo_root=ROOT)


def question(qtype: str, command: str | None = None, ordinal: int = 1) -> Question:
    """A question as the runner asks it; reference and evidence keys are left empty on purpose."""
    params = {"command": command, "ordinal": ordinal} if command else {}
    return Question(qid=f"c:{qtype}", type=qtype, question="?", reference=None, evidence_keys=[],
                    evidence_messages=[], params=params)


def compact(messages: list[BaseMessage], **mechanism: Any) -> tuple[Case, View]:
    case = case_of([HumanMessage("Fix the bug in /repo."), *messages])
    auto = mechanism.pop("auto_compact", None)
    # no budget: these tests are about reading what a summary holds (the budget has its own tests)
    unbounded = ExtractiveSummarizer(max_fraction=None)
    policy = CompactPolicy(context=PolicyContext(counter=COUNTER, mechanism=mechanism, summarizer=unbounded),
                           **({"auto_compact": auto} if auto else {}))
    return case, policy(case)


def hand_view(summary: str, tail: list[BaseMessage] = (), store: dict[str, str] | None = None,
              guidance: str | None = None) -> tuple[Case, View]:
    """A compact view whose summary is written in the extractive summarizer's format."""
    messages = [HumanMessage(f"The history before this point was replaced by the summary below.\n\n{summary}"),
                *tail]
    view = View(case_id="c", arm="compact", messages=messages, kept_tokens=0, full_messages=0, full_tokens=0,
                summary=summary, store=store or {}, guidance=guidance)
    return case_of(list(tail)), view


def timeline(*items: str, files: tuple[str, ...] = ()) -> str:
    """A summary with a file list and a commands timeline, as the sre prompt's sections."""
    parts = ["[EXTRACTIVE SUMMARY: produced offline by rules.]",
             "3. Files and Code Sections:\n" + "\n".join(f"- {f}" for f in files or ("(nothing found by the rules)",)),
             "4. Commands and Observations:\n" + "\n".join(f"- {i}" for i in items)]
    return "\n\n".join(parts)


def ask(case: Case, view: View, q: Question) -> tuple[Any, list[str]]:
    answer = EvidenceReader().answer(case, view, q)
    return (None if answer.answer == ABSTENTION else json.loads(answer.answer)), answer.retrievals


# --- commands and test summaries -----------------------------------------------------------


def test_reads_a_command_and_its_test_summary_from_the_summary() -> None:
    history = [*bash("a", "cd /repo && python -m pytest tests -q", "..F....\n=== 1 failed, 6 passed in 0.42s ===",
                     code=1),
               *bash("b", "ls", "setup.py")]
    case, view = compact(history)
    assert [m.type for m in view.messages] == ["human"]  # shipped: the summary is all there is
    assert "=== 1 failed, 6 passed in 0.42s ===" in view.summary
    got, retrievals = ask(case, view, question("test_counts", "cd /repo && python -m pytest tests -q"))
    assert got == {"passed": 6, "failed": 1} and retrievals == []


def test_a_summary_command_matches_the_question_with_whitespace_folded() -> None:
    command = "cd /repo &&\n  python -m pytest   tests"
    case, view = compact([*bash("a", command, "=== 2 passed in 0.1s ===")])
    assert ask(case, view, question("test_counts", command))[0] == {"passed": 2, "failed": 0}


def test_an_excerpt_that_is_not_a_summary_line_yields_nothing() -> None:
    # The excerpt is the output's last line: here the log goes on after its summary line.
    output = "=== 1 failed, 6 passed in 0.42s ===\ncoverage written to htmlcov/"
    case, view = compact([*bash("a", "pytest", output)])
    assert ask(case, view, question("test_counts", "pytest"))[0] is None
    # A one-line excerpt of an exception is not read as one without its traceback header.
    case, view = compact([*bash("b", "python repro.py", "Traceback (most recent call last):\n  File x\nKeyError: 'k'",
                                code=1)])
    assert "KeyError: 'k'" in view.summary
    assert ask(case, view, question("first_error", "python repro.py"))[0] is None


# --- edits -----------------------------------------------------------------------------------


def test_reads_the_files_an_edit_changed_from_the_summary() -> None:
    history = [*edit("v", "view", "/repo/pkg/util.py", reply="1\timport os"),
               *edit("c", "create", "/repo/repro.py", file_text="print(1)\n"),
               *edit("s", "str_replace", "/repo/pkg/core.py", old_str="a", new_str="b"),
               *edit("f", "str_replace", "/repo/pkg/other.py",
                     reply="ERROR: No replacement was performed, old_str `a` did not appear verbatim."),
               *edit("t", "create", "/tmp/scratch.py", file_text="x")]
    case, view = compact(history)
    assert "/repo/pkg/core.py (str_replace)" in view.summary
    assert ask(case, view, question("files_changed"))[0] == ["pkg/core.py", "repro.py"]
    # The summary shows that an edit came first but does not quote its code.
    assert ask(case, view, question("first_edit"))[0] is None


def test_the_file_list_answers_when_the_timeline_left_older_calls_out() -> None:
    summary = timeline("(12 earlier items omitted)", "`ls` -> setup.py",
                       files=("/repo/a.py (view, str_replace x2)", "/repo/b.py (create)", "/repo/c.py (view)"))
    case, view = hand_view(summary)
    assert ask(case, view, question("files_changed"))[0] == ["a.py", "b.py"]
    assert ask(case, view, question("first_edit"))[0] is None
    # Neither list complete: the changed files are not known.
    summary = timeline("(12 earlier items omitted)", "`ls` -> setup.py", files=("(3 earlier items omitted)",
                                                                                "/repo/b.py (create)"))
    case, view = hand_view(summary)
    assert ask(case, view, question("files_changed"))[0] is None


def test_first_edit_in_the_tail_counts_only_when_the_summary_shows_no_earlier_edit() -> None:
    tail = edit("e", "str_replace", "/repo/a.py", old_str="x", new_str="y = 1")
    case, view = hand_view(timeline("`ls` -> a.py"), tail)
    assert ask(case, view, question("first_edit"))[0] == {"path": "a.py", "code": "y = 1"}
    case, view = hand_view(timeline("str_replace_editor create /repo/new.py -> File created successfully"), tail)
    assert ask(case, view, question("first_edit"))[0] is None  # the first edit is in the summary, without code
    case, view = hand_view(timeline("(3 earlier items omitted)", "`ls` -> a.py"), tail)
    assert ask(case, view, question("first_edit"))[0] is None  # an older edit may have been left out


# --- unknown output --------------------------------------------------------------------------


def test_cleared_and_cut_outputs_give_the_abstention() -> None:
    later = [m for i in range(5) for m in bash(f"l{i}", f"ls {i}", "x")]  # micro_compact keeps the newest 5
    case, view = compact([*bash("a", "pytest", BIG + "=== 3 passed in 0.1s ==="), *later])
    assert "`pytest` -> output cleared" in view.summary
    answer = EvidenceReader().answer(case, view, question("test_counts", "pytest"))
    assert answer.answer == ABSTENTION and answer.retrievals == []
    for item in ("`pytest` -> === 3 passed in 0.1s ===", "`pytest` -> === 3 passed in 0.1s === [exit code 1]"):
        assert ask(*hand_view(timeline(item)), question("test_counts", "pytest"))[0] == {"passed": 3, "failed": 0}
    for item in ("`pytest` -> output cleared", "`pytest` -> no result", "`pytest` -> === 3 passed in 0.1s ==..."):
        assert ask(*hand_view(timeline(item)), question("test_counts", "pytest"))[0] is None


# --- ordinals ----------------------------------------------------------------------------------


def test_run_ordinals_count_summary_runs_then_the_tail() -> None:
    summary = timeline("`pytest -q` -> === 1 failed, 1 passed in 0.1s ===", "`ls` -> a.py",
                       "`pytest -q` -> === 2 passed in 0.1s ===")
    tail = bash("t", "pytest -q", "=== 5 passed in 0.1s ===")
    case, view = hand_view(summary, tail)
    assert ask(case, view, question("test_counts", "pytest -q", 1))[0] == {"passed": 1, "failed": 1}
    assert ask(case, view, question("test_counts", "pytest -q", 2))[0] == {"passed": 2, "failed": 0}
    assert ask(case, view, question("test_counts", "pytest -q", 3))[0] == {"passed": 5, "failed": 0}
    assert ask(case, view, question("test_counts", "pytest -q", 4))[0] is None


def test_ordinals_through_a_real_compaction_with_a_tail() -> None:
    history = [*bash("a", "pytest", "=== 1 failed in 0.1s ===", code=1), *bash("b", "ls", "x"),
               *bash("c", "pytest", "=== 1 passed in 0.1s ===")]
    case, view = compact(history, stepcut=True, tail_fraction=0.45)
    assert view.info["tail"]["messages"] == 2 and "`pytest` -> === 1 failed" in view.summary
    assert ask(case, view, question("test_counts", "pytest", 1))[0] == {"passed": 0, "failed": 1}
    assert ask(case, view, question("test_counts", "pytest", 2))[0] == {"passed": 1, "failed": 0}


def test_unknown_earlier_runs_make_the_ordinal_unknown() -> None:
    long = "pytest -q tests/test_a.py tests/test_b.py --maxfail=1 -x --tb=short"
    tail = bash("t", long, "=== 5 passed in 0.1s ===")
    q = question("test_counts", long, 1)
    for summary in (
        timeline("(7 earlier items omitted)", "`ls` -> a.py"),  # older calls left out
        timeline("`pytest -q tests/test_a.py tests/test_b...` -> === 1 passed in 0.1s ==="),  # a cut command
        timeline("`ls` -> a.py") + "\n\n6. Problem Solving:\n- [Retries collapsed: 1 earlier failed attempt(s) of "
                                   "this action were removed from the history: `pytest -q tests/test_a.py...",
        "A free-text summary: ran the tests a few times, fixed the bug.",  # no timeline at all
    ):
        assert ask(*hand_view(summary, tail), q)[0] is None, summary
    # A cut command that cannot be this one, or a collapsed editor retry, changes nothing.
    for summary in (
        timeline("`python -m build --wheel...` -> done"),
        timeline("`ls` -> a.py") + "\n\n6. Problem Solving:\n- [Retries collapsed: 2 earlier failed attempt(s) of "
                                   "this action were removed from the history: `str_replace_editor str_replace /re...",
    ):
        assert ask(*hand_view(summary, tail), q)[0] == {"passed": 5, "failed": 0}, summary


def test_collapsed_attempts_in_the_tail_are_earlier_runs() -> None:
    history = [*bash("f1", "pytest tests/a.py -x", "=== 1 failed in 0.1s ===", code=1),
               *bash("f2", "pytest tests/a.py", "=== 2 failed in 0.1s ===", code=1),
               *bash("ok", "pytest tests/a.py", "=== 2 passed in 0.1s ===")]
    case, view = compact(history, collapse=True, auto_compact=NO_AUTO)
    assert view.info["collapse"]["attempts_removed"] == 2
    assert ask(case, view, question("test_counts", "pytest tests/a.py -x", 1))[0] == {"passed": 0, "failed": 1}
    assert ask(case, view, question("test_counts", "pytest tests/a.py", 1))[0] == {"passed": 0, "failed": 2}
    assert ask(case, view, question("test_counts", "pytest tests/a.py", 2))[0] == {"passed": 2, "failed": 0}


# --- handles -------------------------------------------------------------------------------------


def test_handles_named_in_the_summary_are_opened_and_recorded() -> None:
    history = [*bash("a", "pytest", BIG + "=== 4 failed, 9 passed in 0.1s ===\ncoverage written to htmlcov/", code=1),
               *bash("b", "ls", "x")]
    case, view = compact(history, offload=True)
    handle = next(iter(view.store))
    assert f'`pytest` -> ... coverage written to htmlcov/ [exit code 1] (stored: read_tool_output(handle="{handle}"))' in view.summary
    got, retrievals = ask(case, view, question("test_counts", "pytest"))
    assert got == {"passed": 9, "failed": 4} and retrievals == [handle]
    # A question the excerpts answer opens nothing; an unrelated handle is never opened.
    assert ask(case, view, question("test_counts", "ls"))[1] == []


def test_verify_opens_the_asked_run_before_trusting_its_excerpt() -> None:
    summary = timeline('`pytest` -> === 1 passed in 0.1s === (stored: read_tool_output(handle="h1"))',
                       '`ls` -> x (stored: read_tool_output(handle="h2"))')
    store = {"h1": "=== 1 failed, 1 passed in 0.1s ===\n=== 1 passed in 0.1s ===", "h2": "x"}
    assert ask(*hand_view(summary, store=store), question("test_counts", "pytest")) == (
        {"passed": 1, "failed": 0}, [])  # without guidance the excerpt answers
    assert ask(*hand_view(summary, store=store, guidance="open stored outputs"), question("test_counts", "pytest")) == (
        {"passed": 1, "failed": 1}, ["h1"])
    # A handle the view names but the arm did not store cannot be opened.
    summary = timeline('`pytest` -> output cleared (stored: read_tool_output(handle="gone"))')
    assert ask(*hand_view(summary, store=store), question("test_counts", "pytest")) == (None, [])


def test_handles_of_collapsed_attempts_are_opened() -> None:
    history = [*bash("f1", "python repro.py", "Traceback (most recent call last):\n  File x\nValueError: bad\n" + BIG,
                     code=1),
               *bash("ok", "python repro.py --fixed", "done")]
    case, view = compact(history, collapse=True, offload=True, auto_compact=NO_AUTO)
    note = next(m for m in view.messages if isinstance(m, AIMessage) and "Retries collapsed" in m.content)
    handle = next(h for h in view.store if h in note.content)
    got, retrievals = ask(case, view, question("first_error", "python repro.py"))
    assert got == {"type": "ValueError", "message": "bad"} and retrievals == [handle]


# --- what the reader never reads -----------------------------------------------------------------


def test_the_reader_never_reads_the_reference_or_the_evidence_keys() -> None:
    history = [*edit("c", "create", "/repo/repro.py", file_text="print(1)\n"),
               *bash("a", "pytest", "=== 1 failed, 6 passed in 0.42s ===", code=1),
               *bash("b", "python repro.py", "Traceback (most recent call last):\n  File x\nKeyError: 'k'", code=1)]
    questions = [question("files_changed"), question("first_edit"), question("test_counts", "pytest"),
                 question("first_error", "python repro.py")]
    bogus = {"reference": {"passed": 99, "failed": 99, "path": "nowhere.py", "code": "bogus"},
             "evidence_keys": ["=== 99 passed in 1s ===", "nowhere.py"], "evidence_messages": [0, 1, 2, 3]}
    for mechanism in ({}, {"stepcut": True, "tail_fraction": 0.5}, {"offload": True, "verify": True}):
        case, view = compact(history, **mechanism)
        for q in questions:
            honest = EvidenceReader().answer(case, view, q)
            fooled = EvidenceReader().answer(case, view, replace(q, **bogus))
            assert (fooled.answer, fooled.retrievals) == (honest.answer, honest.retrievals), (mechanism, q.type)
    full = case_of([HumanMessage("go"), *history])
    assert extract_answer(questions[2], full.messages, full) == {"passed": 6, "failed": 1}


@pytest.mark.parametrize("summary", [None, ""])
def test_without_a_summary_the_messages_are_all_there_is(summary: str | None) -> None:
    tail = bash("t", "pytest -q", "=== 5 passed in 0.1s ===")
    view = View(case_id="c", arm="nlatest", messages=tail, kept_tokens=0, full_messages=0, full_tokens=0,
                summary=summary)
    assert ask(case_of(tail), view, question("test_counts", "pytest -q", 1))[0] == {"passed": 5, "failed": 0}
