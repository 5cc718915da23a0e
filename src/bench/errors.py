"""Errors every layer may raise and the entry point reports in one line (no traceback); the name a
command's usage and hints give it (:func:`program`)."""

from __future__ import annotations

import os
import sys

__all__ = ["BenchError", "ConfigError", "DatasetError", "program"]


def program(module: str) -> str:
    """The command as the user typed it, for usage lines and hints: the console script's name
    (``bench-report``) when run as one, else ``python -m <module>``."""
    name = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    return name if name.startswith("bench") and not name.endswith(".py") else f"python -m {module}"


class BenchError(Exception):
    """An error the user can fix (input, config, state on disk): the entry point prints its one line and
    exits 2. Every such error of the package derives from it, so ``main`` catches one type."""


class ConfigError(BenchError, ValueError):
    """A config value of the wrong type or out of range."""


class DatasetError(BenchError, RuntimeError):
    """The source cannot be read at all (file, format, columns or hub); nothing was lost (bench.selection)."""
