"""Typed answers (issue 18 item 1): each type's format, the writer beside the reader, the judge."""

from __future__ import annotations

import json
import re

import pytest

from bench.questions import REGISTRY
from bench.questions.answers import ask_text, read_typed, typed_answer
from bench.scoring.judge import ExactJudge
from bench.store.schema import Answer, Question


@pytest.fixture(scope="module")
def shipped_questions() -> dict[str, list[Question]]:
    """The questions the shipped rows ask (the coding sample and the operations runs), by type."""
    from bench.data.selection import load_cases
    from bench.sources import Shipped
    from bench.text.tokens import TokenCounter

    found: dict[str, list[Question]] = {}
    for source, profile in (("sample", "openhands"), ("ops", "tau2")):
        for case in load_cases(Shipped(source=source, profile=profile), TokenCounter()).cases:
            for question in case.questions:
                found.setdefault(question.type, []).append(question)
    return found


@pytest.mark.parametrize("name", list(REGISTRY))  # every registered type, read from the registry
def test_every_type_declares_a_format_the_reader_writes_and_the_judge_reads_back(name, shipped_questions):
    from bench.answering.evidence_reader import answer_text, answer_value
    from bench.questions.answers import format_keys

    answer_format = REGISTRY[name].answer_format
    required = [key for key in answer_format if not key.endswith("?")]
    assert required and all(re.fullmatch(r"[a-z_]+", key) for key in format_keys(answer_format))
    questions = shipped_questions.get(name, [])
    assert questions, f"no shipped row asks {name}"
    for question in questions:
        assert question.answer_format == answer_format  # the question carries its type's format
        text = answer_text(answer_value(question), question.answer_format)
        assert set(required) <= set(json.loads(text)) <= set(format_keys(answer_format)), (question.qid, text)
        answer = Answer(case_id=question.qid.split(":")[0], qid=question.qid, type=name, answer=text)
        assert ExactJudge().score(question, answer).verdict == "correct", (question.qid, text)


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
