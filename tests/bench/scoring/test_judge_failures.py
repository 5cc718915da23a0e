"""A judge that fails is named, never blamed on the answers, and loses no other judge's verdict.

``judge=llm`` (or one member of ``judge=panel``) whose endpoint answers 500 to every call: the
scores are recorded ``unscored`` with the judge named and its error (``scores.jsonl``), the job is
``incomplete`` and says the judge failed (not "answer errors"), resume judges them again; a panel's
failing member abstains and the exact judge's verdicts stand. ``bench.rescore`` / ``bench.calibrate``
with an unreachable judge fail before any work, as ``bench.main`` does.

Each test failed before its fix (issue 32, "Judging and results").
"""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from bench.config.checks import compose
from bench.runner import run
from bench.store.records import read_jsonl

from commands import bench, tool
from fake_openai import FakeOpenAI
from jobs import job_cfg
from paths import DATA

FAILING = "failing-judge"  # the judge's model name
MARKER = "The reference answer below was extracted exactly"  # in every judge prompt: those requests get a 500


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _llm_judge(url: str, prefix: str = "judge") -> list[str]:
    return [f"{prefix}.base_url={url}", f"{prefix}.name={FAILING}", f"{prefix}.api_key_env=null",
            f"{prefix}.max_retries=0", f"{prefix}.max_concurrency=2"]


def _job(out: Path, *extra: str) -> list[str]:
    return [f"output_dir={out}", "dataset.limit=2", "cache.enabled=false", *extra]


def test_an_llm_judge_failing_every_call_is_named_recorded_and_judged_again_on_resume(tmp_path):
    out = tmp_path / "job"
    with FakeOpenAI(fail_marker=MARKER, marker_status=500) as server:
        metrics = run(compose(_job(out, "judge=llm", *_llm_judge(server.base_url))))
        scores = read_jsonl(out / "scores.jsonl")
        assert metrics["accuracy"] is None and metrics["n_judge_errors"] == metrics["n_questions"] > 0
        assert f"llm:{FAILING}" in metrics["judge_error"] and "500" in metrics["judge_error"]
        assert len(scores) == metrics["n_questions"]
        assert all(s["verdict"] == "unscored" and FAILING in s["error"] for s in scores)
        assert json.loads((out / "run.json").read_text())["status"] == "incomplete"
        server.fail_marker = None  # the endpoint is back: resume judges every answer again
        resumed = run(compose([*_job(out, "judge=llm", *_llm_judge(server.base_url)), f"resume={out}"]))
    assert resumed["n_judge_errors"] == 0 and resumed["accuracy"] is not None
    final = {s["qid"]: s for s in read_jsonl(out / "scores.jsonl")}
    assert len(final) == resumed["n_questions"] and not any("error" in s for s in final.values())
    assert json.loads((out / "run.json").read_text())["status"] == "complete"


def test_the_command_names_the_failing_judge_not_answer_errors(tmp_path):
    with FakeOpenAI(fail_marker=MARKER, marker_status=500) as server:
        done = bench(tmp_path, *_job(tmp_path / "job", "judge=llm", *_llm_judge(server.base_url)))
    assert done.returncode == 1, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("error: no question was scored") and "the judge failed" in last and FAILING in last, last
    assert "answer errors" not in last and "Traceback" not in done.stderr
    assert "judge errors:" in done.stdout


def test_a_failing_panel_member_abstains_and_the_exact_judges_verdicts_stand(tmp_path):
    exact = run(compose(_job(tmp_path / "exact")))
    out = tmp_path / "panel"
    with FakeOpenAI(fail_marker=MARKER, marker_status=500) as server:
        metrics = run(compose(_job(out, "judge=panel", *_llm_judge(server.base_url, "judge.members.llm"))))
    scores = {s["qid"]: s for s in read_jsonl(out / "scores.jsonl")}
    by_exact = {s["qid"]: s["verdict"] for s in read_jsonl(tmp_path / "exact" / "scores.jsonl")}
    assert scores and {q: s["verdict"] for q, s in scores.items()} == by_exact  # nothing of the exact judge lost
    assert all(s["panel"][f"llm:{FAILING}"] == "unscored" and f"panel member llm:{FAILING} failed" in s["error"]
               for s in scores.values())
    assert metrics["accuracy"] == exact["accuracy"] and metrics["n_judge_errors"] == len(scores)
    assert json.loads((out / "run.json").read_text())["status"] == "incomplete"


def test_a_panel_whose_every_member_fails_names_them_all():
    from bench.scoring.panel import PanelFailed, PanelJudge
    from bench.store.schema import Answer, Question

    class Broken:
        def __init__(self, name: str) -> None:
            self.name = name

        def clients(self):
            return []

        def score(self, question, answer, repo_root=None):  # noqa: ANN001, ARG002
            raise RuntimeError(f"{self.name} is down")

    question = Question(qid="q", type="call_count", question="?", reference=3, evidence_keys=[], evidence_messages=[])
    with pytest.raises(PanelFailed, match="a is down.*b is down"):
        PanelJudge([Broken("a"), Broken("b")]).score(question, Answer(case_id="c", qid="q", type="call_count",
                                                                       answer="3"))


# =========================================================================== fail before any work


@pytest.fixture(scope="module")
def finished_job(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("rescore") / "job"
    run(compose(_job(out)))
    return out


@pytest.mark.one_variant
@pytest.mark.parametrize("judge", ["llm", "panel"])
def test_rescore_with_an_unreachable_judge_fails_before_any_work(tmp_path, finished_job, judge):
    url = f"http://127.0.0.1:{_free_port()}/v1"
    prefix = "judge" if judge == "llm" else "judge.members.llm"
    output = tmp_path / "rescored.jsonl"
    done = tool("bench.rescore", str(finished_job), "--judge", judge, f"{prefix}.base_url={url}",
                f"{prefix}.api_key_env=null", "--output", str(output), cwd=tmp_path)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stderr.count("\n") == 1 and "cannot reach the endpoint" in done.stderr, done.stderr
    assert not output.exists() and "accuracy" not in done.stdout


@pytest.mark.one_variant
@pytest.mark.parametrize("judge", ["llm", "panel"])
def test_calibrate_with_an_unreachable_judge_fails_before_any_work(tmp_path, judge):
    url = f"http://127.0.0.1:{_free_port()}/v1"
    prefix = "judge" if judge == "llm" else "judge.members.llm"
    done = tool("bench.calibrate", str(DATA / "judge_calibration.jsonl"), f"judge={judge}",
                f"{prefix}.base_url={url}", f"{prefix}.api_key_env=null", cwd=tmp_path)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stderr.count("\n") == 1 and "cannot reach the endpoint" in done.stderr, done.stderr
    assert "agreement" not in done.stdout


def test_rescore_whose_judge_fails_every_call_exits_non_zero_naming_it(tmp_path, finished_job):
    output = tmp_path / "rescored.jsonl"
    with FakeOpenAI(fail_marker=MARKER, marker_status=500) as server:
        done = tool("bench.rescore", str(finished_job), "--judge", "llm", *_llm_judge(server.base_url),
                    "--output", str(output), cwd=tmp_path)
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert done.stderr.strip().splitlines()[-1].startswith("error: the judge failed on every answer")
    assert output.exists()  # the rows (each with the judge's error) are kept


def test_a_judge_that_always_fails_gives_null_accuracy_and_an_incomplete_job(tmp_path, monkeypatch):
    from bench.runner import run
    from bench.scoring.judge import ExactJudge
    from bench.store.schema import Score

    def failing(self, question, answer, repo_root=None):  # noqa: ANN001, ARG001
        return Score(case_id=answer.case_id, qid=question.qid, type=question.type, verdict="unscored",
                     reason="judge failed: always", judge="exact")

    monkeypatch.setattr(ExactJudge, "score", failing)
    out = tmp_path / "job"
    metrics = run(job_cfg(output_dir=str(out)))
    assert metrics["n_questions"] > 0 and metrics["accuracy"] is None
    assert json.loads((out / "run.json").read_text())["status"] == "incomplete"
