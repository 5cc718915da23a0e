"""Shell command runs in a history: ordinals per command text, input folded into its run.

    runs = command_runs(tool_events(case.messages, case.profile), case.profile)
    runs[0].command, runs[0].ordinal, runs[0].output
"""

from __future__ import annotations

from dataclasses import dataclass, field

from bench.extract.history import ToolEvent
from bench.profiles import Profile

__all__ = ["CommandRun", "command_runs"]


@dataclass
class CommandRun:
    """One shell command run (inputs to a running process folded into it)."""

    command: str
    ordinal: int  # 1 for the first run of this exact command text
    call_index: int
    result_indices: list[int] = field(default_factory=list)
    output: str | None = None
    cwd: str | None = None


def command_runs(events: list[ToolEvent], profile: Profile) -> list[CommandRun]:
    """Shell command runs in order, with ordinals per exact command text.

    Input sent to a running process is folded into that run; a call whose result says it
    never executed (the sandbox failed) is not a run.
    """
    runs: list[CommandRun] = []
    seen: dict[str, int] = {}
    for event in events:
        if not profile.is_shell(event.name) or profile.never_ran(event.raw):
            continue
        if profile.is_process_input(event.args):
            if runs and event.output is not None:
                last = runs[-1]
                last.output = event.output if last.output is None else f"{last.output}\n{event.output}"
                if event.result_index is not None:
                    last.result_indices.append(event.result_index)
            continue
        command = profile.command_of(event.args).strip()
        seen[command] = seen.get(command, 0) + 1
        runs.append(
            CommandRun(
                command=command,
                ordinal=seen[command],
                call_index=event.call_index,
                result_indices=[event.result_index] if event.result_index is not None else [],
                output=event.output,
                cwd=event.cwd,
            )
        )
    return runs
