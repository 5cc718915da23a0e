"""History policies (arms): each turns a case's history into the view a model answers from.

    policy = build_policy(cfg, counter)       # bench.config.arms: the arm its _target_ names
    view = policy(case)

One module per arm (``conf/arm/<name>.yaml`` names its class), behind the :class:`Policy` protocol
(``bench.policies.policy``): ``name``, ``calls_model``, ``uses``, ``context`` and ``__call__``.
``build_policy`` hands each arm the parts of the job it declares in ``uses`` (the summary prompt,
the mechanism, the summarizer, the policy of ``arm.match`` as ``budget_policy``, the answering model),
in one :class:`PolicyContext`, and checks the built arm against the protocol (one line naming what
is missing, docs/extending.md).

Importing this package registers the config resolver ``${bench.prompt:FILE}`` that
reads a summary prompt (``conf/prompt/*.yaml`` use it for ``prompt.text``).
"""

from __future__ import annotations

from typing import Any

from bench.policies.compact import AutoCompact, CompactPolicy, Mechanisms, MicroCompact
from bench.policies.full import FullHistory
from bench.policies.nlatest import NLatest
from bench.policies.policy import (
    CONTEXT_PARTS,
    Declaration,
    Policy,
    PolicyContext,
    clean_start,
    declaration_of,
    declare,
    make_view,
    steps,
    view_problems,
)
from bench.policies.summarize import ExtractiveSummarizer, Summarizer, load_prompt

__all__ = [
    "Policy",
    "CONTEXT_PARTS",
    "PolicyContext",
    "Declaration",
    "declare",
    "declaration_of",
    "make_view",
    "view_problems",
    "steps",
    "clean_start",
    "FullHistory",
    "NLatest",
    "CompactPolicy",
    "MicroCompact",
    "AutoCompact",
    "Mechanisms",
    "Summarizer",
    "ExtractiveSummarizer",
    "LLMSummarizer",
    "load_prompt",
]

def __getattr__(name: str) -> Any:
    if name in ("LLMSummarizer", "SUMMARY_SYSTEM"):  # the model client is imported on first use
        from bench.policies import llm_summarizer

        return getattr(llm_summarizer, name)
    raise AttributeError(f"module 'bench.policies' has no attribute {name!r}")
