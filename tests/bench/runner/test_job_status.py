"""A job's status and exit code say what happened: a job where nothing was scored has no accuracy, is
incomplete and exits non-zero, keeping the records it wrote; a failing job of a sweep is recorded as
failed, the sweep goes on and exits 1."""

from __future__ import annotations

import json

import pytest

from cli_batch import JOB_MODULES, MODEL_MODULES, run_commands
from commands import bench
from fake_openai import FakeOpenAI


def test_a_job_where_every_call_is_refused_has_no_accuracy_is_incomplete_and_exits_non_zero(tmp_path):
    job = tmp_path / "job"
    with FakeOpenAI(api_key="right-key-0123456789") as server:  # no key sent: 401 on every call
        done = bench(tmp_path, "model=openai", f"model.base_url={server.base_url}", "model.api_key_env=null",
                     "model.check_endpoint=false", "model.max_retries=0", "dataset.limit=2", "cache.enabled=false",
                     f"hydra.run.dir={job}")
    assert done.returncode != 0, done.stdout
    assert "accuracy: 0.0%" not in done.stdout and "accuracy: n/a" in done.stdout
    assert "no question was scored" in done.stderr and "Traceback" not in done.stderr
    metrics = json.loads((job / "metrics.json").read_text())
    assert metrics["accuracy"] is None and metrics["accuracy_ci"] is None
    assert all(row["accuracy"] is None for row in metrics["by_type"].values())
    assert json.loads((job / "run.json").read_text())["status"] == "incomplete"


def test_a_job_that_fails_after_it_wrote_records_keeps_them(tmp_path):
    """Only a refusal (before any record) goes: a job whose every answer failed keeps its directory
    (its records, main.log) for resume=."""
    with FakeOpenAI(fail_marker="OpenHands", marker_status=500) as server:  # every request (the system prompt) fails
        args = ["model=openai", f"model.base_url={server.base_url}", "model.api_key_env=null", "model.max_retries=0",
                "dataset.limit=1", "cache.enabled=false", "output_dir=job"]
        [(code, _out, err)] = run_commands([(tmp_path, args)], preload=JOB_MODULES + MODEL_MODULES)
    assert code == 1 and "no question was scored" in err, err
    job = tmp_path / "job"
    assert (job / "run.json").exists() and (job / "answers.jsonl").exists() and (job / "main.log").exists()
    assert json.loads((job / "run.json").read_text())["status"] == "incomplete"


@pytest.mark.slow  # a three-job sweep in a subprocess; .ci/run runs it
def test_a_failing_job_of_a_sweep_is_recorded_the_sweep_goes_on_and_exits_1(tmp_path):
    done = bench(tmp_path, "-m", "arm=nlatest", "arm.n=-3,10", "dataset.limit=2", "hydra.sweep.dir=sweep")
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    assert done.stderr.strip().split("\n")[-1].startswith("error: 1 job(s) of the sweep failed: ")
    failed = json.loads((tmp_path / "sweep" / "arm.n=-3,arm=nlatest,dataset.limit=2,seed=0" / "run.json").read_text())
    assert failed["status"] == "failed" and "arm.n must be >= 0" in failed["error"]
    good = json.loads((tmp_path / "sweep" / "arm.n=10,arm=nlatest,dataset.limit=2,seed=0" / "run.json").read_text())
    assert good["status"] == "complete"  # the job after the failing one ran
    report = (tmp_path / "sweep" / "report" / "report.md").read_text()
    assert "arm.n=-3,arm=nlatest,dataset.limit=2,seed=0`: failed: arm.n must be >= 0" in report
    assert "reading rows from" in done.stdout  # something moves while rows load
