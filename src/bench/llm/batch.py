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

    round = shared_round(endpoint, api_key)          # one per endpoint and key: answer, judge, summary
    round.ledger = job_dir / "batches.jsonl"
    body = round.submit(custom_id, request_body)     # blocks until the batch holding it has ended
"""

from __future__ import annotations

import json
import logging
import threading
import time
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import httpx

from bench.llm.errors import ModelCallError

__all__ = ["BatchRound", "shared_round", "reset_rounds", "TERMINAL"]

log = logging.getLogger(__name__)

TERMINAL = ("completed", "failed", "expired", "cancelled")


class BatchRound:
    """Gathers the chat requests of every worker into batches; see the module docstring."""

    def __init__(self, endpoint: str, api_key: str | None, *, quiet_s: float = 1.0, poll_s: float = 2.0,
                 poll_max_s: float = 60.0, attempts: int = 3, window: str = "24h", timeout: float = 60.0) -> None:
        self.endpoint = endpoint.rstrip("/")
        self.quiet_s, self.poll_s, self.poll_max_s = float(quiet_s), float(poll_s), float(poll_max_s)
        self.attempts, self.window = int(attempts), window
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
                for _body, future, _tries in taken.values():
                    if not future.done():
                        future.set_exception(ModelCallError(f"batch at {self.endpoint}: {type(err).__name__}: {err}"))

    def _entries(self) -> list[dict[str, Any]]:
        """The job's ledger: one ``{batch_id, custom_ids}`` per batch it submitted (damaged lines skipped)."""
        if self.ledger is None or not self.ledger.is_file():
            return []
        entries = []
        for line in self.ledger.read_text(encoding="utf-8").splitlines():
            try:
                entries.append(json.loads(line))
            except ValueError:
                continue
        return entries

    def _known(self) -> dict[str, str]:
        """custom_id -> batch id of this job's earlier batches (a resumed job polls them again)."""
        return {cid: entry.get("batch_id") for entry in self._entries() for cid in entry.get("custom_ids") or []}

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
            replies = self._results(batch_id)
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
        uploaded = self.http.post("/files", data={"purpose": "batch"},
                                  files={"file": ("requests.jsonl", lines.encode("utf-8"), "application/jsonl")})
        uploaded.raise_for_status()
        batch = self.http.post("/batches", json={"input_file_id": uploaded.json()["id"],
                                                 "endpoint": "/v1/chat/completions", "completion_window": self.window})
        batch.raise_for_status()
        batch_id = batch.json()["id"]
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
        kept = [{**entry, "custom_ids": [c for c in entry.get("custom_ids") or [] if c not in custom_ids]}
                for entry in self._entries()]
        self.ledger.write_text("".join(json.dumps(k) + "\n" for k in kept), encoding="utf-8")

    def _results(self, batch_id: str) -> dict[str, dict[str, Any]]:
        """custom_id -> {status_code, body} or {error} of an ended batch (polled with backoff)."""
        delay = self.poll_s
        while True:
            state = self.http.get(f"/batches/{batch_id}")
            state.raise_for_status()
            info = state.json()
            if info.get("status") in TERMINAL:
                break
            time.sleep(delay)
            delay = min(self.poll_max_s, delay * 1.5)
        out: dict[str, dict[str, Any]] = {}
        for key in ("output_file_id", "error_file_id"):
            file_id = info.get(key)
            if not file_id:
                continue
            content = self.http.get(f"/files/{file_id}/content")
            content.raise_for_status()
            for line in content.text.splitlines():
                if not line.strip():
                    continue
                item = json.loads(line)
                response = item.get("response") or {}
                error = item.get("error")
                out[item["custom_id"]] = ({"status_code": response.get("status_code"), "body": response.get("body")}
                                          if response and not error else {"error": error or response})
        if info.get("status") != "completed":
            log.warning("batch %s ended %s: its requests are sent again", batch_id, info.get("status"))
        return out


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
