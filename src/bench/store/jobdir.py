"""Job directories: fresh names, the one-job-per-directory rule, and the lock a running job holds.

* :func:`claim_dir` makes a new directory that no other job has (``outputs/<date>/<time>_<arm>``,
  then ``..._<arm>-2``, ``-3`` ... when two jobs start in the same second): ``os.mkdir`` is
  atomic, so two processes never get the same one. Hydra's default run and sweep directories are
  claimed with it by :class:`bench.cli.callbacks.FreshDirCallback` (the run directory's name comes from
  the ``bench.run_dir`` resolver, registered by :mod:`bench.config.checks`).
* :func:`check_new` refuses a new job in a directory that already holds anything but what Hydra
  writes before the job starts (``.hydra/``, ``main.log``) and the lock file.
* :class:`JobLock` is an exclusive ``fcntl.flock`` on ``<dir>/.lock`` held for the job's life:
  a second job (or a ``resume=`` of a running job) in the same directory is refused at once.
  The kernel drops the lock when the process dies (kill -9 included), so a killed job can be resumed.
* :func:`check_resume_path` says why a path is not a job that can be resumed (before Hydra writes).

    with JobLock(out):
        ...  # the job
"""

from __future__ import annotations

import errno
import fcntl
import os
import shutil
import tempfile
from pathlib import Path
from typing import TextIO

from bench.core.errors import BenchError

__all__ = ["JobDirError", "JobLock", "claim_dir", "check_creatable", "check_new", "check_resume_path", "locked_by",
           "remove_refused", "GIVEN_DIRS", "HYDRA_ENTRIES", "LOCK_FILE"]

LOCK_FILE = ".lock"
HYDRA_ENTRIES = {".hydra", "main.log", LOCK_FILE}  # present before a job writes anything
GIVEN_DIRS: set[str] = set()  # job directories named on the command line that existed before it (bench.cli.argv)
# what a job killed while it read its cases leaves (bench.runner.caseset), if it wrote no run.json then
# (older versions): a new job there writes them anew
LEFTOVERS = {"cases.jsonl.spool", "cases.jsonl.next"}


class JobDirError(BenchError, RuntimeError):
    """The job directory cannot be used (not empty, in use, not a job to resume): one line."""


def claim_dir(parent: str | Path, stem: str) -> str:
    """A new, empty directory ``parent/stem`` (``stem-2``, ``stem-3`` ... when taken); its path."""
    parent = Path(parent)
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError:
        return str(parent / stem)  # Hydra's own mkdir reports the problem with the path
    for attempt in range(1, 1000):
        path = parent / (stem if attempt == 1 else f"{stem}-{attempt}")
        try:
            path.mkdir()
        except FileExistsError:
            continue
        except OSError:
            return str(path)
        return str(path)
    raise JobDirError(f"cannot find a free directory name for {parent / stem}")


def _entries(path: Path) -> list[str]:
    return sorted(p.name for p in path.iterdir() if p.name not in HYDRA_ENTRIES | LEFTOVERS)


def check_creatable(path: str | Path, what: str = "output directory") -> None:
    """Raise JobDirError unless ``path`` is a directory, or one can be made there: a dangling symlink,
    a file on the way, a read-only file system or a directory the user may not write to is one line
    now, not a traceback when the first file is written. Nothing is left behind by the check."""
    path = Path(path)
    if path.is_symlink() and not path.exists():
        raise JobDirError(f"{what} {path} is a symlink to {os.readlink(path)}, which does not exist: "
                          "create its target or choose another directory")
    if path.exists() and not path.is_dir():
        raise JobDirError(f"{what} {path} is a file: choose a directory")
    probe = path if path.is_dir() else next((p for p in path.absolute().parents if p.exists()), None)
    if probe is None:
        return
    if not probe.is_dir():
        raise JobDirError(f"{what} {path}: {probe} is a file, not a directory")
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".bench-probe-", dir=probe))
    except OSError as err:
        raise JobDirError(f"cannot create the {what} {path}: {err.strerror or err} ({probe})") from None


def check_new(path: str | Path) -> None:
    """Raise JobDirError unless ``path`` can hold a new job (absent, or only Hydra's files) and can be written."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise JobDirError(f"output directory {path} is a file: choose a directory for the job")
    check_creatable(path)
    if not path.is_dir():
        return
    try:
        entries = _entries(path)
    except OSError as err:
        raise JobDirError(f"cannot read the output directory {path}: {err.strerror or err}") from None
    if entries:
        shown = ", ".join(entries[:4]) + (", ..." if len(entries) > 4 else "")
        hint = (f"use resume={path} to continue that job, or " if (path / "run.json").exists() else "")
        raise JobDirError(f"output directory {path} is not empty ({shown}): a new job needs a directory "
                          f"of its own; {hint}choose another output_dir")


def locked_by(path: str | Path) -> str | None:
    """The pid (as written in the lock file) of a running job holding ``path``, else None."""
    lock = Path(path) / LOCK_FILE
    if not lock.exists():
        return None
    try:
        with lock.open("a+") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                handle.seek(0)
                return handle.read().strip() or "?"
            fcntl.flock(handle, fcntl.LOCK_UN)
    except OSError:
        return None
    return None


def check_resume_path(path: str | Path) -> None:
    """Raise JobDirError unless ``path`` is a job directory (with run.json) that no running job holds."""
    path = Path(path)
    if not path.exists():
        raise JobDirError(f"resume={path}: no such job directory")
    if not path.is_dir():
        raise JobDirError(f"resume={path}: is a file, not a job directory")
    if not (path / "run.json").is_file():
        if any((path / name).exists() for name in LEFTOVERS):
            raise JobDirError(f"resume={path}: the job was stopped while it read its cases, before it recorded "
                              f"anything: start it again with output_dir={path}")
        raise JobDirError(f"resume={path}: not a job directory (no run.json)")
    pid = locked_by(path)
    if pid:
        raise JobDirError(f"resume={path}: the job is still running (pid {pid}); wait for it to end or stop it")


class JobLock:
    """Exclusive lock on a job directory for the life of a job (``with JobLock(dir): ...``)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._handle: TextIO | None = None

    def __enter__(self) -> JobLock:
        lock = self.path / LOCK_FILE
        try:
            handle = lock.open("a+")
        except OSError as err:
            raise JobDirError(f"cannot lock the job directory {self.path}: {err.strerror or err}") from None
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as err:
            handle.seek(0)
            pid = handle.read().strip() or "?"
            handle.close()
            if err.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise JobDirError(f"job directory {self.path} is in use by a running job (pid {pid}); "
                                  "wait for it to end or stop it") from None
            raise JobDirError(f"cannot lock the job directory {self.path}: {err.strerror or err}") from None
        try:  # the pid is only information for the refusal message
            handle.seek(0)
            handle.truncate()
            handle.write(str(os.getpid()))
            handle.flush()
        except OSError:
            pass
        self._handle = handle
        return self

    def __exit__(self, *exc: object) -> None:
        if self._handle is not None:
            try:
                fcntl.flock(self._handle, fcntl.LOCK_UN)
            finally:
                self._handle.close()
                self._handle = None


def remove_refused(path: str | Path, *, keep_dir: bool = False, up_to: str | Path | None = None,
                   made: frozenset[str] | set[str] = frozenset(HYDRA_ENTRIES)) -> bool:
    """Undo a refused job's directory: a job refused before it wrote a record (its directory holds only
    :data:`HYDRA_ENTRIES`) leaves nothing behind. The directory goes (its contents only, when
    ``keep_dir``: it existed before the command), then each parent it leaves empty, up to but not
    including ``up_to`` (the directory the command ran in; parents outside it stay). ``made``: what may be
    there and goes (a sweep's directory adds its ``multirun.yaml``). True if removed."""
    path = Path(path)
    try:
        entries = {p.name for p in path.iterdir()}
    except OSError:
        return False
    if not entries <= made:
        return False
    for name in entries:
        target = path / name
        try:
            shutil.rmtree(target) if target.is_dir() and not target.is_symlink() else target.unlink()
        except OSError:
            return False
    if keep_dir:
        return True
    try:
        path.rmdir()
    except OSError:
        return False
    stop = Path(up_to).resolve() if up_to is not None else None
    parent = path.resolve().parent
    while stop is not None and stop in parent.parents:
        try:
            parent.rmdir()  # only an empty one
        except OSError:
            break
        parent = parent.parent
    return True
