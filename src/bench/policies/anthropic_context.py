"""The Anthropic arms: the Messages API's own context management, answered through the same model
(``model=anthropic``).

``anthropic_compact``: server-side compaction, ``context_management.edits=[{type: compact_20260112,
trigger}]`` (``BetaCompact20260112EditParam``; beta header ``compact-2026-01-12``). The view call sends the
request an agent would send with the recorded history (system prompt, the case's tools, the history) with
``pause_after_compaction: true``: when the input reaches ``trigger`` input tokens, the server summarizes
it and returns the ``compaction`` block alone (``BetaCompactionBlock``, ``stop_reason: compaction``). That
block, sent back verbatim in an assistant message (``BetaCompactionBlockParam``: the server drops
everything before it), is the view; its readable ``content`` is the view's ``summary`` in ``views.jsonl``.
Under the trigger the server does not compact and the history is the view, as recorded. The answering
calls carry the same beta header and edit (without the pause), as every request of an agent configured so.

``anthropic_clear``: tool-result clearing, ``clear_tool_uses_20250919`` (``BetaClearToolUses20250919EditParam``:
``trigger``, ``keep``, ``clear_at_least``, ``exclude_tools``, ``clear_tool_inputs``; beta header
``context-management-2025-06-27``). The server edits a request in flight and never returns the edited
history: a client keeps its full history and sends it with the edit every time. So the answering calls
send the recorded history with the edit (``request.send: history``), and the view call, the same request
without the question, records what the server reports it cleared
(``BetaContextManagementResponse.applied_edits``: ``cleared_tool_uses``, ``cleared_input_tokens``). The
view's ``messages`` are that edit as the model sees it: the API clears the oldest tool results first,
never the ``keep`` latest nor those of ``exclude_tools``, so the N it reports are the N oldest such tool
uses; their results read :data:`CLEARED_TEXT` in the view (the server's own placeholder text is not
reported) and, with ``clear_tool_inputs``, their calls' arguments are empty. The question's few tokens can
cross the trigger in an answering call when a history is within them of it: the view call would then
report nothing cleared for a request that is.

With ``budget`` (:mod:`bench.policies.budget`), per case with target T tokens: ``trigger`` is T input
tokens in both arms (the server counts the whole request, system and tools included, with its own
tokenizer). What the server then keeps is its decision (compaction: a summary; clearing: every result but
``keep``'s): the realized size is recorded against T, not forced to it. ``clear_at_least`` stays as
configured (it is a floor under which the server does not clear, not a size).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from langchain_core.messages import AIMessage, BaseMessage, SystemMessage, ToolMessage

from bench.core.errors import ConfigError
from bench.core.typecheck import check_types
from bench.policies.budget import Budget
from bench.policies.policy import PolicyContext, make_view
from bench.policies.provider import ProviderArm
from bench.store.schema import Case, View
from bench.text.tokens import MESSAGE_OVERHEAD

__all__ = ["AnthropicCompaction", "AnthropicClearToolUses", "COMPACT_BETA", "CONTEXT_BETA", "CLEARED_TEXT"]

COMPACT_BETA = "compact-2026-01-12"  # compact_20260112 edits and compaction blocks
CONTEXT_BETA = "context-management-2025-06-27"  # clear_tool_uses_20250919 edits
CLEARED_TEXT = "[cleared]"  # what a cleared result reads in the view (the API's placeholder is its own)


def _trigger(arm: Any, case: Case) -> tuple[int | None, int]:
    """(the budget's target for this case's history, None without a budget; the tokens the edit triggers at:
    that target when there is one, else the arm's ``trigger``)."""
    target = arm.limit.target(arm.context.counter.count_messages(case.messages)) if arm.limit is not None else None
    return target, target if target is not None else arm.trigger


def _tokens(value: int) -> dict[str, Any]:
    return {"type": "input_tokens", "value": int(value)}


def _view_call(arm: ProviderArm, case: Case, betas: list[str], edit: dict[str, Any],
               max_tokens: int) -> tuple[AIMessage, dict[str, Any]]:
    """The request an agent would send with the recorded history, and the edit, through the view client."""
    return arm.client.chat([SystemMessage(case.system_prompt), *case.messages], case.tools or None,
                           tags={"case_id": case.case_id, "arm": arm.name},
                           extra={"betas": betas, "context_management": {"edits": [edit]}, "max_tokens": max_tokens})


def _call_info(record: dict[str, Any], reply: AIMessage) -> dict[str, Any]:
    return {**{k: record.get(k) for k in ("input_tokens", "cached_tokens", "output_tokens", "cached")},
            "stop_reason": (reply.response_metadata or {}).get("stop_reason")}


@dataclass
class AnthropicCompaction(ProviderArm):
    name: str = "anthropic_compact"
    provider: str = "anthropic"  # the provider whose server builds the views (fixed: Anthropic)
    trigger: int = 150_000  # input tokens at which the server compacts (the API's default)
    instructions: str | None = None  # extra summarization instructions (the edit's `instructions`)
    view_max_tokens: int = 64  # cap on the reply of a view call that did not compact (it is not kept)
    budget: float | int | None = None  # share of each case's history tokens, or tokens (None: trigger)
    context: PolicyContext = field(default_factory=PolicyContext, repr=False)
    PROVIDER: ClassVar[str] = "anthropic"
    FEATURE: ClassVar[str] = "server-side compaction (compact_20260112, beta compact-2026-01-12)"
    order: ClassVar[int] = 38  # reports: beside the summarizing arms

    def __post_init__(self) -> None:
        check_types(self, "arm")
        for key in ("trigger", "view_max_tokens"):
            if getattr(self, key) < 1:
                raise ConfigError(f"arm.{key} must be >= 1, got {getattr(self, key)}")
        self.limit = Budget.parse(self.budget)
        self.connect()

    def edit(self, trigger: int) -> dict[str, Any]:
        """The ``compact_20260112`` edit (``BetaCompact20260112EditParam``) of the answering calls."""
        edit: dict[str, Any] = {"type": "compact_20260112", "trigger": _tokens(trigger)}
        if self.instructions:
            edit["instructions"] = self.instructions
        return edit

    def __call__(self, case: Case) -> View:
        counter = self.context.counter
        target, trigger = _trigger(self, case)
        edit = self.edit(trigger)
        reply, record = _view_call(self, case, [COMPACT_BETA], {**edit, "pause_after_compaction": True},
                                   self.view_max_tokens)
        request = {"provider": "anthropic", "params": {"betas": [COMPACT_BETA], "context_management": {"edits": [edit]}},
                   "send": "view"}
        blocks = [b for b in (reply.content if isinstance(reply.content, list) else [])
                  if isinstance(b, dict) and b.get("type") == "compaction"]
        info: dict[str, Any] = {"trigger": trigger, "compacted": bool(blocks), "call": _call_info(record, reply)}
        if not blocks:  # under the server's trigger: the history as recorded
            view = make_view(case, self.name, list(case.messages), counter, info=info, request=request,
                             summarizer_calls=1)
        else:
            block = {k: v for k, v in blocks[-1].items() if k != "index"}  # round-tripped verbatim
            summary = block.get("content")
            if summary is None:  # the API's failed compaction: a no-op block (the server keeps the history)
                raise ValueError(f"anthropic_compact: the server's compaction of {case.case_id} failed (a compaction "
                                 "block without content)")
            info.update(verbatim_messages=0, compaction_tokens=counter.count_text(summary))
            messages: list[BaseMessage] = [AIMessage(content=[block])]
            view = make_view(case, self.name, messages, counter, info=info, request=request, summary=summary,
                             summarizer_calls=1)
            view = replace(view, kept_tokens=counter.count_text(summary) + MESSAGE_OVERHEAD)
        if self.limit is None or target is None:
            return view
        return self.limit.record(view, target, {"trigger": trigger})


@dataclass
class AnthropicClearToolUses(ProviderArm):
    name: str = "anthropic_clear"
    provider: str = "anthropic"  # the provider whose server builds the views (fixed: Anthropic)
    trigger: int = 100_000  # input tokens at which the server clears (the API's default)
    keep: int = 3  # latest tool uses never cleared
    clear_at_least: int | None = None  # tokens the edit must reclaim, else it clears nothing (null: no floor)
    exclude_tools: Any = ()  # tool names whose uses are never cleared
    clear_tool_inputs: Any = False  # also clear the calls' inputs: true, false or a list of tool names
    view_max_tokens: int = 1  # cap on the reply of the view call (only its report is kept)
    budget: float | int | None = None  # share of each case's history tokens, or tokens (None: trigger)
    context: PolicyContext = field(default_factory=PolicyContext, repr=False)
    PROVIDER: ClassVar[str] = "anthropic"
    FEATURE: ClassVar[str] = "tool-result clearing (clear_tool_uses_20250919, beta context-management-2025-06-27)"
    order: ClassVar[int] = 23  # reports: beside context_edit, its client-side mirror

    def __post_init__(self) -> None:
        check_types(self, "arm")
        for key in ("trigger", "view_max_tokens"):
            if getattr(self, key) < 1:
                raise ConfigError(f"arm.{key} must be >= 1, got {getattr(self, key)}")
        if self.keep < 0 or (self.clear_at_least is not None and self.clear_at_least < 0):
            raise ConfigError("arm.keep and arm.clear_at_least must be >= 0")
        tools = [] if self.exclude_tools is None else self.exclude_tools
        if isinstance(tools, str) or not all(isinstance(t, str) for t in tools):
            raise ConfigError(f"arm.exclude_tools: expected a list of tool names, got {self.exclude_tools!r}")
        self.exclude_tools = tuple(tools)
        inputs = self.clear_tool_inputs
        if not isinstance(inputs, bool):
            if isinstance(inputs, str) or not all(isinstance(t, str) for t in inputs or []):
                raise ConfigError(f"arm.clear_tool_inputs: true, false or a list of tool names, got {inputs!r}")
            self.clear_tool_inputs = list(inputs)
        self.limit = Budget.parse(self.budget)
        self.connect()

    def edit(self, trigger: int) -> dict[str, Any]:
        """The ``clear_tool_uses_20250919`` edit (``BetaClearToolUses20250919EditParam``)."""
        edit: dict[str, Any] = {"type": "clear_tool_uses_20250919", "trigger": _tokens(trigger),
                                "keep": {"type": "tool_uses", "value": int(self.keep)}}
        if self.clear_at_least is not None:
            edit["clear_at_least"] = _tokens(self.clear_at_least)
        if self.exclude_tools:
            edit["exclude_tools"] = list(self.exclude_tools)
        if self.clear_tool_inputs:
            edit["clear_tool_inputs"] = self.clear_tool_inputs
        return edit

    def __call__(self, case: Case) -> View:
        counter = self.context.counter
        target, trigger = _trigger(self, case)
        edit = self.edit(trigger)
        reply, record = _view_call(self, case, [CONTEXT_BETA], edit, self.view_max_tokens)
        applied = [e for e in ((reply.response_metadata or {}).get("context_management") or {}).get("applied_edits") or []
                   if isinstance(e, dict) and e.get("type") == "clear_tool_uses_20250919"]
        cleared = sum(int(e.get("cleared_tool_uses") or 0) for e in applied)
        messages, indices = self._cleared(case, cleared)
        info = {"trigger": trigger, "keep": self.keep, "clear_at_least": self.clear_at_least,
                "applied_edits": applied, "cleared_tool_uses": cleared,
                "cleared_input_tokens": sum(int(e.get("cleared_input_tokens") or 0) for e in applied),
                "cleared_messages": indices, "call": _call_info(record, reply)}
        request = {"provider": "anthropic", "params": {"betas": [CONTEXT_BETA], "context_management": {"edits": [edit]}},
                   "send": "history"}
        view = make_view(case, self.name, messages, counter, info=info, request=request, summarizer_calls=1)
        if self.limit is None or target is None:
            return view
        return self.limit.record(view, target, {"trigger": trigger, "keep": self.keep})

    def _cleared(self, case: Case, count: int) -> tuple[list[BaseMessage], list[int]]:
        """The history with the ``count`` oldest clearable tool uses cleared, and the indices of their results
        (unchanged messages are the case's own objects)."""
        tools = {i: m for i, m in enumerate(case.messages) if isinstance(m, ToolMessage)}
        assistants = {i: m for i, m in enumerate(case.messages) if isinstance(m, AIMessage)}
        results = {m.tool_call_id: i for i, m in tools.items()}
        uses = [(i, call) for i, m in assistants.items() for call in m.tool_calls if call["name"] not in self.exclude_tools]
        chosen = uses[:count]
        if len(chosen) < count:
            raise ValueError(f"anthropic_clear: the server reports {count} tool uses cleared in {case.case_id}, "
                             f"which has {len(uses)} it may clear")
        messages = list(case.messages)
        indices = []
        inputs = self.clear_tool_inputs
        emptied: dict[int, set[str]] = {}
        for at, call in chosen:
            where = results.get(call.get("id") or "")
            if where is not None:
                old = tools[where]
                messages[where] = ToolMessage(CLEARED_TEXT, tool_call_id=old.tool_call_id, name=old.name, id=old.id)
                indices.append(where)
            if inputs is True or (isinstance(inputs, list) and call["name"] in inputs):
                emptied.setdefault(at, set()).add(call.get("id") or "")
        for at, ids in emptied.items():
            ai = assistants[at]
            calls = [{**c, "args": {}} if (c.get("id") or "") in ids else c for c in ai.tool_calls]
            messages[at] = AIMessage(content=ai.content, tool_calls=calls, id=ai.id)
        return messages, sorted(indices)

