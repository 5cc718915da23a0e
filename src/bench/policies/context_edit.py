"""The ``context_edit`` arm: LangChain's ``ContextEditingMiddleware`` with ``ClearToolUsesEdit``,
the client-side mirror of the tool-result clearing providers run on their servers (Anthropic's
``clear_tool_uses_20250919``), as a LangChain agent
(``create_agent(..., middleware=[ContextEditingMiddleware(edits=[ClearToolUsesEdit(...)])])``)
would shrink its history.

The library itself decides: once the history is over ``trigger`` tokens, ``ClearToolUsesEdit``
replaces the oldest tool results by ``placeholder`` (and, with ``clear_tool_inputs``, empties
their calls' arguments), never the ``keep`` most recent results nor those of ``exclude_tools``,
stopping as soon as ``clear_at_least`` tokens are reclaimed (0: it clears every candidate).
The middleware is driven through its public hook, ``wrap_model_call(request, handler)``, on the
request of the question (the whole recorded history): its edits are made on a copy of the
request's messages, never written back to the agent's state, so each model call of the agent
sees the edit of the history it has then, and the question's call is the view. The defaults
are LangChain's (Anthropic's): ``trigger=100000``, ``keep=3``, ``clear_at_least=0``,
``placeholder="[cleared]"``. Token counts use the project's counter, so ``trigger`` means the
same as every other arm's budget.

With ``budget`` (:mod:`bench.policies.budget`), per case with target T tokens and a history of
H tokens: ``trigger=T`` and ``clear_at_least=H - T`` (the edit clears the oldest results until
the view fits), ``keep``, ``exclude_tools`` and the placeholder as configured. Clearing results
has a floor (calls, user and assistant messages stay): when the edited view is still over T,
the oldest whole steps are dropped until it fits (``translation.steps_dropped``), as
``trim_messages`` after the middleware would. Unchanged messages are the case's own objects.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, cast

from langchain.agents.middleware import ClearToolUsesEdit, ContextEditingMiddleware, ModelRequest, ModelResponse
from langchain.agents.middleware.context_editing import DEFAULT_TOOL_PLACEHOLDER
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage

from bench.core.errors import ConfigError
from bench.core.typecheck import check_types
from bench.policies.budget import Budget, drop_oldest_steps
from bench.policies.policy import PolicyContext, make_view
from bench.store.schema import Case, View

__all__ = ["LangChainContextEdit", "apply_middleware", "DEFAULT_TOOL_PLACEHOLDER"]


def apply_middleware(middleware: ContextEditingMiddleware, messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """The messages a model call would be sent once ``middleware`` edited its request (the test
    applies the middleware the same way, directly)."""
    sent: list[list[BaseMessage]] = []

    def handler(request: ModelRequest) -> ModelResponse:
        sent.append(list(request.messages))
        return ModelResponse(result=[AIMessage(content="")])

    # ``model`` is never called: the handler stands for the call, and the counter is ours
    model = GenericFakeChatModel(messages=iter(()))
    # the case's messages are of the concrete chat classes LangChain's AnyMessage names
    middleware.wrap_model_call(ModelRequest(model=model, messages=cast(list[AnyMessage], list(messages))), handler)
    return sent[0] if sent else list(messages)


def _edited(message: BaseMessage) -> bool:
    """Whether the middleware changed this message (it marks what it clears in the metadata)."""
    return bool((getattr(message, "response_metadata", None) or {}).get("context_editing"))


@dataclass
class LangChainContextEdit:
    name: str = "context_edit"
    trigger: int = 100_000  # tokens over which the edit runs (LangChain's default, Anthropic's)
    keep: int = 3  # most recent tool results never cleared
    clear_at_least: int = 0  # tokens to reclaim before it stops (0: clear every candidate)
    exclude_tools: Any = ()  # tool names whose results are never cleared
    placeholder: str = DEFAULT_TOOL_PLACEHOLDER  # what a cleared result says instead
    clear_tool_inputs: bool = False  # also empty the arguments of the cleared results' calls
    budget: float | int | None = None  # share of each case's history tokens, or tokens (None: trigger)
    context: PolicyContext = field(default_factory=PolicyContext, repr=False)
    calls_model: ClassVar[bool] = False
    uses: ClassVar[frozenset[str]] = frozenset()
    order: ClassVar[int] = 22  # reports: beside observation masking, its server-side cousin

    def __post_init__(self) -> None:
        check_types(self, "arm")
        for key in ("trigger", "keep", "clear_at_least"):
            if getattr(self, key) < 0:
                raise ConfigError(f"arm.{key} must be >= 0, got {getattr(self, key)}")
        tools = [] if self.exclude_tools is None else self.exclude_tools
        if isinstance(tools, str) or not all(isinstance(t, str) for t in tools):
            raise ConfigError(f"arm.exclude_tools: expected a list of tool names, got {self.exclude_tools!r}")
        self.exclude_tools = tuple(tools)
        self.limit = Budget.parse(self.budget)

    def middleware(self, trigger: int | None = None, clear_at_least: int | None = None) -> ContextEditingMiddleware:
        """The middleware with this arm's edit (``trigger`` / ``clear_at_least``: a budget's, per case)."""
        edit = ClearToolUsesEdit(trigger=self.trigger if trigger is None else trigger,
                                 clear_at_least=self.clear_at_least if clear_at_least is None else clear_at_least,
                                 keep=self.keep, clear_tool_inputs=self.clear_tool_inputs,
                                 exclude_tools=self.exclude_tools, placeholder=self.placeholder)
        return ContextEditingMiddleware(edits=[edit], token_counter=self.context.counter.count_messages)

    def __call__(self, case: Case) -> View:
        counter = self.context.counter
        target = trigger = clear = None
        if self.limit is not None:
            full = counter.count_messages(case.messages)
            target = self.limit.target(full)
            trigger, clear = target, max(0, full - target)
        sent = apply_middleware(self.middleware(trigger, clear), case.messages)
        if len(sent) != len(case.messages):
            raise ValueError(f"context_edit: the middleware changed the number of messages of {case.case_id}")
        # the middleware deep-copies the request: unchanged messages are the case's own again
        messages = [new if _edited(new) else old for old, new in zip(case.messages, sent, strict=True)]
        info: dict[str, Any] = {
            "trigger": self.trigger if trigger is None else trigger, "keep": self.keep,
            "clear_at_least": self.clear_at_least if clear is None else clear,
            "results_cleared": sum(1 for m in messages if _edited(m) and not isinstance(m, AIMessage)),
            "inputs_cleared": sum(1 for m in messages if isinstance(m, AIMessage) and _edited(m)),
        }
        if target is None or self.limit is None:
            return make_view(case, self.name, messages, counter, info=info)
        kept, dropped = drop_oldest_steps(messages, counter, target)
        info["steps_dropped"] = dropped
        view = make_view(case, self.name, kept, counter, info=info)
        return self.limit.record(view, target, {"trigger": trigger, "clear_at_least": clear, "keep": self.keep,
                                                "steps_dropped": dropped})
