"""One job: load cases, build views with the arm, answer, judge, write records, metrics.

``run(cfg)`` is what ``python -m bench.main`` calls and what tests call directly; it
returns the metrics dict. Records are appended as they complete, so ``resume=DIR``
continues a killed job without losing or duplicating an answer.
"""

from __future__ import annotations

import logging
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from hydra.utils import instantiate
from omegaconf import DictConfig, OmegaConf

from bench.data import load_cases
from bench.evidence import evidence_flags
from bench.metrics import compute_metrics
from bench.policies import FullHistory, build_policy
from bench.provenance import git_state, package_versions, text_hash
from bench.schema import Answer, Case, Score
from bench.store import JobStore
from bench.tokens import TokenCounter
from bench.tracing import build_tracer

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


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _provenance(cfg: DictConfig, selection, status: str, started: str) -> dict[str, Any]:
    prompt_text = cfg.get("prompt", {}).get("text") if cfg.arm.get("name") == "compact" else None
    return {
        "status": status,
        "started": started,
        "ended": _now() if status == "complete" else None,
        "git": git_state(),
        "packages": package_versions(),
        "dataset": selection.source,
        "rows_read": selection.rows_read,
        "rows_skipped_by_filter": selection.skipped,
        "n_cases": len(selection.cases),
        "n_rejected": len(selection.rejected),
        "case_set_hash": selection.case_set_hash,
        "prompt_hash": text_hash(prompt_text),
        "arm": cfg.arm.get("name"),
        "seed": cfg.get("seed"),
        "config": OmegaConf.to_container(cfg, resolve=True),
    }


def run(cfg: DictConfig) -> dict[str, Any]:
    """Run one job end to end and return its metrics."""
    started = _now()
    out = job_dir(cfg)
    store = JobStore(out)
    counter = TokenCounter(cfg.tokenizer.encoding)
    selection = load_cases(cfg.dataset, counter)
    if not selection.cases:
        log.warning("no case to run: %d rows read, %d rejected (see %s)", selection.rows_read,
                    len(selection.rejected), store.path("rejected"))
    store.write_all("cases", (c.to_dict() for c in selection.cases))
    store.write_all("rejected", selection.rejected)
    store.write_json("run.json", _provenance(cfg, selection, "incomplete", started))

    policy = build_policy(cfg, counter)
    answerer = instantiate(cfg.model, _convert_="object")
    judge = instantiate(cfg.judge, _convert_="object")
    tracer = build_tracer(cfg)
    tracer.start_job(out.name, selection.cases)

    answered = store.keys("answers")
    scored = store.keys("scores")
    stored_answers = {(a["case_id"], a["qid"]): a for a in store.read("answers")}
    viewed = {v["case_id"] for v in store.read("views")}
    t0 = time.perf_counter()
    for case in selection.cases:
        _run_case(case, policy, answerer, judge, store, answered, scored, stored_answers, viewed, tracer)
    log.info("answered and scored %d cases in %.2fs", len(selection.cases), time.perf_counter() - t0)

    full_correct = None
    if cfg.arm.get("name") != "full":
        full_correct = _full_reference(selection.cases, FullHistory(counter=counter), answerer, judge, store)
    missing = tracer.missing_traces([c.case_id for c in selection.cases])
    if missing:
        log.warning("%d case(s) have no trace: %s", len(missing), missing)
    tracer.flush()

    metrics = compute_metrics(
        [c.to_dict() for c in selection.cases], store.read("views"), store.read("answers"),
        store.read("scores"), full_correct,
    )
    metrics["missing_traces"] = missing
    store.write_json("metrics.json", metrics)
    complete = metrics["n_scored"] == metrics["n_questions"]
    store.write_json("run.json", _provenance(cfg, selection, "complete" if complete else "incomplete", started))
    metrics["job_dir"] = str(out)
    return metrics


def _full_reference(cases: list[Case], full: FullHistory, answerer, judge, store: JobStore) -> set[str]:
    """qids the full arm answers correctly (same model and judge), kept in reference_scores.jsonl."""
    done = {r["qid"]: r for r in store.read("reference_scores.jsonl")}
    for case in cases:
        pending = [q for q in case.questions if q.qid not in done]
        if not pending:
            continue
        view = full(case)
        for question in pending:
            score = judge.score(question, answerer.answer(case, view, question), case.repo_root)
            store.append("reference_scores.jsonl", score)
            done[question.qid] = {"verdict": score.verdict}
    return {qid for qid, r in done.items() if r["verdict"] == "correct"}


def _run_case(case: Case, policy, answerer, judge, store: JobStore, answered, scored, stored_answers, viewed,
              tracer) -> None:
    pending = [q for q in case.questions if (case.case_id, q.qid) not in scored]
    if not pending and case.case_id in viewed:
        return
    view = policy(case)
    tracer.case_started(case, view)
    if case.case_id not in viewed:
        record = view.to_dict()
        record["evidence"] = evidence_flags(case, view)
        store.append("views", record)
    for question in pending:
        key = (case.case_id, question.qid)
        if key in answered:
            answer = Answer(**stored_answers[key])
        else:
            answer = answerer.answer(case, view, question)
            store.append("answers", answer)
        tracer.answer_recorded(case, question, answer)
        score: Score = judge.score(question, answer, case.repo_root)
        store.append("scores", score)
        tracer.score_recorded(case, question, score)
