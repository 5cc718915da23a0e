"""Where things are, for the tests: the project's folders and data, and the ``PYTHONPATH`` of subprocess jobs.

pytest puts this folder (``pythonpath`` in pyproject) and ``scripts`` on ``sys.path``; a
``python -m bench.main`` started by a test gets neither, and a helper module it loads by
``_target_`` imports ``builders``, which imports ``samplegen`` from ``scripts``.
"""

from __future__ import annotations

import os
from pathlib import Path

SUPPORT = Path(__file__).resolve().parent  # the tests' shared helper modules (this one among them)
PROJECT = next(p for p in SUPPORT.parents if (p / "pyproject.toml").is_file())
TESTS = PROJECT / "tests"
CONF_DIR = PROJECT / "conf"
DATA = TESTS / "data"  # the tests' fixtures: real rows (with provenance), calibration files, pins
DEV_PARQUET = DATA / "real" / "dev.parquet"  # 15 real OpenHands runs (README beside it)
OPS_JSONL = PROJECT / "src" / "bench" / "samples" / "ops" / "dev.jsonl"  # 12 real tau2-bench runs (dataset=ops)


def pythonpath(*first: str | Path) -> str:
    """``PYTHONPATH`` for a subprocess: ``first``, the helper modules, the scripts, then what was set."""
    parts = [*map(str, first), str(SUPPORT), str(PROJECT / "scripts"), os.environ.get("PYTHONPATH", "")]
    return os.pathsep.join(p for p in parts if p)
