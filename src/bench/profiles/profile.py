"""The source-profile interface: what a source's tools and tool outputs mean.

A :class:`Profile` is data (names and patterns), so a case can carry the profile it was
read with (``cases.jsonl`` stores it) and every later step (questions, views, the offline
reader, the answering agent) interprets the history the same way. No module outside
``bench.profiles`` names a tool or an output marker: they ask the case's profile.

    profile = get_profile("openhands")
    profile.is_shell("execute_bash"), profile.clean(raw_output), profile.is_error(output)
"""

from __future__ import annotations

import functools
import re
import typing
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any, TypeVar, overload

__all__ = ["Profile", "profile_problems", "PATTERN_FIELDS"]

_Raw = TypeVar("_Raw")  # a row's value of any other type, passed through unchanged

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")  # terminal colours in test runner output


@functools.lru_cache(maxsize=256)
def _rx(pattern: str, flags: int = 0) -> re.Pattern[str]:
    return re.compile(pattern, flags)


# Fields a record holds only when set, so records of profiles without them stay as they were.
_LATER_FIELDS = ("write_tools", "write_key_args", "roles")

# A result wrapped whole in the harness's envelope: ``<returncode>N</returncode>`` then the output in
# ``<output>...</output>`` (or either alone).
_RETURNCODE = re.compile(r"\A\s*<returncode>\s*-?\d+\s*</returncode>[ \t]*\n?")
_OUTPUT = re.compile(r"\A\s*<output>[ \t]*\n?(.*?)\n?[ \t]*</output>\s*\Z", re.S)
# The same harness's form for a long output (mini-swe-agent): its own warning, then the output's head and tail
# around a count of the characters it elided. The output is the head and the tail; the rest is the harness's.
_LONG_OUTPUT = re.compile(r"\A\s*(?:<warning>.*?</warning>\s*)?<output_head>[ \t]*\n?(.*?)\n?[ \t]*</output_head>\s*"
                          r"<elided_chars>[^<]*</elided_chars>\s*<output_tail>[ \t]*\n?(.*?)\n?[ \t]*</output_tail>\s*\Z",
                          re.S)
# A line that only reports how a command ended: "Exit code: 1", "[exit code 0]", "exit status 2", "returncode: 1".
_EXIT_LINE = re.compile(r"^[ \t]*\[?(?:exit(?:ed with)?[ _]code|exit[ _]status|return[ _]?code)[ \t]*[:=]?[ \t]*-?\d+\]?"
                        r"[ \t]*$", re.I)


def _unwrap(text: str) -> str:
    """A result without the ``<returncode>``/``<output>`` envelope around all of it (for a long output:
    without the warning and the elision count around its head and tail)."""
    stripped = _RETURNCODE.sub("", text, count=1)
    long = _LONG_OUTPUT.match(stripped)
    if long and not any(tag in part for part in long.groups() for tag in ("<output_head>", "</output_tail>")):
        return f"{long.group(1)}\n{long.group(2)}"
    inner = _OUTPUT.match(stripped)
    if inner and "<output>" not in inner.group(1) and "</output>" not in inner.group(1):  # one envelope, whole
        return inner.group(1)
    return stripped


def _strip_exit_lines(text: str) -> str:
    """A shell result without exit-code lines (and the blank lines they leave) at its start or end."""
    lines = text.split("\n")
    for end in (-1, 0):
        if lines and _EXIT_LINE.match(lines[end]):
            while lines and (_EXIT_LINE.match(lines[end]) or not lines[end].strip()):
                lines.pop(end)
    return "\n".join(lines)


@dataclass(frozen=True)
class Profile:
    """What a source's tools mean. Every field has a neutral default (no such tool)."""

    name: str
    # Shell tools: each runs the command in ``command_arg``; ``input_arg`` true (or a command in
    # ``process_inputs``) means input sent to a running process, not a new command run.
    shell_tools: tuple[str, ...] = ()
    command_arg: str = "command"
    input_arg: str | None = None
    process_inputs: tuple[str, ...] = ()
    # The file editor: ``editor_commands`` maps each editing command to the argument holding the
    # text it inserts; ``editor_old_arg`` holds the text a replacement removes.
    editor_tool: str | None = None
    editor_command_arg: str = "command"
    editor_path_arg: str = "path"
    editor_commands: tuple[tuple[str, str], ...] = ()
    editor_old_arg: str | None = None
    editor_undo: str | None = None  # the command that reverts the last edit of a file
    editor_failures: tuple[str, ...] = ()  # reply phrases that mean the edit was not applied
    failure_markers: tuple[str, ...] = ()  # other phrases at the start of a result that mean the call failed
    finish_tools: tuple[str, ...] = ()  # tools that end the episode (their argument may carry the answer)
    think_tools: tuple[str, ...] = ()  # tools that only log a thought
    # Output decoration added by the harness, stripped before anything reads an output.
    output_prefix: str | None = None  # a prefix at the start of an output
    output_markers: str | None = None  # markers anywhere (often glued to the last line)
    cwd_marker: str | None = None  # group 1: the working directory after a shell command
    # A shell prompt line at the start of a shell result (the harness echoing ``user@host:dir$ cmd``).
    shell_prompt: str | None = None
    exit_code_marker: str | None = None  # group 1: the exit code of a shell command
    error_result: str | None = None  # a result that reports an error (matched at its start)
    not_run: str | None = None  # a result that says the action never executed
    repo_root_marker: str | None = None  # group 1: the repository root, in the first user message
    # State-changing tools (``write_actions``): names matched in full by this pattern; the arguments
    # an answer must give for each (empty: the identifier arguments, ``id`` / ``*_id``, else all scalars).
    write_tools: str | None = None
    write_key_args: tuple[str, ...] = ()
    # Roles other than system/user/assistant/tool: each mapped to one of those, or "skip" (dropped).
    roles: tuple[tuple[str, str], ...] = ()
    extra: dict[str, Any] = field(default_factory=dict, compare=False)  # free notes (provenance)

    # --- tools -------------------------------------------------------------------------
    def is_shell(self, name: str) -> bool:
        return name in self.shell_tools

    def is_editor(self, name: str) -> bool:
        return self.editor_tool is not None and name == self.editor_tool

    def is_finish(self, name: str) -> bool:
        return name in self.finish_tools

    def is_think(self, name: str) -> bool:
        return name in self.think_tools

    def is_write(self, name: str) -> bool:
        """A state-changing tool (``write_tools``), never a finish or think tool."""
        return bool(self.write_tools and _rx(self.write_tools).fullmatch(name)) \
            and not self.is_finish(name) and not self.is_think(name)

    @overload
    def role_of(self, role: str) -> str: ...
    @overload
    def role_of(self, role: _Raw) -> _Raw: ...
    def role_of(self, role: object) -> object:
        """The chat role a message of ``role`` is read as ("skip": dropped); unknown roles unchanged."""
        return dict(self.roles).get(role, role) if isinstance(role, str) else role

    def command_of(self, args: dict[str, Any]) -> str:
        return str(args.get(self.command_arg, ""))

    def is_process_input(self, args: dict[str, Any]) -> bool:
        """Input sent to a running process (not a new command run)."""
        if self.input_arg and str(args.get(self.input_arg, "")).lower() == "true":
            return True
        return self.command_of(args).strip().lower() in self.process_inputs

    def edit_argument(self, command: object) -> str | None:
        """The argument holding the text an editor command inserts (None: not an edit)."""
        return dict(self.editor_commands).get(command) if isinstance(command, str) else None

    @property
    def edit_commands(self) -> tuple[str, ...]:
        return tuple(c for c, _ in self.editor_commands)

    @property
    def has_repository(self) -> bool:
        """Whether the source edits a repository (the coding question types apply)."""
        return bool(self.editor_tool or self.shell_tools)

    # --- outputs -----------------------------------------------------------------------
    def clean(self, text: str | None) -> str:
        """An output without harness decoration or ANSI colours, ``\\r\\n`` folded to ``\\n``."""
        if not text:
            return ""
        text = _ANSI.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))
        if self.output_prefix:
            text = _rx(self.output_prefix).sub("", text, count=1)
        if self.output_markers:
            text = _rx(self.output_markers, re.I).sub("", text)
        # Markers on their own line leave empty trailing lines behind.
        return re.sub(r"\n{2,}$", "\n", text).rstrip("\n")

    def clean_result(self, raw: str | None, name: str, args: dict[str, Any]) -> str:
        """A call's result as references and readers read it: :meth:`clean`, without the
        ``<returncode>N</returncode><output>...</output>`` envelope some harnesses put around
        every result (mini-swe-agent), and for a shell tool without the prompt line or echoed
        command that may open it, the bare prompt line that may close it and an exit-code line
        at either end (issues 17 item 3, 31 item 2). For every profile: the envelope and these
        lines are the harness's, never the tool's output."""
        text = _unwrap(self.clean(raw))
        if not text or not self.is_shell(name):
            return text
        text = _strip_exit_lines(text)
        command = " ".join(self.command_of(args).split())
        for _ in range(2):  # a prompt line, then the command echoed on its own line (either or both)
            head, _, rest = text.lstrip("\n").partition("\n")
            folded = " ".join(head.split())
            prompt = bool(self.shell_prompt) and bool(_rx(self.shell_prompt).match(head))
            if not folded or not (prompt or (command and folded == command)):
                break
            text = rest
        if self.shell_prompt:  # the bare prompt the shell prints after the output
            head, _, last = text.rstrip().rpartition("\n")
            match = _rx(self.shell_prompt).match(last)
            if match and not last[match.end():].strip():
                text = head
        return text

    def is_error(self, raw: str | None) -> bool:
        """The result reports an error (the tool refused or failed), by the profile's pattern."""
        if not raw or not self.error_result:
            return False
        return bool(_rx(self.error_result, re.I).match(self.clean(raw).lstrip()))

    def never_ran(self, raw: str | None) -> bool:
        """The result says the action never executed (the sandbox failed, a gateway timeout)."""
        return bool(raw and self.not_run and _rx(self.not_run).search(raw))

    def exit_codes(self, raw: str | None) -> list[int]:
        if not raw or not self.exit_code_marker:
            return []
        return [int(code) for code in _rx(self.exit_code_marker).findall(raw)]

    def working_dirs(self, raw: str | None) -> list[str]:
        if not raw or not self.cwd_marker:
            return []
        return [d.strip() for d in _rx(self.cwd_marker).findall(raw)]

    def editor_failed(self, output: str | None) -> bool:
        """The editor's reply says the edit was not applied (unknown output counts as applied)."""
        if output is None:
            return False
        head = output.lstrip()[:400].lower()
        return head.startswith("error") or any(marker in head for marker in self.editor_failures)

    def attempt_failed(self, raw: str | None) -> bool:
        """Whether a recorded result reports a failed attempt (a non-zero exit code, an error
        reply, a timeout): what makes consecutive attempts a retry chain."""
        codes = self.exit_codes(raw)
        if codes:
            return codes[-1] != 0
        head = self.clean(raw).lstrip()[:400].lower()
        if any(marker in head for marker in self.failure_markers):
            return True
        return self.is_error(raw) or any(marker in head for marker in self.editor_failures)

    def repo_root(self, first_user_text: str) -> str | None:
        if not self.repo_root_marker:
            return None
        match = _rx(self.repo_root_marker, re.S).search(first_user_text or "")
        return match.group(1).rstrip("/") if match else None

    # --- records -----------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["editor_commands"] = {c: a for c, a in self.editor_commands}
        data["roles"] = {r: m for r, m in self.roles}
        for name in _LATER_FIELDS:  # added after records were pinned: written only when set
            if not data[name]:
                del data[name]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Profile:
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        for key, value in values.items():
            if key in ("editor_commands", "roles"):
                items = value.items() if isinstance(value, dict) else value
                values[key] = tuple((str(c), str(a)) for c, a in items)
            elif isinstance(value, list):
                values[key] = tuple(value)
        return cls(**values)

    def with_overrides(self, **overrides: object) -> Profile:
        """This profile with some fields replaced (``None`` values are ignored)."""
        given: dict[str, Any] = {k: (tuple(v) if isinstance(v, list) else v) for k, v in overrides.items() if v is not None}
        if isinstance(given.get("roles"), dict):
            given["roles"] = tuple((str(r), str(m)) for r, m in given["roles"].items())
        return replace(self, **given) if given else self


# The fields that hold a regular expression, each with the groups its reader takes: an exit code, a
# working directory or a repository root is the pattern's group 1 (``exit_codes``, ``working_dirs``,
# ``repo_root``); the others are matched whole.
PATTERN_FIELDS = {"output_prefix": 0, "output_markers": 0, "cwd_marker": 1, "shell_prompt": 0, "exit_code_marker": 1,
                  "error_result": 0, "not_run": 0, "repo_root_marker": 1, "write_tools": 0}


def profile_problems(profile: Any) -> list[str]:
    """What a profile has wrong, as its registration checks it: a name usable as ``dataset.profile``, the
    tool lists as tuples of names, the pairs as pairs, every pattern a regular expression with the groups
    its reader takes (a wrong one would fail only on the first row that reaches it)."""
    if not isinstance(profile, Profile):
        return [f"not a bench.profiles.Profile (got {type(profile).__name__})"]
    found = []
    if not re.fullmatch(r"[a-z][a-z0-9_]*", profile.name or ""):
        found.append(f"name must be lower case letters, digits and _ (it is dataset.profile), got {profile.name!r}")
    hints = typing.get_type_hints(Profile)
    for item in fields(Profile):
        value = getattr(profile, item.name)
        args = typing.get_args(hints[item.name])
        if typing.get_origin(hints[item.name]) is not tuple or args[-1:] != (...,):
            continue
        pairs = args[0] is not str
        if not isinstance(value, tuple) or not all(
                (isinstance(v, tuple) and len(v) == 2 and all(isinstance(x, str) for x in v)) if pairs
                else isinstance(v, str) for v in value):
            what = "a tuple of (name, value) pairs" if pairs else "a tuple of names"
            found.append(f"{item.name} must be {what} (got {value!r})")
    for name, groups in PATTERN_FIELDS.items():
        pattern = getattr(profile, name)
        if pattern is None:
            continue
        try:
            compiled = re.compile(pattern)
        except (re.error, TypeError) as err:
            found.append(f"{name} is not a regular expression ({err})")
            continue
        if groups and compiled.groups != groups:
            found.append(f"{name} must have {groups} group (what its reader takes), got {compiled.groups}")
    return found
