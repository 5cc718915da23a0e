"""The reading of a view: tool events seen, in time order, and how output excerpts are read."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from bench.formats import (
    parse_excerpt,
)
from bench.history import ToolEvent
from bench.profiles import OPENHANDS, Profile


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
    # Tools whose failed attempts notes of collapsed retries removed.
    collapsed: set[str] = field(default_factory=set)
    collapsed_unknown: bool = False  # the summary quotes such a note: attempts of some tool, unknown which

    def may_have_collapsed(self, tool: str) -> bool:
        """Whether removed retries may have been calls of ``tool`` (so its calls cannot be counted)."""
        return self.collapsed_unknown or tool in self.collapsed

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
