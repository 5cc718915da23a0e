"""Uncertainty and the headline: score intervals at the clustered effective n, paired differences, task-text questions apart."""

from __future__ import annotations

import math

import numpy as np
import pytest

from bench.metrics import compute_metrics, distance_bucket
from bench.stats import (
    detectable_difference,
    paired_batch,
    paired_difference,
    proportion_batch,
    proportion_interval,
    ratio_interval,
)

# questions of 6 instances, 4 questions each, templates t0-t3 recurring in every instance
INSTANCES = [f"i{i // 4}" for i in range(24)]
TEMPLATES = [f"t{i % 4}" for i in range(24)]


def test_proportion_interval_brackets_the_point_and_is_deterministic():
    hits = [1, 1, 0, 1, 0, 0, 1, 1, 1, 1, 1, 0, 0, 1, 1, 0, 1, 1, 1, 1, 0, 1, 1, 1]
    first = proportion_interval(hits, INSTANCES, TEMPLATES)
    assert first == proportion_interval(hits, INSTANCES, TEMPLATES)
    point = sum(hits) / len(hits)
    assert first[0] < point < first[1]
    # clustering never narrows the interval below the binomial (Wilson) one of independent questions
    alone = proportion_interval(hits)
    assert first[1] - first[0] >= alone[1] - alone[0] - 1e-9


def test_no_question_no_interval():
    assert proportion_interval([]) is None
    assert ratio_interval([], []) is None
    assert ratio_interval([0, 0], [0, 0], ["a", "b"]) is None  # the full arm got nothing right
    assert paired_difference([], []) == (None, None)
    assert detectable_difference([]) is None


@pytest.mark.parametrize("value", [0, 1])
def test_all_correct_or_all_wrong_gives_a_one_sided_bound_per_instance(value):
    low, high = proportion_interval([value] * 24, INSTANCES, TEMPLATES)
    assert high - low > 0.2  # not zero width: six instances are little evidence
    assert (high == 1.0 and low < 1) if value else (low == 0.0 and high > 0)
    # more instances, the same questions per instance: a tighter bound
    many = proportion_interval([value] * 240, [f"i{i // 4}" for i in range(240)])
    assert (many[1] - many[0]) < (high - low)


def test_single_cluster_still_has_a_wide_interval():
    low, high = proportion_interval([1, 0, 1, 1], ["only"] * 4)
    assert low < 0.3 and high > 0.95  # one instance: one degree of freedom
    low, high = proportion_interval([1] * 8, ["only"] * 8)
    assert high == 1.0 and low < 0.5


def test_clusters_not_questions_set_the_width():
    # one instance with many questions all wrong, many small instances all right: clustered by
    # instance, the interval is much wider than over independent questions
    hits = [0] * 20 + [1] * 10
    instances = ["big"] * 20 + [f"s{i}" for i in range(10)]
    clustered = proportion_interval(hits, instances)
    independent = proportion_interval(hits)
    assert clustered[1] - clustered[0] > independent[1] - independent[0] + 0.15


def test_recurring_templates_widen_the_interval():
    # every instance gets template a right and template b wrong: the spread is between
    # templates, invisible to instance clustering alone
    hits = [1, 0] * 20
    instances = [f"i{i // 2}" for i in range(40)]
    templates = ["a", "b"] * 20
    by_instance = proportion_interval(hits, instances)
    two_way = proportion_interval(hits, instances, templates)
    assert two_way[1] - two_way[0] > by_instance[1] - by_instance[0] + 0.3


def test_relative_to_full_counts_the_full_arms_variance():
    full = [1] * 18 + [0] * 6
    arm = [1] * 12 + [0] * 6 + [1] * 6  # right where full was wrong: not in the numerator
    low, high = ratio_interval([a and f for a, f in zip(arm, full, strict=True)], full, INSTANCES, TEMPLATES)
    assert low < 12 / 18 < high
    all_kept = ratio_interval(full, full, INSTANCES, TEMPLATES)  # 100% relative to full
    assert all_kept[1] == 1.0 and all_kept[0] < 1.0


def test_paired_difference_without_discordance_is_not_zero_width():
    same = [1, 0, 1, 1] * 6
    diff, (low, high) = paired_difference(same, same, INSTANCES, TEMPLATES)
    assert diff == 0.0 and low < 0 < high and high - low > 0.1


def test_paired_difference_with_rare_discordance_covers_zero_and_the_point():
    a = [1, 0, 1, 1] * 6
    b = list(a)
    b[1] = 1  # one question right in B only
    diff, (low, high) = paired_difference(a, b, INSTANCES, TEMPLATES)
    assert diff == round(1 / 24, 4) and low < 0 < diff < high


def test_paired_difference_detects_a_large_consistent_gain():
    a = [0, 0, 1, 0] * 20
    b = [1, 1, 1, 0] * 20
    instances = [f"i{i // 4}" for i in range(80)]
    diff, (low, high) = paired_difference(a, b, instances)
    assert diff == 0.5 and 0.3 < low < diff < high < 0.7


def test_paired_difference_all_correct_in_both():
    diff, (low, high) = paired_difference([1] * 24, [1] * 24, INSTANCES)
    assert diff == 0.0 and low < 0 < high


def test_detectable_difference_shrinks_with_more_instances_and_grows_with_clustering():
    rng = np.random.default_rng(3)
    a = (rng.random(400) < 0.7).tolist()
    b = (rng.random(400) < 0.7).tolist()
    small = detectable_difference(a[:100], b[:100], [i // 4 for i in range(100)])
    large = detectable_difference(a, b, [i // 4 for i in range(400)])
    assert large < small
    # unpaired (one job): about (1.96 + 0.84) x sqrt(2 p (1 - p) / n) for independent questions
    p = sum(a) / 400
    expected = (1.96 + 0.8416) * math.sqrt(2 * p * (1 - p) / 400)
    assert detectable_difference(a) == pytest.approx(expected, rel=0.02)
    # the same hits, each instance's questions all alike: far fewer effective questions
    alike = [bool(x) for x in np.repeat(rng.random(50) < 0.7, 8)]
    instances = [i // 8 for i in range(400)]
    assert detectable_difference(alike, None, instances) > 2 * detectable_difference(alike)
    # all correct: still a finite, positive figure
    assert 0 < detectable_difference([True] * 40, None, [i // 4 for i in range(40)]) < 1


def test_batch_functions_agree_with_the_one_set_ones():
    rng = np.random.default_rng(1)
    y = (rng.random((3, 24)) < 0.6).astype(float)
    b = np.where(rng.random((3, 24)) < 0.2, 1 - y, y)
    mask = np.ones_like(y)
    inst = np.tile(np.array([i // 4 for i in range(24)]), (3, 1))
    tmpl = np.tile(np.array([i % 4 for i in range(24)]), (3, 1))
    _, lo, hi = proportion_batch(y, mask, inst, tmpl)
    d, plo, phi = paired_batch(y, b, mask, inst, tmpl)
    for r in range(3):
        assert proportion_interval(y[r].tolist(), INSTANCES, TEMPLATES) == (round(lo[r], 4), round(hi[r], 4))
        assert paired_difference(y[r].tolist(), b[r].tolist(), INSTANCES, TEMPLATES) == \
            (round(d[r], 4), (round(plo[r], 4), round(phi[r], 4)))
    # a masked-out (padding) question changes nothing
    padded = np.concatenate([y, np.ones((3, 1))], axis=1)
    pad_mask = np.concatenate([mask, np.zeros((3, 1))], axis=1)
    pad_inst = np.concatenate([inst, np.full((3, 1), 99)], axis=1)
    _, lo2, hi2 = proportion_batch(padded, pad_mask, pad_inst)
    _, lo1, hi1 = proportion_batch(y, mask, inst)
    assert np.allclose(lo1, lo2) and np.allclose(hi1, hi2)


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
    assert metrics["by_type"]["b"]["n_in_task_text"] == 1 and metrics["by_type"]["b"]["n"] == 2
    assert metrics["accuracy_relative_to_full"] == 0.5 and metrics["accuracy_relative_to_full_ci"]
    assert set(metrics["by_distance"]) == {"<2k", "2-8k", ">32k"}
    assert metrics["by_distance"][">32k"]["accuracy"] == 1.0


def test_distance_buckets():
    assert [distance_bucket({"nearest_back": {"tokens": t}}) for t in (0, 1999, 2000, 8000, 32000)] == \
        ["<2k", "<2k", "2-8k", "8-32k", ">32k"]
    assert distance_bucket({}) is None
