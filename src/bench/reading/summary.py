"""Reading the summary: its timeline and file list as tool events (the list the summarizers write, bench.formats)."""

from __future__ import annotations

import json
import re

from bench.formats import (
    NOTE_ACTION_CHARS,
    RETRY_NOTE,
    note_parts,
    parse_file_item,
    parse_omitted,
)
from bench.history import ToolEvent
from bench.profiles import Profile
from bench.reading.base import _bash_seen, _excerpt, _Seen

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
