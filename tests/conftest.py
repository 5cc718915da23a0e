"""Shared fixtures: the real samples shipped with the project."""

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
