"""Batch mode when the Batch API, its output or the job's ledger misbehave: nothing paid for is lost.

Against the fake Batch API (``tests/support/fake_openai.py``, ``batch_faults`` and ``batch_output``): a
transient failure of any Batch API request is retried with backoff as direct calls are; a batch gone
from the server is forgotten and its requests sent again; an unreadable output line costs its own
reply only; a damaged ledger line is skipped; a poll reply that is not a batch's state is never
polled for ever; a usage count that is not a number counts 0. Retries wait ``model.backoff_base``
(a millisecond here): no test sleeps for real or depends on timing.

Each test failed before its fix (issue 32, "Batch mode").
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from bench.config.checks import compose
from bench.llm.batch import reset_rounds
from bench.runner import run
from bench.store.records import read_jsonl

from fake_openai import FakeOpenAI


@pytest.fixture(autouse=True)
def _fresh_rounds():
    reset_rounds()
    yield
    reset_rounds()


def _overrides(server: FakeOpenAI, out: Path, *extra: str) -> list[str]:
    return [f"output_dir={out}", "model=openai", f"model.base_url={server.base_url}", "model.api_key_env=null",
            "model.batch=true", "model.batch_quiet_s=0.2", "model.batch_poll_s=0.02", "model.max_concurrency=32",
            "model.max_retries=3", "model.backoff_base=0.001", "model.backoff_max=0.002",
            "judge=exact", "cache.enabled=false", "dataset.limit=2", *extra]


def _complete(metrics: dict, job: Path) -> None:
    assert metrics["n_errors"] == 0, [a.get("error") for a in read_jsonl(job / "answers.jsonl") if a.get("error")]
    assert metrics["n_scored"] == metrics["n_questions"] > 0


def _as_killed(job: Path) -> None:
    """The job as a kill before its answers were written leaves it: batches submitted, nothing recorded."""
    for name in ("answers.jsonl", "scores.jsonl", "reference_scores.jsonl"):
        (job / name).unlink(missing_ok=True)
    record = json.loads((job / "run.json").read_text())
    (job / "run.json").write_text(json.dumps({**record, "status": "incomplete"}))


def _paid(server: FakeOpenAI) -> int:
    return server.stats().get("batch_requests", 0)


# =========================================================================== the batch is gone


def test_a_resumed_job_whose_batches_are_gone_from_the_server_sends_their_requests_again(tmp_path):
    job = tmp_path / "job"
    with FakeOpenAI(batch_delay=0.02) as server:
        run(compose(_overrides(server, job)))
        paid = _paid(server)
        _as_killed(job)
        server.batches.clear()  # the provider forgot them (deleted, or past its retention)
        reset_rounds()
        resumed = run(compose([*_overrides(server, job), f"resume={job}"]))
        again = _paid(server) - paid
    _complete(resumed, job)
    assert again == paid  # every request sent again, once


# =========================================================================== one unreadable output line


def _damage_first(kind: str):
    done = {"n": 0}

    def edit(lines: list[str]) -> list[str]:
        done["n"] += 1
        if done["n"] > 1:  # the batches sent again come back whole
            return lines
        if kind == "garbage_line":
            return [lines[0], "{not json at all", *lines[1:]]
        item = json.loads(lines[0])
        if kind == "no_custom_id":
            del item["custom_id"]
        elif kind == "custom_id_number":
            item["custom_id"] = 5
        elif kind == "a_list":
            item = [item]
        return [json.dumps(item), *lines[1:]]

    return edit


@pytest.mark.parametrize("kind", ["garbage_line", "no_custom_id", "custom_id_number", "a_list"])
def test_an_unreadable_output_line_loses_only_its_own_reply(tmp_path, kind):
    job = tmp_path / "job"
    with FakeOpenAI(batch_delay=0.02, batch_output=_damage_first(kind)) as server:
        metrics = run(compose(_overrides(server, job)))
        paid = _paid(server)
    _complete(metrics, job)
    calls = read_jsonl(job / "calls.jsonl")
    lost = 0 if kind == "garbage_line" else 1  # a line added is skipped; a line damaged loses that reply only
    assert paid == len(calls) + lost, (paid, len(calls))


# =========================================================================== a damaged ledger


@pytest.mark.parametrize("bad", [
    {"batch_id": "batch_1", "custom_ids": 5},
    {"batch_id": 7, "custom_ids": ["x"]},
    [1, 2],
    "{not json",
    {"batch_id": "../../models", "custom_ids": None},  # custom_ids filled in below: every request's
])
def test_a_damaged_ledger_line_is_skipped_when_the_job_is_resumed(tmp_path, bad):
    job = tmp_path / "job"
    with FakeOpenAI(batch_delay=0.02) as server:
        run(compose(_overrides(server, job)))
        _as_killed(job)
        ledger = job / "batches.jsonl"
        if isinstance(bad, dict) and bad["custom_ids"] is None:
            bad = {**bad, "custom_ids": [c for e in read_jsonl(ledger) for c in e["custom_ids"]]}
        with ledger.open("a") as handle:  # a later line wins: the bad one would be read last
            handle.write((bad if isinstance(bad, str) else json.dumps(bad)) + "\n")
        reset_rounds()
        result: dict = {}
        worker = threading.Thread(target=lambda: result.update(run(compose([*_overrides(server, job),
                                                                            f"resume={job}"]))), daemon=True)
        worker.start()
        worker.join(timeout=240)  # a hang detector only: the job takes a second or two
        assert not worker.is_alive(), "the resumed job polls for ever"
    _complete(result, job)


def test_a_poll_reply_that_is_not_a_batchs_state_is_an_error_not_a_poll_for_ever(tmp_path):
    job = tmp_path / "job"
    with FakeOpenAI(batch_delay=0.02, batch_faults={"poll": [{"object": "list", "data": []}] * 200}) as server:
        result: dict = {}
        worker = threading.Thread(target=lambda: result.update(run(compose(_overrides(server, job, "dataset.limit=1")))),
                                  daemon=True)
        worker.start()
        worker.join(timeout=240)  # a hang detector only
        assert not worker.is_alive(), "the job polls for ever"
    errors = [a["error"] for a in read_jsonl(job / "answers.jsonl") if a["outcome"] == "error"]
    assert errors and all("malformed reply" in e and "after 3 retries" in e for e in errors), errors[:1]


# =========================================================================== transient failures


@pytest.mark.one_variant
@pytest.mark.parametrize("route, faults", [
    ("create", [429]), ("create", [500, 503]), ("create", ["garbage"]),
    ("upload", [500]), ("upload", ["html"]),
    ("poll", [500]), ("poll", ["garbage"]), ("poll", [{"id": "batch_1"}]),
    ("content", [404]), ("content", ["html"]), ("content", [502, 500]),
])
def test_a_transient_batch_api_failure_is_retried_and_the_job_completes(tmp_path, route, faults):
    job = tmp_path / "job"
    with FakeOpenAI(batch_delay=0.02, batch_faults={route: list(faults)}) as server:
        metrics = run(compose(_overrides(server, job)))
        served = server.stats().get(f"batch_fault_{route}", 0)
        paid = _paid(server)
    assert served == len(faults)
    _complete(metrics, job)
    assert paid == len(read_jsonl(job / "calls.jsonl"))  # retried, not paid again


# =========================================================================== odd usage


@pytest.mark.parametrize("usage", [{"prompt_tokens": "many"}, {"prompt_tokens": None, "completion_tokens": -3},
                                   {"prompt_tokens_details": "x"}, "usage"])
def test_a_batch_reply_with_non_numeric_usage_keeps_its_answer(tmp_path, usage):
    def odd(lines: list[str]) -> list[str]:
        out = []
        for line in lines:
            item = json.loads(line)
            body = item["response"]["body"]
            body["usage"] = {**body["usage"], **usage} if isinstance(usage, dict) else usage
            out.append(json.dumps(item))
        return out

    job = tmp_path / "job"
    with FakeOpenAI(batch_delay=0.02, batch_output=odd) as server:
        metrics = run(compose(_overrides(server, job)))
    _complete(metrics, job)
    assert all(c["input_tokens"] >= 0 and c["output_tokens"] >= 0 for c in read_jsonl(job / "calls.jsonl"))
