"""bench.compare: config keys that differ, metrics side by side with deltas, changed verdicts."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from bench.compare import compare_markdown, config_diff
from bench.compare import main as compare_main
from bench.store.records import read_jsonl

from commands import one_line, tool
from jobs import flip_first_correct, run_job


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    root = tmp_path_factory.mktemp("pair")
    a = run_job(root / "a", "arm=nlatest", "arm.n=10", "dataset.limit=4")
    b = run_job(root / "b", "arm=nlatest", "arm.n=40", "dataset.limit=4")
    return a, b


def _rows(markdown: str, section: str) -> dict[str, list[str]]:
    block = markdown.split(section, 1)[1].split("###", 1)[0]
    rows = {}
    for line in block.splitlines():
        if line.startswith("| ") and not line.startswith(("| key |", "| metric |", "| qid |")):
            cells = [c.strip() for c in line.strip("|").split(" | ")]
            rows[cells[0].strip("`")] = cells[1:]
    return rows


def test_config_diff_lists_only_differing_keys():
    a = {"arm": {"name": "nlatest", "n": 10}, "seed": 0, "model": {"x": 1}}
    b = {"arm": {"name": "nlatest", "n": 40}, "seed": 1, "extra": True, "model": {"x": 1}}
    assert config_diff(a, b) == [("arm.n", 10, 40), ("extra", "(absent)", True), ("seed", 0, 1)]


def test_markdown_has_config_diff_metrics_and_changed_questions(pair):
    a, b = pair
    text = compare_markdown(a, b)
    config = _rows(text, "### Config")
    assert config["arm.n"] == ["`10`", "`40`"]
    assert "output_dir" in config and "seed" not in config  # same seed; the output dirs differ
    metrics = _rows(text, "### Metrics")
    ma, mb = (json.loads((p / "metrics.json").read_text()) for p in (a, b))
    assert metrics["accuracy"][:2] == [f"{100 * ma['accuracy']:.1f}%", f"{100 * mb['accuracy']:.1f}%"]
    assert metrics["accuracy"][2] == f"{100 * (mb['accuracy'] - ma['accuracy']):+.1f} pp"
    assert metrics["n_questions"][:2] == [str(ma["n_questions"]), str(mb["n_questions"])]
    assert float(metrics["mean_kept_tokens"][1].replace(",", "")) == pytest.approx(mb["mean_kept_tokens"])
    va = {s["qid"]: s["verdict"] for s in read_jsonl(a / "scores.jsonl")}
    vb = {s["qid"]: s["verdict"] for s in read_jsonl(b / "scores.jsonl")}
    changed = sum(va[q] != vb[q] for q in va)
    assert f"### Questions whose verdict changed: {changed}" in text
    assert changed and len(_rows(text, "### Questions whose verdict changed")) == changed


def test_same_config_reports_no_difference_but_changed_verdicts(tmp_path):
    a = run_job(tmp_path / "same_a", "arm=full", "dataset.limit=2")
    b = run_job(tmp_path / "same_b", "arm=full", "dataset.limit=2")
    qid = flip_first_correct(b)
    text = compare_markdown(a, b)
    assert list(_rows(text, "### Config")) == ["output_dir"]
    assert f"`{qid}` | correct | wrong" in text


def test_cli(pair, tmp_path, capsys):
    a, b = pair
    out = tmp_path / "diff.md"
    assert compare_main([str(a), str(b), "--output", str(out)]) == 0
    assert out.read_text() == capsys.readouterr().out.rstrip("\n") + "\n"
    assert compare_main([str(a), str(tmp_path)]) == 2


def test_paired_comparison_on_the_same_case_set(pair):
    a, b = pair
    text = compare_markdown(a, b)
    block = text.split("### Paired comparison (same questions)", 1)[1].split("###", 1)[0]
    cells = [c.strip() for c in block.strip().splitlines()[-1].strip("|").split(" | ")]
    difference, interval, detectable, a_only, b_only, n_questions, n_instances = cells
    va = {s["qid"]: s["verdict"] for s in read_jsonl(a / "scores.jsonl")}
    vb = {s["qid"]: s["verdict"] for s in read_jsonl(b / "scores.jsonl")}
    headline = {q["qid"] for c in read_jsonl(a / "cases.jsonl") for q in c["questions"] if not q.get("in_task_text")}
    assert int(a_only) == sum(va[q] == "correct" and vb[q] != "correct" for q in headline)
    assert int(b_only) == sum(vb[q] == "correct" and va[q] != "correct" for q in headline)
    assert int(n_questions) == len(headline) and int(n_instances) >= 1
    bounds, p_value = interval.split(" pp (p ")
    low, high = (float(x) for x in bounds.split(" to "))
    assert low < high and low <= float(difference.replace(" pp", "")) <= high  # never zero width
    assert 0 < float(p_value.strip("=<) ")) <= 1  # the sign-flip test's p-value beside it
    assert (low > 0 or high < 0) == (float(p_value.strip("=<) ")) <= 0.05)
    assert detectable.startswith("not detectable with ") or \
        0 < float(detectable.strip("±").replace(" pp", "")) <= 100  # 80% power, 5% level, never above 100
    assert compare_markdown(a, b) == text  # deterministic: the same interval every time


def test_intervals_are_printed_in_percent_like_their_values(pair):
    metrics = _rows(compare_markdown(*pair), "Metrics")
    value, interval = metrics["accuracy"][1], metrics["accuracy_ci"][1]
    assert value.endswith("%") and interval.endswith("%")
    low, high = (float(x) for x in interval.rstrip("%").split("-"))
    assert 0 <= low <= float(value.rstrip("%")) <= high <= 100 and high > 1  # percent, not a fraction


def test_compare_with_a_run_json_that_is_a_list_is_one_line(tmp_path, two_jobs):
    import shutil

    a, _ = two_jobs
    bad = tmp_path / "bad"
    shutil.copytree(a, bad)
    (bad / "run.json").write_text("[1, 2]")
    one_line(tool("bench.compare", str(a), str(bad)), "run.json", "list")


def test_compare_piped_into_head_has_no_broken_pipe_traceback(two_jobs):
    a, b = two_jobs
    env = {k: v for k, v in os.environ.items() if k != "HYDRA_FULL_ERROR"}
    done = subprocess.run(f"{sys.executable} -m bench.compare {a} {b} | head -1", shell=True, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "## bench.compare"
    assert "BrokenPipeError" not in done.stderr and "Traceback" not in done.stderr, done.stderr
