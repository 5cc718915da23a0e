"""benchmarks/bench_coverage.py at a tiny setting: every setting reported, before and after, the worst last."""

from __future__ import annotations

import importlib.util

import numpy as np

from paths import PROJECT

SCRIPT = PROJECT / "benchmarks" / "bench_coverage.py"


def _module():
    spec = importlib.util.spec_from_file_location("bench_coverage", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_tiny_run_reports_every_setting_and_the_lowest_coverage_and_widest_ratio_last(capsys):
    rows = _module().main(["--reps", "60", "--ks", "10", "--draws", "200"])
    # 3 accuracies x 3 correlations, for accuracy, relative and 5 paired models
    assert len(rows) == 9 * 7
    assert {r["statistic"] for r in rows} == {"accuracy", "relative", "paired"}
    assert {r["model"] for r in rows if r["statistic"] == "paired"} == \
        {"swap 0.2", "swap 0.03", "loss 0.2", "loss 0.03", "null"}
    for row in rows:
        assert 0 <= row["before"] <= 1 and 0 <= row["after"] <= 1 and row["after_ratio"] > 0
        assert row["after_zero"] == 0  # no interval has zero width
    # the previous two-way method over-covers: the fixed types' spread counted as uncertainty
    assert np.median([r["before_ratio"] for r in rows]) > np.median([r["after_ratio"] for r in rows])
    out = capsys.readouterr().out.strip().splitlines()
    assert out[-1].startswith("lowest coverage AFTER: ") and out[-2].startswith("lowest coverage BEFORE: ")
    assert f"{min(r['after'] for r in rows):.1%}" in out[-1] and "largest width ratio AFTER" in out[-1]


def test_simulated_truths_are_what_the_intervals_aim_at():
    # a very large case set: the estimates sit on the fixed-mix truths
    module = _module()
    rng = np.random.default_rng(0)
    mask, inst, types = module.design(rng, 1, 4000)
    rate = module.type_rates(0.8)[types]
    y = module.correlated(rng, rate, 0.3, 4000)
    truth = (rate * mask).sum() / mask.sum()
    assert abs((y * mask).sum() / mask.sum() - truth) < 0.01
    assert abs(truth - 0.8) < 0.05  # the types spread around the level
