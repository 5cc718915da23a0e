"""Uncertainty: 95% intervals from a bootstrap over cases clustered by instance.

Questions of one case, and cases of one instance (dev.parquet holds five runs of one
mypy issue), are not independent: resampling questions would understate the spread. The
bootstrap resamples *clusters* (instances) with replacement, each carrying its questions'
counts, and recomputes the statistic; the interval is the 2.5th-97.5th percentile of the
resampled statistics. Seeded, so a rerun prints the same interval.

    lo, hi = ratio_interval([(3, 4), (1, 2), (5, 5)])            # clusters: (correct, asked)
    diff, (lo, hi) = paired_difference([(3, 4, 2, 4), ...])        # (correct A, n, correct B, n)
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

__all__ = ["RESAMPLES", "SEED", "CONFIDENCE", "bootstrap", "ratio_interval", "paired_difference"]

RESAMPLES = 2000  # bootstrap resamples per interval
SEED = 0  # the bootstrap's random seed (fixed: the same records give the same interval)
CONFIDENCE = 0.95


def bootstrap(clusters: Sequence[tuple[float, ...]], statistic: Callable[[list[float]], float | None],
              resamples: int = RESAMPLES, seed: int = SEED, confidence: float = CONFIDENCE
              ) -> tuple[float, float] | None:
    """Percentile interval of ``statistic`` (a function of the summed cluster tuples) over
    cluster resamples; None when there is no cluster or the statistic is never defined."""
    if not clusters:
        return None
    rng = random.Random(seed)
    width = len(clusters[0])
    values: list[float] = []
    k = len(clusters)
    for _ in range(resamples):
        sums = [0.0] * width
        for _ in range(k):
            row = clusters[rng.randrange(k)]
            for i in range(width):
                sums[i] += row[i]
        value = statistic(sums)
        if value is not None:
            values.append(value)
    if not values:
        return None
    values.sort()
    tail = (1 - confidence) / 2
    low = values[min(len(values) - 1, max(0, int(tail * len(values))))]
    high = values[min(len(values) - 1, max(0, int((1 - tail) * len(values)) - 1))]
    return round(low, 4), round(high, 4)


def _ratio(sums: list[float]) -> float | None:
    return sums[0] / sums[1] if sums[1] else None


def ratio_interval(clusters: Sequence[tuple[float, float]], **kwargs) -> tuple[float, float] | None:
    """Interval of sum(correct) / sum(asked) over clusters of ``(correct, asked)``."""
    return bootstrap([c for c in clusters if c[1]], _ratio, **kwargs)


def _difference(sums: list[float]) -> float | None:
    return (sums[2] / sums[3] - sums[0] / sums[1]) if sums[1] and sums[3] else None


def paired_difference(clusters: Sequence[tuple[float, float, float, float]], **kwargs
                      ) -> tuple[float | None, tuple[float, float] | None]:
    """Accuracy of B minus accuracy of A on the same questions, with its paired cluster interval.

    Each cluster is ``(correct in A, asked, correct in B, asked)`` over the questions both
    configs were asked; the same resampled clusters count for both, so what is shared
    between the configs (hard instances) cancels out.
    """
    kept = [c for c in clusters if c[1] and c[3]]
    if not kept:
        return None, None
    totals = [sum(c[i] for c in kept) for i in range(4)]
    point = _difference(totals)
    return (round(point, 4) if point is not None else None), bootstrap(kept, _difference, **kwargs)
