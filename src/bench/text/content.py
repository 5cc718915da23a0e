"""Text helpers shared by the extractors, the views and the offline stack.

Message content as text, and what a reader sees of a message or a view (the formats
compaction writes into views are :mod:`bench.text.formats`). Source-specific output decoration (OpenHands markers) is stripped by the
case's profile (:meth:`bench.profiles.Profile.clean`), not here.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage

__all__ = [
    "content_text",
    "message_text",
    "view_text",
    "reader_text",
]

def content_text(content: Any) -> str:
    """Message content as plain text (string content or a list of content parts)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict) and part.get("type") == "text":
                parts.append(str(part.get("text", "")))
        return "\n".join(parts)
    return str(content)


def _arg_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def message_text(message: BaseMessage) -> str:
    """What a reader of this message sees: content plus tool names and raw argument values.

    Argument values are shown unescaped so that evidence strings (code, paths, commands)
    match the text a model would read.
    """
    text = content_text(message.content)
    if isinstance(message, AIMessage) and message.tool_calls:
        calls = []
        for call in message.tool_calls:
            args = "\n".join(f"{k}: {_arg_text(v)}" for k, v in call["args"].items())
            calls.append(f"[{call['name']}]\n{args}")
        text = "\n".join([text, *calls]) if text else "\n".join(calls)
    return text


def reader_text(message: BaseMessage, clean: Callable[[str], str]) -> str:
    """A message as a reader sees it: tool outputs cleaned (``clean``, the profile's), others as shown."""
    return clean(content_text(message.content)) if message.type == "tool" else message_text(message)


def view_text(messages: list[BaseMessage], summary: str | None, clean: Callable[[str], str]) -> str:
    """All the text of a view as a reader sees it, for evidence checks (key visible or not).

    Tool outputs are cleaned like references are (``clean``: the profile's), so a key string
    matches its output.
    """
    texts = [reader_text(m, clean) for m in messages]
    if summary:
        texts.append(summary)
    return "\n".join(texts).replace("\r\n", "\n").replace("\r", "\n")
