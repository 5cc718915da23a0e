"""A sweep checks what all its jobs need (the dataset file, the endpoint, the key) once, before any job: one
line naming the sweep's job count, nothing started; a sweep whose endpoint answers runs every job."""

from __future__ import annotations

from cli_batch import JOB_MODULES, MODEL_MODULES, run_commands
from commands import job_like
from fake_openai import FakeOpenAI


def test_a_sweep_checks_its_file_and_endpoint_once_before_any_job(tmp_path):
    unreachable = ["model=openai", "model.api_key_env=null", "model.base_url=http://127.0.0.1:9/v1",
                   "model.max_retries=0"]
    commands = [["-m", "dataset=chat", "dataset.path=missing.jsonl", "arm=full,none", "seed=0,1,2"],
                ["-m", "+experiment=smoke", "dataset=local", "dataset.path=../shared/data/real/dev.parquet"],
                ["-m", *unreachable, "arm=full,none"],
                ["-m", "model=openai", "arm=full,none"]]
    results = run_commands([(tmp_path, args) for args in commands], preload=JOB_MODULES + MODEL_MODULES)
    lines = [err.strip() for _code, _out, err in results]
    assert [code for code, _out, _err in results] == [2, 2, 2, 2], lines
    assert lines[0] == (f"error: dataset file not found: {tmp_path / 'missing.jsonl'} (checked once for the 6 jobs "
                        "of the sweep: none started)")
    assert lines[1].startswith("error: dataset file not found: ") and "(checked once for the 3 jobs" in lines[1]
    assert lines[2].startswith("error: model: cannot reach the endpoint http://127.0.0.1:9/v1 ")
    assert lines[2].endswith("(checked once for the 2 jobs of the sweep: none started)")
    assert lines[3].startswith("error: model: the API key variable OPENAI_API_KEY is not set")
    assert all(len(line.splitlines()) == 1 for line in lines)
    assert job_like(tmp_path) == []


def test_a_sweep_whose_endpoint_answers_runs(tmp_path):
    with FakeOpenAI() as server:
        args = ["-m", "model=openai", f"model.base_url={server.base_url}", "model.api_key_env=null",
                "dataset.limit=1", "cache.enabled=false", "arm=full,none"]
        [(code, out, err)] = run_commands([(tmp_path, args)], preload=JOB_MODULES + MODEL_MODULES)
    assert code == 0, err
    assert len(list((tmp_path / "multirun").rglob("run.json"))) == 2


def test_a_sweep_with_a_provider_arm_its_provider_cannot_run_is_refused_once_before_any_job():
    from bench.runner.setup import check_sweep_prerequisites

    line = check_sweep_prerequisites(["-m", "arm=full,anthropic_clear", "dataset.limit=1"])
    assert line is not None and line.startswith("arm=anthropic_clear is Anthropic's tool-result clearing"), line
    assert line.endswith("(checked once for the 2 jobs of the sweep: none started)")
