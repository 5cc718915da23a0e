"""Langfuse tracing against a local HTTP receiver on loopback that records what the SDK sends.

The receiver answers the few REST calls the tracer makes (projects, datasets, dataset
items, scores) and decodes the OTLP/HTTP span exports (gzip protobuf), so the tests see
the real Langfuse 5.x SDK's traffic: dataset creation, items, one trace per case carrying
its case id, judge scores; and that a job finishes when Langfuse is down.
"""

from __future__ import annotations

import json
import socket
import uuid
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir

from bench.runner import run
from bench.runner.job import trace_options
from bench.sources import LocalFile
from bench.store.records import read_jsonl
from bench.tracing import (
    LangfuseTracer,
    NullTracer,
    TraceOptions,
    build_tracer,
    dataset_item_id,
    dataset_name,
    langfuse_settings,
)

from langfuse_receiver import Receiver
from paths import CONF_DIR

CONF = str(CONF_DIR)
SECRET = "sk-lf-test-" + "s3cr3t" * 4


@pytest.fixture
def receiver():
    rec = Receiver()
    yield rec
    rec.close()


def _env(monkeypatch, url: str) -> str:
    public = f"pk-lf-test-{uuid.uuid4().hex[:8]}"  # the SDK keeps one client per public key
    monkeypatch.setenv("LANGFUSE_PUBLIC_KEY", public)
    monkeypatch.setenv("LANGFUSE_SECRET_KEY", SECRET)
    monkeypatch.setenv("LANGFUSE_BASE_URL", url)
    monkeypatch.delenv("LANGFUSE_HOST", raising=False)
    return public


def _cfg(out: Path, dev: Path, *extra: str):
    with initialize_config_dir(config_dir=CONF, version_base="1.3"):
        return compose("config", overrides=[
            "dataset=local", f"dataset.path={dev}", "dataset.limit=3", f"output_dir={out}",
            "tracing.langfuse=true", "cache.enabled=false", *extra])


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_null_tracer_without_keys_or_flag(monkeypatch, tmp_path, dev_parquet):
    for key in ("LANGFUSE_PUBLIC_KEY", "LANGFUSE_SECRET_KEY", "LANGFUSE_BASE_URL", "LANGFUSE_HOST"):
        monkeypatch.delenv(key, raising=False)
    assert isinstance(build_tracer(trace_options(_cfg(tmp_path, dev_parquet))), NullTracer)  # flag on, no keys
    _env(monkeypatch, "http://127.0.0.1:9")
    assert isinstance(build_tracer(trace_options(_cfg(tmp_path, dev_parquet, "tracing.langfuse=false"))), NullTracer)
    assert langfuse_settings({"LANGFUSE_PUBLIC_KEY": "p", "LANGFUSE_SECRET_KEY": "s",
                              "LANGFUSE_HOST": "http://h/"}).base_url == "http://h"
    assert SECRET not in repr(langfuse_settings())


def test_job_traces_dataset_run_with_cases_answers_and_scores(monkeypatch, tmp_path, dev_parquet, receiver):
    public = _env(monkeypatch, receiver.url)
    out = tmp_path / "job"
    metrics = run(_cfg(out, dev_parquet))
    cases = read_jsonl(out / "cases.jsonl")
    case_ids = [c["case_id"] for c in cases]
    questions = [q for c in cases for q in c["questions"]]
    assert metrics["missing_traces"] == []

    # dataset: created once, one item per case with a stable id and its questions
    name = dataset_name(LocalFile(path=str(dev_parquet)).label(), cases)
    assert [d["name"] for d in receiver.datasets] == [name]
    assert sorted(i["metadata"]["case_id"] for i in receiver.items) == sorted(case_ids)
    for item in receiver.items:
        assert item["id"] == dataset_item_id(name, item["metadata"]["case_id"])
        assert item["datasetName"] == name
        assert {q["qid"] for q in item["input"]["questions"]} == set(item["expectedOutput"])

    # one trace per case: a root span named after the case, metadata case_id, in the dataset run
    roots = [s for s in receiver.spans if s["name"].startswith("case ")]
    assert sorted(s["name"] for s in roots) == sorted(f"case {c}" for c in case_ids)
    assert len({s["trace_id"] for s in roots}) == len(case_ids)
    for span in receiver.spans:
        attrs = span["attributes"]
        assert attrs["langfuse.experiment.name"] == "job"  # the job (directory) name
        assert attrs["langfuse.experiment.dataset.id"] == "ds-1"
        assert json.loads(attrs["langfuse.trace.metadata.case_id"]) in case_ids
    answers = [s for s in receiver.spans if s["name"].startswith("answer ")]
    assert len(answers) == len(questions)
    assert all(s["attributes"]["langfuse.observation.type"] == "generation" for s in answers)
    trace_of = {s["name"][5:]: s["trace_id"] for s in roots}

    # scores: per question a numeric score named after its type and a categorical verdict
    by_name = {}
    for score in receiver.scores:
        by_name.setdefault(score["name"], []).append(score)
    verdicts = {s["qid"]: s["verdict"] for s in read_jsonl(out / "scores.jsonl")}
    assert len(by_name["verdict"]) == len(questions)
    for score in by_name["verdict"]:
        assert score["value"] == verdicts[score["metadata"]["qid"]]
        assert score["traceId"] == trace_of[score["metadata"]["case_id"]]
    for question in questions:
        typed = [s for s in by_name[question["type"]] if s["metadata"]["qid"] == question["qid"]]
        assert len(typed) == 1 and typed[0]["value"] == (1.0 if verdicts[question["qid"]] == "correct" else 0.0)
    assert len(by_name["accuracy"]) == len(case_ids)

    # the OTLP export is authenticated with the keys; no secret lands in the job's files
    otel = [r for r in receiver.requests if r["path"] == "/api/public/otel/v1/traces"]
    assert otel and all(r["headers"]["x-langfuse-public-key"] == public for r in otel)
    assert sorted(r["case_id"] for r in read_jsonl(out / "traces.jsonl")) == sorted(case_ids)
    for path in out.rglob("*"):
        if path.is_file():
            assert SECRET not in path.read_text(encoding="utf-8", errors="ignore"), path


def test_langfuse_down_never_stops_a_job(monkeypatch, tmp_path, dev_parquet):
    _env(monkeypatch, f"http://127.0.0.1:{_free_port()}")  # nothing listens there
    out = tmp_path / "job"
    metrics = run(_cfg(out, dev_parquet, "tracing.timeout=2"))
    case_ids = [c["case_id"] for c in read_jsonl(out / "cases.jsonl")]
    assert metrics["n_scored"] == metrics["n_questions"] > 0
    assert sorted(metrics["missing_traces"]) == sorted(case_ids)
    assert json.loads((out / "run.json").read_text())["status"] == "complete"


def test_refused_exports_are_reported_as_missing(monkeypatch, tmp_path, dev_parquet):
    rec = Receiver(otel_status=400)  # REST works, the trace endpoint refuses every batch
    try:
        _env(monkeypatch, rec.url)
        out = tmp_path / "job"
        metrics = run(_cfg(out, dev_parquet))
        case_ids = [c["case_id"] for c in read_jsonl(out / "cases.jsonl")]
        assert sorted(metrics["missing_traces"]) == sorted(case_ids)
        assert metrics["n_scored"] == metrics["n_questions"]
        assert rec.spans  # they were sent, and refused
    finally:
        rec.close()


def test_tracer_hooks_never_raise(monkeypatch, receiver):
    _env(monkeypatch, receiver.url)
    from bench.tracing import langfuse_settings as settings

    tracer = LangfuseTracer(settings(), TraceOptions(timeout=2, dataset_label="sample", arm="full"), None)
    tracer.start_job("hooks", [])
    tracer.case_started(object(), object())  # malformed inputs are logged, not raised
    tracer.answer_recorded(object(), object(), object())
    tracer.score_recorded(object(), object(), object())
    assert tracer.missing_traces(["x"]) == ["x"]
    tracer.flush()


def test_dataset_upload_matches_the_jobs_dataset(monkeypatch, tmp_path, dev_parquet, receiver, capsys):
    from bench.dataset import main as dataset_main

    overrides = ["dataset=local", f"dataset.path={dev_parquet}", "dataset.limit=3"]
    for key in ("LANGFUSE_PUBLIC_KEY", "LANGFUSE_SECRET_KEY", "LANGFUSE_BASE_URL", "LANGFUSE_HOST"):
        monkeypatch.delenv(key, raising=False)
    assert dataset_main(["--upload", *overrides]) == 2  # no keys: a one-line error
    assert dataset_main(overrides) == 0 and not receiver.requests  # without --upload: only shows
    _env(monkeypatch, receiver.url)
    assert dataset_main(["--upload", *overrides]) == 0
    uploaded = {i["id"] for i in receiver.items}
    assert len(uploaded) == 3 and len(receiver.datasets) == 1
    receiver.items.clear()
    run(_cfg(tmp_path / "job", dev_parquet))  # the job upserts the very same items
    assert {i["id"] for i in receiver.items} == uploaded
    assert receiver.datasets[0]["name"] == receiver.datasets[1]["name"]
    assert SECRET not in capsys.readouterr().out


def test_model_calls_are_nested_spans_of_their_case(monkeypatch, tmp_path, receiver):
    """With real models, Langfuse's LangChain callback handler traces the agent's graph run (its
    steps), every model call and the judge's calls as spans under the case's root span."""
    from fake_openai import FakeOpenAI

    _env(monkeypatch, receiver.url)
    out = tmp_path / "job"
    with FakeOpenAI() as server, initialize_config_dir(config_dir=CONF, version_base="1.3"):
        cfg = compose("config", overrides=[
            "dataset.limit=1", f"output_dir={out}", "tracing.langfuse=true", "cache.enabled=false",
            "model=openai", f"model.base_url={server.base_url}", "model.api_key_env=null", "judge=llm"])
        metrics = run(cfg)
        requests = server.stats()["requests"]
    assert metrics["missing_traces"] == []
    (root,) = [s for s in receiver.spans if s["name"].startswith("case ")]
    graphs = [s for s in receiver.spans if s["name"] == "LangGraph"]
    calls = [s for s in receiver.spans if s["attributes"].get("langfuse.observation.type") == "generation"
             and not s["name"].startswith("answer ")]
    steps = [s for s in receiver.spans if s["name"] == "agent"]
    n_questions = metrics["n_questions"]
    assert len(graphs) == n_questions and all(g["parent"] == root["span_id"] for g in graphs)
    assert len(calls) == requests  # one generation per model call: the agent's and the judge's
    assert len(steps) >= n_questions and {s["trace_id"] for s in receiver.spans} == {root["trace_id"]}
    span_ids = {s["span_id"] for s in receiver.spans}
    assert all(s["parent"] in span_ids for s in receiver.spans if s is not root)  # all nested in the trace
