"""The work of a job: views, answers and judgments as tasks on worker threads, records in order.

The unit of work is one model-facing step: a case's view is built once by one task (which loads
the case from ``cases.jsonl``; a few cases are open at a time, see :meth:`Pipeline.window`); each
pending question of the case is then answered by a task of its own (sharing that view), and
each answer is judged by a further task. So ``workers`` calls are in flight whatever the
number of questions per case, and an LLM judge's calls fill the slots answers leave free.
With ``model.warm_prefix`` (real models) a view's first question
goes alone and the others once its answer is in: every request of a view shares the prefix
system, tools, view (the question comes last), and a provider's prefix cache only serves a
prefix a *completed* request wrote, so sending them together would pay for it 5-8 times.
Tasks report typed events; the calling thread handles them: it writes every record (one line
per ``case_id``, ``qid``, appended as soon as it exists), calls the tracer and moves the
progress bar.

A job has two phases with the same shape (:class:`Phase`): the arm, and for a non-full arm
the full-history reference with the same answerer and judge::

    pipeline = Pipeline(store, answerer, judge, tracer, workers, limiters)
    pipeline.run_phase(cases, policy, Phase.of_arm("compact"))
    full_correct = pipeline.run_phase(cases, FullHistory(...), Phase.reference())
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import queue
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from tqdm import tqdm

from bench.answering.answerer import Answerer
from bench.answering.evidence import evidence_flags
from bench.core.components import calls_model
from bench.llm import ContextOverflow, call_callbacks, call_observer, call_tags
from bench.llm.limiter import Limiter
from bench.runner.caseset import CaseEntry, CaseSet
from bench.runner.events import Answered, JudgeFailed, PrefixWarm, Scored, ViewBuilt, ViewRecord
from bench.runner.resume import prune
from bench.scoring.judge import Judge
from bench.scoring.metric_records import VIEW_OMITTED
from bench.store.records import JobStore
from bench.store.schema import Answer, Case, Question, Score, View

__all__ = ["Phase", "Pipeline"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class _Fatal:
    error: BaseException


@dataclass(frozen=True)
class _Done:  # a task of this case returned
    case_id: str


@dataclass(frozen=True)
class Phase:
    """What a phase records: the arm writes views, answers and scores and traces them; the
    reference writes only its scores (with the answer's outcome) in ``reference_scores``."""

    name: str  # call tag and progress bar: arm | reference
    arm: str  # the arm label of its calls
    scores: str  # the record file of its scores
    answers: str | None = None  # the record file of its answers (None: not kept)
    views: str | None = None  # the record file of its views (None: not kept)
    traced: bool = False

    @classmethod
    def of_arm(cls, arm: str) -> Phase:
        return cls("arm", arm, "scores", "answers", "views", traced=True)

    @classmethod
    def reference(cls) -> Phase:
        return cls("reference", "full", "reference_scores")

    @property
    def label(self) -> str:
        return f"{self.arm}: answer+judge" if self.name == "arm" else "full reference"


def error_answer(case: Case, question: Question, error: str, outcome: str = "error") -> Answer:
    return Answer(case_id=case.case_id, qid=question.qid, type=question.type, answer="", usage={},
                  outcome=outcome, error=error)


def _view_gate(policy: Any) -> Any:
    """Views that are pure CPU are built one at a time: under the GIL, sixteen built in lockstep
    would all finish (and release their questions) only at the end."""
    return threading.Lock() if not calls_model(policy) else contextlib.nullcontext()


class Pipeline:
    """Runs a job's phases on ``workers`` threads; the calling thread writes records and traces."""

    def __init__(self, store: JobStore, answerer: Answerer, judge: Judge, tracer: Any, workers: int,
                 limiters: Sequence[tuple[Limiter, list[str]]] = ()) -> None:
        self.store, self.answerer, self.judge, self.tracer, self.workers = store, answerer, judge, tracer, workers
        self.adaptive = [limiter for limiter, _ in limiters if limiter.mode == "auto"]
        self.complete: dict[str, bool] = {}  # phase name -> every question answered without error and scored
        self.judge_errors: list[str] = []  # a judge (or panel member) that failed, named, per question

    # ---- the executor
    def _execute(self, first: Iterator[tuple[str, Callable]], handle: Callable, desc: str, total: int) -> None:
        """Run each ``task(emit)`` on the workers; ``handle(event, submit)`` in this thread.

        ``first`` are the view tasks, ``(case_id, task)``, taken as cases close: at most
        :meth:`window` cases are open (a case is open from its view task until its last task
        returned), so what a job holds in memory is a few cases, not its case set. ``handle`` may
        ``submit(task, case_id)`` more tasks and returns True when the event completes a question
        (the progress bar moves). A task that raises (a bug, a simulated kill) stops the job:
        nothing new starts, the error is raised here.
        """
        events: queue.SimpleQueue = queue.SimpleQueue()
        stop = threading.Event()
        bar = tqdm(total=total, desc=desc, unit="q", dynamic_ncols=True, mininterval=0.5, disable=None if total else True)

        def wrapped(task: Callable, case_id: str) -> None:
            try:
                if not stop.is_set():
                    task(events.put)
            except BaseException as err:  # noqa: BLE001 - a bug or a simulated kill: stop the job now
                stop.set()
                events.put(_Fatal(err))
            finally:
                events.put(_Done(case_id))

        pool = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="bench-task")
        running: dict[str, int] = {}  # open case -> its tasks submitted and not yet returned

        def submit(task: Callable, case_id: str) -> None:
            running[case_id] = running.get(case_id, 0) + 1
            pool.submit(contextvars.copy_context().run, wrapped, task, case_id)

        def open_next() -> None:
            view = next(first, None)
            if view is not None:
                submit(view[1], view[0])

        try:
            for _ in range(self.window):
                open_next()
            while running:
                event = events.get()
                if isinstance(event, _Done):
                    running[event.case_id] -= 1
                    if not running[event.case_id]:  # the case is done: the next one opens
                        del running[event.case_id]
                        open_next()
                    continue
                if isinstance(event, _Fatal):
                    raise event.error
                if handle(event, submit):
                    if self.adaptive:  # the adaptive limit(s) now, beside the count
                        bar.set_postfix_str("limit=" + ",".join(str(a.current) for a in self.adaptive),
                                            refresh=False)
                    bar.update(1)
        except BaseException:
            stop.set()  # queued tasks return at once; calls in flight are not waited for
            pool.shutdown(wait=False, cancel_futures=True)
            bar.close()
            raise
        pool.shutdown(wait=True)
        bar.close()

    @property
    def window(self) -> int:
        """Cases open at once: enough views built ahead to keep every worker busy with their questions."""
        return 2 * self.workers + 2

    # ---- the tasks
    def _answer(self, case: Case, view: View, question: Question) -> Answer:
        try:
            return self.answerer.answer(case, view, question).capped()  # a runaway reply is kept cut, with its length
        except Exception as err:  # noqa: BLE001 - recorded, the job goes on
            log.warning("case %s, %s: answer failed: %s", case.case_id, question.qid, err)
            return error_answer(case, question, f"{type(err).__name__}: {err}")

    def _calls(self, case: Case, phase: Phase, **tags: Any) -> Any:
        """Tags, and the tracer's callbacks, of the model calls a task of ``case`` makes."""
        callbacks = self.tracer.callbacks(case.case_id) if phase.traced else None
        stack = contextlib.ExitStack()
        stack.enter_context(call_tags(case_id=case.case_id, arm=phase.arm, phase=phase.name, **tags))
        stack.enter_context(call_callbacks(callbacks))
        return stack

    def _view_task(self, cases: CaseSet, entry: CaseEntry, policy: Any, phase: Phase, gate: Any) -> Callable:
        def task(emit: Callable) -> None:
            case = cases.load(entry)  # read from cases.jsonl now, let go when its questions are done
            with self._calls(case, phase):
                try:
                    with gate:
                        view = policy(case)
                except Exception as err:  # noqa: BLE001 - the case's questions are recorded as failed
                    if getattr(err, "stops_job", False):  # a policy's contract broken: no view is valid
                        raise
                    log.warning("case %s: view failed: %s", case.case_id, err)
                    # a summary longer than the summarizer's context is an outcome, not an error to retry
                    outcome = "context_overflow" if isinstance(err, ContextOverflow) else "error"
                    emit(ViewBuilt(case, None, (f"view failed: {type(err).__name__}: {err}", outcome)))
                    return
            emit(ViewBuilt(case, view))
        return task

    @staticmethod
    def _record_task(case: Case, view: View) -> Callable:
        def task(emit: Callable) -> None:  # after the case's questions are queued
            record = view.to_dict()
            record["evidence"] = evidence_flags(case, view)
            # natural-trigger compaction: the generation each question's evidence was last seen in,
            # beside its other flags (and not twice in the record)
            generation = view.info.get("evidence_generation")
            if generation is not None:
                record["info"] = {k: v for k, v in view.info.items() if k != "evidence_generation"}
                for qid, flags in record["evidence"].items():
                    flags["generation"] = generation.get(qid)
            emit(ViewRecord(case, JobStore.encode(record)))
        return task

    def _answer_task(self, built: ViewBuilt, question: Question, phase: Phase, warms: bool = False) -> Callable:
        """``warms``: the view's first question under warm prefixes; its first reply tells the others to go."""
        case = built.case

        def task(emit: Callable) -> None:
            told = threading.Event()

            def observe(record: dict[str, Any]) -> None:  # the prefix is written once a call returned
                if not record.get("failed") and not told.is_set():
                    told.set()
                    emit(PrefixWarm(case))

            with self._calls(case, phase, qid=question.qid), (
                    call_observer(observe) if warms else contextlib.nullcontext()):
                if built.view is None:
                    answer = error_answer(case, question, *(built.error or ("view failed",)))
                else:
                    answer = self._answer(case, built.view, question)
            emit(Answered(case, question, answer, phase.traced and built.view is not None))
        return task

    def _judge_task(self, case: Case, question: Question, answer: Answer, phase: Phase, traced: bool) -> Callable:
        def task(emit: Callable) -> None:
            with self._calls(case, phase, qid=question.qid):
                try:
                    score = self.judge.score(question, answer, case.repo_root)
                except Exception as err:  # noqa: BLE001 - the score stays missing; resume retries
                    log.warning("%s %s, %s: judge failed: %s", phase.name, case.case_id, question.qid, err)
                    emit(JudgeFailed(case, question, err))
                    return
            emit(Scored(case, question, answer, score, traced))
        return task

    # ---- one phase
    def run_phase(self, cases: CaseSet, policy: Any, phase: Phase) -> set[str]:
        """Build the views, answer and judge every question not yet scored; the qids scored correct.

        Resuming, finished answers and scores are kept, answers with ``outcome=error`` (and,
        for the reference, scores of such answers) are dropped and asked again.
        """
        store = self.store
        not_error = lambda r: r.get("outcome", "answered") != "error"  # noqa: E731
        answers: dict[tuple[str, str], dict[str, Any]] = {}
        no_view: set[str] = set()
        if phase.answers:
            answers = prune(store, phase.answers, not_error)
            # a score a judge failed to give (its error recorded) is judged again
            kept = prune(store, phase.scores, lambda r: (r["case_id"], r["qid"]) in answers and not r.get("error"))
            # a view refused as too long for the summarizer has no record: it is not built again for nothing
            no_view = {a["case_id"] for a in answers.values() if str(a.get("error") or "").startswith("view failed")}
        else:
            kept = prune(store, phase.scores, lambda r: not_error(r) and not r.get("error"))
        scores = {key: record["verdict"] for key, record in kept.items()}  # (case_id, qid) -> verdict
        del kept
        viewed = {v["case_id"] for v in store.iter(phase.views, omit=VIEW_OMITTED)} if phase.views else set()
        work = [e for e in cases.entries if (phase.views and e.case_id not in viewed and e.case_id not in no_view)
                or any((e.case_id, qid) not in scores for qid in e.qids)]
        total = sum(1 for e in work for qid in e.qids if (e.case_id, qid) not in scores)
        failed: list[str] = []  # questions without a scored answer: the judge failed (or, reference: the answer)
        gate = _view_gate(policy)
        # warm prefixes: a view's other questions wait until its first answer completed
        warm = bool(getattr(self.answerer, "warm_prefix", False))
        waiting: dict[str, list[Callable]] = {}

        def answered(case: Case, question: Question, answer: Answer, traced: bool, submit: Callable) -> None:
            if traced:
                self.tracer.answer_recorded(case, question, answer)
            submit(self._judge_task(case, question, answer, phase, traced), case.case_id)

        def handle(event: Any, submit: Callable) -> bool:
            if isinstance(event, ViewRecord):  # made only for a phase that keeps its views
                if phase.views and event.case.case_id not in viewed:
                    store.append_line(phase.views, event.line)
                    viewed.add(event.case.case_id)
                return False
            if isinstance(event, ViewBuilt):
                case, traced = event.case, phase.traced and event.view is not None
                if traced:
                    self.tracer.case_started(case, event.view)
                pending = []
                for question in case.questions:
                    key = (case.case_id, question.qid)
                    if key in scores:
                        continue
                    if key in answers:  # answered before an interruption: only the score is missing
                        answered(case, question, Answer(**answers[key]), traced, submit)
                    else:
                        pending.append(question)
                hold = warm and len(pending) > 1 and event.view is not None  # the first goes alone
                if hold:
                    waiting[case.case_id] = [self._answer_task(event, q, phase) for q in pending[1:]]
                for question in pending[:1] if hold else pending:
                    submit(self._answer_task(event, question, phase, warms=hold), case.case_id)
                if phase.views and event.view is not None and case.case_id not in viewed:
                    submit(self._record_task(case, event.view), case.case_id)
                return False
            if isinstance(event, PrefixWarm):
                for ask in waiting.pop(event.case.case_id, []):  # the view's prefix is written now
                    submit(ask, event.case.case_id)
                return False
            if isinstance(event, Answered):
                for ask in waiting.pop(event.case.case_id, []):  # answered without a call (a cache hit, an error)
                    submit(ask, event.case.case_id)
                if phase.answers:
                    store.append(phase.answers, event.answer)
                answered(event.case, event.question, event.answer, event.traced, submit)
                return False
            if isinstance(event, Scored):
                record = event.score.to_dict()
                if not phase.answers:  # the reference keeps no answers: its scores say how each went
                    record["outcome"] = event.answer.outcome
                    if event.answer.outcome == "error":
                        failed.append(event.question.qid)
                if event.score.error:  # a panel member failed: the others' verdict stands, the job is incomplete
                    failed.append(event.question.qid)
                    self.judge_errors.append(event.score.error)
                store.append(phase.scores, record)
                scores[(event.case.case_id, event.question.qid)] = record["verdict"]
                if event.traced:
                    self.tracer.score_recorded(event.case, event.question, event.score)
                return True
            if isinstance(event, JudgeFailed):
                # recorded as unscored with the judge's error (scores.jsonl says which judge and why);
                # resume judges it again
                error = f"judge {getattr(self.judge, 'name', type(self.judge).__name__)} failed: {type(event.error).__name__}: {event.error}"
                failed.append(event.question.qid)
                self.judge_errors.append(error)
                score = Score(case_id=event.case.case_id, qid=event.question.qid, type=event.question.type,
                              verdict="unscored", reason=error, judge=str(getattr(self.judge, "name", "")),
                              error=error)
                store.append(phase.scores, score.to_dict())
                scores[(event.case.case_id, event.question.qid)] = score.verdict
                return True
            raise TypeError(f"unknown event {event!r}")

        views = ((e.case_id, self._view_task(cases, e, policy, phase, gate)) for e in work)
        self._execute(views, handle, phase.label, total)
        self.complete[phase.name] = not failed
        return {qid for (_, qid), verdict in scores.items() if verdict == "correct"}
