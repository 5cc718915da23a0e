"""Tool calls paired with their results, in call order: what every reader of a history starts from.

A result belongs to the call it answers *in position*: the tool messages that follow an
assistant message answer its calls, matched by ``tool_call_id`` within that group only.
Real trajectories repeat call ids (OpenHands logs reuse them across steps), so pairing by id
over the whole history would give an early call a later call's output.

    events = tool_events(case.messages, case.profile)
    for event in events: event.name, event.args, event.output, event.result_index
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolCall, ToolMessage

from bench.profiles import Profile
from bench.text.content import content_text
from bench.text.formats import is_placeholder

__all__ = ["ToolEvent", "pair_results", "tool_events", "args_text", "steps", "clean_start", "unpaired", "calls_of"]


def calls_of(message: BaseMessage) -> list[ToolCall]:
    """The tool calls of an assistant message; any other message makes none."""
    return message.tool_calls if isinstance(message, AIMessage) else []


def args_text(args: dict[str, Any]) -> str:
    """A call's arguments as one line of JSON (keys sorted): how questions and summaries quote them."""
    return json.dumps(args, ensure_ascii=False, sort_keys=True)


@dataclass
class ToolEvent:
    """One tool call and its (cleaned) result, if the result is known."""

    call_index: int
    result_index: int | None
    call_id: str
    name: str
    args: dict[str, Any]
    output: str | None  # cleaned output; None when absent or cleared
    cwd: str | None = None  # working directory reported after the previous shell command
    raw: str | None = None  # the result as recorded (None when absent)


def pair_results(messages: list[BaseMessage]) -> dict[tuple[int, int], int]:
    """``(index of the assistant message, position of the call in it) -> index of its result``.

    Results are looked for among the tool messages right after the assistant message, by id,
    each result used once (so repeated ids within one step pair in order too).
    """
    pairs: dict[tuple[int, int], int] = {}
    for index, message in enumerate(messages):
        if not isinstance(message, AIMessage) or not message.tool_calls:
            continue
        group: list[tuple[int, ToolMessage]] = []
        end = index + 1
        while end < len(messages) and isinstance(tool := messages[end], ToolMessage):
            group.append((end, tool))
            end += 1
        used: set[int] = set()
        for position, call in enumerate(message.tool_calls):
            for result, tool in group:
                if result not in used and tool.tool_call_id == call.get("id"):
                    used.add(result)
                    pairs[(index, position)] = result
                    break
    return pairs


def tool_events(messages: list[BaseMessage], profile: Profile) -> list[ToolEvent]:
    """Tool calls in call order with their results (``output=None`` when absent or cleared)."""
    pairs = pair_results(messages)
    events: list[ToolEvent] = []
    cwd: str | None = None
    for index, message in enumerate(messages):
        if not isinstance(message, AIMessage):
            continue
        for position, call in enumerate(message.tool_calls):
            result_index = pairs.get((index, position))
            raw = content_text(messages[result_index].content) if result_index is not None else None
            output = (None if raw is None or is_placeholder(raw)
                      else profile.clean_result(raw, call["name"], call["args"] or {}))
            events.append(ToolEvent(index, result_index, call.get("id") or "", call["name"], call["args"] or {},
                                    output, cwd, raw))
            if profile.is_shell(call["name"]) and raw:
                found = profile.working_dirs(raw)
                if found:
                    cwd = found[-1]
    return events


# --- steps: a call and all its results -------------------------------------------------------
# The one home of the invariant "a step is an assistant message with the results of its calls":
# where a history may be cut (steps, clean_start) and where it breaks it (unpaired).

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
        if calls_of(messages[index]):
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


def unpaired(messages: list[BaseMessage]) -> Iterator[tuple[str, int | None, dict[str | None, int]]]:
    """Where calls and results break the step invariant, in order: ``("result", i, {id: i})`` a result
    whose call is not pending; ``("calls", i, {id: call index})`` calls whose results are missing when
    message ``i`` comes (``None``: the history ends). A call without an id (None) is answered by no result."""
    pending: dict[str | None, int] = {}
    for index, message in enumerate(messages):
        if isinstance(message, ToolMessage):
            if message.tool_call_id not in pending:
                yield "result", index, {message.tool_call_id: index}
            else:
                del pending[message.tool_call_id]
            continue
        if pending:
            yield "calls", index, pending
            pending = {}
        if isinstance(message, AIMessage):
            pending = {c["id"]: index for c in message.tool_calls}
    if pending:
        yield "calls", None, pending
