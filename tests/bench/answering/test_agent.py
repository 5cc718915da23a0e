"""The LangGraph answering agent and the model client, with a scripted fake chat model.

No network: ``ScriptedChatModel`` replays AI messages (or raises errors) in order and
records every request, so each rule of the agent loop and of the client (cache, retries,
context overflow, accounting, fail-fast checks) is tested deterministically.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from bench.answering.agent import READ_TOOL, THINK_REPLY, LangGraphAnswerer
from bench.cache import ResponseCache
from bench.llm import (
    ModelSetupError,
    call_sink,
    classify_error,
    openai_client,
)
from bench.policies import LLMSummarizer
from bench.store.schema import Case, Question, View
from bench.text.formats import placeholder

from scripted import scripted_client

# --------------------------------------------------------------------------- fakes


def call(name: str, args: dict[str, Any], call_id: str) -> AIMessage:
    return AIMessage("", tool_calls=[{"name": name, "args": args, "id": call_id, "type": "tool_call"}])


def api_error(cls, status: int, message: str, code: str | None = None):
    response = httpx.Response(status, request=httpx.Request("POST", "http://fake/v1/chat/completions"))
    return cls(message, response=response, body={"error": {"message": message, "code": code}})


TOOLS = [
    {"type": "function", "function": {"name": name, "description": name, "parameters": {
        "type": "object", "properties": {key: {"type": "string"}}}}}
    for name, key in (("execute_bash", "command"), ("str_replace_editor", "command"), ("think", "thought"),
                      ("task_tracker", "command"), ("finish", "message"))
]


def make_case(case_id: str = "acme@0") -> Case:
    history = [
        HumanMessage("Fix the bug."),
        AIMessage("", tool_calls=[{"name": "execute_bash", "args": {"command": "pytest"}, "id": "c1",
                                   "type": "tool_call"}]),
        ToolMessage(placeholder("h-pytest-1"), tool_call_id="c1", name="execute_bash"),
    ]
    question = Question(qid=f"{case_id}:test_counts", type="test_counts",
                        question="The 1st time you ran `pytest`, how many tests passed and how many failed?",
                        reference={"passed": 3, "failed": 1}, evidence_keys=["3 passed"], evidence_messages=[2])
    return Case(case_id=case_id, instance_id="acme", repo="acme/widgets", source_row=0, trajectory_id="t",
                system_prompt="You are a coding agent.", messages=history, tools=TOOLS, model_patch="",
                repo_root="/workspace/acme", questions=[question])


def make_view(case: Case, store: dict[str, str] | None = None, arm: str = "compact", guidance=None) -> View:
    return View(case_id=case.case_id, arm=arm, messages=list(case.messages), kept_tokens=10, full_messages=3,
                full_tokens=10, store={"h-pytest-1": "== 1 failed, 3 passed in 0.1s =="} if store is None else store,
                guidance=guidance)


# --------------------------------------------------------------------------- the agent loop


def test_tool_call_then_read_tool_output_then_finish():
    client = scripted_client(
        call("execute_bash", {"command": "pytest"}, "a1"),
        call(READ_TOOL, {"handle": "h-pytest-1"}, "a2"),
        call("finish", {"message": "3 passed, 1 failed"}, "a3"),
    )
    case = make_case()
    answer = LangGraphAnswerer(client=client).answer(case, make_view(case, guidance="Open stored outputs."),
                                                     case.questions[0])
    assert answer.outcome == "answered" and answer.answer == "3 passed, 1 failed"
    assert answer.retrievals == ["h-pytest-1"]
    assert answer.usage["calls"] == 3 and answer.usage["steps"] == 3 and answer.usage["step_limit"] == 0
    assert answer.usage["input_tokens"] == 300 and answer.usage["cached_tokens"] == 120
    assert answer.usage["output_tokens"] == 30
    requests = client.llm.requests
    first_messages, first_kwargs = requests[0]
    assert first_messages[0].type == "system"
    assert first_messages[0].content == "You are a coding agent.\n\nOpen stored outputs."
    assert first_messages[-1].type == "human" and first_messages[-1].content == case.questions[0].question
    assert first_messages[1:-1] == case.messages
    names = [t["function"]["name"] for t in first_kwargs["tools"]]
    assert names == ["execute_bash", "str_replace_editor", "think", "task_tracker", "finish", READ_TOOL]
    shutdown = requests[1][0][-1]
    assert isinstance(shutdown, ToolMessage) and "sandbox" in shutdown.content and "shut down" in shutdown.content
    opened = requests[2][0][-1]
    assert opened.content == "== 1 failed, 3 passed in 0.1s ==" and opened.tool_call_id == "a2"


def test_plain_text_reply_is_the_answer_and_no_read_tool_without_store():
    client = scripted_client(AIMessage("3 passed and 1 failed."))
    case = make_case()
    answer = LangGraphAnswerer(client=client).answer(case, make_view(case, store={}), case.questions[0])
    assert answer.answer == "3 passed and 1 failed." and answer.usage["steps"] == 1
    assert READ_TOOL not in [t["function"]["name"] for t in client.llm.requests[0][1]["tools"]]


def test_think_acknowledges_and_finish_without_message_uses_the_text():
    client = scripted_client(
        call("think", {"thought": "recall the run"}, "t1"),
        call("task_tracker", {"command": "view"}, "t2"),
        AIMessage("It was 3 passed, 1 failed.", tool_calls=[{"name": "finish", "args": {}, "id": "t3",
                                                              "type": "tool_call"}]),
    )
    case = make_case()
    answer = LangGraphAnswerer(client=client).answer(case, make_view(case), case.questions[0])
    assert answer.answer == "It was 3 passed, 1 failed."
    assert client.llm.requests[1][0][-1].content == THINK_REPLY
    assert "`task_tracker` cannot run" in client.llm.requests[2][0][-1].content


@pytest.mark.parametrize("handle,error", [
    ("h-unknown", "no stored output has the handle"),
    ("../outputs/h-pytest-1", "is not a handle"),
    ("/etc/passwd", "is not a handle"),
    ("h-other-case", "no stored output has the handle"),  # another case's / arm's handle
    ("", "needs a `handle`"),
])
def test_read_tool_output_opens_only_this_views_handles(handle, error):
    client = scripted_client(call(READ_TOOL, {"handle": handle}, "r1"), AIMessage("I don't know."))
    case = make_case()
    other = make_view(make_case("other@1"), store={"h-other-case": "secret of another case"})
    assert other.store  # exists, but belongs to another view
    answer = LangGraphAnswerer(client=client).answer(case, make_view(case), case.questions[0])
    reply = client.llm.requests[1][0][-1]
    assert isinstance(reply, ToolMessage) and reply.content.startswith("ERROR") and error in reply.content
    assert answer.retrievals == [] and answer.answer == "I don't know."


def test_read_tool_output_without_a_store_is_an_error_not_a_crash():
    client = scripted_client(call(READ_TOOL, {"handle": "h-pytest-1"}, "r1"), AIMessage("unknown"))
    case = make_case()
    answer = LangGraphAnswerer(client=client).answer(case, make_view(case, store={}), case.questions[0])
    assert "not available" in client.llm.requests[1][0][-1].content and answer.retrievals == []


def test_step_limit_then_one_answer_without_tools():
    def forced(messages, kwargs):
        return AIMessage("Probably 3 passed." if kwargs.get("tool_choice") == "none" else "")

    client = scripted_client(*[call("execute_bash", {"command": f"ls {i}"}, f"s{i}") for i in range(3)], forced)
    case = make_case()
    answer = LangGraphAnswerer(client=client, max_steps=3).answer(case, make_view(case), case.questions[0])
    assert answer.answer == "Probably 3 passed." and answer.usage["step_limit"] == 1
    assert answer.usage["calls"] == 4 and client.llm.requests[-1][1]["tool_choice"] == "none"


def test_step_limit_without_final_call_gives_an_empty_answer():
    client = scripted_client(call("execute_bash", {"command": "ls"}, "s1"))
    case = make_case()
    agent = LangGraphAnswerer(client=client, max_steps=2, final_answer_at_limit=False)
    answer = agent.answer(case, make_view(case), case.questions[0])
    assert answer.outcome == "answered" and answer.answer == "" and answer.usage["step_limit"] == 1
    assert len(client.llm.requests) == 2


def test_invalid_tool_arguments_get_a_tool_error():
    bad = AIMessage("", invalid_tool_calls=[{"name": "execute_bash", "args": "{not json", "id": "b1",
                                             "error": "bad json", "type": "invalid_tool_call"}])
    client = scripted_client(bad, AIMessage("done"))
    case = make_case()
    answer = LangGraphAnswerer(client=client).answer(case, make_view(case), case.questions[0])
    assert answer.answer == "done"
    assert "not valid JSON" in client.llm.requests[1][0][-1].content


def test_the_graph_keeps_no_state_between_answers():
    """No checkpointer: each answer's state lives in its own run only (nothing piles up per question)."""
    client = scripted_client(call("think", {"thought": "x"}, "k1"), AIMessage("ok"), AIMessage("again"))
    case = make_case()
    agent = LangGraphAnswerer(client=client)
    assert agent.graph.checkpointer is None
    first = agent.answer(case, make_view(case), case.questions[0])
    second = agent.answer(case, make_view(case), case.questions[0])
    assert (first.answer, first.usage["steps"]) == ("ok", 2)
    assert (second.answer, second.usage["steps"]) == ("again", 1)  # not continued from the first
    assert len(client.llm.requests[2][0]) == len(client.llm.requests[0][0])  # the same first messages


# --------------------------------------------------------------------------- errors and retries


def test_context_overflow_is_recorded_and_not_retried():
    error = api_error(openai.BadRequestError, 400, "This model's maximum context length is 8192 tokens. "
                      "However, you requested 9050 tokens.", code="context_length_exceeded")
    client = scripted_client(error)
    case = make_case()
    answer = LangGraphAnswerer(client=client).answer(case, make_view(case), case.questions[0])
    assert answer.outcome == "context_overflow" and "maximum context length" in answer.error
    assert len(client.llm.requests) == 1


@pytest.mark.parametrize("error,kind", [
    (api_error(openai.BadRequestError, 400, "Requested tokens (9000) exceed context window of 8192"), "overflow"),
    (api_error(openai.BadRequestError, 400, "prompt is too long: 200000 tokens > 131072 maximum"), "overflow"),
    (api_error(openai.RateLimitError, 429, "slow down"), "retry"),
    (api_error(openai.InternalServerError, 503, "overloaded"), "retry"),
    (api_error(openai.BadRequestError, 400, "unknown parameter foo"), "fatal"),
    (api_error(openai.AuthenticationError, 401, "bad key"), "fatal"),
    (openai.APITimeoutError(request=httpx.Request("POST", "http://fake")), "retry"),
    (ValueError("bug"), "fatal"),
])
def test_error_classification(error, kind):
    assert classify_error(error) == kind


def test_transient_errors_are_retried_with_backoff():
    client = scripted_client(api_error(openai.RateLimitError, 429, "rate limited"),
                             api_error(openai.InternalServerError, 500, "boom"), AIMessage("3 passed"))
    case = make_case()
    answer = LangGraphAnswerer(client=client).answer(case, make_view(case), case.questions[0])
    assert answer.outcome == "answered" and answer.answer == "3 passed"
    assert answer.usage["retries"] == 2 and answer.usage["calls"] == 1


def test_a_call_that_keeps_failing_is_an_error_answer_with_the_reason():
    client = scripted_client(api_error(openai.InternalServerError, 502, "bad gateway"), max_retries=2)
    case = make_case()
    answer = LangGraphAnswerer(client=client).answer(case, make_view(case), case.questions[0])
    assert answer.outcome == "error" and "bad gateway" in answer.error and "after 2 retries" in answer.error
    assert len(client.llm.requests) == 3


# --------------------------------------------------------------------------- cache and accounting


def test_cache_serves_a_repeated_question_with_zero_calls_and_ignores_the_arm(tmp_path):
    cache = ResponseCache(tmp_path / "responses.sqlite")
    script = [call(READ_TOOL, {"handle": "h-pytest-1"}, "x1"), call("finish", {"message": "3 passed"}, "x2")]
    case = make_case()
    records: list[dict] = []
    first = scripted_client(*script, cache=cache)
    with call_sink(records.append):
        a1 = LangGraphAnswerer(client=first).answer(case, make_view(case, arm="compact"), case.questions[0])
    second = scripted_client(ValueError("must not be called"), cache=cache)
    with call_sink(records.append):
        a2 = LangGraphAnswerer(client=second).answer(case, make_view(case, arm="nlatest"), case.questions[0])
    assert second.llm.requests == []
    assert (a1.answer, a1.retrievals) == (a2.answer, a2.retrievals) == ("3 passed", ["h-pytest-1"])
    assert a1.usage["calls"] == 2 and a1.usage["cache_hits"] == 0
    assert a2.usage["calls"] == 0 and a2.usage["cache_hits"] == 2
    assert a2.usage["input_tokens"] == a1.usage["input_tokens"]  # tokens of the replies used
    assert [r["cached"] for r in records] == [False, False, True, True]
    assert {r["arm"] for r in records} == {"compact", "nlatest"} and all(r["kind"] == "answer" for r in records)


def test_cache_key_changes_with_what_changes_the_reply():
    case = make_case()
    client = scripted_client(AIMessage("x"))
    base = client.request(case.messages, TOOLS)
    from bench.cache import request_key

    keys = {request_key(base)}
    for change in ({"model": "other"}, {"endpoint": "fake://other"}, {"params": {"temperature": 0, "seed": 1}},
                   {"tools": TOOLS[:2]}, {"messages": base["messages"][:1]}):
        keys.add(request_key({**base, **change}))
    assert len(keys) == 6
    renamed = [m.model_copy(update={"id": "run-123"}) for m in case.messages]
    assert request_key(client.request(renamed, TOOLS)) == request_key(base)  # LangChain run ids do not count


def test_summarizer_goes_through_the_cache(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    case = make_case()
    client = scripted_client(AIMessage("1. Primary request: fix the bug."), cache=cache, kind="summarizer")
    summarizer = LLMSummarizer(client=client)
    text, usage = summarizer.summarize(case.messages, "Summarize in sections.")
    assert text == "1. Primary request: fix the bug." and usage["calls"] == 1 and summarizer.name == "llm:scripted"
    sent = client.llm.requests[0][0]
    assert sent[0].type == "system" and sent[-1].content == "Summarize in sections." and sent[1:-1] == case.messages
    again, usage2 = LLMSummarizer(client=scripted_client(ValueError("no"), cache=cache, kind="summarizer")).summarize(
        case.messages, "Summarize in sections.")
    assert again == text and usage2["calls"] == 0 and usage2["cache_hits"] == 1


def test_transcript_input_sends_one_user_message():
    client = scripted_client(AIMessage("summary"))
    LLMSummarizer(client=client, input="transcript").summarize(make_case().messages, "PROMPT")
    sent = client.llm.requests[0][0]
    assert [m.type for m in sent] == ["system", "human"]
    assert "### TOOL RESULT (execute_bash)" in sent[1].content and sent[1].content.endswith("PROMPT")


def test_concurrency_limit_holds(tmp_path):
    """At most two calls at once, and two do run together: each call waits for a partner (a
    barrier of two), which only a limit of at least two lets in, however loaded the machine is."""
    active, peak = [0], [0]
    lock = threading.Lock()
    pairs = threading.Barrier(2, timeout=120)  # a bound against a hang (limit 1): the test then fails

    def slow(messages, kwargs):
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
        pairs.wait()
        with lock:
            active[0] -= 1
        return AIMessage(str(len(messages)))

    client = scripted_client(slow, max_concurrency=2)
    threads = [threading.Thread(target=client.chat, args=([HumanMessage(f"q{i}")],)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert peak[0] == 2


# --------------------------------------------------------------------------- keys and fail-fast checks


def test_missing_or_empty_key_fails_with_a_clear_message(monkeypatch):
    monkeypatch.delenv("BENCH_TEST_KEY", raising=False)
    with pytest.raises(ModelSetupError, match="BENCH_TEST_KEY is not set"):
        openai_client("model", name="m", api_key_env="BENCH_TEST_KEY")
    monkeypatch.setenv("BENCH_TEST_KEY", "  ")
    with pytest.raises(ModelSetupError, match="BENCH_TEST_KEY is empty"):
        openai_client("judge", name="m", api_key_env="BENCH_TEST_KEY")


def test_key_is_never_in_repr_or_params(monkeypatch, tmp_path):
    monkeypatch.setenv("BENCH_TEST_KEY", "sk-test-repr-SECRET")
    client = openai_client("model", name="m", base_url="http://127.0.0.1:9/v1", api_key_env="BENCH_TEST_KEY",
                           cache_path=str(tmp_path / "c.sqlite"))
    assert "SECRET" not in repr(client) and "SECRET" not in str(client.params) and "SECRET" not in repr(client.llm)


def test_unreachable_endpoint_fails_fast(monkeypatch):
    monkeypatch.setenv("BENCH_TEST_KEY", "sk-test")
    client = openai_client("model", name="m", base_url="http://127.0.0.1:9/v1", api_key_env="BENCH_TEST_KEY",
                           cache_enabled=False)
    with pytest.raises(ModelSetupError, match="cannot reach the endpoint http://127.0.0.1:9/v1"):
        client.preflight()


def _bench(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    full_env = {k: v for k, v in os.environ.items() if k not in ("HYDRA_FULL_ERROR", "OPENAI_API_KEY")}
    return subprocess.run([sys.executable, "-m", "bench.main", *args], cwd=cwd, env={**full_env, **env},
                          capture_output=True, text=True, timeout=120)


@pytest.mark.slow  # one subprocess job per case; .ci/run runs it
@pytest.mark.parametrize("env,args,message", [
    ({}, [], "OPENAI_API_KEY is not set"),
    ({"OPENAI_API_KEY": ""}, [], "OPENAI_API_KEY is empty"),
    ({"OPENAI_API_KEY": "sk-test-cli-SECRET"}, ["model.base_url=http://127.0.0.1:9/v1"], "cannot reach the endpoint"),
    ({"OPENAI_API_KEY": "sk-test-cli-SECRET"}, ["model.check_endpoint=false", "judge=llm",
                                                "judge.api_key_env=BENCH_NO_SUCH_VAR"], "BENCH_NO_SUCH_VAR is not set"),
])
def test_cli_fails_fast_before_any_case_work(tmp_path, env, args, message):
    out = tmp_path / "job"
    done = _bench(tmp_path, env, "model=openai", f"output_dir={out}", f"cache.path={tmp_path}/c.sqlite", *args)
    assert done.returncode != 0 and message in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    assert not (out / "cases.jsonl").exists()  # no case work
    assert "SECRET" not in done.stderr + done.stdout


def test_a_plain_answer_at_the_last_step_is_not_the_step_limit():
    client = scripted_client(call("think", {"thought": "x"}, "p1"), AIMessage("3 passed"))
    case = make_case()
    answer = LangGraphAnswerer(client=client, max_steps=2).answer(case, make_view(case), case.questions[0])
    assert answer.answer == "3 passed" and answer.usage["step_limit"] == 0 and answer.usage["steps"] == 2


def test_a_reply_cut_by_the_token_limit_under_structured_output_is_still_a_reply():
    from openai.types.chat import ChatCompletion

    completion = ChatCompletion.model_validate({
        "id": "x", "object": "chat.completion", "created": 0, "model": "m",
        "choices": [{"index": 0, "finish_reason": "length",
                     "message": {"role": "assistant", "content": '{"verdict": "corr'}}],
        "usage": {"prompt_tokens": 50, "completion_tokens": 8, "total_tokens": 58}})
    client = scripted_client(openai.LengthFinishReasonError(completion=completion))
    reply, record = client.chat([HumanMessage("grade")])
    assert reply.content == '{"verdict": "corr' and record["output_tokens"] == 8 and record["input_tokens"] == 50
    assert len(client.llm.requests) == 1


# --------------------------------------------------------------------------- public APIs only

def test_the_client_uses_stock_chat_openai():
    """Requests go through langchain-openai's own ChatOpenAI (no subclass, no private names)."""
    from langchain_openai import ChatOpenAI

    client = openai_client("model", name="m", base_url="http://127.0.0.1:9/v1", api_key_env=None,
                           check_endpoint=False, cache_enabled=False)
    assert type(client.llm) is ChatOpenAI


def test_a_finish_only_reply_ends_the_run_without_the_tools_node():
    """`finish` alone ends the run in the agent node (one model call, no tool execution);
    `finish` next to another call still goes through the tools node, which replies to both."""
    case = make_case()
    answerer = LangGraphAnswerer(client=scripted_client(call("finish", {"message": "3 passed"}, "f1")))
    ran: list[str] = []
    real = answerer._tool_reply
    answerer._tool_reply = lambda name, args, store, profile: (ran.append(name), real(name, args, store, profile))[1]
    answer = answerer.answer(case, make_view(case), case.questions[0])
    assert (answer.answer, answer.outcome, answer.usage["calls"], answer.usage["steps"]) == ("3 passed", "answered", 1, 1)
    assert ran == [] and answer.usage["step_limit"] == 0

    both = AIMessage("", tool_calls=[{"name": "execute_bash", "args": {"command": "ls"}, "id": "b1", "type": "tool_call"},
                                     {"name": "finish", "args": {"message": "done"}, "id": "b2", "type": "tool_call"}])
    answerer = LangGraphAnswerer(client=scripted_client(both))
    answerer._tool_reply = lambda name, args, store, profile: (ran.append(name), real(name, args, store, profile))[1]
    answer = answerer.answer(case, make_view(case), case.questions[0])
    assert answer.answer == "done" and answer.usage["calls"] == 1 and ran == ["execute_bash", "finish"]


def test_a_run_that_fails_keeps_the_accounting_of_its_completed_steps():
    # a run that fails after a first call: that call's record comes from the last streamed state
    client = scripted_client(call("think", {"thought": "x"}, "t1"), ValueError("boom"), max_retries=0)
    case = make_case()
    answer = LangGraphAnswerer(client=client).answer(case, make_view(case), case.questions[0])
    assert answer.outcome == "error" and "boom" in answer.error and answer.usage["calls"] == 1
