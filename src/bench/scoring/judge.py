"""Judges: the exact-match judge (offline), the LLM judge, and the one grading rule they share.

Verdicts: ``correct``, ``wrong`` (a specific, incorrect claim), ``abstained`` (no specific
claim: it says it does not know), ``unscored`` (the judge's reply could not be parsed). A
reason is always kept.

The grading rule (README, "Grading"): an answer that makes a specific claim is graded on the
claim, hedges notwithstanding; ``abstained`` only without one. What counts as the claim and
when it matches is each question type's (``bench.questions``): the exact judge calls the
type's ``claim`` and ``grade``; the LLM judge's rubric holds the type's ``rubric`` lines.

    verdict = ExactJudge().score(question, answer, repo_root)
"""

from __future__ import annotations

import json
import re
from typing import Any, Protocol, TypedDict

from bench.core.components import Component, ModelClient
from bench.core.contracts import check
from bench.questions import REGISTRY, question_type
from bench.questions.answers import read_typed
from bench.questions.matching import (
    ABSTAIN_PATTERNS,
    claims_none,
    declined_values,
    final_claim,
    has_values,
    is_abstention,
    offers_alternatives,
    parse_json,
    stated_declines,
    value_like,
)
from bench.questions.values import bare_value, numbers, some_parts
from bench.store.schema import STALE_REASON, Answer, Question, Score

__all__ = ["Judge", "check_judge", "ExactJudge", "LLMJudge", "is_abstention", "parse_verdict", "ABSTAIN_PATTERNS", "JUDGE_PROMPT",
           "JUDGE_SYSTEM", "GRADING_RULE", "rubric_for"]

class Judge(Component, Protocol):
    """Grades an answer against the question's reference (``clients()``: its model clients, ``[]`` offline).
    The protocol lives beside the judges, above the records it reads (``bench.store.schema``)."""

    name: str

    def score(self, question: Question, answer: Answer, repo_root: str | None = None) -> Score:
        """The verdict, ``correct | wrong | abstained | unscored``, with its reason."""


class _ScoreKey(TypedDict):
    """What names a score (every verdict of a judge carries it)."""

    case_id: str
    qid: str
    type: str
    judge: str


class ExactJudge:
    """Exact match against the code-extracted reference (``judge=exact``), by the grading rule.

    The type reads the answer's claim (JSON as the offline reader writes it, or free text as
    an LLM writes it); with a claim the answer is graded on it (candidates offered without
    choosing are ``wrong``), without one it is ``abstained``.
    """

    name = "exact"

    def clients(self) -> list[ModelClient]:
        return []  # no model

    def __init__(self, repo_roots: dict[str, str | None] | None = None) -> None:
        self.repo_roots = repo_roots or {}

    def score(self, question: Question, answer: Answer, repo_root: str | None = None) -> Score:
        base = _ScoreKey(case_id=answer.case_id, qid=answer.qid, type=question.type, judge=self.name)
        if answer.outcome != "answered":
            return Score(**base, verdict="unscored", reason=f"no answer: {answer.outcome}")
        qtype = question_type(question.type)
        raw = answer.answer or ""
        # a typed answer is graded on its fields (the question's format, or the type's for older records)
        reading = read_typed(question.answer_format or qtype.answer_format, parse_json(raw), raw)
        if reading.unknown:
            return Score(**base, verdict="abstained", reason='no specific claim: the answer is {"unknown": true}')
        reference_text = json.dumps(question.reference, ensure_ascii=False)
        # "C1001 - no wait, C1002" claims C1002; "a.py, b.py - wait, no: c.py, b I only read" corrects one item
        text = final_claim(reading.text, reference_text, getattr(qtype, "retracts", None),
                           getattr(qtype, "corrects", None))
        # "either SFO or JFK, I can't tell which": candidates (unless the reference itself says "3.8 or 3.9")
        if offers_alternatives(text) and not offers_alternatives(reference_text):
            return Score(**base, verdict="wrong", reason="conflicting candidates: the answer does not choose one")
        values_only = getattr(qtype, "values_only", False)
        # a value that reads like a decline ("Seat not available"), stated, is a claim: the checks below read it as a value
        heard, quoted = stated_declines(text, question.reference)
        if values_only and is_abstention(heard) and not declined_values(heard, question.question):
            # "I can't recall what refuel_data returned for L1": the only specifics are the question's own
            # or what the answer says it does not know; but "..., I only remember it didn't work" says something
            vague = getattr(qtype, "vague", None)
            if vague is not None and (why := vague(text)):
                return Score(**base, verdict="wrong", reason=why)
            if isinstance(question.reference, str) and some_parts(question.reference, text, ABSTAIN_PATTERNS):
                # "No signal and data disabled - I don't recall the battery level": part of the value, claimed
                return Score(**base, verdict="wrong", reason="a part of the value stated, the rest declined")
            return Score(**base, verdict="abstained", reason="no specific claim: the answer says it does not know")
        if values_only and value_like(question.reference) and not (has_values(text) or numbers(text)
                                                                   or bare_value(text, question.question)
                                                                   or claims_none(text)):
            # "they gave me their phone number": no value of the kind asked is stated at all
            return Score(**base, verdict="abstained", reason="no specific claim: the answer states no value")
        claim_question = getattr(qtype, "claim_question", None)  # a type whose claim is read with the question
        if not text.strip():
            claim = None
        elif claim_question is not None:
            claim = claim_question(question, reading.parsed, quoted, repo_root)
        else:
            claim = qtype.claim(reading.parsed, quoted, repo_root)
        if claim is None and not values_only and (vague := getattr(qtype, "vague", None)) is not None \
                and (why := vague(text)):
            return Score(**base, verdict="wrong", reason=why)  # no count, but "the test didn't pass": a vague claim
        if claim is None:  # no specific claim: whatever else it says, the answer does not answer
            why = "the answer says it does not know" if is_abstention(heard) else "no claim the question asks for"
            return Score(**base, verdict="abstained", reason=f"no specific claim: {why}")
        off_target = getattr(qtype, "off_target", None)  # a type whose answer can be about something else
        if off_target is not None and (why := off_target(question, text)):
            return Score(**base, verdict="wrong", reason=why)
        grade_question = getattr(qtype, "grade_question", None)  # a type that needs more than the reference
        ok, why = (grade_question(question, claim, repo_root) if grade_question is not None
                   else qtype.grade(question.reference, claim, repo_root))
        return Score(**base, verdict="correct" if ok else "wrong", reason=why)


# --------------------------------------------------------------------------- LLM judge

JUDGE_SYSTEM = "You grade answers strictly and reply with one JSON object only."

# The rule every judge applies (README, "Grading"); the type's own lines follow it in the prompt.
GRADING_RULE = """- "correct": the answer states what the reference states. Wording, formatting (JSON, prose, markdown, \
code fences), order of items and extra explanation do not matter.
- "wrong": the answer makes a specific claim that differs from the reference or gives only part of it, or \
offers conflicting candidates without choosing one ("X or Y", "X, or maybe Y", "X or Y - one of those", "Error 2 or \
Error 1", "7 and 0, though it might have been 6 and 1", a range "6-8 times"). A vague description that still \
says something about what is asked ("some error about the credentials", "I can't see it, but it didn't work", "I \
can't see it any more - it listed a handful of Java files", "I can't see it any more - I only remember the install \
failed") is a claim; so is an answer that there was none ("None: I changed no file", "the user never gave me one"), a bare name, code or \
email ("John Smith", "HATHAT", "a.b@x.com"), a vague count or change ("Many times - I kept retrying", "about a dozen", "I only remember touching \
the distance code"; "several times, but I can't say how many" declines) and part of a value beside a decline of the rest \
("No signal and data disabled - I don't recall the battery").
- "abstained": the answer makes no specific claim: it says it does not know, cannot recall or cannot see the \
information. A reference that itself reads like a decline ("Seat not available", "Unknown"), stated by the \
answer, is its claim. An answer that hedges ("I think", "probably", "if I remember correctly") but still makes a specific \
claim is graded on that claim, not as abstained.
- A comment after a JSON answer (`{"count": 3} // ...`, `{...} # ...`) does not change the JSON's claim.
- An answer that corrects itself ("X - sorry, no: Y", "X... actually, Y", "X - hmm, no, that was the rerun; Y") is \
graded on its final claim (a correction of an exception's message, "AssertionError: a failed... no wait - it was b \
failed", keeps the type); a \
correction that takes back one item of a list by name ("a.py, b.py - wait, no: c.py; b.py I only read") replaces \
that item only."""


def rubric_for(qtype: str) -> str:
    """The rubric lines of one question type (``bench.questions``)."""
    return REGISTRY[qtype].rubric if qtype in REGISTRY else ""


# One rubric for every arm. Filled with str.format: {qtype}, {question}, {reference} (JSON),
# {answer}, {rule} (GRADING_RULE) and {type_rule} (the question type's rubric lines).
JUDGE_PROMPT = """An agent worked on a task with tools. Later it was asked a question about its own earlier \
work. The reference answer below was extracted exactly from the recorded run, so it is correct.

Question type: {qtype}
Question: {question}

Reference answer (JSON):
{reference}

Agent's answer:
<<<
{answer}
>>>

Grade the agent's answer against the reference with this rubric:
{rule}
For this question type: {type_rule}

Reply with exactly one JSON object and nothing else:
{{"verdict": "correct" | "wrong" | "abstained", "reason": "<one short sentence>"}}"""

JUDGE_VERDICTS = ("correct", "wrong", "abstained")
# Words a judge uses for a verdict outside the vocabulary, read as the verdict they mean.
VERDICT_SYNONYMS = {"incorrect": "wrong", "partially correct": "wrong", "partially_correct": "wrong",
                    "partial": "wrong", "false": "wrong", "abstain": "abstained", "abstention": "abstained",
                    "true": "correct"}
_VERDICT_WORDS = "partially[ _]correct|incorrect|correct|wrong|abstained|abstain|abstention|partial"
_VERDICT_FIELD = re.compile(rf"[\"']?verdict[\"']?\s*[:=]\s*[\"']?\s*({_VERDICT_WORDS})\b", re.I)


def _verdict_word(word: str) -> str | None:
    word = word.strip().lower().replace("_", " ")
    word = VERDICT_SYNONYMS.get(word, VERDICT_SYNONYMS.get(word.replace(" ", "_"), word))
    return word if word in JUDGE_VERDICTS else None
_REASON_FIELD = re.compile(r"[\"']?reason[\"']?\s*[:=]\s*[\"']?(.+?)[\"']?\s*(?:[,}]|$)", re.I | re.S)
_OBJECT = re.compile(r"\{.*?\}", re.S)


def parse_verdict(raw: str) -> tuple[str, str] | None:
    """``(verdict, reason)`` from a judge reply, or None when it cannot be read."""
    text = (raw or "").strip()
    candidates = []
    whole = parse_json(text)
    if whole is not None:
        candidates.append(whole)
    for match in _OBJECT.finditer(text):
        try:
            candidates.append(json.loads(match.group(0)))
        except (json.JSONDecodeError, ValueError):
            continue
    for data in candidates:
        if isinstance(data, dict):
            verdict = _verdict_word(str(data.get("verdict", "")))
            if verdict is not None:
                reason = str(data.get("reason") or "").strip()
                return verdict, reason or "(the judge gave no reason)"
    field = _VERDICT_FIELD.search(text)
    verdict = _verdict_word(field.group(1)) if field else None
    if verdict is not None:
        given = _REASON_FIELD.search(text)
        return verdict, (given.group(1).strip() if given else "") or "(the judge gave no reason)"
    return None


class LLMJudge:
    """A separate model grades every answer with one rubric (``judge=llm``).

    Verdicts ``correct``/``wrong``/``abstained`` with the judge's reason; a reply that
    cannot be parsed is ``unscored`` with the prompt and the raw reply kept. Judge calls go
    through the response cache like every model call (a rescore spends nothing twice).
    """

    def __init__(self, *, client: Any = None, json_mode: bool = True, **settings: Any) -> None:
        from bench.llm import model_client

        if client is None:
            # OpenAI's json_object mode; the Messages API has none (the rubric asks for the JSON object)
            if json_mode and settings.get("provider", "openai") == "openai":
                # in the body, not model_kwargs: a truncated reply stays a reply (unscored)
                settings["extra_body"] = {**(settings.get("extra_body") or {}),
                                          "response_format": {"type": "json_object"}}
            client = model_client("judge", kind="judge", **settings)
        self.client = client
        self.name = f"llm:{client.model}"

    def clients(self) -> list[ModelClient]:
        return [self.client]

    def prompt(self, question: Question, answer: Answer) -> str:
        return JUDGE_PROMPT.format(
            qtype=question.type,
            question=question.question,
            reference=json.dumps(question.reference, ensure_ascii=False, indent=1),
            answer=answer.answer.strip(),
            rule=GRADING_RULE,
            type_rule=rubric_for(question.type),
        )

    def score(self, question: Question, answer: Answer, repo_root: str | None = None) -> Score:
        from langchain_core.messages import HumanMessage, SystemMessage

        from bench.llm import ContextOverflow, current_callbacks
        from bench.text.content import content_text

        base = _ScoreKey(case_id=answer.case_id, qid=answer.qid, type=question.type, judge=self.name)
        if answer.outcome != "answered":
            return Score(**base, verdict="unscored", reason=f"no answer: {answer.outcome}")
        if not answer.answer.strip():
            return Score(**base, verdict="abstained", reason="empty answer")
        if read_typed(question.answer_format or question_type(question.type).answer_format,
                      parse_json(answer.answer), answer.answer).unknown:  # the typed way to abstain: no call
            return Score(**base, verdict="abstained", reason='no specific claim: the answer is {"unknown": true}')
        prompt = self.prompt(question, answer)
        try:  # a call that keeps failing raises: the score stays missing and resume retries it
            reply, _ = self.client.chat([SystemMessage(JUDGE_SYSTEM), HumanMessage(prompt)],
                                        tags={"case_id": answer.case_id, "qid": answer.qid},
                                        callbacks=current_callbacks())
        except ContextOverflow as err:
            return Score(**base, verdict="unscored", reason=f"judge request too long: {err}", prompt=prompt)
        raw = content_text(reply.content)
        parsed = parse_verdict(raw)
        if parsed is None:
            return Score(**base, verdict="unscored", reason="the judge's reply could not be parsed",
                         raw=raw, prompt=prompt)
        verdict, reason = parsed
        if verdict == "wrong" and _gives_stale(question, answer.answer, repo_root):
            reason = f"{STALE_REASON}: {reason}"  # counted apart in the metrics, as under the exact judge
        return Score(**base, verdict=verdict, reason=reason, raw=raw)


def _gives_stale(question: Question, text: str, repo_root: str | None) -> bool:
    """The answer states the value an earlier call returned (a type with ``grade_question``:
    latest_value), as the exact judge reads it."""
    qtype = question_type(question.type)
    grade_question = getattr(qtype, "grade_question", None)
    if grade_question is None or question.params.get("stale") is None:
        return False
    claim = qtype.claim(parse_json(text), text, repo_root)
    return claim is not None and grade_question(question, claim, repo_root)[1].startswith(STALE_REASON)


def check_judge(part: Any, label: str | None = None) -> Any:
    """``part`` (built from the config group ``judge``, or a panel's member) when it has the :class:`Judge`
    members; else ContractError, one line: ``judge 'mine': missing clients``."""
    return check(part, Judge, "judge", label)
