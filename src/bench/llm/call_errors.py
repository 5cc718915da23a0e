"""Model-call errors and how each is handled: overflow (not retried), transient (retried), fatal.

    classify_error(err)   # "overflow" | "retry" | "fatal"
    load_outcome(err)     # what the error says about the endpoint's load (for the limiter)
    retry_after(err)      # seconds the server asks to wait, or None
"""

from __future__ import annotations

import contextlib
import email.utils
import re
import sys
import time

from bench.core.errors import BenchError

__all__ = ["ModelSetupError", "ContextOverflow", "ModelCallError", "EmptyReply", "classify_error", "load_outcome",
           "retry_after"]


class ModelSetupError(BenchError, RuntimeError):
    """Missing key, unreachable endpoint, bad model settings: reported in one line, no traceback."""


class ContextOverflow(RuntimeError):
    """The endpoint refused the request as longer than the model's context (not retried)."""

    retries: int = 0  # the retries made before it (set where it is raised)


class ModelCallError(RuntimeError):
    """A model call that failed for good (after retries, or an error that is not transient)."""

    retries: int = 0  # the retries made before it (set where it is raised)


class EmptyReply(RuntimeError):
    """The endpoint answered 200 without a choice (some gateways do this for upstream failures): retried."""


_OVERFLOW = re.compile(
    r"context[_ ]length[_ ]exceeded|maximum context length|context window|context length|"
    r"prompt is too long|too many tokens|exceeds? (?:the )?(?:model'?s? )?(?:maximum )?(?:context|token limit)|"
    r"input tokens exceed|ContextWindowExceeded|reduce the length of the messages",
    re.IGNORECASE,
)
_RETRY_STATUS = {408, 409, 425, 429}
# LangChain's own overflow error (a tuple for isinstance: empty on a langchain-core without it)
_LC_OVERFLOW: tuple[type[BaseException], ...]
try:
    from langchain_core.exceptions import ContextOverflowError

    _LC_OVERFLOW = (ContextOverflowError,)
except ImportError:  # pragma: no cover - older langchain-core
    _LC_OVERFLOW = ()


def _sdks() -> tuple:
    """The model SDKs whose errors may reach here: openai always; anthropic when a client of it was built
    (an error from it means it is loaded, and the offline stack never imports it)."""
    import openai  # only when a call failed: the offline stack never imports the SDK

    loaded = sys.modules.get("anthropic")
    return (openai,) if loaded is None else (openai, loaded)


def _is(err: BaseException, name: str) -> bool:
    """``err`` is an instance of the SDKs' error class ``name`` (both SDKs name them alike)."""
    return any(isinstance(err, getattr(sdk, name)) for sdk in _sdks() if hasattr(sdk, name))


def classify_error(err: BaseException) -> str:
    """``overflow`` (not retried), ``retry`` (transient) or ``fatal``."""
    if isinstance(err, _LC_OVERFLOW):
        return "overflow"
    code = str(getattr(err, "code", "") or "")
    status = getattr(err, "status_code", None)
    message = str(getattr(err, "message", "") or err)
    if code == "context_length_exceeded":
        return "overflow"
    if status in (400, 413) and _OVERFLOW.search(message):
        return "overflow"
    streamed = _is(err, "APIError") and status is None and not (
        _is(err, "APIConnectionError") or _is(err, "APITimeoutError"))
    if streamed and _OVERFLOW.search(message):  # an error event inside a streamed reply
        return "overflow"
    if any(_is(err, name) for name in ("APITimeoutError", "APIConnectionError", "RateLimitError",
                                       "InternalServerError")):
        return "retry"
    if _is(err, "APIStatusError") and isinstance(status, int):
        return "retry" if (status in _RETRY_STATUS or status >= 500) else "fatal"
    if _is(err, "APIError"):  # error event inside a stream, no status
        return "retry" if code in ("server_error", "rate_limit_exceeded", "overloaded_error") else "fatal"
    if isinstance(err, (TimeoutError, ConnectionError, EmptyReply)):
        return "retry"
    return "fatal"


def retry_after(err: BaseException) -> float | None:
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
    """What a failed request says about the endpoint's load, for the limiter (:data:`bench.llm.limiter.OUTCOMES`):
    ``rate_limited`` (429), ``overloaded`` (503/529), ``timeout`` (a timeout, 408/504) or ``error`` (no signal)."""
    status = getattr(err, "status_code", None)
    code = str(getattr(err, "code", "") or "")
    if status == 429 or _is(err, "RateLimitError") or code == "rate_limit_exceeded":
        return "rate_limited"
    if status in _OVERLOAD_STATUS or code in ("overloaded", "overloaded_error"):
        return "overloaded"
    if status in _TIMEOUT_STATUS or _is(err, "APITimeoutError") or isinstance(err, TimeoutError):
        return "timeout"
    return "error"
