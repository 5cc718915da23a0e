"""A job that failed, as the user and the sweep see it: one line on stderr (details in the job's
``main.log``), exit 2; inside a ``-m`` sweep the job is recorded as failed in its ``run.json`` and
the sweep goes on (the report lists it; the command exits 1 at its end)."""

from __future__ import annotations

import logging
import re
import sys
from pathlib import Path

from omegaconf import DictConfig

from bench.config.checks import plain
from bench.core import redact
from bench.core.failures import innermost
from bench.store.jobdir import JobDirError
from bench.store.records import JobFileError

__all__ = ["fail", "in_sweep", "record_failure"]

log = logging.getLogger("bench")


def fail(err: BaseException, unexpected: bool = False, cfg: DictConfig | None = None) -> None:
    """One clear line for the user (the job log keeps the details), exit code 2, no traceback.

    In a ``-m`` sweep the job is recorded as failed and the sweep goes on (exit 1 at its end).
    """
    root = innermost(err)
    text = redact.scrub(str(root).strip())
    message = text.split("\n")[0] if text else type(root).__name__
    if root is not err and (target := re.search(r"target '([\w.]+)'", str(err))):
        message = f"{message} (building {target.group(1)})"
    file_only = {redact.FILE_ONLY: True}  # the console shows the error line below, once
    if unexpected:
        log.error("%s: %s", type(root).__name__, root, exc_info=root, extra=file_only)
        message = f"{type(root).__name__}: {message} (traceback in the job's main.log)"
    else:
        log.error("%s: %s", type(root).__name__, root, extra=file_only)
    if cfg is not None and in_sweep():
        record_failure(cfg, err, message)
        print(f"error: job failed: {message}", file=sys.stderr)
        return
    if not unexpected and cfg is not None:
        discard_refused(cfg)
    print(f"error: {message}", file=sys.stderr)
    sys.exit(2)


def discard_refused(cfg: DictConfig) -> None:
    """A single job refused before it wrote a record leaves no job directory: what Hydra and the lock
    made (``.hydra/``, ``main.log``, ``.lock``) goes, and the date directory it leaves empty. The
    error line says all ``main.log`` said. A resumed job's directory, one holding records, and a
    bug's (its traceback is in ``main.log``) are kept."""
    from hydra.core.hydra_config import HydraConfig

    from bench.store.jobdir import GIVEN_DIRS, remove_refused

    if cfg.get("resume") or not HydraConfig.initialized():
        return
    runtime = HydraConfig.get().runtime
    out = Path(runtime.output_dir).resolve()
    for handler in logging.getLogger().handlers:  # main.log is closed before it goes
        if isinstance(handler, logging.FileHandler) and Path(handler.baseFilename).resolve().parent == out:
            handler.close()
            logging.getLogger().removeHandler(handler)
    remove_refused(out, keep_dir=str(out) in GIVEN_DIRS, up_to=runtime.cwd)


def in_sweep() -> bool:
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode

    return HydraConfig.initialized() and HydraConfig.get().mode == RunMode.MULTIRUN


def record_failure(cfg: DictConfig, err: BaseException, message: str) -> None:
    """``run.json`` of a sweep job that failed: ``status: failed`` and the error, for the report.

    Written into the job's own sweep directory; a run.json there that this job did not write
    (the job was refused because its directory holds another job) is left alone.
    """
    from hydra.core.hydra_config import HydraConfig

    from bench.runner import ResumeError
    from bench.store.records import read_json, write_json

    own = Path(HydraConfig.get().runtime.output_dir)
    path = own / "run.json"
    if path.exists() and isinstance(innermost(err), (JobDirError, ResumeError)):
        return
    try:
        record = read_json(path) if path.exists() else None
    except JobFileError:
        record = None
    if not isinstance(record, dict):
        record = {"started": None, "ended": None, "arm": (cfg.get("arm") or {}).get("name"),
                  "seed": cfg.get("seed"), "config": plain(cfg)}
    record.update(status="failed", error=message)
    try:
        own.mkdir(parents=True, exist_ok=True)
        write_json(path, record)
    except OSError as write_err:
        log.error("cannot record the failure in %s: %s", own, write_err)
