"""benchmarks/bench_coverage.py at a tiny setting: every setting reported, before and after, lowest last."""

from __future__ import annotations

import importlib.util
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_coverage.py"


def _module():
    spec = importlib.util.spec_from_file_location("bench_coverage", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_tiny_run_reports_every_setting_and_the_lowest_coverage_last(capsys):
    rows = _module().main(["--reps", "40", "--ks", "10", "--resamples", "30"])
    # 3 accuracies x 3 correlations x 2 template kinds, for accuracy, relative and paired (2 discordances)
    assert len(rows) == 18 * 4
    assert {r["statistic"] for r in rows} == {"accuracy", "relative", "paired"}
    assert {r["discordance"] for r in rows if r["statistic"] == "paired"} == {0.2, 0.03}
    for row in rows:
        assert 0 <= row["before"] <= 1 and 0 <= row["after"] <= 1
        assert row["after_zero"] == 0  # the score intervals never have zero width
    # the old percentile bootstrap collapses to zero width with rare discordance at 10 clusters
    assert max(r["before_zero"] for r in rows if r["discordance"] == 0.03) > 0.1
    out = capsys.readouterr().out.strip().splitlines()
    assert out[-1].startswith("lowest coverage AFTER: ") and out[-2].startswith("lowest coverage BEFORE: ")
    assert f"{min(r['after'] for r in rows):.1%}" in out[-1]


def test_simulated_truths_are_what_the_intervals_aim_at():
    # a very large case set: the point estimates sit on the simulated truths
    module = _module()
    import numpy as np

    rng = np.random.default_rng(0)
    mask, inst, tmpl = module._design(rng, 1, 4000)
    y = module._bernoulli(rng, module._rate(rng, 1, 0.8, False, tmpl), 0.3, 4000)
    assert abs((y * mask).sum() / mask.sum() - 0.8) < 0.01
