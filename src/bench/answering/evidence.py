"""Evidence survival by provenance (issue 31): what a view holds of each question's evidence.

Each question names the recorded messages holding its evidence (``Question.evidence_ids``);
each view names the recorded messages it keeps verbatim (``View.verbatim``), and the outputs
its handles store (``View.stored``). From those (:mod:`bench.text.view_contents`):

- **visible**: every evidence message is kept verbatim, or every span of the answer
  (``QuestionType.spans``: the exact reference text) is present in the view's text, in a
  kept message, a summary or a placeholder;
- **recoverable**: visible, or visible once the view's exposed handles are opened: a handle
  in ``view.store`` that the view's text shows (``read_tool_output(handle="...")``) restores
  the tool exchange whose output it stores (``View.stored``: the recorded result, when the
  stored text is its output, and the call it answers, which the handle is shown with: a
  placeholder after the call, a summary's item naming it) and adds its output to the text.

The offline reader (:mod:`bench.answering.evidence_reader`) answers exactly these questions, so the flags and
the reader agree by construction, and a view that holds every message of another (same
ids, same content) flags and answers everything the other does. Types whose answer is not a
text span (counts, lists: ``test_counts``, ``call_count``, ``files_changed``,
``write_actions``) are shown by their messages only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bench.extract.history import pair_results
from bench.questions import question_type
from bench.store.schema import Case, Question, View
from bench.text.content import content_text
from bench.text.formats import find_handles
from bench.text.view_contents import Shown, span_present

__all__ = ["evidence_flags", "EvidenceState", "evidence_state", "view_shown", "question_spans", "evidence_ids"]


def question_spans(question: Question) -> list[str] | None:
    """The texts whose presence in a view shows the question's answer (None: not a text span)."""
    return question_type(question.type).spans(question.reference)


def evidence_ids(case: Case, question: Question) -> list[str]:
    """The ids of the question's evidence messages (from its indices for a record without ids)."""
    if question.evidence_ids:
        return list(question.evidence_ids)
    return [str(case.messages[i].id) for i in question.evidence_messages if 0 <= i < len(case.messages)]


@dataclass(frozen=True)
class EvidenceState:
    """One question in one view: visible, recoverable, and the exposed handles that restore its evidence."""

    visible: bool
    recoverable: bool
    handles: tuple[str, ...] = ()  # exposed handles storing an evidence message, or an output with a span


@dataclass
class _ViewEvidence:
    """A view read once for all its questions: what it shows, and what its exposed handles open."""

    shown: Shown
    opened: dict[str, tuple[tuple[str, ...], list[str]]]  # exposed handle -> (ids it restores; its output's texts)


def view_shown(case: Case, view: View) -> _ViewEvidence:
    shown = Shown.of(view.messages, case.messages, case.profile)  # what make_view records as view.verbatim
    exposed: set[str] = set()
    for message in view.messages:
        exposed.update(find_handles(content_text(message.content)))
    opened: dict[str, tuple[tuple[str, ...], list[str]]] = {}
    exchanges: dict[str, tuple[str, str, str]] | None = None
    for handle in sorted(h for h in exposed if h in view.store):
        output = view.store[handle]
        texts = list(dict.fromkeys([output, case.profile.clean(output)]))
        if exchanges is None:
            exchanges = _exchanges(case)
        result, call, recorded = exchanges.get(view.stored.get(handle, ""), ("", "", ""))
        opened[handle] = ((result, call) if result and recorded == output else (), texts)
    return _ViewEvidence(shown, opened)


def _exchanges(case: Case) -> dict[str, tuple[str, str, str]]:
    """Result id -> (result id, id of the message with the call it answers, the recorded output)."""
    return {str(case.messages[result].id): (str(case.messages[result].id), str(case.messages[call].id),
                                            content_text(case.messages[result].content))
            for (call, _), result in pair_results(case.messages).items()}


def evidence_state(case: Case, view: View, question: Question, read: _ViewEvidence | None = None) -> EvidenceState:
    """Whether the view shows the question's evidence, or restores it through exposed handles."""
    read = read or view_shown(case, view)
    ids, spans = evidence_ids(case, question), question_spans(question)
    visible = read.shown.shows(ids, spans)
    wanted = set(ids)
    handles = tuple(h for h, (restored, texts) in read.opened.items()
                    if (restored and restored[0] in wanted)
                    or (spans and any(span_present(span, text) for span in spans for text in texts)))
    if visible or not handles:
        return EvidenceState(visible, visible, handles)
    opened = read.shown.with_texts([text for h in handles for text in read.opened[h][1]],
                                   [i for h in handles for i in read.opened[h][0]])
    return EvidenceState(False, opened.shows(ids, spans), handles)


def evidence_flags(case: Case, view: View) -> dict[str, dict[str, bool]]:
    """``{qid: {"visible", "recoverable"}}`` for every question of the case (``views.jsonl``)."""
    read = view_shown(case, view)
    flags: dict[str, dict[str, Any]] = {}
    for question in case.questions:
        state = evidence_state(case, view, question, read)
        flags[question.qid] = {"visible": state.visible, "recoverable": state.recoverable}
    return flags
