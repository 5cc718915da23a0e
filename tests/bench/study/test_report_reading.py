"""The report reads cleanly: jobs in the order of their configs (not of their start), whole-number token
means with thousands separators, wide tables that scroll, captions that say what is there, and a measured
zero drawn apart from missing data."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from bench.runner import run
from bench.study import load_jobs
from bench.study.assemble import write_report
from bench.study.plots import plot_types

from jobs import job_cfg


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
