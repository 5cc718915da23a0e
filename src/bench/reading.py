"""What a view shows, as tool events in time order: the offline reader's way of reading.

The offline evidence reader (:mod:`bench.reader`) answers each question by applying the
question type's extractor to a :class:`Reading` of the view::

    reading, opened = read_view(view.messages, view.summary, case, store)

How a view is read, as tool events in time order (the events :mod:`bench.extract` works on):

1. **The summary** (``view.summary``) stands for everything before the view's messages.
   Two kinds of list in it are read, whatever their section is called:

   - a *timeline*: items ``- `command` -> output excerpt`` and ``- tool command /path ->
     reply excerpt``, optionally ending with `` [exit code N]`` and `` (stored:
     read_tool_output(handle="..."))``. The section with most such items is the timeline
     (other sections repeat a few calls, e.g. ``Recent action: ...``); each item is one call.
   - a *file list*: items ``- /path (create, str_replace x2)``.

   An excerpt counts as the call's output only when it is whole: ``output cleared``, ``no
   result`` and an excerpt cut with ``...`` are unknown output, so a test log whose excerpt
   is not its summary line yields nothing. The summary writes commands on one line, so a
   summary command is the same command as the question's when they are equal with
   whitespace folded; a command cut with ``...`` names only a prefix (it *may* be the
   command). An editor call in the summary does not quote its code.
2. **The messages**: tool calls and their results; a placeholder is unknown output. An
   assistant message that starts with a note of collapsed retries (``[Retries collapsed: N
   earlier failed attempt(s) of this action ...]``) adds the N removed attempts just before
   its own calls: failed shell runs with their output excerpts (failed editor attempts
   changed nothing). A note the summary quotes (cut, at no known place) only says that
   runs of the commands it shows, or of any command where it shows none, were removed.
3. **Handles**: a handle ``read_tool_output(handle="...")`` attached to a call (a
   placeholder, a timeline item, a collapsed attempt) that is in ``view.store`` can be
   opened; its stored output then replaces the excerpt. The reader opens the handles of the
   calls its answer reads (the asked run and input sent to it; for edits, editor calls whose
   reply, which tells whether the edit applied, is unknown) when the view alone gives no
   answer, or before answering under ``verify`` guidance. Each opened handle is a recorded
   retrieval. A handle named apart from any call (e.g. in a cut note) is not opened: its
   output could not be placed.

What a summary does not list is unknown, so an answer that depends on it is an abstention:
the k-th run of a command needs the summary's timeline, complete (no ``(N earlier items
omitted)``), and no earlier call that may be that command (a cut command, a removed retry
the summary mentions); the first edit needs the timeline complete (and is unanswerable when
it lies in the summary, which quotes no code); the changed files need the timeline or the
file list complete (shell edits such as ``sed -i`` show only in the timeline). A summary
with no timeline (the ``generic`` prompt, free text) thus answers no ordinal question.
Without a summary (``full``, ``nlatest``) the messages are all there is.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from typing import Any

from langchain_core.messages import BaseMessage, ToolMessage

from bench.extract import CommandRun, command_runs
from bench.formats import (
    NOTE_ACTION_CHARS,
    NOTE_DETAIL_CHARS,
    RETRY_NOTE,
    note_parts,
    parse_excerpt,
    parse_file_item,
    parse_omitted,
    parse_retry_note,
    placeholder_handle,
)
from bench.history import ToolEvent, args_text, tool_events
from bench.profiles import OPENHANDS, Profile
from bench.schema import Case
from bench.text import content_text

__all__ = ["Reading", "read_view", "find_run", "find_call", "events_of"]


def _fold(text: str) -> str:
    """Whitespace folded to single spaces (how a summary writes a command on one line)."""
    return re.sub(r"\s+", " ", text or "").strip()


@dataclass
class _Seen:
    """One tool call as the view shows it."""

    event: ToolEvent
    text: str  # command text as shown (a shell call) or ""
    handle: str | None = None  # stored output that opens this call's result
    exact: bool = True  # False: the summary's one-line form of the call
    prefix: bool = False  # the shown command (or arguments) is cut: it names only a prefix
    partial: bool = False  # the output shown is the tail of a longer output (a summary excerpt)


@dataclass
class Reading:
    """What a view shows: tool calls in time order, and what the summary leaves unknown."""

    profile: Profile = OPENHANDS  # the case's profile (which tool is a shell, an editor ...)
    events: list[_Seen] = field(default_factory=list)
    summary: bool = False  # a summary stands for the history before the messages
    timeline_complete: bool = False  # the summary lists every earlier call
    files_complete: bool = False  # the summary lists every earlier file touched with a path
    # Collapsed retries the summary mentions at no known place: command prefixes (complete or not).
    unplaced_runs: list[tuple[str, bool]] = field(default_factory=list)
    # Tools whose failed attempts notes of collapsed retries removed ("*": some tool, unknown).
    collapsed: set[str] = field(default_factory=set)

    @property
    def handles(self) -> list[str]:
        return list(dict.fromkeys(s.handle for s in self.events if s.handle))


# --- output excerpts ---------------------------------------------------------------------

def _excerpt(text: str, limit: int | None = None) -> tuple[str | None, str | None, bool]:
    """(output, handle, partial) of a timeline excerpt (:func:`bench.formats.parse_excerpt`)."""
    excerpt = parse_excerpt(text, limit)
    return excerpt.output, excerpt.handle, excerpt.partial


_HEREDOC = re.compile(r"<<-?\s*['\"]?\w+['\"]?")


def _shell_form(command: str, cut: bool) -> str:
    """A one-line command as far as it can be read for the files it writes: a heredoc body
    (written on the lines after the command, now run into it) and a cut last word dropped."""
    match = _HEREDOC.search(command)
    if match:
        return command[: match.end()]
    if cut:
        return command.rsplit(" ", 1)[0] if " " in command else ""
    return command


def _shell_name(profile: Profile) -> str:
    return profile.shell_tools[0] if profile.shell_tools else "shell"


def _bash_seen(profile: Profile, shown: str, output: str | None, handle: str | None, *, cut: bool,
               index: int = -1, cwd: str | None = None) -> _Seen:
    args = {profile.command_arg: _shell_form(shown, cut)}
    event = ToolEvent(index, None, "", _shell_name(profile), args, output, cwd)
    return _Seen(event, shown, handle, exact=False, prefix=cut)


# --- the summary ---------------------------------------------------------------------------

_HEADING = re.compile(r"^\s*(?:\d{1,2}[.)]|#{1,6})\s+\S")
_ITEM = re.compile(r"^\s*[-*]\s+(.*?)\s*$")
_CALL_ITEM = re.compile(r"^([A-Za-z_][\w.-]*) (\{.*?(?:\}|\.\.\.)) -> (.*)$")
_EDITOR_ITEM = re.compile(r"^([A-Za-z_][\w-]*) (?:([a-z_]+) )?(\S+) -> (.*)$")
_NOTE = RETRY_NOTE


def _sections(summary: str) -> list[list[str]]:
    """Bullet items grouped by numbered or markdown headings (one group when there are none)."""
    sections: list[list[str]] = [[]]
    for line in summary.splitlines():
        if _HEADING.match(line):
            sections.append([])
            continue
        match = _ITEM.match(line)
        if match:
            sections[-1].append(match.group(1))
    return [s for s in sections if s]


def _timeline_item(item: str, tools: set[str], profile: Profile) -> _Seen | None:
    """A call as a timeline item shows it, or None when the item is not a call."""
    if item.startswith("`"):
        end = item.find("` -> ")
        if end < 1:
            return None
        shown, rest = item[1:end], item[end + 5 :]
        cut = shown.endswith("...")
        output, handle, partial = _excerpt(rest)
        seen = _bash_seen(profile, shown[:-3].rstrip() if cut else shown, output, handle, cut=cut)
        seen.partial = partial
        return seen
    match = _CALL_ITEM.match(item)
    if match and match.group(1) in tools:  # a call of any tool, its arguments as JSON
        name, shown, rest = match.groups()
        output, handle, partial = _excerpt(rest)
        cut = shown.endswith("...")
        try:
            args = {} if cut else json.loads(shown)
        except (json.JSONDecodeError, ValueError):
            args, cut = {}, True
        if not isinstance(args, dict):
            args, cut = {}, True
        return _Seen(ToolEvent(-1, None, "", name, args, output), "", handle, exact=False, prefix=cut,
                     partial=partial)
    match = _EDITOR_ITEM.match(item)
    if not match or match.group(1) not in tools:
        return None
    name, command, path, rest = match.groups()
    output, handle, partial = _excerpt(rest)
    args = {profile.editor_path_arg: path, **({profile.editor_command_arg: command} if command else {})}
    return _Seen(ToolEvent(-1, None, "", name, args, output), "", handle, exact=False, partial=partial)


def _mentioned_retries(summary: str, tools: set[str]) -> list[tuple[str, bool]]:
    """Shell runs that notes of collapsed retries, quoted in the summary, say were removed:
    (command or its visible prefix, whether it is complete).

    The N attempts of a note are attempts at one action, so when the quote shows one of
    them as an editor call, all were failed editor calls (they changed nothing and are not
    runs). An attempt the quote does not show is a run of some command (prefix ``""``).
    """
    runs: list[tuple[str, bool]] = []
    for count, body in _NOTE.findall(summary):
        parts = note_parts(body)[: int(count)]
        shown = []
        for part in parts:
            end = part.find("` -> ")
            text = part[1:end] if end > 0 else part[1:].removesuffix("...").rstrip()
            shown.append((text, end > 0 and len(text) < NOTE_ACTION_CHARS))
        if any(text.split(" ", 1)[0] in tools for text, _ in shown):
            continue
        runs += shown + [("", False)] * (int(count) - len(shown))
    return runs


def _read_summary(summary: str, tools: set[str], profile: Profile
                  ) -> tuple[list[_Seen], bool, bool, list[tuple[str, bool]]]:
    """(events placed before the messages, timeline complete, file list complete, unplaced runs)."""
    timeline: list[_Seen] = []
    omitted_calls = True  # no timeline: every earlier call is unknown
    files: dict[str, dict[str, int]] | None = None
    omitted_files = True
    best_calls = best_files = 0
    for items in _sections(summary):
        calls = [seen for item in items if (seen := _timeline_item(item, tools, profile)) is not None]
        listed = [hit for item in items if (hit := parse_file_item(item)) is not None]
        omitted = any(parse_omitted(item) is not None for item in items)
        if len(calls) > best_calls:
            best_calls, timeline, omitted_calls = len(calls), calls, omitted
        if len(listed) > best_files:
            best_files, omitted_files = len(listed), omitted
            files = {}
            for path, ops in listed:
                for op, times in ops.items():
                    files.setdefault(path, {})[op] = files.get(path, {}).get(op, 0) + times
    # Edits the file list counts but the timeline does not show (it left them out as
    # older): editor calls of unknown outcome, before everything the timeline shows.
    earlier: list[_Seen] = []
    if omitted_calls and files:
        shown: dict[tuple[str, str], int] = {}
        for seen in timeline:
            key = (str(seen.event.args.get("path")), str(seen.event.args.get("command")))
            shown[key] = shown.get(key, 0) + 1
        for path, ops in files.items():
            for op in profile.edit_commands:
                for _ in range(ops.get(op, 0) - shown.get((path, op), 0)):
                    args = {profile.editor_command_arg: op, profile.editor_path_arg: path}
                    event = ToolEvent(-1, None, "", str(profile.editor_tool), args, None)
                    earlier.append(_Seen(event, "", exact=False))
    return earlier + timeline, not omitted_calls, not omitted_files, _mentioned_retries(summary, tools)


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
            if _NOTE.match(content_text(message.content)):
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
        if reading.unplaced_runs or _NOTE.search(summary):
            reading.collapsed.add("*")
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


# --- answering -----------------------------------------------------------------------------


def _may_be(shown: str, complete: bool, command: str) -> bool:
    return _fold(shown) == command if complete else command.startswith(_fold(shown))


def find_run(reading: Reading, command: str, wanted: Any) -> tuple[CommandRun, list[int]] | None:
    """The wanted run of ``command`` and the positions of its calls in ``reading.events``
    (the command, then input sent to it), or None when it is not shown or its ordinal is unknown."""
    if reading.summary and not reading.timeline_complete:
        return None  # earlier runs the summary left out
    profile = reading.profile
    folded = _fold(command)
    if any(_may_be(shown, complete, folded) for shown, complete in reading.unplaced_runs):
        return None  # a removed retry, at no known place, may be a run of it
    events: list[ToolEvent] = []
    starts: list[int] = []  # positions of the commands (not inputs) in order
    for index, seen in enumerate(reading.events):
        event = replace(seen.event, call_index=index)
        if profile.is_shell(event.name) and not profile.is_process_input(event.args):
            if seen.exact:
                same, maybe = seen.text.strip() == command, False
            else:
                same = not seen.prefix and _fold(seen.text) == folded
                maybe = seen.prefix and _may_be(seen.text, False, folded)
            name = command if same else (f"\0may-be-{index}" if maybe else f"\0other:{seen.text.strip()}")
            event = replace(event, args={**event.args, profile.command_arg: name})
            starts.append(index)
        events.append(event)
    for run in command_runs(events, profile):
        if run.command.startswith("\0may-be-"):
            return None  # a run before the wanted one may be a run of the command
        if run.command == command and run.ordinal == wanted:
            end = next((i for i in starts if i > run.call_index), len(events))
            inputs = [i for i in range(run.call_index + 1, end) if profile.is_shell(events[i].name)]
            return run, [run.call_index, *inputs]
    return None




def events_of(reading: Reading) -> list[ToolEvent]:
    """The reading's tool events, each with ``call_index`` set to its position in the reading."""
    return [replace(seen.event, call_index=i) for i, seen in enumerate(reading.events)]


def find_call(reading: Reading, target: dict[str, Any], whole_output: bool = False) -> tuple[_Seen, int] | None:
    """The ``target["ordinal"]``-th call of ``target["tool"]`` with ``target["arguments"]`` and its
    position, or None when it is not shown or its ordinal is unknown (a summary that lists
    calls incompletely, a call whose arguments are cut, collapsed retries of the tool).
    ``whole_output``: a call whose output the view shows only in part counts as unknown output."""
    if reading.summary and not reading.timeline_complete:
        return None
    tool, wanted, k = target["tool"], args_text(target["arguments"]), target["ordinal"]
    if tool in reading.collapsed or "*" in reading.collapsed:
        return None
    profile = reading.profile
    count = 0
    for position, seen in enumerate(reading.events):
        event = seen.event
        if event.name != tool:
            continue
        if seen.exact:
            same = args_text(event.args) == wanted
        elif profile.is_shell(tool):  # a summary shows a shell call by its command only
            if set(target["arguments"]) != {profile.command_arg} or seen.prefix:
                return None
            same = _fold(seen.text) == _fold(profile.command_of(target["arguments"]))
        elif seen.prefix:
            return None  # cut arguments: it may be the call
        else:
            same = args_text(event.args) == wanted
        if same:
            count += 1
            if count == k:
                if whole_output and seen.partial:
                    return replace(seen, event=replace(event, output=None)), position
                return seen, position
    return None
