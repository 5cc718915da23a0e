"""Every script in benchmarks/ runs on a fresh clone: shipped data by default, no traceback (issue 20).

Each runs here with a tiny setting (one to three cases, one pass); they take 15-30 s each on
2 cores, so they are ``slow`` (``.ci/run`` runs them); the default suite checks their defaults."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks"

TINY = {
    "bench_views.py": ["--repeat", "1", "--cases", "2"],
    "bench_startup.py": ["--runs", "1", "--sweep-runs", "1"],
    "bench_memory.py": ["--cases", "3,15"],
    "bench_cost.py": ["--cases", "1", "--seeds", "0", "--prompts", "sre", "--mechanisms", "shipped"],
    "bench_runner.py": ["--cases", "2", "--concurrency", "2", "--latency", "0.01", "--bare"],
    "bench_throughput.py": ["--cases", "2", "--configs", "4", "--latency", "0.01"],
    "bench_coverage.py": ["--reps", "50", "--ks", "10", "--draws", "100"],
    "bench_power.py": [],  # three designs x two offline jobs: about 30 s
    "bench_flags.py": ["--sources", "sample", "--prompts", "sre"],
    "bench_monotone.py": ["--sources", "sample,shell"],
    "bench_references.py": ["--sources", "sample,shell"],
    "bench_case_building.py": ["--sizes", "200,400"],
    "bench_questions.py": [],
    "bench_summary_budget.py": ["--sources", "sample", "--prompts", "sre"],
    "bench_windows.py": [],
    "bench_peers.py": ["--datasets", "sample", "--limit", "2"],
    "bench_budgets.py": ["--datasets", "sample", "--limit", "2", "--budgets", "0.25"],
    "bench_prefix_cache.py": ["--cases", "2", "--latency", "0.01", "--concurrency", "4", "--repeats", "1"],
    "bench_shared_cache.py": ["--limit", "2", "--latency", "0.01", "--repeat", "1"],
    "bench_inspect.py": ["--cases", "2", "--repeats", "1", "--latencies", "0.01", "--concurrency", "4"],
}


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
