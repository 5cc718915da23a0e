"""One job: load cases, build views with the arm, answer, judge, write records, metrics.

``run(cfg)`` is what ``python -m bench.main`` calls and what tests call directly; it
returns the metrics dict.

Order of work:

1. Build the answering model, the judge and the arm (with its summarizer) and run their
   fail-fast checks (missing key, unreachable endpoint) before any case work.
2. Load the cases; write ``cases.jsonl``, ``rejected.jsonl`` and ``run.json`` (``incomplete``).
3. Work runs on ``model.max_concurrency`` workers (``model.max_concurrency_cap`` for ``auto``,
   whose adaptive limiter then decides how many calls are in flight; 1 for the offline
   model): one task
   builds a case's view, then each of its questions is answered by a task of its own
   sharing that view, and each answer is judged by another task. Each view, answer and score is appended to
   its JSONL file as soon as it exists (one line per ``case_id``, ``qid``), by the main
   thread, which also calls the tracer and moves the progress bar (cases x questions).
4. Non-full arms: the full-history reference with the same answerer and judge
   (``reference_scores.jsonl``); with the response cache these answers are shared by every
   config of the same seed.
5. ``metrics.json`` (with the model calls of the job: made vs cache hits, tokens,
   latency, summed from ``calls.jsonl``; and ``concurrency``: per endpoint, the limit over
   the job and the 429s, overloads and timeouts its requests met) and ``run.json``
   ``complete`` once every question is answered without error and scored.

Job directory: a new job needs a directory of its own (absent, or holding only what Hydra
wrote for it: ``.hydra/``, ``main.log``); the job holds an exclusive lock on it for its
life (:mod:`bench.jobdir`), so a second job or a ``resume=`` of a running job is refused.

Resume (``resume=DIR``): finished answers and scores are kept, answers with
``outcome=error`` are dropped and retried, answers without a score are judged, nothing is
duplicated; damaged lines are moved to ``<file>.bad`` and their questions asked again. A
resumed job must use the same config as the job in DIR (operational keys such as
concurrency, timeouts and the cache may change).

Failures: a case whose view or answer keeps failing is recorded (``outcome=error`` with
the error, verdict ``unscored``) and the job goes on; a request refused as longer than the
context (an answer's, or the summary a view needs) is recorded as ``context_overflow`` (not
retried); a judge call that keeps
failing leaves that score missing (the job stays ``incomplete`` and resume retries it).
"""

from __future__ import annotations

import contextlib
import contextvars
import gc
import logging
import queue
import re
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from hydra.errors import InstantiationException
from hydra.utils import instantiate
from omegaconf import DictConfig, OmegaConf
from tqdm import tqdm

from bench.config import ConfigError
from bench.data import load_cases
from bench.evidence import evidence_flags
from bench.jobdir import JobDirError, JobLock, check_new, check_resume_path
from bench.llm import ContextOverflow, ModelSetupError, call_sink, call_tags, summarize_calls
from bench.llm.limiter import DEFAULT_CAP, concurrency_metrics, find_limiters, worker_count
from bench.metrics import compute_metrics
from bench.policies import FullHistory, PolicyContext, build_policy
from bench.provenance import git_state, package_versions, text_hash
from bench.schema import Answer, Case, Question
from bench.store import JobStore, read_jsonl
from bench.tokens import TokenCounter
from bench.tracing import build_tracer

__all__ = ["run", "job_dir", "ResumeError"]

log = logging.getLogger(__name__)

# Config keys that may change between a job and its resumption (they do not change replies).
_OPERATIONAL_TOP = {"resume", "output_dir", "cache", "tracing", "hydra"}
_OPERATIONAL_LEAVES = {"max_concurrency", "max_concurrency_cap", "timeout", "max_retries", "backoff_base",
                       "backoff_max", "check_endpoint", "cache_path", "cache_enabled"}


class ResumeError(ValueError):
    """``resume=DIR`` does not point at a job this config can continue."""


def job_dir(cfg: DictConfig) -> Path:
    """Where this job writes: ``resume``, else ``output_dir``, else Hydra's job directory."""
    if cfg.get("resume"):
        return Path(cfg.resume)
    if cfg.get("output_dir"):
        return Path(cfg.output_dir)
    from hydra.core.hydra_config import HydraConfig

    return Path(HydraConfig.get().runtime.output_dir)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _provenance(cfg: DictConfig, selection, status: str, started: str, *, case_set_hash: str | None = None,
                **extra: Any) -> dict[str, Any]:
    # the summary prompt shapes the views of a compact arm, and of an arm budget-matched to one
    uses_prompt = "compact" in (cfg.arm.get("name"), cfg.arm.get("match"))
    prompt_text = cfg.get("prompt", {}).get("text") if uses_prompt else None
    return {
        "status": status,
        "started": started,
        "ended": _now() if status == "complete" else None,
        **extra,
        "git": git_state(),
        "packages": package_versions(),
        "dataset": selection.source,
        "rows_read": selection.rows_read,
        "rows_skipped_by_filter": selection.skipped,
        "n_cases": len(selection.cases),
        "n_rejected": len(selection.rejected),
        "case_set_hash": case_set_hash or selection.case_set_hash,
        "prompt_hash": text_hash(prompt_text),
        "arm": cfg.arm.get("name"),
        "seed": cfg.get("seed"),
        "config": OmegaConf.to_container(cfg, resolve=True),
    }


# --------------------------------------------------------------------------- set-up

def _surfaced(make, *args: Any, groups: Any = None, **kwargs: Any) -> Any:
    """Call ``make``; a ModelSetupError (missing key ...) wrapped by Hydra's instantiate surfaces as itself,
    and a setting the target does not take (``+arm.n=3`` on arm=full) is a ConfigError naming it.

    ``groups``: ``{group name: its config node}`` where such a setting is looked up.
    """
    try:
        return make(*args, **kwargs)
    except (InstantiationException, TypeError) as err:
        cause: BaseException | None = err
        while cause is not None:
            if isinstance(cause, ModelSetupError):
                raise cause from None
            unknown = _unknown_setting(cause, groups or {})
            if unknown:
                raise ConfigError(unknown) from None
            cause = cause.__cause__
        raise


def _unknown_setting(err: BaseException, groups: dict[str, Any]) -> str | None:
    match = re.search(r"unexpected keyword argument '(\w+)'", str(err)) if isinstance(err, TypeError) else None
    if match is None:
        return None
    key = match.group(1)
    for group, node in groups.items():
        if node is not None and key in node:
            option = node.get("name") or str(node.get("_target_", "")).rsplit(".", 1)[-1]
            return (f"{group}.{key}: not a setting of {group}={option} (remove it, or choose the "
                    f"{group} option that takes it)")
    return None


def _build(node: Any, group: str) -> Any:
    return _surfaced(instantiate, node, _convert_="object", groups={group: node})


def _preflight(*components: Any) -> None:
    """Fail fast: every model client (answer, judge, summarizer) checks key and endpoint."""
    seen: set = set()
    for component in components:
        targets = [component]
        if hasattr(component, "__dict__"):  # a policy holding a summarizer
            targets += [v for v in vars(component).values() if hasattr(v, "preflight")]
        for target in targets:
            check = getattr(target, "preflight", None)
            if callable(check):
                check(seen)


def _flatten(data: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(data, dict):
        flat: dict[str, Any] = {}
        for key, value in data.items():
            flat.update(_flatten(value, f"{prefix}{key}."))
        return flat
    return {prefix[:-1]: data}


def _check_resume(cfg: DictConfig, out: Path, previous: dict[str, Any] | None) -> None:
    if not out.is_dir():
        raise ResumeError(f"resume={out}: no such job directory")
    if previous is None:
        raise ResumeError(f"resume={out}: not a job directory (no run.json)")
    if not isinstance(previous, dict):
        raise ResumeError(f"resume={out}: {out / 'run.json'} is not a job's run.json (not a JSON object)")
    before = _flatten(previous.get("config") or {})
    now = _flatten(OmegaConf.to_container(cfg, resolve=True))

    def relevant(key: str) -> bool:
        parts = key.split(".")
        return parts[0] not in _OPERATIONAL_TOP and parts[-1] not in _OPERATIONAL_LEAVES

    changed = sorted(k for k in set(before) | set(now)
                     if relevant(k) and before.get(k, "<absent>") != now.get(k, "<absent>"))
    if changed:
        shown = ", ".join(f"{k}: {before.get(k, '<absent>')!r} -> {now.get(k, '<absent>')!r}" for k in changed[:4])
        more = f" (+{len(changed) - 4} more)" if len(changed) > 4 else ""
        raise ResumeError(f"resume={out}: the config differs from the job's ({shown}{more}); "
                          "pass the same overrides as the interrupted run")


def _latest(records: list[dict[str, Any]]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(r["case_id"], r["qid"]): r for r in records}


def _prune(store: JobStore, name: str, keep) -> dict[tuple[str, str], dict[str, Any]]:
    """Records of ``name`` by key (last wins); rewrite the file when lines are dropped or repeated."""
    records = store.read(name)
    latest = _latest(records)
    kept = {k: r for k, r in latest.items() if keep(r)}
    if len(kept) != len(records):
        order = [r for r in records if kept.get((r["case_id"], r["qid"])) is r]
        store.write_all(name, order)
    return kept


# --------------------------------------------------------------------------- run

def run(cfg: DictConfig) -> dict[str, Any]:
    """Run one job end to end (or continue it) and return its metrics.

    The job directory is checked before anything is written (a new job needs an empty one,
    ``resume`` a job that is not running) and locked for the job's life.
    """
    out = job_dir(cfg)
    resuming = bool(cfg.get("resume"))
    if resuming:
        try:
            check_resume_path(out)
        except JobDirError as err:
            raise ResumeError(str(err)) from None
    else:
        check_new(out)
    JobStore(out)  # creates the directory
    with JobLock(out):
        if not resuming:
            check_new(out)  # again under the lock: another job may have started in it meanwhile
        return _run(cfg, out, resuming)


def _run(cfg: DictConfig, out: Path, resuming: bool) -> dict[str, Any]:
    started = _now()
    counter = TokenCounter(cfg.tokenizer.encoding)

    # 1. models and arm first: fail fast before any case work
    answerer = _build(cfg.model, "model")
    judge = _build(cfg.judge, "judge")
    policy = _surfaced(build_policy, cfg, counter,
                       groups={"arm": cfg.arm, "summarizer": cfg.get("summarizer"), "mechanism": cfg.get("mechanism")})
    _preflight(answerer, judge, policy)
    limiters = find_limiters(answerer, judge, policy)
    previous = JobStore(out).read_json("run.json") if resuming and out.is_dir() else None
    if resuming:
        _check_resume(cfg, out, previous)

    # 2. cases
    store = JobStore(out)
    if resuming:
        store.quarantine()  # damaged lines -> <file>.bad; their questions are asked again
    selection = load_cases(cfg.dataset, counter, (cfg.get("questions") or {}).get("types"))
    case_set_hash = selection.case_set_hash  # hashes every case: computed once per run
    if resuming and previous.get("case_set_hash") not in (None, case_set_hash):
        raise ResumeError(f"resume={out}: the dataset selection differs from the job's "
                          f"(case-set hash {previous.get('case_set_hash')} -> {case_set_hash})")
    if previous:
        started = previous.get("started") or started
    resumed = list((previous or {}).get("resumed") or []) + ([_now()] if resuming else [])
    if not selection.cases:
        log.warning("no case to run: %d rows read, %d rejected (see %s)", selection.rows_read,
                    len(selection.rejected), store.path("rejected"))
    store.write_all("cases", (c.to_dict() for c in selection.cases))
    store.write_all("rejected", selection.rejected)
    store.write_json("run.json", _provenance(cfg, selection, "incomplete", started, case_set_hash=case_set_hash,
                                                 resumed=resumed))

    tracer = build_tracer(cfg)
    tracer.start_job(out.name, selection.cases)
    workers = _workers(cfg.model)
    arm = cfg.arm.get("name")

    # 3. the arm, 4. the full-history reference
    t0 = time.perf_counter()
    # The loaded cases, models and modules are long-lived: freezing them keeps the cyclic
    # GC from walking them all again (a full collection paused 16 model-call workers for
    # ~150 ms per job). Unfrozen at the end, so later jobs in this process start clean.
    gc.freeze()
    for limiter, _ in limiters:
        limiter.begin_window()  # this job's figures; an adaptive limit carries over from earlier jobs
    try:
        with call_sink(lambda record: store.append("calls", record)):
            job = _Job(store, answerer, judge, tracer, workers, limiters)
            job.run_arm(selection.cases, policy, arm)
            full_correct = None
            if arm != "full":
                full_correct = job.run_reference(selection.cases, FullHistory(context=PolicyContext(counter=counter)))
    finally:
        gc.unfreeze()
    log.info("answered and scored %d cases in %.2fs", len(selection.cases), time.perf_counter() - t0)
    missing = tracer.missing_traces([c.case_id for c in selection.cases])
    if missing:
        log.warning("%d case(s) have no trace: %s", len(missing), missing)
    tracer.flush()

    # 5. metrics and status
    answers = store.read("answers")
    metrics = compute_metrics(
        [c.to_dict() for c in selection.cases], store.read("views"), answers, store.read("scores"), full_correct,
    )
    metrics["missing_traces"] = missing
    metrics["model_calls"] = summarize_calls(_read_tolerant(store.path("calls")))
    if limiters:  # model clients (an offline job has none: nothing to record)
        metrics["concurrency"] = concurrency_metrics(limiters)
    errors = sum(1 for a in answers if a.get("outcome") == "error")
    metrics["n_errors"] = errors
    complete = (metrics["n_scored"] == metrics["n_questions"] and errors == 0
                and (full_correct is None or job.reference_complete))
    store.write_json("metrics.json", metrics)
    status = "complete" if complete else "incomplete"
    store.write_json("run.json", _provenance(cfg, selection, status, started, case_set_hash=case_set_hash,
                                                 resumed=resumed, n_errors=errors))
    total = metrics["model_calls"].get("total", {})
    if total.get("requests"):
        log.info("model calls: %d made, %d cache hits; tokens in %d (cached %d), out %d",
                 total["calls"], total["cache_hits"], total["input_tokens"], total["cached_tokens"],
                 total["output_tokens"])
    for endpoint, row in metrics.get("concurrency", {}).items():
        if row["mode"] == "auto":
            log.info("concurrency at %s: limit %d -> %d (min %d, max %d); %d x 429, %d overloaded, %d timeouts",
                     endpoint, row["start"], row["final"], row["min"], row["max"], row["n_429"],
                     row["n_overloaded"], row["n_timeouts"])
    if not complete:
        log.warning("job incomplete: %d of %d questions scored, %d answer error(s); rerun with resume=%s",
                    metrics["n_scored"], metrics["n_questions"], errors, out)
    metrics["job_dir"] = str(out)
    return metrics


def _workers(model: Any) -> int:
    """Worker threads: ``model.max_concurrency``, the cap for ``auto``, 1 without a limit (offline)."""
    value = model.get("max_concurrency")
    if value is None:
        return 1
    try:
        return worker_count(value, model.get("max_concurrency_cap", DEFAULT_CAP))
    except ValueError as err:
        raise ModelSetupError(str(err)) from None


def _read_tolerant(path: Path) -> list[dict[str, Any]]:
    return read_jsonl(path, keys=())


def _error_answer(case: Case, question: Question, error: str, outcome: str = "error") -> Answer:
    return Answer(case_id=case.case_id, qid=question.qid, type=question.type, answer="", usage={},
                  outcome=outcome, error=error)


class _Job:
    """Runs work on worker threads; the calling thread writes records and calls the tracer.

    The unit of work is one model-facing step: a case's view is built once by one task;
    then each pending question of the case is answered by a task of its own (sharing that
    view), and each answer is judged by a further task. So ``workers`` calls are in flight
    whatever the number of questions per case, and an LLM judge's calls fill the slots
    answers leave free instead of queueing behind their own question.
    """

    def __init__(self, store: JobStore, answerer, judge, tracer, workers: int,
                 limiters: list[tuple[Any, list[str]]] = ()) -> None:
        self.store, self.answerer, self.judge, self.tracer, self.workers = store, answerer, judge, tracer, workers
        self.adaptive = [limiter for limiter, _ in limiters if limiter.mode == "auto"]
        self.reference_complete = True

    # ---- generic machinery
    def _execute(self, first: list[Callable], handle, desc: str, total: int) -> None:
        """Run each ``task(emit, stop)`` on the workers; ``handle(event, submit)`` in this thread.

        ``first`` are the view tasks. ``handle`` may ``submit`` more tasks (a case's
        questions once its view exists) and returns True when the event completes a
        question (the progress bar moves). A task that raises (a bug, a simulated kill)
        stops the job: nothing new starts, the error is raised here.
        """
        if not first:
            return
        events: queue.SimpleQueue = queue.SimpleQueue()
        stop = threading.Event()
        bar = tqdm(total=total, desc=desc, unit="q", dynamic_ncols=True, mininterval=0.5, disable=total == 0)

        def wrapped(task: Callable) -> None:
            try:
                if not stop.is_set():
                    task(events.put, stop)
            except BaseException as err:  # noqa: BLE001 - a bug or a simulated kill: stop the job now
                stop.set()
                events.put(("fatal", err))
            finally:
                events.put(("done",))

        pool = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="bench-task")
        submitted = 0

        def submit(task: Callable) -> None:
            nonlocal submitted
            submitted += 1
            pool.submit(contextvars.copy_context().run, wrapped, task)

        try:
            for task in first:
                submit(task)
            finished = 0
            while finished < submitted:
                event = events.get()
                if event[0] == "done":
                    finished += 1
                    continue
                if event[0] == "fatal":
                    raise event[1]
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

    @staticmethod
    def _view_gate(policy) -> Any:
        """Views that are pure CPU are built one at a time: under the GIL, sixteen built in
        lockstep would all finish (and release their questions) only at the end."""
        return threading.Lock() if not getattr(policy, "calls_model", True) else contextlib.nullcontext()

    def _answer(self, case: Case, view, question: Question) -> Answer:
        try:
            return self.answerer.answer(case, view, question)
        except Exception as err:  # noqa: BLE001 - recorded, the job goes on
            log.warning("case %s, %s: answer failed: %s", case.case_id, question.qid, err)
            return _error_answer(case, question, f"{type(err).__name__}: {err}")

    # ---- the arm
    def run_arm(self, cases: list[Case], policy, arm: str) -> None:
        store = self.store
        answers = _prune(store, "answers", lambda r: r.get("outcome", "answered") != "error")
        scores = _prune(store, "scores", lambda r: (r["case_id"], r["qid"]) in answers)
        viewed = {v["case_id"] for v in store.read("views")}
        # a view refused as too long for the summarizer has no record: it is not built again for nothing
        no_view = {a["case_id"] for a in answers.values() if str(a.get("error") or "").startswith("view failed")}
        work = [c for c in cases if (c.case_id not in viewed and c.case_id not in no_view)
                or any((c.case_id, q.qid) not in scores for q in c.questions)]
        total = sum(1 for c in work for q in c.questions if (c.case_id, q.qid) not in scores)

        gate = self._view_gate(policy)

        def view_task(case: Case) -> Callable:
            def task(emit, stop: threading.Event) -> None:
                with call_tags(case_id=case.case_id, arm=arm, phase="arm"):
                    try:
                        with gate:
                            view = policy(case)
                    except Exception as err:  # noqa: BLE001 - the case's questions are recorded as failed
                        log.warning("case %s: view failed: %s", case.case_id, err)
                        # a summary longer than the summarizer's context is an outcome, not an error to retry
                        outcome = "context_overflow" if isinstance(err, ContextOverflow) else "error"
                        emit(("view", case, None, (f"view failed: {type(err).__name__}: {err}", outcome)))
                        return
                emit(("view", case, view, None))
            return task

        def record_task(case: Case, view) -> Callable:
            def task(emit, stop: threading.Event) -> None:  # after the case's questions are queued
                record = view.to_dict()
                record["evidence"] = evidence_flags(case, view)
                emit(("view_record", case, JobStore.encode(record)))
            return task

        def answer_task(case: Case, view, question: Question, view_error: tuple[str, str] | None) -> Callable:
            def task(emit, stop: threading.Event) -> None:
                with call_tags(case_id=case.case_id, arm=arm, phase="arm", qid=question.qid):
                    if view is None:
                        answer = _error_answer(case, question, *(view_error or ("view failed",)))
                    else:
                        answer = self._answer(case, view, question)
                emit(("answer", case, question, answer, True, view is not None))
            return task

        def judge_task(case: Case, question: Question, answer: Answer, traced: bool) -> Callable:
            def task(emit, stop: threading.Event) -> None:
                with call_tags(case_id=case.case_id, arm=arm, phase="arm", qid=question.qid):
                    try:
                        score = self.judge.score(question, answer, case.repo_root)
                    except Exception as err:  # noqa: BLE001 - the score stays missing; resume retries
                        log.warning("case %s, %s: judge failed: %s", case.case_id, question.qid, err)
                        emit(("judge_failed", case, question, err))
                        return
                emit(("score", case, question, score, traced))
            return task

        def answered(case: Case, question: Question, answer: Answer, fresh: bool, traced: bool, submit) -> None:
            if fresh:
                store.append("answers", answer)
            if traced:
                self.tracer.answer_recorded(case, question, answer)
            submit(judge_task(case, question, answer, traced))

        def handle(event, submit) -> bool:
            kind = event[0]
            if kind == "view_record":
                _, case, line = event
                if case.case_id not in viewed:
                    store.append_line("views", line)
                    viewed.add(case.case_id)
                return False
            if kind == "view":
                _, case, view, view_error = event
                if view is not None:
                    self.tracer.case_started(case, view)
                for question in case.questions:
                    key = (case.case_id, question.qid)
                    if key in scores:
                        continue
                    if key in answers:  # answered before an interruption: only the score is missing
                        answered(case, question, Answer(**answers[key]), False, view is not None, submit)
                    else:
                        submit(answer_task(case, view, question, view_error))
                if view is not None and case.case_id not in viewed:
                    submit(record_task(case, view))
                return False
            if kind == "answer":
                _, case, question, answer, fresh, traced = event
                answered(case, question, answer, fresh, traced, submit)
                return False
            if kind == "score":
                _, case, question, score, traced = event
                store.append("scores", score)
                if traced:
                    self.tracer.score_recorded(case, question, score)
                return True
            return kind == "judge_failed"

        self._execute([view_task(c) for c in work], handle, f"{arm}: answer+judge", total)

    # ---- the full-history reference of a non-full arm
    def run_reference(self, cases: list[Case], full: FullHistory) -> set[str]:
        """qids the full arm answers correctly (same model and judge), kept in reference_scores.jsonl."""
        store = self.store
        done = _prune(store, "reference_scores", lambda r: r.get("outcome", "answered") != "error")
        work = [c for c in cases if any((c.case_id, q.qid) not in done for q in c.questions)]
        total = sum(1 for c in work for q in c.questions if (c.case_id, q.qid) not in done)
        missing: list[str] = []

        gate = self._view_gate(full)

        def view_task(case: Case) -> Callable:
            def task(emit, stop: threading.Event) -> None:
                with call_tags(case_id=case.case_id, arm="full", phase="reference"):
                    with gate:
                        view = full(case)
                    emit(("view", case, view))
            return task

        def answer_task(case: Case, view, question: Question) -> Callable:
            def task(emit, stop: threading.Event) -> None:
                with call_tags(case_id=case.case_id, arm="full", phase="reference", qid=question.qid):
                    emit(("answer", case, question, self._answer(case, view, question)))
            return task

        def judge_task(case: Case, question: Question, answer: Answer) -> Callable:
            def task(emit, stop: threading.Event) -> None:
                with call_tags(case_id=case.case_id, arm="full", phase="reference", qid=question.qid):
                    try:
                        score = self.judge.score(question, answer, case.repo_root)
                    except Exception as err:  # noqa: BLE001
                        log.warning("reference %s, %s: judge failed: %s", case.case_id, question.qid, err)
                        emit(("judge_failed", case, question, err))
                        return
                emit(("score", case, question, score, answer.outcome))
            return task

        def handle(event, submit) -> bool:
            if event[0] == "view":
                _, case, view = event
                for question in case.questions:
                    if (case.case_id, question.qid) not in done:
                        submit(answer_task(case, view, question))
                return False
            if event[0] == "answer":
                _, case, question, answer = event
                submit(judge_task(case, question, answer))
                return False
            if event[0] == "judge_failed":
                missing.append(event[2].qid)
                return True
            _, case, question, score, outcome = event
            record = {**asdict(score), "outcome": outcome}
            store.append("reference_scores", record)
            done[(case.case_id, question.qid)] = record
            if outcome == "error":
                missing.append(question.qid)
            return True

        self._execute([view_task(c) for c in work], handle, "full reference", total)
        self.reference_complete = not missing
        return {qid for (_, qid), r in done.items() if r["verdict"] == "correct"}
