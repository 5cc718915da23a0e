"""Accounting of model calls: the tags and sink of the calls of a piece of work, and the one
place usage is summed (per answer, per call kind, per job).

    with call_sink(lambda record: store.append("calls", record)), call_tags(case_id=..., qid=...):
        ...                                   # every ChatClient call made here is recorded
    with call_callbacks(tracer.callbacks(case_id)):
        ...                                   # and traced as nested spans
    sum_usage(records)                        # one answer's calls: made, cache hits, tokens, latency
    summarize_calls(records)                  # calls.jsonl per kind and in total
"""

from __future__ import annotations

import contextlib
import contextvars
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from typing import Any

__all__ = ["call_tags", "call_sink", "call_observer", "call_callbacks", "current_callbacks", "current_tags", "emit", "USAGE_KEYS",
           "sum_usage", "summarize_calls"]

_TAGS: contextvars.ContextVar[dict[str, Any] | None] = contextvars.ContextVar("bench_call_tags", default=None)
_SINK: contextvars.ContextVar[Callable[[dict[str, Any]], None] | None] = contextvars.ContextVar(
    "bench_call_sink", default=None)


@contextlib.contextmanager
def call_tags(**tags: Any) -> Iterator[None]:
    """Tags (case_id, qid, arm, phase ...) added to the accounting record of calls made inside."""
    token = _TAGS.set({**(_TAGS.get() or {}), **tags})
    try:
        yield
    finally:
        _TAGS.reset(token)


@contextlib.contextmanager
def call_sink(sink: Callable[[dict[str, Any]], None] | None) -> Iterator[None]:
    """Send the accounting record of every call made inside to ``sink`` (e.g. calls.jsonl)."""
    token = _SINK.set(sink)
    try:
        yield
    finally:
        _SINK.reset(token)


@contextlib.contextmanager
def call_observer(observe: Callable[[dict[str, Any]], None]) -> Iterator[None]:
    """Also hand the accounting record of every call made inside to ``observe`` (the sink keeps its own)."""
    outer = _SINK.get()

    def both(record: dict[str, Any]) -> None:
        if outer is not None:
            outer(record)
        observe(record)

    token = _SINK.set(both)
    try:
        yield
    finally:
        _SINK.reset(token)


def current_tags() -> dict[str, Any]:
    return dict(_TAGS.get() or {})


_CALLBACKS: contextvars.ContextVar[list[Any] | None] = contextvars.ContextVar("bench_call_callbacks", default=None)


@contextlib.contextmanager
def call_callbacks(callbacks: list[Any] | None) -> Iterator[None]:
    """LangChain callbacks (a tracer's) for the model calls made inside: the answering agent
    passes them to its graph run, the judge and the summarizer to their calls."""
    token = _CALLBACKS.set(list(callbacks or []) or None)
    try:
        yield
    finally:
        _CALLBACKS.reset(token)


def current_callbacks() -> list[Any] | None:
    return _CALLBACKS.get()


def emit(record: dict[str, Any]) -> None:
    """Send one call's accounting record to the current sink (if any)."""
    sink = _SINK.get()
    if sink is not None:
        sink(dict(record))


USAGE_KEYS = ("calls", "cache_hits", "input_tokens", "cached_tokens", "output_tokens", "latency_s",
              "retries")
_TOKENS = ("input_tokens", "cached_tokens", "output_tokens")


def _totals(records: Iterable[dict[str, Any]]) -> defaultdict[str, float]:
    """The one summation of call records: requests, calls made vs cache hits, failures, tokens of the
    replies used (``spent_*``: of the calls made only), retries, latency of the calls made. A sum starts
    as the integer 0 (a sum nothing was added to stays ``0`` in the records, not ``0.0``)."""
    row: defaultdict[str, float] = defaultdict(int)
    for record in records:
        _add(row, record)
    return row


def _add(row: defaultdict[str, float], record: dict[str, Any]) -> None:
    """One call record into :func:`_totals`' sums."""
    hit = bool(record.get("cached"))
    row["requests"] += 1
    row["calls"] += 0 if hit else 1
    row["failed"] += 1 if record.get("failed") else 0
    row["cache_hits"] += 1 if hit else 0
    for key in _TOKENS:
        row[key] += int(record.get(key) or 0)
        if not hit:
            row[f"spent_{key}"] += int(record.get(key) or 0)
    if record.get("cost_usd") is not None:  # priced calls only (a model without a price table has none)
        row["priced"] += 1
        row["cost_usd"] += float(record["cost_usd"])
        if not hit:
            row["spent_cost_usd"] += float(record["cost_usd"])
    row["retries"] += int(record.get("retries") or 0)
    row["latency_s"] += float(record.get("latency_s") or 0.0)
    if not hit:
        row["spent_latency_s"] += float(record.get("latency_s") or 0.0)


def sum_usage(records: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    """Usage of several calls (one answer's): calls made, cache hits, tokens and latency of the replies.

    Tokens and latency are those of the replies used (for a cache hit: of the original
    call), so a cached rerun reports the same experiment figures with ``calls`` = 0.
    """
    row = _totals(records)
    total: dict[str, Any] = dict(extra)
    for key in USAGE_KEYS:
        total[key] = round(row[key], 3) if key == "latency_s" else int(row[key])
    return total


_CALL_FIELDS = ("requests", "calls", "cache_hits", "failed", "input_tokens", "cached_tokens", "output_tokens",
                "spent_input_tokens", "spent_cached_tokens", "spent_output_tokens", "retries", "latency_s")


def summarize_calls(records: Iterable[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Model calls per kind (answer, judge, summarizer) and in total: made vs cache hits, tokens, latency.

    ``calls`` are requests sent to an endpoint by this job (``failed``: of those, the ones
    that failed for good), ``cache_hits`` were served from the response cache; tokens count every
    reply used (for a hit, the original call's), and ``spent_*`` only the calls made;
    ``latency_s`` sums the latency of the calls made.
    """
    by_kind: defaultdict[str, defaultdict[str, float]] = defaultdict(lambda: defaultdict(int))  # summed one record at a time: a job's calls may stream
    for record in records:
        _add(by_kind[record.get("kind", "unknown")], record)
        _add(by_kind["total"], record)
    out: dict[str, dict[str, Any]] = {}
    for kind, row in sorted(by_kind.items()):
        row["latency_s"] = row["spent_latency_s"]
        out[kind] = {f: (round(row[f], 3) if f == "latency_s" else int(row[f])) for f in _CALL_FIELDS}
        # cost of the replies used / of the calls made, when every call of the kind is priced
        priced = row["priced"] == row["requests"] and row["requests"] > 0
        out[kind]["cost_usd"] = round(row["cost_usd"], 6) if priced else None
        out[kind]["spent_cost_usd"] = round(row["spent_cost_usd"], 6) if priced else None
    return out
