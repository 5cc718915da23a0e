"""How test runners and tracebacks print, for the outputs the rows record: pytest's separator
and result lines, and the line number a traceback names."""

from __future__ import annotations

__all__ = ["pytest_sep", "pytest_line", "lineno"]


def pytest_sep(title: str, ch: str = "=", width: int = 80) -> str:
    """A pytest separator line such as '==== 1 failed, 4 passed in 0.31s ===='."""
    if not title:
        return ch * width
    n = max((width - len(title) - 2) // len(ch) // 2, 1)
    line = f"{ch * n} {title} {ch * n}"
    if len(line) + len(ch) <= width:
        line += ch
    return line


def pytest_line(left: str, right: str, width: int = 80) -> str:
    return left + " " * max(width - len(left) - len(right), 1) + right


def lineno(text: str, needle: str) -> int:
    """1-based line number of the first line containing ``needle``."""
    for i, line in enumerate(text.split("\n"), 1):
        if needle in line:
            return i
    raise AssertionError(f"{needle!r} not found")
