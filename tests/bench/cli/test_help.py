"""python -m bench.main --help: bench's groups, their options and examples (not Hydra's page), and how a
named sweep is added."""

from __future__ import annotations

import subprocess
import sys

from bench.config.checks import CONF_DIR

from commands import bench


def test_help_shows_bench_groups_options_and_examples(tmp_path):
    done = bench(tmp_path, "--help")
    assert done.returncode == 0
    options = {group: ", ".join(sorted(p.stem for p in (CONF_DIR / group).glob("*.yaml"))) for group in ("arm", "mechanism")}
    for text in (f"arm: {options['arm']}", f"mechanism: {options['mechanism']}",
                 "dataset:\n  _target_: bench.sources.Shipped\n  source: sample", "python -m bench.main -m arm=nlatest arm.n=10,20,40",
                 "bench.cache stats"):
        assert text in done.stdout, text
    assert "Powered by Hydra" not in done.stdout and not (tmp_path / "outputs").exists()


def test_help_says_experiment_is_added_with_a_plus():
    done = subprocess.run([sys.executable, "-m", "bench.main", "--help"], capture_output=True, text=True, timeout=120)
    assert "a named sweep is added with + (-m +experiment=smoke)" in done.stdout
