"""The history-policy interface: ``view = policy(case)``, plus view validity checks.

A policy is a pure function of the case (and its own settings): it returns a
:class:`~bench.store.schema.View` with the messages the answering model will see before the
question, and the accounting of what it kept. Every view must be valid for the chat API.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from langchain_core.messages import BaseMessage

from bench.core.components import Component, ModelClient, calls_model, clients_of
from bench.core.contracts import check, problems
from bench.extract.history import clean_start, steps, unpaired
from bench.policies.compact_settings import Mechanisms
from bench.policies.summarize import Summarizer
from bench.store.schema import Case, View, assign_message_ids
from bench.text.tokens import TokenCounter
from bench.text.view_contents import verbatim_ids

__all__ = ["Policy", "PolicyOptions", "PolicyContext", "CONTEXT_PARTS", "Declaration", "declare", "declaration_of",
           "ROLES", "SummarizingArm", "check_policy", "policy_class_problems", "view_problems", "make_view", "steps",
           "clean_start"]

# The parts of a PolicyContext a policy class may declare it uses (``Policy.uses``).
CONTEXT_PARTS = frozenset({"prompt", "mechanism", "summarizer", "budget_policy", "model"})


@dataclass(frozen=True)
class PolicyContext:
    """What a policy receives from the rest of the job (its own arm settings are its fields).

    ``bench.config.arms.build_policy`` fills only the parts the policy's class declares in
    ``uses`` (a summarizer whose endpoint needs a key is not built for an arm that does not
    summarize); the token counter is always there.
    """

    counter: TokenCounter = field(default_factory=TokenCounter, repr=False)
    prompt: str | None = None  # summary prompt text (the prompt group); None: the sre prompt
    prompt_name: str = "sre"  # its name, recorded in views
    mechanism: Mechanisms | Mapping[str, Any] | None = None  # the mechanism group (its config as a dict)
    summarizer: Summarizer | None = field(default=None, repr=False)  # None: the extractive one
    budget_policy: Policy | None = field(default=None, repr=False)  # arm.match's arm, for nlatest
    # the answering model (a bench.answering.answerer.Answerer, a layer above), for the provider arms
    model: Component | None = field(default=None, repr=False)


# What an arm is to the study: the reference every other arm is scored against (the whole
# history), the guessing baseline (no history), or a candidate policy.
ROLES = ("reference", "baseline", "candidate")


@dataclass(frozen=True)
class Declaration:
    """What a built arm depends on and what it is, recorded in ``run.json`` (``policy``).

    Provenance (the summary prompt's hash), the full-arm reuse, report labels, ordering and
    plots read this record instead of comparing arm names, so a new arm is its module and its
    YAML only. A class states ``role`` and ``order``; the dependencies follow from ``uses``
    and from the parts the policy was built with (an arm budget-matched to a summarising arm
    depends on that arm's summary prompt too).
    """

    name: str
    role: str = "candidate"  # one of ROLES
    order: int = 50  # reading order in reports and plots (reference first, baseline next)
    summary_prompt: bool = False  # the prompt group shapes its views (its hash goes in run.json)
    mechanisms: bool = False  # the mechanism group shapes its views
    summarizer: str | None = None  # the summarizer it calls (its name), None: none
    tokenizer: bool = True  # its views depend on the token counter (budgets, thresholds)
    # its summarizer calls no model (the offline extractive stand-in): a view's summary is a lower
    # bound of what a model's would keep (metrics.json "lower_bound", the report, the frontier)
    stand_in_summary: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "role": self.role, "order": self.order, "summary_prompt": self.summary_prompt,
                "mechanisms": self.mechanisms, "summarizer": self.summarizer, "tokenizer": self.tokenizer,
                "stand_in_summary": self.stand_in_summary}


def declare(policy: object) -> Declaration:
    """The declaration of a built policy: its class's ``role``/``order`` and what it was built with."""
    own = getattr(policy, "declaration", None)
    if callable(own):
        return own()
    uses: frozenset[str] = getattr(policy, "uses", frozenset())
    context = getattr(policy, "context", None)
    matched = getattr(context, "budget_policy", None)
    inner = declare(matched) if matched is not None else None
    summarizer = getattr(context, "summarizer", None) if "summarizer" in uses else None
    summarizer_name = (getattr(summarizer, "name", type(summarizer).__name__) if summarizer is not None
                       else ("extractive" if "summarizer" in uses else None))
    stand_in = ("summarizer" in uses and (summarizer is None or not calls_model(summarizer))) or bool(
        inner and inner.stand_in_summary)
    role = getattr(policy, "role", "candidate")
    if role not in ROLES:
        raise ValueError(f"{type(policy).__name__}.role must be one of {ROLES}, got {role!r}")
    return Declaration(
        name=getattr(policy, "name", type(policy).__name__),
        role=role,
        order=getattr(policy, "order", 50),
        summary_prompt="prompt" in uses or bool(inner and inner.summary_prompt),
        mechanisms="mechanism" in uses or bool(inner and inner.mechanisms),
        summarizer=summarizer_name or (inner.summarizer if inner else None),
        tokenizer=getattr(policy, "uses_tokenizer", True),
        stand_in_summary=stand_in,
    )


# How the seed's three arms declared themselves before run.json recorded declarations: read
# only for job directories written by earlier versions (the study and compare read old runs).
_LEGACY = {"full": Declaration("full", "reference", 0, tokenizer=False),
           "nlatest": Declaration("nlatest", "candidate", 10),
           "compact": Declaration("compact", "candidate", 30, summary_prompt=True, mechanisms=True,
                                  summarizer="extractive", stand_in_summary=True)}


def declaration_of(run: dict[str, Any] | None, arm_config: dict[str, Any] | None = None) -> dict[str, Any]:
    """A job's declaration as recorded in its ``run.json``, or reconstructed for an older record."""
    recorded = (run or {}).get("policy")
    if isinstance(recorded, dict) and recorded.get("role") in ROLES:
        # recorded before stand_in_summary existed: the offline summarizer was the one named extractive
        return {"stand_in_summary": recorded.get("summarizer") == "extractive", **recorded}
    arm_config = arm_config or {}
    name = (run or {}).get("arm") or arm_config.get("name")
    base = _LEGACY.get(str(name), Declaration(str(name)))
    matched = _LEGACY.get(str(arm_config.get("match")))
    if matched is not None:
        base = Declaration(base.name, base.role, base.order, base.summary_prompt or matched.summary_prompt,
                           base.mechanisms or matched.mechanisms, base.summarizer or matched.summarizer)
    return base.to_dict()


class SummarizingArm:
    """An arm that builds views with ``self.summarizer``: its model clients are the summarizer's."""

    summarizer: Summarizer | None

    def clients(self) -> list[ModelClient]:
        return clients_of(self.summarizer)

    @property
    def calls_model(self) -> bool:
        """Whether building a view calls a model (the summarizer's; one of one's own: its ``calls_model``)."""
        return calls_model(self.summarizer)


class Policy(Protocol):
    """``view = policy(case)``. ``calls_model`` is True when building a view calls a model (an
    LLM summarizer): the runner then builds views concurrently; pure-CPU views are built one
    at a time, since threads gain nothing on CPU work under the GIL. ``uses`` names the parts
    of the :class:`PolicyContext` the policy needs (its explicit contract with build_policy)."""

    name: str
    context: PolicyContext

    @property
    def calls_model(self) -> bool:
        """True when building a view calls a model (a class attribute, or a property of what it was built with)."""

    @property
    def uses(self) -> frozenset[str]:
        """The :data:`CONTEXT_PARTS` it needs (a class attribute: build_policy reads it off the class)."""

    def __call__(self, case: Case) -> View:
        """The view of the case's history the answering model sees."""


class PolicyOptions(Protocol):
    """What a policy may add; each is read only when it has it (:func:`declare`, the runner)."""

    role: str  # one of ROLES (default candidate)
    order: int  # its place in study tables and plots (default 50)
    uses_tokenizer: bool  # its views depend on the token counter (default True)

    def clients(self) -> list[Any]: ...  # the model clients it calls through (SummarizingArm: the summarizer's)

    def declaration(self) -> Declaration: ...  # its own declaration instead of the one derived from ``uses``


def policy_class_problems(cls: Any) -> list[str]:
    """What an arm's class (its ``_target_``) lacks before it is built: it takes the ``context`` the job
    hands it, and ``uses`` names parts of it (:data:`CONTEXT_PARTS`)."""
    found = []
    try:
        parameters: Mapping[str, inspect.Parameter] = inspect.signature(cls).parameters
    except (TypeError, ValueError):  # no signature to read: left to the build
        parameters = {}
    if parameters and "context" not in parameters and not any(
            p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        found.append("it takes no context (a field context: PolicyContext)")
    unknown = sorted(set(getattr(cls, "uses", frozenset())) - CONTEXT_PARTS)
    if unknown:
        found.append(f"uses unknown context parts {unknown} (known: {', '.join(sorted(CONTEXT_PARTS))})")
    return found


def _policy_rules(policy: Any) -> list[str]:
    found = problems(policy, PolicyOptions, optional=True) + policy_class_problems(type(policy))
    role = getattr(policy, "role", "candidate")
    if role not in ROLES:
        found.append(f"role must be one of {ROLES}, got {role!r}")
    return found


def check_policy(policy: Any, label: str | None = None) -> Any:
    """``policy`` when it has the :class:`Policy` protocol's members and its options are well-formed; else
    ContractError, one line: ``arm 'mine': missing calls_model``."""
    return check(policy, Policy, "arm", label, rules=_policy_rules)


def view_problems(messages: list[BaseMessage]) -> list[str]:
    """Why a message list is not valid for the chat API (empty list when it is)."""
    problems: list[str] = []
    for kind, index, ids in unpaired(messages):
        if kind == "result":
            problems.append(f"message {index}: tool result {next(iter(ids))} without its call")
        else:
            problems.append(f"{'end' if index is None else f'message {index}'}: calls {sorted(ids, key=str)} lack results")
    return problems


def make_view(case: Case, arm: str, messages: list[BaseMessage], counter: TokenCounter, **extra: Any) -> View:
    """A view with token accounting and provenance (``View.verbatim``: the ids of the case's
    messages it keeps verbatim); raises if the messages are not a valid chat history."""
    problems = view_problems(messages)
    if problems:
        raise ValueError(f"{arm} built an invalid view for {case.case_id}: {problems[:3]}")
    assign_message_ids(case.messages)
    extra.pop("verbatim", None)  # decided here, from the messages, never taken from a policy
    return View(
        case_id=case.case_id,
        arm=arm,
        messages=messages,
        kept_tokens=counter.count_messages(messages),
        full_messages=len(case.messages),
        full_tokens=counter.count_messages(case.messages),
        verbatim=verbatim_ids(messages, case.messages),
        **extra,
    )
