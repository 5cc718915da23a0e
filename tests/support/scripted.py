"""Scripted stand-ins for models: a LangChain chat model that replays its script, a ``ChatClient``
around it, and an LLM judge's replies read from markers placed in the answers.

No network: ``ScriptedChatModel`` replays AI messages (or raises errors) in order and records every
request, so a rule of the agent loop, the client or a judge is tested deterministically.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import PrivateAttr

from bench.cache import ResponseCache
from bench.llm import ChatClient


class ScriptedChatModel(BaseChatModel):
    """Replays ``script`` items in order: an AIMessage, an exception to raise, or a callable.

    A callable gets ``(messages, kwargs)`` and returns an AIMessage. Every request is
    recorded in ``requests`` as ``(messages, kwargs)`` (kwargs hold ``tools``/``tool_choice``).
    When the script runs out, the last item repeats.
    """

    script: list[Any]
    _next: int = PrivateAttr(default=0)
    _lock: Any = PrivateAttr(default_factory=threading.Lock)
    _requests: list = PrivateAttr(default_factory=list)

    @property
    def requests(self) -> list[tuple[list, dict]]:
        return self._requests

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools, *, tool_choice=None, **kwargs):
        return self.bind(tools=tools, tool_choice=tool_choice, **kwargs)

    def _generate(self, messages, stop=None, run_manager=None, **kwargs) -> ChatResult:
        with self._lock:
            self._requests.append((list(messages), dict(kwargs)))
            item = self.script[min(self._next, len(self.script) - 1)]
            self._next += 1
        if isinstance(item, BaseException):
            raise item
        if callable(item):
            item = item(messages, kwargs)
        message = item.model_copy(update={"usage_metadata": item.usage_metadata or {
            "input_tokens": 100, "output_tokens": 10, "total_tokens": 110,
            "input_token_details": {"cache_read": 40}}})
        return ChatResult(generations=[ChatGeneration(message=message)])


def scripted_client(*script: Any, cache: ResponseCache | None = None, **kwargs: Any) -> ChatClient:
    settings = {"max_retries": 3, "backoff_base": 0.001, "backoff_max": 0.01, "check_endpoint": False, **kwargs}
    return ChatClient(llm=ScriptedChatModel(script=list(script)), model="scripted", endpoint="fake://local",
                      params={"temperature": 0, "seed": 0}, cache=cache, **settings)


def scripted_verdict(body: dict) -> str:
    """A judge that reads markers placed in the answers (robust to any rubric wording)."""
    text = "\n".join(str(m.get("content")) for m in body.get("messages") or [])
    if "MARK-GARBLED" in text:
        return "I think this one is basically fine."  # no verdict: must show as unscored
    verdict = "wrong" if "MARK-WRONG" in text else "abstained" if "MARK-DUNNO" in text else "correct"
    return json.dumps({"verdict": verdict, "reason": f"scripted {verdict}"})


def write_jsonl(path: Path, rows: list) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")
    return path
