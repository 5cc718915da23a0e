"""Issue 12, the rough edges a new user hit: each as the user meets it (command line, report)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest

from bench.config.checks import CONF_DIR, ConfigError, validate
from bench.runner import run
from bench.study import load_jobs
from bench.study.assemble import write_report
from bench.study.plots import plot_types

from fake_openai import FakeOpenAI
from test_hostile import bench, job_cfg, one_line_error


def test_a_dataset_setting_the_chosen_dataset_does_not_use_is_an_error(tmp_path):
    one_line_error(bench(tmp_path, "dataset.path=/nonexistent"), "dataset.path=/nonexistent is not used",
                   "dataset=local")
    assert not (tmp_path / "outputs").exists() or not any((tmp_path / "outputs").rglob("run.json"))
    one_line_error(bench(tmp_path, "dataset=hf", "dataset.path=rows.parquet"),
                   "dataset.path=rows.parquet is not used by dataset=hf", "dataset=local")
    with pytest.raises(ConfigError, match="dataset.path=rows.parquet is not used by dataset.source=hf"):
        validate(job_cfg("dataset=hf", "+dataset.path=rows.parquet"))
    with pytest.raises(ConfigError, match="dataset.revision=main is not used by dataset.source=local"):
        validate(job_cfg("dataset=local", "dataset.path=x.jsonl", "+dataset.revision=main"))
    validate(job_cfg("dataset=local", "dataset.path=x.jsonl", "dataset.format=json"))  # what local uses is fine


def test_no_http_request_lines_flood_the_console(tmp_path):
    with FakeOpenAI() as server:
        done = bench(tmp_path, "model=openai", f"model.base_url={server.base_url}", "model.api_key_env=null",
                     "dataset.limit=1", "cache.enabled=false")
        assert server.stats()["requests"] > 0
    assert done.returncode == 0, done.stderr
    assert "HTTP Request" not in done.stdout + done.stderr
    log = next((tmp_path / "outputs").rglob("main.log")).read_text()
    assert "HTTP Request" not in log


def test_a_setting_the_arm_does_not_take_is_one_line_printed_once(tmp_path):
    done = bench(tmp_path, "+arm.n=-3")
    line = one_line_error(done, "arm.n: not a setting of arm=full")
    assert "TypeError" not in line and "FullHistory" not in done.stdout + done.stderr
    assert not list((tmp_path / "outputs").rglob("main.log"))  # a refused job leaves no directory (issue 32)


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


def test_help_shows_bench_groups_options_and_examples(tmp_path):
    done = bench(tmp_path, "--help")
    assert done.returncode == 0
    options = {group: ", ".join(sorted(p.stem for p in (CONF_DIR / group).glob("*.yaml"))) for group in ("arm", "mechanism")}
    for text in (f"arm: {options['arm']}", f"mechanism: {options['mechanism']}",
                 "dataset:\n  _target_: bench.sources.Shipped\n  source: sample", "python -m bench.main -m arm=nlatest arm.n=10,20,40",
                 "bench.cache stats"):
        assert text in done.stdout, text
    assert "Powered by Hydra" not in done.stdout and not (tmp_path / "outputs").exists()


@pytest.fixture(scope="module")
def study(tmp_path_factory) -> Path:
    """Jobs started in an order that is not the study's: compact tail, nlatest 20, compact shipped, nlatest 10."""
    root = tmp_path_factory.mktemp("study")
    for name, overrides in (("c-tail", ["arm=compact", "mechanism=tail"]), ("n20", ["arm=nlatest", "arm.n=20"]),
                            ("c-shipped", ["arm=compact", "mechanism=shipped"]), ("n10", ["arm=nlatest", "arm.n=10"])):
        out = root / name
        run(job_cfg(*overrides, output_dir=str(out)))
        (out / ".hydra").mkdir()
        (out / ".hydra" / "overrides.yaml").write_text("".join(f"- {o}\n" for o in overrides))
    return root


def test_report_lists_jobs_by_config_not_by_start_time(study):
    assert [job.path.name for job in load_jobs([study])] == ["n10", "n20", "c-shipped", "c-tail"]
    result = write_report([study], study / "report")
    assert pd.read_csv(study / "report" / "jobs.csv")["job"].tolist() == ["n10", "n20", "c-shipped", "c-tail"]
    assert result["configs"]["n"].tolist()[:2] == [10, 20]


def test_report_numbers_tables_and_captions_read_cleanly(study):
    result = write_report([study], study / "report")
    page = (study / "report" / "report.html").read_text()
    assert not re.search(r"\d,\d{3}\.\d", result["markdown"] + page)  # token means: "1,483", not "1,483.3"
    assert re.search(r"\| \d,\d{3} \|", result["markdown"])
    tables = page.count("<table>")  # every table scrolls when wide (the outcome grid has its own)
    assert tables >= 2 and page.count('<div class="scroll"><table>') == tables and ".scroll{overflow-x:auto" in page
    assert "dotted: the full arm" not in page and "no full-arm job in this report" in page
    assert "seed ids" in result["markdown"] and "| seeds |" not in result["markdown"]  # ids, not a count


def test_zero_height_bars_differ_from_missing_data():
    configs = pd.DataFrame([
        {"config": "a", "short": "a", "acc.x.mean": 0.0, "acc.x.min": 0.0, "acc.x.max": 0.0,
         "acc.y.mean": 0.5, "acc.y.min": 0.5, "acc.y.max": 0.5},
        {"config": "b", "short": "b", "acc.x.mean": 0.7, "acc.x.min": 0.7, "acc.x.max": 0.7,
         "acc.y.mean": None, "acc.y.min": None, "acc.y.max": None},
    ])
    svg = plot_types(configs)
    assert svg.count('id="zero-bar"') == 1  # a measured 0: a flat mark in the config's colour
    assert svg.count('id="no-data"') == 1 and "n/a" in svg  # no data: no bar, "n/a"
