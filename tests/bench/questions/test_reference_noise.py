"""References without noise (issue 31 item 2): one rule per class, each tested on a real row.

Real rows: the shell-only mini-swe-agent log of ``tests/data/real/chat/shell.jsonl`` (results in
a ``<returncode>N</returncode><output>...</output>`` envelope; ``generic`` profile with
``dataset.shell_tools``), and the OpenHands runs of ``tests/data/real/dev.parquet``. Counts per
class before and after on every source: ``benchmarks/bench_references.py``.
"""

from __future__ import annotations

import json
import re
from collections import Counter

import pytest
from omegaconf import OmegaConf

from bench.config.checks import compose
from bench.config.job_cases import load_job_cases
from bench.data.cases import row_to_case
from bench.data.selection import CaseStream, load_cases
from bench.extract import parse_test_counts, stated_test_counts
from bench.profiles import GENERIC, OPENHANDS
from bench.questions import add_questions
from bench.questions.first_tool_error import error_message
from bench.questions.guess import TemplateCount
from bench.questions.latest_value import flat_fields
from bench.questions.question_type import CaseFacts
from bench.sources.chatlog import iter_chat_rows
from bench.store.schema import Case
from bench.text.tokens import TokenCounter

from paths import DATA, DEV_PARQUET

COUNTER = TokenCounter()
SHELL = DATA / "real" / "chat" / "shell.jsonl"
SHELL_PROFILE = GENERIC.with_overrides(shell_tools=["bash"], roles={"exit": "skip"},
                                       error_result="<returncode>[1-9]")
WRAPPER = re.compile(r"</?returncode>|</?output>|^\s*(?:exit code|exit status|returncode)\s*[:=]?\s*-?\d+\s*$",
                     re.I | re.M)


def shell_case(mutate=None) -> Case:
    (row,) = list(iter_chat_rows(SHELL))
    if mutate is not None:
        row = mutate(json.loads(json.dumps(row)))
    case = row_to_case(row, 0, SHELL_PROFILE)
    assert isinstance(case, Case), case
    return add_questions(case, COUNTER)


@pytest.fixture(scope="module")
def dev_cases() -> list[Case]:
    return load_cases(OmegaConf.create({"source": "local", "path": str(DEV_PARQUET), "profile": "openhands",
                                        "filters": {}}), COUNTER).cases


# --- output wrappers ----------------------------------------------------------------------------


def test_the_result_envelope_is_stripped_for_a_generic_profile_with_shell_tools() -> None:
    case = shell_case()
    outputs = [q for q in case.questions if q.type == "tool_output"]
    assert outputs
    for question in outputs:
        result = case.messages[max(question.evidence_messages)].content
        assert result.startswith("<returncode>")  # the recorded result carries it ...
        assert not WRAPPER.search(question.reference), question.reference  # ... the reference does not
        assert question.reference in result
    events = CaseFacts(case).events
    assert all(not WRAPPER.search(e.output or "") for e in events)
    assert events[0].output == "./astropy/modeling/separable.py"


def test_the_envelope_and_exit_code_lines_are_stripped_for_every_profile() -> None:
    raw = "<returncode>2</returncode>\n<output>\nls: cannot access 'x': No such file\n</output>"
    for profile in (OPENHANDS, GENERIC, SHELL_PROFILE):
        assert profile.clean_result(raw, "bash", {"command": "ls x"}) == "ls: cannot access 'x': No such file"
    shell = OPENHANDS  # an exit-code line the harness added, at either end of a shell result
    assert shell.clean_result("Exit code: 1\nboom\n\nexit status 1", "execute_bash", {"command": "x"}) == "boom"
    assert shell.clean_result("an output that mentions exit code 1 in the middle", "execute_bash",
                              {"command": "x"}) == "an output that mentions exit code 1 in the middle"
    # not one envelope around the whole result: left as it is
    text = "<output>a</output> and <output>b</output>"
    assert SHELL_PROFILE.clean_result(text, "bash", {"command": "x"}) == text


def test_the_long_output_form_of_the_envelope_is_stripped_too() -> None:
    """mini-swe-agent's envelope for an output over its limit: its own warning, then the output's head and
    tail around a count of the characters it elided. The warning is the harness's text, never the error."""
    build = "".join(f"building extension module {n} of 400\n" for n in range(400))

    def long(tail: str):  # the same run, the first failing result after a long build log, cut as the harness cuts it
        def mutate(row):
            first = next(m for m in row["trajectory"]
                         if m["role"] == "tool" and m["content"].startswith("<returncode>1"))
            output = build + (tail or first["content"].split("<output>\n", 1)[1].rsplit("</output>", 1)[0])
            first["content"] = (
                "<returncode>1</returncode>\n<warning>\nThe output of your last command was too long.\nPlease try "
                "a different command that does not produce as much output.\n</warning><output_head>\n"
                + output[:2000] + "\n</output_head>\n<elided_chars>\n" + f"{len(output) - 4000} characters elided"
                + "\n</elided_chars>\n<output_tail>\n" + output[-2000:] + "\n</output_tail>")
            return row
        return mutate

    def error_of(case: Case) -> str:
        (question,) = [q for q in case.questions if q.type == "first_tool_error"]
        return question.reference["message"]

    assert error_of(shell_case(long(""))) == "ModuleNotFoundError: No module named 'erfa'"  # the run's traceback
    # no exception in the output: the first line of the output, not the harness's warning
    assert error_of(shell_case(long("error: command 'gcc' failed: No such file\n"))) == \
        "building extension module 0 of 400"
    raw = "<returncode>0</returncode>\n<warning>\nThe output of your last command was too long.\n</warning>" \
          "<output_head>\nline 1\n</output_head>\n<elided_chars>\n9000 characters elided\n</elided_chars>\n" \
          "<output_tail>\nline 900\n</output_tail>"
    for profile in (OPENHANDS, GENERIC, SHELL_PROFILE):
        assert profile.clean_result(raw, "bash", {"command": "seq 900"}) == "line 1\nline 900"


# --- first_tool_error: the informative line -----------------------------------------------------


def test_first_tool_error_cites_the_exception_line_not_the_traceback_header() -> None:
    case = shell_case()
    (question,) = [q for q in case.questions if q.type == "first_tool_error"]
    assert question.reference == {"tool": "bash", "message": "ModuleNotFoundError: No module named 'erfa'"}


def test_first_tool_error_is_dropped_when_its_error_says_nothing() -> None:
    def bare(row):  # the same run, the first failing result cut to its envelope and traceback header
        first = next(m for m in row["trajectory"] if m["role"] == "tool" and m["content"].startswith("<returncode>1"))
        first["content"] = "<returncode>1</returncode>\n<output>\nTraceback (most recent call last):\n</output>"
        return row

    case = shell_case(bare)
    assert "first_tool_error" not in {q.type for q in case.questions}
    assert any(d.type == "first_tool_error" and "no informative line" in d.reason for d in case.dropped_questions)
    for text in ("<returncode>1</returncode>", "Traceback (most recent call last):", "ERROR:", "[exit code 1]",
                 "Exit code: 2\n  File \"x.py\", line 3"):
        assert error_message(text) is None, text
    assert error_message("ERROR:\nInvalid `path` parameter: /x.") == "Invalid `path` parameter: /x."
    assert error_message("Error: Line must be suspended") == "Error: Line must be suspended"


# --- counts: printed, never derived, never negative ---------------------------------------------


def test_counts_are_never_derived_nor_negative(dev_cases: list[Case]) -> None:
    moto = next(c for c in dev_cases if c.case_id.startswith("getmoto__moto-5134"))
    runs = [r for r in CaseFacts(moto).runs if parse_test_counts(r.output) is not None]
    derived = [r for r in runs if stated_test_counts(r.output) is None]
    assert derived and "FAILED" in derived[0].output  # "Ran 2 tests ... FAILED (failures=1, errors=1)"
    (question,) = [q for q in moto.questions if q.type == "test_counts"]
    assert question.reference == {"passed": 1, "failed": 0, "errors": 0}  # a run that prints its count: "OK"
    run = next(r for r in runs if r.call_index == min(question.evidence_messages))
    assert stated_test_counts(run.output) == question.reference
    # the example: "Ran 0 tests ... FAILED (errors=1)" would give passed -1
    negative = "E\n" + "=" * 20 + "\nERROR: test (unittest.loader._FailedTest)\n" + "-" * 20 + \
        "\nRan 0 tests in 0.000s\n\nFAILED (errors=1)\n"
    assert parse_test_counts(negative)["passed"] == -1 and stated_test_counts(negative) is None
    for printed in ("=== 3 failed, 9 passed in 0.1s ===", "Ran 7 tests in 0.01s\n\nOK",
                    "Tests run: 12, Failures: 0, Errors: 0, Skipped: 0", "[  4 tests successful  ]\n[  1 tests failed  ]"):
        assert stated_test_counts(printed) == parse_test_counts(printed), printed
    for derived_text in ("Ran 7 tests in 0.01s\n\nFAILED (failures=1)", "Ran 7 tests in 0.01s\n\nOK (skipped=2)",
                         "Tests run: 12, Failures: 1, Errors: 0, Skipped: 0", "5 tests completed, 1 failed"):
        assert parse_test_counts(derived_text) and stated_test_counts(derived_text) is None, derived_text
    for source in (dev_cases, load_cases(OmegaConf.create({"source": "sample", "profile": "openhands",
                                                           "filters": {}}), COUNTER).cases):
        for case in source:
            for q in case.questions:
                if q.type == "test_counts":
                    assert all(v >= 0 for v in q.reference.values()), q.qid


# --- latest_value: fields, not exception names --------------------------------------------------


def test_an_exception_line_is_no_field_of_a_readout(dev_cases: list[Case]) -> None:
    moto = next(c for c in dev_cases if c.case_id.startswith("getmoto__moto-5134"))
    outputs = [e.output for e in CaseFacts(moto).events if e.output and "botocore.exceptions." in e.output]
    assert outputs  # real outputs with "botocore.exceptions.NoCredentialsError: Unable to locate credentials"
    exception = re.compile(r"(?:Error|Exception|Warning)$")
    for output in outputs:
        assert not [f for f in (flat_fields(output) or {}) if exception.search(f)], output[-300:]
    assert flat_fields("MMSC URL: Not Set\nKeyError: 'apn'\nTraceback (most recent call last):") == {
        "MMSC URL": "Not Set"}
    for case in dev_cases:
        for q in case.questions:
            if q.type == "latest_value":
                assert not exception.search(q.target["field"]), q.qid


# --- templates: an error message many cases share -----------------------------------------------


def test_an_error_message_shared_by_three_cases_is_a_template() -> None:
    cases = load_job_cases(compose(["dataset=local", f"dataset.path={DEV_PARQUET}"]), COUNTER).cases
    mypy = [c for c in cases if c.instance_id == "python__mypy-10308"]
    assert len(mypy) >= 3  # five runs of one task that hit the same AssertionError first
    for case in mypy:
        assert "first_error" not in {q.type for q in case.questions}
        assert any(d.type == "first_error" and d.reason.startswith("template answer") for d in case.dropped_questions)
    # the rule by message, over any case set: three holders make a template, two of fifteen do not
    messages = Counter()
    for case in cases:
        for q in case.questions:
            if q.type in ("first_error", "first_tool_error"):
                messages[json.dumps(q.reference.get("message"))] += 1
    assert all(count < 3 for count in messages.values()), messages
    # the rule itself, on the cases as built before it (CaseStream): three holders of one message
    fresh = [case for case, _ in CaseStream(OmegaConf.create({"source": "local", "path": str(DEV_PARQUET),
                                                              "profile": "openhands", "filters": {}}), COUNTER,
                                            depths=["<2k", "2-8k", "8-32k", ">32k"])]
    errors = {c.case_id: q for c in fresh for q in c.questions if q.type == "first_error"}
    three = [c for c in fresh if c.instance_id == "python__mypy-10308"][:3]
    count = TemplateCount(share=10.0)  # the count rule alone (no share): 3 cases
    for case in three:
        count.add(case)
    assert all(count.reason(errors[c.case_id]) for c in three)
    count = TemplateCount(share=10.0)
    for case in three[:2]:
        count.add(case)
    assert not any(count.reason(errors[c.case_id]) for c in three[:2])
