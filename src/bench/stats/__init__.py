"""Uncertainty of the benchmark's figures, as a public API (docs/uncertainty.md).

Call it on your own arrays (``correct*``: one bool per question; ``instances``: each question's
instance id); a share's interval is ``(low, high)``, a paired one ``(difference B - A, low, high,
p_value)``:

    >>> from bench.stats import accuracy_interval, paired_interval
    >>> low, high = accuracy_interval([True, True, False, True, True, False], ["a", "a", "b", "b", "c", "c"])
    >>> round(low, 3), round(high, 3)
    (0.102, 0.972)
    >>> difference, low, high, p_value = paired_interval([True] * 12, [False] * 12, [i // 2 for i in range(12)])
    >>> round(difference, 3), round(low, 3), round(high, 3), round(p_value, 5)
    (-1.0, -1.0, -0.214, 0.01562)

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
