"""Experiment configs compose with their sweep grids; the smoke sweep runs (basic and joblib
launchers) and its Hydra callback writes a report that agrees with the job files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra

from paths import PROJECT

CONF = str(PROJECT / "conf")

GRIDS = {  # experiment -> (arm, {swept key: values})
    "prompts": ("compact", {"prompt": ["sre", "generic", "hybrid", "hybrid_v2"], "seed": ["0", "1", "2"]}),
    "mechanisms": ("compact", {"mechanism": ["shipped", "tail", "stepcut", "offload", "collapse", "verify"],
                               "seed": ["0", "1", "2"]}),
    "nlatest": ("nlatest", {"arm.n": ["10", "20", "40"], "seed": ["0", "1", "2"]}),
    "matched": ("nlatest", {"mechanism": ["shipped", "tail", "stepcut", "offload", "collapse", "verify"],
                            "seed": ["0", "1", "2"]}),
    "smoke": ("full", {"+experiment/arm": ["full", "nlatest", "compact"], "seed": ["0"]}),
    "peers": ("full", {"+experiment/arm": ["full", "none", "nlatest", "trim", "mask", "context_edit", "compact",
                                           "lc_summary", "condenser", "inspect_edit", "inspect_trim", "inspect_summary"],
                       "seed": ["0"]}),
    # the providers' own context management beside the peers, with their provider's model (issue 34)
    "peers_anthropic": ("full", {"+experiment/arm": ["full", "none", "nlatest", "trim", "mask", "context_edit",
                                                     "anthropic_clear", "compact", "lc_summary", "condenser",
                                                     "inspect_edit", "inspect_trim", "inspect_summary",
                                                     "anthropic_compact"], "seed": ["0"]}),
    "peers_openai": ("full", {"+experiment/arm": ["full", "none", "nlatest", "trim", "mask", "context_edit", "compact",
                                                  "lc_summary", "condenser", "inspect_edit", "inspect_trim",
                                                  "inspect_summary", "openai_compact"], "seed": ["0"]}),
}


def _compose(*overrides: str, hydra: bool = False):
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=CONF, version_base="1.3"):
        return compose("config", overrides=list(overrides), return_hydra_config=hydra)


@pytest.mark.parametrize("name", sorted(GRIDS))
def test_experiment_grid(name):
    arm, grid = GRIDS[name]
    cfg = _compose(f"+experiment={name}", hydra=True)
    params = {k: [v.strip() for v in str(vals).split(",")] for k, vals in cfg.hydra.sweeper.params.items()}
    assert params == grid
    assert cfg.hydra.sweep.dir.endswith(f"_{name}") or name in str(cfg.hydra.sweep.dir)
    assert "experiment" in cfg.hydra.job.config.override_dirname.exclude_keys
    if name not in ("smoke", "peers", "peers_anthropic", "peers_openai"):
        assert cfg.arm.name == arm
    # every job of the grid composes (no missing config file, no missing value)
    keys = [k for k in grid if k != "seed"]
    for value in grid[keys[0]]:
        job = _compose(f"+experiment={name}", f"{keys[0]}={value}")
        if keys[0] == "+experiment/arm":
            assert job.arm.name == value
        else:
            assert str(job[keys[0].split(".")[0]].get(keys[0].split(".")[-1]) if "." in keys[0]
                       else job[keys[0]].name) == value


def test_matched_and_smoke_settings():
    matched = _compose("+experiment=matched")
    assert matched.arm.match == "compact" and matched.arm.n is None
    smoke = _compose("+experiment=smoke")
    assert (smoke.dataset.source, smoke.dataset.limit, smoke.model._target_) == (
        "sample", 3, "bench.answering.evidence_reader.EvidenceReader")
    assert _compose("+experiment=smoke", "+experiment/arm=nlatest").arm.n == 20


def _sweep(tmp_path: Path, *extra: str) -> Path:
    sweep = tmp_path / "sweep"
    env = {k: v for k, v in os.environ.items() if not k.startswith("LANGFUSE_")}
    command = [sys.executable, "-m", "bench.main", "-m", "+experiment=smoke", f"hydra.sweep.dir={sweep}", *extra]
    done = subprocess.run(command, cwd=PROJECT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "report:" in done.stdout
    return sweep


def _check_sweep(sweep: Path) -> None:
    names = sorted(p.name for p in sweep.iterdir() if (p / "run.json").exists())
    assert names == ["+experiment_arm=compact,seed=0", "+experiment_arm=full,seed=0",
                     "+experiment_arm=nlatest,seed=0"]  # readable: overrides, seed last
    jobs = pd.read_csv(sweep / "report" / "jobs.csv")
    assert len(jobs) == 3 and set(jobs["status"]) == {"complete"}
    for _, row in jobs.iterrows():
        metrics = json.loads((Path(row["path"]) / "metrics.json").read_text())
        assert row["accuracy"] == pytest.approx(metrics["accuracy"])
        assert row["n_questions"] == metrics["n_questions"]
        if row["arm"] != "full":
            assert row["accuracy_relative_to_full"] == pytest.approx(metrics["accuracy_relative_to_full"])
    assert sorted(jobs["config"]) == ["smoke: arm=compact", "smoke: arm=full", "smoke: arm=nlatest"]
    for name in ("report.html", "configs.csv", "types.csv", "questions.csv", "report.md"):
        assert (sweep / "report" / name).stat().st_size > 0


@pytest.mark.slow  # several subprocess jobs; .ci/run runs it
def test_smoke_sweep_writes_the_report(tmp_path):
    _check_sweep(_sweep(tmp_path))


def _sweep_from(cwd: Path, *extra: str, stderr: list | None = None, **environ: str) -> Path:
    """The smoke sweep run from ``cwd`` with its default (relative) sweep directory and cache,
    as a user types it: the one sweep directory it wrote under ``cwd/multirun`` (its stderr
    appended to ``stderr``)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LANGFUSE_") and k != "RAY_ENABLE_UV_RUN_RUNTIME_ENV"}
    command = [sys.executable, "-m", "bench.main", "-m", "+experiment=smoke", *extra]
    done = subprocess.run(command, cwd=cwd, env={**env, **environ}, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "report:" in done.stdout
    if stderr is not None:
        stderr.append(done.stderr)
    (sweep,) = list((cwd / "multirun").glob("*/*_smoke"))
    return sweep


def _check_kept(sweep: Path, cwd: Path, launcher: str) -> None:
    """Every job wrote its directory in the sweep directory and used the cache under ``cwd``."""
    _check_sweep(sweep)
    for run_json in sweep.glob("*/run.json"):
        record = json.loads(run_json.read_text())
        assert record["status"] == "complete"
        assert Path(record["config"]["cache"]["path"]) == cwd / ".cache" / "responses.sqlite"
    assert launcher in (sweep / "multirun.yaml").read_text()


@pytest.mark.slow  # ~30 s: three jobs in two worker processes
def test_smoke_sweep_with_the_joblib_launcher_keeps_every_job(tmp_path):
    stderr: list[str] = []
    sweep = _sweep_from(tmp_path, "hydra/launcher=joblib", "hydra.launcher.n_jobs=2", stderr=stderr,
                        PYTHONPROFILEIMPORTTIME="1")
    _check_kept(sweep, tmp_path, "JoblibLauncher")
    # the workers are forks of a fork server that imported the runner: the runner is imported by the sweep's own
    # process (its prerequisites, checked once before any job) and by the fork server, never per worker
    imports = [line for line in stderr[0].splitlines() if line.startswith("import time:")]
    assert sum(1 for line in imports if line.rstrip().endswith("| bench.runner") or
               line.split("|")[-1].strip() == "bench.runner") == 2


@pytest.mark.slow  # ~40 s: a local Ray instance starts, three fresh worker processes
def test_smoke_sweep_with_the_ray_launcher_keeps_every_job(tmp_path):
    """Issue 14: Ray runs each job in a packaged copy of a working directory in its session
    directory; job directories, cache and report must still land where the sweep was started."""
    pytest.importorskip("hydra_plugins.hydra_ray_launcher", reason="the ray extra is not installed (uv sync --extra ray)")
    elsewhere = tmp_path / "packaged"  # the workers' working directory: not the driver's
    elsewhere.mkdir()
    (elsewhere / "marker.txt").write_text("workers run here\n")
    driver = tmp_path / "driver"
    driver.mkdir()
    sweep = _sweep_from(driver, "hydra/launcher=ray_cluster", "+hydra.launcher.ray.init.num_cpus=2",
                        "+hydra.launcher.ray.init.include_dashboard=false",
                        f"+hydra.launcher.ray.init.runtime_env={{working_dir: '{elsewhere}'}}")
    _check_kept(sweep, driver, "RayLauncher")
    assert not list(elsewhere.rglob("run.json"))


@pytest.mark.parametrize("launcher,plugin,target", [
    ("slurm", "hydra_plugins.hydra_submitit_launcher", "SlurmLauncher"),
    ("ray_cluster", "hydra_plugins.hydra_ray_launcher", "RayLauncher"),
    ("joblib", "hydra_plugins.hydra_joblib_launcher", "JoblibLauncher"),
])
def test_launcher_configs_compose(launcher, plugin, target):
    pytest.importorskip(plugin, reason="optional launcher plugin not installed (uv sync --extra ...)")
    cfg = _compose("+experiment=mechanisms", f"hydra/launcher={launcher}", hydra=True)
    assert cfg.hydra.launcher._target_.endswith(target)
    if launcher == "slurm":
        assert cfg.hydra.launcher.timeout_min == 240 and cfg.hydra.launcher.array_parallelism == 32
    if launcher == "ray_cluster":
        assert cfg.hydra.launcher.ray.init.address is None and cfg.hydra.launcher.ray.remote.num_cpus == 1


def test_callback_writes_into_the_sweep_dir_unless_disabled(tmp_path):
    from omegaconf import OmegaConf

    from bench.cli.callbacks import ReportCallback

    from jobs import run_job

    sweep = tmp_path / "sweep"
    run_job(sweep / "arm=full,seed=0", "arm=full", "dataset.limit=2")
    config = OmegaConf.create({"hydra": {"sweep": {"dir": str(sweep)}}})
    ReportCallback(enabled=False).on_multirun_end(config)
    assert not (sweep / "report").exists()
    ReportCallback().on_multirun_end(config)
    assert len(pd.read_csv(sweep / "report" / "jobs.csv")) == 1
    ReportCallback().on_multirun_end(OmegaConf.create({"hydra": {"sweep": {"dir": str(tmp_path / "none")}}}))


def test_expected_jobs_counts_the_basic_sweepers_product():
    from omegaconf import OmegaConf

    from bench.cli.callbacks import BASIC_SWEEPER, expected_jobs

    def sweep(params, task, target=BASIC_SWEEPER):
        return OmegaConf.create({"hydra": {"sweeper": {"_target_": target, "params": params},
                                           "overrides": {"task": task}}})

    assert expected_jobs(sweep({"mechanism": "a,b,c", "seed": "0,1,2"}, ["+experiment=mechanisms"])) == 9
    assert expected_jobs(sweep({"seed": "0,1,2"}, ["seed=0,1", "arm.n=10,20,40"])) == 6  # the command line wins
    assert expected_jobs(sweep({}, ["dataset.limit=range(1,5)"])) == 4
    assert expected_jobs(sweep(None, ["seed=0"])) == 1
    assert expected_jobs(sweep({}, ["seed=interval(0,1)"])) is None  # not a basic-sweeper sweep
    assert expected_jobs(sweep({}, ["seed=0,1"], target="hydra_plugins.optuna.OptunaSweeper")) is None
    assert expected_jobs(_compose("+experiment=mechanisms", hydra=True)) == 18
    assert expected_jobs(_compose("+experiment=smoke", hydra=True)) == 3


def test_a_sweep_whose_jobs_wrote_elsewhere_fails_loudly(tmp_path):
    """Jobs that wrote their directories somewhere the sweep directory does not hold are lost
    to its report: exit 1, and say how many of how many arrived where."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LANGFUSE_")}
    command = [sys.executable, "-m", "bench.main", "-m", "seed=0,1", "dataset.limit=1",
               "output_dir=${hydra:runtime.cwd}/elsewhere/${seed}", "hydra.sweep.dir=sweep"]
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert f"error: the sweep ran 2 job(s) but 0 wrote a job directory under {tmp_path / 'sweep'}" in done.stderr
    assert sorted(p.parent.name for p in (tmp_path / "elsewhere").glob("*/run.json")) == ["0", "1"]  # nothing lost


@pytest.mark.parametrize("overrides,swept,model,datasets", [
    ([], [], False, False),                                       # offline, the shipped sample
    (["model=openai"], [], True, False),
    (["judge=llm"], [], True, False),
    (["dataset=local", "dataset.path=x.parquet"], [], False, True),
    (["+experiment=mechanisms"], ["summarizer=offline,openai"], True, False),  # a sweep over the summarizer
    (["+experiment=mechanisms"], ["dataset=sample,hf"], False, True),
])
def test_a_sweep_preloads_what_its_jobs_import(overrides, swept, model, datasets):
    from omegaconf import open_dict, read_write

    from bench.cli.callbacks import DATASETS_IMPORTS, JOB_IMPORTS, MODEL_IMPORTS, job_imports

    cfg = _compose(*overrides, hydra=True)
    with read_write(cfg), open_dict(cfg):
        cfg.hydra.overrides.task = [*cfg.hydra.overrides.task, *swept]  # as `-m KEY=A,B` leaves them
    modules = set(job_imports(cfg))
    assert set(JOB_IMPORTS) <= modules
    assert (set(MODEL_IMPORTS) <= modules) is model and bool(modules & set(MODEL_IMPORTS)) is model
    assert (set(DATASETS_IMPORTS) <= modules) is datasets and ("datasets" in modules) is datasets
