"""Row -> case conversion and rejection rules (spec 1.2)."""

from __future__ import annotations

import json

import numpy as np
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from bench.data.cases import row_to_case, strip_nulls
from bench.store.schema import Case, Rejected

from builders import ROOT, assistant, bash, call, edit, result, row, system, user
from jobs import job_cfg
from paths import PROJECT


def test_roles_become_langchain_messages_with_parsed_arguments():
    case = row_to_case(row(bash("1", "ls", "a.py")), source_row=3)
    assert isinstance(case, Case)
    assert case.system_prompt == "You are a coding agent."
    assert [type(m) for m in case.messages] == [HumanMessage, AIMessage, ToolMessage]
    ai, tool = case.messages[1], case.messages[2]
    assert ai.tool_calls[0]["args"] == {"command": "ls"}  # JSON string parsed into a dict
    assert tool.name == "execute_bash" and tool.tool_call_id == "c1"
    assert case.source_row == 3 and case.repo_root == ROOT


def test_case_id_is_unique_when_instance_id_repeats():
    a = row_to_case(row(bash("1", "ls", "x")), source_row=0)
    b = row_to_case(row(bash("1", "ls", "x")), source_row=1)
    assert a.instance_id == b.instance_id and a.case_id != b.case_id


def test_tool_schema_null_padding_is_stripped_recursively():
    padded = [{"type": "function", "function": {"name": "think", "description": None, "parameters": {
        "type": "object", "properties": {"thought": {"type": "string", "enum": None}, "path": None},
        "required": np.array(["thought"], dtype=object)}}}]
    case = row_to_case(row(bash("1", "ls", "x"), tools=padded), source_row=0)
    assert case.tools == [{"type": "function", "function": {"name": "think", "parameters": {
        "type": "object", "properties": {"thought": {"type": "string"}}, "required": ["thought"]}}}]
    assert strip_nulls({"a": [None, {"b": None}]}) == {"a": [None, {}]}  # list items stay


def test_final_finish_without_reply_is_dropped_not_rejected():
    case = row_to_case(row(bash("1", "ls", "x"), assistant(call("f", "finish", {"message": "done"}),
                                                            text="All done.")), 0)
    assert isinstance(case, Case)
    last = case.messages[-1]
    assert isinstance(last, AIMessage) and not last.tool_calls and last.content == "All done."


def test_trailing_assistant_with_missing_results_is_dropped_with_its_other_results():
    trailing = [assistant(call("p1", "execute_bash", {"command": "ls"}),
                          call("p2", "execute_bash", {"command": "pwd"})),
                result("p1", "execute_bash", "a.py")]
    case = row_to_case(row(bash("1", "ls", "x"), trailing), 0)
    assert isinstance(case, Case)
    assert len(case.messages) == 3  # user + the complete exchange; p1's result went too
    assert all(getattr(m, "tool_call_id", None) != "p1" for m in case.messages)


def test_invalid_json_arguments_are_rejected_with_reason():
    bad = [assistant(call("b", "execute_bash", '{"command": "ls"')), result("b", "execute_bash", "x")]
    rejected = row_to_case(row(bad, bash("2", "ls", "x")), 7)
    assert isinstance(rejected, Rejected) and rejected.source_row == 7
    assert "not valid JSON" in rejected.reason


def test_result_without_call_is_rejected():
    rejected = row_to_case(row(result("ghost", "execute_bash", "x"), bash("1", "ls", "x")), 0)
    assert isinstance(rejected, Rejected) and "has no call" in rejected.reason


def test_call_without_result_in_the_middle_is_rejected():
    rejected = row_to_case(row(assistant(call("lost", "execute_bash", {"command": "ls"})), user("go on"),
                               bash("1", "ls", "x")), 0)
    assert isinstance(rejected, Rejected) and "lost" in rejected.reason and "no result" in rejected.reason


def test_parallel_calls_with_all_results_are_kept():
    parallel = [assistant(call("a", "execute_bash", {"command": "ls"}), call("b", "think", {"thought": "hm"})),
                result("a", "execute_bash", "x"), result("b", "think", "Your thought has been logged.")]
    case = row_to_case(row(parallel, bash("1", "ls", "x")), 0)
    assert isinstance(case, Case) and len(case.messages[1].tool_calls) == 2


def test_malformed_rows_never_raise():
    for bad in ({"instance_id": "x", "trajectory": None}, {"instance_id": "x", "trajectory": "not json"},
                {"instance_id": "x", "trajectory": [1, 2]},
                {"instance_id": "x", "trajectory": [system(), {"role": "robot", "content": "hi"}]},
                {"instance_id": "x", "trajectory": [system()]}):
        assert isinstance(row_to_case(bad, 0), Rejected)


def test_cases_round_trip_losslessly():
    case = row_to_case(row(bash("1", "ls", "x"), edit("2", "create", f"{ROOT}/a.py", file_text="print(1)\n"),
                           patch_files=("a.py",)), 0)
    from bench.questions import add_questions

    add_questions(case)
    data = json.loads(json.dumps(case.to_dict()))
    again = Case.from_dict(data)
    assert again.to_dict() == case.to_dict()
    assert again.messages == case.messages


def test_two_rows_with_the_same_instance_id_and_source_row_do_not_share_a_case_id(tmp_path):
    from bench.runner import run
    from bench.store.records import read_jsonl

    rows = [json.loads(line) for line in (PROJECT / "src/bench/samples/sample.jsonl")
            .read_text().splitlines()[:2]]
    twin = {**rows[1], "instance_id": rows[0]["instance_id"]}
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps({**r, "source_row": 5}) + "\n" for r in (rows[0], twin)))
    out = tmp_path / "job"
    run(job_cfg("dataset=local", f"dataset.path={path}", output_dir=str(out)))
    cases = read_jsonl(out / "cases.jsonl")
    assert len(cases) == len({c["case_id"] for c in cases}) == 1
    rejected = read_jsonl(out / "rejected.jsonl")
    assert len(rejected) == 1 and "duplicate" in rejected[0]["reason"] and "same case_id" in rejected[0]["reason"]
