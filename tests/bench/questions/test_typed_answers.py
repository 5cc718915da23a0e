"""Typed answers (issue 18 item 1): each type's format, the writer beside the reader, the judge."""

from __future__ import annotations

import json

import pytest

from bench.questions import REGISTRY
from bench.questions.answers import ask_text, read_typed, typed_answer
from bench.scoring.judge import ExactJudge
from bench.store.schema import Answer, Question

FORMATS = {"files_changed": ["files"], "first_edit": ["path", "code"], "test_counts": ["passed", "failed", "errors"],
           "first_error": ["type", "message"], "tool_output": ["output"], "tool_value": ["value"],
           "user_fact": ["value"], "latest_value": ["value"], "call_count": ["count"],
           "first_tool_error": ["tool", "message"], "write_actions": ["actions"]}


def test_every_type_declares_the_issues_format():
    assert {name: [k.rstrip("?") for k in t.answer_format] for name, t in REGISTRY.items()} == FORMATS


@pytest.mark.parametrize("value", [3, "a b", ["x.py"], {"passed": 2, "failed": 1}, None])
def test_the_writer_and_the_reader_round_trip(value):
    fmt = {"count": "n"} if not isinstance(value, dict) else {"passed": "n", "failed": "n"}
    text = typed_answer(fmt, value)
    reading = read_typed(fmt, json.loads(text), text)
    assert reading.unknown == (value is None)
    if value is not None:
        assert reading.parsed == value and reading.typed


def test_the_question_states_the_shape_and_how_to_abstain():
    text = ask_text("How many calls?", {"count": "number of calls"})
    assert text.startswith("How many calls?") and '"count"' in text and '{"unknown": true}' in text
    assert ask_text("Q?", None) == "Q?"


def _score(qtype: str, reference, answer: str) -> str:
    q = Question(qid="c:q", type=qtype, question="?", reference=reference, evidence_keys=[], evidence_messages=[],
                 answer_format=dict(REGISTRY[qtype].answer_format))
    return ExactJudge().score(q, Answer(case_id="c", qid="c:q", type=qtype, answer=answer)).verdict


def test_the_judge_grades_the_typed_fields_and_reads_unknown_as_abstained():
    assert _score("call_count", 3, '{"count": 3, "confidence": 0.9}') == "correct"  # extra keys ignored
    assert _score("call_count", 3, '{"count": 4}') == "wrong"
    assert _score("call_count", 3, '{"count": "three"}') == "correct"  # the field's text, words as numbers
    assert _score("tool_value", "L1002", '{"value": "L1002", "note": "from the second call"}') == "correct"
    assert _score("files_changed", ["a.py"], '{"files": ["a.py", "b.py"]}') == "wrong"
    assert _score("tool_value", "L1002", '{"unknown": true}') == "abstained"
    assert _score("call_count", 3, '```json\n{"unknown": true, "note": "cleared"}\n```') == "abstained"
