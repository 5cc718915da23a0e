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

from bench.core.renames import install_aliases

# modules moved by issue 33 keep answering to their old names (old _target_ paths, users' imports)
install_aliases()

# public name -> the module that defines it
_PUBLIC = {
    "Answer": "bench.store.schema", "Case": "bench.store.schema", "DroppedQuestion": "bench.store.schema", "Question": "bench.store.schema",
    "Rejected": "bench.store.schema", "Score": "bench.store.schema", "View": "bench.store.schema",
    "row_to_case": "bench.data.cases",
    "DatasetError": "bench.data.selection", "Selection": "bench.data.selection", "load_cases": "bench.data.selection",
    "ExactJudge": "bench.scoring.judge", "LLMJudge": "bench.scoring.judge",
    "CompactPolicy": "bench.policies", "ExtractiveSummarizer": "bench.policies", "FullHistory": "bench.policies",
    "LLMSummarizer": "bench.policies", "NLatest": "bench.policies", "Policy": "bench.policies",
    "PolicyContext": "bench.policies", "Summarizer": "bench.policies", "build_policy": "bench.config.arms",
    "Profile": "bench.profiles", "get_profile": "bench.profiles",
    "QUESTION_TYPES": "bench.questions", "add_questions": "bench.questions",
    "EvidenceReader": "bench.answering.evidence_reader",
    "run": "bench.runner",
    "TokenCounter": "bench.text.tokens",
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
