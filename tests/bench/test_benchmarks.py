"""Every script in benchmarks/ runs on a fresh clone: shipped data by default, no traceback (issue 20).

Each runs here with a tiny setting (one to three cases, one pass); they take 15-30 s each on
2 cores, so they are ``slow`` (``.ci/run`` runs them); the default suite checks their defaults."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from benchmark_settings import TINY
from paths import PROJECT

ROOT = PROJECT
BENCH = ROOT / "benchmarks"

def test_every_benchmark_has_a_tiny_setting_and_its_default_data_is_in_the_repository():
    assert sorted(p.name for p in BENCH.glob("bench_*.py")) == sorted(TINY)
    table = (BENCH / "README.md").read_text()
    assert [name for name in sorted(TINY) if f"| `{name}` |" not in table] == []  # a row per script
    sys.path.insert(0, str(BENCH))
    try:
        import _common
    finally:
        sys.path.remove(str(BENCH))
    assert _common.DEV.is_file() and ROOT in _common.DEV.resolve().parents
    for script in BENCH.glob("bench_*.py"):
        assert "shared/data" not in script.read_text() and "shared\" /" not in script.read_text()


@pytest.mark.slow
@pytest.mark.parametrize("script", sorted(TINY))
def test_benchmark_runs_from_another_directory_and_prints_figures(tmp_path, script):
    env = {**os.environ, "TQDM_DISABLE": "1"}
    done = subprocess.run([sys.executable, str(BENCH / script), *TINY[script]], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    assert any(ch.isdigit() for ch in done.stdout) and len(done.stdout.splitlines()) >= 3
