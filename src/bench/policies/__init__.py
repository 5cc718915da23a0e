"""History policies (arms): each turns a case's history into the view a model answers from.

    policy = build_policy(cfg, counter)   # bench.config.arms: the one place a config node becomes a policy
    view = policy(case)

Every arm's ``conf/arm/<name>.yaml`` names its class in a module of this package
through ``_target_`` (README, "History policies (arms)", lists the arms; ``tests/test_documented_lists.py``
checks the list and the targets against ``conf/arm/``). :func:`bench.config.arms.build_policy` hands a
policy the parts of the job its class declares in ``uses``, in one :class:`PolicyContext`: the summary
prompt (``cfg.prompt``), the mechanisms (``cfg.mechanism``), the summarizer of ``cfg.summarizer``, the
answering model, and for ``arm.match=NAME`` the policy of arm NAME (``budget_policy``), composed with the
same groups as this job. Shared by the arms: the view and its checks (:mod:`bench.policies.policy`), the
budget (:mod:`bench.policies.budget`), the summarizers (:mod:`bench.policies.summarize`,
:mod:`bench.policies.llm_summarizer`). A built arm is checked against
the :class:`Policy` protocol (one line naming what is missing, docs/extending.md).

The ``${bench.prompt:FILE}`` resolver that reads a summary prompt (``conf/prompt/*.yaml`` use it for
``prompt.text``) is registered by :mod:`bench.config.checks`.
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
