"""API keys: read from the environment only, registered for scrubbing, never written anywhere.

    key = resolve_api_key("OPENAI_API_KEY", role="model")   # ModelSetupError when missing
"""

from __future__ import annotations

import os

from bench.core import redact
from bench.llm.call_errors import ModelSetupError

__all__ = ["resolve_api_key", "scrub"]


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


def scrub(text: str, secrets: tuple[str, ...]) -> str:
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "***")
    return redact.scrub(text)  # and every other configured secret (judge's, summarizer's, Langfuse's)
