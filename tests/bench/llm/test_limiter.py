"""The concurrency limiters (``bench.llm.limiter``) and ``max_concurrency=auto`` end to end.

The adaptive limiter's rules are driven with a fake clock and scripted outcomes through
``try_acquire`` (which never blocks): slow start, additive increase, the multiplicative
decrease once per round trip, the cap and the floor, ``Retry-After`` pauses for every new
request, pacing, the per-job window. The client is checked to tell the limiter every
outcome (429, overload, timeouts, other errors), and a real ``model=openai`` job with
``auto`` runs against ``tests/support/fake_openai.py`` refusing (429 + ``retry-after-ms``) what
goes beyond a few requests in flight. No assertion on wall-clock time.
"""

from __future__ import annotations

import email.utils
import json
import math
import os
import subprocess
import sys
import threading
import time

import httpx
import openai
import pytest
from hydra import compose, initialize_config_dir
from langchain_core.messages import AIMessage, HumanMessage

from bench.llm import ChatClient, ModelSetupError, load_outcome, openai_client
from bench.llm import retry_after as _retry_after
from bench.llm.limiter import (
    AdaptiveLimiter,
    FixedLimiter,
    Ticket,
    concurrency_metrics,
    endpoint_label,
    find_limiters,
    parse_concurrency,
    reset_shared_limiters,
    shared_limiter,
    worker_count,
)
from bench.runner import run
from bench.store.records import read_jsonl

from fake_openai import FakeOpenAI
from paths import CONF_DIR


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def limiter(**kwargs) -> tuple[AdaptiveLimiter, Clock]:
    clock = Clock()
    settings = {"pace_gain": None, **kwargs}  # pacing has a test of its own
    return AdaptiveLimiter("http://x/v1", clock=clock, **settings), clock


def take(lim: AdaptiveLimiter, n: int) -> list[Ticket]:
    tickets = [lim.try_acquire() for _ in range(n)]
    assert all(isinstance(t, Ticket) for t in tickets), tickets
    return tickets


# --------------------------------------------------------------------------- increase


def test_slow_start_adds_one_per_success_then_additive_increase_adds_one_per_window():
    lim, clock = limiter(start=4, cap=64)
    tickets = take(lim, 4)
    assert lim.try_acquire() == math.inf  # the limit is reached: wait for a release
    clock.now += 1.0
    for ticket in tickets:
        lim.release(ticket, "ok")
    assert lim.current == 8  # doubled in one round trip
    # the first overload signal ends slow start (x0.7), then +1 per `limit` successes
    lim.release(take(lim, 1)[0], "rate_limited")
    assert lim.current == 5
    successes = 0
    for _ in range(3):  # three round trips, each filling the limit with a request waiting
        tickets = take(lim, lim.current)
        assert lim.try_acquire() == math.inf
        for ticket in tickets:
            lim.release(ticket, "ok")
        successes += len(tickets)
    assert successes == 16 and lim.current == 7  # +1/limit per success: about +1 per round trip


def test_a_limit_that_is_not_in_use_does_not_grow():
    lim, clock = limiter(start=8)
    for _ in range(50):  # one request at a time, nobody waiting: no evidence the limit is too low
        ticket = take(lim, 1)[0]
        clock.now += 1.0
        lim.release(ticket, "ok")
    assert lim.current == 8


def test_the_cap_bounds_the_limit():
    lim, _ = limiter(start=4, cap=6)
    for _ in range(20):
        tickets = take(lim, lim.current)
        for ticket in tickets:
            lim.release(ticket, "ok")
    assert lim.current == 6
    assert lim.stats()["max"] == 6


# --------------------------------------------------------------------------- decrease


def test_one_decrease_per_round_trip_however_many_requests_of_it_fail():
    lim, clock = limiter(start=10)
    first = take(lim, 1)[0]
    clock.now += 1.0
    lim.release(first, "ok")  # a success: the next signal ends slow start
    tickets = take(lim, 10)
    for ticket in tickets:  # all sent under the same limit: one decrease, ten 429s counted
        lim.release(ticket, "rate_limited")
    assert lim.current == 7  # floor(11 x 0.7)
    stats = lim.stats()
    assert stats["n_429"] == 10 and stats["decreases"] == 1
    # a request sent after the decrease that fails decreases again (x0.9 after slow start)
    lim.release(take(lim, 1)[0], "overloaded")
    assert lim.current == 6
    lim.release(take(lim, 1)[0], "timeout")
    assert lim.current == 5
    stats = lim.stats()
    assert (stats["n_overloaded"], stats["n_timeouts"], stats["decreases"]) == (1, 1, 3)


def test_other_errors_neither_raise_nor_lower_the_limit():
    lim, _ = limiter(start=8)
    tickets = take(lim, 8)
    for ticket in tickets:
        lim.release(ticket, "error")
    assert lim.current == 8
    assert lim.stats()["n_errors"] == 8


def test_the_floor_is_one():
    lim, _ = limiter(start=4)
    for _ in range(20):
        lim.release(take(lim, 1)[0], "rate_limited")
    assert lim.current == 1
    assert isinstance(lim.try_acquire(), Ticket)  # one request can always go


def test_a_refused_first_burst_lowers_the_limit_but_slow_start_goes_on():
    lim, clock = limiter(start=8)
    tickets = take(lim, 8)
    for ticket in tickets[:3]:  # the unpaced first wave met a small burst allowance
        lim.release(ticket, "rate_limited")
    assert lim.current == 5
    assert lim.try_acquire() == math.inf  # 5 still in flight, more requests waiting
    clock.now += 1.0
    for ticket in tickets[3:]:  # sent before the decrease: successes still count, one each
        lim.release(ticket, "ok")
    assert lim.current == 10  # still doubling


# --------------------------------------------------------------------------- Retry-After, pacing


def test_retry_after_pauses_every_new_request_to_the_endpoint():
    lim, clock = limiter(start=8)
    running = take(lim, 2)
    lim.release(running[0], "rate_limited", retry_after=2.5)
    assert lim.try_acquire() == pytest.approx(2.5)  # another caller waits too, with free slots
    clock.now += 1.0
    assert lim.try_acquire() == pytest.approx(1.5)
    lim.release(running[1], "ok")  # a success does not end the pause
    assert lim.try_acquire() == pytest.approx(1.5)
    clock.now += 1.5
    assert isinstance(lim.try_acquire(), Ticket)
    stats = lim.stats()
    assert stats["pauses"] == 1 and stats["pause_s"] == pytest.approx(2.5)


def test_a_pause_is_capped_and_never_shortened():
    lim, clock = limiter(start=8, max_pause=10)
    tickets = take(lim, 2)
    lim.release(tickets[0], "rate_limited", retry_after=3600)
    assert lim.try_acquire() == pytest.approx(10)
    lim.release(tickets[1], "rate_limited", retry_after=1)
    assert lim.try_acquire() == pytest.approx(10)


def test_pacing_spaces_starts_by_latency_over_limit():
    lim, clock = limiter(start=4, pace_gain=2.0)
    ticket = take(lim, 1)[0]
    assert isinstance(lim.try_acquire(), Ticket)  # no latency known yet: no pacing
    clock.now += 0.8
    lim.release(ticket, "ok")  # latency 0.8 s, limit 5
    assert isinstance(lim.try_acquire(), Ticket)
    assert lim.try_acquire() == pytest.approx(0.8 / (5 * 2.0))
    clock.now += 0.08
    assert isinstance(lim.try_acquire(), Ticket)


# --------------------------------------------------------------------------- stats, threads, registry


def test_stats_trace_and_window():
    lim, clock = limiter(start=4, trace_max=8)
    for _ in range(30):
        clock.now += 0.5
        tickets = take(lim, lim.current)
        for ticket in tickets:
            lim.release(ticket, "ok")
        lim.release(take(lim, 1)[0], "rate_limited")
    stats = lim.stats()
    assert stats["start"] == 4 and stats["min"] <= stats["final"] <= stats["max"]
    assert len(stats["trace"]) <= 9  # thinned when full (+ the final value)
    assert stats["trace"][0] == [0.0, 4] and stats["trace"][-1][1] == stats["final"]
    times = [t for t, _ in stats["trace"]]
    assert times == sorted(times)
    json.dumps(stats)  # goes into metrics.json as is
    final = lim.current
    lim.begin_window()  # the next job: the limit carries over, the figures start again
    stats = lim.stats()
    assert stats["start"] == final and stats["n_requests"] == 0 and stats["trace"] == [[0.0, final]]


def test_blocking_acquire_never_exceeds_the_limit():
    lim = AdaptiveLimiter("http://x/v1", start=3, cap=3)
    active, peak = [0], [0]
    lock = threading.Lock()
    gate = threading.Event()

    def work() -> None:
        ticket = lim.acquire()
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
        gate.wait(120)  # until three hold a slot (the bound is against a hang only)
        with lock:
            active[0] -= 1
        lim.release(ticket, "ok")

    threads = [threading.Thread(target=work) for _ in range(10)]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + 120
    while True:  # three threads are inside (counted, not only holding a ticket), whatever the load
        with lock:
            if active[0] >= 3 or time.monotonic() > deadline:
                break
        threading.Event().wait(0.01)
    gate.set()
    for thread in threads:
        thread.join(120)
    assert peak[0] == 3 and lim.in_flight == 0


def test_fixed_limiter_counts_outcomes():
    fixed = FixedLimiter(2, "http://x/v1")
    for outcome in ("ok", "rate_limited", "overloaded", "timeout", "error"):
        fixed.release(fixed.acquire(), outcome)
    assert fixed.stats() == {"mode": "fixed", "limit": 2, "n_requests": 5, "n_ok": 1, "n_429": 1,
                             "n_overloaded": 1, "n_timeouts": 1, "n_errors": 1}


def test_concurrency_metrics_per_endpoint():
    class Client:
        def __init__(self, kind: str, limiter) -> None:
            self.kind, self.limiter = kind, limiter

    class Component:  # an answerer / a judge / an arm: it lists its model clients (bench.core.components)
        def __init__(self, *clients) -> None:
            self.listed = list(clients)

        def clients(self):
            return self.listed

    auto = AdaptiveLimiter("http://a/v1")
    answer = Component(Client("answer", auto))
    judge = Component(Client("judge", auto))
    fixed_judge, fixed_summary = FixedLimiter(4, "http://b/v1"), FixedLimiter(2, "http://b/v1/")
    arm = Component(Client("summarizer", fixed_summary))
    fixed_judge.release(fixed_judge.acquire(), "rate_limited")
    fixed_summary.release(fixed_summary.acquire(), "ok")
    found = find_limiters(answer, Component(Client("judge", fixed_judge)), judge, arm)
    assert [(lim, kinds) for lim, kinds in found] == [(auto, ["answer", "judge"]), (fixed_judge, ["judge"]),
                                                      (fixed_summary, ["summarizer"])]
    metrics = concurrency_metrics(found)
    assert set(metrics) == {"http://a/v1", "http://b/v1"}
    assert metrics["http://a/v1"]["mode"] == "auto" and metrics["http://a/v1"]["kinds"] == ["answer", "judge"]
    assert metrics["http://b/v1"] == {"kinds": ["judge", "summarizer"], "mode": "fixed",
                                      "limit": {"judge": 4, "summarizer": 2}, "n_requests": 2, "n_ok": 1,
                                      "n_429": 1, "n_overloaded": 0, "n_timeouts": 0, "n_errors": 0}


def test_one_shared_limiter_per_endpoint():
    reset_shared_limiters()
    first = shared_limiter("http://h:1/v1/")
    assert shared_limiter("http://h:1/v1") is first
    assert shared_limiter("http://h:2/v1") is not first
    assert endpoint_label("https://user:secret@h:1/v1/") == "https://h:1/v1"  # no credentials in records
    reset_shared_limiters()


@pytest.mark.parametrize("value,parsed", [("auto", "auto"), ("AUTO", "auto"), (8, 8), ("16", 16)])
def test_parse_concurrency_accepts_auto_and_positive_integers(value, parsed):
    assert parse_concurrency(value) == parsed


@pytest.mark.parametrize("value", [0, -3, "0", "abc", 1.5, True, None, "", "4.0"])
def test_parse_concurrency_rejects_everything_else(value):
    with pytest.raises(ValueError, match="max_concurrency must be auto or a positive integer"):
        parse_concurrency(value)


def test_worker_count_is_the_cap_for_auto():
    assert worker_count("auto", 64) == 64 and worker_count(4, 64) == 4
    with pytest.raises(ValueError, match="model.max_concurrency_cap must be a positive integer"):
        worker_count("auto", 0)


# --------------------------------------------------------------------------- the client tells the limiter


def api_error(cls, status: int, headers: dict[str, str] | None = None):
    response = httpx.Response(status, headers=headers or {},
                              request=httpx.Request("POST", "http://fake/v1/chat/completions"))
    return cls("refused", response=response, body={"error": {"message": "refused"}})


def test_load_outcome_of_errors():
    assert load_outcome(api_error(openai.RateLimitError, 429)) == "rate_limited"
    assert load_outcome(api_error(openai.InternalServerError, 503)) == "overloaded"
    assert load_outcome(api_error(openai.InternalServerError, 529)) == "overloaded"
    assert load_outcome(api_error(openai.InternalServerError, 504)) == "timeout"
    assert load_outcome(openai.APITimeoutError(request=httpx.Request("POST", "http://fake"))) == "timeout"
    assert load_outcome(api_error(openai.InternalServerError, 500)) == "error"
    assert load_outcome(api_error(openai.BadRequestError, 400)) == "error"


class RecordingLimiter(FixedLimiter):
    def __init__(self) -> None:
        super().__init__(4)
        self.outcomes: list[tuple[str, float | None]] = []

    def release(self, ticket, outcome, retry_after=None):
        self.outcomes.append((outcome, retry_after))
        super().release(ticket, outcome, retry_after)


def test_the_client_reports_every_outcome_with_its_retry_after():
    from scripted import ScriptedChatModel

    script = [api_error(openai.RateLimitError, 429, {"retry-after-ms": "250", "retry-after": "1"}),
              api_error(openai.InternalServerError, 503, {"retry-after": "2"}),
              api_error(openai.InternalServerError, 500),
              AIMessage("done")]
    recorder = RecordingLimiter()
    client = ChatClient(llm=ScriptedChatModel(script=script), model="m", endpoint="fake://x", limiter=recorder,
                        max_retries=5, backoff_base=0.001, backoff_max=0.01, check_endpoint=False)
    reply, record = client.chat([HumanMessage("q")])
    assert reply.content == "done" and record["retries"] == 3
    assert recorder.outcomes == [("rate_limited", 0.25), ("overloaded", 2.0), ("error", None), ("ok", None)]
    assert recorder.stats()["n_requests"] == 4 and recorder.stats()["n_429"] == 1


def test_bad_max_concurrency_values_fail_with_one_clear_line():
    for value in (0, "abc", -1):
        with pytest.raises(ModelSetupError, match=r"model\.max_concurrency must be auto or a positive integer"):
            openai_client("model", name="m", base_url="http://127.0.0.1:9/v1", api_key_env=None,
                          max_concurrency=value, cache_enabled=False)
    with pytest.raises(ModelSetupError, match=r"judge\.max_concurrency_cap must be a positive integer"):
        openai_client("judge", name="m", base_url="http://127.0.0.1:9/v1", api_key_env=None,
                      max_concurrency="auto", max_concurrency_cap="lots", cache_enabled=False)


def test_bad_max_concurrency_on_the_command_line_is_one_clear_line(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "HYDRA_FULL_ERROR"}
    done = subprocess.run([sys.executable, "-m", "bench.main", "model=openai", "model.api_key_env=null",
                           "model.check_endpoint=false", "model.max_concurrency=0", f"output_dir={tmp_path / 'job'}"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith(
        "error: model.max_concurrency must be auto or a positive integer, got 0"), done.stderr
    assert not (tmp_path / "job" / "answers.jsonl").exists()


def test_retry_after_headers():
    def wait(headers: dict[str, str]) -> float | None:
        return _retry_after(api_error(openai.RateLimitError, 429, headers))

    assert wait({"retry-after-ms": "1500", "retry-after": "9"}) == pytest.approx(1.5)
    assert wait({"retry-after": "3"}) == pytest.approx(3.0)
    soon = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 < wait({"retry-after": soon}) <= 30
    assert wait({"retry-after": "whenever"}) is None and wait({}) is None


def test_auto_shares_one_limiter_between_clients_of_an_endpoint_and_integers_do_not():
    reset_shared_limiters()
    url = "http://127.0.0.1:9/v1"
    answer = openai_client("model", name="m", base_url=url, api_key_env=None, cache_enabled=False)
    judge = openai_client("judge", kind="judge", name="j", base_url=url + "/", api_key_env=None, cache_enabled=False)
    other = openai_client("judge", kind="judge", name="j", base_url="http://127.0.0.1:8/v1", api_key_env=None,
                          cache_enabled=False)
    fixed = openai_client("model", name="m", base_url=url, api_key_env=None, cache_enabled=False, max_concurrency=3)
    assert answer.limiter is judge.limiter and answer.limiter.mode == "auto"
    assert other.limiter is not answer.limiter
    assert fixed.limiter.mode == "fixed" and fixed.limiter.limit == 3
    reset_shared_limiters()


# --------------------------------------------------------------------------- a real job with auto


def job_cfg(*overrides: str):
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return compose("config", overrides=list(overrides))


def test_auto_job_against_a_server_that_refuses_above_a_few_in_flight(tmp_path):
    reset_shared_limiters()
    out = tmp_path / "job"
    # 429 (retry-after-ms 20) for a request arriving while 3 are being answered; the first three
    # accepted replies wait until a fourth request arrived (the server's hold): the auto limit starts
    # at 8, so that fourth comes, and is refused, however slow the machine is
    with FakeOpenAI(latency=0.05, max_in_flight=3, busy_retry_after=0.02, exact_tokens=False,
                    hold=lambda body: ("first", 4)) as server:
        cfg = job_cfg("model=openai", f"model.base_url={server.base_url}", "model.api_key_env=null",
                      "judge=llm", "cache.enabled=false", "model.backoff_base=0.01", "model.backoff_max=0.05",
                      "judge.backoff_base=0.01", "judge.backoff_max=0.05", "model.max_concurrency_cap=16",
                      f"output_dir={out}")
        assert cfg.model.max_concurrency == "auto" and cfg.judge.max_concurrency == "auto"  # the defaults
        metrics = run(cfg)
        stats = server.stats()
    assert json.loads((out / "run.json").read_text())["status"] == "complete"
    assert metrics["n_errors"] == 0 and metrics["n_scored"] == metrics["n_questions"]
    assert stats.get("peak_accepted", 0) <= 3 and stats.get("outcome_ratelimit", 0) > 0
    assert stats.get("hold_timeouts", 0) == 0
    saved = json.loads((out / "metrics.json").read_text())["concurrency"]
    assert list(saved) == [server.base_url]  # one limit for the endpoint, shared by answers and judgments
    row = saved[server.base_url]
    assert row["mode"] == "auto" and sorted(row["kinds"]) == ["answer", "judge"]
    assert {"start", "min", "max", "final", "cap", "n_429", "decreases", "pauses", "trace"} <= set(row)
    assert row["start"] == 8 and row["cap"] == 16
    assert 1 <= row["min"] <= row["final"] <= row["max"] <= 16
    assert row["min"] < row["start"]  # the refusals lowered it (where it ends depends on the machine's speed)
    assert row["n_429"] == stats["outcome_ratelimit"]  # the limiter heard every refusal
    assert row["decreases"] >= 1 and row["pauses"] >= 1  # Retry-After paused the endpoint
    assert row["n_requests"] == stats["requests"]
    calls = list(read_jsonl(out / "calls.jsonl"))
    assert {c["kind"] for c in calls} == {"answer", "judge"}
    reset_shared_limiters()


def test_an_offline_job_has_no_limiter(tmp_path):
    metrics = run(job_cfg(f"output_dir={tmp_path / 'job'}"))
    assert "concurrency" not in metrics
