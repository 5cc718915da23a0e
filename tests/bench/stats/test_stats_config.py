"""stats.generalize_types: composes, is validated, and where it is on every figure says so."""

from __future__ import annotations

import json

import pytest
from hydra import compose, initialize_config_dir
from hydra.errors import ConfigCompositionException

from bench.config.checks import ConfigError, generalize_types, validate
from bench.main import format_summary
from bench.report import write_report

from jobs import run_job
from paths import CONF_DIR


def compose_with(*overrides: str):
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return compose("config", overrides=list(overrides))


def test_stats_node_composes_off_by_default_and_validates():
    cfg = compose_with()
    assert cfg.stats.generalize_types is False and generalize_types(cfg) is False
    validate(cfg)
    on = compose_with("stats.generalize_types=true")
    assert on.stats.generalize_types is True and generalize_types(on) is True
    validate(on)
    with pytest.raises(ConfigError, match="stats.generalize_types"):
        validate(compose_with("stats.generalize_types=maybe"))
    with pytest.raises(ConfigCompositionException):
        compose_with("stats.generalise_types=true")  # a misspelt key fails at compose time


@pytest.fixture(scope="module")
def jobs(tmp_path_factory):
    root = tmp_path_factory.mktemp("stats")
    fixed = run_job(root / "sweep" / "fixed", "arm=nlatest", "arm.n=10", "dataset.limit=4")
    random_types = run_job(root / "other" / "types", "arm=nlatest", "arm.n=20", "dataset.limit=4",
                           "stats.generalize_types=true")
    return fixed, random_types


def test_the_two_way_method_is_recorded_and_labelled_where_it_is_used(jobs, tmp_path):
    fixed, random_types = jobs
    m_fixed = json.loads((fixed / "metrics.json").read_text())
    m_types = json.loads((random_types / "metrics.json").read_text())
    assert m_fixed["interval_method"] == "instances" and m_types["interval_method"] == "instances+types"
    # the same questions: the two-way interval is at least as wide (it adds the types' spread)
    assert "other question types" in format_summary({**m_types, "job_dir": "x"})
    assert "for this mix of question types" in format_summary({**m_fixed, "job_dir": "x"})
    report = write_report([fixed, random_types], tmp_path / "report")
    pairs = report["pairs"]
    assert list(pairs["interval_method"]) == ["instances+types"]  # either job two-way: the pair is
    assert "‡" in report["markdown"] and "stats.generalize_types=true" in report["markdown"]
    configs = report["configs"].set_index("arm_order", drop=False)
    assert set(report["configs"]["interval_method"]) == {"instances", "instances+types"}
    assert len(configs) == 2
