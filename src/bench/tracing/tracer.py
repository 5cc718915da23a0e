"""Tracing a job into Langfuse (``LangfuseTracer``), through the SDK's public API.

The runner calls, per job::

    tracer = build_tracer(cfg)
    tracer.start_job(job_name, cases)
    tracer.case_started(case, view)                  # per case
    tracer.answer_recorded(case, question, answer)   # per question
    tracer.score_recorded(case, question, score)     # per question
    missing = tracer.missing_traces(case_ids)        # cases whose trace did not reach Langfuse
    tracer.flush()

Langfuse is on when ``tracing.langfuse=true`` and ``LANGFUSE_PUBLIC_KEY``,
``LANGFUSE_SECRET_KEY`` and ``LANGFUSE_BASE_URL`` (or ``LANGFUSE_HOST``) are set. Then:

- the job's cases and questions are (up)loaded as a Langfuse dataset, one item per case
  (``bench-<source>-<case-set hash>`` unless ``tracing.dataset`` names it; same cases, same
  name and item ids, so ``python -m bench.dataset --upload`` and the jobs agree);
- the job is one dataset run (experiment) named after the job directory;
- each case is one trace (name ``case <case_id>``, metadata ``case_id``) holding one
  generation per question (question, answer, usage) and the judge's scores: one numeric
  score per question type (1 correct, 0 not; the verdict and reason as comment), a
  categorical ``verdict`` on the answer, and the case's ``accuracy``;
- spans go out over OTLP/HTTP to ``{base_url}/api/public/otel/v1/traces`` through an
  exporter that records which traces were delivered: ``missing_traces`` lists the cases
  whose trace was not (kept in the job's ``traces.jsonl``, so a resumed job knows);
- Langfuse being slow, down or refusing the keys never stops a job: it is logged once,
  the job goes on untraced and its cases are reported as missing traces.

No key or secret is written to any output; the keys are read from the environment only.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from collections.abc import Collection
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from bench.tracing.langfuse_datasets import dataset_item_id, dataset_name, is_transport, upload_dataset
from bench.tracing.settings import LangfuseSettings, TraceOptions, langfuse_client

__all__ = ["LangfuseTracer"]

log = logging.getLogger(__name__)


def _status(err: BaseException) -> int | None:
    return getattr(err, "status_code", None)


def _text(value: Any, limit: int = 200) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return text if len(text) <= limit else text[: limit - 3] + "..."


class LangfuseTracer:
    """Traces a job into Langfuse (see the module docstring); never raises into the job."""

    name = "langfuse"

    def __init__(self, settings: LangfuseSettings, options: TraceOptions | None = None,
                 job_dir: Path | str | None = None) -> None:
        options = options or TraceOptions()
        self.settings = settings
        self.timeout = options.timeout
        self.dataset_override = options.dataset
        self.upload = options.upload_dataset
        self.dataset_label = options.dataset_label
        self.arm = options.arm
        self.job_dir = Path(job_dir) if job_dir else None
        self.client, self.recorder = langfuse_client(settings, self.timeout)
        self.off = False  # Langfuse unreachable or refusing: no more calls this job
        self.run_name = ""
        self.dataset: dict[str, Any] | None = None
        self.experiment_id: str | None = None
        self._open: dict[str, dict[str, Any]] = {}
        self._roots: dict[str, str] = {}  # case_id -> root span id
        self._confirmed: set[str] = set()  # case ids with a delivered trace (this or an earlier run)
        self._lock = threading.Lock()
        self._warned: set[str] = set()

    # -- helpers

    def _warn(self, what: str, err: BaseException | str) -> None:
        key = what
        if key not in self._warned:
            self._warned.add(key)
            log.warning("Langfuse %s failed (%s): the job goes on; its traces may be missing",
                        what, err if isinstance(err, str) else f"{type(err).__name__}: {err}")
        else:
            log.debug("Langfuse %s failed again: %s", what, err)

    def _run_name(self, job_name: str) -> str:
        if self.job_dir is not None:
            try:
                return str(self.job_dir.resolve().relative_to(Path.cwd().resolve()))
            except ValueError:
                pass
        return job_name

    def trace_id(self, case_id: str) -> str:
        from langfuse import Langfuse

        return Langfuse.create_trace_id(seed=f"{self.run_name}\n{case_id}")

    def _traces_file(self) -> Path | None:
        return self.job_dir / "traces.jsonl" if self.job_dir else None

    def _experiment_attributes(self, case_id: str, root_id: str | None) -> dict[str, str]:
        from langfuse import LangfuseOtelSpanAttributes as A

        attributes = {A.EXPERIMENT_NAME: self.run_name, A.ENVIRONMENT: "sdk-experiment"}
        if self.experiment_id:
            attributes[A.EXPERIMENT_ID] = self.experiment_id
        if self.dataset:
            attributes[A.EXPERIMENT_DATASET_ID] = self.dataset["id"]
            attributes[A.EXPERIMENT_ITEM_ID] = self.dataset["items"].get(case_id) or dataset_item_id(
                self.dataset["name"], case_id)
        else:
            attributes[A.EXPERIMENT_ITEM_ID] = hashlib.sha256(case_id.encode()).hexdigest()[:16]
        if root_id:
            attributes[A.EXPERIMENT_ITEM_ROOT_OBSERVATION_ID] = root_id
        return attributes

    def _link(self, case_id: str, root_id: str | None) -> None:
        """Mark the current span as an item of this job's dataset run (OpenTelemetry's public API:
        the span an SDK context manager made current)."""
        from opentelemetry import trace

        trace.get_current_span().set_attributes(self._experiment_attributes(case_id, root_id))

    def _propagate(self, case_id: str) -> AbstractContextManager[Any]:
        from langfuse import propagate_attributes

        return propagate_attributes(trace_name=f"case {case_id}", tags=[f"arm:{self.arm}"] if self.arm else None,
                                    metadata={"case_id": case_id, "job": _text(self.run_name)})

    # -- hooks

    def start_job(self, job_name: str, cases: Collection[Any]) -> None:
        self.run_name = self._run_name(job_name)
        path = self._traces_file()
        if path and path.exists():
            from bench.store.records import read_jsonl

            self._confirmed = {r["case_id"] for r in read_jsonl(path)
                               if r.get("run") == self.run_name and r.get("delivered")}
        project_id = None
        try:
            projects = self.client.api.projects.get(request_options={"max_retries": 1})
            project_id = projects.data[0].id if projects.data else None
        except Exception as err:  # noqa: BLE001
            if is_transport(err) or _status(err) in (401, 403):
                self.off = True
                self._warn("connection" if is_transport(err) else "authentication", err)
                return
            log.debug("no Langfuse project id: %s", err)
        name = dataset_name(self.dataset_label, cases, self.dataset_override)
        try:
            if self.upload:
                self.dataset = upload_dataset(self.client, name, cases)
            else:
                found = self.client.api.datasets.get(dataset_name=name, request_options={"max_retries": 1})
                self.dataset = {"id": found.id, "name": name, "items": {}}
        except Exception as err:  # noqa: BLE001
            if is_transport(err):
                self.off = True
                self._warn("connection", err)
                return
            self._warn(f"dataset {name!r}", err)
        dataset_id = self.dataset["id"] if self.dataset else None
        if project_id and dataset_id:  # the server's stable experiment id for (dataset, run name)
            payload = json.dumps(["langfuse-experiment-v1", project_id, dataset_id, self.run_name],
                                 separators=(",", ":"), ensure_ascii=False)
            self.experiment_id = hashlib.sha256(payload.encode()).hexdigest()[:16]
        else:
            self.experiment_id = hashlib.sha256(f"{dataset_id}\n{self.run_name}".encode()).hexdigest()[:16]
        log.info("Langfuse: dataset %s, run %s", name if self.dataset else "(none)", self.run_name)

    def case_started(self, case: Any, view: Any) -> None:
        if self.off:
            return
        try:
            case_id = case.case_id
            questions = [{"qid": q.qid, "type": q.type, "question": q.question} for q in case.questions]
            with self._propagate(case_id), self.client.start_as_current_observation(
                    trace_context={"trace_id": self.trace_id(case_id)}, name=f"case {case_id}", as_type="span",
                    input={"case_id": case_id, "instance_id": case.instance_id, "repo": case.repo,
                           "questions": questions},
                    metadata={"case_id": case_id, "arm": getattr(view, "arm", self.arm),
                              "kept_messages": getattr(view, "kept_messages", None),
                              "kept_tokens": getattr(view, "kept_tokens", None),
                              "full_tokens": getattr(view, "full_tokens", None),
                              "summarizer_calls": getattr(view, "summarizer_calls", None),
                              "handles": len(getattr(view, "store", {}) or {})},
                    end_on_exit=False) as root:  # ended when the case's last score is in
                self._link(case_id, root.id)
            with self._lock:
                old = self._open.pop(case_id, None)
                self._open[case_id] = {"span": root, "n": len(case.questions), "scores": {}, "answers": {},
                                       "answer_spans": {}}
                self._roots[case_id] = root.id
            if old:
                old["span"].end()
        except Exception as err:  # noqa: BLE001
            self._warn("trace", err)

    def answer_recorded(self, case: Any, question: Any, answer: Any) -> None:
        if self.off:
            return
        try:
            entry = self._open.get(case.case_id)
            if entry is None:
                return
            usage = {k: int(v) for k, v in (answer.usage or {}).items()
                     if k in ("input_tokens", "output_tokens", "total_tokens") and isinstance(v, (int, float))}
            trace_context = {"trace_id": self.trace_id(case.case_id), "parent_span_id": entry["span"].id}
            with self._propagate(case.case_id), self.client.start_as_current_observation(
                    trace_context=trace_context, name=f"answer {question.type}", as_type="generation",
                    model=str((answer.usage or {}).get("model") or "") or None,
                    input=question.question, output=answer.answer, usage_details=usage or None,
                    metadata={"qid": question.qid, "type": question.type, "outcome": answer.outcome,
                              "retrievals": list(answer.retrievals or []), "error": answer.error},
                    level="ERROR" if answer.outcome == "error" else None) as span:
                self._link(case.case_id, entry["span"].id)
            with self._lock:
                entry["answers"][question.qid] = {"answer": answer.answer, "outcome": answer.outcome}
                entry["answer_spans"][question.qid] = span.id
        except Exception as err:  # noqa: BLE001
            self._warn("trace", err)

    def score_recorded(self, case: Any, question: Any, score: Any) -> None:
        if self.off:
            return
        try:
            entry = self._open.get(case.case_id)
            trace_id = self.trace_id(case.case_id)
            comment = f"{score.verdict}: {score.reason}"
            meta = {"qid": question.qid, "verdict": score.verdict, "judge": score.judge, "case_id": case.case_id}
            self.client.create_score(trace_id=trace_id, name=question.type,
                                     value=1.0 if score.verdict == "correct" else 0.0, data_type="NUMERIC",
                                     comment=comment, metadata=meta)
            observation = entry["answer_spans"].get(question.qid) if entry else None
            self.client.create_score(trace_id=trace_id, observation_id=observation, name="verdict",
                                     value=score.verdict, data_type="CATEGORICAL", comment=score.reason,
                                     metadata=meta)
            if entry is None:
                return
            with self._lock:
                entry["scores"][question.qid] = score.verdict
                done = len(entry["scores"]) >= entry["n"]
            if done:
                self._close(case.case_id)
        except Exception as err:  # noqa: BLE001
            self._warn("score", err)

    def _close(self, case_id: str) -> None:
        with self._lock:
            entry = self._open.pop(case_id, None)
        if entry is None:
            return
        try:
            verdicts = entry["scores"]
            output = {qid: {**entry["answers"].get(qid, {}), "verdict": verdicts.get(qid)}
                      for qid in {*entry["answers"], *verdicts}}
            entry["span"].update(output=output)
            if verdicts:
                correct = sum(v == "correct" for v in verdicts.values())
                self.client.create_score(trace_id=self.trace_id(case_id), name="accuracy",
                                         value=correct / len(verdicts), data_type="NUMERIC",
                                         comment=f"{correct} of {len(verdicts)} questions correct",
                                         metadata={"case_id": case_id})
        finally:
            entry["span"].end()

    def _close_all(self) -> None:
        for case_id in list(self._open):
            try:
                self._close(case_id)
            except Exception as err:  # noqa: BLE001
                self._warn("trace", err)

    def callbacks(self, case_id: str) -> list[Any]:
        """LangChain callbacks for the model calls of a case's work: Langfuse's own handler, so the
        agent's steps, its tool calls, the judge's and the summarizer's calls are nested spans of
        the case's trace (under its root span once the case has one)."""
        if self.off:
            return []
        try:
            from langfuse.langchain import CallbackHandler
            from langfuse.types import TraceContext

            context: TraceContext = {"trace_id": self.trace_id(case_id)}
            root = self._roots.get(case_id)
            if root:
                context["parent_span_id"] = root
            return [CallbackHandler(public_key=self.settings.public_key, trace_context=context)]
        except Exception as err:  # noqa: BLE001 - tracing never stops a job
            self._warn("trace", err)
            return []

    def missing_traces(self, case_ids: list[str]) -> list[str]:
        """Cases whose trace (root span) Langfuse has not acknowledged, after a flush."""
        if not self.off:
            self._close_all()
            try:
                self.client.flush()
            except Exception as err:  # noqa: BLE001
                self._warn("flush", err)
        delivered = self.recorder.delivered
        new = [cid for cid, root in self._roots.items() if root in delivered and cid not in self._confirmed]
        self._confirmed.update(new)
        path = self._traces_file()
        if new and path is not None:
            try:
                with path.open("a", encoding="utf-8") as handle:
                    for cid in new:
                        handle.write(json.dumps({"case_id": cid, "trace_id": self.trace_id(cid),
                                                 "root_span_id": self._roots[cid], "run": self.run_name,
                                                 "delivered": True}) + "\n")
            except OSError as err:
                log.debug("cannot record traces in %s: %s", path, err)
        return [cid for cid in case_ids if cid not in self._confirmed]

    def flush(self) -> None:
        if self.off:
            return
        self._close_all()
        try:
            self.client.flush()
        except Exception as err:  # noqa: BLE001
            self._warn("flush", err)
