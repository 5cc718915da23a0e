"""Issue 34: the context management the providers ship, as arms (``openai_compact``, ``anthropic_compact``,
``anthropic_clear``), and native Anthropic models (``model=anthropic``, ``judge=anthropic``), end to end against
fake servers on loopback that speak each wire format as the SDKs' types define it: the requests the arms send
(beta headers, edits, cache breakpoints), how the returned items are carried into the answering calls, the
view, answer, judge, a cached rerun that makes no call, and the cost."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from bench.cli.argv import UserError, check_stack
from bench.config.arms import build_policy, mixed_stack, provider_refusal
from bench.config.checks import compose
from bench.llm import model_client
from bench.llm.anthropic_client import cache_breakpoints
from bench.llm.call_errors import ModelSetupError
from bench.llm.price import Price
from bench.llm.responses import responses_input
from bench.policies.anthropic_context import CLEARED_TEXT, COMPACT_BETA, CONTEXT_BETA
from bench.runner import run
from bench.store.records import read_jsonl
from bench.text.tokens import TokenCounter

from commands import bench, one_line_error
from fake_anthropic import CLEARED, FakeAnthropic
from fake_openai import FakeOpenAI, compaction_summary
from paths import CONF_DIR

PRICE = "{input: 3.0, cached_input: 0.3, cache_write: 3.75, output: 15.0}"


def _anthropic(tmp_path: Path, server: FakeAnthropic, name: str, *extra: str, judged: bool = True) -> dict:
    judge = ["judge=anthropic", f"judge.base_url={server.base_url}", "judge.api_key_env=null",
             f"judge.price={PRICE}"] if judged else ["judge=exact"]
    return run(compose([f"output_dir={tmp_path / name}", "model=anthropic", f"model.base_url={server.base_url}",
                        "model.api_key_env=null", *judge, "dataset.limit=3", f"cache.path={tmp_path / 'cache.sqlite'}",
                        f"model.price={PRICE}", *extra]))


def _views(job: Path) -> list[dict]:
    return list(read_jsonl(job / "views.jsonl"))


def _calls(job: Path) -> list[dict]:
    return list(read_jsonl(job / "calls.jsonl"))


def _priced(calls: list[dict]) -> float:
    """Each call at the price table: uncached input, cache reads, cache writes and output at their rates."""
    return sum(((c["input_tokens"] - c["cached_tokens"] - c.get("cache_write_tokens", 0)) * 3.0
                + c["cached_tokens"] * 0.3 + c.get("cache_write_tokens", 0) * 3.75 + c["output_tokens"] * 15.0) / 1e6
               for c in calls)


# ------------------------------------------------------------------ native Anthropic models

def test_a_cache_write_is_priced_at_its_own_rate():
    price = Price.of({"input": 3.0, "cached_input": 0.3, "cache_write": 3.75, "output": 15.0})
    assert price.cost(1_000_000, 200_000, 0, cache_write_tokens=300_000) == pytest.approx(0.5 * 3 + 0.2 * 0.3 + 0.3 * 3.75)
    assert Price.of({"input": 1, "output": 1}).cost(10, 0, 0, cache_write_tokens=10) == pytest.approx(10 / 1e6)


def test_cache_breakpoints_go_on_the_shared_prefix_and_a_tool_loops_latest_message():
    calls = [{"name": "bash", "args": {"cmd": "ls"}, "id": "c1"}]
    messages = [SystemMessage("sys"), HumanMessage("task"), AIMessage("", tool_calls=calls),
                ToolMessage("out", tool_call_id="c1", name="bash"), HumanMessage("question?")]
    first = cache_breakpoints(messages, prefix=4)
    marked = [i for i, m in enumerate(first) if isinstance(m.content, list) and "cache_control" in m.content[-1]]
    assert marked == [3]  # the view's last message: every question of the view shares it
    assert first[3].content == [{"type": "text", "text": "out", "cache_control": {"type": "ephemeral", "ttl": "5m"}}]
    later = cache_breakpoints([*messages, AIMessage("thinking"), ToolMessage("x", tool_call_id="c2")], prefix=4, ttl="1h")
    assert [i for i, m in enumerate(later) if isinstance(m.content, list) and "cache_control" in m.content[-1]] == [3, 6]
    # an assistant message made of tool calls cannot hold one: the nearest earlier message takes it
    assert [i for i, m in enumerate(cache_breakpoints(messages[:3], prefix=3))
            if isinstance(m.content, list)] == [1]
    assert messages[3].content == "out"  # the caller's messages are left alone


def test_native_anthropic_answers_with_cache_breakpoints_retries_and_its_cached_tokens(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCH_TEST_ANTHROPIC_KEY", "sk-ant-test-0123456789abcdef")
    with FakeAnthropic(api_key="sk-ant-test-0123456789abcdef", min_cache_tokens=256, overload_first=1) as server:
        metrics = run(compose([f"output_dir={tmp_path / 'job'}", "model=anthropic", f"model.base_url={server.base_url}",
                               "model.api_key_env=BENCH_TEST_ANTHROPIC_KEY", "model.backoff_base=0.01",
                               "judge=exact", "dataset.limit=2", "cache.enabled=false", f"model.price={PRICE}"]))
        requests = server.messages_requests()
    answers = [r for r in requests if r.get("status") == 200 and r["body"]["messages"][-1]["role"] == "user"]
    assert answers and all(r["version"] and r["beta"] == [] for r in answers)  # the SDK's version header, no beta
    for request in answers:  # one breakpoint: on the last block before the question (the view's end)
        blocks = [b for m in request["body"]["messages"] for b in (m["content"] if isinstance(m["content"], list)
                                                                   else [{"type": "text", "text": m["content"]}])]
        marked = [i for i, b in enumerate(blocks) if "cache_control" in b]
        assert marked == [len(blocks) - 2]  # the question, the last block, is not cached
    calls = _calls(tmp_path / "job")
    assert sum(c["retries"] for c in calls) == 1  # the 529 (overloaded) was retried
    assert any(c.get("cache_write_tokens") for c in calls) and any(c["cached_tokens"] for c in calls)
    assert metrics["cost_usd"] == pytest.approx(_priced(calls), rel=1e-4)
    assert not any("sk-ant-test-0123456789abcdef" in p.read_text(errors="replace")
                   for p in (tmp_path / "job").rglob("*") if p.is_file())


def test_a_refused_anthropic_key_fails_fast_in_one_line(monkeypatch):
    monkeypatch.setenv("BENCH_TEST_ANTHROPIC_KEY", "sk-ant-wrong-0123456789abcdef")
    with FakeAnthropic(api_key="sk-ant-right-0123456789abcdef") as server:
        client = model_client("model", provider="anthropic", name="claude-fake", base_url=server.base_url,
                              api_key_env="BENCH_TEST_ANTHROPIC_KEY", cache_enabled=False)
        with pytest.raises(ModelSetupError, match="refused the API key") as refused:
            client.preflight()
    assert "sk-ant-wrong" not in str(refused.value)
    with pytest.raises(ModelSetupError, match="ANTHROPIC_API_KEY is not set"):
        monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
        model_client("model", provider="anthropic", name="claude-fake")


# ------------------------------------------------------------------ anthropic_compact

def test_anthropic_compact_end_to_end_view_answer_judge_cached_rerun_and_cost(tmp_path):
    with FakeAnthropic(min_cache_tokens=256) as server:
        first = _anthropic(tmp_path, server, "first", "arm=anthropic_compact", "arm.trigger=5000")
        made = len(server.messages_requests())
        again = _anthropic(tmp_path, server, "again", "arm=anthropic_compact", "arm.trigger=5000")
        assert len(server.messages_requests()) == made  # the rerun made no call at all
        requests = server.messages_requests()
    views = _views(tmp_path / "first")
    compacted = [v for v in views if v["info"]["compacted"]]
    assert compacted and len(compacted) < len(views)  # one case is under the trigger: its history as recorded
    edit = {"type": "compact_20260112", "trigger": {"type": "input_tokens", "value": 5000}}
    view_calls = [r for r in requests if (r["body"].get("context_management") or {}).get("edits", [{}])[0]
                  .get("pause_after_compaction")]
    assert len(view_calls) == len(views)
    for request in view_calls:  # the view call: the beta header, the edit with the pause, the history
        assert request["beta"] == [COMPACT_BETA]
        assert request["body"]["context_management"] == {"edits": [{**edit, "pause_after_compaction": True}]}
    for view in compacted:
        (block,) = view["messages"][0]["data"]["content"]
        assert block["type"] == "compaction" and view["summary"] == block["content"]
        assert view["summary"].startswith("Compaction summary") and len(view["messages"]) == 1
        assert view["request"] == {"provider": "anthropic", "send": "view",
                                   "params": {"betas": [COMPACT_BETA], "context_management": {"edits": [edit]}}}
        # the answering calls send the block back verbatim, then the question, with the beta and the edit
        answering = [r for r in requests if r["body"]["messages"][0]["role"] == "assistant"
                     and r["body"]["messages"][0]["content"][0].get("content") == block["content"]]
        assert answering and all(r["beta"] == [COMPACT_BETA] and r["body"]["context_management"] == {"edits": [edit]}
                                 for r in answering)
        assert {k: v for k, v in answering[0]["body"]["messages"][0]["content"][0].items() if k != "cache_control"} \
            == block
    for view in views:
        if not view["info"]["compacted"]:
            assert view["summary"] is None and view["kept_tokens"] == view["full_tokens"]
    kinds = first["model_calls"]
    assert kinds["summarizer"]["calls"] == len(views) and kinds["judge"]["calls"] > 0
    assert first["cost_usd"] == pytest.approx(_priced(_calls(tmp_path / "first")), rel=1e-4)
    assert again["model_calls"]["total"]["calls"] == 0 and again["cost_usd"] == pytest.approx(first["cost_usd"])
    assert again["accuracy"] == first["accuracy"]
    scores = list(read_jsonl(tmp_path / "first" / "scores.jsonl"))
    assert scores and all(s["verdict"] in ("correct", "wrong", "abstained") for s in scores)  # the LLM judge graded


def test_anthropic_compact_takes_the_budget_as_its_trigger(tmp_path):
    with FakeAnthropic() as server:
        _anthropic(tmp_path, server, "job", "arm=anthropic_compact", "arm.budget=0.25", judged=False)
        triggers = [r["body"]["context_management"]["edits"][0]["trigger"]["value"] for r in server.messages_requests()
                    if r["body"].get("context_management")]
    for view in _views(tmp_path / "job"):
        assert view["budget"]["translation"] == {"trigger": view["budget"]["target_tokens"]}
        assert view["budget"]["target_tokens"] in triggers
        assert view["info"]["compacted"] and view["kept_tokens"] < view["budget"]["target_tokens"]


# ------------------------------------------------------------------ anthropic_clear

def test_anthropic_clear_records_what_the_server_cleared_and_answers_with_the_history_and_the_edit(tmp_path):
    extra = ("arm=anthropic_clear", "arm.trigger=1500", "arm.keep=2", "arm.clear_at_least=10",
             "arm.exclude_tools=[finish]", "arm.clear_tool_inputs=true")
    with FakeAnthropic() as server:
        first = _anthropic(tmp_path, server, "first", *extra)
        made = len(server.messages_requests())
        again = _anthropic(tmp_path, server, "again", *extra)
        assert len(server.messages_requests()) == made
        requests = server.messages_requests()
    edit = {"type": "clear_tool_uses_20250919", "trigger": {"type": "input_tokens", "value": 1500},
            "keep": {"type": "tool_uses", "value": 2}, "clear_at_least": {"type": "input_tokens", "value": 10},
            "exclude_tools": ["finish"], "clear_tool_inputs": True}
    cases = {c["case_id"]: c for c in read_jsonl(tmp_path / "first" / "cases.jsonl")}
    views = _views(tmp_path / "first")
    assert any(v["info"]["cleared_tool_uses"] for v in views)
    for view in views:
        assert view["request"] == {"provider": "anthropic", "send": "history",
                                   "params": {"betas": [CONTEXT_BETA], "context_management": {"edits": [edit]}}}
        case = cases[view["case_id"]]
        history = case["messages"]
        # the view call: the request an agent sends (system, history, edit, beta), what the server reported
        (call,) = [r for r in requests if r["body"].get("max_tokens") == 1 and _task(r) == history[0]["data"]["content"]]
        assert call["beta"] == [CONTEXT_BETA] and call["body"]["context_management"] == {"edits": [edit]}
        reported = view["info"]["applied_edits"]
        assert view["info"]["cleared_tool_uses"] == sum(e["cleared_tool_uses"] for e in reported)
        # the view's cleared results are exactly the tool uses the server cleared, and read as cleared
        cleared_ids = {history[i]["data"]["tool_call_id"] for i in view["info"]["cleared_messages"]}
        assert cleared_ids == set(call.get("cleared", []))
        for index in view["info"]["cleared_messages"]:
            assert view["messages"][index]["data"]["content"] == CLEARED_TEXT
        kept = [i for i, m in enumerate(history) if i not in view["info"]["cleared_messages"]
                and m["type"] != "ai"]
        assert all(view["messages"][i] == history[i] for i in kept)  # unchanged messages are the case's
    answering = [r for r in requests if r["body"].get("max_tokens") != 1 and r["body"].get("context_management")]
    assert answering and all(r["beta"] == [CONTEXT_BETA] and r["body"]["context_management"] == {"edits": [edit]}
                             for r in answering)
    # the answering calls send the whole recorded history (the server clears it), then the question
    assert all(CLEARED not in json.dumps(r["body"]["messages"]) for r in answering)
    assert any(r.get("cleared") for r in answering)
    assert first["model_calls"]["judge"]["calls"] > 0 and all(  # the Anthropic judge graded
        s["verdict"] in ("correct", "wrong", "abstained") for s in read_jsonl(tmp_path / "first" / "scores.jsonl"))
    assert again["model_calls"]["total"]["calls"] == 0 and again["cost_usd"] == pytest.approx(first["cost_usd"])
    assert first["cost_usd"] == pytest.approx(_priced(_calls(tmp_path / "first")), rel=1e-4)


def _task(request: dict) -> str:
    """The first user message's text of a Messages API request (the case's task)."""
    content = request["body"]["messages"][0]["content"]
    return content if isinstance(content, str) else "".join(b.get("text", "") for b in content)


# ------------------------------------------------------------------ openai_compact

def test_responses_input_items_are_the_sdk_param_shapes():
    calls = [{"name": "bash", "args": {"cmd": "ls"}, "id": "call_1"}]
    items = responses_input([HumanMessage("task"), AIMessage("looking", tool_calls=calls),
                             ToolMessage("a.py", tool_call_id="call_1", name="bash"),
                             AIMessage(content=[{"type": "compaction", "id": "cmp_1", "encrypted_content": "xyz"}])])
    assert items == [{"role": "user", "content": "task"}, {"role": "assistant", "content": "looking"},
                     {"type": "function_call", "call_id": "call_1", "name": "bash", "arguments": '{"cmd": "ls"}'},
                     {"type": "function_call_output", "call_id": "call_1", "output": "a.py"},
                     {"type": "compaction", "encrypted_content": "xyz", "id": "cmp_1"}]


def test_openai_compact_end_to_end_through_the_responses_api(tmp_path):
    def job(name: str, server: FakeOpenAI, *extra: str) -> dict:
        return run(compose([f"output_dir={tmp_path / name}", "model=openai", "model.api=responses",
                            f"model.base_url={server.base_url}", "model.api_key_env=null", "judge=llm",
                            "dataset.limit=3", f"cache.path={tmp_path / 'cache.sqlite'}", "arm=openai_compact",
                            "model.price={input: 2.0, cached_input: 0.5, output: 8.0}",
                            "judge.price={input: 2.0, output: 8.0}", *extra]))

    with FakeOpenAI() as server:
        first = job("first", server, "arm.budget=0.5")
        made = len(server.responses_log), server.stats().get("requests", 0)
        again = job("again", server, "arm.budget=0.5")
        assert (len(server.responses_log), server.stats().get("requests", 0)) == made  # no call at all
        log = list(server.responses_log)
    cases = {c["case_id"]: c for c in read_jsonl(tmp_path / "first" / "cases.jsonl")}
    compacts = [r["body"] for r in log if r["path"] == "/responses/compact"]
    views = _views(tmp_path / "first")
    assert len(compacts) == sum(1 for v in views if v["info"]["compacted"]) > 0
    for body in compacts:  # ResponseCompactParams: model, input items, instructions (the system prompt)
        assert set(body) == {"model", "input", "instructions"} and body["model"] == "gpt-4o-mini"
        assert {i.get("type", "message") for i in body["input"]} <= {"message", "function_call", "function_call_output"}
        assert body["instructions"] in {c["system_prompt"] for c in cases.values()}
    for view in views:
        assert view["request"] == {"provider": "openai", "params": {}, "send": "view"}
        assert view["budget"]["translation"] == {"threshold": view["budget"]["target_tokens"]}
        if not view["info"]["compacted"]:
            continue
        block = view["messages"][-1]["data"]["content"][0]
        assert block["type"] == "compaction" and compaction_summary(block["encrypted_content"])
        assert view["summary"] is None and view["info"]["compaction_tokens"] > 0  # opaque: the provider's size
        # the user messages it returned unchanged are the case's own
        users = [m for m in cases[view["case_id"]]["messages"] if m["type"] == "human"]
        assert view["messages"][:-1] == users[:len(view["messages"]) - 1]
        # the answering calls carry the item verbatim, after the user messages, before the question
        answering = [r["body"]["input"] for r in log if r["path"] == "/responses"
                     and any(i.get("encrypted_content") == block["encrypted_content"] for i in r["body"]["input"])]
        assert answering
        for items in answering:
            at = next(i for i, item in enumerate(items) if item.get("type") == "compaction")
            assert items[at] == {"type": "compaction", "id": block["id"], "encrypted_content": block["encrypted_content"]}
            assert items[at + 1].get("role") == "user"  # the question follows
    assert first["model_calls"]["summarizer"]["calls"] == len(compacts)
    assert first["model_calls"]["judge"]["calls"] > 0 and all(  # the LLM judge graded
        s["verdict"] in ("correct", "wrong", "abstained") for s in read_jsonl(tmp_path / "first" / "scores.jsonl"))
    calls = _calls(tmp_path / "first")
    assert first["cost_usd"] == pytest.approx(sum(
        ((c["input_tokens"] - c["cached_tokens"]) * 2.0 + c["cached_tokens"] * (0.5 if c["kind"] != "judge" else 2.0)
         + c["output_tokens"] * 8.0) / 1e6 for c in calls), rel=1e-4)
    assert again["model_calls"]["total"]["calls"] == 0 and again["cost_usd"] == pytest.approx(first["cost_usd"])


# ------------------------------------------------------------------ refusals

@pytest.mark.parametrize("args,expected", [
    (["arm=anthropic_compact"], "cannot be measured offline (model=offline-evidence-reader); run it with model=anthropic"),
    (["arm=anthropic_clear", "model=openai"], "model=gpt-4o-mini is OpenAI's; run it with model=anthropic"),
    (["arm=openai_compact", "model=anthropic"], "run it with model=openai model.api=responses"),
    (["arm=openai_compact", "model=openai"], "set model.api=responses"),
])
def test_a_provider_arm_without_its_provider_is_refused_before_anything_is_written(args, expected):
    with pytest.raises(UserError, match=expected.replace("(", r"\(").replace(")", r"\)")):
        check_stack(args)
    assert provider_refusal(compose(args)) is not None
    assert provider_refusal(compose(["arm=openai_compact", "model=openai", "model.api=responses"])) is None
    assert provider_refusal(compose(["arm=anthropic_clear", "model=anthropic"])) is None


def test_offline_the_provider_arm_is_one_line_exit_2_and_no_directory(tmp_path):
    done = bench(tmp_path, "arm=anthropic_compact")
    one_line_error(done, "arm=anthropic_compact is Anthropic's server-side compaction", "model=anthropic")
    assert list(tmp_path.iterdir()) == []  # no job directory, no .hydra, no main.log


@pytest.mark.parametrize("experiment", ["peers_anthropic", "peers_openai"])
def test_the_provider_and_summarizing_jobs_of_a_providers_peers_experiment_build_without_a_refusal(experiment, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-config-only")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-config-only")
    import yaml


    spec = yaml.safe_load((CONF_DIR / "experiment" / f"{experiment}.yaml").read_text())
    arms = [a.strip() for a in str(spec["hydra"]["sweeper"]["params"]["+experiment/arm"]).split(",")]
    providers = {"peers_anthropic": {"anthropic_compact", "anthropic_clear"}, "peers_openai": {"openai_compact"}}
    assert providers[experiment] <= set(arms) and set(arms) > providers[experiment] | {"full", "inspect_summary"}
    for arm in sorted(providers[experiment] | {"compact", "inspect_summary"}):  # the ones a wrong stack would refuse
        job = compose([f"+experiment={experiment}", f"+experiment/arm={arm}"])
        assert provider_refusal(job) is None and mixed_stack(job, []) is None, arm
        assert callable(build_policy(job, TokenCounter()))


def test_the_estimate_of_a_provider_arm_sends_nothing_and_counts_one_view_call_per_case(monkeypatch):
    from bench.estimate import estimate_job

    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)  # no key needed: nothing is sent
    estimate = estimate_job(["model=anthropic", "arm=anthropic_compact", "dataset.limit=3",
                             "model.price={input: 3.0, output: 15.0}"])
    assert estimate["kinds"]["summarizer"]["calls"] == estimate["n_cases"] == 3
    assert estimate["total"]["cost_usd"] is not None
