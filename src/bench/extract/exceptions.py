"""The first exception a command's output shows: a Python traceback's last line, a Python syntax
error without a traceback header, a Java ``pkg.SomeException: message`` line.

    parse_first_exception(output)   # ({"type", "message"}, the line) or None
"""

from __future__ import annotations

import re

__all__ = ["parse_first_exception"]

_TRACEBACK = "Traceback (most recent call last):"
_PY_EXCEPTION = re.compile(r"^([A-Za-z_][\w.]*)(?::[ \t]?(.*))?$")
_JAVA_EXCEPTION = re.compile(
    r"^\s*(?:Exception in thread \"[^\"]*\"\s+|Caused by:\s+)?"
    r"((?:[a-zA-Z_$][\w$]*\.)+(?:[A-Za-z_$][\w$]*)?(?:Exception|Error))(?::\s*(.*?))?\s*$"
)
# Python reports a syntax error of the script it was asked to run without a traceback header:
#   File "x.py", line 3 / the line / a caret / SyntaxError: invalid syntax
_PY_SYNTAX = re.compile(r"^((?:SyntaxError|IndentationError|TabError))(?::[ \t]?(.*))?$")
_PY_FILE_LINE = re.compile(r'^\s*File "[^"]+", line \d+')


def _python_exception(lines: list[str], start: int) -> tuple[int, dict[str, str]] | None:
    for index in range(start + 1, len(lines)):
        line = lines[index]
        if not line.strip() or line[0] in " \t":
            continue
        match = _PY_EXCEPTION.match(line.rstrip())
        if match:
            return index, {"type": match.group(1), "message": (match.group(2) or "").strip()}
        return None
    return None


def parse_first_exception(output: str | None) -> tuple[dict[str, str], str] | None:
    """The first exception an output shows, and its line: a Python traceback's last line, a
    Python syntax error printed without a traceback header (after its ``File ..., line N``
    lines), or a Java ``pkg.SomeException: message`` line (also ``Exception in thread "main"
    java.lang.Exception: ...``)."""
    if not output:
        return None
    lines = output.splitlines()
    for index, line in enumerate(lines):
        if line.strip() == _TRACEBACK:
            hit = _python_exception(lines, index)
            if hit:
                return hit[1], lines[hit[0]].strip()
        match = _PY_SYNTAX.match(line.rstrip())
        if match and any(_PY_FILE_LINE.match(earlier) for earlier in lines[max(0, index - 6):index]):
            return {"type": match.group(1), "message": (match.group(2) or "").strip()}, line.strip()
        match = _JAVA_EXCEPTION.match(line)
        if match:
            return {"type": match.group(1), "message": (match.group(2) or "").strip()}, line.strip()
    return None
