"""Hydra callbacks: a fresh directory for every run and sweep; the study report when a sweep ends.

:class:`FreshDirCallback` (``hydra.callbacks.fresh_dir``) runs before Hydra makes the job's
or the sweep's directory: a default name (``outputs/<date>/<time>_<arm>``,
``multirun/<date>/<time>``, an experiment's sweep name) that another job already took in
the same second becomes ``<name>-2``, ``-3`` ... (claimed with an atomic ``mkdir``). A
directory given on the command line (``hydra.run.dir=``, ``hydra.sweep.dir=``) or a
``resume=`` directory is used as given.


Registered in ``conf/config.yaml`` under ``hydra.callbacks.report``; turn it off with
``hydra.callbacks.report.enabled=false``. The report lands in ``<sweep dir>/report``.
A failure here is logged, never raised: the jobs' records are already on disk, and
``python -m bench.report DIR`` writes the same report on demand.

The jobs of the sweep whose ``run.json`` says ``status: failed`` (recorded by
:mod:`bench.main`) are collected in :data:`FAILED_JOBS`, report or not: ``python -m
bench.main -m ...`` exits 1 when there are any.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from hydra.experimental.callback import Callback
from omegaconf import DictConfig, OmegaConf, open_dict, read_write

__all__ = ["FreshDirCallback", "ReportCallback", "FAILED_JOBS", "failed_jobs"]

log = logging.getLogger(__name__)

FAILED_JOBS: list[str] = []  # job directories of the last sweep that failed (this process ran its end)


def failed_jobs(sweep_dir: Path) -> list[str]:
    """Job directories under ``sweep_dir`` whose run.json says ``status: failed``."""
    from bench.store import JobFileError, read_json

    failed = []
    for path in sorted(sweep_dir.rglob("run.json")):
        try:
            record = read_json(path)
        except (JobFileError, OSError):
            continue
        if isinstance(record, dict) and record.get("status") == "failed":
            failed.append(str(path.parent))
    return failed


def _given(config: DictConfig, key: str) -> bool:
    """True when ``key`` was set on the command line (then its directory is used as given)."""
    overrides = OmegaConf.select(config, "hydra.overrides.hydra") or []
    return any(str(o).lstrip("+~").partition("=")[0] == key for o in overrides)


def _claim(config: DictConfig, key: str) -> None:
    from bench.jobdir import claim_dir

    if _given(config, key):
        return
    wanted = Path(str(OmegaConf.select(config, key)))
    claimed = claim_dir(wanted.parent, wanted.name)
    if claimed != str(wanted):
        log.info("%s was taken by another job: using %s", wanted, claimed)
    with read_write(config), open_dict(config):
        OmegaConf.update(config, key, claimed, merge=False)


class FreshDirCallback(Callback):
    """``on_run_start`` / ``on_multirun_start``: claim a fresh default run or sweep directory."""

    def on_run_start(self, config: DictConfig, **kwargs: Any) -> None:
        if not config.get("resume"):
            _claim(config, "hydra.run.dir")

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        _claim(config, "hydra.sweep.dir")


class ReportCallback(Callback):
    """``on_multirun_end``: ``bench.report`` over the sweep directory."""

    def __init__(self, enabled: bool = True, output: str | None = None) -> None:
        self.enabled = enabled
        self.output = output

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        sweep_dir = Path(str(config.hydra.sweep.dir))
        FAILED_JOBS[:] = failed_jobs(sweep_dir) if sweep_dir.is_dir() else []
        if not self.enabled:
            return
        try:
            from bench.study import find_job_dirs
            from bench.study.report import write_report

            if not find_job_dirs([sweep_dir]):
                log.warning("no job directory under %s: no report written", sweep_dir)
                return
            result = write_report([sweep_dir], self.output or sweep_dir / "report")
            log.info("sweep report: %s", Path(result["output"]) / "report.html")
            print(result["markdown"])
            print(f"report: {Path(result['output']) / 'report.html'}")
        except Exception:  # noqa: BLE001 - never fail a finished sweep over its report
            log.exception("could not write the sweep report (run python -m bench.report DIR)")
