#!/usr/bin/env python3
"""Generate the shipped sample ``src/bench/samples/sample.jsonl`` (and its README), then check it.

The generator is the package ``scripts/samplegen`` (one module per row, a trajectory DSL shared
with ``tests/support/builders.py``, and a check that reads the rows through bench's case and question code).

Usage::

    uv run python scripts/make_sample.py            # write sample.jsonl + README.md, then check
    uv run python scripts/make_sample.py --check    # check the files are up to date and read as expected
"""

import sys

from samplegen.cli import main  # this script's directory is on sys.path: scripts/samplegen

if __name__ == "__main__":
    sys.exit(main())
