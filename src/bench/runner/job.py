"""One job: load cases, build views with the arm, answer, judge, write records, metrics.

``run(cfg)`` is what ``python -m bench.main`` calls and what tests call directly; it
returns the metrics dict.

Order of work:

1. Build the answering model, the judge and the arm (with its summarizer) and run their
   fail-fast checks (missing key, unreachable endpoint) before any case work.
2. Read the cases once, case by case, into ``cases.jsonl`` (:mod:`bench.runner.caseset`: the job
   keeps an index, not the histories, so memory stays flat as the case set grows); write
   ``rejected.jsonl`` and ``run.json`` (``incomplete``).
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
life (:mod:`bench.store.jobdir`), so a second job or a ``resume=`` of a running job is refused.

Resume (``resume=DIR``): finished answers and scores are kept, answers with
``outcome=error`` are dropped and retried, answers without a score are judged, nothing is
duplicated; damaged lines are moved to ``<file>.bad`` and their questions asked again. A
resumed job must use the same config as the job in DIR (operational keys such as
concurrency, timeouts and the cache may change).

Failures: a case whose view or answer keeps failing is recorded (``outcome=error`` with
the error, verdict ``unscored``) and the job goes on; a request refused as longer than the
context (an answer's, or the summary a view needs) is recorded as ``context_overflow`` (not
retried); a judge call that keeps
failing records that score ``unscored`` with the judge named and its error (the job stays
``incomplete`` and resume judges it again); a panel member that fails abstains (the others decide).
"""

from __future__ import annotations

import contextlib
import gc
import logging
import time
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

from bench.config.arms import build_policy
from bench.config.checks import dataset_source, generalize_types
from bench.config.job_cases import job_case_stream
from bench.core.components import calls_model, clients_of, preflight
from bench.core.errors import DatasetError
from bench.llm import call_sink, summarize_calls
from bench.llm.limiter import concurrency_metrics, find_limiters
from bench.policies import FullHistory, PolicyContext, declare
from bench.runner.caseset import CaseSet
from bench.runner.costing import job_estimate
from bench.runner.pipeline import Phase, Pipeline
from bench.runner.provenance import now, provenance
from bench.runner.resume import ResumeError, check_resume
from bench.runner.setup import build, surfaced, worker_threads
from bench.scoring.metric_records import SCORE_OMITTED, VIEW_OMITTED
from bench.scoring.metrics import compute_metrics
from bench.store.jobdir import JobDirError, JobLock, check_new, check_resume_path
from bench.store.records import JobStore, iter_jsonl
from bench.text.tokens import TokenCounter
from bench.tracing import TraceOptions, build_tracer

__all__ = ["run", "job_dir"]

log = logging.getLogger(__name__)


def job_dir(cfg: DictConfig) -> Path:
    """Where this job writes: ``resume``, else ``output_dir``, else Hydra's job directory."""
    if cfg.get("resume"):
        return Path(cfg.resume)
    if cfg.get("output_dir"):
        return Path(cfg.output_dir)
    from hydra.core.hydra_config import HydraConfig

    return Path(HydraConfig.get().runtime.output_dir)


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
    store = JobStore(out)  # creates the directory
    with JobLock(out):
        if not resuming:
            check_new(out)  # again under the lock: another job may have started in it meanwhile
        return _run(cfg, store, resuming)


def _run(cfg: DictConfig, store: JobStore, resuming: bool) -> dict[str, Any]:
    out = store.dir
    started = now()
    counter = TokenCounter(cfg.tokenizer.encoding)

    # 1. models and arm first: fail fast before any case work
    answerer = build(cfg.model, "model")
    judge = build(cfg.judge, "judge")
    policy = surfaced(build_policy, cfg, counter,
                       groups={"arm": cfg.arm, "summarizer": cfg.get("summarizer"), "mechanism": cfg.get("mechanism")})
    preflight(answerer, judge, policy)
    for client in clients_of(answerer, judge, policy):  # batch mode: the job's batches are kept with it
        batch = getattr(client, "batch", None)
        if batch is not None:
            batch.ledger = store.path("batches")
    declaration = declare(policy).to_dict()  # what the arm depends on and is (run.json "policy")
    limiters = find_limiters(answerer, judge, policy)
    previous = store.read_json("run.json") if resuming else None
    if resuming:
        check_resume(cfg, out, previous)
    else:
        # run.json before the cases are read: a job killed while it reads them (kill -9, a lost machine) is
        # a job that resume= continues (and reads its cases again), not a directory nothing accepts
        store.write_json("run.json", {"status": "incomplete", "started": started, "ended": None,
                                      "policy": declaration, "case_set_hash": None, "arm": cfg.arm.get("name"),
                                      "seed": cfg.get("seed"), "config": OmegaConf.to_container(cfg, resolve=True)})

    # 2. cases: read once, written to cases.jsonl as they come; the job keeps an index, not the histories
    if resuming:
        store.quarantine()  # damaged lines -> <file>.bad; their questions are asked again
    try:
        cases = CaseSet.write(job_case_stream(cfg, counter), store.path("cases"))
    except BaseException:
        if not resuming:  # the cases could not be read (an error, not a kill): no job was started here
            store.path("run.json").unlink(missing_ok=True)
        raise
    try:
        if previous is not None and previous.get("case_set_hash") not in (None, cases.case_set_hash):
            raise ResumeError(f"resume={out}: the dataset selection differs from the job's "
                              f"(case-set hash {previous.get('case_set_hash')} -> {cases.case_set_hash})")
        if not resuming and not any(entry.qids for entry in cases.entries):
            raise DatasetError(no_question(cases))
        cases.commit()
    except BaseException:
        cases.discard()
        if not resuming:  # refused (no question) or not committed: no job was started here either
            store.path("run.json").unlink(missing_ok=True)
        raise
    with contextlib.closing(cases):
        return _run_cases(cfg, store, cases, previous, resuming, started, counter, answerer, judge, policy,
                          declaration, limiters)


def _run_cases(cfg: DictConfig, store: JobStore, cases: CaseSet, previous: dict[str, Any] | None, resuming: bool,
               started: str, counter: TokenCounter, answerer: Any, judge: Any, policy: Any,
               declaration: dict[str, Any], limiters: list[Any]) -> dict[str, Any]:
    out = store.dir
    case_set_hash = cases.case_set_hash
    if previous:
        started = previous.get("started") or started
    resumed = list((previous or {}).get("resumed") or []) + ([now()] if resuming else [])
    if not cases.n_cases:
        log.warning("no case to run: %d rows read, %d rejected (see %s)", cases.rows_read,
                    len(cases.rejected), store.path("rejected"))
    case_questions = cases.metric_cases  # what the metrics read of the cases
    store.write_all("rejected", cases.rejected)
    store.write_json("run.json", provenance(cfg, cases, "incomplete", started, case_set_hash=case_set_hash,
                                                 policy=declaration,
                                                 resumed=resumed))

    tracer = build_tracer(trace_options(cfg), out)
    tracer.start_job(out.name, cases)
    workers = worker_threads(cfg.model)
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
            pipeline = Pipeline(store, answerer, judge, tracer, workers, limiters)
            pipeline.run_phase(cases, policy, Phase.of_arm(arm))
            full_correct = None
            if declaration["role"] != "reference":  # the reference scores itself
                full = FullHistory(context=PolicyContext(counter=counter))
                full_correct = pipeline.run_phase(cases, full, Phase.reference())
    finally:
        gc.unfreeze()
    log.info("answered and scored %d cases in %.2fs", cases.n_cases, time.perf_counter() - t0)
    missing = tracer.missing_traces([e.case_id for e in cases.entries])
    if missing:
        log.warning("%d case(s) have no trace: %s", len(missing), missing)
    tracer.flush()

    # 5. metrics and status
    views = store.read("views", omit=VIEW_OMITTED)  # the views' figures and flags, not their messages
    # the answers read once as they stream by, the scores without the judge's prompt and reply
    metrics = compute_metrics(case_questions, views, store.iter("answers"), store.read("scores", omit=SCORE_OMITTED),
                              full_correct, declaration,  # declaration: lower_bound
                              generalize_types=generalize_types(cfg))
    metrics["missing_traces"] = missing
    metrics["model_calls"] = summarize_calls(iter_jsonl(store.path("calls"), keys=()))
    # what the job's calls cost at the price tables (model.price ...): null when a call is unpriced
    metrics["cost_usd"] = metrics["model_calls"].get("total", {}).get("cost_usd")
    metrics["spent_cost_usd"] = metrics["model_calls"].get("total", {}).get("spent_cost_usd")
    if calls_model(answerer) or calls_model(judge):  # what bench.estimate would have said, beside the actual
        metrics["estimate"] = job_estimate(
            cases, views, counter, _prices(answerer, judge, policy),
            warm=bool(getattr(answerer, "warm_prefix", False)), judged=len(clients_of(judge)),
            reference=full_correct is not None, summarized=calls_model(policy))["total"]
    del views
    if limiters:  # model clients (an offline job has none: nothing to record)
        metrics["concurrency"] = concurrency_metrics(limiters)
    errors = metrics["outcomes"].get("error", 0)
    metrics["n_errors"] = errors
    # a judge (or panel member) that failed: named with its error, so no message blames the answers
    metrics["n_judge_errors"] = len(pipeline.judge_errors)
    metrics["judge_error"] = pipeline.judge_errors[0] if pipeline.judge_errors else None
    nothing_scored = bool(metrics["n_cases"]) and metrics["accuracy"] is None  # no answer got a verdict
    complete = (metrics["n_scored"] == metrics["n_questions"] and errors == 0 and not nothing_scored
                and not pipeline.judge_errors and all(pipeline.complete.values()))
    store.write_json("metrics.json", metrics)
    status = "complete" if complete else "incomplete"
    store.write_json("run.json", provenance(cfg, cases, status, started, case_set_hash=case_set_hash,
                                                 policy=declaration,
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
    if pipeline.judge_errors:
        log.warning("the judge failed on %d question(s) (scores.jsonl; rerun with resume=%s): %s",
                    len(pipeline.judge_errors), out, pipeline.judge_errors[0])
    if nothing_scored:
        log.warning("job incomplete: no question was scored (%d answer error(s), %d judge error(s)); accuracy is null",
                    errors, len(pipeline.judge_errors))
    elif not complete:
        log.warning("job incomplete: %d of %d questions scored, %d answer error(s); rerun with resume=%s",
                    metrics["n_scored"], metrics["n_questions"], errors, out)
    metrics["job_dir"] = str(out)
    return metrics


def no_question(cases: CaseSet) -> str:
    """Why a job has no question to ask, in one line: what was read, rejected and dropped."""
    parts = [f"{cases.rows_read} row(s) read", f"{cases.n_cases} case(s) selected"]
    if cases.rejected:
        parts.append(f"{len(cases.rejected)} rejected (first: {cases.rejected[0].reason})")
    if cases.skipped:
        parts.append(f"skipped by filter: {cases.skipped}")
    if cases.dropped:
        top = sorted(cases.dropped.items(), key=lambda item: -item[1])[:3]
        parts.append("questions dropped: " + ", ".join(f"{k} x{n}" for k, n in top))
    elif cases.n_cases:
        parts.append("no tool call any question type asks about")
    return f"no question to ask: {'; '.join(parts)} (questions.types and the filters in conf/dataset/ decide what is asked)"


def trace_options(cfg: DictConfig) -> TraceOptions:
    """``tracing.*`` of the job config as the tracer's typed options."""
    tracing = cfg.get("tracing") or {}
    return TraceOptions(langfuse=bool(tracing.get("langfuse")), dataset=tracing.get("dataset"),
                        upload_dataset=bool(tracing.get("upload_dataset", True)),
                        timeout=float(tracing.get("timeout", 5) or 5),
                        dataset_label=dataset_source(cfg.dataset).label(), arm=cfg.arm.get("name"))


def _prices(answerer: Any, judge: Any, policy: Any) -> dict[str, Any]:
    """Each kind's price table, from the first model client of the part that makes those calls."""
    def first(part: Any) -> Any:
        return next((price for c in clients_of(part) if (price := getattr(c, "price", None)) is not None), None)

    # a judge panel: each LLM member's client makes a call per answer at its own price
    return {"answer": first(answerer), "reference": first(answerer),
            "judge": [getattr(c, "price", None) for c in clients_of(judge)], "summarizer": first(policy)}
