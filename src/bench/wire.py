"""Request encoding memoized per message: the cache key and the HTTP body of a chat call.

A case's view is shared by all of its questions and by every step of each question's
agent loop, so the same message objects are encoded over and over: into canonical JSON for
the response-cache key, into the OpenAI chat format, and into JSON for the HTTP body. On
long histories that is most of the client's CPU per call, held under the GIL by every
worker thread. Here each message is encoded once, and a request's key and body are spliced
from the pieces: byte-identical to encoding the whole request at once (the tests compare
them on real histories).

Messages are treated as immutable once built (nothing in the benchmark changes a message
in place); an entry is recomputed when a message's content, name or tool calls are
replaced. The memo holds the messages it encoded (so ids are never reused while an entry
exists) and is emptied when it holds more than ``MEMO_CHARS`` characters, and by
:func:`forget` at the end of every job (a job loads its own message objects, so nothing
carries over to the next one; the memo must not keep them alive).

    from bench.wire import request_key_of, chat_body
    key = request_key_of({"model": "m", "endpoint": url, "params": {}, "tools": []}, messages)
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import threading
import uuid
from collections.abc import Callable
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage, message_to_dict

from bench.cache import CACHE_VERSION, KEY_JSON
from bench.store import RECORD_JSON, safe_line

__all__ = ["canonical_message", "canonical_json", "openai_json", "record_json", "request_key_of", "chat_body",
           "record_line", "memoized_text", "forget", "MEMO_CHARS"]

MEMO_CHARS = 100_000_000  # characters of JSON and text held before the memo is emptied

# The openai SDK's body encoding (openapi_dumps); the cache key's and the job files' are
# bench.cache.KEY_JSON and bench.store.RECORD_JSON.
_BODY_JSON = {"ensure_ascii": False, "separators": (",", ":"), "allow_nan": False}
_SURROGATE = re.compile(r"[\ud800-\udfff]")
_MARKER = f"bench-messages-{uuid.uuid4().hex}"  # stands for the message list while the rest is encoded


def canonical_message(message: BaseMessage) -> dict[str, Any]:
    """What of a message reaches the endpoint (ids of LangChain runs excluded): the cache key's form."""
    data: dict[str, Any] = {"type": message.type, "content": message.content}
    if message.name:
        data["name"] = message.name
    if isinstance(message, AIMessage):
        data["tool_calls"] = [{"name": c["name"], "args": c["args"], "id": c.get("id")}
                              for c in message.tool_calls]
        if message.invalid_tool_calls:
            data["invalid_tool_calls"] = [{"name": c.get("name"), "args": c.get("args"), "id": c.get("id")}
                                          for c in message.invalid_tool_calls]
    if isinstance(message, ToolMessage):
        data["tool_call_id"] = message.tool_call_id
    return data


@functools.cache
def _openai_converter():
    from langchain_openai.chat_models import base as lc_base
    from langchain_openai.chat_models._compat import _convert_from_v1_to_chat_completions

    def convert(message: BaseMessage) -> dict[str, Any]:  # as ChatOpenAI._get_request_payload does
        if isinstance(message, AIMessage):
            message = _convert_from_v1_to_chat_completions(message)
        return lc_base._convert_message_to_dict(message)

    return convert


class _Memo:
    """id(message) -> [message, content, name, tool_calls, canonical JSON, OpenAI JSON, record JSON, other texts]."""

    def __init__(self, limit: int = MEMO_CHARS) -> None:
        self.limit = limit
        self.entries: dict[int, list[Any]] = {}
        self.chars = 0
        self.lock = threading.Lock()

    def entry(self, message: BaseMessage) -> list[Any]:
        entry = self.entries.get(id(message))
        tool_calls = getattr(message, "tool_calls", None)
        if (entry is None or entry[0] is not message or entry[1] is not message.content
                or entry[2] != message.name or entry[3] is not tool_calls):
            entry = [message, message.content, message.name, tool_calls, None, None, None, {}]
            self.entries[id(message)] = entry
        return entry

    def fill(self, entry: list[Any], slot: int, text: str) -> str:
        entry[slot] = text
        self.count(len(text))
        return text

    def count(self, chars: int) -> None:
        with self.lock:
            self.chars += chars
            if self.chars > self.limit:
                self.clear()

    def clear(self) -> None:
        self.entries.clear()
        self.chars = 0


_MEMO = _Memo()


def forget() -> None:
    """Empty the memo (the runner calls this when a job ends)."""
    with _MEMO.lock:
        _MEMO.clear()


def canonical_json(message: BaseMessage) -> str:
    """The message's canonical JSON in the cache key (memoized)."""
    entry = _MEMO.entry(message)
    text = entry[4]
    return text if text is not None else _MEMO.fill(entry, 4, json.dumps(canonical_message(message), **KEY_JSON))


def openai_json(message: BaseMessage) -> str:
    """The message as the chat-completions body encodes it (memoized)."""
    entry = _MEMO.entry(message)
    text = entry[5]
    return text if text is not None else _MEMO.fill(entry, 5, json.dumps(_openai_converter()(message), **_BODY_JSON))


def record_json(message: BaseMessage) -> str:
    """The message in a job file (LangChain ``message_to_dict`` form, as ``JobStore.encode`` writes it; memoized)."""
    entry = _MEMO.entry(message)
    text = entry[6]
    return text if text is not None else _MEMO.fill(entry, 6, json.dumps(message_to_dict(message), **RECORD_JSON))


def memoized_text(message: BaseMessage, name: str, compute: Callable[[BaseMessage], str]) -> str:
    """``compute(message)``, once per message object and ``name`` (e.g. the text a reader sees)."""
    entry = _MEMO.entry(message)
    text = entry[7].get(name)
    if text is None:
        text = entry[7][name] = compute(message)
        _MEMO.count(len(text))
    return text


def _splice(template: dict[str, Any], pieces: list[str], **dumps: Any) -> str:
    """``json.dumps`` of ``template`` whose ``messages`` value is the list of pre-encoded ``pieces``."""
    text = json.dumps({**template, "messages": _MARKER}, **dumps)
    quoted = f'"{_MARKER}"'
    if text.count(quoted) != 1:  # the marker is random: this cannot happen unless a template quotes it
        raise ValueError("request template contains the message marker")
    item_separator = (dumps.get("separators") or (", ", ": "))[0]
    return text.replace(quoted, "[" + item_separator.join(pieces) + "]")


def request_key_of(request: dict[str, Any], messages: list[BaseMessage]) -> str:
    """``bench.cache.request_key({**request, "messages": [canonical_message(m) ...]})``, from memoized pieces."""
    text = _splice({"v": CACHE_VERSION, **request}, [canonical_json(m) for m in messages], **KEY_JSON)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()  # as request_key


def chat_body(payload: dict[str, Any], messages: list[BaseMessage]) -> bytes:
    """The openai SDK's JSON body of ``payload`` with ``messages`` converted as ChatOpenAI converts them.

    Key order is the payload's (``messages`` where it stands in ``payload``, else last),
    as ``openapi_dumps`` would write it.
    """
    text = _splice(payload, [openai_json(m) for m in messages], **_BODY_JSON)
    if _SURROGATE.search(text):  # a reply's lone surrogate, sent back: as a JSON escape, so the body is UTF-8
        text = _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    return text.encode("utf-8")


def record_line(record: dict[str, Any], messages: list[BaseMessage]) -> str:
    """``JobStore.encode({**record, "messages": messages_to_dict(messages)})``, from memoized pieces.

    A view of the full or nlatest arm holds the case's own message objects, so its record
    reuses what writing ``cases.jsonl`` encoded.
    """
    return safe_line(_splice(record, [record_json(m) for m in messages], **RECORD_JSON)) + "\n"
