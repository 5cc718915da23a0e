"""Errors every layer may raise and the entry point reports in one line (no traceback)."""

from __future__ import annotations

__all__ = ["ConfigError", "DatasetError"]


class ConfigError(ValueError):
    """A config value of the wrong type or out of range."""


class DatasetError(RuntimeError):
    """The source cannot be read at all (file, format, columns or hub); nothing was lost (bench.data)."""
