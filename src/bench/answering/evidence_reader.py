"""The offline evidence reader: answers exactly what a view shows of each question's evidence.

No LLM, no network, deterministic. It is exact about provenance, not a model of reading:
a question whose evidence is visible in the view (:mod:`bench.answering.evidence`: every evidence
message kept verbatim, or the exact reference text present) is answered with what that
evidence states, the code-extracted reference; one whose evidence is only recoverable is
answered after opening the exposed handles that restore it (each a recorded retrieval);
any other is an abstention. So its answers and the view's evidence flags agree by
construction, it is right whenever the evidence is there (``full`` scores 100%), and a view
that holds every message of another answers everything the other answers::

    reader = EvidenceReader()
    answer = reader.answer(case, view, question)

Handles are opened when the view alone does not show the evidence, or first under
``verify`` guidance (the guidance says to open stored outputs before stating exact details).
"""

from __future__ import annotations

import json
from typing import Any

from bench.answering.evidence import evidence_state
from bench.core.components import ModelClient
from bench.questions.answers import format_keys, typed_answer
from bench.scoring.metric_records import OFFLINE_READER
from bench.store.schema import Answer, Case, Question, View

__all__ = ["EvidenceReader", "answer_text", "answer_value", "ABSTENTION"]

ABSTENTION = "I don't know: that evidence is not in my context any more."


def answer_value(question: Question) -> Any:
    """What the question's evidence states, in the answer's shape: the reference, reduced to the
    keys of the typed answer when it has more (``first_edit``'s ``context`` and ``changed``)."""
    value = question.reference
    answer_format = question.answer_format or {}
    keys = format_keys(answer_format)
    required = [key for key in answer_format if not key.endswith("?")]
    if isinstance(value, dict) and len(keys) > 1 and all(key in value for key in required):
        return {key: value[key] for key in keys if key in value}
    return value


def answer_text(value: Any, answer_format: dict[str, str] | None = None) -> str:
    """The reader's answer text for a value (None: the abstention): typed in the question's
    format when it has one (``{"unknown": true}`` to abstain), else JSON of the value."""
    if answer_format:
        return typed_answer(answer_format, value)
    return ABSTENTION if value is None else json.dumps(value, ensure_ascii=False, sort_keys=True)


class EvidenceReader:
    """Offline answering model (``model=offline``)."""

    name = OFFLINE_READER

    def clients(self) -> list[ModelClient]:
        return []  # no model

    def answer(self, case: Case, view: View, question: Question) -> Answer:
        state = evidence_state(case, view, question)
        # handles are opened when the view alone does not show the evidence, or first under verify guidance
        opened = list(state.handles) if state.handles and (view.guidance or not state.visible) else []
        known = state.visible or (state.recoverable and bool(opened))
        return Answer(
            case_id=case.case_id,
            qid=question.qid,
            type=question.type,
            answer=answer_text(answer_value(question) if known else None, question.answer_format),
            usage={"model": self.name, "calls": 0, "input_tokens": 0, "output_tokens": 0},
            retrievals=opened,
        )
