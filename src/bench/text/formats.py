"""The text formats compaction writes into a view, each writer beside its parser.

The compact arm and the extractive summarizer write these; the offline reader
(:mod:`bench.text.view_contents`) and the evidence checks read them back. One definition each, tested
by round trip (``tests/bench/text/test_formats.py``):

- **handle reference** ``read_tool_output(handle="out_...")``: a stored output's handle;
- **placeholder** ``[Old tool result content cleared]``: micro_compact's replacement of a
  tool result, with ``Stored output: read_tool_output(...)`` when the output was stored;
- **stored note** ``[Stored output: read_tool_output(...)]``: appended to an output the
  summarizer sees in full although it is stored;
- **timeline item** ``ACTION -> EXCERPT [exit code N] (stored: read_tool_output(...))``:
  one tool call in a summary, the action being `` `command` ``, ``tool command /path`` or
  ``tool {json arguments}``; the excerpt is the output's last line (``... `` first when the
  output has more lines), ``output cleared``, ``no result`` or ``(no output)``; a cut text
  ends with ``...``;
- **omitted items** ``(N earlier items omitted)``: a capped list;
- **file item** ``/path (create, str_replace x2)``: the files a summary lists;
- **retry note** ``[Retries collapsed: N earlier failed attempt(s) of this action were removed
  from the history: `ACTIONS` -> DETAILS; ...]``: collapse's note on the final attempt.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "HANDLE_TOOL", "handle_ref", "find_handles",
    "PLACEHOLDER", "placeholder", "is_placeholder", "placeholder_handle",
    "stored_note", "strip_stored_note",
    "TAIL_MARK", "CLEARED", "NO_RESULT", "NO_OUTPUT", "CUT", "cut", "Excerpt", "format_excerpt", "parse_excerpt",
    "format_omitted", "parse_omitted", "format_file_item", "parse_file_item",
    "NOTE_ACTION_CHARS", "NOTE_DETAIL_CHARS", "Attempt", "format_retry_note", "note_detail", "RETRY_NOTE", "parse_retry_note",
    "note_parts",
]

# --- handles ---------------------------------------------------------------------------

HANDLE_TOOL = "read_tool_output"  # the tool that opens a stored output
_HANDLE_REF = re.compile(r"read_tool_output\(handle=\"([A-Za-z0-9_-]+)\"\)")


def handle_ref(handle: str) -> str:
    return f'{HANDLE_TOOL}(handle="{handle}")'


def find_handles(text: str | None) -> list[str]:
    """Handles referenced in a text, in order."""
    return _HANDLE_REF.findall(text or "")


# --- placeholder -------------------------------------------------------------------------

PLACEHOLDER = "[Old tool result content cleared]"


def placeholder(handle: str | None = None) -> str:
    """The fixed placeholder text; with a handle, how to get the content back."""
    return PLACEHOLDER if handle is None else f"{PLACEHOLDER} Stored output: {handle_ref(handle)}"


def is_placeholder(text: str | None) -> bool:
    return text is not None and text.startswith(PLACEHOLDER)


def placeholder_handle(text: str | None) -> str | None:
    if not is_placeholder(text):
        return None
    found = find_handles(text)
    return found[0] if found else None


# --- stored note -------------------------------------------------------------------------

_STORED_NOTE = re.compile(r"\n?\[Stored output: read_tool_output\(handle=\"[A-Za-z0-9_-]+\"\)\]\s*$")


def stored_note(handle: str) -> str:
    """The line appended to an output the summarizer sees in full although it is stored."""
    return f"[Stored output: {handle_ref(handle)}]"


def strip_stored_note(text: str) -> str:
    return _STORED_NOTE.sub("", text)


# --- timeline excerpts -------------------------------------------------------------------

TAIL_MARK = "... "  # the excerpt is the last line of a longer output
CLEARED = "output cleared"
NO_RESULT = "no result"
NO_OUTPUT = "(no output)"
CUT = "..."  # a cut text ends with this


def cut(text: str, limit: int) -> str:
    """``text`` on one line, cut to ``limit`` characters (ending with ``...`` when cut)."""
    text = re.sub(r"\s+", " ", text or "").strip()
    return text if len(text) <= limit else text[: limit - 3].rstrip() + CUT


@dataclass
class Excerpt:
    """What a timeline item says of a call's output."""

    output: str | None  # None: cleared, no result, or cut (unknown)
    handle: str | None = None
    partial: bool = False  # the last line of a longer output
    exit_code: int | None = None


_STORED_SUFFIX = re.compile(r"\s*\(stored: read_tool_output\(handle=\"([A-Za-z0-9_-]+)\"\)\)\s*$")
_EXIT_SUFFIX = re.compile(r"\s*\[exit code (-?\d+)\]\s*$")


def format_excerpt(output: str | None, *, cleared: bool = False, limit: int = 200, exit_code: int | None = None,
                   handle: str | None = None) -> str:
    """A call's output as a timeline item writes it (``output`` None: no result)."""
    if cleared:
        text = CLEARED
    elif output is None:
        text = NO_RESULT
    else:
        lines = [line for line in output.splitlines() if line.strip()]
        text = cut(lines[-1], limit) if lines else NO_OUTPUT
        if len(lines) > 1:
            text = TAIL_MARK + text
    status = f" [exit code {exit_code}]" if exit_code not in (None, 0) else ""
    stored = f" (stored: {handle_ref(handle)})" if handle else ""
    return f"{text}{status}{stored}"


def parse_excerpt(text: str, limit: int | None = None) -> Excerpt:
    """What an excerpt says; a cut one (or, with ``limit``, one as long as the limit) is unknown."""
    handle = None
    match = _STORED_SUFFIX.search(text)
    if match:
        handle, text = match.group(1), text[: match.start()]
    code = None
    match = _EXIT_SUFFIX.search(text)
    if match:
        code, text = int(match.group(1)), text[: match.start()]
    text = text.strip()
    if text in (CLEARED, NO_RESULT) or text.endswith(CUT) or (limit is not None and len(text) >= limit):
        return Excerpt(None, handle, False, code)
    partial = text.startswith(TAIL_MARK)
    if partial:
        text = text[len(TAIL_MARK):]
    return Excerpt("" if text == NO_OUTPUT else text, handle, partial, code)


# --- lists ---------------------------------------------------------------------------------

_OMITTED = re.compile(r"^\((\d+) earlier items omitted\)$")


def format_omitted(count: int) -> str:
    return f"({count} earlier items omitted)"


def parse_omitted(item: str) -> int | None:
    match = _OMITTED.match(item.strip())
    return int(match.group(1)) if match else None


_FILE_ITEM = re.compile(r"^(\S+) \(((?:[A-Za-z_]+(?: x\d+)?)(?:, [A-Za-z_]+(?: x\d+)?)*)\)$")


def format_file_item(path: str, ops: dict[str, int]) -> str:
    """``/path (create, str_replace x2)``: a file and how often each operation touched it."""
    return f"{path} ({', '.join(op if n == 1 else f'{op} x{n}' for op, n in ops.items())})"


def parse_file_item(item: str) -> tuple[str, dict[str, int]] | None:
    match = _FILE_ITEM.match(item)
    if not match:
        return None
    ops: dict[str, int] = {}
    for part in match.group(2).split(", "):
        op, _, times = part.partition(" x")
        ops[op] = ops.get(op, 0) + (int(times) if times else 1)
    return match.group(1), ops


# --- retry notes ---------------------------------------------------------------------------

NOTE_ACTION_CHARS = 120  # a note cuts an attempt's action to this many characters, unmarked
NOTE_DETAIL_CHARS = 160  # and its output line to this many
RETRY_NOTE = re.compile(
    r"\[Retries collapsed: (\d+) earlier failed attempt\(s\) of this action were removed from the "
    r"history: ([^\n]*)"
)


@dataclass
class Attempt:
    """One removed attempt: the action of each of its calls and the last line of each result."""

    actions: list[str]
    details: list[str]  # each detail may end with a stored suffix


def _action(text: str) -> str:
    return re.sub(r"\s+", " ", text)[:NOTE_ACTION_CHARS]


def format_retry_note(attempts: list[Attempt]) -> str:
    """The note collapse puts before the final attempt's text."""
    parts = [f"`{' | '.join(_action(a) for a in attempt.actions)}` -> {' / '.join(attempt.details)}"
             for attempt in attempts]
    return (f"[Retries collapsed: {len(attempts)} earlier failed attempt(s) of this action were "
            f"removed from the history: {'; '.join(parts)}]")


def note_detail(output_line: str | None, handle: str | None = None) -> str:
    """One result of an attempt: its last line (cut), then where it is stored."""
    line = re.sub(r"\s+", " ", output_line).strip()[:NOTE_DETAIL_CHARS] if output_line else NO_OUTPUT
    return line + (f" (stored: {handle_ref(handle)})" if handle else "")


def note_parts(body: str) -> list[str]:
    """The attempts' texts of a note body (each starts with a backquoted action)."""
    return [p for p in re.split(r"; (?=`)", body) if p.startswith("`")]


def parse_retry_note(text: str) -> tuple[int, list[str]] | None:
    """``(count, attempt texts)`` of a note at the start of ``text``, or None."""
    match = RETRY_NOTE.match(text)
    if not match:
        return None
    return int(match.group(1)), note_parts(match.group(2).removesuffix("]"))
