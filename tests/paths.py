"""Where the tests' own modules live, for subprocess jobs that import them.

pytest puts ``tests`` (rootdir) and ``scripts`` (``pythonpath`` in pyproject) on ``sys.path``;
a ``python -m bench.main`` started by a test gets neither, and a test module it loads by
``_target_`` imports ``builders``, which imports ``samplegen`` from ``scripts``.
"""

from __future__ import annotations

import os
from pathlib import Path

TESTS = Path(__file__).resolve().parent
PROJECT = TESTS.parent


def pythonpath(*first: str | Path) -> str:
    """``PYTHONPATH`` for a subprocess: ``first``, the tests, the scripts, then what was set."""
    parts = [*map(str, first), str(TESTS), str(PROJECT / "scripts"), os.environ.get("PYTHONPATH", "")]
    return os.pathsep.join(p for p in parts if p)
