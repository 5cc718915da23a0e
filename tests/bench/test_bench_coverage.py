"""benchmarks/bench_coverage.py at a tiny setting: every setting reported, before and after, the worst last."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from paths import PROJECT

SCRIPT = PROJECT / "benchmarks" / "bench_coverage.py"


def _module():
    spec = importlib.util.spec_from_file_location("bench_coverage", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow  # 81 simulated settings with the exact floor and Pratt's bound: ~5 s on two cores
def test_tiny_run_reports_every_setting_and_the_lowest_coverage_and_widest_ratio_last(capsys):
    rows = _module().main(["--reps", "60", "--ks", "10", "--draws", "200"])
    # 3 accuracies x 3 correlations, for accuracy, relative and 5 paired models, and the two
    # check models at discordance 0.08 (counted apart)
    assert len(rows) == 9 * 9 and sum(r["check"] for r in rows) == 9 * 2
    assert {r["statistic"] for r in rows} == {"accuracy", "relative", "paired"}
    assert {r["model"] for r in rows if r["statistic"] == "paired"} == \
        {"swap 0.2", "swap 0.03", "loss 0.2", "loss 0.03", "null", "swap 0.08", "loss 0.08"}
    # the achievable width is computed for every paired setting at K <= 20, and it is a floor:
    # rare discordance needs more width than the oracle's normal shape at 10 instances
    assert all("achievable" in r for r in rows if r["statistic"] == "paired")
    assert all(r["achievable"] > 1 for r in rows if r["model"] == "loss 0.03" and r["rho"] == 0)
    # shares get the same floor at K <= 10; at common rates it is below the oracle's width
    assert all("achievable" in r for r in rows if r["statistic"] != "paired")
    assert all(r["achievable"] < 1 for r in rows if r["statistic"] != "paired" and r["rho"] == 0)
    for row in rows:
        assert 0 <= row["before"] <= 1 and 0 <= row["after"] <= 1 and row["after_ratio"] > 0
        assert row["after_zero"] == 0  # no interval has zero width
    # the previous two-way method over-covers: the fixed types' spread counted as uncertainty
    assert np.median([r["before_ratio"] for r in rows]) > np.median([r["after_ratio"] for r in rows])
    out = capsys.readouterr().out.strip().splitlines()
    assert any(line.startswith("AFTER: ") and "/63 settings below target" in line for line in out)
    assert any(line.startswith("check settings (discordance 0.08, 0.08") for line in out)
    assert out[-1].startswith("lowest coverage AFTER: ") and out[-2].startswith("lowest coverage BEFORE: ")
    main = [r for r in rows if not r["check"]]  # the check settings are reported on their own line
    assert f"{min(r['after'] for r in main):.1%}" in out[-1] and "largest width ratio AFTER" in out[-1]


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


def test_pratt_bound_by_hand():
    # one side of Pratt's bound at a true rate of 0 (every count is 0): the most powerful test
    # of rate r against 0 rejects the count 0 with probability 0.05 / (1 - r)^n, so the bound is
    # the integral of 1 - 0.05 / (1 - r)^n up to where it reaches 0: with n = 30,
    # r* = 1 - 0.05^(1/30), and the integral is r* - 0.05 ((1 - r*)^(1 - n) - 1) / (n - 1)
    module = _module()
    n = 30
    top = 1 - 0.05 ** (1 / n)
    expected = top - 0.05 * ((1 - top) ** (1 - n) - 1) / (n - 1)
    assert module._pratt_side(n, 0.0, True, grid=20_000) == pytest.approx(expected, rel=1e-3)
    assert module._pratt_side(n, 0.0, False) == 0.0  # nothing below a rate of 0


def test_share_floor_is_pratts_bound_on_the_binomial_share():
    # accuracy: the binomial share of the n questions at the types' mean accuracy, both sides;
    # relative to full: the full-correct questions at the kept rate sum p_t^2 / sum p_t. A valid
    # interval's expected width is below the normal width 2 x 1.96 x sqrt(p (1 - p) / n) at
    # common rates (Pratt's bound sits at about 0.8-0.9 of it), and above half of it
    module = _module()
    sizes = np.random.default_rng(29).integers(2, module.MAX_SIZE + 1, size=(24, 6)).sum(axis=1)
    rate = float(np.mean(module.type_rates(0.5)))
    assert rate == pytest.approx(0.5)
    by_hand = np.mean([module._pratt_side(n, rate, True) + module._pratt_side(n, rate, False)
                       for n in sizes.tolist()])
    assert module.achievable_share_width("accuracy", 6, 0.5) == pytest.approx(by_hand)
    normal = np.mean([2 * 1.96 * np.sqrt(0.25 / n) for n in sizes.tolist()])
    assert 0.5 * normal < by_hand < normal
    rates = module.type_rates(0.8)
    kept = float(np.mean(rates**2) / np.mean(rates))
    counts = np.rint(sizes * np.mean(rates)).astype(int)
    by_hand = np.mean([module._pratt_side(n, kept, True) + module._pratt_side(n, kept, False)
                       for n in counts.tolist()])
    assert module.achievable_share_width("relative", 6, 0.8) == pytest.approx(by_hand)
