"""The ``trim`` arm: LangChain's ``trim_messages``, as a LangChain or LangGraph agent would
shrink its history (the library itself is called, not a re-implementation).

Strategy ``last`` under a token budget (``max_tokens``), counted with the project's token
counter, so budgets mean the same as every other arm's. ``start_on`` makes the kept
suffix open on a user or assistant message (never on a tool result whose call was cut),
``end_on`` optionally where it ends; the view is then checked valid like every other view.

With ``budget`` (:mod:`bench.policies.budget`), ``max_tokens`` is the case's target (a share of
its history's tokens, or a token count) instead of the fixed setting: ``trim_messages`` keeps
the latest messages within it, so a view never exceeds its target.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from langchain_core.messages import (
    AIMessage,
    ChatMessage,
    FunctionMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    trim_messages,
)

from bench.core.errors import ConfigError
from bench.core.typecheck import check_types
from bench.policies.budget import Budget
from bench.policies.policy import PolicyContext, make_view
from bench.store.schema import Case, View

__all__ = ["TrimMessages", "MESSAGE_TYPES"]

# The message types trim_messages matches start_on / end_on against (a message's ``type``), from
# LangChain's own classes: a name outside them matches nothing, and the view would keep nothing
MESSAGE_TYPES = tuple(cls.model_fields["type"].default for cls in (HumanMessage, AIMessage, SystemMessage, ToolMessage,
                                                                   FunctionMessage, ChatMessage))


def _message_types(value: Any, key: str) -> list[str] | None:
    """``arm.start_on`` / ``arm.end_on`` as the list of message types trim_messages takes; ConfigError otherwise."""
    if value is None:
        return None
    items = [value] if isinstance(value, str) else list(value) if isinstance(value, list | tuple) else None
    bad = [v for v in items if v not in MESSAGE_TYPES] if items is not None else [value]
    if items is None or not items or bad:
        raise ConfigError(f"arm.{key}: message types among {', '.join(MESSAGE_TYPES)} (e.g. [human, ai]), "
                          f"got {value!r}" + (f" ({', '.join(map(repr, bad))} is none)" if bad else ""))
    return items


@dataclass
class TrimMessages:
    name: str = "trim"
    max_tokens: int = 4096  # token budget of the kept suffix
    start_on: list[str] | None = None  # message types the view may open on (None: human, ai)
    end_on: list[str] | None = None  # message types it may end on (None: as the history ends)
    budget: float | int | None = None  # share of each case's history tokens, or tokens (None: max_tokens)
    calls_model: ClassVar[bool] = False
    uses: ClassVar[frozenset[str]] = frozenset()
    order: ClassVar[int] = 15
    context: PolicyContext = field(default_factory=PolicyContext, repr=False)

    def __post_init__(self) -> None:
        check_types(self, "arm")
        if self.max_tokens < 0:
            raise ConfigError(f"arm.max_tokens must be >= 0, got {self.max_tokens}")
        self.start_on = _message_types(self.start_on, "start_on") or ["human", "ai"]
        self.end_on = _message_types(self.end_on, "end_on")
        self.limit = Budget.parse(self.budget)

    def trim(self, messages: list[Any], max_tokens: int | None = None) -> list[Any]:
        """``trim_messages`` with this arm's settings (the test calls the library the same way)."""
        return trim_messages(messages, max_tokens=self.max_tokens if max_tokens is None else max_tokens,
                             token_counter=self.context.counter.count_messages, strategy="last",
                             start_on=self.start_on, end_on=self.end_on, allow_partial=False)

    def __call__(self, case: Case) -> View:
        target = (self.limit.target(self.context.counter.count_messages(case.messages))
                  if self.limit is not None else None)
        kept = self.trim(list(case.messages), target)
        info = {"max_tokens": self.max_tokens if target is None else target,
                "first_kept": len(case.messages) - len(kept)}
        view = make_view(case, self.name, kept, self.context.counter, info=info)
        if self.limit is None or target is None:
            return view
        return self.limit.record(view, target, {"max_tokens": target})
