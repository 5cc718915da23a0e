"""Questions and references (spec 1.3 and issue 11), extracted by code from the recorded history.

Question types are a registry: one module per type (``bench/questions/<name>.py``) behind
the :class:`~bench.questions.question_type.QuestionType` interface, listed in ``REGISTRY`` in the
order they are asked (``files_changed`` first: its view closes the recorded history).
The coding types need a repository (the OpenHands profile); the domain-neutral ones apply
to every source. A question that cannot be referenced exactly is dropped with a reason,
never replaced.

    from bench.questions import add_questions
    add_questions(case, counter)                 # every type that applies to case.profile
    add_questions(case, counter, types=["call_count"])

A new question type: write its module and add it to ``REGISTRY``; nothing else changes.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable
from typing import Any

from bench.core.errors import BenchError
from bench.profiles import OPENHANDS, TAU2
from bench.questions.call_count import CALL_COUNT
from bench.questions.depth import DEPTHS, check_depths, depth_qid, pick_depths, question_depth
from bench.questions.files_changed import FILES_CHANGED, patch_paths
from bench.questions.first_edit import FIRST_EDIT
from bench.questions.first_error import FIRST_ERROR
from bench.questions.first_tool_error import FIRST_TOOL_ERROR
from bench.questions.guess import drop_templates, guess_reason
from bench.questions.latest_value import LATEST_VALUE
from bench.questions.matching import squash
from bench.questions.question_type import CaseFacts, ChoosingType, QuestionType, ordinal, registry
from bench.questions.suite_counts import TEST_COUNTS
from bench.questions.tool_output import TOOL_OUTPUT
from bench.questions.tool_value import TOOL_VALUE
from bench.questions.user_fact import USER_FACT
from bench.questions.write_actions import WRITE_ACTIONS
from bench.store.schema import Case, DroppedQuestion, Question
from bench.text.view_contents import Shown, message_texts, span_present

__all__ = ["QUESTION_TYPES", "CODING_TYPES", "REGISTRY", "QuestionType", "add_questions",
           "question_type", "question_text", "select_types", "ordinal", "patch_paths", "evidence_shown", "QuestionTypeError",
           "DEPTHS", "check_depths", "drop_templates"]

log = logging.getLogger(__name__)

# each type checked against the contract as it is registered (bench.questions.question_type.registry)
REGISTRY: dict[str, QuestionType[Any, Any]] = registry(
    FILES_CHANGED, FIRST_EDIT, TEST_COUNTS, FIRST_ERROR,  # coding (a repository)
    TOOL_OUTPUT, TOOL_VALUE, CALL_COUNT, FIRST_TOOL_ERROR,  # domain-neutral (every source)
    USER_FACT, LATEST_VALUE,  # domain-neutral: later user turns, a value that changed
    WRITE_ACTIONS,  # sources whose profile names write tools (tau2; generic: dataset.write_tools)
)
QUESTION_TYPES = tuple(REGISTRY)
# the types a coding run asks and an operations run cannot (they need a shell or an editor), read off the
# types themselves
CODING_TYPES = tuple(name for name, qtype in REGISTRY.items() if qtype.applies(OPENHANDS) and not qtype.applies(TAU2))


class QuestionTypeError(BenchError, ValueError):
    """``questions.types`` names a type that is not registered."""


def question_type(name: str) -> QuestionType[Any, Any]:
    try:
        return REGISTRY[name]
    except KeyError:
        raise QuestionTypeError(f"unknown question type {name!r}: choose from {', '.join(REGISTRY)}") from None


def question_text(name: str, target: dict[str, Any]) -> str:
    """The question a type asks about ``target`` (coding run types: ``{"command", "ordinal"}``)."""
    return question_type(name).text(target)


def select_types(types: Iterable[str] | None) -> list[str]:
    """The registered types named (in registry order), or all of them for None."""
    if types is None:
        return list(REGISTRY)
    wanted = [str(t) for t in types]
    for name in wanted:
        question_type(name)
    return [name for name in REGISTRY if name in wanted]


def evidence_shown(question: Question, shown: Shown) -> bool:
    """Whether messages (``shown``: what they show, :class:`bench.text.view_contents.Shown`) show the question's
    evidence: every evidence message verbatim, or every span of its answer in their text."""
    return shown.shows(question.evidence_ids, question_type(question.type).spans(question.reference))


def _suffix_tokens(case: Case, counter: Any) -> list[int]:
    """Tokens from each message to the end of the history (one past the end: 0)."""
    sizes = [counter.count_message(m) for m in case.messages]
    suffix = [0] * (len(sizes) + 1)
    for i in range(len(sizes) - 1, -1, -1):
        suffix[i] = suffix[i + 1] + sizes[i]
    return suffix


def _distances(case: Case, question: Question, suffix_tokens: list[int], texts: list[list[str]]) -> None:
    """``evidence_back`` (to the earliest evidence message) and ``nearest_back`` (to the shortest
    suffix of the history that still shows the evidence, as a view would: every evidence message,
    or every span of the answer in its text), in messages and tokens."""
    n = len(case.messages)

    def back(start: int) -> dict[str, int]:
        return {"messages": n - start, "tokens": suffix_tokens[start]}

    if question.evidence_messages:
        question.evidence_back = back(min(question.evidence_messages))
    starts = [min(question.evidence_messages)] if question.evidence_messages else []
    spans = question_type(question.type).spans(question.reference)
    if spans:  # the latest message that still shows every span: the last showing of the least recent one
        last = [next((i for i in range(n - 1, -1, -1) if any(span_present(span, t) for t in texts[i])), None)
                for span in spans]
        if all(i is not None for i in last):
            starts.append(min(i for i in last if i is not None))
    question.nearest_back = back(max(starts)) if starts else question.evidence_back


def add_questions(case: Case, counter: Any = None, types: Iterable[str] | None = None,
                  depths: Iterable[str] | None = None) -> Case:
    """Build every selected type that applies to the case's profile; record drops with reasons.

    With a token counter, each question also gets its distances (``evidence_back``,
    ``nearest_back``) and ``depth``; ``in_task_text`` is set when its answer is readable in the
    task text. A question whose answer needs no history (``bench.questions.guess``) is dropped
    and the next eligible target taken. ``depths`` (labels of ``bench.questions.depth``; needs
    the counter): a type with several eligible targets asks the one nearest each bucket present,
    ids ``<case>:<type>@<depth>``; None: the earliest eligible target, ids ``<case>:<type>``.
    """
    facts = CaseFacts(case)
    task = squash(case.task_text)
    depths = check_depths(depths) if counter is not None else None
    total = counter.count_messages(case.messages) if counter is not None else 0
    questions: list[Question] = []
    dropped: list[DroppedQuestion] = []
    measured: dict[str, Any] = {}  # the history's suffix tokens and message texts, computed once

    def suffix() -> list[int]:
        if "suffix" not in measured:
            measured["suffix"] = _suffix_tokens(case, counter)
        return measured["suffix"]

    def texts() -> list[list[str]]:
        if "texts" not in measured:
            measured["texts"] = [message_texts(m, case.profile) for m in case.messages]
        return measured["texts"]

    def drop(built: DroppedQuestion) -> None:
        dropped.append(built)
        log.debug("dropped %s question of %s: %s", built.type, case.case_id, built.reason)

    for name in select_types(types):
        qtype = REGISTRY[name]
        if not qtype.applies(case.profile):
            continue
        if not isinstance(qtype, ChoosingType):
            built = qtype.build(facts)
            if isinstance(built, DroppedQuestion):
                drop(built)
                continue
            chosen: list[Question] = [built]
        else:
            chosen = []
            guessed: Counter[str] = Counter()
            for question in qtype.candidates(facts):
                reason = guess_reason(question)
                if reason is None:
                    chosen.append(question)
                elif depths is not None or not chosen:  # null: only those before the one asked
                    guessed[reason] += 1
            for reason, count in guessed.items():  # one record per reason, with its number of targets
                drop(DroppedQuestion(name, f"{reason} ({count} target{'s' if count > 1 else ''})"))
            if not chosen:
                drop(qtype.none_eligible())
                continue
            if depths is None:
                chosen = chosen[:1]
            else:
                for question in chosen:
                    if question.evidence_messages:
                        question.evidence_back = {"messages": len(case.messages) - min(question.evidence_messages),
                                                  "tokens": suffix()[min(question.evidence_messages)]}
                chosen, empty = pick_depths(chosen, depths, total)
                for label in empty:
                    log.debug("%s of %s: no eligible target at depth %s", name, case.case_id, label)
        for built in chosen:
            if counter is not None:
                _distances(case, built, suffix(), texts())
                built.depth = question_depth(built)
            built.answer_format = dict(qtype.answer_format)
            keys = [squash(k) for k in qtype.answer_keys(built.reference)]
            built.in_task_text = bool(keys) and all(k and k in task for k in keys)
            if depths is not None and built.depth is not None:
                built.qid = depth_qid(built, case.case_id)
            questions.append(built)
    case.questions = questions
    case.dropped_questions = dropped
    return case
