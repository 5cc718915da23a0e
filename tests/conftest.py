"""Shared fixtures: paths to the project's config and the real samples shipped with the project."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[1]
CONF_DIR = PROJECT / "conf"
DEV_PARQUET = PROJECT / "tests" / "data" / "real" / "dev.parquet"  # 15 real OpenHands runs (README beside it)
OPS_JSONL = PROJECT / "src" / "bench" / "samples" / "ops" / "dev.jsonl"  # 12 real tau2-bench runs (dataset=ops)

sys.path.insert(0, str(Path(__file__).resolve().parent))  # tests/builders.py


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
