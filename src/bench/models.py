"""Real models behind an OpenAI-compatible endpoint, with caching, retries and accounting.

Every model call of the benchmark (answering agent, summarizer, judge) goes through a
:class:`ChatClient`:

* the persistent response cache (:mod:`bench.cache`), keyed by everything that changes
  the reply: model, endpoint, sampling parameters, seed, messages, tools;
* retries with exponential backoff (and ``Retry-After``) on 408/409/429/5xx, timeouts and
  connection errors; a request refused as longer than the context raises
  :class:`ContextOverflow` at once (never retried);
* a concurrency limit (:mod:`bench.limiter`): ``max_concurrency: auto`` shares one adaptive
  limit per endpoint among the answer, judge and summary clients that call it (told the
  outcome of every request: success, 429, overload, timeout), an integer fixes the
  requests in flight of this client;
* one accounting record per call (input, cached and output tokens, latency, cache hit),
  sent to the job's call sink (``calls.jsonl``) with the tags of the work it belongs to.

Keys come from the environment only (``api_key_env``, default ``OPENAI_API_KEY``); they
are never part of a config, a cache key, a record or a log line. A missing key or an
unreachable endpoint raises :class:`ModelSetupError` (one clear line) before any case work.

    client = openai_client("model", name="gpt-4o-mini", base_url=None, seed=0)
    client.preflight()
    reply, record = client.chat(messages, tools)
    summarizer = LLMSummarizer(name="gpt-4o-mini")
    summary, usage = summarizer.summarize(messages, prompt)
"""

from __future__ import annotations

import contextlib
import contextvars
import email.utils
import logging
import os
import random
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import openai
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    message_to_dict,
    messages_from_dict,
)

from bench import redact
from bench.cache import ResponseCache, open_cache, request_key
from bench.limiter import AUTO, DEFAULT_CAP, FixedLimiter, parse_cap, parse_concurrency, shared_limiter
from bench.text import content_text, message_text
from bench.wire import canonical_message, chat_body, request_key_of

__all__ = [
    "OPENAI_BASE_URL",
    "SUMMARY_SYSTEM",
    "ChatClient",
    "ContextOverflow",
    "LLMSummarizer",
    "ModelCallError",
    "ModelSetupError",
    "call_sink",
    "call_tags",
    "current_tags",
    "openai_client",
    "resolve_api_key",
    "sum_usage",
]

log = logging.getLogger(__name__)

OPENAI_BASE_URL = "https://api.openai.com/v1"


class ModelSetupError(RuntimeError):
    """Missing key, unreachable endpoint, bad model settings: reported in one line, no traceback."""


class ContextOverflow(RuntimeError):
    """The endpoint refused the request as longer than the model's context (not retried)."""


class ModelCallError(RuntimeError):
    """A model call that failed for good (after retries, or an error that is not transient)."""


class EmptyReply(RuntimeError):
    """The endpoint answered 200 without a choice (some gateways do this for upstream failures): retried."""


# --------------------------------------------------------------------------- accounting

_TAGS: contextvars.ContextVar[dict[str, Any] | None] = contextvars.ContextVar("bench_call_tags", default=None)
_SINK: contextvars.ContextVar[Callable[[dict[str, Any]], None] | None] = contextvars.ContextVar(
    "bench_call_sink", default=None)


@contextlib.contextmanager
def call_tags(**tags: Any) -> Iterator[None]:
    """Tags (case_id, qid, arm, phase ...) added to the accounting record of calls made inside."""
    token = _TAGS.set({**(_TAGS.get() or {}), **tags})
    try:
        yield
    finally:
        _TAGS.reset(token)


@contextlib.contextmanager
def call_sink(sink: Callable[[dict[str, Any]], None] | None) -> Iterator[None]:
    """Send the accounting record of every call made inside to ``sink`` (e.g. calls.jsonl)."""
    token = _SINK.set(sink)
    try:
        yield
    finally:
        _SINK.reset(token)


def current_tags() -> dict[str, Any]:
    return dict(_TAGS.get() or {})


USAGE_KEYS = ("calls", "cache_hits", "input_tokens", "cached_tokens", "output_tokens", "latency_s",
              "retries")


def sum_usage(records: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    """Usage of several calls: calls made, cache hits, tokens and latency of the replies.

    Tokens and latency are those of the replies used (for a cache hit: of the original
    call), so a cached rerun reports the same experiment figures with ``calls`` = 0.
    """
    total: dict[str, Any] = dict(extra)
    for key in USAGE_KEYS:
        total[key] = 0
    for record in records:
        total["calls"] += 0 if record.get("cached") else 1
        total["cache_hits"] += 1 if record.get("cached") else 0
        for key in ("input_tokens", "cached_tokens", "output_tokens", "retries"):
            total[key] += int(record.get(key) or 0)
        total["latency_s"] += float(record.get("latency_s") or 0.0)
    total["latency_s"] = round(total["latency_s"], 3)
    return total


# --------------------------------------------------------------------------- keys

def resolve_api_key(env_name: str | None, role: str = "model") -> str:
    """The API key from the environment variable ``env_name``; a clear error when missing.

    ``env_name`` null means the endpoint needs no key (a local vLLM/Ollama/llama.cpp server).
    """
    if env_name is None or env_name == "":
        return "no-key"
    value = os.environ.get(env_name)
    refusal = redact.check_key_env(f"{role}.api_key_env", env_name)
    if refusal:
        raise ModelSetupError(refusal)
    if value is None or not value.strip():
        state = "is empty" if value is not None else "is not set"
        raise ModelSetupError(
            f"{role}: the API key variable {env_name} {state}; export it (the key is read from the "
            f"environment only), or set {role}.api_key_env to the variable that holds it "
            f"(null for a local server without keys)")
    redact.register(value.strip())
    return value.strip()


def _scrub(text: str, secrets: tuple[str, ...]) -> str:
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "***")
    return redact.scrub(text)  # and every other configured secret (judge's, summarizer's, Langfuse's)


# --------------------------------------------------------------------------- errors

_OVERFLOW = re.compile(
    r"context[_ ]length[_ ]exceeded|maximum context length|context window|context length|"
    r"prompt is too long|too many tokens|exceeds? (?:the )?(?:model'?s? )?(?:maximum )?(?:context|token limit)|"
    r"input tokens exceed|ContextWindowExceeded|reduce the length of the messages",
    re.IGNORECASE,
)
_RETRY_STATUS = {408, 409, 425, 429}
try:
    from langchain_core.exceptions import ContextOverflowError as _LC_OVERFLOW
except ImportError:  # pragma: no cover - older langchain-core
    _LC_OVERFLOW = None


def classify_error(err: BaseException) -> str:
    """``overflow`` (not retried), ``retry`` (transient) or ``fatal``."""
    if _LC_OVERFLOW and isinstance(err, _LC_OVERFLOW):
        return "overflow"
    code = str(getattr(err, "code", "") or "")
    status = getattr(err, "status_code", None)
    message = str(getattr(err, "message", "") or err)
    if code == "context_length_exceeded":
        return "overflow"
    if status in (400, 413) and _OVERFLOW.search(message):
        return "overflow"
    streamed = isinstance(err, openai.APIError) and status is None and not isinstance(
        err, (openai.APIConnectionError, openai.APITimeoutError))
    if streamed and _OVERFLOW.search(message):  # an error event inside a streamed reply
        return "overflow"
    if isinstance(err, (openai.APITimeoutError, openai.APIConnectionError, openai.RateLimitError,
                        openai.InternalServerError)):
        return "retry"
    if isinstance(err, openai.APIStatusError):
        return "retry" if (err.status_code in _RETRY_STATUS or err.status_code >= 500) else "fatal"
    if isinstance(err, openai.APIError):  # error event inside a stream, no status
        return "retry" if code in ("server_error", "rate_limit_exceeded") else "fatal"
    if isinstance(err, (TimeoutError, ConnectionError, EmptyReply)):
        return "retry"
    return "fatal"


def _retry_after(err: BaseException) -> float | None:
    """Seconds the server asks to wait: ``retry-after-ms`` (OpenAI), else ``Retry-After`` (seconds or an HTTP date)."""
    response = getattr(err, "response", None)
    headers = getattr(response, "headers", None)
    if not headers:
        return None
    with contextlib.suppress(TypeError, ValueError):
        return max(0.0, float(headers.get("retry-after-ms")) / 1000)
    value = headers.get("retry-after")
    with contextlib.suppress(TypeError, ValueError):
        return max(0.0, float(value))
    with contextlib.suppress(TypeError, ValueError, IndexError):
        when = email.utils.parsedate_to_datetime(value)
        return max(0.0, when.timestamp() - time.time())
    return None


_OVERLOAD_STATUS = {503, 529}  # service unavailable; 529: overloaded (Anthropic-style gateways)
_TIMEOUT_STATUS = {408, 504}  # request timeout; gateway timeout


def load_outcome(err: BaseException) -> str:
    """What a failed request says about the endpoint's load, for the limiter (:data:`bench.limiter.OUTCOMES`):
    ``rate_limited`` (429), ``overloaded`` (503/529), ``timeout`` (a timeout, 408/504) or ``error`` (no signal)."""
    status = getattr(err, "status_code", None)
    code = str(getattr(err, "code", "") or "")
    if status == 429 or isinstance(err, openai.RateLimitError) or code == "rate_limit_exceeded":
        return "rate_limited"
    if status in _OVERLOAD_STATUS or code in ("overloaded", "overloaded_error"):
        return "overloaded"
    if status in _TIMEOUT_STATUS or isinstance(err, (openai.APITimeoutError, TimeoutError)):
        return "timeout"
    return "error"


# --------------------------------------------------------------------------- messages

def _usage_of(message: AIMessage) -> dict[str, int]:
    meta = message.usage_metadata or {}
    details = meta.get("input_token_details") or {}
    return {
        "input_tokens": int(meta.get("input_tokens") or 0),
        "cached_tokens": int(details.get("cache_read") or 0),
        "output_tokens": int(meta.get("output_tokens") or 0),
    }


def _stored_reply(message: AIMessage) -> dict[str, Any]:
    data = message_to_dict(message.model_copy(update={"id": None}))
    keep = ("finish_reason", "model_name", "system_fingerprint")
    data["data"]["response_metadata"] = {k: v for k, v in (message.response_metadata or {}).items()
                                         if k in keep}
    return data


def _truncated_reply(err: openai.LengthFinishReasonError) -> AIMessage:
    """The reply the endpoint gave before the token limit, as a plain AI message."""
    completion = err.completion
    choice = completion.choices[0] if completion.choices else None
    usage = completion.usage
    details = getattr(usage, "prompt_tokens_details", None) if usage else None
    return AIMessage(
        content=(choice.message.content if choice and choice.message else "") or "",
        usage_metadata={
            "input_tokens": usage.prompt_tokens if usage else 0,
            "output_tokens": usage.completion_tokens if usage else 0,
            "total_tokens": usage.total_tokens if usage else 0,
            "input_token_details": {"cache_read": getattr(details, "cached_tokens", 0) or 0},
        },
        response_metadata={"finish_reason": "length", "model_name": completion.model},
    )


# --------------------------------------------------------------------------- client

@dataclass
class ChatClient:
    """A chat model behind the cache, retries, a concurrency limit and call accounting.

    ``llm`` is any LangChain chat model that can bind tools (``ChatOpenAI`` in production,
    a scripted fake in tests). ``params`` are the request parameters that change the reply
    (temperature, seed, max tokens ...): they go into the cache key with ``model``,
    ``endpoint``, messages and tools. ``max_concurrency``: an integer (this client's fixed
    limit) or ``auto`` (the endpoint's shared adaptive limiter, at most
    ``max_concurrency_cap`` in flight); ``limiter`` may be given instead (tests).
    """

    llm: Any
    model: str
    endpoint: str
    params: dict[str, Any] = field(default_factory=dict)
    role: str = "model"  # model | judge | summarizer: config prefix in messages
    kind: str = "answer"  # accounting kind of the calls: answer | judge | summarizer
    cache: ResponseCache | None = None
    max_concurrency: int | str = 4
    max_concurrency_cap: int = DEFAULT_CAP
    limiter: Any = field(default=None, repr=False)  # FixedLimiter | AdaptiveLimiter; built from the two above
    max_retries: int = 6
    backoff_base: float = 1.0
    backoff_max: float = 60.0
    check_endpoint: bool = True
    check_timeout: float = 15.0
    api_key: str | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        try:
            self.max_concurrency = parse_concurrency(self.max_concurrency, f"{self.role}.max_concurrency")
            self.max_concurrency_cap = parse_cap(self.max_concurrency_cap, f"{self.role}.max_concurrency_cap")
        except ValueError as err:
            raise ModelSetupError(str(err)) from None
        if self.limiter is None:
            self.limiter = (shared_limiter(self.endpoint, cap=self.max_concurrency_cap)
                            if self.max_concurrency == AUTO else FixedLimiter(self.max_concurrency, self.endpoint))
        self._secrets = tuple(s for s in (self.api_key,) if s and s != "no-key")

    def __repr__(self) -> str:  # never shows the key
        return f"ChatClient(model={self.model!r}, endpoint={self.endpoint!r}, kind={self.kind!r})"

    # ---- fail-fast check
    def preflight(self, seen: set | None = None) -> None:
        """Fail fast (ModelSetupError) when the endpoint cannot be reached or refuses the key."""
        if not self.check_endpoint:
            return
        marker = (self.endpoint, request_key({"k": self.api_key or ""}))
        if seen is not None and marker in seen:
            return
        import httpx

        url = self.endpoint.rstrip("/") + "/models"
        headers = {"Authorization": f"Bearer {self.api_key}"} if self._secrets else {}
        try:
            response = httpx.get(url, headers=headers, timeout=self.check_timeout, follow_redirects=True)
        except httpx.HTTPError as err:
            reason = _scrub(str(err) or type(err).__name__, self._secrets)
            raise ModelSetupError(
                f"{self.role}: cannot reach the endpoint {self.endpoint} ({type(err).__name__}: {reason}); "
                f"check {self.role}.base_url and that the server is running "
                f"({self.role}.check_endpoint=false skips this check)") from None
        if response.status_code in (401, 403):
            raise ModelSetupError(
                f"{self.role}: the endpoint {self.endpoint} refused the API key (HTTP {response.status_code}); "
                f"check the key in the variable named by {self.role}.api_key_env")
        if seen is not None:
            seen.add(marker)

    # ---- one call
    def request(self, messages: list[BaseMessage], tools: list[dict[str, Any]] | None,
                tool_choice: str | None = None) -> dict[str, Any]:
        """The part of a request that determines the reply (the cache key's content)."""
        return {**self._request_head(tools, tool_choice), "messages": [canonical_message(m) for m in messages]}

    def _request_head(self, tools: list[dict[str, Any]] | None, tool_choice: str | None) -> dict[str, Any]:
        head = {"model": self.model, "endpoint": self.endpoint, "params": self.params, "tools": tools or []}
        if tool_choice is not None:
            head["tool_choice"] = tool_choice
        return head

    def key(self, messages: list[BaseMessage], tools: list[dict[str, Any]] | None = None,
            tool_choice: str | None = None) -> str:
        """The cache key: ``request_key(self.request(...))``, spliced from per-message memoized JSON."""
        return request_key_of(self._request_head(tools, tool_choice), messages)

    def chat(self, messages: list[BaseMessage], tools: list[dict[str, Any]] | None = None,
             tags: dict[str, Any] | None = None, tool_choice: str | None = None) -> tuple[AIMessage, dict[str, Any]]:
        """One chat completion: ``(reply, accounting record)``, from the cache when possible.

        Raises :class:`ContextOverflow` when the endpoint refuses the request as too long,
        :class:`ModelCallError` when it keeps failing (or fails in a way retries cannot fix).
        """
        key = self.key(messages, tools, tool_choice)
        record: dict[str, Any] = {"kind": self.kind, "model": self.model, **current_tags(), **(tags or {}),
                                  "key": key[:16]}
        cached = self.cache.get(key) if self.cache is not None else None
        if cached is not None:
            reply = messages_from_dict([cached["message"]])[0]
            record.update(cached=True, retries=0, **cached["usage"], latency_s=cached.get("latency_s", 0.0))
            self._emit(record)
            return reply, record
        try:
            reply, latency, retries = self._invoke(messages, tools, tool_choice)
        except (ContextOverflow, ModelCallError) as err:
            record.update(cached=False, failed=True, retries=getattr(err, "retries", 0),
                          outcome="context_overflow" if isinstance(err, ContextOverflow) else "error")
            self._emit(record)
            raise
        if not isinstance(reply, AIMessage):
            raise ModelCallError(f"{self.role}: {self.model} returned {type(reply).__name__}, not an AI message")
        usage = _usage_of(reply)
        if self.cache is not None:
            self.cache.put(key, {"message": _stored_reply(reply), "usage": usage, "latency_s": latency},
                           kind=self.kind, model=self.model)
        record.update(cached=False, retries=retries, **usage, latency_s=latency)
        self._emit(record)
        return reply, record

    def _emit(self, record: dict[str, Any]) -> None:
        sink = _SINK.get()
        if sink is not None:
            sink(dict(record))

    def _runnable(self, tools: list[dict[str, Any]] | None, tool_choice: str | None):
        if not tools:
            return self.llm
        return self.llm.bind_tools(tools, tool_choice=tool_choice) if tool_choice else self.llm.bind_tools(tools)

    def _invoke(self, messages: list[BaseMessage], tools, tool_choice: str | None) -> tuple[Any, float, int]:
        runnable = self._runnable(tools, tool_choice)
        attempt = 0
        while True:
            # the slot is held for the request only (not while sleeping before a retry), and the
            # limiter hears every outcome; latency is measured from the slot, without the wait for it
            ticket = self.limiter.acquire()
            start = time.perf_counter()
            outcome, wait, error = "error", None, None
            try:
                reply = runnable.invoke(messages)
                outcome = "ok"
            except openai.LengthFinishReasonError as err:  # structured-output parsing of a cut reply
                reply, outcome = _truncated_reply(err), "ok"
            except Exception as err:  # noqa: BLE001 - classified below, once the slot is back
                error, outcome, wait = err, load_outcome(err), _retry_after(err)
            finally:
                self.limiter.release(ticket, outcome, wait)
            if error is None:
                return reply, round(time.perf_counter() - start, 3), attempt
            err = error
            what = classify_error(err)
            text = _scrub(f"{type(err).__name__}: {getattr(err, 'message', None) or err}", self._secrets)
            if what == "overflow":
                overflow = ContextOverflow(f"{self.model} at {self.endpoint}: {text}")
                overflow.retries = attempt
                raise overflow from None
            if what == "retry" and attempt < self.max_retries:
                delay = min(self.backoff_max, self.backoff_base * 2 ** attempt)
                delay = delay * (0.5 + random.random() / 2)
                delay = max(delay, min(self.backoff_max, wait or 0.0))
                log.warning("%s: %s; retry %d/%d in %.1fs", self.role, text[:300], attempt + 1,
                            self.max_retries, delay)
                time.sleep(delay)
                attempt += 1
                continue
            suffix = f" (after {attempt} retries)" if attempt else ""
            failure = ModelCallError(f"{self.model} at {self.endpoint}: {text}{suffix}")
            failure.retries = attempt
            raise failure from None


# --------------------------------------------------------------------------- plain-payload ChatOpenAI

_PLAIN_CHAT_OPENAI: type | None = None
_O_SERIES = re.compile(r"^o\d")  # ChatOpenAI sends these models' system messages as "developer"


def plain_chat_openai() -> type:
    """``ChatOpenAI`` that posts its request payload to ``/chat/completions`` as is.

    ``ChatOpenAI`` builds a plain-JSON payload (messages already converted to dicts) and
    hands it to ``client.chat.completions.create``, whose request transform
    (``openai._utils.maybe_transform``) walks every message and tool schema against the
    SDK's TypedDicts: tens of milliseconds of CPU per request on long histories, held
    under the GIL by every worker thread. The payload needs none of it (it has no
    ``NotGiven`` values, dates or aliased fields), so this subclass posts it with the
    client's own ``post`` (same base URL, headers, auth, timeout and error types; the
    SDK's retries stay off, :class:`ChatClient` retries) and parses the reply with
    ``ChatOpenAI``'s own ``_create_chat_result``. The body is the payload's JSON with each
    message's JSON memoized per message (:func:`bench.wire.chat_body`): the same bytes
    ``openapi_dumps`` writes, without converting and encoding a shared history again at
    every call. Streaming, ``response_format`` (structured output) and Responses-API
    requests go through ``ChatOpenAI`` unchanged; o-series models (whose system messages
    ChatOpenAI renames) post ChatOpenAI's payload as is.
    """
    global _PLAIN_CHAT_OPENAI
    if _PLAIN_CHAT_OPENAI is not None:
        return _PLAIN_CHAT_OPENAI
    import inspect

    from langchain_openai import ChatOpenAI
    from langchain_openai.chat_models import base as lc_base
    from openai._base_client import make_request_options
    from openai._constants import RAW_RESPONSE_HEADER
    from openai.types.chat import ChatCompletion

    auth = ({"security": {"bearer_auth": True}}
            if "security" in inspect.signature(make_request_options).parameters else {})
    options_keys = ("extra_headers", "extra_query", "extra_body", "timeout")

    class PlainChatOpenAI(ChatOpenAI):
        def _generate(self, messages, stop=None, run_manager=None, **kwargs):  # noqa: ANN001, ANN202
            # the payload without its messages: they are spliced in as memoized JSON (bench.wire)
            payload = self._get_request_payload([], stop=stop, **kwargs)
            if payload.get("stream") or "response_format" in payload or self._use_responses_api(payload):
                return super()._generate(messages, stop=stop, run_manager=run_manager, **kwargs)
            ensure = getattr(self, "_ensure_sync_client_available", None)
            if ensure is not None:
                ensure()
            extra = {k: payload.pop(k) for k in options_keys if k in payload}
            extra_body = extra.get("extra_body")
            request = None
            # o-series models get their system messages renamed by ChatOpenAI: its payload as is
            if not _O_SERIES.match(self.model_name or "") and "messages" not in (extra_body or {}):
                with contextlib.suppress(TypeError):  # a payload value that is not plain JSON
                    # the SDK merges extra_body into the body's top level: done here, before encoding
                    request = {"content": chat_body({**payload, **(extra_body or {})}, messages)}
                    extra_body = None
            if request is None:
                full = self._get_request_payload(messages, stop=stop, **kwargs)
                request = {"body": {k: v for k, v in full.items() if k not in options_keys}}
            headers = {**(extra.get("extra_headers") or {}), RAW_RESPONSE_HEADER: "true"}
            options = make_request_options(extra_headers=headers, extra_query=extra.get("extra_query"),
                                           extra_body=extra_body,
                                           timeout=extra.get("timeout", openai.NOT_GIVEN), **auth)
            try:
                raw_response = self.root_client.post("/chat/completions", options=options,
                                                      cast_to=ChatCompletion, stream=False, **request)
                response = raw_response.parse()
            except openai.BadRequestError as err:
                lc_base._handle_openai_bad_request(err)
                raise
            except openai.APIError as err:
                lc_base._handle_openai_api_error(err)
                raise
            if not getattr(response, "choices", None):  # else LangChain fails with IndexError
                raise EmptyReply(_empty_reply_text(response))
            info = {"headers": dict(raw_response.headers)} if self.include_response_headers else {}
            add_gateway = getattr(lc_base, "_add_gateway_metadata", None)
            if add_gateway is not None:
                add_gateway(info, raw_response)
            return self._create_chat_result(response, info)

    _PLAIN_CHAT_OPENAI = PlainChatOpenAI
    return PlainChatOpenAI


def _empty_reply_text(response: Any) -> str:
    """What a 200 reply without choices held (its error field if any, else the body), shortened."""
    import json

    try:
        body = response.model_dump(exclude_none=True) if hasattr(response, "model_dump") else response
        text = json.dumps(body, ensure_ascii=False, default=str)
    except Exception:  # noqa: BLE001 - whatever came back, say something about it
        text = repr(response)
    text = text if len(text) <= 300 else text[:297] + "..."
    return f"the endpoint answered 200 with no choices: {redact.scrub(text)}"


# --------------------------------------------------------------------------- construction

def openai_client(
    role: str = "model",
    *,
    kind: str = "answer",
    name: str,
    base_url: str | None = None,
    api_key_env: str | None = "OPENAI_API_KEY",
    temperature: float | None = 0.0,
    seed: int | None = None,
    max_tokens: int | None = None,
    max_tokens_field: str = "max_completion_tokens",
    timeout: float = 120.0,
    max_retries: int = 6,
    backoff_base: float = 1.0,
    backoff_max: float = 60.0,
    max_concurrency: int | str = AUTO,
    max_concurrency_cap: int = DEFAULT_CAP,
    check_endpoint: bool = True,
    model_kwargs: dict[str, Any] | None = None,
    extra_body: dict[str, Any] | None = None,
    cache_path: str | None = None,
    cache_enabled: bool = True,
) -> ChatClient:
    """A :class:`ChatClient` over ``langchain-openai``'s ``ChatOpenAI`` (any OpenAI-compatible endpoint).

    ``max_tokens_field``: ``max_completion_tokens`` (OpenAI) or ``max_tokens`` (servers that
    only know the older field, e.g. llama.cpp's python server). Retries are done here, not
    by the openai client, so every retry is counted and logged. ``max_concurrency``: ``auto``
    (the endpoint's shared adaptive limit, up to ``max_concurrency_cap``) or an integer.
    """
    from pydantic import SecretStr

    if not name:
        raise ModelSetupError(f"{role}.name is empty: give the model name the endpoint serves")
    if max_tokens_field not in ("max_completion_tokens", "max_tokens"):
        raise ModelSetupError(f"{role}.max_tokens_field must be max_completion_tokens or max_tokens, "
                              f"got {max_tokens_field!r}")
    key = resolve_api_key(api_key_env, role)
    endpoint = (base_url or OPENAI_BASE_URL).rstrip("/")
    body = dict(extra_body or {})
    kwargs: dict[str, Any] = {}
    if max_tokens is not None:
        if max_tokens_field == "max_tokens":
            body["max_tokens"] = int(max_tokens)
        else:
            kwargs["max_tokens"] = int(max_tokens)
    if temperature is not None:
        kwargs["temperature"] = float(temperature)
    llm = plain_chat_openai()(
        model=name,
        base_url=endpoint,
        api_key=SecretStr(key),
        seed=seed,
        timeout=timeout,
        max_retries=0,
        model_kwargs=dict(model_kwargs or {}),
        extra_body=body or None,
        **kwargs,
    )
    params = {
        "temperature": temperature,
        "seed": seed,
        "max_tokens": max_tokens,
        "model_kwargs": dict(model_kwargs or {}),
        "extra_body": body,
    }
    return ChatClient(
        llm=llm, model=name, endpoint=endpoint, params=params, role=role, kind=kind,
        cache=open_cache(cache_path, cache_enabled), max_concurrency=max_concurrency,
        max_concurrency_cap=max_concurrency_cap,
        max_retries=int(max_retries), backoff_base=float(backoff_base), backoff_max=float(backoff_max),
        check_endpoint=bool(check_endpoint), check_timeout=min(float(timeout), 15.0), api_key=key,
    )


# --------------------------------------------------------------------------- summarizer

SUMMARY_SYSTEM = (
    "You summarize the conversation of a software engineering agent so that it can continue "
    "its work from the summary alone. Follow the user's instructions for the summary exactly."
)


def _transcript(messages: list[BaseMessage]) -> str:
    lines = []
    for message in messages:
        role = {"human": "USER", "ai": "ASSISTANT", "tool": f"TOOL RESULT ({message.name or 'tool'})",
                "system": "SYSTEM"}.get(message.type, message.type.upper())
        text = content_text(message.content) if message.type == "tool" else message_text(message)
        lines.append(f"### {role}\n{text}")
    return "\n\n".join(lines)


class LLMSummarizer:
    """Summary model for ``arm=compact`` (``summarizer=openai``), implements the Summarizer protocol.

    ``input``: ``messages`` sends the history as chat messages followed by the summary
    prompt as a user message (what an agent's auto-compaction does); ``transcript`` sends
    one user message holding the history as text, then the prompt.
    """

    calls_model = True  # views that need a summary are I/O-bound: the runner builds them concurrently

    def __init__(self, *, client: ChatClient | None = None, input: str = "messages",
                 system: str | None = SUMMARY_SYSTEM, **settings: Any) -> None:
        if input not in ("messages", "transcript"):
            raise ModelSetupError(f"summarizer.input must be messages or transcript, got {input!r}")
        self.client = client or openai_client("summarizer", kind="summarizer", **settings)
        self.input = input
        self.system = system
        self.name = f"llm:{self.client.model}"

    def preflight(self, seen: set | None = None) -> None:
        self.client.preflight(seen)

    def summarize(self, messages: list[BaseMessage], prompt: str, profile: Any = None) -> tuple[str, dict[str, Any]]:
        head = [SystemMessage(self.system)] if self.system else []
        if self.input == "transcript":
            request = [*head, HumanMessage(f"Conversation to summarize:\n\n{_transcript(messages)}\n\n{prompt}")]
        else:
            request = [*head, *messages, HumanMessage(prompt)]
        try:
            reply, record = self.client.chat(request)
        except ContextOverflow as err:  # the history to summarize is longer than the summarizer's context
            raise ContextOverflow(f"summary request: {err}") from None
        text = content_text(reply.content).strip()
        return text, sum_usage([record], model=self.client.model)
