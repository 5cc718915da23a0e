"""The question-type registry, the domain-neutral types' rules, profiles, and the chat-log source."""

from __future__ import annotations

import json
import re

import pytest
from omegaconf import OmegaConf

from bench.answering.evidence_reader import EvidenceReader
from bench.core.contracts import problems
from bench.data.cases import row_to_case
from bench.data.selection import DatasetError, load_cases
from bench.policies import FullHistory
from bench.profiles import GENERIC, OPENHANDS, TAU2, Profile, ProfileError, get_profile
from bench.questions import QUESTION_TYPES, REGISTRY, QuestionType, QuestionTypeError, add_questions, select_types
from bench.questions.question_type import type_problems
from bench.scoring.judge import ExactJudge
from bench.sources.chatlog import chat_record, write_chat_jsonl
from bench.text.tokens import TokenCounter

from builders import assistant, call, result, system
from commands import bench, one_line
from paths import PROJECT

SRC = PROJECT / "src" / "bench"


def ops_row(*steps, task="My phone has no service. My number is 555-0100.", tools=("get_line", "done")):
    """A tau2-style row: a greeting, the customer's message, then domain tool calls."""
    flat = [system("You are a support agent."), {"role": "assistant", "content": "Hi! How can I help you today?",
                                                  "tool_calls": None, "tool_call_id": None, "name": None},
            {"role": "user", "content": task, "tool_calls": None, "tool_call_id": None, "name": None}]
    for step in steps:
        flat.extend(step)
    return {"instance_id": "tau2/telecom/x", "repo": "sierra-research/tau2-bench", "trajectory": flat,
            "model_patch": "", "resolved": 1, "exit_status": "submit",
            "tools": [{"type": "function", "function": {"name": t, "parameters": {"type": "object"}}} for t in tools]}


def tool(call_id: str, name: str, args: dict, output: str) -> list[dict]:
    return [assistant(call(call_id, name, args)), result(call_id, name, output)]


def questions(row, profile=TAU2, types=None):
    case = row_to_case(row, 0, profile)
    add_questions(case, TokenCounter(), types)
    return {q.type: q for q in case.questions}, {d.type: d.reason for d in case.dropped_questions}, case


# --- registry and profiles ---------------------------------------------------------------

def test_every_registered_type_implements_the_interface():
    for name, qtype in REGISTRY.items():
        assert qtype.name == name and qtype.rubric.strip()
        assert not problems(qtype, QuestionType) and not type_problems(qtype), name  # the contract, as registered
    assert QUESTION_TYPES[0] == "files_changed"  # asked first: its view closes the history


def test_type_selection_rejects_unknown_types():
    assert select_types(["call_count", "files_changed"]) == ["files_changed", "call_count"]  # registry order
    with pytest.raises(QuestionTypeError, match="unknown question type 'nope'"):
        select_types(["nope"])


def test_no_module_outside_the_profiles_names_a_tool_or_a_marker():
    names = {"execute_bash", "str_replace_editor", "task_tracker", "undo_edit", "get_customer_by_phone"}
    pattern = re.compile(r"|".join(map(re.escape, names)) + r"|OBSERVATION:|Current working directory|\"finish\""
                         r"|'finish'|\"think\"|'think'|\"done\"")
    offenders = []
    for path in SRC.rglob("*.py"):
        if "profiles" in path.parts:
            continue
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            if pattern.search(line) and "events.put" not in line and 'event[0] == "done"' not in line:
                offenders.append(f"{path.relative_to(SRC)}:{number}: {line.strip()}")
    assert not offenders, offenders


def test_profiles_are_data_that_round_trip_and_can_be_overridden():
    for profile in (OPENHANDS, TAU2, GENERIC):
        assert Profile.from_dict(json.loads(json.dumps(profile.to_dict()))) == profile
    custom = get_profile("generic", error_result=r"FAIL\b")
    assert custom.is_error("FAIL: disk full") and not GENERIC.is_error("FAIL: disk full")
    with pytest.raises(ProfileError, match="unknown profile"):
        get_profile("nope")
    assert OPENHANDS.clean("OBSERVATION:\nok[Command finished with exit code 0]") == "ok"
    assert TAU2.clean("OBSERVATION:\nok") == "OBSERVATION:\nok"  # tau2 adds no markers: nothing stripped
    assert TAU2.is_error("Error: Line must be suspended to resume") and not TAU2.is_error("Errors found: 0")


# --- domain-neutral types ------------------------------------------------------------------

def test_tool_output_asks_the_earliest_eligible_call_with_its_ordinal():
    qs, _, _ = questions(ops_row(
        tool("a", "get_line", {"id": "L1"}, "Error: no such line"),              # an error result
        tool("b", "get_line", {"id": "L2"}, "x" * 401),                         # too long
        tool("c", "get_line", {"id": "L3"}, "Status: active"),                  # not unique (below)
        tool("d", "get_line", {"id": "L3"}, "Status: active"),
        tool("e", "check", {}, "555-0100"),                                     # in the task text
        tool("f", "get_line", {"id": "L4"}, "Status: suspended"),
        tool("g", "get_line", {"id": "L4"}, "Status: resumed"),
    ))
    q = qs["tool_output"]
    assert q.reference == "Status: suspended"
    assert q.target == {"tool": "get_line", "arguments": {"id": "L4"}, "ordinal": 1}
    assert q.question == 'The 1st time you called `get_line` with `{"id": "L4"}`, what did it return?'


def test_tool_output_counts_calls_with_the_same_arguments():
    qs, _, _ = questions(ops_row(tool("a", "ping", {"host": "h"}, "Error: down"),
                                 tool("b", "ping", {"host": "h"}, "up in 3 ms")))
    assert qs["tool_output"].target["ordinal"] == 2 and "2nd time" in qs["tool_output"].question


def test_tool_value_takes_the_first_field_whose_value_shows_nowhere_else():
    record = json.dumps({"line_id": "L1", "status": "Active", "data_used_gb": 3.2, "roaming": False})
    qs, _, _ = questions(ops_row(tool("a", "get_line", {"id": "L1"}, record),
                                 tool("b", "note", {"text": "status is Active"}, "ok")))
    q = qs["tool_value"]
    # line_id shows in the call's arguments, status in a later call: data_used_gb is the first unique one
    assert q.target["field"] == "data_used_gb" and q.reference == 3.2
    assert q.question == 'In what `get_line` with `{"id": "L1"}` returned the 1st time, what was `data_used_gb`?'


def test_call_count_takes_the_most_called_tool_ties_alphabetical_finish_excluded():
    steps = [tool("a", "zeta", {}, "1"), tool("b", "alpha", {}, "2"), tool("c", "zeta", {}, "3"),
             tool("d", "alpha", {}, "4"), tool("e", "done", {}, "x"), tool("f", "done", {}, "y"),
             tool("g", "done", {}, "z")]
    qs, _, _ = questions(ops_row(*steps))
    assert qs["call_count"].target == {"tool": "alpha"} and qs["call_count"].reference == 2


def test_first_tool_error_is_the_earliest_error_result_first_line():
    qs, dropped, _ = questions(ops_row(tool("a", "get_line", {}, "Active"),
                                       tool("b", "resume_line", {"id": "L1"}, "Error: Line must be suspended\nmore")))
    assert qs["first_tool_error"].reference == {"tool": "resume_line", "message": "Error: Line must be suspended"}
    _, dropped, _ = questions(ops_row(tool("a", "get_line", {}, "Active")))
    assert dropped["first_tool_error"] == "no tool result is an error"


def test_first_tool_error_message_skips_a_bare_error_label():
    from bench.questions.first_tool_error import error_message

    assert error_message("ERROR:\nInvalid `path` parameter: /x.") == "Invalid `path` parameter: /x."
    assert error_message("Error: Line must be suspended") == "Error: Line must be suspended"


def test_coding_types_do_not_apply_without_a_repository():
    qs, dropped, _ = questions(ops_row(tool("a", "get_line", {}, "Active")))
    assert not set(qs) & {"files_changed", "first_edit", "test_counts", "first_error"}
    assert not set(dropped) & {"files_changed", "first_edit", "test_counts", "first_error"}


def test_the_offline_reader_and_exact_judge_score_every_ops_question_on_the_full_arm(ops_jsonl):
    cfg = OmegaConf.create({"source": "ops", "profile": "tau2", "limit": None, "filters": {}})
    selection = load_cases(cfg, TokenCounter())
    assert len(selection.cases) + len(selection.rejected) == 12 and not selection.rejected
    reader, judge, full = EvidenceReader(), ExactJudge(), FullHistory()
    for case in selection.cases:
        view = full(case)
        for q in case.questions:
            score = judge.score(q, reader.answer(case, view, q), case.repo_root)
            assert score.verdict == "correct", (q.qid, score.reason)


# --- your own trajectories -----------------------------------------------------------------

def _questions_of(cases):
    return {c.case_id: [(q.type, q.question, json.dumps(q.reference, sort_keys=True)) for q in c.questions]
            for c in cases}


def test_the_ops_rows_as_a_chat_log_give_the_same_questions(ops_jsonl, tmp_path):
    rows = [json.loads(line) for line in ops_jsonl.read_text(encoding="utf-8").split("\n") if line.strip()]
    chat = write_chat_jsonl(rows, tmp_path / "ops_chat.jsonl")
    first = json.loads(chat.read_text(encoding="utf-8").split("\n")[0])
    assert set(first) == {"id", "messages", "tools", "metadata"} and first["messages"][0]["role"] == "system"
    counter = TokenCounter()
    ops = load_cases(OmegaConf.create({"source": "ops", "profile": "tau2", "filters": {}}), counter).cases
    mine = load_cases(OmegaConf.create({"source": "chat", "path": str(chat), "profile": "tau2", "filters": {}}),
                      counter).cases
    assert _questions_of(ops) == _questions_of(mine)
    generic = load_cases(OmegaConf.create({"source": "chat", "path": str(chat), "filters": {},
                                           "profile": "generic"}), counter).cases
    assert len(generic) == 12 and all(c.questions for c in generic)


def test_chat_record_round_trips_a_row():
    row = {"instance_id": "r1", "trajectory": [{"role": "user", "content": "hi"}], "tools": [],
           "repo": "me/app", "resolved": True, "exit_status": "submit", "model_patch": "", "trajectory_id": ""}
    record = chat_record(row)
    assert record["metadata"] == {"repo": "me/app", "resolved": True, "exit_status": "submit"}


@pytest.mark.parametrize("content, message", [
    ('{"id": "a", "messages": []}\nnot json\n', "line 2: not valid JSON"),
    ('[1, 2]\n', "line 1: not a JSON object"),
    ('{"messages": []}\n', "line 1: no `id`"),
    ('{"id": "a", "messages": "hi"}\n', "line 1: `messages` must be a list"),
])
def test_bad_chat_logs_fail_with_one_line_naming_file_and_line(tmp_path, content, message):
    path = tmp_path / "log.jsonl"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(DatasetError, match=re.escape(message)) as err:
        load_cases(OmegaConf.create({"source": "chat", "path": str(path), "profile": "generic", "filters": {}}))
    assert str(path) in str(err.value) and "\n" not in str(err.value)
    with pytest.raises(DatasetError, match="dataset=chat needs dataset.path=FILE"):
        load_cases({"source": "chat", "path": "???", "filters": {}})


def test_question_types_that_do_not_apply_to_the_dataset_are_one_line_not_a_0_question_job(tmp_path):
    done = bench(tmp_path, "dataset=ops", "questions.types=[files_changed]", f"hydra.run.dir={tmp_path / 'job'}")
    one_line(done, "questions.types", "files_changed", "none of these applies", "types that apply")
