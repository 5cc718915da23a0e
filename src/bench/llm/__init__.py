"""Model calls: the client (cache, retries, concurrency, accounting), its errors, keys and limiter.

    from bench.llm import openai_client, call_tags, call_sink
    client = openai_client("model", name="gpt-4o-mini", seed=0)
    reply, record = client.chat(messages, tools)
"""

from bench.llm.accounting import (
    USAGE_KEYS,
    call_callbacks,
    call_sink,
    call_tags,
    current_callbacks,
    current_tags,
    sum_usage,
    summarize_calls,
)
from bench.llm.client import OPENAI_BASE_URL, ChatClient, canonical_message, openai_client
from bench.llm.errors import (
    ContextOverflow,
    EmptyReply,
    ModelCallError,
    ModelSetupError,
    classify_error,
    load_outcome,
    retry_after,
)
from bench.llm.keys import resolve_api_key

__all__ = [
    "OPENAI_BASE_URL", "USAGE_KEYS", "ChatClient", "ContextOverflow", "EmptyReply", "ModelCallError",
    "ModelSetupError", "call_callbacks", "call_sink", "call_tags", "current_callbacks", "canonical_message", "classify_error", "current_tags",
    "load_outcome", "openai_client", "resolve_api_key", "retry_after", "sum_usage", "summarize_calls",
]
