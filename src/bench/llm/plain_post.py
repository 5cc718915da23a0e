"""Chat completions posted as they are: ``ChatOpenAI`` without the openai SDK's request transform.

``ChatOpenAI`` sends a chat request as ``client.with_raw_response.create(**payload)``, where
``client`` is the openai SDK's ``chat.completions`` resource. The SDK's ``create`` first walks
the whole payload against its TypedDicts (``maybe_transform``: every message against each member
of the message union) to rename aliased keys and format dates and files. A chat-completions
payload has none of those, so the walk returns the payload unchanged, but it costs ~14 ms of
CPU per call on a long history (about two thirds of an answering call's client CPU).

:class:`PlainCompletions` is that resource with ``create`` going through the SDK's documented
request method for raw requests, ``client.post(path, body=..., cast_to=...)``, which sends
``body`` as it is. ``ChatOpenAI`` takes the resource it calls as its ``client`` field, so
everything else stays stock: LangChain builds the payload and parses the reply, its callbacks
(tracing) see the call, its error mapping runs, the SDK's HTTP client, auth, timeouts and
status errors apply. The body is byte-identical to the SDK's: the same keys in the SDK's order
(``model``, ``stream``, ``service_tier``, ``messages``, then the others alphabetically, as its
``create`` lists them), ``extra_body`` merged last, encoded as the SDK encodes (``tests/bench/llm/test_plain_post.py`` compares
the bytes on every message of the real data). Anything it does not take as is (streaming, an
unknown parameter, a value that is not JSON data) goes to the SDK's own ``create``.

    llm = ChatOpenAI(...)
    llm.client = PlainCompletions(llm.root_client)
"""

from __future__ import annotations

import json
from typing import Any

import openai
from openai.types.chat import ChatCompletion

__all__ = ["PlainCompletions", "encoded", "ordered_body"]

# the SDK's create lists these first in its body; the other parameters follow in alphabetical order
_FIRST = ("model", "stream", "service_tier", "messages")
# create's parameters that are request options, not body keys
_OPTIONS = ("extra_headers", "extra_query", "extra_body", "timeout")


def _is_given(value: Any) -> bool:
    return not isinstance(value, (openai.NotGiven, openai.Omit))


def ordered_body(params: dict[str, Any]) -> dict[str, Any]:
    """The chat-completions body the SDK's ``create(**params)`` sends, key order included
    (omitted values dropped, ``extra_body`` merged last)."""
    body = {k: params[k] for k in _FIRST if k in params and _is_given(params[k])}
    for key in sorted(params):
        if key not in body and key not in _OPTIONS and _is_given(params[key]):
            body[key] = params[key]
    extra = params.get("extra_body")
    if extra:
        body = {**body, **extra}  # what the SDK's merge of extra_body does: its keys win, in place or last
    return body


def encoded(body: dict[str, Any]) -> bytes | None:
    """``body`` as the SDK's JSON encoder writes it (``openapi_dumps``: compact, UTF-8, no NaN), or None
    when it holds something that is not JSON data (a date, a model, a file): the transform's business."""
    try:
        return json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()
    except (TypeError, ValueError):
        return None


class _Parsed:
    """What ``with_raw_response.create`` returns, as much of it as ``ChatOpenAI`` reads: ``parse()``."""

    def __init__(self, completion: ChatCompletion) -> None:
        self._completion = completion

    def parse(self) -> ChatCompletion:
        return self._completion


class _RawResponse:
    def __init__(self, owner: PlainCompletions) -> None:
        self._owner = owner

    def create(self, **params: Any) -> Any:
        content = self._owner.encode(params)
        if content is None:
            return self._owner.stock.with_raw_response.create(**params)
        return _Parsed(self._owner.post(params, content))


class PlainCompletions:
    """The openai SDK's ``chat.completions`` resource of ``client``, with ``create`` (also through
    ``with_raw_response``) posting the parameters as they are; every other attribute is the SDK's."""

    def __init__(self, client: openai.OpenAI) -> None:
        self.client = client
        self.stock = client.chat.completions
        self.posted = 0  # requests sent through client.post (tests check that the route is taken)
        # the parameters create accepts: an unknown one goes to create, which rejects it as before
        import inspect

        self._names = frozenset(inspect.signature(type(self.stock).create).parameters) - {"self"}

    def takes(self, params: dict[str, Any]) -> bool:
        """Whether ``params`` can be posted as they are: not a stream, only parameters create knows."""
        return not params.get("stream") and params.keys() <= self._names

    def encode(self, params: dict[str, Any]) -> bytes | None:
        """The request body of ``params`` as bytes, or None when the SDK's create is to send them."""
        return encoded(ordered_body(params)) if self.takes(params) else None

    def post(self, params: dict[str, Any], content: bytes) -> ChatCompletion:
        """One chat completion through ``client.post``: ``content``, the body of ``params`` (their
        request options apply: extra headers, extra query, timeout)."""
        options: openai.RequestOptions = {"security": {"bearer_auth": True}}  # the auth create asks for
        if params.get("extra_headers"):
            options["headers"] = params["extra_headers"]
        if params.get("extra_query"):
            options["params"] = params["extra_query"]
        if "timeout" in params and _is_given(params["timeout"]):
            options["timeout"] = params["timeout"]
        self.posted += 1
        return self.client.post("/chat/completions", content=content, cast_to=ChatCompletion, options=options)

    def create(self, **params: Any) -> Any:
        content = self.encode(params)
        if content is None:
            return self.stock.create(**params)
        return self.post(params, content)

    @property
    def with_raw_response(self) -> _RawResponse:
        return _RawResponse(self)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stock, name)
