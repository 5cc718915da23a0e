"""Uncertainty of the benchmark's figures (docs/uncertainty.md): what is estimated, then how.

**The estimand.** A figure is about the benchmark's fixed design, its question types in the mix
the case set has, over the population of runs (instances) like the recorded ones. Uncertainty
comes from the instances only; question types are strata, not a sample of possible types.

**The method.** One-way cluster-robust by instance, small-sample corrected (CR1,
``K / (K - 1)``), ``K - 1`` degrees of freedom, residuals taken within type (the strata):

- a share (accuracy; relative to full, a ratio of two paired totals on the same questions,
  linearized): a Wilson score interval at the design-effect-adjusted effective n with a t
  quantile; at 0% or 100% (no spread to measure) the one-sided Wilson bound at one observation
  per instance (``n_eff = K``, the most correlated case);
- a paired difference (two configs on the same questions): the instances' paired totals under
  a sign-flip test (all ``2 ** K`` sign patterns when K <= 12, else a fixed-seed draw of
  10,000: deterministic; the observed pattern and its mirror count half, a mid-p), its p-value
  for "no difference" and the interval that inverts it, joined with a question-level score
  floor (Tango); every question discordant one way: the two shares' one-sided mid-p bounds on
  the K instances.

The public API takes one value per question::

    low, high = accuracy_interval(correct, instances)                 # level=0.95
    difference, low, high, p_value = paired_interval(correct_a, correct_b, instances)
    low, high = ratio_interval(both_correct, full_correct, instances)  # relative to full

``types=`` (keyword) gives each question's type, the strata; ``generalize_types=True`` instead
also treats the types as random (the previous two-way method, instance x type, wider: it answers
"what if the benchmark asked other kinds of questions"). The ``*_batch`` functions take
(replications, questions) arrays and a 0/1 mask; ``benchmarks/bench_coverage.py`` runs them on
simulated case sets.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Sequence
from functools import lru_cache
from statistics import NormalDist

import numpy as np

__all__ = ["LEVEL", "POWER", "accuracy_interval", "paired_interval", "ratio_interval", "detectable_difference",
           "accuracy_batch", "ratio_batch", "paired_batch", "sign_flip_batch", "t_quantile", "cohen_kappa", "codes",
           "METHOD", "METHOD_TYPES"]

LEVEL = 0.95
POWER = 0.80  # the power of detectable_difference
# how the intervals generalise, as recorded beside them (metrics.json "interval_method")
METHOD = "instances"  # one-way by instance, types fixed strata
METHOD_TYPES = "instances+types"  # stats.generalize_types=true: two-way, types random too
EXACT_FLIPS = 12  # up to this many instances the sign-flip test enumerates every sign pattern
FLIP_DRAWS = 10_000  # beyond: this many patterns, drawn with a fixed seed (p-value within +-0.005 at 0.05)


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


# ---------------------------------------------------------------- Student t quantiles


def _t_abs_cdf(t: float, nu: int) -> float:
    """P(|T| <= t) for Student's t with integer nu degrees of freedom (closed form,
    Abramowitz and Stegun 26.7.3-4)."""
    theta = math.atan(t / math.sqrt(nu))
    s, c = math.sin(theta), math.cos(theta)
    if nu % 2:  # odd
        if nu == 1:
            return 2 * theta / math.pi
        term, total = c, c
        for k in range(3, nu - 1, 2):
            term *= c * c * (k - 1) / k
            total += term
        return 2 / math.pi * (theta + s * total)
    term, total = 1.0, 1.0
    for k in range(2, nu - 1, 2):
        term *= c * c * (k - 1) / k
        total += term
    return s * total


@lru_cache(maxsize=4096)
def _t_quantile_one(level: float, df: int) -> float:
    if df < 1:
        return math.inf
    z = NormalDist().inv_cdf(1 - (1 - level) / 2)
    if df > 400:  # Cornish-Fisher: within 1e-7 here
        return (z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)
                + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * df**3))
    low, high = z, z
    while _t_abs_cdf(high, df) < level:
        high *= 2
    for _ in range(100):  # bisection to machine precision
        mid = (low + high) / 2
        if _t_abs_cdf(mid, df) < level:
            low = mid
        else:
            high = mid
    return (low + high) / 2


def t_quantile(level: float, df: np.ndarray | int) -> np.ndarray:
    """Two-sided Student t critical value: P(|T| <= t) = level, integer ``df`` (< 1: infinite)."""
    df = np.asarray(df)
    flat = np.rint(df).astype(np.int64).ravel()
    values = {int(d): _t_quantile_one(float(level), int(d)) for d in np.unique(flat)}
    return np.array([values[int(d)] for d in flat], dtype=float).reshape(df.shape)


def _wilson(p: np.ndarray, n_eff: np.ndarray, z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Wilson's score interval of a share p over n_eff observations, critical value z
    (infinite z or n_eff of 0: the whole range)."""
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        z2 = z**2
        n = np.maximum(n_eff, 1e-300)
        centre = (p + z2 / (2 * n)) / (1 + z2 / n)
        half = z / (1 + z2 / n) * np.sqrt(p * (1 - p) / n + z2 / (4 * n**2))
        lo, hi = centre - half, centre + half
        lo, hi = np.minimum(lo, p), np.maximum(hi, p)  # exactly so: at p = 0 the subtraction rounds to ~1e-16
    whole = ~np.isfinite(z) | (n_eff <= 0) | ~np.isfinite(lo) | ~np.isfinite(hi)
    return np.where(whole, 0.0, np.clip(lo, 0, 1)), np.where(whole, 1.0, np.clip(hi, 0, 1))


# ---------------------------------------------------------------- one way: instances, types as strata


def _within_type(x: np.ndarray, mask: np.ndarray, types: np.ndarray | None) -> np.ndarray:
    """x minus its type's mean (per replication); types None: one stratum."""
    if types is None:
        n = np.maximum(mask.sum(axis=1, keepdims=True), 1)
        return x - (x * mask).sum(axis=1, keepdims=True) / n
    sums, _ = _group_sums(x, types, mask)
    counts, _ = _group_sums(np.ones_like(x), types, mask)
    means = sums / np.maximum(counts, 1)
    return x - np.take_along_axis(means, types, axis=1)


def _one_way(z: np.ndarray, mask: np.ndarray, inst: np.ndarray, weight: np.ndarray | None = None
             ) -> tuple[np.ndarray, np.ndarray]:
    """Cluster-robust variance of sum(z) over instances, and K. Small-sample corrected by the
    jackknife (CR3) leverage correction: instance k's sum divided by 1 - h_k, h_k its share of
    the questions (of ``weight``: the denominator's), the variance a leave-one-instance-out
    estimate would see (MacKinnon, Nielsen and Webb 2023: with few clusters it holds coverage
    where the K / (K - 1) factor falls short; benchmarks/bench_coverage.py). One instance:
    infinite (no spread between instances to measure)."""
    sums, k = _group_sums(z, inst, mask)
    share, _ = _group_sums(np.ones_like(z), inst, mask if weight is None else mask * weight)
    h = share / np.maximum(share.sum(axis=1, keepdims=True), 1e-300)
    adjusted = sums / np.maximum(1 - h, 1e-12)
    return np.where(k > 1, (adjusted**2).sum(axis=1), np.inf), k


def _share_variance(num: np.ndarray, den: np.ndarray, mask: np.ndarray, inst: np.ndarray,
                    types: np.ndarray | None) -> dict[str, np.ndarray]:
    """sum(num) / sum(den) (num <= den, both 0/1; den = 1: accuracy) per replication: the share
    r, its clustered variance v (the ratio's linearized residuals within type, by instance), the
    floor (independent questions within type), K and the instances with a denominator."""
    m = (den * mask).sum(axis=1)
    safe_m = np.maximum(m, 1)
    r = (num * mask).sum(axis=1) / safe_m
    z = (_within_type(num, mask, types) - r[:, None] * _within_type(den, mask, types)) / safe_m[:, None]
    v, k = _one_way(z, mask, inst, den)
    # the floor: independent questions within type (never assume negative correlation), each
    # type's share taken as (x + r) / (m + 1), one pseudo-question at the overall share, so a type
    # all right or all wrong still counts
    on = mask * den
    if types is None:
        hits, count = (num * on).sum(axis=1, keepdims=True), on.sum(axis=1, keepdims=True)
    else:
        hits, _ = _group_sums(num, types, on)
        count, _ = _group_sums(np.ones_like(num), types, on)
    shrunk = (hits + r[:, None]) / (count + 1)
    floor = (count * shrunk * (1 - shrunk)).sum(axis=1) / safe_m**2
    _, k_den = _group_sums(den, inst, on)
    return {"r": r, "v": v, "floor": floor, "k": k, "k_den": k_den, "m": m}


def _share(num: np.ndarray, den: np.ndarray, mask: np.ndarray, inst: np.ndarray, types: np.ndarray | None,
           level: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The share with its Wilson interval at the effective n r (1 - r) / variance; at 0% or 100%
    the one-sided bound on the instances (:func:`_boundary`)."""
    s = _share_variance(num, den, mask, inst, types)
    r, k = s["r"], s["k"]
    inner = (r > 0) & (r < 1)
    # the clustered variance is estimated from K instances: its t quantile (K - 1 df) goes into
    # the effective n; the floor is not estimated from them and takes the normal quantile
    z_level = NormalDist().inv_cdf(1 - (1 - level) / 2)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        inflated = np.where(k > 1, s["v"] * (t_quantile(level, k - 1) / z_level) ** 2, np.inf)
        n_eff = r * (1 - r) / np.maximum(inflated, s["floor"])
    lo, hi = _wilson(r, np.where(inner, n_eff, 1), np.full(r.shape, z_level))
    lo_b, hi_b = _boundary(r, s["k_den"], level)
    return r, np.where(inner, lo, lo_b), np.where(inner, hi, hi_b), s["m"]


def _boundary(r: np.ndarray, k: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    """At 0% or 100%: Clopper-Pearson's bound on k instances as k independent observations
    (every question of an instance alike, the most correlated case): 100% gives
    [((1 - level) / 2) ** (1 / k), 1], the cluster analogue of the rule of three. One instance
    or none: the whole range."""
    tail = (1 - level) / 2
    with np.errstate(divide="ignore"):
        edge = np.where(k > 1, tail ** (1 / np.maximum(k, 1)), 0.0)
    return np.where(r >= 1, edge, 0.0), np.where(r >= 1, 1.0, 1 - edge)


# ---------------------------------------------------------------- paired: sign flips over instances


def _flip_patterns(k: int, draws: int) -> np.ndarray:
    """Sign patterns (P, k) as int8: all 2^k when k <= EXACT_FLIPS, else ``draws`` with a fixed
    seed, the observed (all +1) first, so the p-value is never 0."""
    if k <= EXACT_FLIPS:
        bits = (np.arange(2**k)[:, None] >> np.arange(k)[None, :]) & 1
        return (1 - 2 * bits).astype(np.int8)
    rng = np.random.default_rng(29_000 + k)
    drawn = np.unpackbits(np.frombuffer(rng.bytes((draws * k + 7) // 8), dtype=np.uint8))[: draws * k]
    signs = (1 - 2 * drawn.astype(np.int8)).reshape(draws, k)
    signs[0] = 1
    return signs


_cached_patterns = lru_cache(maxsize=32)(_flip_patterns)


def _flipped(values: np.ndarray, patterns: np.ndarray) -> np.ndarray:
    """values (R, K) under every sign pattern: (R, P), in chunks of patterns (bounded memory)."""
    out = np.empty((values.shape[0], len(patterns)))
    for start in range(0, len(patterns), 2048):
        out[:, start:start + 2048] = values @ patterns[start:start + 2048].T.astype(float)
    return out


def sign_flip_batch(totals: np.ndarray, sizes: np.ndarray, level: float = LEVEL, draws: int = FLIP_DRAWS
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Sign-flip test over instances of paired totals (R, K) with their question counts (R, K):
    the mean difference d = sum(totals) / sum(sizes), the p-value of "no difference" (flipping an
    instance swaps the two configs on all its questions, which changes nothing under that null)
    and the interval of shifts delta the test does not reject at 1 - level (flips of
    totals - delta x sizes).

    **Mid-p on the observed pattern.** The observed pattern and its mirror image (every sign
    flipped) tie with the observation at every shift; they count half, every other pattern as
    the exact test counts it: p = (#{|flipped| >= |observed|} - E / 2) / P, E the patterns that
    flip nothing that counts (or everything). With K instances the exact p-value moves in steps
    of 2 / 2^K, so at 6 instances a "95%" exact interval is a 96.9% one (coverage 99-100% in the
    simulation, width 1.5-1.8x the oracle's); counting the observed pattern half is the
    mid-p correction of that discreteness (Lancaster 1961): for continuous totals it rejects
    when the exact p-value is at most 4 / 64 at K = 6 (size 6.25%, 1 / 512 more than 5% at
    K = 10, nothing visible beyond), and every pattern that ties with the observation only at
    this shift (an instance with total 0, say) still counts in full, so rare discordance keeps
    the exact test. Its smallest p-value is 1 / 2^K: below 5% from K = 5 instances.

    Pattern e accepts delta when |a - delta b| >= |A - delta N| (a, b: the flipped sums of totals
    and sizes, A, N: the observed), the product of ((a - A) + delta (N - b)) and ((a + A) - delta
    (N + b)) is >= 0: a closed interval between their roots that holds d. So the shifts with
    p-value above 1 - level form an interval whose ends are order statistics of those roots."""
    reps, k = totals.shape
    patterns = _cached_patterns(k, draws) if k <= 256 else _flip_patterns(k, draws)
    count = len(patterns)
    a = _flipped(totals, patterns)  # (R, P)
    b = _flipped(sizes, patterns)
    total, size = totals.sum(axis=1, keepdims=True), sizes.sum(axis=1, keepdims=True)
    d = total[:, 0] / np.maximum(size[:, 0], 1)
    tol = 1e-9 * np.maximum(size, 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        root1 = np.where(size - b > 1e-9, (total - a) / (size - b), np.nan)
        root2 = np.where(size + b > 1e-9, (a + total) / (size + b), np.nan)
    # a pattern that flips nothing that counts (or everything) accepts every shift: the observed
    # pattern and its mirror image, which count half
    everywhere = np.isnan(root1) | np.isnan(root2)
    half = 0.5 * everywhere.sum(axis=1)
    p = ((np.abs(a) >= np.abs(total) - tol).sum(axis=1) - half) / count
    low = np.where(everywhere, -np.inf, np.fmin(root1, root2))
    high = np.where(everywhere, np.inf, np.fmax(root1, root2))
    # p(delta) > 1 - level: more than (1 - level) x P + E / 2 patterns accept delta: the j-th
    # widest ends (j per replication: E is 2 with every pattern, 1 or 2 with drawn ones)
    j = np.floor((1 - level) * count + half + 1e-9).astype(np.int64) + 1
    lo, hi = np.full(reps, -1.0), np.full(reps, 1.0)
    for value in np.unique(j):
        rows = j == value
        if value > count:  # no pattern is rare enough: every shift is accepted
            continue
        lo[rows] = -np.partition(-low[rows], count - value, axis=1)[:, count - value]  # j-th smallest low
        hi[rows] = np.partition(high[rows], count - value, axis=1)[:, count - value]  # j-th largest high
    return d, np.clip(lo, -1, 1), np.clip(hi, -1, 1), p


def _instance_totals(x: np.ndarray, mask: np.ndarray, inst: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per replication and instance: sum of x and number of questions, instances renumbered
    0..K-1 within each replication (R, K) (absent instances: zeros, which flips leave alone)."""
    sums, _ = _group_sums(x, inst, mask)
    sizes, _ = _group_sums(np.ones_like(x), inst, mask)
    return sums, sizes


def _tango_interval(b: np.ndarray, c: np.ndarray, n: np.ndarray, crit: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Tango's score interval (1998) of p(B only) - p(A only) from b, c discordant of n pairs."""
    lo, hi = np.full(b.shape, -1.0), np.full(b.shape, 1.0)
    d = (b - c) / np.maximum(n, 1)
    for target, bound in ((crit, lo), (-crit, hi)):
        left = np.where(target > 0, -1 + 1e-12, d)
        right = np.where(target > 0, d, 1 - 1e-12)
        for _ in range(60):  # bisection: the statistic decreases in delta
            mid = (left + right) / 2
            above = _tango_z(mid, b, c, n) > target
            left, right = np.where(above, mid, left), np.where(above, right, mid)
        bound[:] = (left + right) / 2
    return lo, hi


_erfc = np.vectorize(math.erfc, otypes=[float])

# up to this many discordant questions the question-level floor is the exact mid-p score test
# (below); beyond, the score statistic is near enough normal for Tango's interval
FEW_DISCORDANT = 10


def _log_factorial(top: int) -> np.ndarray:
    """log k! for k = 0..top."""
    return np.concatenate([[0.0], np.cumsum(np.log(np.arange(1, top + 1, dtype=float)))])


def _score_tails(b: np.ndarray, c: np.ndarray, n: np.ndarray, delta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mid-p tails (upper, lower) of Tango's score statistic at delta: its exact distribution over
    every pair of counts (b' B-only, c' A-only) of n independent questions (trinomial) at the
    restricted rates (Tango's q), ties counting half."""
    q = _tango_q(delta, b, c, n)
    beta, gamma = np.clip(q + delta, 0, 1), np.clip(q, 0, 1)
    rest = np.clip(1 - beta - gamma, 0, 1)
    top = float(np.max(n * np.maximum(beta, gamma)))
    size = int(min(float(np.max(n)), top + 8 * math.sqrt(top) + 10)) + 1
    k = np.arange(size, dtype=float)
    log_fact = _log_factorial(int(np.max(n)))
    with np.errstate(divide="ignore", invalid="ignore"):
        lb, lc, lr = (np.where(x > 0, np.log(np.where(x > 0, x, 1)), -np.inf) for x in (beta, gamma, rest))
        others = n[:, None, None] - k[None, :, None] - k[None, None, :]  # concordant questions
        possible = others >= 0
        log_prob = (log_fact[n.astype(np.int64)][:, None, None] - log_fact[:size][None, :, None]
                    - log_fact[:size][None, None, :] - log_fact[np.clip(others, 0, None).astype(np.int64)]
                    + np.where(k[None, :, None] > 0, k[None, :, None] * lb[:, None, None], 0.0)
                    + np.where(k[None, None, :] > 0, k[None, None, :] * lc[:, None, None], 0.0)
                    + np.where(others > 0, others * lr[:, None, None], 0.0))
        prob = np.where(possible, np.exp(log_prob), 0.0)
    stat = _tango_z(delta[:, None, None], k[None, :, None], k[None, None, :], n[:, None, None])
    observed = _tango_z(delta, b, c, n)[:, None, None]
    tie = np.abs(stat - observed) <= 1e-9
    half = 0.5 * (prob * tie).sum(axis=(1, 2))
    return (prob * ((stat > observed) & ~tie)).sum(axis=(1, 2)) + half, \
        (prob * ((stat < observed) & ~tie)).sum(axis=(1, 2)) + half


def _few_discordant_batch(b: np.ndarray, c: np.ndarray, n: np.ndarray, level: float
                          ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The exact mid-p score test of a paired difference over independent questions and its
    inversion: (low, high, p) for b B-only and c A-only of n questions. Each end is where the
    one-sided mid-p tail reaches (1 - level) / 2 (bisection within 40 / n of the estimate: with
    at most 10 discordant questions an end is never further), the p-value twice the smaller
    tail at 0."""
    tail = (1 - level) / 2
    d = (b - c) / n
    reach = 40 / n
    ends = []
    for lower in (True, False):
        inside = d.copy()
        outside = np.maximum(d - reach, -1.0) if lower else np.minimum(d + reach, 1.0)
        # the tail toward the end: 1/2 or more at the estimate, at most ``tail`` at ``outside``
        at_inside = np.full(d.shape, 0.5)
        at_outside = np.zeros(d.shape)
        for _ in range(18):  # bisection, then one linear step inside the last bracket
            mid = (inside + outside) / 2
            upper_tail, lower_tail = _score_tails(b, c, n, mid)
            toward = upper_tail if lower else lower_tail
            rejected = toward <= tail
            outside, at_outside = np.where(rejected, mid, outside), np.where(rejected, toward, at_outside)
            inside, at_inside = np.where(rejected, inside, mid), np.where(rejected, at_inside, toward)
        with np.errstate(invalid="ignore", divide="ignore"):
            share = np.clip((at_inside - tail) / (at_inside - at_outside), 0, 1)
        ends.append(np.where(np.isfinite(share), inside + share * (outside - inside), (inside + outside) / 2))
    upper_tail, lower_tail = _score_tails(b, c, n, np.zeros_like(d))
    return ends[0], ends[1], np.minimum(1.0, 2 * np.minimum(upper_tail, lower_tail))


_FEW_CACHE: dict[tuple[int, int, int, float], tuple[float, float, float]] = {}


def _few_discordant(b: np.ndarray, c: np.ndarray, n: np.ndarray, level: float
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_few_discordant_batch` per distinct (b, c, n), each computed once (cached), the
    new ones together in batches of similar n."""
    triples = np.stack([b, c, n], axis=1).astype(np.int64)
    unique, inverse = np.unique(triples, axis=0, return_inverse=True)
    keys = [(int(x), int(y), int(m), float(level)) for x, y, m in unique]
    found = {key: _FEW_CACHE[key] for key in keys if key in _FEW_CACHE}
    new = sorted((key for key in keys if key not in found), key=lambda key: (key[2], key[0] + key[1]))
    for start in range(0, len(new), 64):
        chunk = new[start:start + 64]
        counts = np.array([key[:3] for key in chunk], dtype=float)
        lo, hi, p = _few_discordant_batch(counts[:, 0], counts[:, 1], counts[:, 2], level)
        found.update(zip(chunk, zip(lo.tolist(), hi.tolist(), p.tolist(), strict=True), strict=True))
    if len(_FEW_CACHE) > 200_000:  # bounded memory in a long session
        _FEW_CACHE.clear()
    _FEW_CACHE.update(found)
    table = np.array([found[key] for key in keys], dtype=float).reshape(-1, 3)[inverse.ravel()]
    return table[:, 0], table[:, 1], table[:, 2]


def _paired_one_way(a: np.ndarray, b: np.ndarray, mask: np.ndarray, inst: np.ndarray, level: float,
                    draws: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Two tests, a difference declared only when both reject: the sign flips over instances
    (between-instance variation) and the score test over questions as if independent (the floor:
    clustering never makes a difference surer than independent questions would; it also keeps
    the interval from collapsing when every instance shows the same paired mean; up to
    FEW_DISCORDANT discordant questions with its exact mid-p distribution, beyond Tango's). The
    p-value is the larger of the two, the interval the union of their inversions, so it excludes
    0 exactly when p <= 1 - level; its far side (away from 0) also reaches the score interval at
    the effective n (skewed instance totals under clustering)."""
    totals, sizes = _instance_totals(b - a, mask, inst)
    present = sizes > 0
    if not present.all():  # compact the present instances to the left (one replication: the API)
        order = np.argsort(~present, axis=1, kind="stable")
        width = int(present.sum(axis=1).max())
        totals = np.take_along_axis(totals, order, axis=1)[:, :width]
        sizes = np.take_along_axis(sizes, order, axis=1)[:, :width]
    d, lo_f, hi_f, p_f = sign_flip_batch(totals, sizes, level, draws)
    n = mask.sum(axis=1)
    only_b = ((b > a) * mask).sum(axis=1)
    only_a = ((a > b) * mask).sum(axis=1)
    z = NormalDist().inv_cdf(1 - (1 - level) / 2)
    lo_s, hi_s = _tango_interval(only_b, only_a, np.maximum(n, 1), np.full(d.shape, z))
    discordant = only_a + only_b
    with np.errstate(invalid="ignore", divide="ignore"):
        score = np.abs(only_b - only_a) / np.sqrt(np.where(discordant > 0, discordant, 1))
    p_s = np.where(discordant > 0, _erfc(score / math.sqrt(2)), 1.0)  # the two-sided normal p-value
    # few discordant questions: the score statistic is far from normal (Tango's interval reaches
    # z^2 / n = 3.84 / n either side of 0 discordant, the exact test needs 3.0 / n at mid-p): its
    # exact mid-p distribution instead
    few = (discordant > 0) & (discordant <= FEW_DISCORDANT) | (discordant == 0) & (n > 0)
    if few.any():
        lo_x, hi_x, p_x = _few_discordant(only_b[few], only_a[few], np.maximum(n[few], 1), level)
        lo_s, hi_s, p_s = lo_s.copy(), hi_s.copy(), p_s.copy()
        lo_s[few], hi_s[few], p_s[few] = lo_x, hi_x, p_x
    lo, hi = np.minimum(lo_f, lo_s), np.maximum(hi_f, hi_s)
    # the far side (away from 0) also reaches the score interval at the effective number of
    # questions (n / deff, deff the instance-level paired variance over the independent one, at
    # least 1): discordance that sits in a few instances makes the instances' totals skewed, and
    # a case set that happened to catch few of those instances shows a difference nearer 0 with
    # a smaller spread, where symmetric flips fall short on the far side (one-way losses at
    # rho 0.6: 90-93% covered at 20-80 instances). The score interval's variance grows with the
    # hypothesised difference, as a count's does. The near side stays the exact test's, so the
    # p-value, "0 outside exactly when p <= 1 - level" and the one-way guarantee are unchanged.
    safe_n = np.maximum(n, 1)
    v, _ = _one_way((b - a - d[:, None]) / safe_n[:, None], mask, inst)
    independent = (discordant / safe_n - d**2) / safe_n
    known = (independent > 0) & np.isfinite(v)
    deff = np.where(known, np.maximum(v / np.where(known, independent, 1), 1.0), 1.0)
    lo_e, hi_e = _tango_interval(only_b / deff, only_a / deff, safe_n / deff, np.full(d.shape, z))
    lo = np.where(d < 0, np.minimum(lo, lo_e), lo)
    hi = np.where(d > 0, np.maximum(hi, hi_e), hi)
    # every question discordant the same way (B - A = +-1): at the edge of the range, as a share
    # at 100% is; the two shares' one-sided bounds on K instances with the flips' mid-p (the
    # observed outcome counts half: q^K / 2 = (1 - level) / 2, q = (1 - level)^(1/K)), so
    # 2 q - 1 excludes 0 exactly when the flips' smallest p-value 1 / 2^K is at most 1 - level
    _, k = _group_sums(np.ones_like(a), inst, mask)
    with np.errstate(divide="ignore"):
        edge = np.where(k > 1, 2 * (1 - level) ** (1 / np.maximum(k, 1)) - 1, -1.0)
    lo = np.where(d >= 1, np.minimum(lo, edge), lo)
    hi = np.where(d <= -1, np.maximum(hi, -edge), hi)
    # one instance: no spread between instances to measure, nothing to test (not the flips' 1/2)
    p = np.where(k > 1, np.maximum(p_f, p_s), 1.0)
    return d, np.clip(lo, -1, 1), np.clip(hi, -1, 1), p


# ---------------------------------------------------------------- two way (stats.generalize_types=true)
# The previous method, kept as it was: two-way cluster-robust variance (instances x types), a
# Satterthwaite df at most types - 1, score intervals (Wilson; Tango) at the effective n.

# Student t 97.5% quantiles for 1-30 degrees of freedom (beyond: the Cornish-Fisher expansion)
_T975 = np.array([12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179,
                  2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
                  2.060, 2.056, 2.052, 2.048, 2.045, 2.042])


def _crit_two_way(df: np.ndarray, level: float = LEVEL) -> np.ndarray:
    """Two-sided t quantile at ``level`` with (non-integer) ``df`` degrees of freedom."""
    z = NormalDist().inv_cdf(1 - (1 - level) / 2)
    nu = np.maximum(np.asarray(df, dtype=float), 1)
    t = (z + (z**3 + z) / (4 * nu) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * nu**2)
         + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * nu**3)
         + (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / (92160 * nu**4))
    if abs(level - 0.95) < 1e-12:
        small = nu <= 30
        t = np.where(small, _T975[np.clip(nu.astype(int), 1, 30) - 1], t)
    return t


def _two_way_variance(z: np.ndarray, mask: np.ndarray, inst: np.ndarray, tmpl: np.ndarray | None
                      ) -> tuple[np.ndarray, np.ndarray]:
    """Two-way cluster-robust variance of sum(z) (instances x types), each way with its
    G/(G-1) correction, never below either one-way variance; and the degrees of freedom
    (the smaller of the two ways', each at most its clusters minus one, at least one)."""

    def one_way(g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        sums, k = _group_sums(z, g, mask)
        factor = np.where(k > 1, k / np.maximum(k - 1, 1), 1.0)
        squares = (sums**2).sum(axis=1)
        # Satterthwaite's (sum s^2)^2 / sum s^4 with s^4 estimated by S^4 / 2
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


def _share_two_way(num, den, mask, inst, tmpl, level):
    m = (den * mask).sum(axis=1)
    safe_m = np.maximum(m, 1)
    r = (num * mask).sum(axis=1) / safe_m
    z = (num - r[:, None] * den) / safe_m[:, None]
    v, df = _two_way_variance(z, mask, inst, tmpl)
    binomial = r * (1 - r) / safe_m
    inner = binomial > 0
    deff = np.where(inner, np.maximum(v / np.where(inner, binomial, 1), 1.0), 1.0)
    _, k_inst = _group_sums(den, inst, mask * den)
    n_eff = np.where(inner, safe_m / deff, np.maximum(np.minimum(k_inst, m), 1))
    lo, hi = _wilson(r, n_eff, _crit_two_way(df, level))
    return r, lo, hi, m


def _tango_q(delta: np.ndarray, b: np.ndarray, c: np.ndarray, n: np.ndarray) -> np.ndarray:
    """The A-only rate that fits b B-only and c A-only of n questions best given
    p(B only) - p(A only) = delta (Tango 1998's restricted maximum likelihood)."""
    w = -b - c + (2 * n - b + c) * delta
    return (-w + np.sqrt(np.maximum(w**2 + 8 * n * c * delta * (1 - delta), 0))) / (4 * n)


def _tango_z(delta: np.ndarray, b: np.ndarray, c: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Tango's score statistic for a paired difference delta = p(B only) - p(A only)."""
    q = _tango_q(delta, b, c, n)
    var = np.maximum(n * (2 * q + delta * (1 - delta)), 1e-12)
    return (b - c - n * delta) / np.sqrt(var)


def _paired_variance_two_way(a, b, mask, inst, tmpl):
    n = np.maximum(mask.sum(axis=1), 1)
    only_b = ((b > a) * mask).sum(axis=1)
    only_a = ((a > b) * mask).sum(axis=1)
    d = (only_b - only_a) / n
    v, df = _two_way_variance((b - a - d[:, None]) / n[:, None], mask, inst, tmpl)
    binomial = ((only_a + only_b) / n - d**2) / n
    return n, only_a, only_b, d, v, df, binomial


def _paired_two_way(a, b, mask, inst, tmpl, level):
    n, only_a, only_b, d, v, df, binomial = _paired_variance_two_way(a, b, mask, inst, tmpl)
    inner = binomial > 0
    _, k_inst = _group_sums(np.ones_like(a, dtype=float), inst, mask)
    deff = np.where(inner, np.maximum(v / np.where(inner, binomial, 1), 1.0), n / np.maximum(k_inst, 1))
    be, ce, ne = only_b / deff, only_a / deff, n / deff
    crit = _crit_two_way(df, level)
    lo, hi = _tango_interval(be, ce, ne, crit)
    # the two-way method has no test of its own: the p-value of its score statistic at 0
    z0 = np.abs(_tango_z(np.zeros_like(d), be, ce, ne))
    p = np.array([1 - _t_abs_cdf(float(x), max(int(round(f)), 1)) for x, f in zip(z0, df, strict=True)])
    return d, lo, hi, np.where(only_a + only_b > 0, p, 1.0)


# ---------------------------------------------------------------- batch functions


def accuracy_batch(y: np.ndarray, mask: np.ndarray, inst: np.ndarray, types: np.ndarray | None = None,
                   level: float = LEVEL, generalize_types: bool = False
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(point, low, high) per replication of the share of hits (NaN where no question)."""
    ones = np.ones_like(y)
    share = _share_two_way if generalize_types else _share
    r, lo, hi, m = share(y, ones, mask, inst, types, level)
    empty = m == 0
    return np.where(empty, np.nan, r), np.where(empty, np.nan, lo), np.where(empty, np.nan, hi)


def ratio_batch(num: np.ndarray, den: np.ndarray, mask: np.ndarray, inst: np.ndarray,
                types: np.ndarray | None = None, level: float = LEVEL, generalize_types: bool = False
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(point, low, high) of sum(num)/sum(den) (num implies den): both totals on the same
    questions, linearized together, so the denominator's variance counts; NaN where it is 0."""
    share = _share_two_way if generalize_types else _share
    r, lo, hi, m = share(num * den, den, mask, inst, types, level)
    empty = m == 0
    return np.where(empty, np.nan, r), np.where(empty, np.nan, lo), np.where(empty, np.nan, hi)


def paired_batch(a: np.ndarray, b: np.ndarray, mask: np.ndarray, inst: np.ndarray,
                 types: np.ndarray | None = None, level: float = LEVEL, generalize_types: bool = False,
                 draws: int = FLIP_DRAWS) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(B - A, low, high, p-value) per replication (NaN where no question). Types do not enter
    the one-way method: a flip swaps the configs on a whole instance, whatever its types."""
    if generalize_types:
        d, lo, hi, p = _paired_two_way(a, b, mask, inst, types, level)
    else:
        d, lo, hi, p = _paired_one_way(a, b, mask, inst, level, draws)
    empty = mask.sum(axis=1) == 0
    return np.where(empty, np.nan, d), np.where(empty, np.nan, lo), np.where(empty, np.nan, hi), np.where(empty, np.nan, p)


# ---------------------------------------------------------------- one case set: the public API


def _validated(name: str, values: Sequence[bool] | np.ndarray, n: int | None = None) -> np.ndarray:
    array = np.asarray(values)
    if array.ndim != 1:
        raise ValueError(f"{name}: one value per question expected, got an array of shape {array.shape}")
    if n is not None and len(array) != n:
        raise ValueError(f"{name}: {len(array)} values for {n} questions")
    if array.dtype != bool:
        try:
            numbers = array.astype(float)
        except (TypeError, ValueError):
            raise ValueError(f"{name}: booleans expected (True/False or 1/0)") from None
        if not np.all((numbers == 0) | (numbers == 1)):
            raise ValueError(f"{name}: booleans expected (True/False or 1/0), got other values")
        return numbers
    return array.astype(float)


def _arrays(name: str, values: Sequence[bool], instances: Sequence[Hashable], types: Sequence[Hashable] | None
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
    y = _validated(name, values)
    if not len(y):
        raise ValueError(f"{name}: no question (an interval needs at least one)")
    if instances is None or len(instances) != len(y):
        raise ValueError(f"instances: one instance id per question expected "
                         f"({'none' if instances is None else len(instances)} for {len(y)} questions)")
    if types is not None and len(types) != len(y):
        raise ValueError(f"types: one type per question expected ({len(types)} for {len(y)} questions)")
    inst = codes(list(instances), len(y))[None, :]
    tmpl = codes(list(types), len(y))[None, :] if types is not None else None
    return y[None, :], np.ones((1, len(y))), inst, tmpl


def _level(level: float) -> float:
    if not 0 < level < 1:
        raise ValueError(f"level: a confidence level between 0 and 1 expected, got {level}")
    return float(level)


def accuracy_interval(correct: Sequence[bool], instances: Sequence[Hashable], level: float = LEVEL, *,
                      types: Sequence[Hashable] | None = None, generalize_types: bool = False
                      ) -> tuple[float, float]:
    """The ``level`` interval of the share of correct answers (one bool per question; ``instances``:
    the instance id of each question), generalising over instances like these.

    One instance: no instance-to-instance spread to measure (0 degrees of freedom), so no finite
    interval: the whole range (0.0, 1.0). At 0% or 100%: the one-sided bound at one observation
    per instance. ``types``: each question's type (strata); ``generalize_types``: the two-way
    method (types random too). Raises ValueError on empty or mismatched input."""
    y, mask, inst, tmpl = _arrays("correct", correct, instances, types)
    _, lo, hi = accuracy_batch(y, mask, inst, tmpl, _level(level), generalize_types)
    return float(lo[0]), float(hi[0])


def paired_interval(correct_a: Sequence[bool], correct_b: Sequence[bool], instances: Sequence[Hashable],
                    level: float = LEVEL, *, types: Sequence[Hashable] | None = None,
                    generalize_types: bool = False) -> tuple[float, float, float, float]:
    """B minus A on the same questions: (difference, low, high, p_value).

    ``difference`` is accuracy(B) - accuracy(A); the p-value is the sign-flip test over instances
    of "no difference" (every ``2 ** K`` pattern up to 12 instances, else 10,000 drawn with a
    fixed seed; the observed pattern and its mirror image count half, a mid-p), at least the
    question-level score test's; (low, high) are the differences those tests do not reject at
    ``1 - level``. With fewer than 5 instances no p-value can reach 0.05 (the smallest is
    ``1 / 2 ** K``); one instance: p = 1 and the whole range (-1.0, 1.0). Raises ValueError on empty or mismatched
    input."""
    a, mask, inst, tmpl = _arrays("correct_a", correct_a, instances, types)
    b = _validated("correct_b", correct_b, a.shape[1])[None, :]
    d, lo, hi, p = paired_batch(a, b, mask, inst, tmpl, _level(level), generalize_types)
    return float(d[0]), float(lo[0]), float(hi[0]), float(p[0])


def ratio_interval(numerator: Sequence[bool], denominator: Sequence[bool], instances: Sequence[Hashable],
                   level: float = LEVEL, *, types: Sequence[Hashable] | None = None,
                   generalize_types: bool = False) -> tuple[float, float] | None:
    """The interval of sum(numerator) / sum(denominator) over every question: "relative to full"
    is (arm and full correct) over (full correct), so the full arm's variance is in it. None when
    the denominator is 0."""
    den, mask, inst, tmpl = _arrays("denominator", denominator, instances, types)
    if not den.any():
        return None
    num = _validated("numerator", numerator, den.shape[1])[None, :]
    _, lo, hi = ratio_batch(num, den, mask, inst, tmpl, _level(level), generalize_types)
    return float(lo[0]), float(hi[0])


def detectable_difference(correct_a: Sequence[bool], correct_b: Sequence[bool] | None,
                          instances: Sequence[Hashable], *, types: Sequence[Hashable] | None = None,
                          generalize_types: bool = False, power: float = POWER,
                          level: float = LEVEL) -> float | None:
    """The smallest accuracy difference this case set detects (two-sided test at ``1 - level``,
    the given power): (t quantile + z_power) x the difference's standard error.

    With B: the observed instance-level paired variance. With A alone (one job): two independent
    arms of this design, the second ``delta`` away from A (toward 50%), each with A's design
    effect; at 0% or 100% one observation per instance. None when no difference up to 100 points
    is detectable (the report says "not detectable with K instances") or there is no question."""
    if not len(correct_a):
        return None
    a, mask, inst, tmpl = _arrays("correct_a", correct_a, instances, types)
    k = len(set(inst[0].tolist()))
    if k < 2:
        return None
    z_power = NormalDist().inv_cdf(power)
    if generalize_types:
        return _detectable_two_way(a, None if correct_b is None else _validated("correct_b", correct_b, a.shape[1]),
                                   mask, inst, tmpl, z_power, level)
    crit = float(t_quantile(level, k - 1)) + z_power
    n = a.shape[1]
    if correct_b is not None:
        b = _validated("correct_b", correct_b, n)[None, :]
        d = float((b - a).sum()) / n
        v, _ = _one_way((b - a - d) / n, mask, inst)
        discordant = float(np.abs(b - a).sum()) / n
        floor = (discordant - d**2) / n  # independent questions
        if discordant > 0 and max(float(v[0]), floor) > 0:
            value = crit * math.sqrt(max(float(v[0]), floor))
            return round(value, 4) if value <= 1 else None
    # one arm: the variance of A's accuracy and of an arm delta away, at A's effective n
    s = _share_variance(a, np.ones_like(a), mask, inst, tmpl)
    p = float(s["r"][0])
    n_eff = p * (1 - p) / max(float(s["v"][0]), float(s["floor"][0])) if 0 < p < 1 else float(k)
    toward = -1.0 if p >= 0.5 else 1.0

    def shortfall(delta: float) -> float:
        q = p + toward * delta
        return crit * math.sqrt((p * (1 - p) + q * (1 - q)) / n_eff) - delta

    room = p if toward < 0 else 1 - p  # the largest difference from p
    if shortfall(room) > 0:
        return None
    low, high = 0.0, room
    for _ in range(60):
        mid = (low + high) / 2
        if shortfall(mid) > 0:
            low = mid
        else:
            high = mid
    return round(high, 4)


def _detectable_two_way(a: np.ndarray, b: np.ndarray | None, mask: np.ndarray, inst: np.ndarray,
                        tmpl: np.ndarray | None, z_power: float, level: float) -> float | None:
    """The previous method's detectable difference (stats.generalize_types=true), capped at 1."""
    if b is not None:
        b = b[None, :]
        _, _, _, _, v, df, binomial = _paired_variance_two_way(a, b, mask, inst, tmpl)
        if binomial[0] > 0:
            se = np.sqrt(max(v[0], binomial[0]))
            value = float((_crit_two_way(df, level)[0] + z_power) * se)
            return round(value, 4) if value <= 1 else None
    n = a.shape[1]
    p = float(a.mean())
    v, df = _two_way_variance((a - p) / n, mask, inst, tmpl)
    binomial = p * (1 - p) / n
    per_arm = max(float(v[0]), binomial) if binomial > 0 else 0.25 / max(len(set(inst[0].tolist())), 1)
    value = float((_crit_two_way(df, level)[0] + z_power) * np.sqrt(2 * per_arm))
    return round(value, 4) if value <= 1 else None


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
