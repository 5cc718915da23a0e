"""Pins that a restructuring changes no behaviour: job records byte for byte, and cache keys.

``records.json`` holds the sha256 of every record file of offline jobs on the real samples
(every arm, the compact mechanisms, the operations source); ``cache_keys.json`` the response-cache
keys of answer, judge and summary requests built from real cases. A deliberate change of
behaviour regenerates them (``BENCH_UPDATE_PINS=1 uv run pytest tests/bench/test_pins.py``) and says
why in its commit; a refactoring must leave them as they are.
"""

from __future__ import annotations

import hashlib
import json
import os

import pytest
from langchain_core.messages import HumanMessage, SystemMessage

from bench.config.checks import compose
from bench.data.selection import load_cases
from bench.llm import openai_client
from bench.policies import CompactPolicy, FullHistory, LLMSummarizer, PolicyContext
from bench.runner import run
from bench.scoring.judge import JUDGE_SYSTEM, LLMJudge
from bench.store.schema import Answer
from bench.text.tokens import TokenCounter

from paths import DATA, DEV_PARQUET

PINS = DATA / "pins"
DEV = DEV_PARQUET
RECORDS = ("cases", "rejected", "views", "answers", "scores", "reference_scores")
JOBS = {
    "full": ["dataset=local", f"dataset.path={DEV}", "arm=full"],
    "nlatest20": ["dataset=local", f"dataset.path={DEV}", "arm=nlatest", "arm.n=20"],
    "matched_tail": ["dataset=local", f"dataset.path={DEV}", "arm=nlatest", "arm.n=null", "arm.match=compact",
                     "mechanism=tail", "dataset.limit=6"],
    "compact_shipped": ["dataset=local", f"dataset.path={DEV}", "arm=compact", "mechanism=shipped"],
    "compact_verify": ["dataset=local", f"dataset.path={DEV}", "arm=compact", "mechanism=verify"],
    "ops_compact_verify": ["dataset=ops", "arm=compact", "mechanism=verify"],
}


def _check(name: str, current: dict) -> None:
    path = PINS / name
    if os.environ.get("BENCH_UPDATE_PINS"):
        path.write_text(json.dumps(current, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    pinned = json.loads(path.read_text(encoding="utf-8"))
    changed = sorted(k for k in set(pinned) | set(current) if pinned.get(k) != current.get(k))
    assert not changed, f"{name}: changed {changed[:10]}"


@pytest.mark.slow  # several subprocess jobs; .ci/run runs it
def test_job_records_are_byte_identical(tmp_path):
    digests = {}
    for job, overrides in JOBS.items():
        out = tmp_path / job
        run(compose([f"output_dir={out}", "cache.enabled=false", *overrides]))
        for record in RECORDS:
            path = out / f"{record}.jsonl"
            if path.exists():
                digests[f"{job}/{record}"] = hashlib.sha256(path.read_bytes()).hexdigest()
    _check("records.json", digests)


class _Recorder:
    """A summarizer that keeps what it is sent."""

    name, calls_model = "recorder", False

    def __init__(self) -> None:
        self.sent: list = []

    def summarize(self, messages, prompt, profile=None):
        self.sent.append((messages, prompt))
        return "summary", {}


def test_cache_keys_are_unchanged():
    counter = TokenCounter()
    cfg = compose(["dataset=local", f"dataset.path={DEV}", "dataset.limit=4"])
    cases = load_cases(cfg.dataset, counter).cases
    settings = {"name": "pinned-model", "base_url": "http://127.0.0.1:9/v1", "api_key_env": None, "seed": 0,
                "check_endpoint": False, "cache_enabled": False, "max_concurrency": 1}
    client = openai_client("model", kind="answer", **settings)
    judge = LLMJudge(client=openai_client("judge", kind="judge", max_tokens=300, **settings))
    summarizer = LLMSummarizer(client=openai_client("summarizer", kind="summarizer", **settings))
    keys = {}
    for case in cases:
        view = FullHistory(context=PolicyContext(counter=counter))(case)
        for question in case.questions:
            messages = [SystemMessage(case.system_prompt), *view.messages, HumanMessage(question.question)]
            keys[f"answer/{question.qid}"] = client.key(messages, case.tools)
            answer = Answer(case_id=case.case_id, qid=question.qid, type=question.type, answer="42")
            prompt = judge.prompt(question, answer)
            keys[f"judge/{question.qid}"] = judge.client.key([SystemMessage(JUDGE_SYSTEM), HumanMessage(prompt)])
        # the summary request of the compact arm: what the summarizer is sent for this case
        recorder = _Recorder()
        CompactPolicy(context=PolicyContext(counter=counter, summarizer=recorder))(case)
        messages, prompt = recorder.sent[-1]
        request = [SystemMessage(summarizer.system), *messages, HumanMessage(prompt)]
        keys[f"summary/{case.case_id}"] = summarizer.client.key(request)
    _check("cache_keys.json", keys)


@pytest.mark.parametrize("name", ["records.json", "cache_keys.json"])
def test_pins_are_present(name):
    assert (PINS / name).is_file(), f"regenerate with BENCH_UPDATE_PINS=1: {name}"
