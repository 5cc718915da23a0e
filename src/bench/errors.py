"""Errors every layer may raise and the entry point reports in one line (no traceback)."""

from __future__ import annotations

__all__ = ["BenchError", "ConfigError", "DatasetError"]


class BenchError(Exception):
    """An error the user can fix (input, config, state on disk): the entry point prints its one line and
    exits 2. Every such error of the package derives from it, so ``main`` catches one type."""


class ConfigError(BenchError, ValueError):
    """A config value of the wrong type or out of range."""


class DatasetError(BenchError, RuntimeError):
    """The source cannot be read at all (file, format, columns or hub); nothing was lost (bench.selection)."""
