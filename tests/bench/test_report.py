"""The report's numbers against the job files they came from.

Jobs run offline on the shipped sample (in-process, into tmp dirs); one seed's scores are
edited to play a stochastic model (so mean/min/max differ), one job is cut short
(incomplete: flagged, never averaged).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest

from bench.report import main as report_main
from bench.store.records import read_jsonl
from bench.study import find_job_dirs, load_jobs
from bench.study.assemble import write_report

from jobs import flip_first_correct, run_job
from paths import CONF_DIR

CONF = str(CONF_DIR)


def make_sweep(root: Path) -> dict[str, Path]:
    """A sweep-like directory: full (seed 0), nlatest n=10 (seeds 0, 1, 2; seed 1 edited, seed 2 cut short)."""
    jobs = {
        "full": run_job(root / "arm=full,seed=0", "arm=full", "seed=0"),
        "n10s0": run_job(root / "arm=nlatest,arm.n=10,seed=0", "arm=nlatest", "arm.n=10", "seed=0"),
        "n10s1": run_job(root / "arm=nlatest,arm.n=10,seed=1", "arm=nlatest", "arm.n=10", "seed=1"),
        "n10s2": run_job(root / "arm=nlatest,arm.n=10,seed=2", "arm=nlatest", "arm.n=10", "seed=2"),
    }
    flip_first_correct(jobs["n10s1"])
    cut = jobs["n10s2"]  # killed mid-job: last score lost, run.json still incomplete, no metrics.json
    scores = (cut / "scores.jsonl").read_text().splitlines(keepends=True)
    (cut / "scores.jsonl").write_text("".join(scores[:-1]))
    run_json = json.loads((cut / "run.json").read_text())
    run_json["status"] = "incomplete"
    (cut / "run.json").write_text(json.dumps(run_json))
    (cut / "metrics.json").unlink()
    return jobs


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    root = tmp_path_factory.mktemp("sweep")
    jobs = make_sweep(root)
    result = write_report([root])
    return root, jobs, result


def expected(job: Path) -> dict:
    """The job's numbers, computed here from its files, independently of bench.scoring.metrics (the
    headline: questions answerable from the task text left out)."""
    cases = read_jsonl(job / "cases.jsonl")
    questions = {q["qid"]: q for c in cases for q in c["questions"] if not q["in_task_text"]}
    verdict = {s["qid"]: s["verdict"] for s in read_jsonl(job / "scores.jsonl")}
    views = read_jsonl(job / "views.jsonl")
    n = len(questions)
    out = {
        "n_questions": sum(len(c["questions"]) for c in cases),
        "accuracy": round(sum(verdict.get(q) == "correct" for q in questions) / n, 4),
        "confidently_wrong_rate": round(sum(verdict.get(q) == "wrong" for q in questions) / n, 4),
        "abstain_rate": round(sum(verdict.get(q) == "abstained" for q in questions) / n, 4),
        "mean_kept_tokens": round(sum(v["kept_tokens"] for v in views) / len(views), 1),
    }
    for qtype in {q["type"] for q in questions.values()}:
        of_type = [q for q, question in questions.items() if question["type"] == qtype]
        out[f"acc.{qtype}"] = round(sum(verdict.get(q) == "correct" for q in of_type) / len(of_type), 4)
    flags = {qid: f for v in views for qid, f in v["evidence"].items()}
    out["evidence_visible_rate"] = round(sum(flags[q]["visible"] for q in questions) / n, 4)
    reference = job / "reference_scores.jsonl"
    base = ({s["qid"] for s in read_jsonl(reference) if s["verdict"] == "correct"} & set(questions)
            if reference.exists() else {q for q in questions if verdict.get(q) == "correct"})
    out["accuracy_relative_to_full"] = round(sum(verdict.get(q) == "correct" for q in base) / len(base), 4)
    return out


def test_jobs_csv_matches_each_jobs_files(sweep):
    root, jobs, result = sweep
    frame = pd.read_csv(result["output"] / "jobs.csv")
    assert len(frame) == 4 and {"overrides", "accuracy", "config", "seed", "status"} <= set(frame.columns)
    for name, path in jobs.items():
        row = frame[frame["path"] == str(path.resolve())].iloc[0]
        for metric, value in expected(path).items():
            assert row[metric] == pytest.approx(value, abs=1e-4), (name, metric)
        stored = json.loads((path / "metrics.json").read_text()) if (path / "metrics.json").exists() else None
        if stored and name != "n10s1":  # untouched complete jobs agree with their metrics.json
            assert row["accuracy"] == pytest.approx(stored["accuracy"])
            assert row["tokens_kept_ratio"] == pytest.approx(stored["tokens_kept_ratio"])
    assert "seed=0" in frame.loc[frame["arm"] == "full", "overrides"].iloc[0]


def test_configs_average_complete_seeds_only(sweep):
    root, jobs, result = sweep
    configs = pd.read_csv(result["output"] / "configs.csv")
    assert list(configs["arm"]) == ["full", "nlatest"]
    n10 = configs[configs["arm"] == "nlatest"].iloc[0]
    assert (n10["n_jobs"], n10["n_complete"], str(n10["seeds"])) == (3, 2, "0,1")
    assert jobs["n10s2"].name in n10["incomplete"]
    values = [expected(jobs["n10s0"])["accuracy"], expected(jobs["n10s1"])["accuracy"]]
    assert values[0] != values[1]  # the edited seed differs
    assert n10["accuracy.mean"] == pytest.approx(sum(values) / 2, abs=1e-4)
    assert n10["accuracy.min"] == pytest.approx(min(values))
    assert n10["accuracy.max"] == pytest.approx(max(values))
    assert n10["n"] == 10
    full = configs[configs["arm"] == "full"].iloc[0]
    assert full["accuracy.mean"] == pytest.approx(expected(jobs["full"])["accuracy"])
    types = pd.read_csv(result["output"] / "types.csv")
    row = types[(types["arm"] == "nlatest") & (types["type"] == "files_changed")].iloc[0]
    per_type = [expected(jobs[k])["acc.files_changed"] for k in ("n10s0", "n10s1")]
    assert row["acc.mean"] == pytest.approx(sum(per_type) / 2, abs=1e-4)


def test_incomplete_job_is_flagged_everywhere(sweep):
    root, jobs, result = sweep
    frame = pd.read_csv(result["output"] / "jobs.csv")
    cut = frame[frame["path"] == str(jobs["n10s2"].resolve())].iloc[0]
    assert cut["status"] == "incomplete" and "unscored" in cut["problems"]
    assert cut["n_scored"] == cut["n_questions"] - 1
    markdown = (result["output"] / "report.md").read_text()
    assert "1 incomplete job(s), not averaged" in markdown and str(jobs["n10s2"]) in markdown
    assert "incomplete job(s)</b>" in (result["output"] / "report.html").read_text()


def test_questions_csv_and_outcome_grid(sweep):
    root, jobs, result = sweep
    questions = pd.read_csv(result["output"] / "questions.csv")
    for path in jobs.values():
        n = sum(len(c["questions"]) for c in read_jsonl(path / "cases.jsonl"))
        mine = questions[questions["path"] == str(path.resolve())]
        assert len(mine) == n
        verdicts = {s["qid"]: s["verdict"] for s in read_jsonl(path / "scores.jsonl")}
        assert dict(zip(mine["qid"], mine["verdict"], strict=True)) == {q: verdicts.get(q, "missing") for q in mine["qid"]}
        asked = {q["qid"]: q for c in read_jsonl(path / "cases.jsonl") for q in c["questions"]}
        answers = {a["qid"]: a["answer"] for a in read_jsonl(path / "answers.jsonl")}
        for row in mine.itertuples():  # what was asked, the reference and the answer, beside the verdict
            assert row.question == asked[row.qid]["question"]
            ref = asked[row.qid]["reference"]
            assert row.reference == (ref if isinstance(ref, str) else json.dumps(ref, ensure_ascii=False, sort_keys=True))
            if row.qid in answers and isinstance(answers[row.qid], str):
                assert row.answer == answers[row.qid]
    assert (questions["verdict"] == "missing").sum() == 1  # the cut-short job's lost score
    page = (result["output"] / "report.html").read_text()
    assert 'class="outcomes"' in page and "edited by the test" in page  # reasons in cell titles
    assert "reference: " in page and "| answer: " in page  # the question and reference per row, answers per cell


def test_html_is_self_contained_with_plots(sweep):
    root, jobs, result = sweep
    page = (result["output"] / "report.html").read_text()
    assert page.count("<svg") >= 2  # trade-off and per-type plots (one N: no N curve)
    assert "Accuracy relative to full vs tokens kept" in page and "Accuracy per question type" in page
    assert not re.search(r"<script[^>]+src=|<link[^>]+href=|<img[^>]+src=[\"']http", page)


def test_n_curve_needs_two_n(tmp_path):
    root = tmp_path / "sweep"
    run_job(root / "a", "arm=nlatest", "arm.n=4", "dataset.limit=2")
    run_job(root / "b", "arm=nlatest", "arm.n=30", "dataset.limit=2")
    result = write_report([root])
    page = (result["output"] / "report.html").read_text()
    assert "The N curve" in page and page.count("<svg") == 3
    assert list(result["configs"]["short"]) == ["n=4", "n=30"]
    assert list(result["configs"]["config"]) == ["arm.n=4", "arm.n=30"]  # shared overrides named once:
    assert "Overrides shared by every job: `arm=nlatest dataset.limit=2`" in result["markdown"]


def test_cli_on_job_dirs_and_errors(sweep, tmp_path, capsys):
    root, jobs, _ = sweep
    out = tmp_path / "rep"
    assert report_main([str(jobs["full"]), str(jobs["n10s0"]), "--output", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "| config |" in printed and (out / "jobs.csv").exists()
    assert len(pd.read_csv(out / "jobs.csv")) == 2
    assert report_main([str(tmp_path / "nothing")]) == 2
    assert find_job_dirs([root]) == find_job_dirs([root, jobs["full"]])  # no duplicates


def test_labels_from_overrides_without_seed(sweep):
    root, jobs, _ = sweep
    labels = {j.path.name: j.label for j in load_jobs([root])}
    assert labels["arm=nlatest,arm.n=10,seed=1"] == "arm=nlatest,arm.n=10"
    assert labels["arm=full,seed=0"] == "arm=full"


def test_labels_without_overrides_use_the_differing_keys(tmp_path):
    a = run_job(tmp_path / "a", "arm=nlatest", "arm.n=4", "dataset.limit=2")
    b = run_job(tmp_path / "b", "arm=nlatest", "arm.n=8", "dataset.limit=2")
    for job in (a, b):
        shutil.rmtree(job / ".hydra")
    labels = sorted(j.label for j in load_jobs([a, b]))
    assert labels == ["arm=nlatest,arm.n=4", "arm=nlatest,arm.n=8"]


def test_intervals_pairs_and_case_sets_apart(tmp_path):
    """Configs carry pooled 95% intervals; pairs compare configs of one case set only; a report over
    coding and operations jobs keeps the two studies apart."""
    jobs = [run_job(tmp_path / name, *overrides) for name, overrides in {
        "code_n10": ("arm=nlatest", "arm.n=10", "dataset.limit=4"),
        "code_n40": ("arm=nlatest", "arm.n=40", "dataset.limit=4"),
        "ops_full": ("dataset=ops", "arm=full"),
        "ops_n10": ("dataset=ops", "arm=nlatest", "arm.n=10"),
    }.items()]
    result = write_report(jobs, tmp_path / "report")
    configs, pairs = result["configs"], result["pairs"]
    assert configs["case_set"].nunique() == 2 and sorted(configs["source"]) == ["ops", "ops", "sample", "sample"]
    assert configs.groupby("case_set")["source"].nunique().max() == 1  # each study holds one source
    for _, row in configs.iterrows():
        assert row["accuracy.ci_low"] <= row["accuracy.mean"] <= row["accuracy.ci_high"]
    assert len(pairs) == 2 and set(pairs.groupby("case_set").size()) == {1}  # one pair per study, none across
    for _, pair in pairs.iterrows():
        assert pair["difference_ci_low"] <= pair["difference"] <= pair["difference_ci_high"]
    again = write_report(jobs, tmp_path / "again")
    assert again["configs"]["accuracy.ci_low"].tolist() == configs["accuracy.ci_low"].tolist()  # seeded
    page = (tmp_path / "report" / "report.html").read_text()
    assert page.count("<h2>case set ") == 2 and "Paired comparisons" in page and "95% CI" in page
    assert "By distance" in page and (tmp_path / "report" / "pairs.csv").exists()
    assert "## case set " in result["markdown"]
