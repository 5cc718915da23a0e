"""A job killed while it reads its cases (``kill -9`` before the case set is written) is a job that
``resume=`` continues, reading its cases again, to the records an uninterrupted run gives; a
directory such a kill left before this fix (a spool, no ``run.json``) takes a new job.

Failed before its fix (issue 32, "Crashes and hangs").
"""

from __future__ import annotations

import json
import signal

from bench.config.checks import compose
from bench.runner import run
from bench.store.jobdir import JobDirError, check_new, check_resume_path

from commands import bench, one_line_error
from custom_sources import KILL_AFTER
from jobs import canonical

SOURCE = "dataset._target_=custom_sources.KilledWhileReading"


def test_a_job_killed_while_reading_its_cases_resumes_to_the_uninterrupted_records(tmp_path):
    job = tmp_path / "job"
    killed = bench(tmp_path, SOURCE, "dataset.limit=4", "cache.enabled=false", f"output_dir={job}",
                   env={KILL_AFTER: "3"})
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
    assert json.loads((job / "run.json").read_text())["status"] == "incomplete"
    assert not (job / "cases.jsonl").exists()  # killed before the case set was written

    again = bench(tmp_path, SOURCE, "dataset.limit=4", "cache.enabled=false", f"output_dir={job}")
    one_line_error(again, f"resume={job}")  # a new job there is refused, and told how to continue

    resumed = bench(tmp_path, SOURCE, "dataset.limit=4", "cache.enabled=false", f"resume={job}")
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert json.loads((job / "run.json").read_text())["status"] == "complete"
    assert not any(p.name.endswith((".spool", ".next")) for p in job.iterdir())

    whole = tmp_path / "whole"
    run(compose([SOURCE, "dataset.limit=4", "cache.enabled=false", f"output_dir={whole}"]))
    for name in ("cases.jsonl", "scores.jsonl", "reference_scores.jsonl"):
        if (whole / name).exists():
            assert canonical(job / name) == canonical(whole / name), name
    assert canonical(job / "answers.jsonl", drop=("usage",)) == canonical(whole / "answers.jsonl", drop=("usage",))


def test_a_directory_left_by_a_kill_before_run_json_existed_takes_a_new_job(tmp_path):
    job = tmp_path / "job"
    (job / ".hydra").mkdir(parents=True)
    (job / "main.log").write_text("")
    (job / "cases.jsonl.spool").write_text('{"case_id": "half')
    check_new(job)  # a new job writes its cases anew
    try:
        check_resume_path(job)
    except JobDirError as err:
        assert f"start it again with output_dir={job}" in str(err)
    else:
        raise AssertionError("resume of a directory without run.json was accepted")
    run(compose(["dataset.limit=2", "cache.enabled=false", f"output_dir={job}"]))
    assert json.loads((job / "run.json").read_text())["status"] == "complete"
    assert not (job / "cases.jsonl.spool").exists()
