"""Writing a command's result: ``--output`` files and stdout, each failure one line, never a traceback."""

from __future__ import annotations

import os
import sys
from pathlib import Path

__all__ = ["write_output", "print_text"]


def write_output(path: Path, text: str) -> str | None:
    """Write ``text`` to ``path``; the reason in one line when it cannot be written (nothing printed then)."""
    if path.is_dir():
        return f"--output {path} is a directory: give a file name"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as err:
        return f"--output {path}: cannot write it ({err.strerror or err})"
    return None


def print_text(text: str) -> int:
    """Print to stdout; a reader that stops early (``| head``) is no error."""
    try:
        print(text)
        sys.stdout.flush()
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)  # the interpreter flushes stdout again at exit
        os.dup2(devnull, sys.stdout.fileno())
    return 0
