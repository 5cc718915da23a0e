"""End-to-end offline jobs: files and fields, 100% on the full arm by construction."""

from __future__ import annotations

import json
from pathlib import Path

from hydra import compose, initialize_config_dir

from bench.runner import run
from bench.store import read_jsonl

from conftest import CONF_DIR


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
    assert metrics["accuracy"] == 1.0 and metrics["verdicts"]["correct"] == metrics["n_questions"] == 28
    views = read_jsonl(tmp_path / "views.jsonl")
    assert all(flag["visible"] for v in views for flag in v["evidence"].values())


def test_full_arm_scores_everything_on_the_real_sample(tmp_path, dev_parquet):
    metrics = run(job_cfg(tmp_path, "dataset=local", f"dataset.path={dev_parquet}"))
    assert metrics["n_cases"] == 15 and metrics["n_questions"] > 30
    assert metrics["accuracy"] == 1.0, metrics["by_type"]


def test_a_file_of_only_bad_rows_gives_an_empty_complete_job(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"instance_id": "x", "trajectory": "not json"}) + "\n")
    metrics = run(job_cfg(tmp_path / "job", "dataset=local", f"dataset.path={bad}"))
    assert metrics["n_cases"] == 0 and metrics["accuracy"] is None
    assert read_jsonl(tmp_path / "job" / "rejected.jsonl")[0]["reason"] == "trajectory is a string that is not valid JSON"
