"""The history-policy interface: ``view = policy(case)``, plus view validity checks.

A policy is a pure function of the case (and its own settings): it returns a
:class:`~bench.schema.View` with the messages the answering model will see before the
question, and the accounting of what it kept. Every view must be valid for the chat API.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from bench.schema import Case, View
from bench.tokens import TokenCounter

__all__ = ["Policy", "PolicyContext", "CONTEXT_PARTS", "view_problems", "make_view", "steps", "clean_start"]

# The parts of a PolicyContext a policy class may declare it uses (``Policy.uses``).
CONTEXT_PARTS = frozenset({"prompt", "mechanism", "summarizer", "budget_policy"})


@dataclass(frozen=True)
class PolicyContext:
    """What a policy receives from the rest of the job (its own arm settings are its fields).

    ``bench.policies.build_policy`` fills only the parts the policy's class declares in
    ``uses`` (a summarizer whose endpoint needs a key is not built for an arm that does not
    summarize); the token counter is always there.
    """

    counter: TokenCounter = field(default_factory=TokenCounter, repr=False)
    prompt: str | None = None  # summary prompt text (the prompt group); None: the sre prompt
    prompt_name: str = "sre"  # its name, recorded in views
    mechanism: Any = None  # the mechanism group (a dict or bench.policies.compact.Mechanisms)
    summarizer: Any = field(default=None, repr=False)  # a Summarizer; None: the extractive one
    budget_policy: Any = field(default=None, repr=False)  # arm.match's arm (a Policy), for nlatest


class Policy(Protocol):
    """``view = policy(case)``. ``calls_model`` is True when building a view calls a model (an
    LLM summarizer): the runner then builds views concurrently; pure-CPU views are built one
    at a time, since threads gain nothing on CPU work under the GIL. ``uses`` names the parts
    of the :class:`PolicyContext` the policy needs (its explicit contract with build_policy)."""

    name: str
    calls_model: bool
    uses: ClassVar[frozenset[str]]
    context: PolicyContext

    def __call__(self, case: Case) -> View: ...


def view_problems(messages: list[BaseMessage]) -> list[str]:
    """Why a message list is not valid for the chat API (empty list when it is)."""
    problems: list[str] = []
    pending: dict[str, int] = {}
    for index, message in enumerate(messages):
        if isinstance(message, ToolMessage):
            if message.tool_call_id not in pending:
                problems.append(f"message {index}: tool result {message.tool_call_id} without its call")
            else:
                del pending[message.tool_call_id]
            continue
        if pending:
            problems.append(f"message {index}: calls {sorted(pending)} lack results")
            pending = {}
        if isinstance(message, AIMessage):
            pending = {c["id"]: index for c in message.tool_calls}
    if pending:
        problems.append(f"end: calls {sorted(pending)} lack results")
    return problems


def make_view(case: Case, arm: str, messages: list[BaseMessage], counter: TokenCounter, **extra) -> View:
    """A view with token accounting; raises if the messages are not a valid chat history."""
    problems = view_problems(messages)
    if problems:
        raise ValueError(f"{arm} built an invalid view for {case.case_id}: {problems[:3]}")
    return View(
        case_id=case.case_id,
        arm=arm,
        messages=messages,
        kept_tokens=counter.count_messages(messages),
        full_messages=len(case.messages),
        full_tokens=counter.count_messages(case.messages),
        **extra,
    )


def steps(messages: list[BaseMessage], start: int = 0) -> list[tuple[int, int]]:
    """Whole steps of ``messages[start:]`` as ``(begin, end)`` spans, oldest first.

    A step is an assistant message with the results of its calls, or any other single
    message (a user message, an assistant reply without calls). Cutting a valid history
    between steps never splits a tool exchange or a turn. ``start`` must not point at a
    tool result.
    """
    spans: list[tuple[int, int]] = []
    index = start
    while index < len(messages):
        end = index + 1
        if isinstance(messages[index], AIMessage) and messages[index].tool_calls:
            while end < len(messages) and isinstance(messages[end], ToolMessage):
                end += 1
        spans.append((index, end))
        index = end
    return spans


def clean_start(messages: list[BaseMessage], start: int) -> int:
    """The first index >= ``start`` where a suffix of a valid history is valid itself.

    A suffix of a valid history is invalid only when it opens with tool results whose call
    was cut off (a call keeps all its results, which follow it), so the boundary moves
    toward newer messages past those results.
    """
    start = max(0, start)
    while start < len(messages) and isinstance(messages[start], ToolMessage):
        start += 1
    return start
