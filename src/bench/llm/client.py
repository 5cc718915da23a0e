"""The model client: every model call of the benchmark (answers, judging, summaries) goes through it.

A :class:`ChatClient` wraps a LangChain chat model (``ChatOpenAI`` against any
OpenAI-compatible endpoint, a scripted fake in tests) with:

* the persistent response cache (:mod:`bench.cache`), keyed by everything that changes
  the reply: model, endpoint, sampling parameters, seed, messages, tools;
* retries with exponential backoff (and ``Retry-After``) on 408/409/429/5xx, timeouts and
  connection errors; a request refused as longer than the context raises
  :class:`~bench.llm.call_errors.ContextOverflow` at once (never retried);
* a concurrency limit (:mod:`bench.llm.limiter`): ``max_concurrency: auto`` shares one adaptive
  limit per endpoint among the answer, judge and summary clients that call it, an integer
  fixes the requests in flight of this client;
* one accounting record per call (:mod:`bench.llm.accounting`), sent to the job's call sink.

Requests go out through stock ``ChatOpenAI`` whose SDK resource posts the payload as it is
(:mod:`bench.llm.plain_post`: the same bytes, without the SDK's request transform).
Keys come from the environment only (:mod:`bench.llm.keys`). A missing key or an unreachable
endpoint raises ``ModelSetupError`` (one clear line) before any case work.

    client = openai_client("model", name="gpt-4o-mini", base_url=None, seed=0)
    client.preflight()
    reply, record = client.chat(messages, tools)
"""

from __future__ import annotations

import importlib
import json
import logging
import random
import time
from dataclasses import dataclass, field
from typing import Any, cast

import openai
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    InputTokenDetails,
    ToolMessage,
    UsageMetadata,
    convert_to_messages,
    convert_to_openai_messages,
    message_to_dict,
    messages_from_dict,
)
from langchain_core.runnables import Runnable, RunnableConfig

from bench.cache import ReplyStore, open_cache, request_key
from bench.core import redact
from bench.llm.accounting import current_tags, emit
from bench.llm.batch import shared_round, tokens
from bench.llm.call_errors import (
    ContextOverflow,
    EmptyReply,
    ModelCallError,
    ModelSetupError,
    classify_error,
    load_outcome,
    retry_after,
)
from bench.llm.keys import resolve_api_key, scrub
from bench.llm.limiter import AUTO, DEFAULT_CAP, FixedLimiter, parse_cap, parse_concurrency, shared_limiter
from bench.llm.plain_post import PlainCompletions
from bench.llm.price import Price

__all__ = ["OPENAI_BASE_URL", "ChatClient", "canonical_message", "openai_client"]

log = logging.getLogger(__name__)

OPENAI_BASE_URL = "https://api.openai.com/v1"


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


def _usage_of(message: AIMessage) -> dict[str, int]:
    """The call's tokens as LangChain reports them: ``input_tokens`` counts every input token (Anthropic's
    ``input_tokens`` + ``cache_read_input_tokens`` + ``cache_creation_input_tokens``), ``cached_tokens``
    those read from the provider's cache, ``cache_write_tokens`` (only when any) those written to it."""
    meta: dict[str, Any] = dict(message.usage_metadata or {})
    details: dict[str, Any] = dict(meta.get("input_token_details") or {})
    usage = {
        "input_tokens": int(meta.get("input_tokens") or 0),
        "cached_tokens": int(details.get("cache_read") or 0),
        "output_tokens": int(meta.get("output_tokens") or 0),
    }
    written = int(details.get("cache_creation") or 0) + sum(
        int(details.get(k) or 0) for k in ("ephemeral_5m_input_tokens", "ephemeral_1h_input_tokens"))
    # Anthropic's server-side compaction is a sampling iteration of its own, billed but left out of the
    # top-level usage (BetaUsage.iterations, type compaction): counted here with the reply's tokens
    raw = (message.response_metadata or {}).get("usage")
    for iteration in (raw.get("iterations") or []) if isinstance(raw, dict) else []:
        if isinstance(iteration, dict) and iteration.get("type") == "compaction":
            read, wrote = int(iteration.get("cache_read_input_tokens") or 0), int(iteration.get("cache_creation_input_tokens") or 0)
            usage["input_tokens"] += int(iteration.get("input_tokens") or 0) + read + wrote
            usage["cached_tokens"] += read
            usage["output_tokens"] += int(iteration.get("output_tokens") or 0)
            written += wrote
    if written:
        usage["cache_write_tokens"] = written
    return usage


# What of a reply's metadata is kept in the cache: the finish reason and model, and what a provider
# reports of its own context management (Anthropic: ``stop_reason``, ``context_management``'s applied
# edits; the Responses API: the response's ``id``), which the provider arms read.
_KEPT_METADATA = ("finish_reason", "model_name", "system_fingerprint", "stop_reason", "context_management",
                  "model_provider")


def _stored_reply(message: AIMessage) -> dict[str, Any]:
    data = message_to_dict(message.model_copy(update={"id": None}))
    data["data"]["response_metadata"] = {k: v for k, v in (message.response_metadata or {}).items()
                                         if k in _KEPT_METADATA and v is not None}
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
    cache: ReplyStore | None = None
    max_concurrency: int | str = 4
    max_concurrency_cap: int = DEFAULT_CAP
    limiter: Any = field(default=None, repr=False)  # FixedLimiter | AdaptiveLimiter; built from the two above
    max_retries: int = 6
    backoff_base: float = 1.0
    backoff_max: float = 60.0
    check_endpoint: bool = True
    check_timeout: float = 15.0
    api_key: str | None = field(default=None, repr=False)
    price: Price | None = None  # USD per million tokens: each call's record gets its cost_usd
    batch: Any = None  # a bench.llm.batch.BatchRound: the calls go through the Batch API (model.batch)
    provider: str = "openai"  # openai (any OpenAI-compatible endpoint) | anthropic (the Messages API)
    api: str = "chat"  # openai: chat (chat completions) | responses (the Responses API)
    # messages -> messages as sent, given the length of the request's shared prefix (None: none):
    # Anthropic's explicit cache_control breakpoints (bench.llm.anthropic_client); never part of the cache key
    prepare: Any = field(default=None, repr=False)
    # the provider's own fail-fast check, ``check(client)`` raising ModelSetupError (None: GET {endpoint}/models)
    check: Any = field(default=None, repr=False)

    def __post_init__(self) -> None:
        try:
            self.max_concurrency = parse_concurrency(self.max_concurrency, f"{self.role}.max_concurrency")
            self.max_concurrency_cap = parse_cap(self.max_concurrency_cap, f"{self.role}.max_concurrency_cap")
        except ValueError as err:
            raise ModelSetupError(str(err)) from None
        if self.limiter is None:  # parsed: an integer, or auto
            fixed = self.max_concurrency
            self.limiter = (FixedLimiter(fixed, self.endpoint) if isinstance(fixed, int)
                            else shared_limiter(self.endpoint, cap=self.max_concurrency_cap))
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
        if self.check is not None:  # the provider's own check (Anthropic: its SDK's models.list)
            self.check(self)
            if seen is not None:
                seen.add(marker)
            return
        import httpx

        base, query = split_query(self.endpoint)
        url = base.rstrip("/") + "/models"
        headers = {"Authorization": f"Bearer {self.api_key}"} if self._secrets else {}
        try:
            response = httpx.get(url, params=query, headers=headers, timeout=self.check_timeout,
                                 follow_redirects=True)
        except httpx.HTTPError as err:
            reason = scrub(str(err) or type(err).__name__, self._secrets)
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
                tool_choice: str | None = None, extra: dict[str, Any] | None = None) -> dict[str, Any]:
        """The part of a request that determines the reply (the cache key's content)."""
        head = {"model": self.model, "endpoint": self.endpoint, "params": self.params, "tools": tools or []}
        if tool_choice is not None:
            head["tool_choice"] = tool_choice
        if extra:  # a provider arm's request parameters (betas, context_management ...)
            head["extra"] = extra
        return {**head, "messages": [canonical_message(m) for m in messages]}

    def key(self, messages: list[BaseMessage], tools: list[dict[str, Any]] | None = None,
            tool_choice: str | None = None, extra: dict[str, Any] | None = None) -> str:
        """The cache key: the SHA-256 of the request's canonical JSON (:func:`bench.cache.request_key`)."""
        return request_key(self.request(messages, tools, tool_choice, extra))

    def chat(self, messages: list[BaseMessage], tools: list[dict[str, Any]] | None = None,
             tags: dict[str, Any] | None = None, tool_choice: str | None = None,
             callbacks: list[Any] | None = None, extra: dict[str, Any] | None = None,
             prefix: int | None = None) -> tuple[AIMessage, dict[str, Any]]:
        """One chat completion: ``(reply, accounting record)``, from the cache when possible.

        ``callbacks``: LangChain callbacks of the call (a tracer's); inside a LangGraph run the
        call inherits the run's own. ``extra``: request parameters of this call beyond the client's
        (a provider arm's ``betas``, ``context_management`` ...; part of the cache key). ``prefix``:
        how many leading messages every request of the view shares (system and view): the
        provider's explicit cache breakpoints go there (``prepare``; not part of the key).

        Raises :class:`ContextOverflow` when the endpoint refuses the request as too long,
        :class:`ModelCallError` when it keeps failing (or fails in a way retries cannot fix).
        """
        # the cache key serializes the whole request (5% of a call's client CPU): not made without a cache
        key = self.key(messages, tools, tool_choice, extra) if self.cache is not None else None
        record: dict[str, Any] = {"kind": self.kind, "model": self.model, **current_tags(), **(tags or {})}
        if key is not None:
            record["key"] = key[:16]
        cached = self.cache.get(key) if self.cache is not None and key is not None else None
        if cached is not None:
            reply = cast(AIMessage, messages_from_dict([cached["message"]])[0])  # stored from an AIMessage (below)
            record.update(cached=True, retries=0, **cached["usage"], latency_s=cached.get("latency_s", 0.0))
            self._priced(record)
            emit(record)
            return reply, record
        if extra and self.batch is not None:
            raise ModelCallError(f"{self.role}: a provider arm's request parameters cannot go through the Batch API "
                                 f"(set {self.role}.batch=false)")
        sent = self.prepare(messages, prefix) if self.prepare is not None else messages
        try:
            reply, latency, retries = self._invoke(sent, tools, tool_choice, callbacks, key, extra)
        except (ContextOverflow, ModelCallError) as err:
            record.update(cached=False, failed=True, retries=getattr(err, "retries", 0),
                          outcome="context_overflow" if isinstance(err, ContextOverflow) else "error")
            emit(record)
            raise
        if not isinstance(reply, AIMessage):
            raise ModelCallError(f"{self.role}: {self.model} returned {type(reply).__name__}, not an AI message")
        usage = _usage_of(reply)
        if self.cache is not None and key is not None:
            self.cache.put(key, {"message": _stored_reply(reply), "usage": usage, "latency_s": latency},
                           kind=self.kind, model=self.model)
        record.update(cached=False, retries=retries, **usage, latency_s=latency)
        self._priced(record)
        emit(record)
        return reply, record

    def _priced(self, record: dict[str, Any]) -> None:
        """The call's cost at the price table (a cache hit: what the original call cost)."""
        if self.batch is not None:
            record["batch"] = True
        if self.price is not None:
            record["cost_usd"] = round(self.price.cost(int(record.get("input_tokens") or 0),
                                                       int(record.get("cached_tokens") or 0),
                                                       int(record.get("output_tokens") or 0),
                                                       batch=bool(record.get("batch")),
                                                       cache_write_tokens=int(record.get("cache_write_tokens") or 0)), 8)

    def fetch(self, op: str, body: dict[str, Any], send: Any, usage_of: Any,
              tags: dict[str, Any] | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
        """One call of an endpoint that is not a chat completion (the Responses API's ``responses.compact``):
        ``(response as JSON data, accounting record)``, with the same cache, retries, limiter, accounting
        and price as :meth:`chat`. ``body`` is the request as sent (the cache key holds it, with ``op``,
        the model and the endpoint); ``send()`` makes the call and returns the response's JSON data;
        ``usage_of(data)`` reads its ``{input_tokens, cached_tokens, output_tokens}``."""
        key = request_key({"op": op, "model": self.model, "endpoint": self.endpoint, "body": body}) \
            if self.cache is not None else None
        record: dict[str, Any] = {"kind": self.kind, "model": self.model, "op": op, **current_tags(), **(tags or {})}
        if key is not None:
            record["key"] = key[:16]
        cached = self.cache.get(key) if self.cache is not None and key is not None else None
        if cached is not None and isinstance(cached.get("response"), dict):
            record.update(cached=True, retries=0, **cached["usage"], latency_s=cached.get("latency_s", 0.0))
            self._priced(record)
            emit(record)
            return cached["response"], record
        try:
            data, latency, retries = self._retrying(send)
        except (ContextOverflow, ModelCallError) as err:
            record.update(cached=False, failed=True, retries=getattr(err, "retries", 0),
                          outcome="context_overflow" if isinstance(err, ContextOverflow) else "error")
            emit(record)
            raise
        usage = usage_of(data)
        if self.cache is not None and key is not None:
            self.cache.put(key, {"response": data, "usage": usage, "latency_s": latency}, kind=self.kind,
                           model=self.model)
        record.update(cached=False, retries=retries, **usage, latency_s=latency)
        self._priced(record)
        emit(record)
        return data, record

    def _invoke_batch(self, messages: list[BaseMessage], tools: list[dict[str, Any]] | None, tool_choice: str | None,
                      key: str | None = None) -> tuple[Any, float, int]:
        """One call through the Batch API: the request body as the chat endpoint takes it, its reply
        as a LangChain message (public converters of langchain_core), latency from submit to reply."""
        body = batch_body(self.model, self.params, messages, tools, tool_choice)
        custom_id = (key or self.key(messages, tools, tool_choice))[:40]  # the cache's key when it made one
        start = time.perf_counter()
        reply = self.batch.submit(custom_id, body)
        choices = reply.get("choices") if isinstance(reply, dict) else None
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict) \
                or not isinstance(choices[0].get("message"), dict):
            raise ModelCallError(f"{self.model} at {self.endpoint}: a batch reply without a message")
        message = cast(AIMessage, convert_to_messages([{**choices[0]["message"], "role": "assistant"}])[0])
        usage: dict[str, Any] = reply["usage"] if isinstance(reply.get("usage"), dict) else {}
        details: dict[str, Any] = (usage["prompt_tokens_details"] if isinstance(usage.get("prompt_tokens_details"), dict)
                                   else {})
        message.usage_metadata = UsageMetadata(  # a count that is not a number counts 0, as on a direct call
            input_tokens=tokens(usage.get("prompt_tokens")), output_tokens=tokens(usage.get("completion_tokens")),
            total_tokens=tokens(usage.get("total_tokens")),
            input_token_details=InputTokenDetails(cache_read=tokens(details.get("cached_tokens"))))
        message.response_metadata = {"finish_reason": choices[0].get("finish_reason"), "model_name": reply.get("model")}
        return message, round(time.perf_counter() - start, 3), 0

    def _runnable(self, tools: list[dict[str, Any]] | None, tool_choice: str | None,
                  extra: dict[str, Any] | None = None) -> Runnable[Any, Any]:
        runnable = self.llm
        if tools:
            runnable = self.llm.bind_tools(tools, tool_choice=tool_choice) if tool_choice else self.llm.bind_tools(tools)
        return runnable.bind(**extra) if extra else runnable

    def _invoke(self, messages: list[BaseMessage], tools: list[dict[str, Any]] | None, tool_choice: str | None,
                callbacks: list[Any] | None = None, key: str | None = None,
                extra: dict[str, Any] | None = None) -> tuple[Any, float, int]:
        if self.batch is not None:
            return self._invoke_batch(messages, tools, tool_choice, key)
        runnable = self._runnable(tools, tool_choice, extra)
        config = RunnableConfig(callbacks=callbacks) if callbacks else None

        def call() -> Any:
            try:
                return runnable.invoke(messages, config)
            except openai.LengthFinishReasonError as err:  # structured-output parsing of a cut reply
                return _truncated_reply(err)

        return self._retrying(call)

    def _retrying(self, call: Any) -> tuple[Any, float, int]:
        """``call()`` under the limiter, retried with backoff on transient errors: (result, latency of the
        attempt that succeeded, retries)."""
        attempt = 0
        while True:
            # the slot is held for the request only (not while sleeping before a retry), and the
            # limiter hears every outcome; latency is measured from the slot, without the wait for it
            ticket = self.limiter.acquire()
            start = time.perf_counter()
            outcome, wait, error = "error", None, None
            try:
                reply = call()
                outcome = "ok"
            except Exception as raised:  # noqa: BLE001 - classified below, once the slot is back
                error = _unwrapped(raised)
                outcome, wait = load_outcome(error), retry_after(error)
            finally:
                self.limiter.release(ticket, outcome, wait)
            if error is None:
                return reply, round(time.perf_counter() - start, 3), attempt
            err = error
            what = classify_error(err)
            text = scrub(f"{type(err).__name__}: {getattr(err, 'message', None) or err}", self._secrets)
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



# --------------------------------------------------------------------------- construction

def batch_body(model: str, params: dict[str, Any], messages: list[BaseMessage], tools: list[dict[str, Any]] | None,
               tool_choice: str | None) -> dict[str, Any]:
    """A chat completion request body as the Batch API's lines carry it (the same fields a direct call sends)."""
    body: dict[str, Any] = {"model": model, "messages": convert_to_openai_messages(messages)}
    if tools:
        body["tools"] = tools
        if tool_choice:
            body["tool_choice"] = tool_choice
    if params.get("temperature") is not None:
        body["temperature"] = params["temperature"]
    if params.get("seed") is not None:
        body["seed"] = params["seed"]
    if params.get("max_tokens") is not None and "max_tokens" not in (params.get("extra_body") or {}):
        body["max_completion_tokens"] = params["max_tokens"]
    return {**body, **(params.get("model_kwargs") or {}), **(params.get("extra_body") or {})}


def _empty_reply_text(body: Any) -> str:
    """What a 200 reply without choices held (its error field if any, else the body), shortened."""
    try:
        text = json.dumps(body, ensure_ascii=False, default=str)
    except (TypeError, ValueError):  # whatever came back, say something about it
        text = repr(body)
    text = text if len(text) <= 300 else text[:297] + "..."
    return f"the endpoint answered 200 with no choices: {redact.scrub(text)}"


def _check_choices(response: Any) -> None:
    """httpx response hook: a chat completion answered 200 without choices raises :class:`EmptyReply`
    (LangChain would fail with an IndexError on it, saying nothing of what came back)."""
    if response.status_code != 200 or not response.request.url.path.endswith("/chat/completions"):
        return
    if "json" not in response.headers.get("content-type", ""):
        return  # a stream: LangChain reads it event by event
    response.read()
    try:
        body = response.json()
    except ValueError:
        return
    if isinstance(body, dict) and not body.get("choices"):
        raise EmptyReply(_empty_reply_text(body))
    if isinstance(body, dict) and isinstance(body["choices"], list):
        for number, choice in enumerate(body["choices"]):
            if not isinstance(choice, dict) or not isinstance(choice.get("message"), dict):
                text = json.dumps(choice, ensure_ascii=False, default=str)[:300]
                raise EmptyReply(f"the endpoint answered 200 with a malformed reply: choice {number} has no "
                                 f"message: {redact.scrub(text)}")


def _bad_usage(usage: Any) -> bool:
    """A ``usage`` that is not counts: a value that is not a non-negative integer (nested details too)."""
    if usage is None:
        return False
    if not isinstance(usage, dict):
        return True
    for value in usage.values():
        if isinstance(value, dict):
            if _bad_usage(value):
                return True
        elif value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
            return True
    return False


def _usage_checking_transport() -> Any:
    """An HTTP transport of the package the openai SDK is built on (``httpx``, or its fork ``httpx2``):
    a 200 chat completion whose ``usage`` is not counts (strings, negatives) loses its usage, not its
    content: the reply is passed on with usage unknown (``null``, counted as 0 tokens)."""
    http = importlib.import_module(next(c for c in openai.DefaultHttpxClient.__mro__[1:]
                                        if c.__name__ == "Client").__module__.split(".")[0])

    transport: Any = http.HTTPTransport  # known at run time only (whichever package the SDK is built on)

    class UsageChecking(transport):
        def handle_request(self, request: Any) -> Any:
            response = super().handle_request(request)
            if (response.status_code != 200 or not request.url.path.endswith("/chat/completions")
                    or "json" not in response.headers.get("content-type", "")):
                return response
            content = response.read()
            try:
                body = json.loads(content)
            except ValueError:
                return response
            if not isinstance(body, dict) or not _bad_usage(body.get("usage")):
                return response
            log.warning("%s answered with a usage that is not token counts (%s): usage treated as unknown",
                        redact.scrub(str(request.url)), redact.scrub(json.dumps(body.get("usage"), default=str)[:200]))
            body["usage"] = None
            headers = [(k, v) for k, v in response.headers.items()
                       if k.lower() not in ("content-length", "content-encoding", "transfer-encoding")]
            return http.Response(response.status_code, headers=headers, content=json.dumps(body).encode("utf-8"),
                                 request=request, extensions=response.extensions)

    # the SDK's own pool size (its client sets these only on the transport it would build itself)
    return UsageChecking(limits=http.Limits(max_connections=1000, max_keepalive_connections=100))


def _http_client() -> Any:
    """The openai SDK's default HTTP client, with the no-choices check as a response hook and the usage check."""
    return openai.DefaultHttpxClient(event_hooks={"response": [_check_choices]}, transport=_usage_checking_transport())


def _unwrapped(err: BaseException) -> BaseException:
    """The error a hook raised inside the SDK's transport, not the SDK's connection error around it."""
    cause = err.__cause__
    return cause if isinstance(err, openai.APIConnectionError) and isinstance(cause, EmptyReply) else err


def split_query(url: str) -> tuple[str, dict[str, str]]:
    """``http://h/v1?key=K`` -> (``http://h/v1``, ``{"key": "K"}``): the openai client appends paths to the base."""
    from urllib.parse import parse_qsl, urlsplit, urlunsplit

    parts = urlsplit(url)
    if not parts.query:
        return url, {}
    base = urlunsplit((parts.scheme, parts.netloc, parts.path, "", "")).rstrip("/")
    return base, dict(parse_qsl(parts.query, keep_blank_values=True))


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
    cache_url: str | None = None,
    price: dict[str, Any] | None = None,
    batch: bool = False,
    batch_quiet_s: float = 1.0,
    batch_poll_s: float = 5.0,
    api: str = "chat",
) -> ChatClient:
    """A :class:`ChatClient` over ``langchain-openai``'s ``ChatOpenAI`` (any OpenAI-compatible endpoint).

    ``max_tokens_field``: ``max_completion_tokens`` (OpenAI) or ``max_tokens`` (servers that
    only know the older field, e.g. llama.cpp's python server). Retries are done here, not
    by the openai client, so every retry is counted and logged. ``max_concurrency``: ``auto``
    (the endpoint's shared adaptive limit, up to ``max_concurrency_cap``) or an integer.
    ``api``: ``chat`` (chat completions) or ``responses`` (the Responses API: ``ChatOpenAI`` with
    ``use_responses_api``, what ``arm=openai_compact`` answers through; it takes no ``seed``, so
    none is sent, and no batch mode here).
    """
    from langchain_openai import ChatOpenAI
    from pydantic import SecretStr

    if not name:
        raise ModelSetupError(f"{role}.name is empty: give the model name the endpoint serves")
    if api not in ("chat", "responses"):
        raise ModelSetupError(f"{role}.api must be chat or responses, got {api!r}")
    if api == "responses" and batch:
        raise ModelSetupError(f"{role}.batch=true goes through the chat completions Batch API: not with "
                              f"{role}.api=responses")
    if max_tokens_field not in ("max_completion_tokens", "max_tokens"):
        raise ModelSetupError(f"{role}.max_tokens_field must be max_completion_tokens or max_tokens, "
                              f"got {max_tokens_field!r}")
    key = resolve_api_key(api_key_env, role)
    endpoint = (base_url or OPENAI_BASE_URL).rstrip("/")
    redact.register_url(endpoint)  # a key in its query or userinfo is scrubbed like api keys
    base, query = split_query(endpoint)
    body = dict(extra_body or {})
    kwargs: dict[str, Any] = {}
    if max_tokens is not None:
        if max_tokens_field == "max_tokens":
            body["max_tokens"] = int(max_tokens)
        else:
            kwargs["max_tokens"] = int(max_tokens)
    if temperature is not None:
        kwargs["temperature"] = float(temperature)
    if api == "responses":
        kwargs["use_responses_api"] = True
    llm = ChatOpenAI(
        model=name,
        base_url=base,
        default_query=query or None,  # ?key=... / ?api-version=... on every request, not glued to the path
        api_key=SecretStr(key),
        seed=seed if api == "chat" else None,  # responses.create takes no seed
        timeout=timeout,
        max_retries=0,
        model_kwargs=dict(model_kwargs or {}),
        extra_body=body or None,
        http_client=_http_client(),
        **kwargs,
    )
    # the SDK's chat.completions with create posting the payload as it is (no request transform: ~14 ms
    # of CPU per call on a long history); ChatOpenAI calls whatever resource its `client` field holds
    llm.client = PlainCompletions(llm.root_client)
    params = {
        "temperature": temperature,
        "seed": seed,
        "max_tokens": max_tokens,
        "model_kwargs": dict(model_kwargs or {}),
        "extra_body": body,
        **({"api": api} if api != "chat" else {}),  # chat: the keys as before the Responses API existed
    }
    return ChatClient(
        llm=llm, model=name, endpoint=endpoint, params=params, role=role, kind=kind,
        cache=open_cache(cache_path, cache_enabled, cache_url), max_concurrency=max_concurrency,
        max_concurrency_cap=max_concurrency_cap,
        max_retries=int(max_retries), backoff_base=float(backoff_base), backoff_max=float(backoff_max),
        check_endpoint=bool(check_endpoint), check_timeout=min(float(timeout), 15.0), api_key=key,
        price=Price.of(price, role), api=api,
        batch=shared_round(base, key if key != "no-key" else None, quiet_s=batch_quiet_s, poll_s=batch_poll_s,
                           max_retries=int(max_retries), backoff_base=float(backoff_base),
                           backoff_max=float(backoff_max))
        if batch else None,
    )
