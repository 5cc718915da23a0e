"""Lookups the question types answer from a reading: the k-th run of a command, a call, the events."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from bench.extract import CommandRun, command_runs
from bench.history import ToolEvent, args_text
from bench.reading.base import Reading, _fold, _Seen

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
    if reading.may_have_collapsed(tool):
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
