"""Resume: a killed job continues in its directory without losing or duplicating a record.

Jobs run on the shipped sample with the offline stack (deterministic), through answerers
defined here that are slow, crash, fail or overflow on purpose. The reference is always
an uninterrupted run of the same config.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from omegaconf import open_dict

from bench.answering.evidence_reader import EvidenceReader
from bench.runner import ResumeError, run
from bench.store.records import read_jsonl
from bench.store.schema import Answer

from builders import sample_questions
from paths import CONF_DIR, DATA, pythonpath

HERE = Path(__file__).resolve().parent  # this module: its readers are loaded by `_target_` in subprocess jobs


class SlowReader(EvidenceReader):
    """The offline reader, slowed down by ``BENCH_TEST_DELAY`` seconds per answer; with
    ``BENCH_TEST_PAUSE_AFTER=N`` every answer after the N-th blocks (for at most 10 minutes),
    so a job killed after N answers holds exactly N, however fast or slow the machine is."""

    started = 0
    lock = threading.Lock()

    def __init__(self, max_concurrency: int = 1) -> None:
        self.max_concurrency = max_concurrency

    def answer(self, case, view, question) -> Answer:
        time.sleep(float(os.environ.get("BENCH_TEST_DELAY", "0")))
        pause_after = os.environ.get("BENCH_TEST_PAUSE_AFTER")
        if pause_after is not None:
            with SlowReader.lock:
                SlowReader.started += 1
                held = SlowReader.started > int(pause_after)
            if held:
                time.sleep(600)  # until the test kills the job
        return super().answer(case, view, question)


class CrashingReader(SlowReader):
    """Raises KeyboardInterrupt (a kill, not a recorded failure) after ``crash_after`` answers."""

    crash_after: int | None = None
    answered = 0

    def answer(self, case, view, question) -> Answer:
        cls = type(self)
        if cls.crash_after is not None and cls.answered >= cls.crash_after:
            raise KeyboardInterrupt("simulated kill")
        cls.answered += 1
        return super().answer(case, view, question)


class FlakyReader(SlowReader):
    """Fails every question of the cases named in ``failing`` (a recorded error), overflows on ``overflow``."""

    failing: set[str] = set()
    overflow: set[str] = set()
    calls: Counter = Counter()

    def answer(self, case, view, question) -> Answer:
        type(self).calls[question.qid] += 1
        if case.case_id in self.failing:
            raise RuntimeError(f"endpoint down for {case.case_id}")
        if case.case_id in self.overflow:
            return Answer(case_id=case.case_id, qid=question.qid, type=question.type, answer="",
                          outcome="context_overflow", error="too long")
        return super().answer(case, view, question)


def job_cfg(*overrides: str, model: dict | None = None):
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose("config", overrides=list(overrides))
    if model is not None:
        with open_dict(cfg):
            cfg.model = model
    return cfg


def lines(path: Path) -> list[str]:
    """A JSONL file's records as canonical JSON strings, sorted (concurrency changes the order)."""
    return sorted(json.dumps(r, sort_keys=True) for r in read_jsonl(path))


def keys(path: Path) -> list[tuple[str, str]]:
    return [(r["case_id"], r["qid"]) for r in read_jsonl(path)]


def no_usage(path: Path) -> list[str]:
    return sorted(json.dumps({k: v for k, v in r.items() if k != "usage"}, sort_keys=True)
                  for r in read_jsonl(path))


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("uninterrupted")
    run(job_cfg(f"output_dir={out}", model={"_target_": "test_resume.SlowReader", "max_concurrency": 3}))
    return out


def test_in_process_kill_then_resume_matches_an_uninterrupted_run(tmp_path, uninterrupted, monkeypatch):
    out = tmp_path / "job"
    model = {"_target_": "test_resume.CrashingReader", "max_concurrency": 3}
    monkeypatch.setattr(CrashingReader, "crash_after", 7)
    monkeypatch.setattr(CrashingReader, "answered", 0)
    with pytest.raises(KeyboardInterrupt):
        run(job_cfg(f"output_dir={out}", model=model))
    assert json.loads((out / "run.json").read_text())["status"] == "incomplete"
    partial = keys(out / "answers.jsonl")
    assert 0 < len(partial) < sample_questions()

    monkeypatch.setattr(CrashingReader, "crash_after", None)
    metrics = run(job_cfg(f"resume={out}", model=model))
    assert metrics["n_scored"] == metrics["n_questions"] == sample_questions()
    assert json.loads((out / "run.json").read_text())["status"] == "complete"
    for name in ("answers.jsonl", "scores.jsonl"):
        assert len(set(keys(out / name))) == len(keys(out / name)) == sample_questions(), name
    assert lines(out / "scores.jsonl") == lines(uninterrupted / "scores.jsonl")
    assert no_usage(out / "answers.jsonl") == no_usage(uninterrupted / "answers.jsonl")
    assert len(read_jsonl(out / "views.jsonl")) == 8
    assert set(partial) <= set(keys(out / "answers.jsonl"))


def test_a_subprocess_job_can_load_the_tests_own_components():
    """The slow kill test below runs ``bench.main`` with this module's readers by ``_target_``:
    the environment it hands the job must import them (and ``builders`` -> ``samplegen``)."""
    done = subprocess.run([sys.executable, "-c", "import test_resume, builders, commands, custom_policies"],
                          env={**os.environ, "PYTHONPATH": pythonpath(HERE)}, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr


@pytest.mark.slow  # several subprocess jobs; .ci/run runs it
def test_sigkilled_cli_job_resumes_to_the_same_scores(tmp_path, uninterrupted):
    out = tmp_path / "killed"
    # six answers, then every answer blocks: killed with exactly six on disk, at any speed
    env = {**os.environ, "PYTHONPATH": pythonpath(HERE), "BENCH_TEST_PAUSE_AFTER": "6"}
    env.pop("HYDRA_FULL_ERROR", None)
    args = [sys.executable, "-m", "bench.main", "model._target_=test_resume.SlowReader",
            "+model.max_concurrency=2"]
    proc = subprocess.Popen([*args, f"hydra.run.dir={out}"], cwd=tmp_path, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 300  # a bound against a hang, not a timing the test relies on
    while len(read_jsonl(out / "answers.jsonl")) < 6 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait(30)
    killed_at = len(read_jsonl(out / "answers.jsonl"))
    assert killed_at == 6, killed_at
    assert json.loads((out / "run.json").read_text())["status"] == "incomplete"

    env.pop("BENCH_TEST_PAUSE_AFTER")
    done = subprocess.run([*args, f"resume={out}"], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads((out / "run.json").read_text())["status"] == "complete"
    assert len(set(keys(out / "answers.jsonl"))) == len(keys(out / "answers.jsonl")) == sample_questions()
    assert lines(out / "scores.jsonl") == lines(uninterrupted / "scores.jsonl")
    provenance = json.loads((out / "run.json").read_text())
    assert len(provenance["resumed"]) == 1


def test_failed_answers_are_recorded_then_retried_on_resume(tmp_path, uninterrupted, monkeypatch):
    out = tmp_path / "flaky"
    model = {"_target_": "test_resume.FlakyReader", "max_concurrency": 2}
    first_case = read_jsonl(uninterrupted / "cases.jsonl")[0]["case_id"]
    monkeypatch.setattr(FlakyReader, "failing", {first_case})
    monkeypatch.setattr(FlakyReader, "calls", Counter())
    metrics = run(job_cfg(f"output_dir={out}", model=model))
    errors = [a for a in read_jsonl(out / "answers.jsonl") if a["outcome"] == "error"]
    assert errors and all(a["case_id"] == first_case and "endpoint down" in a["error"] for a in errors)
    assert metrics["n_errors"] == len(errors) and metrics["n_cases"] == 8  # the job went on
    assert {s["verdict"] for s in read_jsonl(out / "scores.jsonl") if s["case_id"] == first_case} == {"unscored"}
    assert json.loads((out / "run.json").read_text())["status"] == "incomplete"

    monkeypatch.setattr(FlakyReader, "failing", set())
    run(job_cfg(f"resume={out}", model=model))
    assert json.loads((out / "run.json").read_text())["status"] == "complete"
    assert lines(out / "scores.jsonl") == lines(uninterrupted / "scores.jsonl")
    assert len(keys(out / "answers.jsonl")) == sample_questions() == len(set(keys(out / "answers.jsonl")))
    assert all(n <= 2 for n in FlakyReader.calls.values())


def test_context_overflow_is_an_outcome_and_is_not_retried(tmp_path, uninterrupted, monkeypatch):
    out = tmp_path / "overflow"
    model = {"_target_": "test_resume.FlakyReader"}
    big = read_jsonl(uninterrupted / "cases.jsonl")[1]["case_id"]
    monkeypatch.setattr(FlakyReader, "failing", set())
    monkeypatch.setattr(FlakyReader, "overflow", {big})
    monkeypatch.setattr(FlakyReader, "calls", Counter())
    metrics = run(job_cfg(f"output_dir={out}", model=model))
    n_big = sum(1 for a in read_jsonl(out / "answers.jsonl") if a["case_id"] == big)
    assert metrics["outcomes"]["context_overflow"] == n_big > 0
    assert json.loads((out / "run.json").read_text())["status"] == "complete"
    run(job_cfg(f"resume={out}", model=model))
    assert sum(FlakyReader.calls.values()) == sample_questions()  # nothing asked twice
    assert len(keys(out / "answers.jsonl")) == sample_questions()


def test_resume_with_another_config_is_refused(tmp_path, uninterrupted):
    with pytest.raises(ResumeError, match="seed: 0 -> 1"):
        run(job_cfg(f"resume={uninterrupted}", "seed=1",
                    model={"_target_": "test_resume.SlowReader", "max_concurrency": 3}))
    with pytest.raises(ResumeError, match="no such job directory"):
        run(job_cfg(f"resume={tmp_path / 'nope'}"))


def test_a_repeated_finished_job_does_no_work(tmp_path, uninterrupted, monkeypatch):
    monkeypatch.setattr(FlakyReader, "calls", Counter())
    monkeypatch.setattr(FlakyReader, "failing", set())
    monkeypatch.setattr(FlakyReader, "overflow", set())
    model = {"_target_": "test_resume.FlakyReader"}
    out = tmp_path / "twice"
    run(job_cfg(f"output_dir={out}", model=model))
    before = {name: (out / name).read_text() for name in ("answers.jsonl", "scores.jsonl", "views.jsonl")}
    run(job_cfg(f"resume={out}", model=model))
    assert sum(FlakyReader.calls.values()) == sample_questions()
    assert before == {name: (out / name).read_text() for name in before}


PRE_MOVE_JOB = DATA / "pre_move_job"


def test_a_job_written_before_the_modules_moved_resumes(tmp_path):
    """``tests/data/pre_move_job``: a job (arm=compact, dataset.limit=2) written by main before issue 33 moved
    the modules, killed after 6 of its 13 answers. Its run.json names the old ``_target_`` paths
    (``bench.judge.ExactJudge``, ``bench.reader.EvidenceReader``); resumed now, it finishes with the records
    of an uninterrupted run of the same config, the 6 kept answers not asked again."""
    before = json.loads((PRE_MOVE_JOB / "run.json").read_text())["config"]
    assert before["judge"]["_target_"] == "bench.judge.ExactJudge"
    assert before["model"]["_target_"] == "bench.reader.EvidenceReader"
    job = tmp_path / "job"
    import shutil

    shutil.copytree(PRE_MOVE_JOB, job)
    kept = lines(job / "answers.jsonl")
    env = {**os.environ, "PYTHONPATH": pythonpath()}
    done = subprocess.run([sys.executable, "-m", "bench.main", "arm=compact", "dataset.limit=2", f"output_dir={job}",
                           f"resume={job}"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    fresh = tmp_path / "fresh"
    run(job_cfg("arm=compact", "dataset.limit=2", f"output_dir={fresh}"))
    assert len(keys(job / "answers.jsonl")) == len(set(keys(job / "answers.jsonl"))) == 13
    assert set(kept) <= set(lines(job / "answers.jsonl"))
    assert no_usage(job / "answers.jsonl") == no_usage(fresh / "answers.jsonl")
    assert lines(job / "scores.jsonl") == lines(fresh / "scores.jsonl")
    assert json.loads((job / "run.json").read_text())["status"] == "complete"
