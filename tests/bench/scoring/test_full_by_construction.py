"""``full`` = 100% by construction (issue 31 item 3): the reader's answer from a view that holds the
evidence is graded correct for every type, whatever the value looks like.

The quote class: a value whose text begins or ends with a quote (``No module named 'pytz'``,
``b'My Content'``) was never graded correct, since the answer's quotes were stripped and the
reference's were not. Every type that compares strings is checked with such values, answered
the way the offline reader answers. (Every source and every type on the real data:
``tests/bench/answering/test_flags_reader.py``.)
"""

from __future__ import annotations

import pytest

from bench.answering.evidence_reader import answer_text, answer_value
from bench.questions import REGISTRY
from bench.scoring.judge import ExactJudge
from bench.store.schema import Answer, Question

QUOTED = ["No module named 'pytz'", "b'My Content'", "'quoted'", '"double"', "`tick`", "it's", "x'", "'x",
          "'", '"a" and "b"']
TARGETS = {
    "tool_value": {"tool": "t", "arguments": {}, "ordinal": 1, "field": "f"},
    "user_fact": {"tool": "t", "argument": "a"},
    "latest_value": {"tool": "t", "arguments": {}, "field": "f"},
    "tool_output": {"tool": "t", "arguments": {}, "ordinal": 1},
    "first_tool_error": {"tool": "t", "arguments": {}, "ordinal": 1},
    "first_error": {"tool": "bash", "command": "python x.py", "ordinal": 1},
}


def references(qtype: str, value: str):
    if qtype == "first_tool_error":
        return [{"tool": "t", "message": value}, {"tool": "t", "message": f"Error: {value}"}]
    if qtype == "first_error":
        return [{"type": "ValueError", "message": value}, {"type": "ModuleNotFoundError", "message": value}]
    return [value]


def grade(qtype: str, reference, text: str | None = None) -> str:
    question = Question(qid="c:q", type=qtype, question="?", reference=reference, evidence_keys=[],
                        evidence_messages=[], target=TARGETS.get(qtype, {}),
                        params={"stale": "zzz"} if qtype == "latest_value" else {},
                        answer_format=dict(REGISTRY[qtype].answer_format))
    text = answer_text(answer_value(question), question.answer_format) if text is None else text
    return ExactJudge().score(question, Answer(case_id="c", qid="c:q", type=qtype, answer=text)).verdict


@pytest.mark.parametrize("qtype", list(TARGETS))
@pytest.mark.parametrize("value", QUOTED)
def test_a_value_with_quotes_at_either_end_is_graded_correct_as_the_reader_answers_it(qtype: str, value: str):
    for reference in references(qtype, value):
        assert grade(qtype, reference) == "correct", (qtype, reference)


@pytest.mark.parametrize("qtype", ["tool_value", "user_fact", "latest_value"])
def test_quotes_are_ignored_on_both_sides_alike_and_nothing_else_is(qtype: str) -> None:
    assert grade(qtype, "b'My Content'", '{"value": "b\'My Content\'"}') == "correct"
    assert grade(qtype, "'pytz'", '{"value": "pytz"}') == "correct"  # the answer without the quotes
    assert grade(qtype, "pytz", '{"value": "\'pytz\'"}') == "correct"  # the answer quotes a bare value
    assert grade(qtype, "b'My Content'", '{"value": "My Content"}') == "wrong"  # b is part of the value
    assert grade(qtype, "No module named 'pytz'", '{"value": "No module named \'six\'"}') == "wrong"


def test_every_other_type_answers_its_reference_as_the_reader_does() -> None:
    cases = {
        "files_changed": ["src/a.py", "tests/test_a.py"],
        "first_edit": {"path": "src/a.py", "code": "    return 'x'\n", "context": "def f():\n    return 'x'\n",
                       "changed": ["    return 'x'"]},
        "test_counts": {"passed": 3, "failed": 1, "errors": 2},
        "call_count": 7,
        "write_actions": [{"tool": "book", "arguments": {"user_id": "u'1"}}],
    }
    for qtype, reference in cases.items():
        assert grade(qtype, reference) == "correct", qtype


# Values that read like a decline: a tool's own "not available", "no record", "cannot determine". The reader
# states them as the reference; the exact judge once read the stated value as "I don't know" (the abstention check
# read the answer's text before comparing it with the reference) and abstained, so `full` scored below 100% on a
# source whose outputs say so. A reference that reads like a decline, where the answer states it, is a claim.
DECLINE_LIKE = ["Seat not available", "No record found for user", "fatal: cannot determine the revision",
                "Error: reservation has no details", "Unknown"]


@pytest.mark.parametrize("qtype", list(TARGETS))
def test_a_value_that_reads_like_a_decline_is_graded_correct_as_the_reader_answers_it(qtype: str) -> None:
    for value in DECLINE_LIKE:
        for reference in references(qtype, value):
            assert grade(qtype, reference) == "correct", (qtype, reference)


@pytest.mark.parametrize("qtype", ["tool_value", "user_fact", "latest_value", "tool_output"])
def test_a_decline_like_value_stated_in_prose_is_a_claim_and_a_bare_decline_still_abstains(qtype: str) -> None:
    # stated in a sentence, in any case, with a hedge or a decline of something else beside it: the claim is graded
    assert grade(qtype, "Seat not available", "The tool replied: seat not available.") == "correct"
    assert grade(qtype, "No record found for user", "I think it said `No record found for user`.") == "correct"
    assert grade(qtype, "Unknown", "It returned Unknown - I don't remember anything else.") == "correct"
    assert grade(qtype, "Seat not available", "It said: Seat confirmed.") == "wrong"
    # an answer that only declines stays an abstention, whether or not the reference reads like one
    assert grade(qtype, "Seat not available", "I don't know what it returned.") == "abstained"
    assert grade(qtype, "Seat not available", "That output is not available to me any more.") == "abstained"
    assert grade(qtype, "Unknown", "No idea.") == "abstained"
    assert grade(qtype, "Seat 14C", "Not available in my context any more.") == "abstained"
    assert grade(qtype, "Seat 14C", "Unknown") == "abstained"
