"""Reading the messages: tool calls and results, collapsed retries, placeholders; and a whole view (read_view)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from langchain_core.messages import BaseMessage, ToolMessage

from bench.formats import (
    NOTE_ACTION_CHARS,
    NOTE_DETAIL_CHARS,
    RETRY_NOTE,
    parse_retry_note,
    placeholder_handle,
)
from bench.history import tool_events
from bench.profiles import OPENHANDS, Profile
from bench.reading.base import Reading, _bash_seen, _excerpt, _Seen
from bench.reading.summary import _read_summary
from bench.schema import Case
from bench.text import content_text

# --- the messages --------------------------------------------------------------------------


def _note_attempts(profile: Profile, text: str, calls: list[dict[str, Any]], index: int,
                   cwd: str | None) -> list[_Seen]:
    """The removed attempts a note of collapsed retries at the start of ``text`` describes."""
    note = parse_retry_note(text)
    if note is None:
        return []
    count, parts = note
    bash = [i for i, c in enumerate(calls) if profile.is_shell(c["name"]) and not profile.is_process_input(c["args"])]
    seen: list[_Seen] = []
    for number in range(count):
        part = parts[number] if number < len(parts) else ""
        end = part.find("` -> ")
        actions, details = ([part[1:end]], [part[end + 5 :]]) if end > 0 else ([], [])
        if end > 0 and len(calls) > 1:  # one step of several calls: " | " and " / " join them
            actions, details = actions[0].split(" | "), details[0].split(" / ")
        known = len(actions) == len(calls) and len(details) == len(calls)
        for position in bash:
            if not known:  # the attempt cannot be read call by call: a run of some command
                seen.append(_bash_seen(profile, "", None, None, cut=True, index=index, cwd=cwd))
                continue
            shown = actions[position]
            output, handle, _ = _excerpt(details[position], NOTE_DETAIL_CHARS)
            cut = len(shown) >= NOTE_ACTION_CHARS
            seen.append(_bash_seen(profile, shown, output, handle, cut=cut, index=index, cwd=cwd))
    return seen


def _placeholder_handles(messages: list[BaseMessage]) -> dict[int, str]:
    """Index of each tool result shown as a placeholder with a handle -> the handle."""
    found = {}
    for index, message in enumerate(messages):
        if isinstance(message, ToolMessage) and (handle := placeholder_handle(content_text(message.content))):
            found[index] = handle
    return found


def _message_events(messages: list[BaseMessage], handles: dict[int, str], profile: Profile,
                    collapsed: set[str]) -> list[_Seen]:
    events = tool_events(messages, profile)
    first_call = {}
    for event in events:
        first_call.setdefault(event.call_index, event)
    seen: list[_Seen] = []
    for event in events:
        if first_call[event.call_index] is event:
            message = messages[event.call_index]
            if RETRY_NOTE.match(content_text(message.content)):
                collapsed.update(c["name"] for c in message.tool_calls)
            seen += _note_attempts(profile, content_text(message.content), message.tool_calls, event.call_index,
                                   event.cwd)
        text = profile.command_of(event.args) if profile.is_shell(event.name) else ""
        seen.append(_Seen(event, text, handles.get(event.result_index)))
    return seen


def _tool_names(case: Case | None, profile: Profile) -> set[str]:
    """Names a summary item may start with as a (non-shell) tool call."""
    names = {profile.editor_tool} if profile.editor_tool else set()
    for tool in (case.tools if case else []) or []:
        name = (tool.get("function") or {}).get("name") or tool.get("name")
        if name and not profile.is_shell(str(name)):
            names.add(str(name))
    return names


def read_view(messages: list[BaseMessage], summary: str | None = None, case: Case | None = None,
              store: dict[str, str] | None = None) -> tuple[Reading, list[str]]:
    """What the view shows, with the handles in ``store`` (handle -> stored output) opened.

    Returns the reading and the handles opened, in view order.
    """
    profile = case.profile if case is not None else OPENHANDS
    tools = _tool_names(case, profile)
    handles = _placeholder_handles(messages)
    if store:  # placeholders in the messages get their stored output back
        messages = [
            m.model_copy(update={"content": store[handles[i]]}) if handles.get(i) in store else m
            for i, m in enumerate(messages)
        ]
    reading = Reading(profile=profile)
    if summary:
        events, reading.timeline_complete, reading.files_complete, reading.unplaced_runs = _read_summary(
            summary, tools, profile)
        reading.summary = True
        reading.events.extend(events)
        if reading.unplaced_runs or RETRY_NOTE.search(summary):
            reading.collapsed_unknown = True
    reading.events.extend(_message_events(messages, handles, profile, reading.collapsed))
    opened: list[str] = []
    if store:
        for index, seen in enumerate(reading.events):
            if seen.handle and seen.handle in store:
                opened.append(seen.handle)
                if not seen.exact:  # a result the summary or a note shows: the stored output replaces it
                    output = profile.clean_result(store[seen.handle], seen.event.name, seen.event.args)
                    reading.events[index] = replace(seen, event=replace(seen.event, output=output), partial=False)
    return reading, list(dict.fromkeys(opened))
