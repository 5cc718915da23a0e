"""Uncertainty and the headline: cluster bootstrap intervals, paired differences, task-text questions apart."""

from __future__ import annotations

from bench.metrics import compute_metrics, distance_bucket
from bench.stats import paired_difference, ratio_interval


def test_ratio_interval_is_seeded_and_brackets_the_point_estimate():
    clusters = [(3, 4), (1, 4), (4, 4), (2, 4), (0, 4), (4, 4)]
    first, again = ratio_interval(clusters), ratio_interval(clusters)
    assert first == again  # same records, same interval
    point = sum(c for c, _ in clusters) / sum(n for _, n in clusters)
    assert first[0] <= point <= first[1] and first[0] < first[1]
    assert ratio_interval([(5, 5), (3, 3)]) == (1.0, 1.0)  # all correct: no spread
    assert ratio_interval([]) is None


def test_clusters_not_questions_are_resampled():
    # one instance with many questions all wrong, many small instances all right: a question-level
    # bootstrap would give a narrow interval; clustering by instance makes it wide
    clusters = [(0, 20)] + [(1, 1)] * 10
    low, high = ratio_interval(clusters)
    assert high - low > 0.3


def test_paired_difference_counts_the_same_clusters_for_both_configs():
    same = [(2, 4, 2, 4)] * 5
    assert paired_difference(same) == (0.0, (0.0, 0.0))
    better = [(1, 4, 3, 4), (0, 2, 2, 2), (2, 4, 3, 4)]
    diff, (low, high) = paired_difference(better)
    assert diff > 0 and 0 < low <= diff <= high


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
