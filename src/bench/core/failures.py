"""A failure as the user reads it: the real error behind Hydra's wrapping, on one line."""

from __future__ import annotations

__all__ = ["innermost", "one_line"]


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

