"""OpenAI's Responses API beside chat completions: a history as its input items, and ``responses.compact``
through a :class:`~bench.llm.client.ChatClient` (cache, retries, limiter, accounting, price).

The input items are built as the ``openai`` SDK's param types define them: a user or system message is an
``EasyInputMessageParam`` (``{role, content}``), an assistant text an ``EasyInputMessageParam`` with role
``assistant``, a tool call a ``ResponseFunctionToolCallParam`` (``{type: function_call, call_id, name,
arguments}``), a tool result a ``FunctionCallOutput`` (``{type: function_call_output, call_id, output}``),
and a compaction item the provider returned (an assistant message holding a ``compaction`` content block,
as ``ChatOpenAI`` carries it) a ``ResponseCompactionItemParamParam`` (``{type: compaction,
encrypted_content, id}``) sent back verbatim.

    items = responses_input(case.messages)
    data, record = compact(client, items, instructions=case.system_prompt)   # CompactedResponse as JSON
"""

from __future__ import annotations

import json
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from bench.llm.call_errors import ModelSetupError
from bench.llm.client import ChatClient
from bench.text.content import content_text

__all__ = ["responses_input", "compact", "responses_usage", "COMPACTION"]

COMPACTION = "compaction"  # ResponseCompactionItem.type, and the content block ChatOpenAI keeps it as


def responses_input(messages: list[BaseMessage]) -> list[dict[str, Any]]:
    """The Responses API input items of a LangChain history (module docstring)."""
    items: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, ToolMessage):
            items.append({"type": "function_call_output", "call_id": message.tool_call_id,
                          "output": content_text(message.content)})
        elif isinstance(message, AIMessage):
            blocks = message.content if isinstance(message.content, list) else []
            for block in blocks:
                if isinstance(block, dict) and block.get("type") == COMPACTION:
                    items.append({k: block[k] for k in ("type", "encrypted_content", "id") if block.get(k) is not None})
            text = content_text(message.content)
            if text:
                items.append({"role": "assistant", "content": text})
            for call in message.tool_calls:
                items.append({"type": "function_call", "call_id": call.get("id") or "", "name": call["name"],
                              "arguments": json.dumps(call.get("args") or {}, ensure_ascii=False)})
        elif isinstance(message, (HumanMessage, SystemMessage)):
            items.append({"role": "user" if isinstance(message, HumanMessage) else "system",
                          "content": content_text(message.content)})
        else:
            raise ValueError(f"a {type(message).__name__} has no Responses API input item")
    return items


def responses_usage(data: dict[str, Any]) -> dict[str, int]:
    """``{input_tokens, cached_tokens, output_tokens}`` of a ``ResponseUsage``."""
    usage = data.get("usage") or {}
    return {"input_tokens": int(usage.get("input_tokens") or 0),
            "cached_tokens": int((usage.get("input_tokens_details") or {}).get("cached_tokens") or 0),
            "output_tokens": int(usage.get("output_tokens") or 0)}


def compact(client: ChatClient, items: list[dict[str, Any]], instructions: str | None = None,
            tags: dict[str, Any] | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    """``responses.compact(model, input, instructions)`` through ``client``: the ``CompactedResponse`` as JSON
    data (``output``: the user messages, then one compaction item) and the call's accounting record."""
    if client.provider != "openai" or client.api != "responses":
        raise ModelSetupError(f"{client.role}: responses.compact needs an OpenAI model on the Responses API "
                              f"({client.role}.api=responses)")
    body: dict[str, Any] = {"model": client.model, "input": items}
    if instructions:
        body["instructions"] = instructions
    root = client.llm.root_client  # ChatOpenAI's openai.OpenAI client (its key, base URL and HTTP client)

    def send() -> dict[str, Any]:
        return root.responses.compact(**body).to_dict(mode="json", warnings=False)

    return client.fetch("responses.compact", body, send, responses_usage, tags=tags)
