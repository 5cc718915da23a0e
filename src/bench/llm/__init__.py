"""Model calls: the client (cache, retries, concurrency, accounting), its errors, keys and limiter.

    from bench.llm import model_client, openai_client, call_tags, call_sink
    client = openai_client("model", name="gpt-4o-mini", seed=0)
    client = model_client("model", kind="answer", provider="anthropic", name="claude-sonnet-4-5")
    reply, record = client.chat(messages, tools)
"""

from typing import Any

from bench.llm.accounting import (
    USAGE_KEYS,
    call_callbacks,
    call_observer,
    call_sink,
    call_tags,
    current_callbacks,
    current_tags,
    sum_usage,
    summarize_calls,
)
from bench.llm.call_errors import (
    ContextOverflow,
    EmptyReply,
    ModelCallError,
    ModelSetupError,
    classify_error,
    load_outcome,
    retry_after,
)

__all__ = [
    "OPENAI_BASE_URL", "USAGE_KEYS", "ChatClient", "ContextOverflow", "EmptyReply", "ModelCallError",
    "ModelSetupError", "call_callbacks", "call_observer", "call_sink", "call_tags", "current_callbacks", "canonical_message", "classify_error", "current_tags",
    "load_outcome", "model_client", "openai_client", "anthropic_client", "resolve_api_key", "retry_after", "sum_usage",
    "summarize_calls", "PROVIDERS",
]

PROVIDERS = ("openai", "anthropic")  # model.provider: the chat model a ChatClient wraps


def model_client(role: str = "model", *, kind: str = "answer", provider: str = "openai", **settings: Any) -> Any:
    """The :class:`ChatClient` of a model group's settings: ``provider`` openai (``ChatOpenAI``, any
    OpenAI-compatible endpoint) or anthropic (``ChatAnthropic``, the Messages API)."""
    if provider == "openai":
        from bench.llm.client import openai_client

        return openai_client(role, kind=kind, **settings)
    if provider == "anthropic":
        from bench.llm.anthropic_client import anthropic_client

        return anthropic_client(role, kind=kind, **settings)
    raise ModelSetupError(f"{role}.provider must be one of {', '.join(PROVIDERS)}, got {provider!r}")


def __getattr__(name: str) -> Any:
    # the client (and the openai SDK under it) is imported on first use: an offline job needs neither
    if name in ("OPENAI_BASE_URL", "ChatClient", "canonical_message", "openai_client"):
        from bench.llm import client

        return getattr(client, name)
    if name == "anthropic_client":
        from bench.llm.anthropic_client import anthropic_client

        return anthropic_client
    if name == "resolve_api_key":
        from bench.llm.keys import resolve_api_key

        return resolve_api_key
    raise AttributeError(f"module 'bench.llm' has no attribute {name!r}")
