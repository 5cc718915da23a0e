"""The cases of a composed job config: the one place a config becomes a selection.

The job, ``bench.download`` and ``bench.dataset`` all select through here, so they build the
same question ids and case-set hash. Below this module nothing reads a config node: the
source is a :class:`bench.sources.Source`, the question choice plain values.

    selection = load_job_cases(cfg)
"""

from __future__ import annotations

from typing import Any

from bench.config.checks import dataset_source, plain
from bench.data.selection import CaseStream, Selection, load_cases
from bench.text.tokens import TokenCounter

__all__ = ["job_case_stream", "load_job_cases", "question_choice"]


def question_choice(cfg: Any) -> tuple[list[str] | None, list[Any] | None]:
    """``questions.types`` and ``questions.depths`` as plain lists (None: every type, the earliest depth)."""
    asked = plain(cfg.get("questions") or {}) or {}
    types, depths = asked.get("types"), asked.get("depths")
    if isinstance(types, str):
        types = [types]
    if isinstance(depths, str | int):
        depths = [depths]
    return types, depths


def job_case_stream(cfg: Any, counter: TokenCounter | None = None) -> CaseStream:
    """The cases of ``cfg.dataset``'s rows with ``cfg.questions``' types and depths, one at a time (a job)."""
    types, depths = question_choice(cfg)
    return CaseStream(dataset_source(cfg.dataset), counter, types, depths)


def load_job_cases(cfg: Any, counter: TokenCounter | None = None, keep_rows: bool = False) -> Selection:
    """The cases of ``cfg.dataset``'s rows with ``cfg.questions``' types and depths."""
    types, depths = question_choice(cfg)
    return load_cases(dataset_source(cfg.dataset), counter, types, keep_rows=keep_rows, depths=depths)
