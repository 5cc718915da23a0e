"""Model calls: the client (cache, retries, concurrency, accounting), its errors, keys and limiter.

    from bench.llm import openai_client, call_tags, call_sink
    client = openai_client("model", name="gpt-4o-mini", seed=0)
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
from bench.llm.errors import (
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
    "load_outcome", "openai_client", "resolve_api_key", "retry_after", "sum_usage", "summarize_calls",
]


def __getattr__(name: str) -> Any:
    # the client (and the openai SDK under it) is imported on first use: an offline job needs neither
    if name in ("OPENAI_BASE_URL", "ChatClient", "canonical_message", "openai_client"):
        from bench.llm import client

        return getattr(client, name)
    if name == "resolve_api_key":
        from bench.llm.keys import resolve_api_key

        return resolve_api_key
    raise AttributeError(f"module 'bench.llm' has no attribute {name!r}")
