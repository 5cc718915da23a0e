"""``python -m bench.report DIR ...``: the study report (:mod:`bench.study.report`)."""

from __future__ import annotations

import sys

from bench.study.report import main, write_report

__all__ = ["main", "write_report"]

if __name__ == "__main__":
    sys.exit(main())
