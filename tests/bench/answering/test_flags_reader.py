"""Evidence by provenance (issue 31 item 1), on every arm's views of the real data and the samples.

Sources: the real OpenHands rows of ``tests/data/real/dev.parquet``, the shipped coding sample,
the shipped operations sample (real tau2-bench runs) and the real chat logs of
``tests/data/real/chat`` (airline, a shell-only log). Arms: full, none, nlatest (10, 20, 40),
mask, trim, compact with every mechanism preset (sre prompt; the generic prompt's free-text
summary; an unbounded summary), lc_summary, condenser and custom, at their defaults and at
settings that cut the samples' short histories too. On every view:

- flags = reader: ``visible`` / ``recoverable`` say exactly what the offline reader answers
  correctly (the exact judge grades it);
- monotone: a view that holds every message of another (same id, same content: a summary or
  placeholder must be there too) answers every question the other answers;
- text: a reference present verbatim in the view's text is never flagged invisible (types
  whose answer is not a text span - counts, lists - and values under 3 characters or booleans
  are the documented exceptions: ``QuestionType.spans`` is None for them);
- provenance: a question flagged visible has every evidence message in the view verbatim, or its
  reference text in the view;
- ``full`` scores 100%, every type (issue 31 item 3).

Figures per arm pair: ``benchmarks/bench_monotone.py``.
"""

from __future__ import annotations

import json
from collections import Counter
from functools import cache

import pytest

from bench.answering.evidence import evidence_flags, question_spans
from bench.answering.evidence_reader import EvidenceReader
from bench.config.arms import build_policy
from bench.config.checks import compose
from bench.config.job_cases import load_job_cases
from bench.policies import CompactPolicy, PolicyContext
from bench.policies.summarize import ExtractiveSummarizer
from bench.scoring.judge import ExactJudge
from bench.store.schema import View
from bench.text.tokens import TokenCounter
from bench.text.view_contents import message_texts, span_present, verbatim_ids

from arm_grid import ARMS, SOURCES

COUNTER = TokenCounter()
UNBOUNDED = "compact/offload/unbounded"  # every stored output keeps its handle in the summary


@cache
def cases_of(source: str) -> list:
    cases = load_job_cases(compose(SOURCES[source]), COUNTER).cases
    assert cases and all(case.questions for case in cases), source
    return cases


@cache
def policy_of(arm: str):
    """The arm as a job builds it (its config composed once: an arm does not depend on the dataset)."""
    if arm == UNBOUNDED:
        return CompactPolicy(context=PolicyContext(
            counter=COUNTER, mechanism={"name": "offload", "tail": True, "stepcut": True, "offload": True},
            summarizer=ExtractiveSummarizer(max_fraction=None)))
    return build_policy(compose(ARMS[arm]), COUNTER)


@cache
def views_of(source: str, arm: str) -> list[View]:
    return [policy_of(arm)(case) for case in cases_of(source)]


@cache
def held_of(source: str, arm: str) -> list[Counter]:
    return [held(view) for view in views_of(source, arm)]


@cache
def correct_of(source: str, arm: str) -> dict[str, bool]:
    """qid -> the offline reader's answer is graded correct."""
    reader, judge = EvidenceReader(), ExactJudge()
    out = {}
    for case, view in zip(cases_of(source), views_of(source, arm), strict=True):
        for question in case.questions:
            answer = reader.answer(case, view, question)
            out[question.qid] = judge.score(question, answer, case.repo_root).verdict == "correct"
    return out


def held(view: View) -> Counter:
    """The view's messages as (id, content) signatures: what "holds every message" compares."""
    return Counter(json.dumps([m.id, m.type, m.content, getattr(m, "tool_calls", None),
                               getattr(m, "tool_call_id", None)], sort_keys=True, default=str) for m in view.messages)


def _flags_say_what_the_reader_answers(source: str, arm: str) -> None:
    correct = correct_of(source, arm)
    for case, view in zip(cases_of(source), views_of(source, arm), strict=True):
        assert view.verbatim == verbatim_ids(view.messages, case.messages)  # recorded as make_view decides it
        for qid, flag in evidence_flags(case, view).items():
            assert flag["recoverable"] or not flag["visible"], (arm, qid)
            assert correct[qid] == flag["recoverable"], (arm, qid, flag)  # the reader answers exactly these


def _a_view_that_holds_more_never_answers_less(source: str) -> None:
    arms = [*ARMS, UNBOUNDED]
    contained = 0
    for a in arms:
        for b in arms:
            if a == b:
                continue
            for index, case in enumerate(cases_of(source)):
                bigger, smaller = held_of(source, a)[index], held_of(source, b)[index]
                if any(bigger[key] < count for key, count in smaller.items()):
                    continue
                contained += 1
                lost = [q.qid for q in case.questions if correct_of(source, b)[q.qid] and not correct_of(source, a)[q.qid]]
                assert not lost, f"{a} holds every message of {b} for {case.case_id} and loses {lost}"
    assert contained  # the property is not vacuous: views do contain others


def _a_reference_in_the_view_is_visible_and_visible_means_evidence_or_reference(source: str) -> int:
    checked = 0
    for arm in [*ARMS, UNBOUNDED]:
        for case, view in zip(cases_of(source), views_of(source, arm), strict=True):
            texts = [t for m in view.messages for t in message_texts(m, case.profile)]
            kept = set(view.verbatim)
            flags = evidence_flags(case, view)
            for question in case.questions:
                spans = question_spans(question)
                present = bool(spans) and all(any(span_present(s, t) for t in texts) for s in spans)
                evidence = bool(question.evidence_ids) and set(question.evidence_ids) <= kept
                assert flags[question.qid]["visible"] == (evidence or present), (arm, question.qid)
                if spans is None:  # the documented exceptions: counts and lists (and values too short to tell)
                    assert question.type in ("test_counts", "call_count", "files_changed", "write_actions") or (
                        isinstance(question.reference, bool) or len(str(question.reference).strip()) < 3)
                checked += present and not evidence
    return checked


def _full_scores_every_question(source: str) -> None:
    correct = correct_of(source, "full")
    for case, view in zip(cases_of(source), views_of(source, "full"), strict=True):
        assert view.verbatim == [str(m.id) for m in case.messages]
        for question in case.questions:
            assert correct[question.qid], question.qid


@pytest.mark.one_variant
@pytest.mark.parametrize("source", list(SOURCES))
def test_evidence_by_provenance_on_every_arm(source: str) -> None:
    """All properties on one source's views (built once: one test per source)."""
    for arm in [*ARMS, UNBOUNDED]:
        _flags_say_what_the_reader_answers(source, arm)
    _a_view_that_holds_more_never_answers_less(source)
    shown_by_text = _a_reference_in_the_view_is_visible_and_visible_means_evidence_or_reference(source)
    if source in ("dev", "sample", "ops", "airline"):
        assert shown_by_text  # references do show up in views that lost their evidence messages
    _full_scores_every_question(source)
    if source in ("dev", "sample"):  # the arms reach every state: the properties above are not vacuous
        states = {(f["visible"], f["recoverable"]) for arm in ("nlatest10", "compact/offload", UNBOUNDED)
                  for case, view in zip(cases_of(source), views_of(source, arm), strict=True)
                  for f in evidence_flags(case, view).values()}
        assert states == {(False, False), (False, True), (True, True)}


def test_every_type_is_asked_somewhere_so_full_covers_them_all() -> None:
    from bench.questions import QUESTION_TYPES

    asked = {q.type for source in SOURCES for case in cases_of(source) for q in case.questions}
    assert asked == set(QUESTION_TYPES)
