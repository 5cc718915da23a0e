"""Hydra callbacks: a fresh directory for every run and sweep; the study report when a sweep ends.

:class:`FreshDirCallback` (``hydra.callbacks.fresh_dir``) runs before Hydra makes the job's
or the sweep's directory: a default name (``outputs/<date>/<time>_<arm>``,
``multirun/<date>/<time>``, an experiment's sweep name) that another job already took in
the same second becomes ``<name>-2``, ``-3`` ... (claimed with an atomic ``mkdir``). A
directory given on the command line (``hydra.run.dir=``, ``hydra.sweep.dir=``) or a
``resume=`` directory is used as given. A sweep's directory is then made absolute on the
driver, before any job is dispatched, and handed to every job through Hydra's overrides:
whatever launcher runs the jobs and wherever it runs them (Ray runs them in a packaged copy of
the project in its session directory), they write into that directory. The jobs resolve
their own paths (cache, dataset, ...) the same way: :func:`bench.config.checks.absolute_paths`.
For the Ray launcher the callback also keeps Ray from rebuilding a ``uv run`` environment
per worker (``RAY_ENABLE_UV_RUN_RUNTIME_ENV=0`` unless set): the workers run this
environment's Python, the one that has the ``ray`` extra (docs/study.md).


Registered in ``conf/config.yaml`` under ``hydra.callbacks.report``; turn it off with
``hydra.callbacks.report.enabled=false``. The report lands in ``<sweep dir>/report``.
A failure here is logged, never raised: the jobs' records are already on disk, and
``python -m bench.report DIR`` writes the same report on demand.

The jobs of the sweep whose ``run.json`` says ``status: failed`` (recorded by
:mod:`bench.main`) are collected in :data:`FAILED_JOBS`, report or not, and a sweep whose
jobs did not all write a job directory where expected (fewer ``run.json`` under the sweep
directory than the sweep has jobs) is described in :data:`MISSING_JOBS`: ``python -m
bench.main -m ...`` exits 1 when either holds anything.
"""

from __future__ import annotations

import logging
import math
import os
from pathlib import Path
from typing import Any

from hydra.experimental.callback import Callback
from omegaconf import DictConfig, OmegaConf, open_dict, read_write

from bench.config.launchers import BASIC_SWEEPER, JOBLIB_LAUNCHER  # the sweeper's and launcher's paths, defined once

__all__ = ["FreshDirCallback", "ReportCallback", "SharedImportsCallback", "job_imports", "FAILED_JOBS", "MISSING_JOBS", "run_files", "failed_jobs",
           "expected_jobs"]

log = logging.getLogger(__name__)

FAILED_JOBS: list[str] = []  # job directories of the last sweep that failed (this process ran its end)
MISSING_JOBS: list[str] = []  # what the last sweep lost: jobs that wrote no job directory where expected
SWEEP_DIRS: list[tuple[str, str]] = []  # (sweep directory, the command's directory) of this process's sweeps


RAY_LAUNCHER = "hydra_plugins.hydra_ray_launcher.ray_launcher.RayLauncher"  # hydra/launcher=ray_cluster

# What a job imports that is worth importing once per sweep: the runner (and Hydra, the job's
# config), the model stack for jobs that call a model, `datasets` for the sources that read through it
JOB_IMPORTS = ("hydra", "bench.config.checks", "bench.runner", "bench.data.selection")
MODEL_IMPORTS = ("bench.answering.agent", "bench.scoring.judge", "bench.llm.client", "openai", "langchain_openai", "langgraph.graph")
ANTHROPIC_IMPORTS = ("bench.llm.anthropic_client", "anthropic", "langchain_anthropic")
DATASETS_IMPORTS = ("bench.sources.files", "datasets")
_MODEL_CHOICES = {"model": ("openai", "anthropic"), "judge": ("llm", "panel", "anthropic"),
                  "summarizer": ("openai", "anthropic")}
_ANTHROPIC_CHOICES = {"model": ("anthropic",), "judge": ("anthropic",), "summarizer": ("anthropic",)}
_DATASETS_CHOICES = {"dataset": ("local", "hf")}


def run_files(sweep_dir: Path) -> list[Path]:
    """The ``run.json`` of every job directory under ``sweep_dir``, sorted."""
    return sorted(sweep_dir.rglob("run.json")) if sweep_dir.is_dir() else []


def failed_jobs(runs: list[Path]) -> list[str]:
    """Job directories of ``runs`` (their run.json files) that say ``status: failed``."""
    from bench.store.records import JobFileError, read_json

    failed = []
    for path in runs:
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
    from bench.store.jobdir import claim_dir

    if _given(config, key):
        return
    wanted = Path(str(OmegaConf.select(config, key)))
    claimed = claim_dir(wanted.parent, wanted.name)
    if claimed != str(wanted):
        log.info("%s was taken by another job: using %s", wanted, claimed)
    with read_write(config), open_dict(config):
        OmegaConf.update(config, key, claimed, merge=False)


def _pin_for_jobs(config: DictConfig, key: str) -> None:
    """Make the directory at ``key`` absolute and hand it to every job of the sweep.

    Launchers compose each job's config again from ``hydra.overrides.hydra`` plus the job's
    own overrides (``load_sweep_config``), so the value set on the driver reaches the jobs
    only as an override; appended last, it wins over the config files and the command line.
    """
    from bench.config.checks import quote_override

    path = os.path.abspath(str(OmegaConf.select(config, key)))
    with read_write(config), open_dict(config):
        OmegaConf.update(config, key, path, merge=False)
        config.hydra.overrides.hydra.append(f"{key}={quote_override(path)}")


def expected_jobs(config: DictConfig) -> int | None:
    """How many jobs the sweep of ``config`` launches, or None when that cannot be told here.

    Hydra's basic sweeper runs the product of its sweep parameters (``hydra.sweeper.params``,
    then the command line's overrides; a later override of a key replaces an earlier one);
    other sweepers (Optuna, ...) choose their own number of jobs, and a ``glob()`` sweep needs
    the config repository: None for those.
    """
    from hydra.core.override_parser.overrides_parser import OverridesParser

    if OmegaConf.select(config, "hydra.sweeper._target_") != BASIC_SWEEPER:
        return None
    def written(key: str) -> Any:  # as written: an override's ${...} is the job's to resolve
        node = OmegaConf.select(config, key)
        return OmegaConf.to_container(node, resolve=False) if node is not None else None

    arguments = [f"{key}={value}" for key, value in (written("hydra.sweeper.params") or {}).items()]
    arguments += written("hydra.overrides.task") or []
    sizes: dict[str, int] = {}
    try:
        for override in OverridesParser.create().parse_overrides(arguments):
            if override.is_sweep_override() and not override.is_discrete_sweep():
                return None
            count = len(list(override.sweep_string_iterator())) if override.is_sweep_override() else 1
            sizes[override.get_key_element()] = count
    except Exception:  # noqa: BLE001 - a sweep this parser cannot expand: no count, no check
        return None
    return math.prod(sizes.values())


def missing_jobs(config: DictConfig, sweep_dir: Path, written: int) -> list[str]:
    """What the sweep lost: one line when fewer jobs wrote their ``run.json`` under ``sweep_dir``
    (``written`` of them) than the sweep launched (none written, when the number of jobs cannot
    be told)."""
    expected = expected_jobs(config)
    if written >= (expected if expected is not None else 1):
        return []
    launched = f"{expected} job(s)" if expected is not None else "its jobs"
    return [f"the sweep ran {launched} but {written} wrote a job directory under {sweep_dir}: the others wrote "
            "their results somewhere else (a launcher running jobs on a machine or in a directory that does not "
            "see this one? docs/study.md) or nowhere"]


class FreshDirCallback(Callback):
    """``on_run_start`` / ``on_multirun_start``: claim a fresh default run or sweep directory."""

    def on_run_start(self, config: DictConfig, **kwargs: Any) -> None:
        if not config.get("resume") and not config.get("output_dir"):  # those name their directory
            _claim(config, "hydra.run.dir")

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        _claim(config, "hydra.sweep.dir")
        _pin_for_jobs(config, "hydra.sweep.dir")
        SWEEP_DIRS.append((str(OmegaConf.select(config, "hydra.sweep.dir")), str(config.hydra.runtime.cwd)))
        if OmegaConf.select(config, "hydra.launcher._target_") == RAY_LAUNCHER:
            # Ray's `uv run` hook would rebuild the environment from the lock file in every
            # worker, without the extras this driver was synced with (so without ray itself)
            os.environ.setdefault("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")


def discard_refused_sweeps() -> None:
    """A sweep Hydra refused before any job started (its sweeper composes every job first: one job's option
    that does not exist) leaves no directory: its ``multirun.yaml`` and lock go, and the directories that
    leaves empty (a ``hydra.sweep.dir`` that existed before the command stays, emptied). A sweep directory
    holding anything else (a job's directory) is kept."""
    from bench.store.jobdir import GIVEN_DIRS, HYDRA_ENTRIES, remove_refused

    for sweep_dir, cwd in SWEEP_DIRS:
        remove_refused(sweep_dir, keep_dir=str(Path(sweep_dir).resolve()) in GIVEN_DIRS, up_to=cwd,
                       made=HYDRA_ENTRIES | {"multirun.yaml"})


def _choices(config: DictConfig) -> dict[str, set[str]]:
    """Every option a job of the sweep may choose per config group: the composed config's, and each
    value of a sweep over the group (``hydra.sweeper.params`` and the command line's overrides)."""
    found: dict[str, set[str]] = {}
    for group, option in (OmegaConf.select(config, "hydra.runtime.choices") or {}).items():
        found.setdefault(str(group), set()).add(str(option))
    params = OmegaConf.select(config, "hydra.sweeper.params") or {}
    swept = [f"{key}={value}" for key, value in params.items()] + list(OmegaConf.select(config, "hydra.overrides.task") or [])
    for override in swept:
        key, _, values = str(override).lstrip("+~").partition("=")
        found.setdefault(key, set()).update(v.strip() for v in values.split(","))
    return found


def job_imports(config: DictConfig) -> list[str]:
    """The modules the jobs of this sweep import that are worth importing once (:data:`JOB_IMPORTS`, plus
    the model stack and ``datasets`` when a job may use them)."""
    choices = _choices(config)
    wanted = list(JOB_IMPORTS)
    for extra, groups in ((MODEL_IMPORTS, _MODEL_CHOICES), (ANTHROPIC_IMPORTS, _ANTHROPIC_CHOICES),
                          (DATASETS_IMPORTS, _DATASETS_CHOICES)):
        if any(choices.get(group, set()) & set(options) for group, options in groups.items()):
            wanted += extra
    return wanted


class SharedImportsCallback(Callback):
    """``on_multirun_start``: the joblib launcher's workers start with the job's modules imported.

    Its workers (loky) are fresh interpreters that each import the runner, the model SDKs,
    LangChain, LangGraph and ``datasets`` again (seconds of CPU per worker, most of a short job's).
    Here loky starts its workers from a fork server instead (``forkserver``, one of loky's start
    methods), and the fork server imports those modules first (``multiprocessing``'s
    ``set_forkserver_preload``): each worker is a fork of a process that has them, so the sweep
    imports them once. Other launchers are left as they are (the basic launcher runs every job in
    this process already). A start method set before (by the user) is kept.
    """

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        if not self.enabled or OmegaConf.select(config, "hydra.launcher._target_") != JOBLIB_LAUNCHER:
            return
        import multiprocessing

        from joblib.externals.loky.backend.context import set_start_method  # loky's, as joblib ships it

        try:
            set_start_method("forkserver")
        except RuntimeError:  # already set: the user's choice
            return
        # and what a loky worker imports to run a task (joblib's batches, loky's worker loop)
        modules = ["joblib", "joblib.externals.loky.process_executor", *job_imports(config)]
        multiprocessing.set_forkserver_preload(modules)
        log.info("joblib workers start from a fork server with %s imported", ", ".join(modules))


class ReportCallback(Callback):
    """``on_multirun_end``: ``bench.report`` over the sweep directory."""

    def __init__(self, enabled: bool = True, output: str | None = None) -> None:
        self.enabled = enabled
        self.output = output

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        sweep_dir = Path(str(config.hydra.sweep.dir))
        runs = run_files(sweep_dir)
        FAILED_JOBS[:] = failed_jobs(runs)
        MISSING_JOBS[:] = missing_jobs(config, sweep_dir, len(runs))
        for line in MISSING_JOBS:
            log.error(line)
        if not self.enabled:
            return
        try:
            from bench.study.assemble import write_report

            if not runs:
                log.warning("no job directory under %s: no report written", sweep_dir)
                return
            result = write_report([sweep_dir], self.output or sweep_dir / "report")
            log.info("sweep report: %s", Path(result["output"]) / "report.html")
            print(result["markdown"])
            print(f"report: {Path(result['output']) / 'report.html'}")
        except Exception:  # noqa: BLE001 - never fail a finished sweep over its report
            log.exception("could not write the sweep report (run python -m bench.report DIR)")
