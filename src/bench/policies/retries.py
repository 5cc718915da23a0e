"""Retry chains: which tool results report a failed attempt, and which calls attempt the same thing.

Collapse (``mechanism.collapse``) folds consecutive failed attempts at one action followed by a
result into that result plus a note::

    result_failed(profile, raw)        # True / False, None when the result is unknown (cleared)
    call_key(profile, call)            # what a call attempts: equal keys, same action
"""

from __future__ import annotations

import functools
import posixpath
import re
import shlex

from langchain_core.messages import ToolCall

from bench.extract.history import args_text
from bench.profiles import Profile
from bench.text.formats import is_placeholder

__all__ = ["result_failed", "command_key", "call_key"]

_CD = re.compile(r"^\s*cd\s+\S+\s*(?:&&|;)\s*")
_ENV = re.compile(r"^\s*[A-Za-z_][A-Za-z0-9_]*=\S*\s+")


def result_failed(profile: Profile, raw: str | None) -> bool | None:
    """Whether a tool result reports a failure (None: result unknown or cleared)."""
    if raw is None or is_placeholder(raw):
        return None
    return profile.attempt_failed(raw)


@functools.lru_cache(maxsize=65536)
def command_key(command: str) -> tuple[str, str]:
    """What a shell command acts on: its program and first operand, after ``cd``/env prefixes.

    Two runs with the same key are attempts at the same thing (``pytest tests/a.py -x``
    and ``pytest tests/a.py -vv``); a different program or target is a different action.
    Memoized (a pure function of the text): the retry-chain detection asks for the key of
    every earlier command before each replayed model call, so without it ``shlex.split``
    ran O(steps^2) times per case.
    """
    text = command.strip()
    while True:
        stripped = _ENV.sub("", _CD.sub("", text, count=1), count=1)
        if stripped == text:
            break
        text = stripped
    first_line = text.splitlines()[0] if text else ""
    try:
        tokens = shlex.split(first_line)
    except ValueError:  # unbalanced quotes
        tokens = first_line.split()
    if not tokens:
        return ("", "")
    program = posixpath.basename(tokens[0])
    operand = next((t for t in tokens[1:] if not t.startswith("-") and t not in ("&&", "|", ";")), "")
    return (program, operand)


def call_key(profile: Profile, call: ToolCall) -> tuple | None:
    """What a call attempts: a shell command's program and target, an edit's command and file,
    any other call's arguments."""
    args = call.get("args") or {}
    name = call["name"]
    if profile.is_shell(name):
        if profile.is_process_input(args):
            return None  # input to a running process is not an attempt of its own
        return (name, *command_key(profile.command_of(args)))
    if profile.is_editor(name):
        return (name, str(args.get(profile.editor_command_arg, "")), str(args.get(profile.editor_path_arg, "")))
    return (name, args_text(args))
