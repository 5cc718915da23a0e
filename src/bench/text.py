"""Text helpers shared by the extractors, the views and the offline stack.

OpenHands decorates tool output with metadata the agent never wrote: an
``OBSERVATION:`` prefix and ``[Python Interpreter: ...]``, ``[Current working
directory: ...]``, ``[Command finished with exit code N]`` markers, sometimes glued to
the last line. :func:`clean_output` strips them so that references never carry them.
"""

from __future__ import annotations

import json
import re
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage

from bench.wire import memoized_text

__all__ = [
    "clean_output",
    "content_text",
    "message_text",
    "view_text",
    "PLACEHOLDER",
    "is_placeholder",
    "placeholder",
    "placeholder_handle",
]

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")  # terminal colours in test runner output
_OBSERVATION_PREFIX = re.compile(r"^\s*OBSERVATION:[ \t]*\r?\n?")
# Markers may stand on their own line or be glued to the end of the previous one.
_MARKERS = re.compile(
    r"\[(?:Python Interpreter: [^\]\n]*|Current working directory: [^\]\n]*|"
    r"Command finished with exit code -?\d+|Command exited with code -?\d+)\]",
    re.I,  # older OpenHands writes "[Python interpreter: ...]"
)


def clean_output(text: str | None) -> str:
    """Tool output without OpenHands metadata or ANSI colours, ``\\r\\n`` folded to ``\\n``."""
    if not text:
        return ""
    text = _ANSI.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))
    text = _OBSERVATION_PREFIX.sub("", text, count=1)
    text = _MARKERS.sub("", text)
    # Markers on their own line leave empty trailing lines behind.
    return re.sub(r"\n{2,}$", "\n", text).rstrip("\n")


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


def _reader_text(message: BaseMessage) -> str:
    return clean_output(content_text(message.content)) if message.type == "tool" else message_text(message)


def view_text(messages: list[BaseMessage], summary: str | None = None) -> str:
    """All the text of a view as a reader sees it, for evidence checks (key visible or not).

    Tool outputs are cleaned like references are, so a key string matches its output.
    """
    texts = [memoized_text(m, "reader", _reader_text) for m in messages]
    if summary:
        texts.append(summary)
    return "\n".join(texts).replace("\r\n", "\n").replace("\r", "\n")


# micro_compact's placeholder for a cleared tool result. With offload on, it carries a
# handle that ``read_tool_output`` opens.
PLACEHOLDER = "[Old tool result content cleared]"
_HANDLE = re.compile(r"read_tool_output\(handle=\"([A-Za-z0-9_-]+)\"\)")


def is_placeholder(text: str | None) -> bool:
    return bool(text) and text.startswith(PLACEHOLDER)


def placeholder(handle: str | None = None) -> str:
    """The fixed placeholder text; with a handle, how to get the content back."""
    if handle is None:
        return PLACEHOLDER
    return f'{PLACEHOLDER} Stored output: read_tool_output(handle="{handle}")'


def placeholder_handle(text: str | None) -> str | None:
    if not is_placeholder(text):
        return None
    match = _HANDLE.search(text)
    return match.group(1) if match else None
