"""Errors every layer may raise and the entry point reports in one line (no traceback); the console
scripts' guard (:func:`console_script`): output to a reader that stopped early (``| head``) is no
error, output that cannot be written (``> /dev/full``) or a file-system error that escapes is one line
on stderr, exit 2; and the name a command's usage lines and hints give it (:func:`program`)."""

from __future__ import annotations

import errno
import functools
import os
import sys
from collections.abc import Callable
from typing import Any

__all__ = ["BenchError", "ConfigError", "DatasetError", "console_script", "program", "quiet_stdout"]


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
    """The source cannot be read at all (file, format, columns or hub); nothing was lost (bench.data.selection)."""


def quiet_stdout() -> None:
    """Point stdout at /dev/null: the interpreter flushes it again at exit, which must not fail too."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # no real file behind stdout (a test's capture)
        pass


def _os_error_line(err: OSError) -> str:
    where = f": {err.filename}" if getattr(err, "filename", None) else ""
    return f"{err.strerror or err}{where}"


def _report(err: OSError) -> int:
    """The one line for an OSError that ended a command; its exit code (2)."""
    quiet_stdout()
    if err.filename is None and err.errno in (errno.ENOSPC, errno.EIO, errno.EFBIG, errno.EDQUOT):
        text = f"cannot write the output: {err.strerror or err}"  # stdout itself (> /dev/full)
    else:
        text = _os_error_line(err)
    print(f"error: {text}", file=sys.stderr)
    return 2


def _flush() -> int | None:
    """Write out what the command printed: None when done (or the reader is gone), 2 when it cannot be."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        quiet_stdout()
    except OSError as err:
        return _report(err)
    return None


def console_script(main: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap a console script's entry point (``[project.scripts]``): a reader that stopped early
    (BrokenPipeError) ends the command quietly, with the code it would have had (0 when it was cut
    short); stdout that cannot be written (a full disk, ``/dev/full``) or another OSError that escapes
    is ``error: ...`` on stderr, exit 2."""

    @functools.wraps(main)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        import logging

        # a log line to a console that went away (| head) is dropped, not a "--- Logging error ---" trace
        logging.raiseExceptions = False
        try:
            result = main(*args, **kwargs)
        except SystemExit:
            if _flush() is not None:
                raise SystemExit(2) from None
            raise
        except BrokenPipeError:
            quiet_stdout()
            return 0
        except OSError as err:
            if err.errno is None:  # not the system's (Hydra's MissingConfigException is an IOError): as raised
                raise
            return _report(err)
        failed = _flush()
        return result if failed is None else failed

    return guarded
