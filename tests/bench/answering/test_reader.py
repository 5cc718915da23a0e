"""The offline reader answers by provenance (issue 31 item 1): exactly what a view shows of each
question's evidence (its messages verbatim, or the exact reference text), or restores through an
exposed handle; anything else is an abstention.

Cases are built from rows (``tests/support/builders.py``), so messages carry the ids ``bench.data.cases``
gives them and questions carry their references and evidence as a job builds them.
"""

from __future__ import annotations

import json

from langchain_core.messages import HumanMessage

from bench.answering.evidence import evidence_flags, evidence_state
from bench.answering.evidence_reader import EvidenceReader
from bench.data.cases import row_to_case
from bench.policies import CompactPolicy, FullHistory, NLatest, PolicyContext, make_view
from bench.policies.summarize import ExtractiveSummarizer
from bench.questions import add_questions
from bench.scoring.judge import ExactJudge
from bench.store.schema import Case, View
from bench.text.formats import handle_ref, placeholder
from bench.text.tokens import TokenCounter

from builders import bash, row

COUNTER = TokenCounter()
PYTEST = "cd /workspace/acme__widgets__1.0 && python -m pytest tests -q"
BIG = "collecting ...\n" * 60  # over micro_compact's 500 characters


def build(*steps, types=("test_counts", "tool_output", "first_error", "call_count")) -> Case:
    case = row_to_case(row(*steps), 0)
    assert isinstance(case, Case), case
    return add_questions(case, COUNTER, list(types))


def history() -> Case:
    return build(bash("1", PYTEST, "..F....\n=== 1 failed, 6 passed in 0.42s ===", 1),
                 bash("2", "python repro.py", "Traceback (most recent call last):\n  File \"r.py\", line 1\nKeyError: 'k'", 1),
                 bash("3", "ls src", "widget.py  gadget.py"),
                 bash("4", "cat VERSION", "1.4.2-rc1"))


def answer(case: Case, view: View, qtype: str):
    question = next(q for q in case.questions if q.type == qtype)
    reply = EvidenceReader().answer(case, view, question)
    verdict = ExactJudge().score(question, reply, case.repo_root).verdict
    return json.loads(reply.answer), verdict, reply.retrievals


def view_of(case: Case, messages, **extra) -> View:
    return make_view(case, "test", list(messages), COUNTER, **extra)


def test_ids_are_stable_and_questions_name_their_evidence_by_id() -> None:
    case = history()
    assert [m.id for m in case.messages][:3] == ["m1", "m2", "m3"]  # the position in the source row (0: system)
    assert [m.id for m in row_to_case(row(*[bash("1", PYTEST, "=== 1 passed in 0.1s ===")]), 0).messages][:2] == [
        "m1", "m2"]
    for question in case.questions:
        assert question.evidence_ids == [case.messages[i].id for i in question.evidence_messages]
    again = Case.from_dict(json.loads(json.dumps(case.to_dict())))  # cases.jsonl keeps them
    assert [m.id for m in again.messages] == [m.id for m in case.messages]
    assert [q.evidence_ids for q in again.questions] == [q.evidence_ids for q in case.questions]
    # a record from before ids: named from positions, evidence ids filled from the indices
    record = case.to_dict()
    for message in record["messages"]:
        message["data"]["id"] = None
    for question in record["questions"]:
        del question["evidence_ids"]
    old = Case.from_dict(record)
    assert [m.id for m in old.messages] == [f"m{i}" for i in range(len(old.messages))]
    assert all(q.evidence_ids == [f"m{i}" for i in q.evidence_messages] for q in old.questions)


def test_full_answers_everything_and_none_nothing() -> None:
    case = history()
    full = FullHistory(context=PolicyContext(counter=COUNTER))(case)
    assert full.verbatim == [m.id for m in case.messages] and full.to_dict()["verbatim"] == full.verbatim
    none = view_of(case, [])
    for question in case.questions:
        assert answer(case, full, question.type)[1] == "correct"
        assert answer(case, none, question.type)[:2] == ({"unknown": True}, "abstained")


def test_kept_evidence_is_answered_even_when_earlier_runs_are_cut() -> None:
    case = history()
    error = next(q for q in case.questions if q.type == "first_error")  # the 2nd call: python repro.py
    view = NLatest(n=len(case.messages) - min(error.evidence_messages), context=PolicyContext(counter=COUNTER))(case)
    assert set(error.evidence_ids) <= set(view.verbatim)
    assert answer(case, view, "first_error")[1] == "correct"
    # the test run before it is cut, and a count needs every call: abstentions
    assert answer(case, view, "test_counts")[1] == "abstained"
    assert answer(case, view, "call_count")[1] == "abstained"


def test_a_changed_copy_is_not_verbatim_but_the_reference_text_still_shows() -> None:
    case = history()
    run = next(q for q in case.questions if q.type == "first_error")
    result_index = max(run.evidence_messages)
    masked = list(case.messages)
    masked[result_index] = masked[result_index].model_copy(update={"content": "[old tool output omitted]"})
    view = view_of(case, masked)
    assert case.messages[result_index].id not in view.verbatim  # same id, other content: not verbatim
    assert evidence_flags(case, view)[run.qid] == {"visible": False, "recoverable": False}
    assert answer(case, view, "first_error")[1] == "abstained"
    # the same exception quoted by the agent later: the reference text is in the view, so it shows
    quoted = [*masked, HumanMessage("The repro printed KeyError: 'k' as expected.", id="note")]
    assert evidence_flags(case, view_of(case, quoted))[run.qid]["visible"]
    # a number (a count) is never shown by text: only by its messages
    counts = next(q for q in case.questions if q.type == "test_counts")
    summary = [HumanMessage("Summary: ran the tests: 1 failed, 6 passed.", id="s"), *case.messages[-2:]]
    assert not evidence_flags(case, view_of(case, summary))[counts.qid]["visible"]


def test_a_summary_that_quotes_the_output_shows_it() -> None:
    case = build(bash("1", "ls src", "widget.py gadget.py"), bash("2", "cat VERSION", "1.4.2-rc1"),
                 types=("tool_output", "call_count"))
    view = CompactPolicy(context=PolicyContext(counter=COUNTER, summarizer=ExtractiveSummarizer(max_fraction=None)))(
        case)
    assert view.verbatim == []  # shipped: the summary is all there is
    output, count = case.questions[0], case.questions[1]
    assert output.reference in view.summary
    assert evidence_flags(case, view) == {output.qid: {"visible": True, "recoverable": True},
                                         count.qid: {"visible": False, "recoverable": False}}  # a count: by messages only
    assert answer(case, view, "tool_output") == ({"output": output.reference}, "correct", [])


def test_exposed_handles_restore_what_they_store() -> None:
    case = build(bash("1", "pytest -q", BIG + "=== 4 failed, 9 passed in 0.1s ==="),
                 *[bash(str(i), f"ls {i}", f"file{i}.txt") for i in range(2, 8)], types=("test_counts",))
    (question,) = case.questions
    view = CompactPolicy(context=PolicyContext(counter=COUNTER, mechanism={"name": "offload", "offload": True},
                                               summarizer=ExtractiveSummarizer(max_fraction=None)))(case)
    result_id = case.messages[max(question.evidence_messages)].id
    handle = next(h for h, i in view.stored.items() if i == result_id)
    assert handle in view.store and result_id not in view.verbatim
    assert evidence_state(case, view, question).__dict__ == {"visible": False, "recoverable": True,
                                                             "handles": (handle,)}
    got, verdict, retrievals = answer(case, view, "test_counts")
    assert got == {"passed": 9, "failed": 4} and verdict == "correct" and retrievals == [handle]
    # not restored: a handle the view does not show, one it does not store, or a stored text that is not the output
    shown = [m for m in view.messages if handle_ref(handle) in str(m.content)]
    assert shown  # the summary names it
    hidden = View(**{**view.__dict__, "messages": [m for m in view.messages if m not in shown]})
    assert not evidence_state(case, hidden, question).recoverable
    unstored = View(**{**view.__dict__, "store": {}})
    assert not evidence_state(case, unstored, question).recoverable
    edited = View(**{**view.__dict__, "store": {**view.store, handle: "=== 9 passed in 0.1s ==="}})
    assert not evidence_state(case, edited, question).recoverable


def test_verify_opens_the_handles_first_even_when_the_evidence_shows() -> None:
    case = history()
    question = next(q for q in case.questions if q.type == "test_counts")
    result = case.messages[max(question.evidence_messages)]
    handle = "out_test"
    messages = [*case.messages, HumanMessage(f"Stored: {placeholder(handle)}", id="note")]
    plain = view_of(case, messages, store={handle: result.content}, stored={handle: result.id})
    assert EvidenceReader().answer(case, plain, question).retrievals == []  # visible: nothing to open
    guided = view_of(case, messages, store={handle: result.content}, stored={handle: result.id}, guidance="verify")
    reply = EvidenceReader().answer(case, guided, question)
    assert reply.retrievals == [handle] and ExactJudge().score(question, reply).verdict == "correct"
