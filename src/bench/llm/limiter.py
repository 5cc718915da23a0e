"""How many requests may be in flight to an endpoint: a fixed limit, or an adaptive one.

Every model call of a :class:`bench.llm.ChatClient` takes a slot from its limiter
(``acquire``) and gives it back with the call's outcome (``release``): ``ok``,
``rate_limited`` (HTTP 429), ``overloaded`` (503, 529), ``timeout`` (the request timed
out, or HTTP 408/504), or ``error`` (anything else: no information about load). Retries
and backoff stay in the client; the limiter only decides when the next request may start.

* ``max_concurrency: N`` (an integer): :class:`FixedLimiter`, N requests in flight per
  client, nothing adapts (the behaviour before ``auto``); outcomes are only counted.
* ``max_concurrency: auto`` (the default of ``model=openai``): one :class:`AdaptiveLimiter`
  per endpoint URL in the process (:func:`shared_limiter`), shared by the answer, judge and
  summary calls to it. AIMD, as TCP does with its congestion window:

  - **start**: 8 requests in flight. Until the first overload signal the limit grows by
    one per successful call (*slow start*: it doubles per round trip), then by one per
    ``limit`` successful calls (*additive increase*: +1 per round trip). A success counts
    only while the limit is in use (half of it in flight, or a request waited for a slot
    within the last round trip), so a job that never fills the limit does not raise it
    to the cap without evidence.
  - **decrease**: an overload signal (429, 503/529, a timeout) multiplies the limit by
    0.9, at most once per round trip: a signal from a request sent before the last
    decrease is counted but does not decrease again (it reports the old limit). The
    signal that ends slow start multiplies by 0.7 instead, since the limit grew by up to
    half during the round trip the signal took. A signal before any call has succeeded
    decreases the limit but slow start goes on: that first wave went out as a burst (no
    latency known yet to pace it), so it says little about the limit.
  - **Retry-After** (or ``retry-after-ms``) of a refusal pauses every new request to the
    endpoint until then, not only the refused one (at most ``max_pause``, 60 s).
  - **pacing**: request starts are spaced by at least latency / (1.5 x limit) (latency:
    smoothed over successful calls), so the requests a limit allows go out over a round
    trip rather than in one burst: a rate limiter with a small bucket (N per second, a
    burst of a few) refuses bursts even when the rate is right.
  - bounded by ``cap`` (``max_concurrency_cap``, default 64) above and 1 below.

``stats()`` is what ``metrics.json`` records per endpoint (``concurrency``): the limit's
start, min, max and final value over the job, the counts of requests, 429s, overloads,
timeouts and other errors, the decreases and Retry-After pauses, and a short trace of
``[seconds since the job's start, limit]`` at each change (at most ``trace_max`` points:
when full, every second point is dropped and later changes are sampled half as often).
``begin_window()`` starts a job's figures: the limit carries over from an earlier job of
the same process (a sweep on the basic launcher), counters and trace start again.

    limiter = shared_limiter("http://localhost:8000/v1", cap=64)
    ticket = limiter.acquire()               # blocks while the limit is reached, paused or paced
    ...                                      # the request
    limiter.release(ticket, "rate_limited", retry_after=0.2)
    limiter.current                          # the limit now (the progress bar shows it)
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal
from urllib.parse import urlsplit, urlunsplit

from bench.core.components import clients_of

__all__ = [
    "AUTO",
    "OUTCOMES",
    "AdaptiveLimiter",
    "FixedLimiter",
    "Limiter",
    "Ticket",
    "concurrency_metrics",
    "endpoint_label",
    "find_limiters",
    "group_workers",
    "parse_concurrency",
    "reset_shared_limiters",
    "shared_limiter",
    "worker_count",
]

log = logging.getLogger(__name__)

AUTO = "auto"
DEFAULT_CAP = 64
OUTCOMES = ("ok", "rate_limited", "overloaded", "timeout", "error")
_SIGNALS = ("rate_limited", "overloaded", "timeout")  # outcomes that mean "too much load"
_COUNTER = {"rate_limited": "n_429", "overloaded": "n_overloaded", "timeout": "n_timeouts", "error": "n_errors"}


def parse_concurrency(value: Any, key: str = "max_concurrency") -> int | str:
    """``auto`` or a positive integer (``"8"`` from the command line too); else ValueError naming ``key``."""
    if isinstance(value, str) and value.strip().lower() == AUTO:
        return AUTO
    number = None
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif isinstance(value, str) and value.strip().isdigit():
        number = int(value.strip())
    if number is None or number < 1:
        raise ValueError(f"{key} must be auto or a positive integer, got {value!r}")
    return number


def parse_cap(value: Any, key: str = "max_concurrency_cap") -> int:
    """A positive integer; else ValueError naming ``key``."""
    try:
        parsed = parse_concurrency(value, key)
    except ValueError:
        parsed = None
    if not isinstance(parsed, int):
        raise ValueError(f"{key} must be a positive integer, got {value!r}")
    return parsed


def worker_count(value: Any, cap: Any = DEFAULT_CAP, key: str = "model.max_concurrency") -> int:
    """Worker threads a job needs for ``max_concurrency=value``: the integer, or the cap for ``auto``."""
    parsed = parse_concurrency(value, key)
    return parsed if isinstance(parsed, int) else parse_cap(cap, key + "_cap")  # not an integer: auto


def group_workers(group: Any, key: str = "model.max_concurrency") -> int:
    """Worker threads for the calls of a model config group (``model``, ``judge``): its
    ``max_concurrency`` (the cap for ``auto``, whose limiter decides), 1 when it has none (offline)."""
    value = group.get("max_concurrency")
    return 1 if value is None else worker_count(value, group.get("max_concurrency_cap", DEFAULT_CAP), key)


def endpoint_label(url: str) -> str:
    """The endpoint URL without user info (a ``user:password@`` never reaches a record) or trailing slash."""
    parts = urlsplit(url.rstrip("/"))
    netloc = parts.netloc.rsplit("@", 1)[-1]
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


@dataclass(frozen=True)
class Ticket:
    """One request's slot: the decrease epoch it was sent in, and when it started."""

    epoch: int
    started: float


class _Counters:
    """Outcome counts of a window (a job)."""

    def __init__(self) -> None:
        self.counts = dict.fromkeys(("n_requests", "n_ok", "n_429", "n_overloaded", "n_timeouts", "n_errors"), 0)

    def count(self, outcome: str) -> None:
        if outcome not in OUTCOMES:
            raise ValueError(f"unknown outcome {outcome!r}: use one of {OUTCOMES}")
        self.counts["n_requests"] += 1
        self.counts[_COUNTER.get(outcome, "n_ok")] += 1


class FixedLimiter:
    """``max_concurrency: N``: at most N requests in flight, whatever the outcomes (they are counted)."""

    mode: ClassVar[Literal["fixed"]] = "fixed"  # the tag a Limiter is told apart by

    def __init__(self, limit: int, endpoint: str = "") -> None:
        if limit < 1:
            raise ValueError(f"a concurrency limit must be >= 1, got {limit}")
        self.limit = int(limit)
        self.endpoint = endpoint_label(endpoint) if endpoint else ""
        self._slots = threading.BoundedSemaphore(self.limit)
        self._lock = threading.Lock()
        self._counters = _Counters()

    @property
    def current(self) -> int:
        return self.limit

    def acquire(self) -> Ticket:
        self._slots.acquire()
        return Ticket(0, 0.0)

    def release(self, ticket: Ticket, outcome: str, retry_after: float | None = None) -> None:
        self._slots.release()
        with self._lock:
            self._counters.count(outcome)

    def begin_window(self) -> None:
        with self._lock:
            self._counters = _Counters()

    def stats(self) -> dict[str, Any]:
        with self._lock:
            return {"mode": self.mode, "limit": self.limit, **self._counters.counts}


class AdaptiveLimiter:
    """``max_concurrency: auto``: AIMD on the outcomes of the calls (see the module docstring).

    ``clock`` is injectable (tests drive a fake clock through :meth:`try_acquire`, which
    never blocks); :meth:`acquire` blocks until a slot is free and no pause is running.
    """

    mode: ClassVar[Literal["auto"]] = "auto"

    def __init__(self, endpoint: str = "", *, start: int = 8, cap: int = DEFAULT_CAP, floor: int = 1,
                 increase: float = 1.0, decrease: float = 0.9, slow_start_exit: float = 0.7,
                 pace_gain: float | None = 1.5, max_pause: float = 60.0, trace_max: int = 200, clock: Callable[[], float] = time.monotonic) -> None:
        if not 1 <= floor <= cap:
            raise ValueError(f"need 1 <= floor <= cap, got floor={floor}, cap={cap}")
        if not 0.0 < decrease < 1.0 or not 0.0 < slow_start_exit < 1.0:
            raise ValueError("decrease and slow_start_exit must be between 0 and 1")
        self.endpoint = endpoint_label(endpoint) if endpoint else ""
        self.cap, self.floor = int(cap), int(floor)
        self.increase, self.decrease, self.slow_start_exit = float(increase), float(decrease), float(slow_start_exit)
        self.pace_gain = float(pace_gain) if pace_gain else None
        self.max_pause = float(max_pause)
        self.trace_max = max(4, int(trace_max))
        self._clock = clock
        self._cond = threading.Condition()
        self._limit = float(min(max(start, self.floor), self.cap))
        self._in_flight = 0
        self._epoch = 0  # decreases so far: a signal from an older epoch does not decrease again
        self._slow_start = True
        self._paused_until = -math.inf
        self._next_start = -math.inf  # pacing: no start before this time
        self._latency: float | None = None  # smoothed duration of a successful call (seconds)
        self._demand_at = -math.inf  # last time a request had to wait: the limit is in use
        self._start_window(clock())

    # ---- state read by the progress bar and the metrics
    @property
    def current(self) -> int:
        """The limit now: requests allowed in flight."""
        return int(self._limit)

    @property
    def in_flight(self) -> int:
        return self._in_flight

    def _start_window(self, now: float) -> None:
        self._t0 = now
        self._counters = _Counters()
        self._start, self._min, self._max = self.current, self.current, self.current
        self._decreases, self._pauses, self._pause_s = 0, 0, 0.0
        self._trace: list[list[float]] = [[0.0, self.current]]
        self._stride = 1  # keep one change in `stride` once the trace has been thinned
        self._skipped = 0

    def begin_window(self) -> None:
        """A new job: counters and trace start again; the limit carries over."""
        with self._cond:
            self._start_window(self._clock())

    def stats(self) -> dict[str, Any]:
        with self._cond:
            trace = [list(p) for p in self._trace]
            if trace[-1][1] != self.current:  # the final value, even when thinning skipped it
                trace.append([round(self._clock() - self._t0, 3), self.current])
            return {"mode": self.mode, "start": self._start, "min": self._min, "max": self._max,
                    "final": self.current, "cap": self.cap, **self._counters.counts,
                    "decreases": self._decreases, "pauses": self._pauses, "pause_s": round(self._pause_s, 3),
                    "trace": trace}

    # ---- slots
    def try_acquire(self) -> Ticket | float:
        """A slot now (a :class:`Ticket`), else the seconds to wait (``inf``: until a release)."""
        with self._cond:
            return self._admit(self._clock())

    def _admit(self, now: float) -> Ticket | float:
        wait = (self._paused_until - now if now < self._paused_until
                else math.inf if self._in_flight >= int(self._limit)
                else self._next_start - now if now < self._next_start else 0.0)
        if wait > 0:
            self._demand_at = now
            return wait
        self._in_flight += 1
        if self.pace_gain and self._latency:
            self._next_start = now + self._latency / (self._limit * self.pace_gain)
        return Ticket(self._epoch, now)

    def acquire(self) -> Ticket:
        with self._cond:
            while True:
                got = self._admit(self._clock())
                if isinstance(got, Ticket):
                    return got
                self._cond.wait(None if got == math.inf else got)

    def release(self, ticket: Ticket, outcome: str, retry_after: float | None = None) -> None:
        """Give the slot back with the call's outcome (one of ``OUTCOMES``)."""
        with self._cond:
            now = self._clock()
            self._counters.count(outcome)
            # in use: half of it in flight (this call included), or a request waited within a round trip
            in_use = self._in_flight >= self._limit / 2 or now - self._demand_at <= (self._latency or 1.0)
            self._in_flight -= 1
            before = self.current
            if outcome == "ok":
                took = max(0.0, now - ticket.started)
                self._latency = took if self._latency is None else self._latency + (took - self._latency) / 8
                if in_use and self._limit < self.cap:
                    step = 1.0 if self._slow_start else self.increase / self._limit
                    self._limit = min(float(self.cap), self._limit + step)
            elif outcome in _SIGNALS:
                if ticket.epoch == self._epoch:  # sent under the current limit: it is too high
                    factor = self.slow_start_exit if self._slow_start else self.decrease
                    self._limit = max(float(self.floor), math.floor(self._limit * factor))
                    # before any success the first wave went out unpaced (no latency known yet):
                    # a burst, not a measured limit, so slow start goes on from the lower value
                    self._slow_start = self._slow_start and self._latency is None
                    self._epoch += 1
                    self._decreases += 1
                if retry_after is not None and retry_after > 0:
                    until = now + min(float(retry_after), self.max_pause)
                    if until > self._paused_until:
                        self._pauses += 1
                        self._pause_s += until - max(now, self._paused_until)
                        self._paused_until = until
            if self.current != before:
                self._record(now)
            free = int(self._limit) - self._in_flight
            if free > 0:
                self._cond.notify(free)

    def _record(self, now: float) -> None:
        value = self.current
        self._min, self._max = min(self._min, value), max(self._max, value)
        self._skipped += 1
        if self._skipped < self._stride:
            return
        self._skipped = 0
        self._trace.append([round(now - self._t0, 3), value])
        if len(self._trace) >= self.trace_max:  # keep the first point, then every second one
            self._trace = self._trace[:1] + self._trace[2::2]
            self._stride *= 2


# --------------------------------------------------------------------------- a job's limiters

# A model client's limiter (``ChatClient.limiter``).
Limiter = FixedLimiter | AdaptiveLimiter


def find_limiters(*components: object) -> list[tuple[Limiter, list[str]]]:
    """The limiters of a job's model clients (``bench.core.components.clients_of``: what each component
    lists), each once, with the kinds of calls that use it (answer, judge, summarizer)."""
    found: dict[int, tuple[Limiter, list[str]]] = {}
    for client in clients_of(*components):
        limiter = getattr(client, "limiter", None)  # a test's stand-in client may have none
        if isinstance(limiter, (FixedLimiter, AdaptiveLimiter)):
            kinds = found.setdefault(id(limiter), (limiter, []))[1]
            kind = getattr(client, "kind", None)
            if kind and kind not in kinds:
                kinds.append(kind)
    return list(found.values())


def concurrency_metrics(limiters: Sequence[tuple[Limiter, list[str]]]) -> dict[str, Any]:
    """``metrics.json`` ``concurrency``, keyed by endpoint: the adaptive limiter's :meth:`stats`
    with the ``kinds`` that share it; fixed clients of an endpoint summed, ``limit`` per kind
    (under ``<endpoint> (fixed)`` when the endpoint also has an adaptive limiter)."""
    out: dict[str, Any] = {}
    for limiter, kinds in limiters:
        if limiter.mode == "auto":
            out[limiter.endpoint] = {"kinds": list(kinds), **limiter.stats()}
    for limiter, kinds in limiters:
        if limiter.mode != "fixed":
            continue
        key = limiter.endpoint if limiter.endpoint not in out or out[limiter.endpoint]["mode"] == "fixed" \
            else f"{limiter.endpoint} (fixed)"
        entry = out.setdefault(key, {"kinds": [], "mode": "fixed", "limit": {}})
        for kind in kinds:
            entry["kinds"].append(kind)
            entry["limit"][kind] = limiter.limit
        for name, value in limiter.stats().items():
            if name.startswith("n_"):
                entry[name] = entry.get(name, 0) + value
    return out


# --------------------------------------------------------------------------- one per endpoint

_SHARED: dict[str, AdaptiveLimiter] = {}
_SHARED_LOCK = threading.Lock()


def shared_limiter(endpoint: str, *, cap: int = DEFAULT_CAP, **settings: Any) -> AdaptiveLimiter:
    """The process's adaptive limiter of ``endpoint`` (created by its first client; later
    clients share it, whatever cap they ask for: the first one's stays)."""
    key = endpoint_label(endpoint)
    with _SHARED_LOCK:
        limiter = _SHARED.get(key)
        if limiter is None:
            limiter = _SHARED[key] = AdaptiveLimiter(key, cap=cap, **settings)
        elif limiter.cap != cap:
            log.warning("%s: one adaptive limit per endpoint, its cap stays %d (another client asked for %d)",
                        key, limiter.cap, cap)
        return limiter


def reset_shared_limiters() -> None:
    """Forget every endpoint's limiter (tests; a new process starts empty anyway)."""
    with _SHARED_LOCK:
        _SHARED.clear()
