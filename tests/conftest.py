"""Shared fixtures: paths to the project's config and the real sample in ../shared."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[1]
CONF_DIR = PROJECT / "conf"
SHARED_DEV = PROJECT.parent / "shared" / "data" / "real" / "dev.parquet"

sys.path.insert(0, str(Path(__file__).resolve().parent))  # tests/builders.py


@pytest.fixture
def dev_parquet() -> Path:
    """The real OpenHands sample; tests that need it skip when ../shared is absent."""
    if not SHARED_DEV.exists():
        pytest.skip(f"real sample not found at {SHARED_DEV} (../shared is absent on this machine)")
    return SHARED_DEV
