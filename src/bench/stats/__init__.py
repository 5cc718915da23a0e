"""Uncertainty of the benchmark's figures, as a public API (docs/uncertainty.md).

Call it on your own arrays::

    from bench.stats import accuracy_interval, paired_interval
    accuracy_interval(correct, instances)                  # (estimate, low, high)
    paired_interval(correct_a, correct_b, instances)       # (difference B - A, low, high, p_value)

The implementation lives in :mod:`bench.stats.intervals`; this package re-exports its public names.
"""

from __future__ import annotations

from bench.stats.intervals import (
    LEVEL,
    METHOD,
    METHOD_TYPES,
    POWER,
    accuracy_batch,
    accuracy_interval,
    codes,
    cohen_kappa,
    detectable_difference,
    paired_batch,
    paired_interval,
    ratio_batch,
    ratio_interval,
    sign_flip_batch,
    t_quantile,
)

__all__ = ["LEVEL", "POWER", "accuracy_interval", "paired_interval", "ratio_interval", "detectable_difference",
           "accuracy_batch", "ratio_batch", "paired_batch", "sign_flip_batch", "t_quantile", "cohen_kappa", "codes",
           "METHOD", "METHOD_TYPES"]
