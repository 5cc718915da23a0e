"""Chat completions posted without the SDK's request transform (``bench.llm.plain_post``).

Stock ``ChatOpenAI`` (the SDK's own ``create``) and ``ChatOpenAI`` with :class:`PlainCompletions` as
its ``client`` send the same requests to an in-process HTTP transport: every answering request of
real cases (dev.parquet, the coding and operations samples; with and without ``extra_body``), the
request after a tool call and a judge-like request. The bodies must be byte-identical and the
replies equal; errors must reach LangChain as the same exceptions.
"""

from __future__ import annotations

import json
from datetime import datetime

import openai
import pytest
from langchain_core.messages import HumanMessage, SystemMessage
from langchain_openai import ChatOpenAI

from bench.answering.request import first_messages, tools_for
from bench.config.checks import compose
from bench.data.selection import load_cases
from bench.llm import classify_error, openai_client
from bench.llm.plain_post import PlainCompletions, ordered_body
from bench.policies import FullHistory, PolicyContext
from bench.text.tokens import TokenCounter

from paths import DEV_PARQUET

DEV = DEV_PARQUET
HTTP = type(openai.DefaultHttpxClient()).__mro__[1]  # the HTTP package the SDK is built on (httpx or its fork)
http = __import__(HTTP.__module__.split(".")[0])

REPLY = {"id": "r1", "object": "chat.completion", "created": 1, "model": "m", "system_fingerprint": "fp",
         "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
             "role": "assistant", "content": None, "tool_calls": [
                 {"id": "c1", "type": "function", "function": {"name": "finish", "arguments": '{"message": "é 42"}'}},
                 {"id": "c2", "type": "function", "function": {"name": "think", "arguments": "{not json"}}]}}],
         "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12,
                   "prompt_tokens_details": {"cached_tokens": 4}}}


class Endpoint:
    """An in-process transport: records every request, answers REPLY (or ``status`` with ``error``)."""

    def __init__(self, status: int = 200, error: dict | None = None) -> None:
        self.requests: list = []
        self.status, self.error = status, error

    def __call__(self, request):
        self.requests.append(request)
        if self.status != 200:
            return http.Response(self.status, json={"error": self.error or {"message": "boom"}})
        return http.Response(200, json=REPLY)


def chat(endpoint: Endpoint, plain: bool, **settings) -> ChatOpenAI:
    llm = ChatOpenAI(model="gpt-4o-mini", base_url="http://127.0.0.1:9/v1", api_key="k", seed=0, temperature=0.0,
                     max_retries=0, max_tokens=50, http_client=openai.DefaultHttpxClient(transport=http.MockTransport(endpoint)),
                     **settings)
    if plain:
        llm.client = PlainCompletions(llm.root_client)
    return llm


@pytest.fixture(scope="module")
def requests() -> list:
    """(messages, tools) of every answering request of real cases (full history)."""
    counter = TokenCounter()
    out = []
    for overrides in (["dataset=local", f"dataset.path={DEV}", "dataset.limit=4"], ["dataset=sample"],
                      ["dataset=ops"]):
        for case in load_cases(compose(overrides).dataset, counter).cases:
            view = FullHistory(context=PolicyContext(counter=counter))(case)
            out += [(first_messages(case, view, q), tools_for(case, view)) for q in case.questions[:2]]
    assert len(out) > 30
    return out


@pytest.mark.parametrize("extra_body", [None, {"max_tokens": 7, "seed": 3, "top_k": 2}])
def test_bodies_and_replies_are_those_of_the_stock_client(requests, extra_body):
    sent, replies = {}, {}
    for plain in (False, True):
        endpoint = Endpoint()
        llm = chat(endpoint, plain, extra_body=extra_body)
        got = []
        for messages, tools in requests:
            reply = llm.bind_tools(tools).invoke(messages)
            got.append(reply)
            got.append(llm.bind_tools(tools, tool_choice="none").invoke([*messages, reply]))  # history with tool calls
            got.append(llm.invoke([SystemMessage("judge"), HumanMessage("q")]))
        sent[plain] = [r.content for r in endpoint.requests]
        replies[plain] = [r.model_dump(exclude={"id"}) for r in got]
        if plain:
            assert llm.client.posted == len(got)  # every call took the plain route
    assert sent[True] == sent[False]
    assert replies[True] == replies[False]
    first = json.loads(sent[True][0])
    assert list(first)[:3] == ["model", "stream", "messages"] and first["tools"]
    assert replies[True][0]["tool_calls"][0]["args"] == {"message": "é 42"}
    assert replies[True][0]["invalid_tool_calls"][0]["name"] == "think"
    assert replies[True][0]["usage_metadata"]["input_token_details"] == {"cache_read": 4}


@pytest.mark.parametrize("status,error,kind", [
    (429, {"message": "slow down", "type": "rate_limit"}, "retry"),
    (500, {"message": "oops"}, "retry"),
    (400, {"message": "This model's maximum context length is 8192 tokens", "code": "context_length_exceeded"},
     "overflow"),
    (401, {"message": "bad key"}, "fatal"),
])
def test_errors_reach_langchain_as_from_the_stock_client(status, error, kind):
    raised = {}
    for plain in (False, True):
        with pytest.raises(Exception) as info:
            chat(Endpoint(status, error), plain).invoke([HumanMessage("q")])
        raised[plain] = info.value
    assert type(raised[True]) is type(raised[False])
    assert str(raised[True]) == str(raised[False])
    assert classify_error(raised[True]) == classify_error(raised[False]) == kind


@pytest.mark.parametrize("extra,posted", [
    ({"stop_words": ("x", "y")}, True),  # a tuple: JSON writes it as the SDK does (an array)
    ({"when": datetime(2024, 5, 6, 7, 8, 9)}, False),  # not JSON data: the SDK's create formats it
])
def test_what_json_cannot_write_goes_to_the_sdk(extra, posted):
    sent = {}
    for plain in (False, True):
        endpoint = Endpoint()
        llm = chat(endpoint, plain, extra_body=extra)
        llm.invoke([HumanMessage("q")])
        sent[plain] = endpoint.requests[0]
    assert llm.client.posted == int(posted)
    assert sent[True].content == sent[False].content
    assert not llm.client.takes({"model": "m", "messages": [], "stream": True})
    assert not llm.client.takes({"model": "m", "messages": [], "no_such_parameter": 1})
    assert llm.client.takes({"model": "m", "messages": [{"role": "user", "content": "q"}], "timeout": 3.0})


def test_headers_are_the_sdks():
    sent = {}
    for plain in (False, True):
        endpoint = Endpoint()
        chat(endpoint, plain, default_headers={"X-Team": "a"}).invoke([HumanMessage("q")])
        sent[plain] = {k: v for k, v in endpoint.requests[0].headers.items()
                       if k != "x-stainless-raw-response"}  # the SDK's marker for its raw-response wrapper
    assert sent[True] == sent[False]
    assert sent[True]["authorization"] == "Bearer k" and sent[True]["content-type"] == "application/json"


def test_body_order_is_the_sdks():
    body = ordered_body({"tools": [], "messages": [], "temperature": 0.0, "model": "m", "stream": False,
                         "seed": 1, "extra_body": {"seed": 2, "top_k": 5}, "timeout": 3,
                         "max_completion_tokens": openai.NOT_GIVEN})
    assert list(body) == ["model", "stream", "messages", "seed", "temperature", "tools", "top_k"]
    assert body["seed"] == 2


def test_the_model_client_posts_plainly():
    client = openai_client("model", name="m", base_url="http://127.0.0.1:9/v1", api_key_env=None,
                           check_endpoint=False, cache_enabled=False)
    assert isinstance(client.llm.client, PlainCompletions)
    assert client.llm.client.client is client.llm.root_client
