"""Prompt-cache-aware requests and what calls cost (issue 22 item 1): warm prefixes, cached input tokens
per call, a price table per model and the cost of a job."""

from __future__ import annotations

import json

import pytest

from bench.config.checks import compose
from bench.llm.call_errors import ModelSetupError
from bench.llm.price import Price
from bench.runner import run
from bench.store.records import read_jsonl

from commands import bench, one_line_error
from fake_openai import FakeOpenAI

PRICE = "{input: 2.0, cached_input: 0.5, output: 8.0, batch: 0.5}"


def test_a_call_is_priced_by_its_uncached_and_cached_input_and_its_output():
    price = Price.of({"input": 2.0, "cached_input": 0.5, "output": 8.0, "batch": 0.5})
    assert price.cost(1_000_000, 0, 0) == pytest.approx(2.0)
    assert price.cost(1_000_000, 600_000, 100_000) == pytest.approx(0.4 * 2.0 + 0.6 * 0.5 + 0.1 * 8.0)
    assert price.cost(1_000_000, 600_000, 100_000, batch=True) == pytest.approx(0.95)
    assert Price.of({"input": 1, "output": 1}).cost(10, 10, 0) == pytest.approx(10 / 1e6)  # cached as input
    assert Price.of(None) is None


@pytest.mark.parametrize("value,message", [
    ({"input": 1}, "model.price needs input and output"),
    ({"input": 1, "output": 1, "cache": 1}, "unknown key(s) ['cache']"),
    ({"input": -1, "output": 1}, "model.price.input: a non-negative number"),
    ({"input": 1, "output": 1, "batch": 2}, "model.price.batch: the fraction billed in batch mode"),
    ("cheap", "model.price: a mapping"),
])
def test_a_wrong_price_table_is_one_line(value, message):
    with pytest.raises(ModelSetupError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
        Price.of(value)


def test_a_wrong_price_on_the_command_line_fails_before_any_call(tmp_path):
    one_line_error(bench(tmp_path, "model=openai", "model.api_key_env=null", "model.base_url=http://127.0.0.1:9/v1",
                         "model.price={input: 1}"), "model.price needs input and output")


def _job(tmp_path, server, name, *extra):
    return run(compose([f"output_dir={tmp_path / name}", "model=openai", f"model.base_url={server.base_url}",
                        "model.api_key_env=null", "model.max_concurrency=64", "judge=exact", *extra]))


def test_cost_of_a_job_is_the_sum_of_its_calls_and_a_cached_rerun_spends_nothing(tmp_path):
    with FakeOpenAI(prefix_cache=True) as server:
        cache = f"cache.path={tmp_path / 'cache.sqlite'}"
        first = _job(tmp_path, server, "first", "dataset.limit=3", f"model.price={PRICE}", cache)
        again = _job(tmp_path, server, "again", "dataset.limit=3", f"model.price={PRICE}", cache)
    calls = [json.loads(line) for line in (tmp_path / "first" / "calls.jsonl").read_text().splitlines()]
    expected = sum((c["input_tokens"] - c["cached_tokens"]) * 2.0 + c["cached_tokens"] * 0.5
                   + c["output_tokens"] * 8.0 for c in calls) / 1e6
    assert calls and all("cost_usd" in c for c in calls)
    assert first["cost_usd"] == pytest.approx(expected, rel=1e-4) and first["spent_cost_usd"] == first["cost_usd"]
    assert again["cost_usd"] == pytest.approx(first["cost_usd"], rel=1e-4) and again["spent_cost_usd"] == 0
    stored = json.loads((tmp_path / "first" / "metrics.json").read_text())
    assert stored["model_calls"]["answer"]["cost_usd"] == pytest.approx(expected, rel=1e-4)


def test_without_a_price_no_cost_is_made_up(tmp_path):
    with FakeOpenAI() as server:
        metrics = _job(tmp_path, server, "unpriced", "dataset.limit=2", "cache.enabled=false")
    assert metrics["cost_usd"] is None and metrics["model_calls"]["total"]["cost_usd"] is None


def test_warm_prefixes_let_a_views_other_questions_read_its_cached_prefix(tmp_path):
    """One view's questions share its prefix. Naive, they are sent together: the server holds every
    reply until all of them arrived (a group of the fake server's ``hold``), so none can find a
    prefix another wrote, whatever the machine's load. Warm, the first goes alone and the others
    only once its reply is in (the pipeline's order): each of them reads the prefix it wrote."""
    questions = len(json.loads((_offline_cases(tmp_path)).read_text().splitlines()[0])["questions"])
    assert questions >= 4
    calls = {}
    for warm in ("false", "true"):
        hold = (lambda body: ("view", questions)) if warm == "false" else None
        with FakeOpenAI(prefix_cache=True, hold=hold) as server:
            _job(tmp_path, server, warm, "dataset.limit=1", "cache.enabled=false", f"model.warm_prefix={warm}")
            assert server.stats().get("hold_timeouts", 0) == 0  # naive: the questions were in flight together
        calls[warm] = [c for c in read_jsonl(tmp_path / warm / "calls.jsonl") if c["kind"] == "answer"]
    assert len(calls["false"]) == len(calls["true"]) == questions  # one call per question (a finish call)
    assert all(c["cached_tokens"] == 0 for c in calls["false"])
    cached = sorted(c["cached_tokens"] for c in calls["true"])
    assert cached[0] == 0 and all(n > 0 for n in cached[1:])  # all but the view's first read its prefix
    share = sum(cached) / sum(c["input_tokens"] for c in calls["true"])
    assert share >= 0.7, share


def _offline_cases(tmp_path):
    """cases.jsonl of the one-case job the warm-prefix test asks (the offline reader: no server)."""
    run(compose([f"output_dir={tmp_path / 'offline'}", "dataset.limit=1"]))
    return tmp_path / "offline" / "cases.jsonl"
