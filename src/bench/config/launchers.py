"""Hydra's sweeper and launchers as a config names them (``_target_``), defined once: the job's set-up
(a sweep's prerequisites) and the command line's callbacks read them. A light module: the callbacks
import it in the sweep's own process, which must not import the runner (the joblib workers do, once,
from their fork server)."""

from __future__ import annotations

__all__ = ["BASIC_SWEEPER", "JOBLIB_LAUNCHER", "LOCAL_LAUNCHERS"]

BASIC_SWEEPER = "hydra._internal.core_plugins.basic_sweeper.BasicSweeper"  # the default sweeper's _target_
JOBLIB_LAUNCHER = "hydra_plugins.hydra_joblib_launcher.joblib_launcher.JoblibLauncher"  # hydra/launcher=joblib
# the launchers whose jobs run on this machine (None: Hydra's default)
LOCAL_LAUNCHERS = (None, "hydra._internal.core_plugins.basic_launcher.BasicLauncher", JOBLIB_LAUNCHER)
