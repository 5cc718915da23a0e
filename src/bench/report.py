"""``python -m bench.report DIR ...``: the study report (:mod:`bench.study.assemble`)."""

from __future__ import annotations

import sys

from bench.study.assemble import main, write_report

__all__ = ["main", "write_report"]

if __name__ == "__main__":
    sys.exit(main())
