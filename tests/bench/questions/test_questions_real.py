"""Questions and references on the real rows: issue-10 extractor fixes, one real row each, and
a pin of every coding question of dev.parquet (tests/data/real/dev_questions.json).

The pin: the coding cases' four coding question types (references, evidence, targets, drops)
are exactly the recorded ones; a change must be deliberate. Regenerate after a deliberate
change with ``BENCH_UPDATE_PINS=1 uv run pytest tests/bench/questions/test_questions_real.py`` and list the
questions that moved in the commit message.
"""

from __future__ import annotations

import json
import os

import pytest
from omegaconf import OmegaConf

from bench.data.selection import load_cases
from bench.extract import command_runs, parse_first_exception
from bench.extract.history import tool_events
from bench.profiles import OPENHANDS
from bench.questions import CODING_TYPES
from bench.text.tokens import TokenCounter

from paths import DATA, DEV_PARQUET

PIN = DATA / "real" / "dev_questions.json"
COUNTER = TokenCounter()


@pytest.fixture(scope="module")
def dev_cases():
    path = DEV_PARQUET
    cfg = OmegaConf.create({"source": "local", "path": str(path), "limit": None, "filters": {}})
    return {c.case_id: c for c in load_cases(cfg, COUNTER).cases}


def _coding(case) -> dict:
    return {
        "questions": [{k: q.to_dict()[k] for k in ("qid", "type", "question", "reference", "evidence_keys",
                                                     "evidence_messages", "params", "target", "in_task_text")}
                      for q in case.questions if q.type in CODING_TYPES],
        "dropped": [[d.type, d.reason] for d in case.dropped_questions if d.type in CODING_TYPES],
    }


def test_coding_questions_are_pinned(dev_cases):
    current = {case_id: _coding(case) for case_id, case in sorted(dev_cases.items())}
    if os.environ.get("BENCH_UPDATE_PINS"):
        PIN.write_text(json.dumps(current, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    pinned = json.loads(PIN.read_text(encoding="utf-8"))
    assert sorted(current) == sorted(pinned)
    for case_id in pinned:
        assert current[case_id] == pinned[case_id], case_id


def test_results_pair_with_their_call_by_position_when_ids_repeat(dev_cases):
    # python__mypy-10308@1 reuses one call id for an editor edit (message 21) and a later bash run (29)
    for case_id in ("python__mypy-10308@1", "conan-io__conan-13403@8", "dask__dask-9378@14"):
        case = dev_cases[case_id]
        ids = [c["id"] for m in case.messages if m.type == "ai" for c in m.tool_calls]
        assert len(ids) > len(set(ids)), case_id  # the row really repeats an id
        for event in tool_events(case.messages, case.profile):
            result = case.messages[event.result_index]
            between = case.messages[event.call_index + 1: event.result_index]
            assert result.tool_call_id == event.call_id and all(m.type == "tool" for m in between), case_id
    edit = next(q for q in dev_cases["python__mypy-10308@1"].questions if q.type == "first_edit")
    call, result = edit.evidence_messages
    assert result == call + 1  # the edit's own reply, not the later bash output with the same id


def test_undo_edit_reverts_the_files_last_edit(dev_cases):
    # python__mypy-10308@5 edits mypy/subtypes.py, then undoes it: the patch does not list it
    question = next(q for q in dev_cases["python__mypy-10308@5"].questions if q.type == "files_changed")
    assert "mypy/subtypes.py" not in question.reference
    case = dev_cases["python__mypy-10308@5"]
    undone = [e for e in tool_events(case.messages, OPENHANDS) if e.args.get("command") == "undo_edit"]
    assert undone and all(e.result_index in question.evidence_messages for e in undone)


def test_a_run_that_never_executed_is_not_a_run(dev_cases):
    # python__mypy-10308@12: `pytest .../mypy/test` failed in the sandbox (504) before it ran
    case = dev_cases["python__mypy-10308@12"]
    events = tool_events(case.messages, OPENHANDS)
    failed = [e for e in events if OPENHANDS.never_ran(e.raw)]
    assert failed and "504" in failed[0].raw
    runs = command_runs(events, OPENHANDS)
    assert all(run.call_index != failed[0].call_index for run in runs)


def test_first_edit_code_is_the_added_lines_with_the_full_text_as_context(dev_cases):
    question = next(q for q in dev_cases["conan-io__conan-13403@8"].questions if q.type == "first_edit")
    ref = question.reference
    assert ref["context"].endswith("self._conanfile.run(command)")  # new_str, whole
    assert not ref["code"].endswith("self._conanfile.run(command)")  # its last line is shared with old_str
    assert ref["context"].startswith(ref["code"])
    # the lines the diff marks as new: the signature, the docstring lines, the script folder lines
    assert "def autoreconf(self, args=None, build_script_folder=None):" in ref["changed"]
    assert not any("args = args or []" in line for line in ref["changed"])


def test_java_exception_forms():
    assert parse_first_exception('Exception in thread "main" java.lang.Exception: boom\n\tat A.main(A.java:3)')[0] == \
        {"type": "java.lang.Exception", "message": "boom"}
    assert parse_first_exception("java.lang.Error")[0] == {"type": "java.lang.Error", "message": ""}
    # the real row's form (spotbugs__spotbugs-2844@13)
    line = 'Exception in thread "main" java.lang.NullPointerException: Cannot invoke "String.startsWith(String)"'
    assert parse_first_exception(line)[0]["type"] == "java.lang.NullPointerException"


def test_python_syntax_error_without_a_traceback_header():
    output = ('  File "/workspace/repo/reproduce.py", line 3\n    def f(:\n          ^\n'
              "SyntaxError: invalid syntax\n[Command finished with exit code 1]")
    assert parse_first_exception(OPENHANDS.clean(output))[0] == {"type": "SyntaxError", "message": "invalid syntax"}
    assert parse_first_exception("IndentationError: unexpected indent") is None  # no File line: not a report


def test_in_task_text_and_distances(dev_cases):
    questions = [q for c in dev_cases.values() for q in c.questions]
    flagged = [q for q in questions if q.in_task_text]
    assert flagged  # some answers are readable in the task text (kept out of the headline)
    for case in dev_cases.values():
        task = " ".join(case.task_text.split())
        for q in case.questions:
            if q.in_task_text and q.type == "first_edit":
                assert all(" ".join(line.split()) in task for line in q.reference["changed"])
            assert q.nearest_back["tokens"] <= q.evidence_back["tokens"] <= COUNTER.count_messages(case.messages)
            assert q.nearest_back["messages"] <= q.evidence_back["messages"]
