"""Native Anthropic models (``model=anthropic``, ``judge=anthropic``, ``summarizer=anthropic``): a
:class:`~bench.llm.client.ChatClient` over ``langchain-anthropic``'s ``ChatAnthropic`` (the Messages API).

The same cache, retries with backoff, adaptive concurrency, accounting and price tables as the
OpenAI path (the client is the same class; only the chat model under it differs). The key is read
from the environment only (``api_key_env``, default ``ANTHROPIC_API_KEY``), registered for scrubbing
and never written; the preflight lists the models with it (``models.list``, the SDK's own request).

Prompt caching: Anthropic caches only up to explicit ``cache_control`` breakpoints. Every request of
a view shares its prefix (tools, system, the view's messages; ``bench.answering.request.first_messages``):
a breakpoint goes on the last message of that prefix, so the view's other questions read it from the
cache (the equivalent of ``model.warm_prefix`` on a provider whose cache is automatic), and one on the
latest message of a tool loop's later steps, which the next step reads back. The cached tokens are
those Anthropic reports: ``usage.cache_read_input_tokens`` (``cached_tokens`` in the call records) and
``usage.cache_creation_input_tokens`` (``cache_write_tokens``, billed at ``price.cache_write``).
Breakpoints are not part of the cache key (they do not change the reply).

    client = anthropic_client("model", kind="answer", name="claude-sonnet-4-5")
    reply, record = client.chat(messages, tools, prefix=len(messages) - 1)
"""

from __future__ import annotations

import functools
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage

from bench.cache import open_cache
from bench.core import redact
from bench.llm.call_errors import ModelSetupError
from bench.llm.client import ChatClient
from bench.llm.keys import resolve_api_key, scrub
from bench.llm.limiter import AUTO, DEFAULT_CAP
from bench.llm.price import Price

__all__ = ["ANTHROPIC_BASE_URL", "anthropic_client", "cache_breakpoints", "check_anthropic"]

ANTHROPIC_BASE_URL = "https://api.anthropic.com"
CACHE_TTLS = ("5m", "1h")  # BetaCacheControlEphemeralParam.ttl


def _marked(message: BaseMessage, control: dict[str, str]) -> BaseMessage | None:
    """``message`` with a ``cache_control`` breakpoint on its last content block, or None when it has no
    block that can hold one as ``ChatAnthropic`` formats it (an empty text; an assistant message whose
    last blocks are made from its tool calls)."""
    if isinstance(message, AIMessage) and (message.tool_calls or message.invalid_tool_calls):
        return None
    content = message.content
    if isinstance(content, str):
        if not content.strip():
            return None
        return message.model_copy(update={"content": [{"type": "text", "text": content, "cache_control": control}]})
    if isinstance(content, list) and content and isinstance(content[-1], dict):
        if content[-1].get("type") == "text" and not str(content[-1].get("text", "")).strip():
            return None
        return message.model_copy(update={"content": [*content[:-1], {**content[-1], "cache_control": control}]})
    return None


def cache_breakpoints(messages: list[BaseMessage], prefix: int | None, ttl: str = "5m") -> list[BaseMessage]:
    """The messages as sent, with explicit cache breakpoints: on the last message of the shared prefix
    (``prefix`` messages; the nearest earlier one that can hold a breakpoint), and on the last message
    when the request goes beyond the prefix and the question (a tool loop's later step)."""
    control = {"type": "ephemeral", "ttl": ttl}
    out = list(messages)
    targets = []
    if prefix:
        targets.append(min(prefix, len(out)) - 1)
    if prefix is not None and len(out) > prefix + 1:
        targets.append(len(out) - 1)
    for target in targets:
        for index in range(target, -1, -1):
            marked = _marked(out[index], control)
            if marked is not None:
                out[index] = marked
                break
    return out


def anthropic_client(
    role: str = "model",
    *,
    kind: str = "answer",
    name: str,
    base_url: str | None = None,
    api_key_env: str | None = "ANTHROPIC_API_KEY",
    temperature: float | None = 0.0,
    seed: int | None = None,
    max_tokens: int | None = 4096,
    max_tokens_field: str | None = None,
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
    prompt_cache: bool = True,
    cache_ttl: str = "5m",
    batch: bool = False,
    batch_quiet_s: float | None = None,
    batch_poll_s: float | None = None,
) -> ChatClient:
    """A :class:`ChatClient` over ``ChatAnthropic``.

    ``seed`` is recorded in the cache key (the run's seed) but not sent: the Messages API takes none.
    ``max_tokens`` is required by the API (null: ``ChatAnthropic``'s default for the model).
    ``model_kwargs`` and ``extra_body`` are request fields sent as given (both part of the cache key).
    ``prompt_cache``: explicit ``cache_control`` breakpoints (module docstring), ``cache_ttl`` 5m or 1h.
    ``max_tokens_field``, ``batch_quiet_s`` and ``batch_poll_s`` belong to the OpenAI path: a judge or
    summarizer option that takes the answering model's settings (``judge=llm``) passes them; they mean
    nothing here (the Messages API has one ``max_tokens``; ``batch`` is refused).
    """
    from langchain_anthropic import ChatAnthropic
    from pydantic import SecretStr

    if not name:
        raise ModelSetupError(f"{role}.name is empty: give the Anthropic model name (e.g. claude-sonnet-4-5)")
    if batch:
        raise ModelSetupError(f"{role}.batch=true: the Batch API path is OpenAI's; set {role}.batch=false for "
                              f"an Anthropic model")
    if cache_ttl not in CACHE_TTLS:
        raise ModelSetupError(f"{role}.cache_ttl must be one of {', '.join(CACHE_TTLS)}, got {cache_ttl!r}")
    key = resolve_api_key(api_key_env, role)
    endpoint = (base_url or ANTHROPIC_BASE_URL).rstrip("/")
    redact.register_url(endpoint)  # a key in its query or userinfo is scrubbed like api keys
    body = {**(model_kwargs or {}), **(extra_body or {})}
    kwargs: dict[str, Any] = {}
    if max_tokens is not None:
        kwargs["max_tokens"] = int(max_tokens)
    if temperature is not None:
        kwargs["temperature"] = float(temperature)
    llm = ChatAnthropic(  # by the names its signature declares (the fields' aliases)
        model_name=name,
        base_url=endpoint,
        api_key=SecretStr(key),
        timeout=float(timeout),
        max_retries=0,  # retried by the ChatClient: every retry counted and logged
        model_kwargs=body,
        **kwargs,
    )
    params = {"temperature": temperature, "seed": seed, "max_tokens": max_tokens, "model_kwargs": body,
              "provider": "anthropic"}
    return ChatClient(
        llm=llm, model=name, endpoint=endpoint, params=params, role=role, kind=kind,
        cache=open_cache(cache_path, cache_enabled, cache_url), max_concurrency=max_concurrency,
        max_concurrency_cap=max_concurrency_cap,
        max_retries=int(max_retries), backoff_base=float(backoff_base), backoff_max=float(backoff_max),
        check_endpoint=bool(check_endpoint), check_timeout=min(float(timeout), 15.0), api_key=key,
        price=Price.of(price, role), provider="anthropic",
        prepare=functools.partial(_prepared, ttl=cache_ttl) if prompt_cache else None, check=check_anthropic,
    )


def _prepared(messages: list[BaseMessage], prefix: int | None, ttl: str) -> list[BaseMessage]:
    return cache_breakpoints(messages, prefix, ttl)


def check_anthropic(client: ChatClient) -> None:
    """The fail-fast check of an Anthropic endpoint: ``GET /v1/models`` through the SDK (its version and auth
    headers); ModelSetupError (one line) when it cannot be reached or refuses the key."""
    import anthropic

    key = client.api_key if client.api_key and client.api_key != "no-key" else "no-key"
    sdk = anthropic.Anthropic(api_key=key, base_url=client.endpoint, max_retries=0, timeout=client.check_timeout)
    role, secrets = client.role, tuple(s for s in (client.api_key,) if s and s != "no-key")
    try:
        sdk.models.list(limit=1)
    except (anthropic.AuthenticationError, anthropic.PermissionDeniedError) as err:
        raise ModelSetupError(
            f"{role}: the endpoint {client.endpoint} refused the API key (HTTP {err.status_code}); check the key in "
            f"the variable named by {role}.api_key_env") from None
    except anthropic.APIConnectionError as err:
        reason = scrub(str(err) or type(err).__name__, secrets)
        raise ModelSetupError(
            f"{role}: cannot reach the endpoint {client.endpoint} ({type(err).__name__}: {reason}); check "
            f"{role}.base_url and that the server is running ({role}.check_endpoint=false skips this check)") from None
    except anthropic.APIStatusError:  # a gateway without a models list: the endpoint answers, which is the check
        pass
    finally:
        sdk.close()
