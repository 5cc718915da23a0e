"""The offline evidence reader: answers by applying each question's extractor to the view.

No LLM, no network, deterministic. On the full arm it reproduces every reference by
construction. It reads only what the view shows (:mod:`bench.reading`), the way a model
reads text, and uses of a question only what its text asks (type and target: tool,
command, arguments, run ordinal), never its reference or evidence keys::

    reader = EvidenceReader()
    answer = reader.answer(case, view, question)

Each question type answers from the reading (``QuestionType.read``) and names the calls
its answer depends on. A handle ``read_tool_output(handle="...")`` attached to such a call
and exposed in ``view.store`` is opened when the view alone gives no answer, or first
under ``verify`` guidance; each opened handle is a recorded retrieval. What the view does
not show is unknown, so an answer that depends on it is an abstention.
"""

from __future__ import annotations

import json
from typing import Any

from langchain_core.messages import BaseMessage

from bench.metrics import OFFLINE_READER
from bench.questions import question_type
from bench.questions.answers import typed_answer
from bench.reading import Reading, read_view
from bench.schema import Answer, Case, Question, View

__all__ = ["EvidenceReader", "extract_answer", "reader_values", "answer_text", "ABSTENTION"]

ABSTENTION = "I don't know: that evidence is not in my context any more."


def extract_answer(question: Question, messages: list[BaseMessage], case: Case) -> Any:
    """The question's answer as the given messages show it (no summary), or None."""
    reading, _ = read_view(messages, None, case)
    return question_type(question.type).read(question, reading, case.repo_root).value


def reader_values(case: Case, view: View, question: Question,
                  reading: Reading | None = None) -> tuple[Any, Any, list[str]]:
    """What the reader reads for a question: the value from the view alone (messages and
    summary, no handle opened), the value after opening the exposed handles of the calls the
    answer depends on (None when none is exposed), and those handles.

    ``reading``: the view's own reading (``read_view`` of its messages and summary), when the
    caller reads several questions of one view (questions only read it).
    The one definition the reader's answer and the evidence flags (``bench.evidence``) derive from.
    """
    qtype = question_type(question.type)
    if reading is None:
        reading, _ = read_view(view.messages, view.summary, case)
    first = qtype.read(question, reading, case.repo_root)
    handles = [reading.events[i].handle for i in first.depends]
    wanted = {h: view.store[h] for h in handles if h and h in view.store}
    if not wanted:
        return first.value, None, []
    reading, opened = read_view(view.messages, view.summary, case, wanted)
    return first.value, qtype.read(question, reading, case.repo_root).value, opened


def answer_text(value: Any, answer_format: dict[str, str] | None = None) -> str:
    """The reader's answer text for a value (None: the abstention): typed in the question's
    format when it has one (``{"unknown": true}`` to abstain), else JSON of the value."""
    if answer_format:
        return typed_answer(answer_format, value)
    return ABSTENTION if value is None else json.dumps(value, ensure_ascii=False, sort_keys=True)


class EvidenceReader:
    """Offline answering model (``model=offline``)."""

    name = OFFLINE_READER

    def clients(self) -> list[Any]:
        return []  # no model

    def answer(self, case: Case, view: View, question: Question) -> Answer:
        first, after, handles = reader_values(case, view, question)
        # handles are opened when the view alone gives no answer, or first under verify guidance
        use_handles = bool(handles) and (view.guidance or first is None)
        value = after if use_handles else first
        return Answer(
            case_id=case.case_id,
            qid=question.qid,
            type=question.type,
            answer=answer_text(value, question.answer_format),
            usage={"model": self.name, "calls": 0, "input_tokens": 0, "output_tokens": 0},
            retrievals=handles if use_handles else [],
        )
