"""Tracing hooks of a job: local (``NullTracer``) or Langfuse (``LangfuseTracer``).

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

import base64
import hashlib
import json
import logging
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "NullTracer", "LangfuseTracer", "build_tracer", "langfuse_settings", "LangfuseSettings",
    "langfuse_client", "dataset_name", "dataset_item_id", "upload_dataset",
]

from bench.schema import case_set_hash

log = logging.getLogger(__name__)


class NullTracer:
    """Does nothing; every case counts as traced (traces stay local in the job files)."""

    name = "local"

    def start_job(self, job_name: str, cases: list[Any]) -> None: ...

    def case_started(self, case: Any, view: Any) -> None: ...

    def answer_recorded(self, case: Any, question: Any, answer: Any) -> None: ...

    def score_recorded(self, case: Any, question: Any, score: Any) -> None: ...

    def missing_traces(self, case_ids: list[str]) -> list[str]:
        return []

    def flush(self) -> None: ...


# ---------------------------------------------------------------- settings and client


@dataclass(frozen=True)
class LangfuseSettings:
    public_key: str
    secret_key: str
    base_url: str

    def __repr__(self) -> str:  # never print the secret
        return f"LangfuseSettings(public_key={self.public_key[:6]}..., base_url={self.base_url})"


def langfuse_settings(env: dict[str, str] | None = None) -> LangfuseSettings | None:
    """The Langfuse keys and URL from the environment, or None when one is missing."""
    env = os.environ if env is None else env
    public, secret = env.get("LANGFUSE_PUBLIC_KEY"), env.get("LANGFUSE_SECRET_KEY")
    base_url = env.get("LANGFUSE_BASE_URL") or env.get("LANGFUSE_HOST")
    if not (public and secret and base_url):
        return None
    from bench import redact

    redact.register(public)  # scrubbed from logs and error texts, with the Basic-auth form of the pair
    redact.register_basic_auth(public, secret)
    return LangfuseSettings(public, secret, base_url.rstrip("/"))


class _RecordingExporter:
    """The OTLP/HTTP span exporter Langfuse would build, noting the spans it delivered."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.delivered: set[str] = set()  # span ids (16 hex)
        self.failed = 0
        self._lock = threading.Lock()

    def export(self, spans):  # noqa: ANN001 - SpanExporter interface
        from opentelemetry.sdk.trace.export import SpanExportResult

        try:
            result = self.inner.export(spans)
        except Exception as err:  # noqa: BLE001 - an exporter must not raise
            log.debug("span export failed: %s", err)
            result = SpanExportResult.FAILURE
        with self._lock:
            if result == SpanExportResult.SUCCESS:
                self.delivered.update(format(s.context.span_id, "016x") for s in spans)
            else:
                self.failed += len(spans)
        return result

    def shutdown(self) -> None:
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        flush = getattr(self.inner, "force_flush", None)
        return flush(timeout_millis) if flush else True


def _otlp_exporter(settings: LangfuseSettings, timeout: float) -> Any:
    """Mirror of the SDK's default exporter (endpoint, basic auth, headers, gzip)."""
    from langfuse import __version__ as langfuse_version
    from opentelemetry.exporter.otlp.proto.http import Compression
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    auth = base64.b64encode(f"{settings.public_key}:{settings.secret_key}".encode()).decode("ascii")
    headers = {
        "Authorization": f"Basic {auth}",
        "x-langfuse-sdk-name": "python",
        "x-langfuse-sdk-version": langfuse_version,
        "x-langfuse-public-key": settings.public_key,
        "x-langfuse-ingestion-version": "4",
    }
    return OTLPSpanExporter(endpoint=f"{settings.base_url}/api/public/otel/v1/traces", headers=headers,
                            timeout=timeout, compression=Compression.Gzip)


_CLIENTS: dict[tuple[str, str], tuple[Any, _RecordingExporter]] = {}
_CLIENTS_LOCK = threading.Lock()


def langfuse_client(settings: LangfuseSettings, timeout: float = 5) -> tuple[Any, _RecordingExporter]:
    """One Langfuse client per (key, URL) and process (the SDK keeps one per key anyway)."""
    key = (settings.public_key, settings.base_url)
    with _CLIENTS_LOCK:
        if key not in _CLIENTS:
            from langfuse import Langfuse
            from opentelemetry.sdk.trace import TracerProvider

            logging.getLogger("langfuse").setLevel(logging.WARNING)  # its INFO lines name the key
            recorder = _RecordingExporter(_otlp_exporter(settings, timeout))
            client = Langfuse(public_key=settings.public_key, secret_key=settings.secret_key,
                              base_url=settings.base_url, timeout=int(max(1, timeout)),
                              span_exporter=recorder, tracer_provider=TracerProvider())
            resources = getattr(client, "_resources", None)
            if getattr(resources, "span_exporter", recorder) is not recorder:
                log.warning("a Langfuse client for this key existed before the benchmark's: "
                            "delivered traces cannot be confirmed, every case will be listed as missing")
            _CLIENTS[key] = (client, recorder)
        return _CLIENTS[key]


# ---------------------------------------------------------------- dataset


def dataset_name(dataset_cfg: Any, cases: list[Any], override: str | None = None) -> str:
    """``tracing.dataset`` or ``bench-<source>-<case-set hash>`` (same cases, same name)."""
    if override:
        return str(override)
    source = (dataset_cfg or {}).get("source", "data")
    if source == "local" and dataset_cfg.get("path"):
        label = Path(str(dataset_cfg.get("path"))).stem
    elif source == "hf":
        label = str(dataset_cfg.get("hf_name", "hf")).rsplit("/", 1)[-1]
    else:
        label = str(source)
    label = "".join(ch if ch.isalnum() or ch in "-_." else "-" for ch in label)
    return f"bench-{label}-{case_set_hash(cases)[:12]}"


def dataset_item_id(name: str, case_id: str) -> str:
    """Stable item id of a case in a dataset (Langfuse ids are global, hence the name)."""
    return hashlib.sha256(f"{name}\n{case_id}".encode()).hexdigest()[:32]


def _item(case: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    questions = case.get("questions") or []
    item_input = {
        "case_id": case["case_id"], "instance_id": case.get("instance_id"), "repo": case.get("repo"),
        "n_messages": len(case.get("messages") or []),
        "questions": [{"qid": q["qid"], "type": q["type"], "question": q["question"]} for q in questions],
    }
    expected = {q["qid"]: q.get("reference") for q in questions}
    metadata = {"case_id": case["case_id"], "source_row": case.get("source_row"),
                "trajectory_id": case.get("trajectory_id"), "resolved": case.get("resolved")}
    return item_input, expected, metadata


def upload_dataset(client: Any, name: str, cases: list[Any], description: str | None = None,
                   retries: int = 1) -> dict[str, Any]:
    """Create (or update) the dataset and upsert one item per case; returns ids."""
    options = {"max_retries": retries}
    try:
        dataset = client.api.datasets.create(
            name=name, description=description or "bench cases: one item per case, its recall questions",
            metadata={"n_cases": len(cases)}, request_options=options)
    except Exception as err:  # noqa: BLE001 - an existing dataset may refuse a create
        if _is_transport(err):
            raise
        dataset = client.api.datasets.get(dataset_name=name, request_options=options)
    items = {}
    for case in (c if isinstance(c, dict) else c.to_dict() for c in cases):
        item_input, expected, metadata = _item(case)
        item_id = dataset_item_id(name, case["case_id"])
        client.api.dataset_items.create(dataset_name=name, id=item_id, input=item_input,
                                        expected_output=expected, metadata=metadata, request_options=options)
        items[case["case_id"]] = item_id
    return {"id": dataset.id, "name": name, "items": items}


def _is_transport(err: BaseException) -> bool:
    import httpx

    return isinstance(err, (httpx.TransportError, TimeoutError, ConnectionError, OSError))


def _status(err: BaseException) -> int | None:
    return getattr(err, "status_code", None)


# ---------------------------------------------------------------- tracer


def _text(value: Any, limit: int = 200) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return text if len(text) <= limit else text[: limit - 3] + "..."


class LangfuseTracer:
    """Traces a job into Langfuse (see the module docstring); never raises into the job."""

    name = "langfuse"

    def __init__(self, settings: LangfuseSettings, tracing_cfg: Any = None, dataset_cfg: Any = None,
                 arm: str | None = None, job_dir: Path | str | None = None) -> None:
        tracing_cfg = tracing_cfg or {}
        self.settings = settings
        self.timeout = float(tracing_cfg.get("timeout", 5) or 5)
        self.dataset_override = tracing_cfg.get("dataset")
        self.upload = bool(tracing_cfg.get("upload_dataset", True))
        self.dataset_cfg = dataset_cfg or {}
        self.arm = arm
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

    def _link(self, span: Any, case_id: str, root_id: str | None) -> None:
        otel_span = getattr(span, "_otel_span", None)
        if otel_span is not None:
            otel_span.set_attributes(self._experiment_attributes(case_id, root_id))

    def _propagate(self, case_id: str):
        from langfuse import propagate_attributes

        return propagate_attributes(trace_name=f"case {case_id}", tags=[f"arm:{self.arm}"] if self.arm else None,
                                    metadata={"case_id": case_id, "job": _text(self.run_name)})

    # -- hooks

    def start_job(self, job_name: str, cases: list[Any]) -> None:
        self.run_name = self._run_name(job_name)
        path = self._traces_file()
        if path and path.exists():
            from bench.store import read_jsonl

            self._confirmed = {r["case_id"] for r in read_jsonl(path)
                               if r.get("run") == self.run_name and r.get("delivered")}
        project_id = None
        try:
            projects = self.client.api.projects.get(request_options={"max_retries": 1})
            project_id = projects.data[0].id if projects.data else None
        except Exception as err:  # noqa: BLE001
            if _is_transport(err) or _status(err) in (401, 403):
                self.off = True
                self._warn("connection" if _is_transport(err) else "authentication", err)
                return
            log.debug("no Langfuse project id: %s", err)
        name = dataset_name(self.dataset_cfg, cases, self.dataset_override)
        try:
            if self.upload:
                self.dataset = upload_dataset(self.client, name, cases)
            else:
                found = self.client.api.datasets.get(dataset_name=name, request_options={"max_retries": 1})
                self.dataset = {"id": found.id, "name": name, "items": {}}
        except Exception as err:  # noqa: BLE001
            if _is_transport(err):
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
            with self._propagate(case_id):
                root = self.client.start_observation(
                    trace_context={"trace_id": self.trace_id(case_id)}, name=f"case {case_id}", as_type="span",
                    input={"case_id": case_id, "instance_id": case.instance_id, "repo": case.repo,
                           "questions": questions},
                    metadata={"case_id": case_id, "arm": getattr(view, "arm", self.arm),
                              "kept_messages": getattr(view, "kept_messages", None),
                              "kept_tokens": getattr(view, "kept_tokens", None),
                              "full_tokens": getattr(view, "full_tokens", None),
                              "summarizer_calls": getattr(view, "summarizer_calls", None),
                              "handles": len(getattr(view, "store", {}) or {})},
                )
            self._link(root, case_id, root.id)
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
            with self._propagate(case.case_id):
                span = entry["span"].start_observation(
                    name=f"answer {question.type}", as_type="generation",
                    model=str((answer.usage or {}).get("model") or "") or None,
                    input=question.question, output=answer.answer, usage_details=usage or None,
                    metadata={"qid": question.qid, "type": question.type, "outcome": answer.outcome,
                              "retrievals": list(answer.retrievals or []), "error": answer.error},
                    level="ERROR" if answer.outcome == "error" else None,
                )
            self._link(span, case.case_id, entry["span"].id)
            span.end()
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


def build_tracer(cfg: Any, job_dir: Path | str | None = None) -> NullTracer | LangfuseTracer:
    """Langfuse when ``tracing.langfuse`` and the keys are set, else the local tracer.

    ``job_dir``: where the job writes (its ``traces.jsonl``, and the run's name)."""
    tracing = (cfg.get("tracing") if hasattr(cfg, "get") else None) or {}
    if not tracing.get("langfuse"):
        return NullTracer()
    settings = langfuse_settings()
    if settings is None:
        log.warning("tracing.langfuse=true but LANGFUSE_PUBLIC_KEY, LANGFUSE_SECRET_KEY and LANGFUSE_BASE_URL "
                    "(or LANGFUSE_HOST) are not all set: traces stay local")
        return NullTracer()
    try:
        return LangfuseTracer(settings, tracing, cfg.get("dataset"), (cfg.get("arm") or {}).get("name"), job_dir)
    except Exception as err:  # noqa: BLE001 - Langfuse must never stop a job
        log.warning("cannot start Langfuse tracing (%s: %s): traces stay local", type(err).__name__, err)
        return NullTracer()
