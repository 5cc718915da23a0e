"""End to end against a real OpenAI-compatible server on loopback running a small real model.

The server is llama-cpp-python's, serving SmolLM2-135M-Instruct (``tests/support/llama_server.py``;
``bash .ci/llama_server.sh`` installs it into a separate venv). One hand-built case runs on
``full`` then ``compact`` with ``model=openai``, ``judge=llm`` and ``summarizer=openai`` all
pointing at it, through the real command line; then both jobs run again into new
directories and must make zero model calls. A 135M model answers badly: the assertions
are on the mechanics (records, verdict vocabulary, usage, cache, no key on disk), not on
accuracy. Marked ``e2e`` (``.ci/run`` runs it; the default ``pytest`` does not).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench.store.records import read_jsonl
from bench.store.schema import VERDICTS

from builders import ROOT, bash, edit, row
from llama_server import llama_server_fixture

pytestmark = pytest.mark.e2e

KEY = "sk-test-e2e-SECRET"
llama_base_url = llama_server_fixture()

# The tool schemas of an OpenHands run (finish carries the answer in `message`).
TOOLS = [
    {"type": "function", "function": {"name": "execute_bash", "description": "Run a bash command.",
                                      "parameters": {"type": "object", "properties": {
                                          "command": {"type": "string", "description": "The command."}},
                                          "required": ["command"]}}},
    {"type": "function", "function": {"name": "str_replace_editor", "description": "View or edit files.",
                                      "parameters": {"type": "object", "properties": {
                                          "command": {"type": "string"}, "path": {"type": "string"},
                                          "old_str": {"type": "string"}, "new_str": {"type": "string"}},
                                          "required": ["command", "path"]}}},
    {"type": "function", "function": {"name": "think", "description": "Think about something.",
                                      "parameters": {"type": "object", "properties": {
                                          "thought": {"type": "string"}}, "required": ["thought"]}}},
    {"type": "function", "function": {"name": "finish", "description": "Finish and give your final answer.",
                                      "parameters": {"type": "object", "properties": {
                                          "message": {"type": "string", "description": "The final answer."}},
                                          "required": ["message"]}}},
]

PYTEST_FAIL = (
    "collected 3 items\n\ntests/test_widget.py .F.\n\n"
    "FAILED tests/test_widget.py::test_scale - AssertionError: assert 3 == 4\n"
    "========================= 1 failed, 2 passed in 0.05s =========================="
)
PYTEST_PASS = "collected 3 items\n\ntests/test_widget.py ...\n\n============== 3 passed in 0.04s =============="


def tiny_case(path: Path) -> Path:
    """One small case with three questions (files_changed, first_edit, test_counts)."""
    record = row(
        bash("1", f"cd {ROOT} && python -m pytest tests/test_widget.py", PYTEST_FAIL, exit_code=1),
        edit("2", "str_replace", f"{ROOT}/widgets/core.py", old_str="    return factor + 1",
             new_str="    return factor * 2"),
        bash("3", f"cd {ROOT} && python -m pytest tests/test_widget.py", PYTEST_PASS),
        patch_files=("widgets/core.py",),
        tools=TOOLS,
    )
    path.write_text(json.dumps(record) + "\n")
    return path


def bench(cwd: Path, job: Path, *args: str, timeout: int = 1800) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "HYDRA_FULL_ERROR"}
    env["OPENAI_API_KEY"] = KEY
    done = subprocess.run([sys.executable, "-m", "bench.main", *args, f"hydra.run.dir={job}"], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, done.stderr[-3000:]
    assert KEY not in done.stdout + done.stderr
    return done


def overrides(base_url: str, data: Path, cache: Path, arm: str) -> list[str]:
    return [
        "dataset=local", f"dataset.path={data}", f"arm={arm}", "seed=0", f"cache.path={cache}",
        # the three coding types the case is built for (the domain-neutral ones apply too)
        "questions.types=[files_changed,first_edit,test_counts]",
        "model=openai", "model.name=smollm2-135m", f"model.base_url={base_url}",
        "model.max_tokens=64", "model.max_tokens_field=max_tokens", "model.max_steps=1",
        "model.max_concurrency=2", "model.max_retries=2", "model.timeout=600",
        "judge=llm", "judge.max_tokens=48",
        "summarizer=openai", "summarizer.max_tokens=96", "summarizer.timeout=600",
    ]


def key_leaks(*roots: Path) -> list[str]:
    hits = []
    for root in roots:
        files = [root] if root.is_file() else [p for p in root.rglob("*") if p.is_file()]
        hits += [str(p) for p in files if KEY.encode() in p.read_bytes()]
    return hits


def check_job(job: Path, arm: str, n_questions: int) -> dict:
    """Mechanics of one finished job; returns its metrics."""
    provenance = json.loads((job / "run.json").read_text())
    assert provenance["status"] == "complete", provenance
    answers = read_jsonl(job / "answers.jsonl")
    scores = read_jsonl(job / "scores.jsonl")
    assert len(answers) == len(scores) == n_questions
    assert len({a["qid"] for a in answers}) == len({s["qid"] for s in scores}) == n_questions
    for answer in answers:
        assert answer["outcome"] in ("answered", "context_overflow"), answer
        usage = answer["usage"]
        assert usage["model"] == "smollm2-135m" and usage["steps"] >= 1
        assert usage["calls"] + usage["cache_hits"] >= 1 and usage["input_tokens"] > 0
    for score in scores:
        assert score["verdict"] in VERDICTS and score["reason"]
        if score["verdict"] == "unscored" and score["reason"].startswith("the judge"):
            assert score["prompt"] and score["raw"] is not None
    metrics = json.loads((job / "metrics.json").read_text())
    calls = metrics["model_calls"]
    assert calls["answer"]["requests"] >= n_questions
    judged = sum(1 for a in answers if a["outcome"] == "answered" and a["answer"].strip())
    if judged:
        assert calls["judge"]["requests"] >= judged
    views = read_jsonl(job / "views.jsonl")
    assert len(views) == 1 and views[0]["arm"] == arm
    if arm == "compact":
        assert views[0]["summary"] and views[0]["summarizer_calls"] == 1
        assert calls["summarizer"]["requests"] == 1
        reference = read_jsonl(job / "reference_scores.jsonl")
        assert len(reference) == n_questions and metrics.get("accuracy_relative_to_full", 0) is not None
    return metrics


def test_full_and_compact_on_a_real_server_then_a_cached_rerun(tmp_path, llama_base_url):
    data = tiny_case(tmp_path / "tiny.jsonl")
    cache = tmp_path / "cache" / "responses.sqlite"
    first, second = {}, {}
    for arm in ("full", "compact"):
        job = tmp_path / f"{arm}-1"
        bench(tmp_path, job, *overrides(llama_base_url, data, cache, arm))
        n_questions = len(read_jsonl(job / "cases.jsonl")[0]["questions"])
        assert n_questions == 3
        first[arm] = check_job(job, arm, n_questions)
        assert first[arm]["model_calls"]["total"]["calls"] > 0
        assert first[arm]["model_calls"]["total"]["input_tokens"] > 0
    # compact's full-history reference reuses the full job's answers and verdicts: all cache hits
    reference_calls = [r for r in read_jsonl(tmp_path / "compact-1" / "calls.jsonl") if r.get("phase") == "reference"]
    assert reference_calls and all(r["cached"] for r in reference_calls)
    full_verdicts = {s["qid"]: s["verdict"] for s in read_jsonl(tmp_path / "full-1" / "scores.jsonl")}
    reference = {s["qid"]: s["verdict"] for s in read_jsonl(tmp_path / "compact-1" / "reference_scores.jsonl")}
    assert reference == full_verdicts

    for arm in ("full", "compact"):
        job = tmp_path / f"{arm}-2"
        bench(tmp_path, job, *overrides(llama_base_url, data, cache, arm))
        second[arm] = check_job(job, arm, 3)
        total = second[arm]["model_calls"]["total"]
        assert total["calls"] == 0, second[arm]["model_calls"]  # a repeated job makes zero model calls
        assert total["cache_hits"] == total["requests"] == first[arm]["model_calls"]["total"]["requests"]
        for name in ("scores.jsonl", "reference_scores.jsonl"):
            if (tmp_path / f"{arm}-1" / name).exists():
                def by_question(path):  # records are appended in completion order
                    return sorted(read_jsonl(path), key=lambda r: (r["case_id"], r["qid"]))

                assert by_question(tmp_path / f"{arm}-1" / name) == by_question(job / name)
        before = [a["answer"] for a in read_jsonl(tmp_path / f"{arm}-1" / "answers.jsonl")]
        assert sorted(before) == sorted(a["answer"] for a in read_jsonl(job / "answers.jsonl"))

    assert key_leaks(tmp_path) == []  # job dirs (records, logs, .hydra), the dataset and the cache
    figures = {arm: {k: first[arm]["model_calls"][k] for k in first[arm]["model_calls"]} for arm in first}
    print("\nE2E FIGURES (first runs):", json.dumps(figures, indent=1))
    print("E2E ANSWERS:", json.dumps([(a["type"], a["answer"][:160]) for arm in ("full", "compact")
                                      for a in read_jsonl(tmp_path / f"{arm}-1" / "answers.jsonl")], indent=1))
    print("E2E VERDICTS:", json.dumps({arm: first[arm]["verdicts"] for arm in first}))


def test_a_request_longer_than_the_context_is_an_overflow_not_retried(tmp_path, llama_base_url, monkeypatch):
    from langchain_core.messages import HumanMessage

    from bench.answering.agent import LangGraphAnswerer
    from bench.llm import call_sink
    from bench.store.schema import Case, Question, View

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    agent = LangGraphAnswerer(name="smollm2-135m", base_url=llama_base_url, max_tokens=16,
                              max_tokens_field="max_tokens", max_retries=3, cache_enabled=False)
    history = [HumanMessage("word " * 12000)]  # about 12k tokens, the server's context is 8192
    case = Case(case_id="huge@0", instance_id="huge", repo="r", source_row=0, trajectory_id="t",
                system_prompt="You are a coding agent.", messages=history, tools=TOOLS, model_patch="",
                repo_root=None)
    question = Question(qid="huge@0:files_changed", type="files_changed", question="Which files?",
                        reference=[], evidence_keys=[], evidence_messages=[])
    view = View(case_id=case.case_id, arm="full", messages=history, kept_tokens=12000, full_messages=1,
                full_tokens=12000)
    records: list[dict] = []
    with call_sink(records.append):
        answer = agent.answer(case, view, question)
    assert answer.outcome == "context_overflow", answer
    assert "context" in answer.error and KEY not in answer.error
    assert [(r["failed"], r["outcome"], r["retries"]) for r in records] == [(True, "context_overflow", 0)]
