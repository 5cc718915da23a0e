"""Errors every layer may raise and the entry point reports in one line (no traceback)."""

from __future__ import annotations

__all__ = ["ConfigError", "DatasetError", "innermost", "one_line"]


class ConfigError(ValueError):
    """A config value of the wrong type or out of range."""


class DatasetError(RuntimeError):
    """The source cannot be read at all (file, format, columns or hub); nothing was lost (bench.data)."""


def innermost(err: BaseException) -> BaseException:
    """The real error: Hydra's instantiate wraps a constructor's error in 'Error in call to target ...'."""
    from hydra.errors import InstantiationException

    while isinstance(err, InstantiationException) and err.__cause__ is not None:
        err = err.__cause__
    return err


def one_line(err: BaseException) -> str:
    """The first line of the innermost error's message (its type name if it has none)."""
    root = innermost(err)
    text = str(root).strip()
    return text.splitlines()[0] if text else type(root).__name__
