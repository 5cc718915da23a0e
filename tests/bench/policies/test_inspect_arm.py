"""Issue 34 item 3: inspect_ai's compaction strategies as an arm (``arm=inspect arm.strategy=edit|trim|summary``),
applied through inspect_ai's public ``compaction()`` handler to the recorded history, with the configured
summarizer where the strategy summarizes (offline: the extractive stand-in; a model: inspect's own request)."""

from __future__ import annotations

import pytest
from inspect_ai.model import CompactionSummary
from langchain_core.messages import HumanMessage, ToolMessage

from bench.cli.argv import UserError, check_stack
from bench.config.arms import build_policy, summarizes
from bench.config.checks import compose
from bench.config.job_cases import load_job_cases
from bench.policies import declare
from bench.runner import run
from bench.store.records import read_jsonl
from bench.text.content import content_text
from bench.text.tokens import TokenCounter

from fake_openai import FakeOpenAI

COUNTER = TokenCounter()
REMOVED = "(Tool result removed)"  # inspect's placeholder for a cleared tool result (CompactionEdit)
INSPECT_PROMPT = CompactionSummary.DEFAULT_SUMMARY_PROMPT.strip().splitlines()[0]


PRICE = "{input: 2.0, cached_input: 0.5, output: 8.0}"  # USD per million tokens


@pytest.fixture(scope="module")
def cases():
    return load_job_cases(compose(["dataset.limit=6"]), COUNTER).cases


def _policy(*overrides: str):
    return build_policy(compose(["arm=inspect", *overrides]), COUNTER)


def test_edit_clears_the_oldest_tool_results_as_inspect_does_and_keeps_the_rest_as_recorded(cases):
    policy = _policy("arm.strategy=edit", "arm.threshold=2500", "arm.keep_tool_uses=2")
    assert policy.name == "inspect_edit" and not policy.calls_model and policy.clients() == []
    edited = 0
    for case in cases:
        view = policy(case)
        results = [m for m in view.messages if isinstance(m, ToolMessage)]
        cleared = [content_text(m.content) == REMOVED for m in results]
        if view.info.get("insufficient"):
            continue
        edited += any(cleared)
        assert cleared == sorted(cleared, reverse=True)  # the cleared ones are the oldest
        assert cleared[-2:] == [False, False]  # never the keep_tool_uses latest
        kept = [m for m in view.messages if not (isinstance(m, ToolMessage) and content_text(m.content) == REMOVED)]
        assert all(any(m is own for own in case.messages) for m in kept)  # unchanged: the case's own objects
        assert view.info["strategy"] == "CompactionEdit" and view.info["threshold"] == 2500
    assert edited >= 3


def test_trim_keeps_the_task_and_the_latest_messages(cases):
    policy = _policy("arm.strategy=trim", "arm.threshold=2000")
    for case in cases:
        view = policy(case)
        assert view.messages[0] is case.messages[0]  # inspect keeps the input (the task)
        rest = view.messages[1:]
        assert rest == case.messages[len(case.messages) - len(rest):]  # and a suffix of the conversation
        assert len(view.info["compacted_at"]) >= 1 and view.kept_tokens < view.full_tokens
        assert all(any(m is own for own in case.messages) for m in view.messages)


def test_summary_offline_writes_inspects_summary_message_with_the_stand_in(cases):
    policy = _policy("arm.strategy=summary", "arm.threshold=2000")
    assert policy.calls_model is False and declare(policy).stand_in_summary
    for case in cases[:3]:
        view = policy(case)
        assert view.summary and view.summary.startswith("[CONTEXT COMPACTION SUMMARY]")
        assert view.summarizer_calls == len(view.info["summarizer_usage"]) >= 1
        summaries = [m for m in view.messages if isinstance(m, HumanMessage) and content_text(m.content) == view.summary]
        assert len(summaries) == 1 and view.messages[0] is case.messages[0]


def test_the_budget_is_the_threshold_and_every_view_fits_it(cases):
    for strategy in ("edit", "trim", "summary"):
        policy = _policy(f"arm.strategy={strategy}", "arm.budget=0.25")
        for case in cases:
            view = policy(case)
            target = view.budget["target_tokens"]
            assert view.kept_tokens <= target, (strategy, case.case_id)
            assert view.budget["translation"]["threshold"] == view.info["threshold"] > target  # + the system prompt
            if view.info.get("insufficient"):  # inspect's handler refused: the oldest steps were dropped
                assert view.info["insufficient"].startswith("Compaction insufficient")
                assert view.budget["translation"]["steps_dropped"] == view.info["steps_dropped"] > 0


def test_only_the_summary_strategy_summarizes():
    assert summarizes(compose(["arm=inspect", "arm.strategy=summary"]))
    assert not summarizes(compose(["arm=inspect", "arm.strategy=edit"]))
    assert not declare(_policy("arm.strategy=trim")).stand_in_summary
    with pytest.raises(UserError, match="arm=inspect_summary summarizes"):
        check_stack(["model=openai", "arm=inspect", "arm.strategy=summary"])
    check_stack(["model=openai", "arm=inspect", "arm.strategy=edit"])  # no summary: nothing to refuse


def test_a_model_summarizer_gets_inspects_own_request_through_the_cache(tmp_path):
    """End to end against the fake server: inspect's summary request makes the view, the model answers, the
    LLM judge grades, every call is priced, and the rerun is served whole by the response cache."""
    def job(name: str, server: FakeOpenAI) -> dict:
        return run(compose([f"output_dir={tmp_path / name}", "arm=inspect", "arm.strategy=summary",
                            "arm.threshold=2000", "summarizer=openai", f"summarizer.base_url={server.base_url}",
                            "summarizer.api_key_env=null", "model=openai", f"model.base_url={server.base_url}",
                            "model.api_key_env=null", f"model.price={PRICE}", "judge=llm", f"judge.price={PRICE}",
                            f"summarizer.price={PRICE}", "dataset.limit=2", f"cache.path={tmp_path / 'cache.sqlite'}"]))

    with FakeOpenAI(keep_raw=True) as server:
        first = job("first", server)
        made = server.stats()["requests"]
        again = job("again", server)
        assert server.stats()["requests"] == made  # the rerun's views, answers and verdicts come from the cache
        import json

        bodies = [json.loads(body) for _, body in server.raw]
    summaries = [b for b in bodies if str(b["messages"][-1]["content"]).strip().startswith(INSPECT_PROMPT)]
    assert summaries and all(b["messages"][0]["role"] == "system" for b in summaries)  # inspect's own request
    calls = first["model_calls"]
    assert calls["summarizer"]["calls"] == len(summaries) and calls["answer"]["calls"] > 0 and calls["judge"]["calls"] > 0
    assert again["model_calls"]["total"]["calls"] == 0
    views = list(read_jsonl(tmp_path / "first" / "views.jsonl"))
    assert all(v["arm"] == "inspect_summary" and v["summary"] for v in views)
    scores = list(read_jsonl(tmp_path / "first" / "scores.jsonl"))
    assert scores and all(s["verdict"] in ("correct", "wrong", "abstained") for s in scores)  # the LLM judge graded
    priced = sum(((c["input_tokens"] - c["cached_tokens"]) * 2.0 + c["cached_tokens"] * 0.5 + c["output_tokens"] * 8.0)
                 / 1e6 for c in read_jsonl(tmp_path / "first" / "calls.jsonl"))
    assert first["cost_usd"] == pytest.approx(priced, rel=1e-4) and first["cost_usd"] > 0
    assert again["cost_usd"] == pytest.approx(first["cost_usd"]) and again["accuracy"] == first["accuracy"]


def test_an_offline_job_runs_each_strategy_end_to_end(tmp_path):
    for strategy in ("edit", "trim"):
        metrics = run(compose([f"output_dir={tmp_path / strategy}", "arm=inspect", f"arm.strategy={strategy}",
                               "arm.threshold=2500", "dataset.limit=3", "cache.enabled=false"]))
        assert metrics["accuracy"] is not None
        views = list(read_jsonl(tmp_path / strategy / "views.jsonl"))
        assert views and all(v["arm"] == f"inspect_{strategy}" and v["info"]["strategy"] for v in views)
