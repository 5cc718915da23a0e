"""Comparisons at equal budget (issue 30): one ``arm.budget`` for every shrinking arm, target and
realized tokens in every view, the frontier experiment, and a report that leads with the answer."""

from __future__ import annotations

import json
import random
import statistics
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest

from bench.config.arms import build_policy
from bench.config.checks import compose
from bench.core.errors import ConfigError
from bench.data.selection import load_cases
from bench.policies import view_problems
from bench.policies.budget import OVER_TOLERANCE, Budget
from bench.runner import run
from bench.scoring.view_figures import budget_metrics
from bench.stats import paired_interval
from bench.study.assemble import write_report
from bench.study.frontier import answer_sentences, frontier_frame, paired_comparison
from bench.study.plots import plot_frontier, plot_tradeoff
from bench.study.text_tables import frontier_table
from bench.text.tokens import TokenCounter

from paths import DEV_PARQUET

COUNTER = TokenCounter()
SHRINKING = ("nlatest", "mask", "trim", "context_edit", "compact", "lc_summary", "condenser")
DATASETS = {"dev": ["dataset=local", f"dataset.path={DEV_PARQUET}"], "ops": ["dataset=ops"]}


_LOADED: dict[str, list] = {}


def _cases(name: str) -> list:
    if name not in _LOADED:
        _LOADED[name] = load_cases(compose(DATASETS[name]).dataset, COUNTER).cases
    return _LOADED[name]


@pytest.fixture(scope="module")
def cases() -> dict[str, list]:
    return {"ops": _cases("ops")}


def _arm(arm: str, *overrides: str):
    extra = ["arm.n=null"] if arm == "nlatest" else []
    return build_policy(compose([f"arm={arm}", *extra, *overrides]), COUNTER)


@pytest.mark.parametrize("value, expected", [(0.25, ("share", 0.25)), (1, ("share", 1.0)), (4000, ("tokens", 4000)),
                                             (2.0, ("tokens", 2))])
def test_a_budget_is_a_share_or_a_token_count(value, expected):
    budget = Budget.parse(value)
    assert (budget.kind, budget.value) == expected
    assert Budget.parse(None) is None
    assert Budget.parse(0.1).target(12_345) == 1234 and Budget.parse(3000).target(12_345) == 3000


@pytest.mark.parametrize("value, message", [(0, "must be > 0"), (-0.5, "must be > 0"), (1.5, "an integer"),
                                            (True, "expected a share"), ("half", "expected a share")])
def test_a_bad_budget_fails_in_one_line(value, message):
    with pytest.raises(ConfigError, match=message):
        Budget.parse(value)
    with pytest.raises(ConfigError, match=r"^arm\.budget"):  # the config's value: one line naming the key
        _arm("trim", f"arm.budget={json.dumps(value) if isinstance(value, str) else value}")


@pytest.mark.parametrize("name", [pytest.param("dev", marks=pytest.mark.slow), "ops"])  # dev: 15 long histories
@pytest.mark.parametrize("arm", SHRINKING)
def test_every_shrinking_arm_lands_within_its_budget_on_the_median_case(name, arm):
    """The issue's measure: on the real coding rows and the operations sample, at 10%, 25% and 50%
    of each case's history tokens, the median view is within 20% of its target; every view is
    valid, records its target and realized tokens, and is flagged exactly when it is over by more."""
    rows = _cases(name)
    for share in (0.1, 0.25, 0.5):
        policy = _arm(arm, f"arm.budget={share}")
        views = [policy(case) for case in rows]
        ratios = []
        for case, view in zip(rows, views, strict=True):
            record = view.to_dict()["budget"]
            assert record["target_tokens"] == int(share * view.full_tokens)
            assert record["realized_tokens"] == view.kept_tokens
            assert record["over"] == (view.kept_tokens > (1 + OVER_TOLERANCE) * record["target_tokens"])
            assert not view_problems(view.messages), (arm, case.case_id)
            ratios.append(record["realized_over_target"])
        median = statistics.median(ratios)
        assert 1 - OVER_TOLERANCE <= median <= 1 + OVER_TOLERANCE, (arm, name, share, median)


@pytest.mark.parametrize("arm", SHRINKING)
def test_a_token_budget_is_the_same_target_for_every_case(cases, arm):
    policy = _arm(arm, "arm.budget=1500")
    for view in (policy(case) for case in cases["ops"]):
        assert view.budget["target_tokens"] == 1500 and view.budget["kind"] == "tokens"


@pytest.mark.parametrize("arm, overrides", [("mask", []), ("trim", []), ("lc_summary", []), ("condenser", []),
                                            ("context_edit", []), ("nlatest", ["arm.n=20"])])
def test_without_a_budget_views_record_none_and_keep_their_settings(cases, arm, overrides):
    """Budget unset = today's behaviour (tests/bench/test_pins.py pins nlatest and compact byte for byte)."""
    policy = build_policy(compose([f"arm={arm}", *overrides]), COUNTER)
    for case in cases["ops"][:4]:
        assert "budget" not in policy(case).to_dict()


def test_budget_metrics_summarize_target_realized_and_views_over():
    views = [{"case_id": "a", "kept_tokens": 90, "full_tokens": 1000, "budget": {
                 "target_tokens": 100, "realized_over_target": 0.9, "over": False, "value": 0.1, "kind": "share"}},
             {"case_id": "b", "kept_tokens": 300, "full_tokens": 2000, "budget": {
                 "target_tokens": 200, "realized_over_target": 1.5, "over": True, "value": 0.1, "kind": "share"}}]
    figures = budget_metrics(views)
    assert figures["target_share"] == 0.1 and figures["realized_share"] == pytest.approx(0.12)
    assert figures["median_realized_over_target"] == pytest.approx(1.2)
    assert figures["n_over"] == 1 and figures["over_cases"] == ["b"]
    assert budget_metrics([{"case_id": "a", "kept_tokens": 1, "full_tokens": 2}]) is None


def test_the_p_value_agrees_with_the_interval():
    """p < 0.05 exactly when the 95% interval excludes 0; the difference is antisymmetric."""
    rng = random.Random(7)
    for _ in range(12):
        n = rng.randint(20, 120)
        instances = [f"i{i // rng.randint(1, 5)}" for i in range(n)]
        a = [rng.random() < rng.uniform(0.2, 0.9) for _ in range(n)]
        b = [x if rng.random() < 0.6 else rng.random() < 0.5 for x in a]
        diff, low, high, p = paired_comparison(a, b, instances)
        assert low <= diff <= high and 0 <= p <= 1
        assert (p < 0.05) == (low > 0 or high < 0) or abs(p - 0.05) < 1e-3
        assert paired_comparison(b, a, instances)[0] == -diff
    assert paired_comparison([True, False] * 10, [True, False] * 10, [f"i{i}" for i in range(20)])[3] == 1.0



def _budgeted_study(method: str) -> tuple[list, pd.DataFrame]:
    """Two arms at one budget, 8 instances of 3 questions each, the first arm better (what a
    frontier report reads from configs.csv and the jobs), every interval by ``method``."""
    questions = [{"qid": f"q{i}", "type": "t" + str(i % 3)} for i in range(24)]
    cases = [{"case_id": f"c{k}", "instance_id": f"i{k}", "questions": questions[3 * k:3 * k + 3]} for k in range(8)]
    right = {"nlatest": {f"q{i}" for i in range(24) if i % 3 != 2}, "trim": {f"q{i}" for i in range(24) if i % 3 == 0}}
    two_way = method == "instances+types"
    jobs = [SimpleNamespace(complete=True, config_id=arm, seed=0, cases=cases, full_correct=None,
                            generalize_types=two_way,
                            scores=[{"qid": q["qid"], "verdict": "correct" if q["qid"] in right[arm] else "wrong"}
                                    for q in questions]) for arm in right]
    configs = pd.DataFrame([{"case_set": "s", "arm": arm, "budget": 0.25, "config": f"arm={arm}", "config_id": arm,
                             "arm_order": order, "role": None, "budget_realized_share.mean": 0.24,
                             "accuracy_relative_to_full.mean": kept, "accuracy_relative_to_full.ci_low": kept - 0.2,
                             "accuracy_relative_to_full.ci_high": min(kept + 0.1, 1.0), "interval_method": method,
                             "match": None} for order, (arm, kept) in enumerate((("nlatest", 2 / 3), ("trim", 1 / 3)))])
    return jobs, configs


@pytest.mark.parametrize("method", ["instances", "instances+types"])
def test_the_frontier_labels_the_two_way_method_wherever_it_is_used(method):
    """stats.generalize_types=true (issue 29): the answer sentence, the frontier table, its paired
    comparison and the plots' titles say the intervals are two-way (‡), and only then."""
    jobs, configs = _budgeted_study(method)
    two_way = method == "instances+types"
    frontier = frontier_frame(configs)
    assert list(frontier["interval_method"]) == [method, method]
    sentence = answer_sentences(jobs, configs)["s"][0]
    header, rows = frontier_table(frontier)
    assert rows[0][header.index("95% CI")].endswith(" ‡") is two_way
    assert sentence.count("‡") == (2 if two_way else 0)  # the kept share's interval and the paired one
    a = [q in {f"q{i}" for i in range(24) if i % 3 != 2} for q in (f"q{i}" for i in range(24))]
    b = [i % 3 == 0 for i in range(24)]
    instances = [f"i{i // 3}" for i in range(24)]
    expected = paired_interval(b, a, instances, generalize_types=two_way)  # nlatest minus trim, the method asked for
    assert f"95% CI {100 * expected[1]:+.1f} to {100 * expected[2]:+.1f} pp" in sentence
    assert paired_comparison(a, b, instances, generalize_types=True) != paired_comparison(a, b, instances)


@pytest.mark.slow  # matplotlib: seconds on a loaded machine
@pytest.mark.parametrize("method", ["instances", "instances+types"])
def test_the_plots_titles_say_what_their_intervals_are_over(method):
    _, configs = _budgeted_study(method)
    two_way = method == "instances+types"
    scope = "over instances and question types ‡ (stats.generalize_types=true)" if two_way else "over instances;"
    tradeoff = plot_tradeoff(configs.assign(**{"tokens_kept_ratio.mean": 0.24}))
    frontier = plot_frontier(frontier_frame(configs))
    assert tradeoff is not None and frontier is not None
    assert scope in tradeoff and scope.rstrip(";") in frontier and ("‡" in tradeoff + frontier) is two_way


# ---- the frontier experiment and its report
FRONTIER_JOBS = ("full", "none", "nlatest_10pct", "mask_10pct", "compact_10pct", "nlatest_50pct", "mask_50pct",
                 "compact_50pct")


@pytest.fixture(scope="module")
def frontier_report(tmp_path_factory) -> dict:
    """A frontier study on the shipped sample: the jobs +experiment=frontier runs, a subset of its arms."""
    root = tmp_path_factory.mktemp("frontier")
    for job in FRONTIER_JOBS:
        run(compose([f"+experiment/arm={job}", f"output_dir={root / 'sweep' / job}", "cache.enabled=false"]))
    return write_report([root / "sweep"], root / "report")


def test_experiment_frontier_sweeps_every_shrinking_arm_at_three_budgets_plus_full_and_none():
    cfg = compose(["+experiment=frontier"], return_hydra_config=True)
    jobs = [j.strip() for j in str(cfg.hydra.sweeper.params["+experiment/arm"]).split(",")]
    assert jobs[:2] == ["full", "none"] and len(jobs) == 2 + len(SHRINKING) * 3
    for job in jobs[2:]:
        arm, pct = job.rsplit("_", 1)
        composed = compose([f"+experiment/arm={job}"])
        assert composed.arm.name == arm and composed.arm.budget == int(pct.removesuffix("pct")) / 100
        if arm == "compact":
            assert composed.mechanism.name == "shipped"  # compact with its default mechanism
        assert callable(build_policy(composed, COUNTER))


def test_the_report_leads_with_the_answer_per_budget(frontier_report):
    markdown = frontier_report["markdown"]
    assert markdown.startswith("# The answer per budget")
    first_table = markdown.index("\n|")
    sentences = [line for line in markdown[:first_table].splitlines() if line.startswith("- **Budget")]
    assert len(sentences) == 2  # one per budget
    for sentence in sentences:
        assert "keeps the most evidence available (offline reader)" in sentence  # offline: what it measures
        assert "95% CI" in sentence and ("p = " in sentence or "tied with" in sentence)
        # the stand-in summary arm is named apart, never ranked
        assert "Not ranked: compact" in sentence and "**compact**" not in sentence
    assert markdown.index("![The quality-size frontier](frontier.svg)") < first_table
    assert (frontier_report["output"] / "frontier.svg").read_text().startswith("<svg")


def test_the_frontier_data_marks_stand_in_summaries_as_lower_bounds(frontier_report):
    frontier = pd.read_csv(frontier_report["output"] / "frontier.csv")
    assert {"arm", "budget", "target_share", "realized_share", "answers_kept", "answers_kept_low",
            "answers_kept_high", "lower_bound"} <= set(frontier.columns)
    budgeted = frontier[frontier["budget"].notna()]
    assert set(budgeted["budget"]) == {0.1, 0.5}
    assert set(budgeted.loc[budgeted["lower_bound"], "arm"]) == {"compact"}
    assert (budgeted["target_share"].round(2) == budgeted["budget"]).all()
    assert ((budgeted["realized_share"] - budgeted["target_share"]).abs() <= 0.2 * budgeted["target_share"] + 0.05).all()
    metrics = json.loads((frontier_report["output"].parent / "sweep" / "compact_10pct" / "metrics.json").read_text())
    assert metrics["lower_bound"]["summarizer"] == "extractive" and metrics["budget"]["value"] == 0.1
    nlatest = json.loads((frontier_report["output"].parent / "sweep" / "nlatest_10pct" / "metrics.json").read_text())
    assert "lower_bound" not in nlatest and nlatest["budget"]["n_over"] == 0


def test_the_html_report_shows_the_answer_and_the_plot_before_any_table(frontier_report):
    page = (frontier_report["output"] / "report.html").read_text()
    first_table = page.index("<table")
    assert page.index('id="answer"') < page.index('id="frontier"') < page.index("<svg") < first_table
    # hollow markers for the stand-in summary arm, one style per arm
    assert "compact (lower bound)" in page
    # offline, report.html names the measure wherever report.md does
    assert page.count("evidence available (offline reader)") >= frontier_report["markdown"].count(
        "evidence available (offline reader)") - 1  # the markdown's plot image line has no text
    assert "Paired comparisons of evidence available (offline reader)" in page


def test_the_html_report_without_budgets_has_its_plots_before_its_tables(tmp_path):
    for arm in ("full", "nlatest"):
        run(compose([f"arm={arm}", *(["arm.n=10"] if arm == "nlatest" else []), f"output_dir={tmp_path / arm}",
                     "cache.enabled=false"]))
    result = write_report([tmp_path], tmp_path / "report")
    page = (Path(result["output"]) / "report.html").read_text()
    assert 'id="answer"' not in page and page.index("<svg") < page.index("<table")
    assert "Measures: evidence available (offline reader)." in page and "Measures: evidence available" in result[
        "markdown"]


def test_configs_of_one_arm_at_two_budgets_have_labels_of_their_own(frontier_report):
    """Jobs run without overrides (``run(cfg)`` from code) are labelled by the config keys that differ: a
    key of the arm (``arm.budget``) tells apart the configs of one arm, and only theirs (full has no budget)."""
    configs = pd.read_csv(frontier_report["output"] / "configs.csv")
    assert configs["config"].is_unique, list(configs["config"])
    labels = dict(zip(configs["config"], configs["arm"], strict=True))
    assert {"arm=mask,arm.budget=0.1", "arm=mask,arm.budget=0.5", "arm=full", "arm=none"} <= set(labels), labels
