"""A small Anthropic Messages API server on loopback, for tests: the wire format of the ``anthropic`` SDK's
beta types, with context management, prompt caching and compaction blocks.

Not a model: ``POST /v1/messages`` (``?beta=true`` when the client sends betas) answers
deterministically, and ``GET /v1/models`` serves the preflight. What it does with a request, in the
order the API does it (context editing is applied on the server before the prompt reaches the model):

* **auth**: with ``api_key`` set, a request without it (``x-api-key: <api_key>``, or ``Authorization: Bearer
  <api_key>`` as the SDK sends it) gets 401
  (``authentication_error``);
* **betas**: a ``context_management`` edit, or a ``compaction`` block in the input, without its beta
  header (``anthropic-beta``: ``context-management-2025-06-27`` for ``clear_tool_uses_20250919``,
  ``compact-2026-01-12`` for ``compact_20260112`` and compaction blocks) is refused with 400; so is an
  edit with a key its SDK type (``BetaClearToolUses20250919EditParam``, ``BetaCompact20260112EditParam``)
  does not define, or a malformed trigger/keep/clear_at_least;
* **compaction blocks in the input** (``BetaCompactionBlockParam``): the context starts at the last one
  (everything before it is dropped), its ``content`` standing for what it summarized;
* **clear_tool_uses_20250919**: when the input reaches ``trigger`` (``input_tokens``, default 100,000, or
  ``tool_uses``), every tool use but the ``keep`` latest (default 3) and those of ``exclude_tools`` has its
  result replaced by :data:`CLEARED` (and its input emptied with ``clear_tool_inputs``: true, or a list of
  tool names), oldest first, unless that reclaims fewer than ``clear_at_least`` tokens; the response's
  ``context_management.applied_edits`` reports ``cleared_tool_uses`` and ``cleared_input_tokens``
  (``BetaClearToolUses20250919EditResponse``);
* **compact_20260112**: when the input reaches ``trigger`` (default 150,000 input tokens), the context is
  summarized into a ``compaction`` block (``BetaCompactionBlock``: a readable ``content``: the fake's
  summary is the last ``summary_chars`` characters of the conversation, after ``instructions`` if given);
  with ``pause_after_compaction`` the response is that block alone (``stop_reason: compaction``), else the
  block and then the reply to the compacted context; ``usage.iterations`` lists the compaction's own
  usage (``BetaCompactionIterationUsage``, not in the top-level counts) and the message's;
* **prompt caching**: explicit ``cache_control`` breakpoints (tools, system, messages, in that order);
  a breakpoint's prefix of at least ``min_cache_tokens`` tokens is written once the request completed
  (``cache_creation_input_tokens``) and read by a later request with the same prefix up to one of its
  breakpoints (``cache_read_input_tokens``); ``input_tokens`` counts the rest (BetaUsage);
* **the reply**: a ``finish`` tool call when the request offers that tool (its ``message``: an abstention
  or a claim, deterministic in the request), a JSON verdict when the last user text asks for one (a
  judge), otherwise a text (a summary request: the conversation's last ``summary_chars`` characters);
  ``max_context`` (tokens): a longer input is refused with 400 ``prompt is too long``;
  ``overload_first``: the first N ``POST`` requests get 529 ``overloaded_error``.

Every request is logged (``requests``: path, the ``anthropic-beta`` and ``anthropic-version`` headers,
the body; never the key) with the response it got (``responses``).

    with FakeAnthropic() as server:
        run(... model=anthropic model.base_url=server.base_url ...)
"""

from __future__ import annotations

import copy
import hashlib
import json
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, get_type_hints

from anthropic.types.beta import BetaClearToolUses20250919EditParam, BetaCompact20260112EditParam

from fake_openai import count_tokens

__all__ = ["FakeAnthropic", "CLEARED", "CONTEXT_BETA", "COMPACT_BETA"]

CONTEXT_BETA = "context-management-2025-06-27"
COMPACT_BETA = "compact-2026-01-12"
CLEARED = "[cleared]"  # what the fake puts in place of a cleared tool result (the real text is the server's own)
_EDIT_KEYS = {"clear_tool_uses_20250919": set(get_type_hints(BetaClearToolUses20250919EditParam)),
              "compact_20260112": set(get_type_hints(BetaCompact20260112EditParam))}
_EDIT_BETAS = {"clear_tool_uses_20250919": CONTEXT_BETA, "compact_20260112": COMPACT_BETA}


class BadRequest(Exception):
    """A request the API refuses (400 invalid_request_error)."""


def _text_of(content: Any) -> str:
    """The text a content (a string or a list of blocks) costs: texts, tool uses, results, compactions."""
    if isinstance(content, str):
        return content
    parts = []
    for block in content or []:
        kind = block.get("type")
        if kind == "text":
            parts.append(block.get("text", ""))
        elif kind == "tool_use":
            parts.append(f"{block.get('name', '')} {json.dumps(block.get('input') or {}, sort_keys=True)}")
        elif kind == "tool_result":
            parts.append(_text_of(block.get("content") or ""))
        elif kind == "compaction":
            parts.append(block.get("content") or "")
    return "\n".join(parts)


def _strip_cache_control(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip_cache_control(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_strip_cache_control(v) for v in value]
    return value


def _blocks(content: Any) -> list[dict[str, Any]]:
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])


class FakeAnthropic:
    """See the module docstring. ``start()`` returns ``base_url`` (``http://127.0.0.1:PORT``, no ``/v1``)."""

    def __init__(self, *, api_key: str | None = None, model: str = "claude-fake", min_cache_tokens: int = 1024,
                 summary_chars: int = 600, max_context: int | None = None, overload_first: int = 0,
                 lifetime_s: float = 600.0) -> None:
        self.api_key = api_key
        self.model = model
        self.min_cache_tokens = int(min_cache_tokens)
        self.summary_chars = int(summary_chars)
        self.max_context = max_context
        self.overload_first = int(overload_first)
        self.lifetime_s = float(lifetime_s)
        self._lock = threading.Lock()
        self._cached: set[str] = set()  # prefixes written to the prompt cache
        self._stats: Counter = Counter()
        self.requests: list[dict[str, Any]] = []
        self.responses: list[dict[str, Any]] = []
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ lifecycle
    @property
    def base_url(self) -> str:
        if self._server is None:
            raise RuntimeError("server not started")
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> str:
        fake = self

        class Handler(_Handler):
            server_fake = fake

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._server.timeout = 0.2
        deadline = time.monotonic() + self.lifetime_s
        self._stop = threading.Event()

        def loop() -> None:
            while not self._stop.is_set() and time.monotonic() < deadline:
                self._server.handle_request()
            self._server.server_close()

        self._thread = threading.Thread(target=loop, name="fake-anthropic", daemon=True)
        self._thread.start()
        return self.base_url

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeAnthropic:
        self.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def stats(self) -> dict[str, Any]:
        with self._lock:
            return dict(self._stats)

    def messages_requests(self) -> list[dict[str, Any]]:
        """The logged ``POST /v1/messages`` requests, in arrival order."""
        with self._lock:
            return [r for r in self.requests if r["path"] == "/v1/messages"]

    # ------------------------------------------------------------------ the Messages API
    def _count(self, system: Any, tools: list[dict[str, Any]], messages: list[dict[str, Any]]) -> int:
        text = _text_of(_blocks(system) if system else []) + json.dumps(_strip_cache_control(tools), sort_keys=True)
        return count_tokens(text) + sum(count_tokens(_text_of(m.get("content"))) + 4 for m in messages) + 3

    def handle(self, body: dict[str, Any], betas: set[str], entry: dict[str, Any] | None = None) -> dict[str, Any]:
        """The BetaMessage answering a request (raises :class:`BadRequest`); ``entry`` (its log entry) gets
        ``cleared``: the ids of the tool uses a clearing edit cleared, and ``sent``: the messages as edited."""
        entry = entry if entry is not None else {}
        messages = copy.deepcopy(body.get("messages") or [])
        if not messages:
            raise BadRequest("messages: at least one message is required")
        system, tools = body.get("system"), body.get("tools") or []
        edits = list((body.get("context_management") or {}).get("edits") or [])
        for edit in edits:
            kind = edit.get("type")
            if kind not in _EDIT_KEYS:
                raise BadRequest(f"context_management.edits: unknown edit type {kind!r}")
            if unknown := set(edit) - _EDIT_KEYS[kind]:
                raise BadRequest(f"context_management.edits.{kind}: Extra inputs are not permitted: {sorted(unknown)}")
            if _EDIT_BETAS[kind] not in betas:
                raise BadRequest(f"context_management {kind} requires the beta header {_EDIT_BETAS[kind]}")
        if any(b.get("type") == "compaction" for m in messages for b in _blocks(m.get("content"))):
            if COMPACT_BETA not in betas:
                raise BadRequest(f"compaction blocks require the beta header {COMPACT_BETA}")
            messages = _from_last_compaction(messages)
        applied: list[dict[str, Any]] = []
        for edit in edits:
            if edit["type"] == "clear_tool_uses_20250919":
                report = self._clear(edit, system, tools, messages, entry)
                if report is not None:
                    applied.append(report)
        usage_iterations: list[dict[str, Any]] = []
        compaction = None
        for edit in edits:
            if edit["type"] != "compact_20260112":
                continue
            trigger = _size(edit.get("trigger"), "trigger", ("input_tokens",)) or 150_000
            before = self._count(system, tools, messages)
            if before >= trigger:
                summary = self._summary(messages, edit.get("instructions"))
                compaction = {"type": "compaction", "content": summary, "encrypted_content": None}
                usage_iterations.append({"type": "compaction", "input_tokens": before, "output_tokens": count_tokens(summary),
                                         "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0})
                if edit.get("pause_after_compaction"):  # no message iteration: the top-level usage is empty
                    return self._message([compaction], "compaction", _usage(0, 0, 0, 0), applied, usage_iterations,
                                         count_iteration=False)
                messages = [{"role": "assistant", "content": [compaction]}, *messages[-1:]]
        entry["sent"] = messages
        total = self._count(system, tools, messages)
        if self.max_context is not None and total > self.max_context:
            raise BadRequest(f"prompt is too long: {total} tokens > {self.max_context} maximum")
        read, written = self._cache({**body, "messages": messages}, total)  # the prompt as edited
        content, stop = self._reply(body, messages, tools)
        output = count_tokens(_text_of(content)) + 1
        blocks = ([compaction] if compaction else []) + content
        return self._message(blocks, stop, _usage(total - read - written, read, written, output), applied,
                             usage_iterations)

    def _message(self, content: list[dict[str, Any]], stop: str, usage: dict[str, Any], applied: list[dict[str, Any]],
                 iterations: list[dict[str, Any]], count_iteration: bool = True) -> dict[str, Any]:
        if iterations:
            own = [{"type": "message", **{k: usage[k] for k in ("input_tokens", "output_tokens",
                                                                "cache_read_input_tokens",
                                                                "cache_creation_input_tokens")}}]
            usage = {**usage, "iterations": iterations + (own if count_iteration else [])}
        with self._lock:
            self._stats["messages"] += 1
            number = self._stats["messages"]
        return {"id": f"msg_fake{number:05d}", "type": "message", "role": "assistant", "model": self.model,
                "content": content, "stop_reason": stop, "stop_sequence": None, "usage": usage,
                "context_management": {"applied_edits": applied} if applied else None}

    def _clear(self, edit: dict[str, Any], system: Any, tools: list[dict[str, Any]],
               messages: list[dict[str, Any]], entry: dict[str, Any]) -> dict[str, Any] | None:
        """Applies clear_tool_uses_20250919 to ``messages`` in place; its report, or None when it did not fire."""
        uses = [(m, b) for m in messages if m.get("role") == "assistant" for b in _blocks(m.get("content"))
                if b.get("type") == "tool_use"]
        trigger = edit.get("trigger") or {"type": "input_tokens", "value": 100_000}
        value = _size(trigger, "trigger", ("input_tokens", "tool_uses"))
        reached = len(uses) >= value if trigger["type"] == "tool_uses" else self._count(system, tools, messages) >= value
        if not reached:
            return None
        keep = _size(edit.get("keep") or {"type": "tool_uses", "value": 3}, "keep", ("tool_uses",))
        excluded = set(edit.get("exclude_tools") or [])
        candidates = [(m, b) for m, b in uses if b.get("name") not in excluded]
        candidates = candidates[:max(0, len(candidates) - keep)]
        inputs = edit.get("clear_tool_inputs")
        results = {r.get("tool_use_id"): r for m in messages if m.get("role") == "user"
                   for r in _blocks(m.get("content")) if r.get("type") == "tool_result"}
        plan = []
        for _, use in candidates:
            result = results.get(use["id"])
            clear_input = inputs is True or (isinstance(inputs, list) and use.get("name") in inputs)
            tokens = (count_tokens(_text_of(result.get("content") or "")) if result else 0) + (
                count_tokens(json.dumps(use.get("input") or {}, sort_keys=True)) if clear_input else 0)
            plan.append((use, result, clear_input, tokens))
        reclaimed = sum(p[3] for p in plan)
        least = _size(edit.get("clear_at_least"), "clear_at_least", ("input_tokens",)) if edit.get("clear_at_least") else 0
        if not plan or reclaimed < least:
            return None
        for use, result, clear_input, _ in plan:
            if result is not None:
                result["content"] = CLEARED
            if clear_input:
                use["input"] = {}
        entry["cleared"] = [use["id"] for use, *_ in plan]
        return {"type": "clear_tool_uses_20250919", "cleared_tool_uses": len(plan), "cleared_input_tokens": reclaimed}

    def _summary(self, messages: list[dict[str, Any]], instructions: str | None) -> str:
        text = "\n".join(_text_of(m.get("content")) for m in messages)
        digest = hashlib.sha256(text.encode()).hexdigest()[:8]
        return f"Compaction summary {digest} (fake){': ' + instructions if instructions else ''}. {text[-self.summary_chars:]}"

    def _cache(self, body: dict[str, Any], total: int) -> tuple[int, int]:
        """(tokens read from the prompt cache, tokens written to it) for this request; the prefixes it writes
        are stored at once (a test's requests come one after the other)."""
        items: list[tuple[Any, bool]] = []  # (block, has a breakpoint) in cache order: tools, system, messages
        items += [(t, "cache_control" in t) for t in body.get("tools") or []]
        items += [(b, "cache_control" in b) for b in _blocks(body.get("system") or [])]
        for message in body.get("messages") or []:
            for block in _blocks(message.get("content")):
                items.append(({"role": message.get("role"), **block}, "cache_control" in block))
        read = written = 0
        new = []
        for end, (_, marked) in enumerate(items):
            if not marked:
                continue
            prefix = _strip_cache_control([i for i, _ in items[:end + 1]])
            tokens = min(total, count_tokens("\n".join(json.dumps(i, sort_keys=True) if "name" in i and "input_schema" in i
                                                         else _text_of([i]) for i in prefix)))
            if tokens < self.min_cache_tokens:
                continue
            digest = hashlib.sha256(json.dumps(prefix, sort_keys=True).encode()).hexdigest()
            with self._lock:
                hit = digest in self._cached
            if hit:
                read = max(read, tokens)
            else:
                new.append((digest, tokens))
        if new:
            written = max(0, max(t for _, t in new) - read)
            with self._lock:
                self._cached.update(d for d, _ in new)
        return read, written

    def _reply(self, body: dict[str, Any], messages: list[dict[str, Any]],
               tools: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], str]:
        digest = hashlib.sha256(json.dumps(messages, sort_keys=True).encode()).hexdigest()[:12]
        last = _text_of(messages[-1].get("content")) if messages else ""
        if '"verdict"' in last:  # the LLM judge's rubric asks for a JSON object with a verdict
            verdict = ("correct", "wrong", "abstained")[int(digest, 16) % 3]
            return [{"type": "text", "text": json.dumps({"verdict": verdict, "reason": f"fake judge {digest}"})}], "end_turn"
        text = (f"I cannot tell from the conversation (ref {digest})." if int(digest, 16) % 2
                else f"The change was in src/module_{digest}.py.")
        names = [t.get("name") for t in tools]
        if "finish" in names and (body.get("tool_choice") or {}).get("type") != "none":
            return [{"type": "tool_use", "id": f"toolu_{digest}", "name": "finish", "input": {"message": text}}], "tool_use"
        if not tools:  # a summary request: a summary-sized text
            history = "\n".join(_text_of(m.get("content")) for m in messages[:-1]) or last
            return [{"type": "text", "text": f"Summary {digest} (fake): {history[-self.summary_chars:]}"}], "end_turn"
        return [{"type": "text", "text": text}], "end_turn"


def _size(value: Any, key: str, kinds: tuple[str, ...]) -> int:
    """The ``value`` of a ``{type, value}`` trigger / keep / clear_at_least (BetaInputTokensTriggerParam ...)."""
    if value is None:
        return 0
    if not isinstance(value, dict) or value.get("type") not in kinds or not isinstance(value.get("value"), int) \
            or isinstance(value.get("value"), bool) or set(value) != {"type", "value"}:
        raise BadRequest(f"{key}: expected {{type: {'|'.join(kinds)}, value: int}}, got {value!r}")
    return value["value"]


def _usage(input_tokens: int, read: int, written: int, output: int) -> dict[str, Any]:
    return {"input_tokens": input_tokens, "cache_read_input_tokens": read, "cache_creation_input_tokens": written,
            "output_tokens": output}


def _from_last_compaction(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The context from the last compaction block on: the server drops everything before it."""
    for index in range(len(messages) - 1, -1, -1):
        blocks = _blocks(messages[index].get("content"))
        at = [i for i, b in enumerate(blocks) if b.get("type") == "compaction"]
        if at:
            return [{**messages[index], "content": blocks[at[-1]:]}, *messages[index + 1:]]
    return messages


def _error(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server_fake: FakeAnthropic

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet
        pass

    def _send(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("request-id", "req_fake")
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _authorized(self) -> bool:
        key = self.server_fake.api_key
        # the API takes the key in x-api-key (what the docs show) or as a bearer token (what the SDK sends)
        if key is None or key in (self.headers.get("x-api-key"), (self.headers.get("Authorization") or "")[7:]):
            return True
        self._send(401, _error("authentication_error", "invalid x-api-key"))
        return False

    def do_GET(self) -> None:  # noqa: N802
        fake = self.server_fake
        with fake._lock:
            fake._stats["http_requests"] += 1
        if not self._authorized():
            return
        if self.path.split("?")[0].rstrip("/") == "/v1/models":
            self._send(200, {"data": [{"id": fake.model, "type": "model", "display_name": "Claude (fake)",
                                       "created_at": "2026-01-01T00:00:00Z"}],
                             "has_more": False, "first_id": fake.model, "last_id": fake.model})
        else:
            self._send(404, _error("not_found_error", f"no route {self.path}"))

    def do_POST(self) -> None:  # noqa: N802
        fake = self.server_fake
        data = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        path = self.path.split("?")[0].rstrip("/")
        with fake._lock:
            fake._stats["http_requests"] += 1
            fake._stats["posts"] += 1
            overloaded = fake._stats["posts"] <= fake.overload_first
        if not self._authorized():
            return
        try:
            body = json.loads(data or b"{}")
        except json.JSONDecodeError:
            self._send(400, _error("invalid_request_error", "request body is not JSON"))
            return
        betas = {b.strip() for b in (self.headers.get("anthropic-beta") or "").split(",") if b.strip()}
        entry = {"path": path, "query": self.path.partition("?")[2], "beta": sorted(betas),
                 "version": self.headers.get("anthropic-version"), "body": body}
        with fake._lock:
            fake.requests.append(entry)
        if path != "/v1/messages":
            self._send(404, _error("not_found_error", f"no route {self.path}"))
            return
        if overloaded:
            entry["status"] = 529
            self._send(529, _error("overloaded_error", "Overloaded"))
            return
        try:
            payload = fake.handle(body, betas, entry)
        except BadRequest as err:
            entry["status"] = 400
            self._send(400, _error("invalid_request_error", str(err)))
            return
        entry["status"] = 200
        with fake._lock:
            fake.responses.append(payload)
        self._send(200, payload)
