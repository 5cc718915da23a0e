"""Batch mode (``model.batch=true``, issue 22 item 2): chat requests through the OpenAI Batch API.

Providers bill work that can wait (a batch, done within 24 h) at a fraction of the price
(``price.batch``). Nothing in the runner changes shape: every worker still makes its calls in
order and blocks on each. Here the calls of all workers are gathered into *rounds*: when no new
request has come for ``quiet_s`` (every worker is waiting), the round's requests are written as
one JSONL file (``POST /files``, purpose ``batch``), submitted as one batch (``POST /batches``)
and polled with backoff (``GET /batches/{id}``) until it ends; each worker then gets its reply
(``GET /files/{output_file_id}/content``) and goes on, so an agent step that needs a tool result
continues in the next round.

The batches a job submitted are kept in its directory (``batches.jsonl``: the batch id and the
ids of its requests, a content hash of each request): a killed job, resumed, polls those batches
again instead of paying for the same requests twice. An item that expired, failed or is missing
from the output is sent again in a later round, up to ``attempts`` times, then fails like a call
that keeps failing (the answer is recorded with its error).

Nothing paid for is lost to one bad part: every request to the Batch API is retried with backoff
as direct calls are (connection errors, 408/409/429/5xx, a reply that is not JSON, an HTML page
from a proxy; ``max_retries``, ``backoff_base``, ``backoff_max``, Retry-After honoured); a batch the
server no longer knows (404) is forgotten and its requests sent again; an output line that cannot
be read (not JSON, no ``custom_id``) is skipped with a warning and only its request is sent again;
a ledger line that is not ``{batch_id, custom_ids}`` is skipped. Batch and file ids must look like
ids (``batch_abc123``, ``file-abc``): a ledger or a reply naming ``../../models`` is refused, and a
poll reply without a known ``status`` is a malformed reply (retried, then an error), never polled
for ever.

    round = shared_round(endpoint, api_key)          # one per endpoint and key: answer, judge, summary
    round.ledger = job_dir / "batches.jsonl"
    body = round.submit(custom_id, request_body)     # blocks until the batch holding it has ended
"""

from __future__ import annotations

import json
import logging
import random
import re
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any, TypeGuard

import httpx

from bench.llm.call_errors import ModelCallError

__all__ = ["BatchRound", "shared_round", "reset_rounds", "TERMINAL", "tokens"]

log = logging.getLogger(__name__)

TERMINAL = ("completed", "failed", "expired", "cancelled")
# every status a batch goes through (OpenAI's Batch API); anything else is a malformed poll reply
STATUSES = frozenset({"validating", "in_progress", "finalizing", "cancelling", *TERMINAL})
# what a batch or file id looks like: a path (``../../models``) would poll another resource for ever
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_\-]{0,199}$")
_RETRIED = frozenset({408, 409, 429})  # and every 5xx, as direct calls (bench.llm.call_errors)


class _Unusable(Exception):
    """A Batch API reply that retries could not turn into a usable one (the message says why)."""


class _Gone(Exception):
    """The server does not know the batch (404): its requests are sent again."""


def _valid_id(value: object) -> TypeGuard[str]:
    return isinstance(value, str) and bool(_ID.match(value))


def tokens(value: Any) -> int:
    """A usage count as a number of tokens: anything that is not a non-negative number counts 0
    (what direct calls record for ``"prompt_tokens": "many"``)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value or value < 0:
        return 0
    return int(min(value, 2**53))


class BatchRound:
    """Gathers the chat requests of every worker into batches; see the module docstring."""

    def __init__(self, endpoint: str, api_key: str | None, *, quiet_s: float = 1.0, poll_s: float = 2.0,
                 poll_max_s: float = 60.0, attempts: int = 3, window: str = "24h", timeout: float = 60.0,
                 max_retries: int = 6, backoff_base: float = 1.0, backoff_max: float = 60.0,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.endpoint = endpoint.rstrip("/")
        self.quiet_s, self.poll_s, self.poll_max_s = float(quiet_s), float(poll_s), float(poll_max_s)
        self.attempts, self.window = int(attempts), window
        # retries of each Batch API request, as a direct call's (sleep: injectable, tests do not wait)
        self.max_retries, self.backoff_base, self.backoff_max = int(max_retries), float(backoff_base), float(backoff_max)
        self.sleep = sleep
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.http = httpx.Client(base_url=self.endpoint, headers=headers, timeout=timeout)
        self.ledger: Path | None = None  # the job's batches.jsonl (set by the runner)
        self._lock = threading.Condition()
        self._pending: dict[str, tuple[dict[str, Any], Future, int]] = {}  # custom_id -> (body, future, tries)
        self._last = 0.0
        self._thread: threading.Thread | None = None
        self.batches = 0  # batches submitted (for tests and the log)

    # ---- the workers' side
    def submit(self, custom_id: str, body: dict[str, Any]) -> dict[str, Any]:
        """The chat completion body for ``body``, once the batch holding it has ended."""
        future: Future = Future()
        with self._lock:
            same = self._pending.get(custom_id)
            if same is not None:  # the same request from another worker: one item, one reply for both
                future = same[1]
            else:
                self._pending[custom_id] = (body, future, 0)
            self._last = time.monotonic()
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._loop, name="bench-batch", daemon=True)
                self._thread.start()
            self._lock.notify_all()
        return future.result()

    # ---- the round
    def _loop(self) -> None:
        while True:
            with self._lock:
                while not self._pending:
                    if not self._lock.wait(timeout=30):
                        self._thread = None
                        return
                while time.monotonic() - self._last < self.quiet_s:  # until every worker waits
                    self._lock.wait(timeout=self.quiet_s)
                taken = dict(self._pending)
                self._pending.clear()
            try:
                self._run_round(taken)
            except Exception as err:  # noqa: BLE001 - the round's waiters get the error, not a hang
                why = str(err) if isinstance(err, _Unusable) else f"{type(err).__name__}: {err}"
                for _body, future, _tries in taken.values():
                    if not future.done():
                        future.set_exception(ModelCallError(f"batch at {self.endpoint}: {why}"))

    def _entries(self) -> list[dict[str, Any]]:
        """The job's ledger: one ``{batch_id, custom_ids}`` per batch it submitted (damaged lines skipped)."""
        if self.ledger is None or not self.ledger.is_file():
            return []
        entries = []
        for number, line in enumerate(self.ledger.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            try:
                entry = json.loads(line)
            except ValueError:
                entry = None
            ids = entry.get("custom_ids") if isinstance(entry, dict) else None
            if (not isinstance(entry, dict) or not _valid_id(entry.get("batch_id")) or not isinstance(ids, list)
                    or not all(isinstance(c, str) for c in ids)):
                if line.strip():
                    log.warning("%s line %d is not a batch of this job ({batch_id, custom_ids}): skipped, its "
                                "requests are sent again", self.ledger, number)
                continue
            entries.append(entry)
        return entries

    def _known(self) -> dict[str, str]:
        """custom_id -> batch id of this job's earlier batches (a resumed job polls them again)."""
        return {cid: entry["batch_id"] for entry in self._entries() for cid in entry["custom_ids"]}

    def _run_round(self, taken: dict[str, tuple[dict[str, Any], Future, int]]) -> None:
        known = self._known()
        groups: dict[str, list[str]] = {}
        fresh = [cid for cid in taken if cid not in known]
        for cid in taken:
            if cid in known:
                groups.setdefault(known[cid], []).append(cid)
        if fresh:
            groups[self._create(fresh, taken)] = fresh
        again: set[str] = set()
        for batch_id, ids in groups.items():
            try:
                replies = self._results(batch_id)
            except _Gone:
                log.warning("batch %s is gone from %s: its %d request(s) are sent again", batch_id, self.endpoint,
                            len(ids))
                replies = {}
            for cid in ids:
                body, future, tries = taken[cid]
                reply = replies.get(cid)
                if reply is not None and reply.get("status_code") == 200:
                    future.set_result(reply["body"])
                elif tries + 1 < self.attempts:  # expired, failed or missing: again in a later round
                    with self._lock:
                        self._pending[cid] = (body, future, tries + 1)
                        self._last = time.monotonic()
                    again.add(cid)
                else:
                    why = (reply or {}).get("error") or "no result in the batch output"
                    future.set_exception(ModelCallError(f"batch {batch_id} at {self.endpoint}: {why} "
                                                        f"(after {self.attempts} attempts)"))
        if again:
            self._forget(again)

    def _create(self, ids: list[str], taken: dict[str, tuple[dict[str, Any], Future, int]]) -> str:
        lines = "".join(json.dumps({"custom_id": cid, "method": "POST", "url": "/v1/chat/completions",
                                    "body": taken[cid][0]}) + "\n" for cid in ids)
        uploaded = self._json("upload of the requests", "POST", "/files", data={"purpose": "batch"},
                              files={"file": ("requests.jsonl", lines.encode("utf-8"), "application/jsonl")})
        file_id = uploaded.get("id")
        if not _valid_id(file_id):
            raise _Unusable(f"the upload's reply names no file id (got {file_id!r})")
        batch = self._json("creation of the batch", "POST", "/batches", json={
            "input_file_id": file_id, "endpoint": "/v1/chat/completions", "completion_window": self.window})
        batch_id = batch.get("id")
        if not _valid_id(batch_id):
            raise _Unusable(f"the batch's creation reply names no batch id (got {str(batch_id)[:80]!r})")
        self.batches += 1
        if self.ledger is not None:
            with self.ledger.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps({"batch_id": batch_id, "custom_ids": ids}) + "\n")
        log.info("batch %s: %d request(s) submitted to %s", batch_id, len(ids), self.endpoint)
        return batch_id

    def _forget(self, custom_ids: set[str]) -> None:
        """Requests sent again get a new batch: their old batches are no longer where their replies are."""
        if self.ledger is None or not self.ledger.is_file():
            return
        kept = [{**entry, "custom_ids": [c for c in entry["custom_ids"] if c not in custom_ids]}
                for entry in self._entries()]
        self.ledger.write_text("".join(json.dumps(k) + "\n" for k in kept), encoding="utf-8")

    def _results(self, batch_id: str) -> dict[str, dict[str, Any]]:
        """custom_id -> {status_code, body} or {error} of an ended batch (polled with backoff).

        Raises _Gone when the server does not know the batch; a poll reply without a known status is
        retried like a reply that is not JSON, then an error (never polled for ever)."""
        if not _valid_id(batch_id):
            raise _Gone(batch_id)
        delay = self.poll_s
        while True:
            info = self._json(f"poll of batch {batch_id}", "GET", f"/batches/{batch_id}", gone=True,
                              valid=lambda reply: reply.get("status") in STATUSES)
            if info["status"] in TERMINAL:
                break
            self.sleep(delay)
            delay = min(self.poll_max_s, delay * 1.5)
        out: dict[str, dict[str, Any]] = {}
        for key in ("output_file_id", "error_file_id"):
            file_id = info.get(key)
            if not file_id:
                continue
            text = self._content(batch_id, file_id) if _valid_id(file_id) else None
            if text is None:  # its requests count as missing: sent again (attempts)
                continue
            skipped = 0
            for line in text.splitlines():
                if not line.strip():
                    continue
                try:
                    item = json.loads(line)
                except ValueError:
                    item = None
                if not isinstance(item, dict) or not isinstance(item.get("custom_id"), str):
                    skipped += 1  # one unreadable line loses its own reply only (sent again), not the batch's
                    continue
                response = item.get("response") if isinstance(item.get("response"), dict) else {}
                error = item.get("error")
                out[item["custom_id"]] = ({"status_code": response.get("status_code"), "body": response.get("body")}
                                          if response and not error else {"error": error or response})
            if skipped:
                log.warning("batch %s: %d line(s) of its %s could not be read (not JSON, or no custom_id): "
                            "skipped, those requests are sent again", batch_id, skipped, key)
        if info.get("status") != "completed":
            log.warning("batch %s ended %s: its requests are sent again", batch_id, info.get("status"))
        return out

    def _content(self, batch_id: str, file_id: str) -> str | None:
        """The text of a batch's output or error file; None (with a warning) when it cannot be had."""
        try:
            reply = self._request(f"download of {file_id}", "GET", f"/files/{file_id}/content", retry_404=True)
        except (_Unusable, httpx.HTTPError) as err:
            log.warning("batch %s: %s; its requests are sent again", batch_id, err)
            return None
        return reply.text

    # ---- one request to the Batch API, retried as a direct call is
    def _request(self, what: str, method: str, url: str, *, gone: bool = False, retry_404: bool = False,
                 parse: Callable[[httpx.Response], Any] | None = None, **kwargs: Any) -> Any:
        """The reply (or ``parse(reply)``) to one Batch API request, retried with backoff on connection
        errors, 408/409/429/5xx, an HTML page and what ``parse`` refuses (ValueError); raises _Unusable
        when the retries run out or the server refuses it otherwise, _Gone on a 404 when ``gone``."""
        attempt = 0
        while True:
            wait = None
            try:
                reply = self.http.request(method, url, **kwargs)
            except httpx.HTTPError as err:
                problem = f"{type(err).__name__}: {err}"
            else:
                status = reply.status_code
                if status == 404 and gone:
                    raise _Gone(url)
                if status < 400 and "html" in reply.headers.get("content-type", "").lower():
                    problem = "an HTML page instead of the API's reply"
                elif status < 400:
                    try:
                        return parse(reply) if parse is not None else reply
                    except ValueError as err:
                        problem = str(err)
                elif status in _RETRIED or status >= 500 or (status == 404 and retry_404):
                    problem = f"HTTP {status}"
                    wait = _retry_after(reply)
                else:
                    raise _Unusable(f"{what}: HTTP {status} {reply.text[:200]}")
            if attempt >= self.max_retries:
                suffix = f" (after {attempt} retries)" if attempt else ""
                raise _Unusable(f"{what}: {problem}{suffix}")
            delay = min(self.backoff_max, self.backoff_base * 2 ** attempt) * (0.5 + random.random() / 2)
            delay = max(delay, min(self.backoff_max, wait or 0.0))
            log.warning("batch API at %s, %s: %s; retry %d/%d in %.1fs", self.endpoint, what, problem[:200],
                        attempt + 1, self.max_retries, delay)
            self.sleep(delay)
            attempt += 1

    def _json(self, what: str, method: str, url: str, *, valid: Callable[[dict[str, Any]], bool] | None = None,
              **kwargs: Any) -> dict[str, Any]:
        """A request whose reply must be a JSON object (and pass ``valid``): anything else is retried."""
        def parse(reply: httpx.Response) -> dict[str, Any]:
            try:
                data = reply.json()
            except ValueError:
                raise ValueError(f"a reply that is not JSON ({reply.text[:80]!r})") from None
            if not isinstance(data, dict):
                raise ValueError(f"a reply that is not a JSON object ({type(data).__name__})")
            if valid is not None and not valid(data):
                raise ValueError(f"a malformed reply (status {str(data.get('status'))[:40]!r})")
            return data

        return self._request(what, method, url, parse=parse, **kwargs)


def _retry_after(reply: httpx.Response) -> float | None:
    """Seconds the server asked to wait (``retry-after-ms`` or ``Retry-After``), if any."""
    for header, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = reply.headers.get(header)
        try:
            return float(value) * scale if value is not None else None
        except ValueError:
            continue
    return None


_ROUNDS: dict[tuple[str, str], BatchRound] = {}
_ROUNDS_LOCK = threading.Lock()


def shared_round(endpoint: str, api_key: str | None, **settings: Any) -> BatchRound:
    """The process's round for an endpoint and key (answer, judge and summary calls batch together)."""
    key = (endpoint.rstrip("/"), api_key or "")
    with _ROUNDS_LOCK:
        if key not in _ROUNDS:
            _ROUNDS[key] = BatchRound(endpoint, api_key, **settings)
        return _ROUNDS[key]


def reset_rounds() -> None:
    """Forget every round (tests; a new process starts empty anyway)."""
    with _ROUNDS_LOCK:
        _ROUNDS.clear()
