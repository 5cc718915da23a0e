"""bench.estimate (issue 22 item 3): calls, tokens, cached share and cost before any call, per job of a sweep."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from bench.config.checks import compose
from bench.estimate import estimate_job, main, sweep_overrides
from bench.runner import run

from fake_openai import FakeOpenAI

PRICE = "model.price={input: 1.0, cached_input: 0.25, output: 4.0, batch: 0.5}"


def test_the_estimate_counts_the_calls_the_job_then_makes(tmp_path):
    overrides = ["model=openai", "model.api_key_env=null", "dataset.limit=3", "judge=exact", PRICE]
    estimate = estimate_job(overrides)
    with FakeOpenAI() as server:
        metrics = run(compose([*overrides, f"model.base_url={server.base_url}", "cache.enabled=false",
                               f"output_dir={tmp_path / 'job'}"]))
    answer = estimate["kinds"]["answer"]
    assert answer["calls"] == metrics["model_calls"]["answer"]["calls"] == metrics["n_questions"]  # one call each
    assert "reference" not in estimate["kinds"] and "judge" not in estimate["kinds"]  # full arm, exact judge
    assert estimate["total"]["cost_usd"] > estimate["total"]["batch_cost_usd"] > 0
    assert estimate["total"]["cached_share"] > 0.5  # warm prefixes: all but a view's first question


def test_a_non_full_arm_adds_its_reference_and_an_llm_judge_its_calls():
    estimate = estimate_job(["model=openai", "model.api_key_env=null", "dataset.limit=2", "arm=nlatest", "arm.n=10",
                             "judge=llm", "judge.api_key_env=null"])
    kinds = estimate["kinds"]
    assert kinds["reference"]["calls"] == kinds["answer"]["calls"] == kinds["judge"]["calls"] / 2
    assert kinds["reference"]["input_tokens"] > kinds["answer"]["input_tokens"]  # the full history is longer
    assert estimate["total"]["cost_usd"] is None  # no price table: no made-up cost


def test_a_sweep_is_expanded_as_hydras_basic_sweeper_does():
    jobs = sweep_overrides(["+experiment=smoke"], multirun=True)
    assert len(jobs) == 3 and {j[0] for j in jobs} == {"+experiment/arm=full", "+experiment/arm=nlatest",
                                                        "+experiment/arm=compact"}
    grid = sweep_overrides(["arm=nlatest", "arm.n=10,20,40", "seed=0,1"], multirun=True)
    assert len(grid) == 6 and ["arm=nlatest", "arm.n=20", "seed=1"] in grid
    assert sweep_overrides(["arm=full"], multirun=False) == [["arm=full"]]


def test_the_command_prints_each_job_and_the_total_and_refuses_a_bad_override_in_one_line(capsys):
    assert main(["--json", "-m", "arm=nlatest", "arm.n=10,20", "dataset.limit=2", "model=openai",
                 "model.api_key_env=null", PRICE]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(lines) == 3 and lines[-1]["jobs"] == 2 and lines[-1]["cost_usd"] is not None
    done = subprocess.run([sys.executable, "-m", "bench.estimate", "arm=nope"], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 2 and done.stderr.startswith("error: ") and len(done.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("option", ["sample", "ops"])
def test_offline_defaults_estimate_without_a_server(option):
    estimate = estimate_job([f"dataset={option}", "dataset.limit=2"])
    assert estimate["n_questions"] > 0 and estimate["kinds"]["answer"]["calls"] == estimate["n_questions"]


def test_a_job_records_the_estimate_beside_what_it_spent_and_the_report_shows_both(tmp_path):
    from bench.study import load_jobs
    from bench.study.tables import job_row

    with FakeOpenAI() as server:
        metrics = run(compose(["model=openai", "model.api_key_env=null", "dataset.limit=3", "arm=nlatest", "arm.n=10",
                               "judge=exact", PRICE, f"model.base_url={server.base_url}", "cache.enabled=false",
                               f"output_dir={tmp_path / 'job'}"]))
    estimate = metrics["estimate"]
    assert estimate["calls"] == metrics["model_calls"]["total"]["calls"]  # one call per answer, arm and reference
    assert 0.5 < estimate["cost_usd"] / metrics["cost_usd"] < 2.0  # tokens counted apart (the fake omits tools)
    stored = json.loads((tmp_path / "job" / "metrics.json").read_text())
    assert stored["estimate"] == estimate
    row = job_row(load_jobs([tmp_path / "job"])[0])
    assert row["estimated_cost_usd"] == pytest.approx(estimate["cost_usd"]) and row["cost_usd"] > 0
