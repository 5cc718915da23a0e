"""bench.wire: keys, HTTP bodies and job-file lines spliced from per-message memoized JSON
are byte-identical to encoding the whole thing at once (synthetic edge cases and real
histories), and the memo notices replaced content."""

from __future__ import annotations

import json

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage, messages_to_dict

from bench import wire
from bench.cache import request_key
from bench.store import JobStore
from bench.wire import canonical_message, chat_body, record_line, request_key_of

TOOLS = [{"type": "function", "function": {"name": "finish", "description": "end", "parameters": {
    "type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]}}}]


def tricky_history() -> list:
    """Messages exercising every branch of the encoders: names, list content, tool calls,
    invalid tool calls, non-ASCII and JSON-hostile text."""
    return [
        SystemMessage("système: «quotes» \"and\" \\backslashes\\ \u2028 line sep"),
        HumanMessage([{"type": "text", "text": "part one"}, {"type": "text", "text": "deux 🎉"}], name="alice"),
        AIMessage("", tool_calls=[{"name": "execute_bash", "args": {"command": "ls -la\n\tpwd", "n": 3}, "id": "c1"},
                                  {"name": "think", "args": {"thought": "ünïcödé"}, "id": "c2"}]),
        ToolMessage("total 0\r\n\x1b[32mok\x1b[0m", tool_call_id="c1", name="execute_bash"),
        ToolMessage("Your thought has been logged.", tool_call_id="c2", name="think"),
        AIMessage("plain text", invalid_tool_calls=[{"name": "finish", "args": "{not json", "id": "c3",
                                                     "error": "bad", "type": "invalid_tool_call"}]),
        HumanMessage(""),
    ]


def head(tools=None, tool_choice=None) -> dict:
    request = {"model": "m", "endpoint": "http://x/v1", "params": {"seed": 0, "temperature": 0.0}, "tools": tools or []}
    if tool_choice is not None:
        request["tool_choice"] = tool_choice
    return request


@pytest.mark.parametrize("tool_choice", [None, "none"])
def test_the_spliced_cache_key_is_the_whole_request_key(tool_choice):
    messages = tricky_history()
    whole = request_key({**head(TOOLS, tool_choice), "messages": [canonical_message(m) for m in messages]})
    assert request_key_of(head(TOOLS, tool_choice), messages) == whole
    assert request_key_of(head(TOOLS, tool_choice), messages) == whole  # again, from the memo
    assert request_key_of(head(TOOLS, tool_choice), []) == request_key({**head(TOOLS, tool_choice), "messages": []})


def test_the_spliced_body_is_what_the_openai_sdk_encodes():
    from langchain_openai import ChatOpenAI
    from openai._utils._json import openapi_dumps

    llm = ChatOpenAI(model="m", api_key="none", base_url="http://127.0.0.1:9/v1", seed=1, temperature=0.0,
                     max_tokens=9)
    bound_kwargs = llm.bind_tools(TOOLS, tool_choice="auto").kwargs
    messages = tricky_history()
    whole = llm._get_request_payload(messages, **bound_kwargs)
    empty = llm._get_request_payload([], **bound_kwargs)
    assert list(empty) == list(whole)  # same keys in the same order ("messages" before max_completion_tokens)
    assert chat_body(empty, messages) == openapi_dumps(whole)
    assert chat_body(empty, messages) == openapi_dumps(whole)  # memoized


def test_the_spliced_record_line_is_what_the_store_writes():
    messages = tricky_history()
    record = {"case_id": "c@1", "arm": "full", "messages": [], "evidence": {"q1": {"visible": True}}}
    expected = JobStore.encode({**record, "messages": messages_to_dict(messages)})
    assert record_line(record, messages) == expected
    assert json.loads(record_line(record, messages))["messages"] == messages_to_dict(messages)


def test_a_replaced_content_is_encoded_again():
    message = HumanMessage("before")
    first = wire.canonical_json(message)
    message.content = "after"  # replaced (a new string object): the memo entry is stale
    assert wire.canonical_json(message) != first
    assert json.loads(wire.canonical_json(message))["content"] == "after"
    assert json.loads(wire.openai_json(message))["content"] == "after"


def test_the_memo_is_emptied_past_its_budget(monkeypatch):
    memo = wire._Memo(limit=50)
    monkeypatch.setattr(wire, "_MEMO", memo)
    messages = [HumanMessage("x" * 30) for _ in range(3)]
    for message in messages:
        wire.canonical_json(message)
    assert memo.chars < 50 and len(memo.entries) < 3  # emptied once it held more than 50 characters
    assert json.loads(wire.canonical_json(messages[0]))["content"] == "x" * 30  # still correct afterwards


def test_real_histories_splice_byte_for_byte(dev_parquet):
    """Every dev.parquet case: key, body and record line equal whole-request encoding."""
    from langchain_openai import ChatOpenAI
    from omegaconf import OmegaConf
    from openai._utils._json import openapi_dumps

    from bench.data import load_cases
    from bench.tokens import TokenCounter

    cfg = OmegaConf.create({"source": "local", "path": str(dev_parquet), "format": "auto", "limit": None,
                            "filters": {"resolved": None, "exit_status": None, "one_per_repo": False,
                                        "min_messages": 0, "max_messages": None, "min_tokens": 0,
                                        "max_tokens": None, "min_questions": 0}})
    cases = load_cases(cfg, TokenCounter()).cases
    assert len(cases) == 15
    llm = ChatOpenAI(model="m", api_key="none", base_url="http://127.0.0.1:9/v1", seed=0)
    for case in cases:
        messages = [SystemMessage(case.system_prompt), *case.messages, HumanMessage("question?")]
        kwargs = llm.bind_tools(case.tools).kwargs
        assert chat_body(llm._get_request_payload([], **kwargs), messages) == \
            openapi_dumps(llm._get_request_payload(messages, **kwargs))
        assert request_key_of(head(case.tools), messages) == \
            request_key({**head(case.tools), "messages": [canonical_message(m) for m in messages]})
        assert record_line(case.to_dict(messages=False), case.messages) == JobStore.encode(case.to_dict())
