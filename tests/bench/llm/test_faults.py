"""Fault tests: the real model path (``model=openai``) against a loopback server that misbehaves.

The server is ``tests/support/fake_openai.py`` (deterministic replies, so an interrupted or
retried job must end with exactly the records of an uninterrupted one). Covered here:
kill -9 mid-job then resume; a share of 429/500/timeouts; one case that always fails; an
endpoint that goes away mid-run; a request longer than the context; wrong config values;
secrets in everything a job writes or sends; ``read_tool_output`` on real offload views.
Bad input already covered elsewhere is not repeated: corrupt parquet, missing columns,
invalid JSON arguments, unpaired tool calls, unknown overrides and wrong types of
top-level and dataset keys (test_main.py, test_data.py); missing/empty key and unreachable
endpoint at start (test_agent.py).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir

from bench.runner import run
from bench.store.records import read_jsonl

from builders import sample_questions
from fake_openai import FakeOpenAI
from paths import CONF_DIR

FAILING_CASE = "acme__ledger-57@1"  # the shipped sample's case with 3 questions
FAILING_MARKER = "acme__ledger__2.3"  # appears in that case's history only
N_QUESTIONS = sample_questions()  # questions of the shipped sample


def job_cfg(*overrides: str):
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return compose("config", overrides=list(overrides))


def openai_args(url: str, *extra: str) -> list[str]:
    """Overrides of a fast model=openai job on the shipped sample against the fake server."""
    return ["model=openai", f"model.base_url={url}", "model.api_key_env=null", "cache.enabled=false",
            "model.backoff_base=0.01", "model.backoff_max=0.05", *extra]


def keys(path: Path) -> list[tuple[str, str]]:
    return [(r["case_id"], r["qid"]) for r in read_jsonl(path)]


def canonical(path: Path, drop: tuple[str, ...] = ()) -> list[str]:
    """Records as sorted canonical JSON (concurrency changes the order), without ``drop`` keys."""
    return sorted(json.dumps({k: v for k, v in r.items() if k not in drop}, sort_keys=True)
                  for r in read_jsonl(path))


def bench_cli(cwd: Path, env: dict[str, str], *args: str, **kwargs) -> subprocess.Popen | subprocess.CompletedProcess:
    full = {k: v for k, v in os.environ.items() if k not in ("HYDRA_FULL_ERROR", "OPENAI_API_KEY")}
    full.update(env)
    command = [sys.executable, "-m", "bench.main", *args]
    if kwargs.pop("background", False):
        return subprocess.Popen(command, cwd=cwd, env=full, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return subprocess.run(command, cwd=cwd, env=full, capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> Path:
    """An uninterrupted, fault-free model=openai job on the shipped sample."""
    out = tmp_path_factory.mktemp("reference")
    with FakeOpenAI() as server:
        metrics = run(job_cfg(*openai_args(server.base_url, "model.max_concurrency=8", f"output_dir={out}")))
    assert metrics["n_questions"] == N_QUESTIONS and metrics["n_errors"] == 0
    return out


# --------------------------------------------------------------------------- kill and resume


@pytest.mark.slow  # several subprocess jobs; .ci/run runs it
def test_sigkill_mid_job_then_resume_gives_the_uninterrupted_records(tmp_path, reference):
    out = tmp_path / "killed"
    # the server answers six questions, then holds every reply: the job is killed with exactly six
    # answers on disk and two requests in flight, however fast or slow the machine is
    with FakeOpenAI(pause_after=6) as server:
        args = openai_args(server.base_url, "model.max_concurrency=2")
        proc = bench_cli(tmp_path, {}, *args, f"hydra.run.dir={out}", background=True)
        deadline = time.monotonic() + 300  # a bound against a hang, not a timing the test relies on
        while (len(read_jsonl(out / "answers.jsonl")) < 6 and time.monotonic() < deadline
               and proc.poll() is None):
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
        answered = keys(out / "answers.jsonl")
        assert len(answered) == 6, len(answered)
        assert json.loads((out / "run.json").read_text())["status"] == "incomplete"

        server.resume()
        before = server.stats()["requests"]
        metrics = run(job_cfg(*args, f"resume={out}"))
        resumed_requests = server.stats()["requests"] - before

    assert metrics["n_scored"] == metrics["n_questions"] == N_QUESTIONS and metrics["n_errors"] == 0
    assert json.loads((out / "run.json").read_text())["status"] == "complete"
    for name in ("answers.jsonl", "scores.jsonl", "views.jsonl"):
        records = keys(out / name) if name != "views.jsonl" else [(r["case_id"],) for r in read_jsonl(out / name)]
        assert len(records) == len(set(records)), f"duplicates in {name}"
    assert len(keys(out / "answers.jsonl")) == N_QUESTIONS
    assert keys(out / "answers.jsonl")[: len(answered)] == answered  # nothing answered before the kill was lost
    assert resumed_requests == N_QUESTIONS - len(answered)  # and nothing answered was asked again
    assert canonical(out / "scores.jsonl") == canonical(reference / "scores.jsonl")
    assert canonical(out / "answers.jsonl", ("usage",)) == canonical(reference / "answers.jsonl", ("usage",))


# --------------------------------------------------------------------------- failing endpoints


def test_a_share_of_429_500_and_timeouts_is_retried_and_the_job_completes(tmp_path, reference):
    out = tmp_path / "flaky"
    # the client's timeout well above a loaded machine's reply time, well below the stalled one's; should a
    # loaded machine still make an answered request time out, that is one more retry, and the counts below
    # hold all the same (every request after a question's first is a retry)
    with FakeOpenAI(fail_rate=0.25, fail_kinds=("429", "500", "timeout"), timeout_s=6.0) as server:
        metrics = run(job_cfg(*openai_args(server.base_url, "model.max_concurrency=4", "model.timeout=3",
                                           "model.max_retries=6", f"output_dir={out}")))
        stats = server.stats()
    assert stats["outcome_429"] >= 2 and stats["outcome_500"] >= 2 and stats["outcome_timeout"] >= 2
    assert metrics["n_errors"] == 0 and metrics["n_scored"] == N_QUESTIONS
    assert json.loads((out / "run.json").read_text())["status"] == "complete"
    failures = stats["outcome_429"] + stats["outcome_500"] + stats["outcome_timeout"]
    retries = metrics["model_calls"]["total"]["retries"]
    assert retries == stats["requests"] - metrics["model_calls"]["total"]["calls"]  # every retry counted
    assert retries >= failures  # every failure was retried
    assert canonical(out / "scores.jsonl") == canonical(reference / "scores.jsonl")


def test_a_case_that_always_fails_is_recorded_and_the_rest_completes_then_resume_retries_it(tmp_path, reference):
    out = tmp_path / "one_bad_case"
    args = openai_args("URL", "model.max_concurrency=4", "model.max_retries=2", f"output_dir={out}")
    with FakeOpenAI(fail_marker=FAILING_MARKER) as server:
        args[1] = f"model.base_url={server.base_url}"
        metrics = run(job_cfg(*args))
        port = int(server.base_url.rsplit(":", 1)[1].split("/")[0])
    answers = read_jsonl(out / "answers.jsonl")
    failed = [a for a in answers if a["outcome"] == "error"]
    n_bad = sum(1 for a in read_jsonl(reference / "answers.jsonl") if a["case_id"] == FAILING_CASE)
    assert {a["case_id"] for a in failed} == {FAILING_CASE} and len(failed) == n_bad
    assert all("simulated permanent failure" in a["error"] and "after 2 retries" in a["error"] for a in failed)
    assert len(answers) == N_QUESTIONS and metrics["n_errors"] == n_bad
    scores = {(s["case_id"], s["qid"]): s for s in read_jsonl(out / "scores.jsonl")}
    assert all(s["verdict"] == "unscored" for (case, _), s in scores.items() if case == FAILING_CASE)
    others = [line for line in canonical(reference / "scores.jsonl") if FAILING_CASE not in line]
    assert [line for line in canonical(out / "scores.jsonl") if FAILING_CASE not in line] == others
    assert json.loads((out / "run.json").read_text())["status"] == "incomplete"

    # the endpoint recovers (same address): resume asks only the failed questions again
    with FakeOpenAI(port=port) as server:
        metrics = run(job_cfg(*args[:-1], f"resume={out}"))
        assert server.stats()["requests"] == n_bad
    assert metrics["n_errors"] == 0 and json.loads((out / "run.json").read_text())["status"] == "complete"
    assert canonical(out / "scores.jsonl") == canonical(reference / "scores.jsonl")


def test_an_endpoint_that_goes_away_mid_run_leaves_a_resumable_job(tmp_path, reference):
    out = tmp_path / "gone"
    args = openai_args("URL", "model.max_concurrency=2", "model.max_retries=1", "model.timeout=2",
                       f"output_dir={out}")
    with FakeOpenAI(max_requests=12) as server:  # GET /models + 11 chat requests, then it stops
        args[1] = f"model.base_url={server.base_url}"
        port = int(server.base_url.rsplit(":", 1)[1].split("/")[0])
        metrics = run(job_cfg(*args))
    answers = read_jsonl(out / "answers.jsonl")
    assert len(answers) == N_QUESTIONS and 0 < metrics["n_errors"] < N_QUESTIONS
    assert json.loads((out / "run.json").read_text())["status"] == "incomplete"
    with FakeOpenAI(port=port) as server:
        metrics = run(job_cfg(*args[:-1], f"resume={out}"))
    assert metrics["n_errors"] == 0 and json.loads((out / "run.json").read_text())["status"] == "complete"
    assert canonical(out / "scores.jsonl") == canonical(reference / "scores.jsonl")


def test_a_request_longer_than_the_context_is_an_outcome_and_is_not_retried(tmp_path):
    out = tmp_path / "overflow"
    with FakeOpenAI(max_context=3200) as server:
        metrics = run(job_cfg(*openai_args(server.base_url, "model.max_concurrency=4", f"output_dir={out}")))
        stats = server.stats()
    answers = read_jsonl(out / "answers.jsonl")
    overflow = [a for a in answers if a["outcome"] == "context_overflow"]
    assert overflow and len(overflow) < N_QUESTIONS  # the long cases overflow, the short ones are answered
    assert all("maximum context length" in a["error"] for a in overflow)
    assert metrics["n_errors"] == 0
    assert stats["outcome_overflow"] == len(overflow)  # one request per overflowing question: no retry
    assert stats["outcome_ok"] == N_QUESTIONS - len(overflow) == stats["requests"] - len(overflow)


# --------------------------------------------------------------------------- bad config values


@pytest.mark.parametrize("args,message", [
    # the two model=openai jobs import the model SDKs (~4 s each): slow, run by .ci/run
    pytest.param(["model=openai", "model.max_concurrency=abc"], "abc", marks=pytest.mark.slow),
    pytest.param(["model=openai", "model.timeout=soon"], "soon", marks=pytest.mark.slow),
    (["arm=nlatest", "arm.n=-3"], "arm.n must be >= 0"),
    (["arm=nlatest", "arm.n=abc"], "arm.n: expected int"),
    (["arm=compact", "mechanism.tail_fraction=2"], "mechanism.tail_fraction"),
    (["tokenizer.encoding=nope"], "unknown tiktoken encoding 'nope'"),
])
def test_wrong_config_values_give_one_clear_line_and_no_traceback(tmp_path, args, message):
    done = bench_cli(tmp_path, {"OPENAI_API_KEY": "sk-fake"}, *args, f"output_dir={tmp_path / 'job'}",
                     "model.check_endpoint=false" if "model=openai" in args else "seed=0")
    assert done.returncode != 0
    assert "Traceback" not in done.stderr, done.stderr
    assert message in done.stderr.splitlines()[-1], done.stderr  # the line the user sees says what is wrong
    assert not (tmp_path / "job" / "answers.jsonl").exists()


# --------------------------------------------------------------------------- secrets


@pytest.mark.slow  # several subprocess jobs; .ci/run runs it
def test_no_file_log_or_trace_of_a_job_contains_the_key(tmp_path, monkeypatch):
    from langfuse_receiver import Receiver

    secret = "sk-bench-SECRET-" + "7f3a" * 6
    langfuse_secret = "sk-lf-SECRET-" + "c0de" * 6
    job = tmp_path / "job"
    receiver = Receiver()
    try:
        # a careless server: it requires the key and quotes the Authorization header in its errors
        with FakeOpenAI(api_key=secret, echo_auth=True, fail_marker=FAILING_MARKER, marker_status=400) as server:
            env = {"OPENAI_API_KEY": secret, "LANGFUSE_PUBLIC_KEY": "pk-lf-faults", "LANGFUSE_SECRET_KEY": langfuse_secret,
                   "LANGFUSE_BASE_URL": receiver.url}
            done = bench_cli(tmp_path, env, "model=openai", f"model.base_url={server.base_url}", "judge=llm",
                             "arm=compact", "mechanism=offload", "summarizer=openai", "dataset.limit=3",
                             "tracing.langfuse=true", f"cache.path={job}/cache.sqlite", f"hydra.run.dir={job}")
            assert server.stats().get("outcome_marker", 0) >= 1  # the key was echoed back at least once
    finally:
        receiver.close()
    assert done.returncode == 0, done.stderr
    failed = [a for a in read_jsonl(job / "answers.jsonl") if a["outcome"] == "error"]
    assert failed and all("***" in a["error"] for a in failed)  # the echoed key was scrubbed
    assert receiver.spans  # traces were sent
    files = [p for p in job.rglob("*") if p.is_file()]
    assert {"main.log", "config.yaml", "calls.jsonl", "cache.sqlite"} <= {p.name for p in files}
    for value in (secret, langfuse_secret):
        for path in files:
            assert value.encode() not in path.read_bytes(), path
        assert value not in done.stdout + done.stderr
        assert value not in json.dumps([receiver.spans, receiver.items, receiver.scores, receiver.datasets])
    assert secret not in json.dumps(receiver.requests)  # no request to Langfuse carried the model key


# --------------------------------------------------------------------------- read_tool_output


def test_read_tool_output_opens_only_this_views_handles_on_real_offload_views(dev_parquet):
    from bench.answering.agent import READ_TOOL, LangGraphAnswerer
    from bench.config.arms import build_policy
    from bench.data.selection import load_cases
    from bench.text.tokens import TokenCounter

    counter = TokenCounter()
    base = ["dataset=local", f"dataset.path={dev_parquet}", "dataset.limit=3", "arm=compact"]
    cases = load_cases(job_cfg(*base).dataset, counter).cases
    offload = build_policy(job_cfg(*base, "mechanism=offload"), counter)
    collapse = build_policy(job_cfg(*base, "mechanism=collapse"), counter)
    mine, other_case, other_arm = offload(cases[0]), offload(cases[1]), collapse(cases[0])
    assert mine.store and other_case.store and other_arm.store
    own = sorted(mine.store)[0]
    foreign = sorted(set(other_case.store) - set(mine.store))[0]
    foreign_arm = sorted(set(other_arm.store) - set(mine.store))[0]
    attempts = [own, foreign, foreign_arm, f"../{own}", f"/tmp/{own}", "../../etc/passwd", f"{own}/.."]
    seen: list[list[dict]] = []

    def script(body):
        messages = body["messages"]
        if messages[-1]["role"] == "user":
            return {"tool_calls": [{"id": f"c{i}", "type": "function", "function": {
                "name": READ_TOOL, "arguments": json.dumps({"handle": h})}} for i, h in enumerate(attempts)]}
        seen.append([m for m in messages if m["role"] == "tool"])
        return "done"

    with FakeOpenAI(reply=script, use_finish=False) as server:
        answerer = LangGraphAnswerer(name="fake", base_url=server.base_url, api_key_env=None, cache_enabled=False)
        answer = answerer.answer(cases[0], mine, cases[0].questions[0])
    replies = {m["tool_call_id"]: m["content"] for m in seen[0]}
    assert replies["c0"] == mine.store[own] and answer.retrievals == [own]
    for i in (1, 2):  # another case's handle, the same case's handle under another arm config
        assert replies[f"c{i}"].startswith("ERROR: no stored output has the handle")
    for i in range(3, len(attempts)):  # anything path-like
        assert replies[f"c{i}"].startswith("ERROR") and "is not a handle" in replies[f"c{i}"]
    assert answer.answer == "done"


# --------------------------------------------------------------------------- scheduling and provenance


def test_questions_and_judgings_are_the_units_of_work(tmp_path):
    """One case's questions run at once (not one after another), LLM judgings fill free slots."""
    out = tmp_path / "units"
    # the first three requests wait for each other (the server holds their replies until all three
    # arrived): only a job that sends a case's questions together can fill the three slots (warm
    # prefixes off: they send a view's first question alone, by design)
    with FakeOpenAI(hold=lambda body: ("first", 3)) as server:
        args = openai_args(server.base_url, "model.max_concurrency=3", "judge=llm", "judge.max_concurrency=3",
                           "dataset.limit=2", "model.warm_prefix=false", f"output_dir={out}")
        metrics = run(job_cfg(*args))
        stats = server.stats()
    answers = read_jsonl(out / "answers.jsonl")
    assert metrics["n_errors"] == 0 and metrics["n_scored"] == metrics["n_questions"] == len(answers)
    # 2 cases on 3 slots: with cases as the units at most 2 requests would ever be in flight
    assert len(answers) >= 3 and stats["peak_concurrency"] == 3 and stats.get("hold_timeouts", 0) == 0
    calls = metrics["model_calls"]
    assert calls["answer"]["calls"] == len(answers) and calls["judge"]["calls"] >= 1
    assert len(keys(out / "scores.jsonl")) == len(set(keys(out / "scores.jsonl")))


def test_prompt_hash_is_recorded_when_the_prompt_shapes_the_views():
    from types import SimpleNamespace

    from bench.config.arms import build_policy
    from bench.policies import declare
    from bench.runner.provenance import provenance
    from bench.text.tokens import TokenCounter

    selection = SimpleNamespace(source="x", rows_read=0, skipped=0, n_cases=0, rejected=[])
    hashes = {}
    for name, overrides in {"full": ["arm=full"], "nlatest": ["arm=nlatest", "arm.n=10"],
                            "matched": ["arm=nlatest", "arm.match=compact"], "compact": ["arm=compact"]}.items():
        cfg = job_cfg(*overrides)
        declaration = declare(build_policy(cfg, TokenCounter())).to_dict()  # as the job records it
        hashes[name] = provenance(cfg, selection, "incomplete", "now", case_set_hash="h",
                                  policy=declaration)["prompt_hash"]
    assert hashes["full"] is None and hashes["nlatest"] is None
    assert hashes["matched"] is not None and hashes["matched"] == hashes["compact"]
