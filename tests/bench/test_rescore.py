"""bench.rescore: stored answers re-judged by one common judge, one row per question."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from bench.rescore import build_judge, rescore_jobs
from bench.rescore import main as rescore_main
from bench.store.records import read_jsonl

from commands import bench, tool
from jobs import flip_first_correct, run_job


@pytest.fixture(scope="module")
def jobs(tmp_path_factory):
    root = tmp_path_factory.mktemp("rescore")
    full = run_job(root / "arm=full,seed=0", "arm=full", "dataset.limit=3")
    nlatest = run_job(root / "arm=nlatest,arm.n=10,seed=0", "arm=nlatest", "arm.n=10", "dataset.limit=3")
    return root, full, nlatest


def test_one_row_per_question_with_reasons(jobs):
    root, full, nlatest = jobs
    judge, _ = build_judge("exact")
    rows = rescore_jobs([root], judge)
    n = sum(len(c["questions"]) for job in (full, nlatest) for c in read_jsonl(job / "cases.jsonl"))
    assert len(rows) == n
    assert len({(r["job_dir"], r["qid"]) for r in rows}) == n
    for job in (full, nlatest):
        original = {s["qid"]: s for s in read_jsonl(job / "scores.jsonl")}
        mine = [r for r in rows if r["job_dir"] == str(job.resolve())]
        for row in mine:  # the same exact judge agrees with the job's verdicts, reasons kept
            assert row["verdict"] == original[row["qid"]]["verdict"] == row["original_verdict"]
            assert row["reason"] and row["judge"] == "exact" and not row["changed"]


def test_common_judge_overrides_a_jobs_verdict_and_outputs(jobs, tmp_path, capsys):
    root, full, nlatest = jobs
    edited = tmp_path / "edited"
    import shutil

    shutil.copytree(full, edited)
    qid = flip_first_correct(edited)  # the job's own judge said "wrong"
    answers = read_jsonl(edited / "answers.jsonl")
    dropped = answers.pop()["qid"]  # and one answer is lost
    (edited / "answers.jsonl").write_text("".join(json.dumps(a) + "\n" for a in answers))
    out = tmp_path / "rescored.csv"
    assert rescore_main([str(edited), "--output", str(out)]) == 0
    frame = pd.read_csv(out)
    assert len(frame) == sum(len(c["questions"]) for c in read_jsonl(edited / "cases.jsonl"))
    row = frame[frame["qid"] == qid].iloc[0]
    assert (row["original_verdict"], row["verdict"], bool(row["changed"])) == ("wrong", "correct", True)
    lost = frame[frame["qid"] == dropped].iloc[0]
    assert (lost["verdict"], lost["reason"]) == ("unscored", "no stored answer")
    printed = capsys.readouterr().out
    assert "accuracy (common judge)" in printed
    jsonl = tmp_path / "rescored.jsonl"
    assert rescore_main([str(edited), "--output", str(jsonl)]) == 0
    assert len(read_jsonl(jsonl)) == len(frame)


def test_cli_errors(tmp_path):
    assert rescore_main([str(tmp_path), "--output", str(tmp_path / "x.jsonl")]) == 2
    assert rescore_main([str(tmp_path), "--judge", "nope", "--output", str(tmp_path / "x.jsonl")]) == 2


def test_llm_judge_through_the_cache(jobs, tmp_path, monkeypatch):
    from fake_openai import FakeOpenAI

    root, full, nlatest = jobs
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-rescore")
    verdict = '{"verdict": "correct", "reason": "same as the reference (fake judge)"}'
    with FakeOpenAI(reply=lambda body: verdict) as server:
        args = [str(nlatest), "--judge", "llm", "--output", str(tmp_path / "llm.jsonl"),
                f"judge.base_url={server.base_url}", "judge.name=fake-judge",
                f"cache.path={tmp_path / 'cache.sqlite'}"]
        assert rescore_main(args) == 0
        rows = read_jsonl(tmp_path / "llm.jsonl")
        answered = [r for r in rows if r["outcome"] == "answered" and (r["answer"] or "").strip()]
        unknown = [r for r in answered if r["answer"].replace(" ", "") == '{"unknown":true}']
        assert all(r["verdict"] == "abstained" for r in unknown)  # the typed abstention costs no call
        answered = [r for r in answered if r not in unknown]
        assert answered and all(r["judge"] == "llm:fake-judge" for r in answered)
        assert all(r["verdict"] == "correct" and "fake judge" in r["reason"] for r in answered)
        calls = server.stats()["requests"]
        assert calls == len(answered)
        assert rescore_main(args) == 0  # the second rescore is served by the response cache
        assert server.stats()["requests"] == calls


def test_rescoring_an_incomplete_job_does_not_count_unanswered_questions_as_changed(tmp_path, two_jobs):
    import shutil

    from bench.rescore import build_judge, rescore_jobs

    a, _ = two_jobs
    job = tmp_path / "incomplete"
    shutil.copytree(a, job)
    for name in ("answers.jsonl", "scores.jsonl"):  # the job stopped half-way: half its questions never answered
        lines = (job / name).read_text().splitlines(keepends=True)
        (job / name).write_text("".join(lines[: len(lines) // 2]))
    judge, _ = build_judge("exact")
    rows = rescore_jobs([job], judge)
    unanswered = [r for r in rows if r["answer"] is None]
    assert unanswered and len(unanswered) < len(rows)
    assert not any(r["changed"] for r in rows)  # same judge, same verdicts; no answer is no changed verdict


def test_rescore_with_the_llm_judge_and_no_key_is_one_line(tmp_path):
    job = tmp_path / "job"
    assert bench(tmp_path, f"output_dir={job}", "dataset.limit=1").returncode == 0
    done = tool("bench.rescore", str(job), "--judge", "llm", "-o", str(tmp_path / "r.csv"), cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "error: cannot build judge 'llm': judge: the API key variable OPENAI_API_KEY is not set; export it "
        "(the key is read from the environment only), or set judge.api_key_env to the variable that holds it "
        "(null for a local server without keys)"]
    assert not (tmp_path / "r.csv").exists()
