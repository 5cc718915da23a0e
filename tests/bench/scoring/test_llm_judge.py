"""The LLM judge: one rubric, verdict parsing, unscored replies kept, cache, no call without an answer."""

from __future__ import annotations

import json

import pytest
from langchain_core.messages import AIMessage

from bench.cache import ResponseCache
from bench.questions import REGISTRY
from bench.scoring.judge import JUDGE_PROMPT, LLMJudge, parse_verdict, rubric_for
from bench.store.schema import Answer, Question

from scripted import scripted_client

QUESTION = Question(qid="c@0:first_error", type="first_error",
                    question="What exception did the 1st run of `python x.py` print?",
                    reference={"type": "NameError", "message": "name 'y' is not defined"},
                    evidence_keys=["NameError"], evidence_messages=[3])


def answer(text: str, outcome: str = "answered") -> Answer:
    return Answer(case_id="c@0", qid=QUESTION.qid, type=QUESTION.type, answer=text, outcome=outcome)


@pytest.mark.parametrize("raw,expected", [
    ('{"verdict": "correct", "reason": "same exception"}', ("correct", "same exception")),
    ('```json\n{"verdict": "Wrong", "reason": "other type"}\n```', ("wrong", "other type")),
    ('Sure! {"verdict": "abstained", "reason": "says it does not know"} Hope this helps.',
     ("abstained", "says it does not know")),
    ('{"verdict": "correct"}', ("correct", "(the judge gave no reason)")),
    ("Verdict: WRONG\nReason: the message differs", ("wrong", "the message differs")),
    ('{"verdict": "partially correct", "reason": "x"}', ("wrong", "x")),
    ('{"verdict": "incorrect", "reason": "other file"}', ("wrong", "other file")),
    ("Verdict: incorrect. Reason: off by one", ("wrong", "off by one")),
    ('{"verdict": "excellent"}', None),
    ("I think the answer is fine.", None),
    ("", None),
])
def test_parse_verdict(raw, expected):
    assert parse_verdict(raw) == expected


def test_prompt_is_one_rubric_with_question_reference_and_answer():
    judge = LLMJudge(client=scripted_client(AIMessage("{}")))
    prompt = judge.prompt(QUESTION, answer("NameError: name 'y' is not defined {braces ok}"))
    assert QUESTION.question in prompt and json.dumps(QUESTION.reference, indent=1) in prompt
    assert "{braces ok}" in prompt and '"correct" | "wrong" | "abstained"' in prompt
    assert "{qtype}" in JUDGE_PROMPT  # a module constant template, filled per answer
    # the one grading rule, then the type's own lines
    assert "graded on that claim" in prompt and rubric_for("first_error") in prompt
    assert "qualified or not" in prompt and "empty" in prompt  # first_error: qualified types, empty messages


@pytest.mark.parametrize("qtype", sorted(REGISTRY))
def test_every_type_has_its_rubric_lines_in_the_prompt(qtype):
    question = Question(qid=f"c@0:{qtype}", type=qtype, question="q?", reference=1, evidence_keys=[],
                        evidence_messages=[])
    prompt = LLMJudge(client=scripted_client(AIMessage("{}"))).prompt(question, answer("x"))
    assert REGISTRY[qtype].rubric in prompt


def test_verdict_and_reason_are_stored():
    client = scripted_client(AIMessage('{"verdict": "correct", "reason": "same type and message"}'))
    score = LLMJudge(client=client).score(QUESTION, answer("NameError: name 'y' is not defined"))
    assert (score.verdict, score.reason, score.judge) == ("correct", "same type and message", "llm:scripted")
    assert score.raw is not None and score.prompt is None
    assert client.llm.requests[0][0][0].type == "system"


def test_unparseable_reply_is_unscored_with_prompt_and_raw_kept():
    client = scripted_client(AIMessage("Looks good to me!"))
    score = LLMJudge(client=client).score(QUESTION, answer("NameError"))
    assert score.verdict == "unscored" and score.raw == "Looks good to me!"
    assert score.prompt and QUESTION.question in score.prompt and score.reason


def test_no_call_without_an_answer():
    client = scripted_client(ValueError("must not be called"))
    judge = LLMJudge(client=client)
    assert judge.score(QUESTION, answer("", outcome="context_overflow")).verdict == "unscored"
    assert judge.score(QUESTION, answer("", outcome="error")).verdict == "unscored"
    assert judge.score(QUESTION, answer("   ")).verdict == "abstained"
    assert client.llm.requests == []


def test_judge_calls_are_cached(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    reply = AIMessage('{"verdict": "wrong", "reason": "different message"}')
    first = LLMJudge(client=scripted_client(reply, cache=cache, kind="judge")).score(QUESTION, answer("KeyError"))
    second_client = scripted_client(ValueError("no call"), cache=cache, kind="judge")
    second = LLMJudge(client=second_client).score(QUESTION, answer("KeyError"))
    assert first == second and second_client.llm.requests == []


def test_json_mode_is_part_of_the_request(monkeypatch, tmp_path):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-judge")
    judge = LLMJudge(name="gpt-4o-mini", cache_path=str(tmp_path / "c.sqlite"))
    assert judge.client.params["extra_body"]["response_format"] == {"type": "json_object"}
    assert judge.client.kind == "judge" and judge.client.role == "judge"
