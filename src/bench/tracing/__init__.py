"""Tracing hooks of a job: local (``NullTracer``) or Langfuse (``LangfuseTracer``).

The runner calls, per job::

    tracer = build_tracer(cfg, job_dir)
    tracer.start_job(job_name, cases)
    tracer.case_started(case, view)                  # per case
    with call_callbacks(tracer.callbacks(case_id)):  # model calls of the case's work: nested spans
        ...
    tracer.answer_recorded(case, question, answer)   # per question
    tracer.score_recorded(case, question, score)     # per question
    missing = tracer.missing_traces(case_ids)        # cases whose trace did not reach Langfuse
    tracer.flush()

Modules: :mod:`bench.tracing.settings` (keys, client), :mod:`bench.tracing.langfuse_datasets` (the
cases as a dataset), :mod:`bench.tracing.tracer` (traces, spans, scores).
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from pathlib import Path
from typing import Any

from bench.tracing.langfuse_datasets import dataset_item_id, dataset_name, upload_dataset
from bench.tracing.settings import LangfuseSettings, TraceOptions, langfuse_client, langfuse_settings

__all__ = [
    "NullTracer", "LangfuseTracer", "build_tracer", "TraceOptions", "langfuse_settings", "LangfuseSettings",
    "langfuse_client", "dataset_name", "dataset_item_id", "upload_dataset",
]

log = logging.getLogger(__name__)


class NullTracer:
    """Does nothing; every case counts as traced (traces stay local in the job files)."""

    name = "local"

    def start_job(self, job_name: str, cases: Collection[Any]) -> None: ...

    def case_started(self, case: Any, view: Any) -> None: ...

    def answer_recorded(self, case: Any, question: Any, answer: Any) -> None: ...

    def score_recorded(self, case: Any, question: Any, score: Any) -> None: ...

    def callbacks(self, case_id: str) -> list[Any]:
        return []

    def missing_traces(self, case_ids: list[str]) -> list[str]:
        return []

    def flush(self) -> None: ...


def build_tracer(options: TraceOptions, job_dir: Path | str | None = None) -> Any:
    """Langfuse when ``options.langfuse`` and the keys are set, else the local tracer.

    ``job_dir``: where the job writes (its ``traces.jsonl``, and the run's name)."""
    if not options.langfuse:
        return NullTracer()
    settings = langfuse_settings()
    if settings is None:
        log.warning("tracing.langfuse=true but LANGFUSE_PUBLIC_KEY, LANGFUSE_SECRET_KEY and LANGFUSE_BASE_URL "
                    "(or LANGFUSE_HOST) are not all set: traces stay local")
        return NullTracer()
    from bench.tracing.tracer import LangfuseTracer

    try:
        return LangfuseTracer(settings, options, job_dir)
    except Exception as err:  # noqa: BLE001 - Langfuse must never stop a job
        log.warning("cannot start Langfuse tracing (%s: %s): traces stay local", type(err).__name__, err)
        return NullTracer()


def __getattr__(name: str) -> Any:
    if name == "LangfuseTracer":  # imported on use: the langfuse SDK is not needed without it
        from bench.tracing.tracer import LangfuseTracer

        return LangfuseTracer
    raise AttributeError(name)
