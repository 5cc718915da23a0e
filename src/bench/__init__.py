"""bench: the context-compaction benchmark runner.

Replays recorded agent trajectories (OpenHands coding runs, tau2-bench operations runs, your
own chat logs), shrinks each history with a history policy (arm), asks recall questions with
code-extracted references, and scores the answers. Run ``python -m bench.main`` (README.md).

The public building blocks are below; each is imported on first use (``import bench`` stays
cheap, so the command line starts fast)::

    from bench import run, load_cases, build_policy, EvidenceReader, ExactJudge
"""

from __future__ import annotations

import importlib
from typing import Any

# public name -> the module that defines it
_PUBLIC = {
    "Answer": "bench.schema", "Case": "bench.schema", "DroppedQuestion": "bench.schema", "Question": "bench.schema",
    "Rejected": "bench.schema", "Score": "bench.schema", "View": "bench.schema",
    "row_to_case": "bench.cases",
    "DatasetError": "bench.selection", "Selection": "bench.selection", "load_cases": "bench.selection",
    "ExactJudge": "bench.judge", "LLMJudge": "bench.judge",
    "CompactPolicy": "bench.policies", "ExtractiveSummarizer": "bench.policies", "FullHistory": "bench.policies",
    "LLMSummarizer": "bench.policies", "NLatest": "bench.policies", "Policy": "bench.policies",
    "PolicyContext": "bench.policies", "Summarizer": "bench.policies", "build_policy": "bench.arms",
    "Profile": "bench.profiles", "get_profile": "bench.profiles",
    "QUESTION_TYPES": "bench.questions", "add_questions": "bench.questions",
    "EvidenceReader": "bench.reader",
    "run": "bench.runner",
    "TokenCounter": "bench.tokens",
}

__all__ = sorted(_PUBLIC)


def __getattr__(name: str) -> Any:
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'bench' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_PUBLIC))
