"""Shared fixtures: the real samples shipped with the project, and finished offline jobs on the shipped
sample that tests in several folders read (made once per worker process, never written to)."""

from __future__ import annotations

from pathlib import Path

import pytest

# the helper modules are on sys.path (`pythonpath` in pyproject); the paths were defined here once
from paths import CONF_DIR, DEV_PARQUET, OPS_JSONL, PROJECT  # noqa: F401 - re-exported for older imports


@pytest.fixture
def dev_parquet() -> Path:
    """The real OpenHands sample (a copy of ../shared/data/real/dev.parquet)."""
    assert DEV_PARQUET.exists(), f"missing test data {DEV_PARQUET}"
    return DEV_PARQUET


@pytest.fixture
def ops_jsonl() -> Path:
    """The real operations sample (a copy of ../shared/data/ops/dev.jsonl)."""
    assert OPS_JSONL.exists(), f"missing shipped sample {OPS_JSONL}"
    return OPS_JSONL


@pytest.fixture(scope="session")
def finished(tmp_path_factory) -> Path:
    """An uninterrupted offline job on the shipped sample (the reference of every comparison)."""
    from bench.runner import run

    from jobs import job_cfg

    out = tmp_path_factory.mktemp("finished") / "job"
    run(job_cfg(output_dir=str(out)))
    return out


@pytest.fixture(scope="session")
def two_jobs(tmp_path_factory) -> tuple[Path, Path]:
    """Two finished offline jobs on the shipped sample (full and nlatest)."""
    from bench.runner import run

    from jobs import job_cfg

    root = tmp_path_factory.mktemp("jobs")
    run(job_cfg(output_dir=str(root / "a")))
    run(job_cfg("arm=nlatest", "arm.n=2", output_dir=str(root / "b")))
    return root / "a", root / "b"


@pytest.hookimpl(tryfirst=True)  # before `-m 'not slow'` deselects: the marks added here count
def pytest_collection_modifyitems(config, items) -> None:
    """``@pytest.mark.one_variant``: a parametrized test whose variants are one class of behaviour, each
    paid for with a subprocess or a job. The default run keeps its first variant; the others run with the
    slow tests (``.ci/run`` runs every one), so the default suite stays within its time on two cores."""
    first: set[str] = set()
    for item in items:
        if item.get_closest_marker("one_variant") is None:
            continue
        test = f"{item.path}::{item.originalname}"
        if test in first:
            item.add_marker(pytest.mark.slow)
        else:
            first.add(test)
