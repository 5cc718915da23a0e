"""Hydra callbacks: write the study report when a sweep ends.

Registered in ``conf/config.yaml`` under ``hydra.callbacks.report``; turn it off with
``hydra.callbacks.report.enabled=false``. The report lands in ``<sweep dir>/report``.
A failure here is logged, never raised: the jobs' records are already on disk, and
``python -m bench.report DIR`` writes the same report on demand.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from hydra.experimental.callback import Callback
from omegaconf import DictConfig

__all__ = ["ReportCallback"]

log = logging.getLogger(__name__)


class ReportCallback(Callback):
    """``on_multirun_end``: ``bench.report`` over the sweep directory."""

    def __init__(self, enabled: bool = True, output: str | None = None) -> None:
        self.enabled = enabled
        self.output = output

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        if not self.enabled:
            return
        try:
            from bench.report import find_job_dirs, write_report

            sweep_dir = Path(str(config.hydra.sweep.dir))
            if not find_job_dirs([sweep_dir]):
                log.warning("no job directory under %s: no report written", sweep_dir)
                return
            result = write_report([sweep_dir], self.output or sweep_dir / "report")
            log.info("sweep report: %s", Path(result["output"]) / "report.html")
            print(result["markdown"])
            print(f"report: {Path(result['output']) / 'report.html'}")
        except Exception:  # noqa: BLE001 - never fail a finished sweep over its report
            log.exception("could not write the sweep report (run python -m bench.report DIR)")
