"""Uncertainty: 95% score intervals on a design-effect-adjusted effective n (docs/uncertainty.md).

Questions of one case, cases of one instance, and questions of one *template* (a question
type recurs in every case) are not independent. Each statistic is linearized per question;
its variance is the two-way cluster-robust (Cameron-Gelbach-Miller) sum over instances and
templates; the design effect ``deff = robust variance / binomial variance`` (at least 1) turns
n into ``n / deff``, and a *score* interval (Wilson; Tango for a paired difference) is taken at
that effective n with a t quantile (``clusters - 1`` degrees of freedom). A score interval never
has zero width: at 0% or 100% it is a one-sided bound, with one observation per instance (the
most correlated case) since the data show no spread to estimate a design effect from.

    lo, hi = proportion_interval(hits, instances, templates)
    lo, hi = ratio_interval(arm_and_full, full, instances, templates)   # relative to full
    diff, (lo, hi) = paired_difference(hits_a, hits_b, instances, templates)
    mde = detectable_difference(hits_a, hits_b, instances, templates)

The ``*_batch`` functions take (replications, questions) arrays with a 0/1 mask (the coverage
benchmark runs them on many simulated case sets at once); the others are their one-set form.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Sequence
from statistics import NormalDist

import numpy as np

__all__ = ["CONFIDENCE", "POWER", "proportion_interval", "ratio_interval", "paired_difference",
           "detectable_difference", "cohen_kappa", "proportion_batch", "ratio_batch", "paired_batch", "codes"]

CONFIDENCE = 0.95
POWER = 0.80  # the power of detectable_difference


def codes(labels: Sequence[Hashable] | None, n: int) -> np.ndarray:
    """Integer codes of group labels (None: every question its own group)."""
    if labels is None:
        return np.arange(n)
    index: dict[Hashable, int] = {}
    return np.array([index.setdefault(x, len(index)) for x in labels], dtype=np.int64)


def _group_sums(z: np.ndarray, g: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per replication: sums of z per group (R, G) and the number of non-empty groups (R,)."""
    reps = z.shape[0]
    width = int(g.max()) + 1 if g.size else 1
    flat = (np.arange(reps)[:, None] * width + g).ravel()
    sums = np.bincount(flat, weights=(z * mask).ravel(), minlength=reps * width).reshape(reps, width)
    present = np.bincount(flat, weights=mask.ravel(), minlength=reps * width).reshape(reps, width) > 0
    return sums, present.sum(axis=1)


def _robust_variance(z: np.ndarray, mask: np.ndarray, inst: np.ndarray, tmpl: np.ndarray | None
                     ) -> tuple[np.ndarray, np.ndarray]:
    """Two-way cluster-robust variance of sum(z) (instances x templates), each way with its
    G/(G-1) correction, never below either one-way variance; and the degrees of freedom
    (the smaller of the two ways', each at most its clusters minus one, at least one)."""

    def one_way(g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        sums, k = _group_sums(z, g, mask)
        factor = np.where(k > 1, k / np.maximum(k - 1, 1), 1.0)
        squares = (sums**2).sum(axis=1)
        # few clusters carrying the spread (rare errors, grouped) leave few degrees of freedom:
        # Satterthwaite's (sum s^2)^2 / sum s^4 with s^4 estimated by S^4 / 2 (normal sums: S^4 / 3;
        # 0/1 cluster sums are heavier-tailed; 2 is what holds coverage in benchmarks/bench_coverage.py)
        quartic = (sums**4).sum(axis=1)
        spread = np.where(quartic > 0, 2 * squares**2 / np.where(quartic > 0, quartic, 1), k)
        return factor * squares, np.maximum(np.minimum(k - 1, spread), 1)

    v_inst, df_inst = one_way(inst)
    if tmpl is None:
        return v_inst, df_inst
    v_tmpl, df_tmpl = one_way(tmpl)
    v_cell, _ = one_way(inst * (int(tmpl.max()) + 1) + tmpl)
    v = np.maximum.reduce([v_inst + v_tmpl - v_cell, v_inst, v_tmpl])
    return v, np.minimum(df_inst, df_tmpl)


# Student t 97.5% quantiles for 1-30 degrees of freedom (beyond: the Cornish-Fisher expansion)
_T975 = np.array([12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179,
                  2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
                  2.060, 2.056, 2.052, 2.048, 2.045, 2.042])


def _crit(df: np.ndarray, confidence: float = CONFIDENCE) -> np.ndarray:
    """Two-sided t quantile at ``confidence`` with ``df`` degrees of freedom."""
    z = NormalDist().inv_cdf(1 - (1 - confidence) / 2)
    nu = np.maximum(np.asarray(df, dtype=float), 1)
    t = (z + (z**3 + z) / (4 * nu) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * nu**2)
         + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * nu**3)
         + (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / (92160 * nu**4))
    if abs(confidence - 0.95) < 1e-12:
        small = nu <= 30
        t = np.where(small, _T975[np.clip(nu.astype(int), 1, 30) - 1], t)
    return t


def _wilson(p: np.ndarray, n_eff: np.ndarray, z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    z2 = z**2
    centre = (p + z2 / (2 * n_eff)) / (1 + z2 / n_eff)
    half = z / (1 + z2 / n_eff) * np.sqrt(p * (1 - p) / n_eff + z2 / (4 * n_eff**2))
    return np.clip(centre - half, 0, 1), np.clip(centre + half, 0, 1)


def _ratio_core(num: np.ndarray, den: np.ndarray, mask: np.ndarray, inst: np.ndarray,
                tmpl: np.ndarray | None, confidence: float = CONFIDENCE):
    """sum(num)/sum(den) (num <= den, both 0/1) with its Wilson interval at the effective n."""
    m = (den * mask).sum(axis=1)
    safe_m = np.maximum(m, 1)
    r = (num * mask).sum(axis=1) / safe_m
    z = (num - r[:, None] * den) / safe_m[:, None]
    v, df = _robust_variance(z, mask, inst, tmpl)
    binomial = r * (1 - r) / safe_m
    inner = binomial > 0
    deff = np.where(inner, np.maximum(v / np.where(inner, binomial, 1), 1.0), 1.0)
    # 0% or 100%: no spread to estimate a design effect from: one observation per instance
    _, k_inst = _group_sums(den, inst, mask * den)
    n_eff = np.where(inner, safe_m / deff, np.maximum(np.minimum(k_inst, m), 1))
    lo, hi = _wilson(r, n_eff, _crit(df, confidence))
    return r, lo, hi, m


def proportion_batch(y: np.ndarray, mask: np.ndarray, inst: np.ndarray, tmpl: np.ndarray | None = None,
                     confidence: float = CONFIDENCE) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(point, low, high) per replication of the share of hits (NaN where no question)."""
    r, lo, hi, m = _ratio_core(y, np.ones_like(y), mask, inst, tmpl, confidence)
    empty = m == 0
    return tuple(np.where(empty, np.nan, a) for a in (r, lo, hi))  # type: ignore[return-value]


def ratio_batch(num: np.ndarray, den: np.ndarray, mask: np.ndarray, inst: np.ndarray,
                tmpl: np.ndarray | None = None, confidence: float = CONFIDENCE
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(point, low, high) of sum(num)/sum(den): both questions' variances (numerator and
    denominator are linearized together), NaN where the denominator is 0."""
    r, lo, hi, m = _ratio_core(num, den, mask, inst, tmpl, confidence)
    empty = m == 0
    return tuple(np.where(empty, np.nan, a) for a in (r, lo, hi))  # type: ignore[return-value]


def _tango_z(delta: np.ndarray, b: np.ndarray, c: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Tango's score statistic for a paired difference delta = p(B only) - p(A only)."""
    w = -b - c + (2 * n - b + c) * delta
    q = (-w + np.sqrt(np.maximum(w**2 + 8 * n * c * delta * (1 - delta), 0))) / (4 * n)
    var = np.maximum(n * (2 * q + delta * (1 - delta)), 1e-12)
    return (b - c - n * delta) / np.sqrt(var)


def _paired_variance(a, b, mask, inst, tmpl):
    n = np.maximum(mask.sum(axis=1), 1)
    only_b = ((b > a) * mask).sum(axis=1)
    only_a = ((a > b) * mask).sum(axis=1)
    d = (only_b - only_a) / n
    v, df = _robust_variance((b - a - d[:, None]) / n[:, None], mask, inst, tmpl)
    binomial = ((only_a + only_b) / n - d**2) / n
    return n, only_a, only_b, d, v, df, binomial


def paired_batch(a: np.ndarray, b: np.ndarray, mask: np.ndarray, inst: np.ndarray,
                 tmpl: np.ndarray | None = None, confidence: float = CONFIDENCE
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(B - A, low, high): Tango's score interval on the effective discordant counts."""
    n, only_a, only_b, d, v, df, binomial = _paired_variance(a, b, mask, inst, tmpl)
    inner = binomial > 0
    _, k_inst = _group_sums(np.ones_like(a, dtype=float), inst, mask)
    # no discordance (or no spread): as many observations as instances, the most correlated case
    deff = np.where(inner, np.maximum(v / np.where(inner, binomial, 1), 1.0), n / np.maximum(k_inst, 1))
    be, ce, ne = only_b / deff, only_a / deff, n / deff
    crit = _crit(df, confidence)
    lo, hi = np.full_like(d, -1.0), np.full_like(d, 1.0)
    for target, bound, inner_end in ((crit, lo, d), (-crit, hi, d)):
        left = np.where(target > 0, -1 + 1e-12, inner_end)
        right = np.where(target > 0, inner_end, 1 - 1e-12)
        for _ in range(60):  # bisection: the statistic decreases in delta
            mid = (left + right) / 2
            above = _tango_z(mid, be, ce, ne) > target
            left, right = np.where(above, mid, left), np.where(above, right, mid)
        bound[:] = (left + right) / 2
    empty = mask.sum(axis=1) == 0
    return tuple(np.where(empty, np.nan, x) for x in (d, lo, hi))  # type: ignore[return-value]


def _arrays(values: Sequence[float], instances: Sequence[Hashable] | None,
            templates: Sequence[Hashable] | None):
    y = np.asarray(values, dtype=float)[None, :]
    n = y.shape[1]
    inst = codes(instances, n)[None, :]
    tmpl = codes(templates, n)[None, :] if templates is not None else None
    return y, np.ones_like(y), inst, tmpl


def _rounded(lo: float, hi: float) -> tuple[float, float]:
    return round(float(lo), 4), round(float(hi), 4)


def proportion_interval(hits: Sequence[bool], instances: Sequence[Hashable] | None = None,
                        templates: Sequence[Hashable] | None = None) -> tuple[float, float] | None:
    """95% interval of the share of hits, one entry per question (None when there is none)."""
    if not len(hits):
        return None
    y, mask, inst, tmpl = _arrays(hits, instances, templates)
    _, lo, hi = proportion_batch(y, mask, inst, tmpl)
    return _rounded(lo[0], hi[0])


def ratio_interval(numerator: Sequence[bool], denominator: Sequence[bool],
                   instances: Sequence[Hashable] | None = None,
                   templates: Sequence[Hashable] | None = None) -> tuple[float, float] | None:
    """95% interval of sum(numerator)/sum(denominator) over every question (numerator implies
    denominator: "relative to full" is both-correct over full-correct, so the full arm's
    variance is in it). None when the denominator is 0."""
    if not any(denominator):
        return None
    den, mask, inst, tmpl = _arrays(denominator, instances, templates)
    num = np.asarray(numerator, dtype=float)[None, :] * den
    _, lo, hi = ratio_batch(num, den, mask, inst, tmpl)
    return _rounded(lo[0], hi[0])


def paired_difference(hits_a: Sequence[bool], hits_b: Sequence[bool],
                      instances: Sequence[Hashable] | None = None,
                      templates: Sequence[Hashable] | None = None
                      ) -> tuple[float | None, tuple[float, float] | None]:
    """Accuracy of B minus accuracy of A on the same questions, with its 95% interval."""
    if not len(hits_a):
        return None, None
    a, mask, inst, tmpl = _arrays(hits_a, instances, templates)
    b = np.asarray(hits_b, dtype=float)[None, :]
    d, lo, hi = paired_batch(a, b, mask, inst, tmpl)
    return round(float(d[0]), 4), _rounded(lo[0], hi[0])


def detectable_difference(hits_a: Sequence[bool], hits_b: Sequence[bool] | None = None,
                          instances: Sequence[Hashable] | None = None,
                          templates: Sequence[Hashable] | None = None,
                          power: float = POWER, confidence: float = CONFIDENCE) -> float | None:
    """The smallest accuracy difference this case set detects (two-sided test at 1 - confidence,
    the given power): (t quantile + z_power) x the difference's standard error, design effect
    included. With B, the observed paired variance (at least the binomial one); with A alone,
    two independent arms of A's variance (a paired design detects less: an upper bound)."""
    if not len(hits_a):
        return None
    a, mask, inst, tmpl = _arrays(hits_a, instances, templates)
    z_power = NormalDist().inv_cdf(power)
    if hits_b is not None:
        b = np.asarray(hits_b, dtype=float)[None, :]
        n, _, _, _, v, df, binomial = _paired_variance(a, b, mask, inst, tmpl)
        if binomial[0] > 0:
            se = np.sqrt(max(v[0], binomial[0]))
            return round(float((_crit(df, confidence)[0] + z_power) * se), 4)
    n = a.shape[1]
    p = float(a.mean())
    v, df = _robust_variance((a - p) / n, mask, inst, tmpl)
    binomial = p * (1 - p) / n
    # 0% or 100%: a worst-case binomial spread (p = 1/2) over the instances
    per_arm = max(float(v[0]), binomial) if binomial > 0 else 0.25 / max(len(set(inst[0].tolist())), 1)
    return round(float((_crit(df, confidence)[0] + z_power) * np.sqrt(2 * per_arm)), 4)


def cohen_kappa(first: Sequence[str], second: Sequence[str]) -> float | None:
    """Cohen's kappa of two raters' labels on the same items; None when undefined.

    kappa = (p_o - p_e) / (1 - p_e), with p_o the observed agreement and p_e the agreement
    expected by chance from each rater's label frequencies. Undefined (None) without items
    or when p_e is 1 (both raters give one and the same label to every item).
    """
    if len(first) != len(second):
        raise ValueError(f"rater label lists differ in length: {len(first)} != {len(second)}")
    n = len(first)
    if n == 0:
        return None
    observed = sum(a == b for a, b in zip(first, second, strict=True)) / n
    count_a, count_b = Counter(first), Counter(second)
    expected = sum(count_a[label] * count_b[label] for label in count_a) / (n * n)
    if math.isclose(expected, 1.0):
        return None
    return (observed - expected) / (1 - expected)
