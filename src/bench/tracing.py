"""Tracing hooks of a job. ``NullTracer`` keeps everything local (no Langfuse keys).

The runner calls these hooks; a Langfuse tracer implements the same methods.
"""

from __future__ import annotations

from typing import Any

__all__ = ["NullTracer", "build_tracer"]


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


def build_tracer(cfg: Any) -> NullTracer:
    return NullTracer()
