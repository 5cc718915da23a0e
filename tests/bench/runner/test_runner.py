"""End-to-end offline jobs: files and fields, 100% on the full arm by construction."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir

from bench.runner import run
from bench.store.records import read_jsonl

from builders import sample_questions
from paths import CONF_DIR

N = sample_questions()  # questions of the shipped sample


def job_cfg(out: Path, *overrides: str):
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return compose("config", overrides=[f"output_dir={out}", *overrides])


def test_default_job_writes_every_file_with_its_fields(tmp_path):
    metrics = run(job_cfg(tmp_path))
    for name in ("cases.jsonl", "rejected.jsonl", "views.jsonl", "answers.jsonl", "scores.jsonl",
                 "metrics.json", "run.json"):
        assert (tmp_path / name).exists(), name
    case = read_jsonl(tmp_path / "cases.jsonl")[0]
    assert {"case_id", "instance_id", "repo", "source_row", "messages", "system_prompt", "questions",
            "dropped_questions"} <= case.keys()
    assert {"qid", "type", "question", "reference", "evidence_keys", "evidence_messages"} <= case["questions"][0].keys()
    assert case["messages"][0]["type"] == "human"  # messages_to_dict form, no system message
    assert {"source_row", "instance_id", "reason"} <= read_jsonl(tmp_path / "rejected.jsonl")[0].keys()
    answer = read_jsonl(tmp_path / "answers.jsonl")[0]
    assert {"case_id", "qid", "type", "answer", "usage"} <= answer.keys()
    score = read_jsonl(tmp_path / "scores.jsonl")[0]
    assert {"case_id", "qid", "type", "verdict", "reason"} <= score.keys()
    view = read_jsonl(tmp_path / "views.jsonl")[0]
    assert {"case_id", "arm", "kept_messages", "kept_tokens", "full_messages", "full_tokens", "messages",
            "summary", "handles", "evidence"} <= view.keys()
    saved = json.loads((tmp_path / "metrics.json").read_text())
    assert {"n_cases", "n_questions", "accuracy", "by_type", "verdicts", "mean_kept_tokens",
            "mean_full_tokens"} <= saved.keys()
    assert saved["n_cases"] == metrics["n_cases"] == 8
    provenance = json.loads((tmp_path / "run.json").read_text())
    assert provenance["status"] == "complete"
    assert {"git", "packages", "dataset", "case_set_hash", "prompt_hash", "started", "ended"} <= provenance.keys()


def test_full_arm_scores_everything_on_the_sample(tmp_path):
    metrics = run(job_cfg(tmp_path))
    assert metrics["accuracy"] == 1.0 and metrics["accuracy_all_questions"] == 1.0 and metrics["n_questions"] == N
    assert metrics["verdicts"]["correct"] == metrics["n_headline_questions"] == N - metrics["in_task_text"]["n"]
    views = read_jsonl(tmp_path / "views.jsonl")
    assert all(flag["visible"] for v in views for flag in v["evidence"].values())


def test_full_arm_scores_everything_on_the_real_sample(tmp_path, dev_parquet):
    metrics = run(job_cfg(tmp_path, "dataset=local", f"dataset.path={dev_parquet}"))
    assert metrics["n_cases"] == 15 and metrics["n_questions"] > 30
    assert metrics["accuracy"] == 1.0, metrics["by_type"]


def test_a_file_of_only_bad_rows_is_refused_naming_the_rejection(tmp_path):
    """No question, no job (issue 32): the refusal names the rows read and the first rejection's reason."""
    from bench.core.errors import DatasetError

    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"instance_id": "x", "trajectory": "not json"}) + "\n")
    with pytest.raises(DatasetError, match=r"1 row\(s\) read; 0 case\(s\) selected; 1 rejected \(first: trajectory is a "
                                           r"string that is not valid JSON\)"):
        run(job_cfg(tmp_path / "job", "dataset=local", f"dataset.path={bad}"))


def test_job_files_hold_every_message_exactly_on_the_real_sample(tmp_path, dev_parquet):
    """cases.jsonl and views.jsonl are spliced from memoized per-message JSON: same as encoding whole records."""
    from langchain_core.messages import messages_to_dict

    from bench.config.job_cases import load_job_cases
    from bench.text.tokens import TokenCounter

    cfg = job_cfg(tmp_path, "dataset=local", f"dataset.path={dev_parquet}", "arm=nlatest", "arm.n=10")
    run(cfg)
    cases = {c.case_id: c for c in load_job_cases(cfg, TokenCounter()).cases}  # as the job selects
    written = read_jsonl(tmp_path / "cases.jsonl")
    assert [c["case_id"] for c in written] == list(cases)
    for record in written:
        assert record == json.loads(json.dumps(cases[record["case_id"]].to_dict(), default=str))
    for view in read_jsonl(tmp_path / "views.jsonl"):
        messages = cases[view["case_id"]].messages[-view["kept_messages"]:]
        assert view["messages"] == json.loads(json.dumps(messages_to_dict(messages), default=str))
        assert set(view["evidence"]) == {q.qid for q in cases[view["case_id"]].questions}


def test_the_gc_freeze_is_undone_after_a_job_even_a_failed_one(tmp_path, monkeypatch):
    import gc

    from bench.runner.pipeline import Pipeline

    before = gc.get_freeze_count()
    run(job_cfg(tmp_path / "ok"))
    assert gc.get_freeze_count() == before

    def broken(self, *args, **kwargs):
        raise RuntimeError("simulated crash")

    monkeypatch.setattr(Pipeline, "run_phase", broken)
    try:
        run(job_cfg(tmp_path / "crash"))
    except RuntimeError:
        pass
    assert gc.get_freeze_count() == before


def test_pure_cpu_views_are_built_one_at_a_time_model_views_concurrently(tmp_path):
    """The view gate: with 4 workers, views of a policy that calls no model never overlap;
    views of one that does (an LLM summary) do."""
    import threading
    import time

    from bench.data.selection import CaseStream
    from bench.runner.caseset import CaseSet
    from bench.runner.pipeline import Phase, Pipeline
    from bench.store.records import JobStore
    from bench.store.schema import Score
    from bench.tracing import NullTracer

    cases = CaseSet.write(CaseStream(job_cfg(tmp_path).dataset), tmp_path / "cases.jsonl")
    cases.commit()

    class Policy:
        name = "probe"

        def __init__(self, calls_model: bool) -> None:
            self.calls_model, self.active, self.peak, self.lock = calls_model, 0, 0, threading.Lock()
            # a policy that calls a model: its first four views wait for each other, so they provably
            # run at once whatever the load (one at a time would never fill it: the test fails after
            # the bound); a pure one is gated to one view at a time, so it gets no barrier
            self.barrier = threading.Barrier(4, timeout=120) if calls_model else None
            self.started = 0

        def __call__(self, case):
            with self.lock:
                self.active += 1
                self.peak = max(self.peak, self.active)
                self.started += 1
                first_four = self.started <= 4
            if self.barrier is not None and first_four:
                self.barrier.wait()
            elif self.barrier is None:
                time.sleep(0.02)  # room for an overlap, were the gate broken (peak 1 holds at any speed)
            with self.lock:
                self.active -= 1
            from bench.policies import FullHistory
            return FullHistory()(case)

    class Answerer:
        def answer(self, case, view, question):
            from bench.store.schema import Answer
            return Answer(case_id=case.case_id, qid=question.qid, type=question.type, answer="x")

    class Judge:
        def score(self, question, answer, repo_root):
            return Score(case_id=answer.case_id, qid=answer.qid, type=answer.type, verdict="wrong", reason="")

    for calls_model, expected in ((False, 1), (True, 4)):
        policy = Policy(calls_model)
        store = JobStore(tmp_path / f"gate-{calls_model}")
        Pipeline(store, Answerer(), Judge(), NullTracer(), workers=4).run_phase(cases, policy, Phase.of_arm("probe"))
        assert policy.peak == expected, (calls_model, policy.peak)
        assert len(store.read("views")) == len(cases) and len(store.read("scores")) == sum(len(e.qids) for e in cases.entries)
