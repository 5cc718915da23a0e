"""History policies (arms): each turns a case's history into the view a model answers from.

    policy = build_policy(cfg, counter)
    view = policy(case)

Arms: ``full`` (the whole history), ``nlatest`` (the N latest messages, spec 2.2) and
``compact`` (the sre-agent compaction with its mechanisms, spec 2.3). ``build_policy``
hands each arm what it declares from the job config: ``compact`` gets ``cfg.prompt``,
``cfg.mechanism`` and the summarizer of ``cfg.summarizer``; ``nlatest`` with
``arm.match=NAME`` gets the policy of arm NAME, composed (Hydra's compose API) with the
same prompt, mechanism and summarizer groups as this job. Each arrives in one
:class:`PolicyContext`, filled with the parts the policy's class declares in ``uses``.

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
