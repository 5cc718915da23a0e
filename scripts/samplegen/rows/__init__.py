"""The sample's rows in file order, one module each: ``row_NNN.build() -> SampleRow``.

A new row is a module here (docs/extending.md, "A sample row") and its line in ``ROWS``.
"""

from __future__ import annotations

from collections.abc import Callable

from samplegen.expected import SampleRow
from samplegen.rows import (
    row_001,
    row_002,
    row_003,
    row_004,
    row_005,
    row_006,
    row_007,
    row_008,
    row_009,
    row_010,
    row_011,
)

__all__ = ["ROWS", "build_rows"]

ROWS: tuple[Callable[[], SampleRow], ...] = (
    row_001.build, row_002.build, row_003.build, row_004.build, row_005.build, row_006.build, row_007.build,
    row_008.build, row_009.build, row_010.build, row_011.build,
)


def build_rows() -> list[SampleRow]:
    return [build() for build in ROWS]
