"""Evidence survival, as the offline reader finds it (issue 17, item 6).

visible: the offline reader (``model=offline``, :mod:`bench.reader`) answers the question
correctly (exact judge) from what the view shows: its messages and summary, no handle opened.
recoverable: visible, or it answers correctly after opening the exposed handles
(``view.store``) of the calls its answer depends on.

Both flags and the reader's answer derive from one definition
(:func:`bench.reader.reader_values`), so no question is flagged visible that the reader
gets wrong, and none it gets right is flagged neither. (A key-string check, which this
replaced, disagreed with the reader on summaries that quote keys out of place and on
answers computed from many calls.)
"""

from __future__ import annotations

from typing import Any

from bench.judge import ExactJudge
from bench.reader import answer_text, reader_values
from bench.reading import read_view
from bench.schema import Answer, Case, Question, View

__all__ = ["evidence_flags", "reader_correct"]

_JUDGE = ExactJudge()


def reader_correct(case: Case, question: Question, value: Any) -> bool:
    """Whether the reader's value for a question is graded correct by the exact judge."""
    if value is None:
        return False
    answer = Answer(case_id=case.case_id, qid=question.qid, type=question.type, answer=answer_text(value))
    return _JUDGE.score(question, answer, case.repo_root).verdict == "correct"


def evidence_flags(case: Case, view: View) -> dict[str, dict[str, bool]]:
    flags = {}
    reading, _ = read_view(view.messages, view.summary, case)  # read once for every question of the view
    for question in case.questions:
        first, after, handles = reader_values(case, view, question, reading)
        visible = reader_correct(case, question, first)
        recoverable = visible or (bool(handles) and reader_correct(case, question, after))
        flags[question.qid] = {"visible": visible, "recoverable": recoverable}
    return flags
