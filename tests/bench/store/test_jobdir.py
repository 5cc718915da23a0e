"""Job directories: a used one is refused, two jobs started in the same second never share one, a running
job holds its directory (and a sweep its sweep directory), resume takes a sweep job's path, output_dir=D
holds the job's and Hydra's files, and a sweep job's name fits the file system."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench.runner import ResumeError, run
from bench.store.jobdir import JobDirError, JobLock, claim_dir
from bench.store.records import read_jsonl

from builders import sample_questions
from commands import bench, one_line, one_line_error
from jobs import job_cfg

N_QUESTIONS = sample_questions()  # questions of the shipped sample


def test_a_new_job_in_a_used_directory_is_refused_and_the_job_there_is_untouched(tmp_path):
    out = tmp_path / "D"
    run(job_cfg("arm=nlatest", "arm.n=10", output_dir=str(out)))
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    with pytest.raises(JobDirError, match="not empty"):
        run(job_cfg("arm=full", output_dir=str(out)))
    done = bench(tmp_path, "arm=full", f"output_dir={out}")
    one_line_error(done, str(out), "not empty", f"resume={out}")
    assert before == {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    assert json.loads((out / "run.json").read_text())["arm"] == "nlatest"


def test_default_directories_of_jobs_started_in_the_same_second_never_collide(tmp_path):
    assert [Path(claim_dir(tmp_path, "12-00-00_full")).name for _ in range(3)] == [
        "12-00-00_full", "12-00-00_full-2", "12-00-00_full-3"]
    env = {k: v for k, v in os.environ.items() if k != "HYDRA_FULL_ERROR"}
    procs = [subprocess.Popen([sys.executable, "-m", "bench.main", "dataset.limit=2", *args], cwd=tmp_path,
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
             for args in (["arm=full"], ["arm=full", "seed=1"])]
    assert [p.wait(120) for p in procs] == [0, 0], [p.stderr.read() for p in procs]
    jobs = sorted(p for p in (tmp_path / "outputs").glob("*/*") if p.is_dir())
    assert len(jobs) == 2  # one directory each, whatever second they started in
    assert sorted(json.loads((job / "run.json").read_text())["seed"] for job in jobs) == [0, 1]
    for job in jobs:
        run_json = json.loads((job / "run.json").read_text())
        assert run_json["status"] == "complete" and job.name.split("_", 1)[1].startswith("full")
        assert len(read_jsonl(job / "answers.jsonl")) == len({(a["case_id"], a["qid"])
                                                              for a in read_jsonl(job / "answers.jsonl")})


def test_a_running_job_holds_its_directory_so_resume_is_refused(tmp_path, finished):
    out = tmp_path / "job"
    run(job_cfg(output_dir=str(out)))
    hydra_files = {}
    with JobLock(out):  # a job running in the directory (another process or this one)
        with pytest.raises(ResumeError, match="still running"):
            run(job_cfg(resume=str(out)))
        with pytest.raises(JobDirError, match="in use by a running job"):
            with JobLock(out):
                pass
        done = bench(tmp_path, f"resume={out}")
        one_line_error(done, str(out), "still running")
        hydra_files = sorted(p.name for p in out.iterdir())
    assert ".hydra" not in hydra_files and "main.log" not in hydra_files  # Hydra wrote nothing there
    again = run(job_cfg(resume=str(out)))  # the lock is gone with its job
    assert again["n_scored"] == N_QUESTIONS and len(read_jsonl(out / "answers.jsonl")) == N_QUESTIONS


def test_resume_takes_a_sweep_job_path_as_written_and_writes_nothing_for_a_non_job(tmp_path):
    out = tmp_path / "multirun" / "arm.n=10,arm=nlatest,seed=0"
    run(job_cfg("arm=nlatest", "arm.n=10", output_dir=str(out)))
    answers = (out / "answers.jsonl").read_bytes()
    done = bench(tmp_path, f"resume={out.relative_to(tmp_path)}", "arm=nlatest", "arm.n=10")
    assert done.returncode == 0, done.stderr
    assert "accuracy" in done.stdout and (out / "answers.jsonl").read_bytes() == answers
    assert (out / ".hydra" / "config.yaml").exists()  # Hydra's files of the resumed run are in the job
    one_line_error(bench(tmp_path, "resume=/nonexistent/job"), "no such job directory")
    assert not Path("/nonexistent").exists()
    from bench.main import UserError, preflight_args

    plain = tmp_path / "plain"
    plain.mkdir()
    file = tmp_path / "answers.jsonl"
    file.write_text("{}\n")
    for path, message in ((plain, "not a job directory"), (file, "is a file")):
        with pytest.raises(UserError, match=message):
            preflight_args([f"resume={path}"])
    assert list(plain.iterdir()) == [] and not (tmp_path / "outputs").exists()
    assert preflight_args([f"resume={out}", "seed=0"]) == [f"resume='{out}'", "seed=0"]  # quoted for Hydra


def test_a_second_sweep_into_a_sweep_directory_in_use_is_refused_in_one_line(tmp_path):
    """A running sweep holds its directory's lock (here: this process holds it, as the first sweep would)."""
    from bench.store.jobdir import JobLock

    sweep = tmp_path / "sweep"
    sweep.mkdir()
    with JobLock(sweep):
        done = bench(tmp_path, "-m", "arm=full", "seed=0,1", f"hydra.sweep.dir={sweep}")
        one_line(done, f"hydra.sweep.dir={sweep}", "in use by another sweep")
    assert not list(sweep.rglob("run.json")) and not (sweep / "multirun.yaml").exists()
    done = bench(tmp_path, "-m", "arm=full", "seed=0,1", "dataset.limit=1",
                 f"hydra.sweep.dir={sweep}", "hydra.callbacks.report.enabled=false")
    assert done.returncode == 0, done.stderr  # once the first sweep is over, the directory is free
    assert len(list(sweep.rglob("run.json"))) == 2


def test_output_dir_holds_the_hydra_files_and_main_log_and_nothing_goes_to_outputs(tmp_path):
    out = tmp_path / "D"
    done = bench(tmp_path, f"output_dir={out}", "dataset.limit=1")
    assert done.returncode == 0, done.stderr
    assert (out / "run.json").is_file() and (out / "main.log").is_file()
    assert {p.name for p in (out / ".hydra").iterdir()} >= {"config.yaml", "overrides.yaml", "hydra.yaml"}
    assert "selected 1 cases" in (out / "main.log").read_text()
    assert not (tmp_path / "outputs").exists()


def test_a_sweep_job_with_many_overrides_gets_a_directory_name_the_filesystem_takes():
    """A sweep against a local server names every job by its overrides (three base URLs, keys, ...):
    past 255 bytes the job could not make its directory (a traceback, found running the README's
    sweep against the fake server). The name is cut at 200 bytes, kept unique by a hash, seed last."""
    from bench.config.checks import MAX_JOB_NAME, _job_name

    overrides = ",".join(f"{part}.base_url=http_:_127.0.0.1_:35089_v1,{part}.api_key_env=null"
                         for part in ("model", "judge", "summarizer")) + ",mechanism=shipped"
    names = {_job_name(overrides + suffix, 0) for suffix in ("", ",prompt=sre", ",prompt=generic")}
    assert len(names) == 3 and all(len(n.encode()) <= MAX_JOB_NAME < 255 and n.endswith(",seed=0") for n in names)
    assert _job_name("arm=nlatest,arm.n=10", 2) == "arm=nlatest,arm.n=10,seed=2"  # a short name stays as it is
