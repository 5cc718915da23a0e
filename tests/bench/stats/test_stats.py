"""bench.stats: the public interval API on hand-computed cases, its edges, and the headline it feeds.

Estimand (docs/uncertainty.md): accuracy over the case set's fixed mix of question types,
generalising over instances; one-way by instance (CR3, K - 1 df), types as strata; paired
differences from a sign-flip test over instances (mid-p on the observed pattern) joined with a
question-level score floor.
"""

from __future__ import annotations

import doctest
import itertools
import math

import numpy as np
import pytest

import bench.stats
from bench.scoring.metrics import compute_metrics
from bench.scoring.question_groups import distance_bucket
from bench.stats import (
    accuracy_batch,
    accuracy_interval,
    detectable_difference,
    paired_batch,
    paired_interval,
    ratio_interval,
    sign_flip_batch,
    t_quantile,
)

Z = 1.959963984540054  # the normal 97.5% quantile
EDGE6 = 0.025 ** (1 / 6)  # Clopper-Pearson's bound for 6 of 6 instances (97.5% one-sided)


def _instances(k: int, size: int) -> list[str]:
    return [f"i{i // size}" for i in range(k * size)]



def test_the_package_docstring_shows_the_contracts_shapes():
    # bench.stats' own example (what a library user reads first): (low, high) and (difference, low, high, p)
    result = doctest.testmod(bench.stats, verbose=False)
    assert result.attempted >= 4 and result.failed == 0


# ---------------------------------------------------------------- accuracy_interval


def test_accuracy_all_correct_or_all_wrong_is_the_one_sided_bound_on_the_instances():
    # 6 instances of 3 questions, every answer right: as if 6 independent observations (the most
    # correlated case), Clopper-Pearson: the lower end is 0.025^(1/6)
    assert accuracy_interval([True] * 18, _instances(6, 3)) == pytest.approx((EDGE6, 1.0))
    assert accuracy_interval([False] * 18, _instances(6, 3)) == pytest.approx((0.0, 1 - EDGE6))
    assert accuracy_interval([1] * 18, _instances(6, 3), level=0.9) == pytest.approx((0.05 ** (1 / 6), 1.0))
    # more instances, a tighter bound; more questions per instance, the same bound
    assert accuracy_interval([True] * 60, _instances(20, 3))[0] == pytest.approx(0.025 ** (1 / 20))
    assert accuracy_interval([True] * 60, _instances(6, 10)) == pytest.approx((EDGE6, 1.0))


def test_accuracy_interior_case_computed_by_hand():
    # 4 instances of 2 questions: right 2, 1, 0, 2 -> p = 5/8. Residuals summed per instance,
    # over n = 8: 0.75, -0.25, -1.25, 0.75 (/8); CR3 divides each by 1 - h = 1 - 2/8
    correct = [1, 1, 1, 0, 0, 0, 1, 1]
    instances = ["a", "a", "b", "b", "c", "c", "d", "d"]
    v = sum((s / 8 / 0.75) ** 2 for s in (0.75, -0.25, -1.25, 0.75))
    t3 = 3.182446305284263  # Student t, 3 df, 97.5%
    floor = 8 * 0.625 * 0.375 / 64  # independent questions (one stratum)
    n_eff = 0.625 * 0.375 / max(v * (t3 / Z) ** 2, floor)
    centre = (0.625 + Z**2 / (2 * n_eff)) / (1 + Z**2 / n_eff)
    half = Z / (1 + Z**2 / n_eff) * math.sqrt(0.625 * 0.375 / n_eff + Z**2 / (4 * n_eff**2))
    low, high = accuracy_interval(correct, instances)
    assert (low, high) == pytest.approx((centre - half, centre + half), abs=1e-12)
    assert (low, high) == pytest.approx((0.0942, 0.9639), abs=1e-4)


def test_one_instance_has_no_finite_interval_the_whole_range():
    # no spread between instances to measure (0 degrees of freedom): the interval is all of [0, 1]
    assert accuracy_interval([True, False, True], ["only"] * 3) == (0.0, 1.0)
    assert accuracy_interval([True] * 8, ["only"] * 8) == (0.0, 1.0)
    assert accuracy_interval([True], ["only"]) == (0.0, 1.0)


@pytest.mark.parametrize(("args", "message"), [
    (([], []), "no question"),
    (([True, False], ["a"]), "one instance id per question"),
    (([True, 2], ["a", "b"]), "booleans expected"),
    (([True, "yes"], ["a", "b"]), "booleans expected"),
    (([True], ["a"], 1.5), "confidence level"),
])
def test_accuracy_bad_input_is_a_clear_value_error(args, message):
    with pytest.raises(ValueError, match=message):
        accuracy_interval(*args)


def test_accuracy_interval_brackets_the_point_stays_in_range_and_is_deterministic():
    rng = np.random.default_rng(3)
    for _ in range(30):
        k = int(rng.integers(2, 15))
        sizes = rng.integers(1, 6, size=k)
        instances = [i for i, s in enumerate(sizes) for _ in range(s)]
        correct = (rng.random(len(instances)) < rng.random()).tolist()
        low, high = accuracy_interval(correct, instances)
        point = sum(correct) / len(correct)
        assert 0 <= low <= point <= high <= 1 and high > low
        assert accuracy_interval(correct, instances) == (low, high)


def test_clusters_not_questions_set_the_width():
    # one instance with many questions all wrong, many small instances all right
    correct = [0] * 20 + [1] * 10
    clustered = accuracy_interval(correct, ["big"] * 20 + [f"s{i}" for i in range(10)])
    independent = accuracy_interval(correct, [f"q{i}" for i in range(30)])
    assert clustered[1] - clustered[0] > independent[1] - independent[0] + 0.15


def test_types_are_strata_by_default_and_random_only_behind_generalize_types():
    # every instance: type a right, type b wrong. The types are the benchmark's fixed design:
    # over instances there is no spread; treating types as a sample of types (the previous
    # two-way method, stats.generalize_types=true) makes the interval nearly [0, 1]
    correct = [1, 0] * 20
    instances = _instances(20, 2)
    types = ["a", "b"] * 20
    fixed = accuracy_interval(correct, instances, types=types)
    random_types = accuracy_interval(correct, instances, types=types, generalize_types=True)
    assert fixed[0] < 0.5 < fixed[1] and fixed[1] - fixed[0] < 0.25
    assert random_types[1] - random_types[0] > 0.9



def test_the_two_way_method_keeps_a_share_of_0_or_100_inside_its_interval():
    # stats.generalize_types=true at 0% and 100%: Wilson's bound is exactly 0 (1); the subtraction
    # that computes it gave 1.1e-16 at 0%, an interval that did not hold its own estimate
    for k in range(2, 13):
        for size in (1, 2, 3, 5):
            instances, types = _instances(k, size), [f"t{i % 4}" for i in range(k * size)]
            n = k * size
            assert accuracy_interval([False] * n, instances, types=types, generalize_types=True)[0] == 0.0
            assert accuracy_interval([True] * n, instances, types=types, generalize_types=True)[1] == 1.0
            assert ratio_interval([False] * n, [True] * n, instances, types=types, generalize_types=True)[0] == 0.0


# ---------------------------------------------------------------- paired_interval


def test_paired_all_agree():
    # no discordant question: p = 1; the interval is the exact mid-p score test's over 12
    # questions: at a difference delta > 0 the A-only rate that fits best is 0 and B-only counts
    # are binomial(12, delta); the observed 0 is the lowest, its mid-p tail (1 - delta)^12 / 2
    # reaches 0.025 at 1 - 0.05^(1/12) = 0.221 (Tango's normal score bound: z^2 / (n + z^2), 0.242)
    bound = 1 - 0.05 ** (1 / 12)
    assert paired_interval([0, 1] * 6, [0, 1] * 6, _instances(6, 2)) == pytest.approx((0.0, -bound, bound, 1.0))


def test_paired_all_one_way():
    # every question right in B only, 6 instances: the sign flips' mid-p counts the observed
    # pattern and its mirror half, (2 - 1) / 2^6; the lower end is the two shares' one-sided
    # bounds on 6 instances with the same mid-p, 2 x 0.05^(1/6) - 1 > 0
    edge6 = 0.05 ** (1 / 6)
    assert paired_interval([0] * 12, [1] * 12, _instances(6, 2)) == pytest.approx((1.0, 2 * edge6 - 1, 1.0, 1 / 64))
    assert paired_interval([1] * 12, [0] * 12, _instances(6, 2)) == pytest.approx((-1.0, -1.0, 1 - 2 * edge6, 1 / 64))
    assert 2 * edge6 - 1 == pytest.approx(0.2139, abs=1e-4)
    # half the questions discordant, all one way, in every one of 6 instances: excludes 0
    difference, low, high, p = paired_interval([0, 1] * 6, [1, 1] * 6, _instances(6, 2))
    assert difference == 0.5 and 0 < low < 0.5 < high <= 1 and p == pytest.approx(1 / 64)
    # in 5 instances: the smallest mid-p is 1 / 2^5 = 0.031, so 5 instances all one way exclude 0
    # (2 x 0.05^(1/5) - 1 = 0.099 > 0); in 4 the smallest is 1 / 16 > 0.05 and 0 stays in
    difference, low, high, p = paired_interval([0] * 10, [1] * 10, _instances(5, 2))
    assert difference == 1.0 and low == pytest.approx(2 * 0.05 ** (1 / 5) - 1) and p == pytest.approx(1 / 32)
    difference, low, high, p = paired_interval([0] * 8, [1] * 8, _instances(4, 2))
    assert difference == 1.0 and low == -1.0 and p == pytest.approx(1 / 16)
    # with instances that do not differ, their patterns tie with the observation at delta = 0
    # and count in full (only the observed pattern and its mirror count half): 6 one way of 10,
    # (2^5 - 1) / 2^10
    a = [0] * 6 + [1] * 4
    _, low, _, p = paired_interval(a, [1] * 10, [f"i{i}" for i in range(10)])
    assert p == pytest.approx(31 / 1024) and low > 0


def test_paired_one_discordant_question():
    # 6 instances of 5; one question right in B only (instance 0). Sign flips: every pattern's
    # |sum| is 1, p = (64 - 1) / 64 (the observed pattern and its mirror count half). A pattern
    # with m of the 6 signs +1 accepts shifts in [0, 1/(5m)] (instance 0 kept) or
    # [0, 1/(30 - 5m)] (flipped): the ends, widest first, are inf, inf (the observed and its
    # mirror), 1/5, 1/5, then ten of 1/10; the mid-p keeps more than 0.05 x 64 + 1 = 4.2
    # patterns, so the fifth: 1/10. The question-level floor (one discordant question: the exact
    # mid-p score test, checked by brute force below) is wider below d: -0.0582. The far side
    # (above d > 0) also reaches the score interval at the effective n: the instances' residuals
    # (1 - 5/30) / 30 and five of -(5/30) / 30, each over 1 - h = 5/6 (CR3), give V = 1.2 / 900
    # against the independent (1/30 - 1/900) / 30, deff = 36/29; with c = 0 Tango's upper end is
    # Wilson's for 1/30 at n = 30 / deff
    a = [1, 0, 1, 1, 0] * 6
    b = list(a)
    b[1] = 1
    n_eff, share = 30 * 29 / 36, 1 / 30
    wilson_high = ((share + Z**2 / (2 * n_eff)) + Z * math.sqrt(share * (1 - share) / n_eff + Z**2 / (4 * n_eff**2))) \
        / (1 + Z**2 / n_eff)
    difference, low, high, p = paired_interval(a, b, _instances(6, 5))
    assert (difference, high, p) == pytest.approx((1 / 30, wilson_high, 63 / 64)) and high == pytest.approx(0.18962, abs=1e-5)
    assert low == pytest.approx(-0.05818, abs=1e-5) and _brute_tails(1, 0, 30, low)[0] == pytest.approx(0.025, abs=1e-6)
    totals, sizes = np.array([[1.0, 0, 0, 0, 0, 0]]), np.full((1, 6), 5.0)
    _, low, high, _ = sign_flip_batch(totals, sizes)
    assert (float(low[0]), float(high[0])) == pytest.approx((0.0, 0.1))


def test_far_side_reaches_the_score_interval_at_the_effective_n_the_near_side_stays():
    # 20 instances of 5 questions, A right on all; B loses 4 of 5 in instances 0-2, nothing
    # elsewhere: d = -12/100, the losses sit in 3 instances (skewed instance totals). By hand:
    # residuals z_k = (D_k + 0.12 x 5) / 100, -3.4/100 (3 instances) and 0.6/100 (17), each over
    # 1 - h = 19/20 (CR3): V = (3 x 3.4^2 + 17 x 0.6^2) / (100 x 0.95)^2; independent questions:
    # (0.12 - 0.0144) / 100; deff = V / that. The far (lower) end is the score interval's at
    # b = 0, c = 12 / deff, n = 100 / deff: with b = 0 Tango's lower end is minus Wilson's upper
    # end for 12 / 100 at n / deff
    from bench.stats.intervals import _tango_interval
    instances = _instances(20, 5)
    a = [1] * 100
    b = [0, 0, 0, 0, 1] * 3 + [1] * 85
    v = (3 * 3.4**2 + 17 * 0.6**2) / (100 * 0.95) ** 2
    deff = v / ((0.12 - 0.0144) / 100)
    n_eff, share = 100 / deff, 0.12
    wilson_high = ((share + Z**2 / (2 * n_eff)) + Z * math.sqrt(share * (1 - share) / n_eff + Z**2 / (4 * n_eff**2))) \
        / (1 + Z**2 / n_eff)
    difference, low, high, p = paired_interval(a, b, instances)
    assert difference == pytest.approx(-0.12) and low == pytest.approx(-wilson_high)
    # the near side (toward 0) and the p-value are the sign flips' and the independent score
    # test's: unchanged by the far side
    totals = np.array([[-4.0] * 3 + [0.0] * 17])
    _, low_f, high_f, p_f = sign_flip_batch(totals, np.full((1, 20), 5.0))
    low_s, high_s = _tango_interval(np.array([0.0]), np.array([12.0]), np.array([100.0]), np.array([Z]))
    assert high == pytest.approx(max(float(high_f[0]), float(high_s[0]))) and low < min(float(low_f[0]), float(low_s[0]))
    assert p == pytest.approx(max(float(p_f[0]), math.erfc(12 / math.sqrt(12) / math.sqrt(2))))


def _brute_tails(b: int, c: int, n: int, delta: float) -> tuple[float, float]:
    """Mid-p tails (upper, lower) of Tango's score statistic for p(B only) - p(A only) = delta,
    by brute force over every (b', c') of n independent questions (trinomial) at the rates that
    fit (b, c) best under delta."""

    def restricted(x: float, y: float) -> float:  # Tango's q: the A-only rate
        w = -x - y + (2 * n - x + y) * delta
        return (-w + math.sqrt(max(w * w + 8 * n * y * delta * (1 - delta), 0))) / (4 * n)

    def stat(x: float, y: float) -> float:
        q = restricted(x, y)
        return (x - y - n * delta) / math.sqrt(max(n * (2 * q + delta * (1 - delta)), 1e-12))

    gamma = min(max(restricted(b, c), 0.0), 1.0)
    beta = min(max(gamma + delta, 0.0), 1.0)
    rest = max(1 - beta - gamma, 0.0)
    observed = stat(b, c)
    upper = lower = 0.0
    for x in range(n + 1):
        for y in range(n + 1 - x):
            prob = math.comb(n, x) * math.comb(n - x, y) * beta**x * gamma**y * rest ** (n - x - y)
            t = stat(x, y)
            if abs(t - observed) <= 1e-9:
                upper, lower = upper + prob / 2, lower + prob / 2
            elif t > observed:
                upper += prob
            else:
                lower += prob
    return upper, lower


def test_few_discordant_questions_use_the_exact_mid_p_score_test():
    # up to 20 discordant questions the question-level floor is Tango's score statistic with its
    # exact distribution (independent questions at the restricted rates, ties half)
    from bench.stats.intervals import _few_discordant_batch
    for b, c, n in ((0, 0, 30), (2, 1, 40), (0, 3, 100), (6, 0, 30)):
        low, high, p = (float(x[0]) for x in _few_discordant_batch(np.array([b], float), np.array([c], float),
                                                                  np.array([n], float), 0.95))
        # each end is where its one-sided mid-p tail is 0.025
        assert _brute_tails(b, c, n, low)[0] == pytest.approx(0.025, abs=1e-6)
        assert _brute_tails(b, c, n, high)[1] == pytest.approx(0.025, abs=1e-6)
        assert p == pytest.approx(min(1.0, 2 * min(_brute_tails(b, c, n, 0.0))), abs=1e-9)
    # 0 discordant of 30: at delta > 0 the A-only rate that fits is 0, B-only counts are
    # binomial(30, delta), the observed 0 the lowest: (1 - delta)^30 / 2 = 0.025
    assert float(_few_discordant_batch(np.array([0.0]), np.array([0.0]), np.array([30.0]), 0.95)[1][0]) == \
        pytest.approx(1 - 0.05 ** (1 / 30), abs=1e-6)
    # six discordant one way: p = 0.0071 < 1/32, so one-way discordance across 6 instances still
    # excludes 0 whatever the flips say
    assert float(_few_discordant_batch(np.array([6.0]), np.array([0.0]), np.array([30.0]), 0.95)[2][0]) < 1 / 32


def test_paired_one_instance():
    assert paired_interval([1, 0, 1], [1, 1, 1], ["only"] * 3) == pytest.approx((1 / 3, -1.0, 1.0, 1.0))


def test_paired_bad_input():
    with pytest.raises(ValueError, match="no question"):
        paired_interval([], [], [])
    with pytest.raises(ValueError, match="3 values for 2 questions"):
        paired_interval([1, 0], [1, 0, 1], ["a", "b"])


def _exact_p(totals: list[float]) -> float:
    """The sign-flip p-value by brute force over every pattern, the observed pattern and its
    mirror image counting half (the mid-p on the pattern itself: 2 hits become 1)."""
    observed = abs(sum(totals))
    hits = sum(abs(sum(s * t for s, t in zip(signs, totals, strict=True))) >= observed - 1e-9
               for signs in itertools.product((1, -1), repeat=len(totals)))
    return (hits - 1) / 2 ** len(totals)


def test_p_value_is_the_sign_flip_test_over_instances_by_brute_force():
    rng = np.random.default_rng(7)
    for k in (3, 6, 9, 12):
        sizes = rng.integers(1, 5, size=k)
        instances = [i for i, s in enumerate(sizes) for _ in range(s)]
        a = rng.random(len(instances)) < 0.6
        b = np.where(rng.random(len(instances)) < 0.3, ~a, a)
        totals = [float((b[[j for j, i in enumerate(instances) if i == g]].astype(int)
                         - a[[j for j, i in enumerate(instances) if i == g]].astype(int)).sum()) for g in range(k)]
        _, _, _, p = paired_interval(a.tolist(), b.tolist(), instances)
        discordant = int((a != b).sum())
        score_p = math.erfc(abs(int((b & ~a).sum()) - int((a & ~b).sum())) / math.sqrt(discordant) / math.sqrt(2)) \
            if discordant else 1.0
        assert p == pytest.approx(max(_exact_p(totals), score_p))


def test_many_instances_draw_sign_patterns_with_a_fixed_seed():
    rng = np.random.default_rng(11)
    instances = [i // 3 for i in range(14 * 3)]  # 14 instances: drawn patterns, not 2^14
    a = (rng.random(42) < 0.5).tolist()
    b = [x if rng.random() > 0.4 else not x for x in a]
    first = paired_interval(a, b, instances)
    assert paired_interval(a, b, instances) == first  # deterministic
    totals = [sum(int(b[j]) - int(a[j]) for j in range(42) if instances[j] == g) for g in range(14)]
    assert first[3] >= _exact_p(totals) - 0.015  # within Monte Carlo error of the exact test (never below the floor)


def test_one_way_discordance_across_six_or_more_instances_excludes_zero():
    rng = np.random.default_rng(5)
    for _ in range(40):
        k = int(rng.integers(6, 30))
        sizes = rng.integers(1, 9, size=k)
        instances = [i for i, s in enumerate(sizes) for _ in range(s)]
        a = (rng.random(len(instances)) < 0.5).tolist()
        b = list(a)
        losers = rng.choice(k, size=int(rng.integers(6, k + 1)), replace=False)
        for g in losers:  # in each of >= 6 instances, at least one question B gets right and A wrong
            qs = [j for j, i in enumerate(instances) if i == g]
            for j in rng.choice(qs, size=int(rng.integers(1, len(qs) + 1)), replace=False):
                a[j], b[j] = False, True
        difference, low, high, p = paired_interval(a, b, instances)
        assert low > 0 and p <= 1 / 32 and low <= difference <= high


def test_interval_and_p_value_agree_and_stay_in_range():
    rng = np.random.default_rng(9)
    for _ in range(60):
        k = int(rng.integers(2, 25))
        sizes = rng.integers(1, 7, size=k)
        instances = [i for i, s in enumerate(sizes) for _ in range(s)]
        a = rng.random(len(instances)) < rng.random()
        b = np.where(rng.random(len(instances)) < rng.random() * 0.5, rng.random(len(instances)) < 0.8, a)
        difference, low, high, p = paired_interval(a.tolist(), b.tolist(), instances)
        assert difference == pytest.approx(b.mean() - a.mean())
        assert -1 <= low <= difference <= high <= 1 and 0 < p <= 1
        assert (low > 0 or high < 0) == (p <= 0.05)  # 0 outside exactly when the test rejects


# ---------------------------------------------------------------- relative to full, detectable difference


def test_relative_to_full_counts_the_full_arms_variance_and_has_a_one_sided_bound_at_100():
    instances = _instances(6, 4)
    full = [1] * 18 + [0] * 6
    arm = [1] * 12 + [0] * 6 + [1] * 6  # right where full was wrong: not in the numerator
    low, high = ratio_interval([x and f for x, f in zip(arm, full, strict=True)], full, instances)
    assert low < 12 / 18 < high
    # every full-correct answer kept, by an arm that is not full: 100% with a one-sided bound over the
    # instances where full got something right (5 of 6 here)
    kept = ratio_interval(full, full, instances)
    assert kept == pytest.approx((0.025 ** (1 / 5), 1.0))
    assert ratio_interval([0, 0], [0, 0], ["a", "b"]) is None  # the full arm got nothing right


def test_detectable_difference_never_exceeds_100_points():
    # 100% on 3 instances (the smoke sample): two arms, the second delta below, one observation
    # per instance: delta = c^2 / (K + c^2), c = t(2 df) + z(80%)
    c = float(t_quantile(0.95, 2)) + 0.8416212335729143
    assert detectable_difference([True] * 17, None, _instances(3, 6)[:17]) == pytest.approx(c**2 / (3 + c**2), abs=1e-4)
    assert detectable_difference([True, False], None, ["a", "a"]) is None  # one instance: nothing detectable
    rng = np.random.default_rng(2)
    for k in (2, 3, 5, 10, 40):
        instances = _instances(k, 4)
        a = (rng.random(len(instances)) < 0.5).tolist()
        b = (rng.random(len(instances)) < 0.5).tolist()
        for value in (detectable_difference(a, None, instances), detectable_difference(a, b, instances)):
            assert value is None or 0 < value <= 1


def test_detectable_difference_shrinks_with_more_instances_and_grows_with_clustering():
    rng = np.random.default_rng(3)
    a = (rng.random(400) < 0.7).tolist()
    b = (rng.random(400) < 0.7).tolist()
    small = detectable_difference(a[:100], b[:100], [i // 4 for i in range(100)])
    large = detectable_difference(a, b, [i // 4 for i in range(400)])
    assert large < small
    alike = [bool(x) for x in np.repeat(rng.random(50) < 0.7, 8)]  # each instance's questions all alike
    assert detectable_difference(alike, None, [i // 8 for i in range(400)]) > \
        2 * detectable_difference(alike, None, list(range(400)))


def test_t_quantiles():
    table = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228]
    assert t_quantile(0.95, np.arange(1, 11)) == pytest.approx(table, abs=6e-4)
    assert t_quantile(0.95, 0) == math.inf and float(t_quantile(0.95, 10**6)) == pytest.approx(Z, abs=1e-5)
    assert float(t_quantile(0.90, 4)) == pytest.approx(2.131847, abs=1e-6)


def test_batch_functions_agree_with_the_one_set_ones():
    rng = np.random.default_rng(1)
    y = (rng.random((3, 24)) < 0.6).astype(float)
    b = np.where(rng.random((3, 24)) < 0.2, 1 - y, y)
    mask = np.ones_like(y)
    inst = np.tile(np.array([i // 4 for i in range(24)]), (3, 1))
    types = np.tile(np.array([i % 4 for i in range(24)]), (3, 1))
    _, lo, hi = accuracy_batch(y, mask, inst, types)
    d, plo, phi, p = paired_batch(y, b, mask, inst, types)
    for r in range(3):
        assert accuracy_interval(y[r].tolist(), inst[r].tolist(), types=types[r].tolist()) == \
            pytest.approx((lo[r], hi[r]))
        assert paired_interval(y[r].tolist(), b[r].tolist(), inst[r].tolist()) == \
            pytest.approx((d[r], plo[r], phi[r], p[r]))
    # a masked-out (padding) question changes nothing
    padded = np.concatenate([y, np.ones((3, 1))], axis=1)
    pad_mask = np.concatenate([mask, np.zeros((3, 1))], axis=1)
    pad_inst = np.concatenate([inst, np.full((3, 1), 99)], axis=1)
    _, lo2, hi2 = accuracy_batch(padded, pad_mask, pad_inst)
    _, lo1, hi1 = accuracy_batch(y, mask, inst)
    assert np.allclose(lo1, lo2) and np.allclose(hi1, hi2)


# ---------------------------------------------------------------- the headline the intervals are about


def _case(instance: str, case_id: str, flagged: bool, tokens: int = 1000):
    return {"case_id": case_id, "instance_id": instance, "questions": [
        {"qid": f"{case_id}:a", "type": "a", "in_task_text": False, "nearest_back": {"messages": 3, "tokens": tokens}},
        {"qid": f"{case_id}:b", "type": "b", "in_task_text": flagged, "nearest_back": {"messages": 9, "tokens": 40000}},
    ]}


def test_headline_leaves_task_text_questions_out_and_reports_them_apart():
    cases = [_case("i1", "i1@0", True), _case("i1", "i1@1", False), _case("i2", "i2@2", False, 5000)]
    scores = [{"qid": q["qid"], "verdict": "correct" if q["qid"].endswith(":b") else "wrong"}
              for c in cases for q in c["questions"]]
    metrics = compute_metrics(cases, [], [], scores, full_correct={"i1@1:b", "i2@2:a"})
    assert metrics["n_questions"] == 6 and metrics["n_headline_questions"] == 5
    assert metrics["accuracy"] == 0.4 and metrics["accuracy_all_questions"] == 0.5
    assert metrics["in_task_text"]["n"] == 1 and metrics["in_task_text"]["accuracy"] == 1.0
    assert metrics["n_clusters"] == 2 and len(metrics["accuracy_ci"]) == 2
    assert metrics["interval_method"] == "instances"
    assert metrics["by_type"]["b"]["n_in_task_text"] == 1 and metrics["by_type"]["b"]["n"] == 2
    assert metrics["accuracy_relative_to_full"] == 0.5 and metrics["accuracy_relative_to_full_ci"]
    assert set(metrics["by_distance"]) == {"<2k", "2-8k", ">32k"}
    assert metrics["by_distance"][">32k"]["accuracy"] == 1.0


def test_the_reference_arm_is_exactly_one_relative_to_itself():
    cases = [_case(f"i{k}", f"i{k}@{k}", False) for k in range(4)]
    scores = [{"qid": q["qid"], "verdict": "correct" if k % 2 else "wrong"}
              for k, c in enumerate(cases) for q in c["questions"]]
    own = {s["qid"] for s in scores if s["verdict"] == "correct"}
    metrics = compute_metrics(cases, [], [], scores, full_correct=own, reference=True)
    assert metrics["accuracy_relative_to_full"] == 1.0 and tuple(metrics["accuracy_relative_to_full_ci"]) == (1.0, 1.0)
    two_way = compute_metrics(cases, [], [], scores, full_correct=own, generalize_types=True)
    assert two_way["interval_method"] == "instances+types"


def test_distance_buckets():
    assert [distance_bucket({"nearest_back": {"tokens": t}}) for t in (0, 1999, 2000, 8000, 32000)] == \
        ["<2k", "<2k", "2-8k", "8-32k", ">32k"]
    assert distance_bucket({}) is None
