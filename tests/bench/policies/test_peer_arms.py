"""The peer arms (issue 19): none, mask, trim (LangChain's trim_messages), condenser and
custom; what every arm declares; a throwaway arm added with its module and YAML only."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage, trim_messages
from omegaconf import OmegaConf

from bench.config.arms import build_policy
from bench.config.checks import ConfigError
from bench.policies import PolicyContext, declaration_of, declare, view_problems
from bench.policies.condenser import SummarizingCondenser
from bench.policies.custom import CustomPolicy, InvalidCustomView
from bench.policies.lc_summary import LangChainSummarization
from bench.policies.mask import MASK_PLACEHOLDER, ObservationMask
from bench.policies.none import NoHistory
from bench.policies.trim import TrimMessages
from bench.store.schema import Case
from bench.text.tokens import TokenCounter

from paths import CONF_DIR, DEV_PARQUET, OPS_JSONL, PROJECT, pythonpath

COUNTER = TokenCounter()


def _load(cfg: dict) -> list[Case]:
    from bench.data.selection import load_cases

    return load_cases(OmegaConf.create({"filters": {}, **cfg}), COUNTER).cases


@pytest.fixture(scope="module")
def real_cases() -> list[Case]:
    """Real histories: the OpenHands dev rows, the tau2 operations sample, the coding sample."""
    return (_load({"source": "local", "path": str(DEV_PARQUET)})
            + _load({"source": "local", "path": str(OPS_JSONL), "profile": "tau2"})
            + _load({"source": "sample"}))


def _compose(*overrides: str):
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return compose("config", overrides=list(overrides))


# ---- trim: the library itself
@pytest.mark.parametrize("budget", [500, 2000, 8000])
def test_trim_views_equal_trim_messages_called_directly(real_cases, budget):
    arm = TrimMessages(max_tokens=budget, context=PolicyContext(counter=COUNTER))
    for case in real_cases:
        direct = trim_messages(list(case.messages), max_tokens=budget, token_counter=COUNTER.count_messages,
                               strategy="last", start_on=["human", "ai"], allow_partial=False)
        view = arm(case)
        assert view.messages == direct, case.case_id
        assert not view_problems(view.messages)
        assert view.kept_tokens <= budget
        assert view.messages == case.messages[len(case.messages) - len(view.messages):]


# ---- mask: the window boundary
def _history(turns: int) -> list:
    messages = [HumanMessage(content="fix the bug")]
    for i in range(turns):
        messages.append(AIMessage(content="", tool_calls=[{"id": f"c{i}", "name": "bash", "args": {"command": f"ls {i}"}}]))
        messages.append(ToolMessage(content=f"output {i}", tool_call_id=f"c{i}"))
    return messages


def _case(messages: list) -> Case:
    return Case(case_id="c", instance_id="i", source_row=0, repo="r", trajectory_id="t", system_prompt="sys",
                messages=messages, tools=[], model_patch="", repo_root="/repo", questions=[])


def test_mask_hides_results_older_than_the_window_and_keeps_every_call():
    case = _case(_history(5))
    view = ObservationMask(window=2, context=PolicyContext(counter=COUNTER))(case)
    results = [m.content for m in view.messages if isinstance(m, ToolMessage)]
    assert results == [MASK_PLACEHOLDER] * 3 + ["output 3", "output 4"]  # the 2 latest turns stay verbatim
    assert [m.tool_calls for m in view.messages if isinstance(m, AIMessage)] == \
        [m.tool_calls for m in case.messages if isinstance(m, AIMessage)]
    assert view.info["results_masked"] == 3 and not view_problems(view.messages)
    assert ObservationMask(window=5, context=PolicyContext(counter=COUNTER))(case).messages == case.messages
    assert ObservationMask(window=0, context=PolicyContext(counter=COUNTER))(case).info["results_masked"] == 5
    with pytest.raises(ConfigError):
        ObservationMask(window=-1)


def test_mask_on_real_histories_is_valid_and_never_longer(real_cases):
    arm = ObservationMask(context=PolicyContext(counter=COUNTER))
    for case in real_cases:
        view = arm(case)
        assert not view_problems(view.messages)
        assert len(view.messages) == len(case.messages)
        assert view.kept_tokens <= COUNTER.count_messages(case.messages)


# ---- condenser: keep_first, max_size, rolling summaries
class Recording:
    """A summarizer that records what it was given (a previous summary is a message of it)."""

    name = "recording"
    calls_model = False

    def __init__(self):
        self.calls: list[list] = []

    def summarize(self, messages, prompt, profile=None):
        self.calls.append(list(messages))
        return f"summary {len(self.calls)}", {"model": self.name, "calls": 1}


def test_condenser_keeps_the_head_and_tail_and_summarises_the_previous_summary():
    summarizer = Recording()
    arm = SummarizingCondenser(max_size=10, keep_first=1, context=PolicyContext(counter=COUNTER, summarizer=summarizer))
    case = _case(_history(12))  # 25 messages
    view = arm(case)
    assert not view_problems(view.messages)
    assert view.messages[0] is case.messages[0]  # keep_first: the task
    assert view.messages[-1] is case.messages[-1]
    assert len(view.messages) <= 10
    assert len(summarizer.calls) >= 2 and view.summarizer_calls == len(summarizer.calls)
    # a later condensation receives the previous summary first, then what was forgotten since
    second = summarizer.calls[1]
    assert isinstance(second[0], HumanMessage) and "summary 1" in second[0].content
    assert f"summary {len(summarizer.calls)}" in view.messages[1].content
    for record in view.info["condensations"]:
        assert record["events_before"] > 10 and record["events_after"] <= 10 // 2 + 2


def test_condenser_below_max_size_shows_the_history_as_is(real_cases):
    arm = SummarizingCondenser(max_size=10_000, context=PolicyContext(counter=COUNTER))
    case = real_cases[0]
    view = arm(case)
    assert view.messages == case.messages and view.summarizer_calls == 0


def test_condenser_on_real_histories_is_valid(real_cases):
    arm = SummarizingCondenser(max_size=30, context=PolicyContext(counter=COUNTER))
    for case in real_cases:
        view = arm(case)
        assert not view_problems(view.messages), case.case_id
        if len(case.messages) > 30:
            assert view.summarizer_calls >= 1


def test_condenser_settings_are_checked():
    with pytest.raises(ConfigError):
        SummarizingCondenser(max_size=2)
    with pytest.raises(ConfigError):
        SummarizingCondenser(max_size=10, keep_first=5)


# ---- none
def test_none_shows_no_history(real_cases):
    view = NoHistory(context=PolicyContext(counter=COUNTER))(real_cases[0])
    assert view.messages == [] and view.kept_tokens == 0


# ---- custom
def test_custom_policy_returns_the_functions_messages(real_cases):
    arm = CustomPolicy(policy="custom_policies:last_ten", context=PolicyContext(counter=COUNTER))
    for case in real_cases[:5]:
        view = arm(case)
        assert len(view.messages) <= 10 and not view_problems(view.messages)


def test_custom_policy_that_splits_an_exchange_names_the_first_bad_message(real_cases):
    arm = CustomPolicy(policy="custom_policies:split_exchange", context=PolicyContext(counter=COUNTER))
    with pytest.raises(InvalidCustomView, match=r"message 0: tool result .* without its call"):
        arm(real_cases[0])
    with pytest.raises(InvalidCustomView, match="expected a list of messages or a View"):
        CustomPolicy(policy="custom_policies:not_messages")(real_cases[0])


@pytest.mark.parametrize("spec,message", [("nocolon", "must be 'package.module:function'"),
                                          ("no_such_module_xyz:f", "cannot import"),
                                          ("custom_policies:nope", "has no function")])
def test_custom_policy_spec_errors_are_one_line(spec, message):
    with pytest.raises(ConfigError, match=message):
        CustomPolicy(policy=spec)


def _bench(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**{k: v for k, v in os.environ.items() if k != "HYDRA_FULL_ERROR"},
           "PYTHONPATH": pythonpath(), "TQDM_DISABLE": "1"}
    return subprocess.run([sys.executable, "-m", "bench.main", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def test_an_invalid_custom_view_stops_the_job_with_one_line_and_scores_nothing(tmp_path):
    out = tmp_path / "job"
    done = _bench(tmp_path, "arm=custom", "arm.policy=custom_policies:split_exchange", f"output_dir={out}",
                  "dataset.limit=2")
    assert done.returncode == 2, done.stderr[-2000:]
    lines = [ln for ln in done.stderr.strip().splitlines() if ln.strip() and "row/s" not in ln and "q/s" not in ln]
    assert len(lines) == 1 and "invalid view" in lines[0] and "without its call" in lines[0], done.stderr
    assert "Traceback" not in done.stderr
    scores = out / "scores.jsonl"
    assert not scores.exists() or not scores.read_text().strip()  # nothing written as if it were valid
    assert json.loads((out / "run.json").read_text())["status"] != "complete"


# ---- lc_summary: LangChain's SummarizationMiddleware, through its before_model hook
class _Recording:
    """A summarizer that records what it was given (the protocol: messages, prompt, profile)."""

    name = "recording"
    calls_model = False

    def __init__(self) -> None:
        self.inputs: list[tuple[list, str]] = []

    def summarize(self, messages, prompt, profile=None):
        self.inputs.append((list(messages), prompt))
        return f"summary number {len(self.inputs)}", {"model": "recording"}


def _lc(summarizer=None, **settings) -> LangChainSummarization:
    return LangChainSummarization(**settings, context=PolicyContext(counter=COUNTER, summarizer=summarizer))


def test_lc_summary_fires_as_the_history_grows_and_summarises_the_previous_summary(real_cases):
    from langchain.agents.middleware.summarization import DEFAULT_SUMMARY_PROMPT

    recording = _Recording()
    case = max(real_cases, key=lambda c: COUNTER.count_messages(c.messages))
    ids = [m.id for m in case.messages]
    view = _lc(recording, trigger=["tokens", 3000], keep=["messages", 6], trim_tokens_to_summarize=None)(case)
    runs = view.info["summarizations"]
    assert len(runs) >= 2 and view.summarizer_calls == len(recording.inputs) >= 2
    assert all(r["tokens_after"] < r["tokens_before"] for r in runs)
    assert [r["at_message"] for r in runs] == sorted(r["at_message"] for r in runs)
    # a later summary reads the previous one (the first message of the history it summarises)
    second_input = recording.inputs[1][0]
    assert "summary number 1" in second_input[0].content
    # LangChain's own prompt, without its messages block (the summarizer receives the messages)
    assert recording.inputs[0][1] == DEFAULT_SUMMARY_PROMPT.split("<messages>")[0].rstrip()
    # the view: LangChain's summary message, then the case's own latest messages, untouched
    assert view.messages[0].content == f"Here is a summary of the conversation to date:\n\nsummary number {len(runs)}"
    tail = view.messages[1:]
    assert tail == case.messages[len(case.messages) - len(tail):]
    assert all(a is b for a, b in zip(tail, case.messages[len(case.messages) - len(tail):], strict=True))
    assert [m.id for m in case.messages] == ids  # the middleware's ids never reach the case's messages
    assert not view_problems(view.messages)


def test_lc_summary_equals_the_middleware_driven_directly(real_cases):
    """The arm adds nothing to LangChain's decisions: the same hook calls give the same view."""
    from langchain.agents.middleware import SummarizationMiddleware
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langgraph.runtime import Runtime

    for case in real_cases[:8]:
        ours = _lc(_Recording(), trigger=["tokens", 2500], keep=["tokens", 1200])(case)
        count = iter(range(1, 1000))
        middleware = SummarizationMiddleware(GenericFakeChatModel(messages=iter(())), trigger=("tokens", 2500),
                                             keep=("tokens", 1200), token_counter=COUNTER.count_messages,
                                             summarizer=lambda messages, count=count: f"summary number {next(count)}")
        state = []
        for index, message in enumerate([*case.messages, None]):
            if (message is None or isinstance(message, AIMessage)) and state:
                update = middleware.before_model({"messages": state}, Runtime())
                if update:
                    state = update["messages"][1:]
            if message is not None:
                state.append(message.model_copy(update={"id": f"m{index}"}))
        assert [m.content for m in ours.messages] == [m.content for m in state]


def test_lc_summary_below_its_trigger_shows_the_history_as_is(real_cases):
    for case in real_cases[:5]:
        view = _lc(trigger=["tokens", 10**7])(case)
        assert view.messages == case.messages and view.summarizer_calls == 0 and view.summary is None


def test_lc_summary_offline_default_is_extractive_and_valid(real_cases):
    arm = build_policy(_compose("arm=lc_summary"), COUNTER)
    fired = 0
    for case in real_cases:
        view = arm(case)
        assert not view_problems(view.messages)
        fired += bool(view.info["summarizations"])
        if view.summary is not None:
            assert "EXTRACTIVE SUMMARY" in view.summary
    assert fired


@pytest.mark.parametrize(("override", "message"), [
    ("arm.trigger=tokens", "arm.trigger"),
    ("arm.trigger=[tokens]", "arm.trigger"),
    ("arm.keep=[bogus,3]", "lc_summary"),
    ("arm.trigger=[fraction,0.5]", "arm.context_window"),  # named, not LangChain's model profile (issue 32)
    ("arm.trim_tokens_to_summarize=0", "arm.trim_tokens_to_summarize"),
])
def test_lc_summary_settings_are_checked_in_one_line(override, message):
    with pytest.raises(ConfigError, match=message) as error:
        build_policy(_compose("arm=lc_summary", override), COUNTER)
    assert "\n" not in str(error.value)


def test_lc_summary_fraction_trigger_reads_the_context_window(real_cases):
    case = max(real_cases, key=lambda c: COUNTER.count_messages(c.messages))
    view = build_policy(_compose("arm=lc_summary", "arm.trigger=[fraction,0.5]", "arm.context_window=6000"),
                        COUNTER)(case)
    assert view.info["summarizations"] and view.info["summarizations"][0]["tokens_before"] > 3000


# ---- declarations
def test_every_arm_declares_its_role_and_dependencies():
    declared = {}
    for path in sorted((CONF_DIR / "arm").glob("*.yaml")):
        if "provider:" in path.read_text():  # views from a provider's server: built with it (tests/bench/policies/test_provider_arms.py)
            continue
        extra = {"nlatest": ["arm.n=10"], "custom": ["arm.policy=custom_policies:last_ten"]}.get(path.stem, [])
        cfg = _compose(f"arm={path.stem}", *extra)
        declared[path.stem] = declare(build_policy(cfg, COUNTER))
    assert declared["full"].role == "reference" and declared["none"].role == "baseline"
    assert {d.role for name, d in declared.items() if name not in ("full", "none")} == {"candidate"}
    assert declared["compact"].summary_prompt and declared["compact"].mechanisms
    assert declared["condenser"].summarizer and not declared["condenser"].summary_prompt
    assert declared["lc_summary"].summarizer and not declared["lc_summary"].summary_prompt  # LangChain's prompt
    assert not any(declared[n].summary_prompt for n in ("full", "none", "nlatest", "trim", "mask", "context_edit",
                                                         "custom"))
    assert not declared["context_edit"].summarizer and not declared["context_edit"].stand_in_summary
    assert declared["compact"].stand_in_summary and declared["lc_summary"].stand_in_summary  # offline summarizer
    matched = declare(build_policy(_compose("arm=nlatest", "arm.n=null", "arm.match=compact"), COUNTER))
    assert matched.summary_prompt and matched.mechanisms  # the matched arm's prompt shapes its budget
    orders = [declared[n].order for n in ("full", "none", "nlatest", "compact")]
    assert orders == sorted(orders)


def test_an_old_run_json_without_a_declaration_reads_as_before():
    assert declaration_of({"arm": "full"})["role"] == "reference"
    assert declaration_of({"arm": "compact"})["summary_prompt"]
    assert declaration_of({"arm": "nlatest"}, {"match": "compact"})["summary_prompt"]
    assert declaration_of({"arm": "other"})["role"] == "candidate"


def test_no_module_outside_policies_compares_an_arm_name():
    import re

    pattern = re.compile(r"""(==|!=|\bin\b)\s*\(?\s*["'](full|nlatest|compact|none|trim|mask|condenser)["']"""
                         r"""|["'](full|nlatest|compact)["']\s*(==|!=|\bin\b)\s*\(?\s*\w*\.?arm""")
    offenders = []
    for path in (PROJECT / "src" / "bench").rglob("*.py"):
        if "policies" in path.parts:
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if pattern.search(line) and "arm" in line:
                offenders.append(f"{path.relative_to(PROJECT)}:{number}: {line.strip()}")
    assert not offenders, offenders


# ---- a throwaway arm: its module and its YAML, nothing else
def test_a_throwaway_arm_touches_only_its_module_and_yaml(tmp_path):
    (tmp_path / "throwaway_arm.py").write_text(textwrap.dedent('''
        from dataclasses import dataclass, field
        from typing import ClassVar
        from bench.policies import PolicyContext, clean_start, make_view

        @dataclass
        class LastSix:
            name: str = "lastsix"
            calls_model: ClassVar[bool] = False
            uses: ClassVar[frozenset] = frozenset()
            order: ClassVar[int] = 12
            context: PolicyContext = field(default_factory=PolicyContext, repr=False)

            def __call__(self, case):
                kept = case.messages[clean_start(case.messages, len(case.messages) - 6):]
                return make_view(case, self.name, kept, self.context.counter)
    '''))
    conf = tmp_path / "extra_conf" / "arm"
    conf.mkdir(parents=True)
    (conf / "lastsix.yaml").write_text("_target_: throwaway_arm.LastSix\nname: lastsix  # arm label\n")
    env = {**{k: v for k, v in os.environ.items() if k != "HYDRA_FULL_ERROR"}, "PYTHONPATH": str(tmp_path)}
    sweep = tmp_path / "sweep"
    done = subprocess.run([sys.executable, "-m", "bench.main", "-m", "arm=full,lastsix", "dataset.limit=3",
                           f"hydra.searchpath=[file://{tmp_path / 'extra_conf'}]", f"hydra.sweep.dir={sweep}"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    (job,) = [p for p in sweep.iterdir() if "lastsix" in p.name and (p / "run.json").exists()]
    run = json.loads((job / "run.json").read_text())
    assert run["policy"] == {"name": "lastsix", "role": "candidate", "order": 12, "summary_prompt": False,
                             "mechanisms": False, "summarizer": None, "tokenizer": True, "stand_in_summary": False}
    assert run["prompt_hash"] is None
    metrics = json.loads((job / "metrics.json").read_text())
    assert metrics["accuracy_relative_to_full"] is not None  # scored against the reference, reused
    assert (job / "reference_scores.jsonl").exists()
    views = [json.loads(line) for line in (job / "views.jsonl").read_text().splitlines()]
    assert views and all(v["arm"] == "lastsix" and v["kept_messages"] <= 6 for v in views)
    report = (sweep / "report" / "report.md").read_text()
    full_row = next(i for i, ln in enumerate(report.splitlines()) if "arm=full" in ln and ln.startswith("|"))
    ours = next(i for i, ln in enumerate(report.splitlines()) if "arm=lastsix" in ln and ln.startswith("|"))
    assert full_row < ours  # ordered by the declared order, after the reference


# ---- the study
def test_experiment_peers_composes_every_arm():
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose("config", overrides=["+experiment=peers"], return_hydra_config=True)
    arms = [a.strip() for a in str(cfg.hydra.sweeper.params["+experiment/arm"]).split(",")]
    assert arms == ["full", "none", "nlatest", "trim", "mask", "context_edit", "compact", "lc_summary", "condenser",
                    "inspect_edit", "inspect_trim", "inspect_summary"]
    for arm in arms:
        job = _compose("+experiment=peers", f"+experiment/arm={arm}")
        assert job.arm.name == arm
        assert callable(build_policy(job, COUNTER))


@pytest.mark.slow  # seven offline jobs; .ci/run runs it
def test_peers_multirun_reports_every_arm_beside_none(tmp_path):
    sweep = tmp_path / "sweep"
    done = _bench(PROJECT, "-m", "+experiment=peers", "dataset.limit=2", f"hydra.sweep.dir={sweep}",
                  f"cache.path={tmp_path / 'cache.sqlite'}")
    assert done.returncode == 0, done.stderr[-3000:]
    import pandas as pd

    configs = pd.read_csv(sweep / "report" / "configs.csv")
    assert set(configs["arm"]) == {"full", "none", "nlatest", "trim", "mask", "context_edit", "compact", "lc_summary",
                                   "condenser", "inspect_edit", "inspect_trim", "inspect_summary"}
    none = configs[configs["arm"] == "none"].iloc[0]
    full = configs[configs["arm"] == "full"].iloc[0]
    assert full["accuracy_above_none.mean"] == pytest.approx(full["accuracy.mean"] - none["accuracy.mean"])
    assert "above none" in (sweep / "report" / "report.md").read_text()


def test_the_readmes_own_policy_example_runs_as_written(tmp_path, real_cases):
    """README "Your own policy": its module, saved as written, is a valid custom arm on real cases."""
    readme = (PROJECT / "README.md").read_text(encoding="utf-8")
    section = readme.split("### Your own policy", 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    (tmp_path / "mypolicies.py").write_text(code)
    sys.path.insert(0, str(tmp_path))
    try:
        arm = CustomPolicy(policy="mypolicies:task_and_last_ten", context=PolicyContext(counter=COUNTER))
        for case in real_cases:
            view = arm(case)
            assert not view_problems(view.messages), case.case_id
            assert view.messages[0] == case.messages[0] and len(view.messages) <= 11  # the task + ten at most
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("mypolicies", None)


# ---- context_edit: LangChain's ContextEditingMiddleware with ClearToolUsesEdit, the library itself
def _direct(messages, **edit):
    """The middleware applied directly, as a LangChain agent's model call would: what the model is sent."""
    from langchain.agents.middleware import ClearToolUsesEdit, ContextEditingMiddleware, ModelRequest, ModelResponse
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel

    sent = []

    def handler(request):
        sent.append(list(request.messages))
        return ModelResponse(result=[AIMessage(content="ok")])

    middleware = ContextEditingMiddleware(edits=[ClearToolUsesEdit(**edit)], token_counter=COUNTER.count_messages)
    middleware.wrap_model_call(ModelRequest(model=GenericFakeChatModel(messages=iter(())), messages=list(messages)),
                               handler)
    return sent[0]


@pytest.mark.parametrize("settings", [
    {},  # LangChain's defaults: 100k trigger, nothing to do on these histories
    {"trigger": 2000, "keep": 3},
    {"trigger": 1000, "keep": 1, "clear_at_least": 3000, "placeholder": "[gone]"},
    {"trigger": 500, "keep": 0, "exclude_tools": ["execute_bash"], "clear_tool_inputs": True},
])
def test_context_edit_views_equal_the_middleware_applied_directly(real_cases, settings):
    from bench.policies.context_edit import LangChainContextEdit

    arm = LangChainContextEdit(context=PolicyContext(counter=COUNTER), **settings)
    edit = {"trigger": 100_000, "keep": 3, "clear_at_least": 0, "placeholder": "[cleared]", **settings}
    edit["exclude_tools"] = tuple(edit.get("exclude_tools", ()))
    cleared = 0
    for case in real_cases:
        view = arm(case)
        assert view.messages == _direct(case.messages, **edit)
        assert not view_problems(view.messages)
        cleared += view.info["results_cleared"]
        # what the edit did not touch is the case's own message object (views record provenance)
        assert all(m is o for m, o in zip(view.messages, case.messages, strict=True)
                   if not (m.response_metadata or {}).get("context_editing"))
    assert (cleared == 0) == (not settings)


def test_context_edit_at_a_budget_is_the_middleware_with_the_budgets_trigger(real_cases):
    from bench.policies.context_edit import LangChainContextEdit

    arm = LangChainContextEdit(budget=0.5, context=PolicyContext(counter=COUNTER))
    checked = 0
    for case in real_cases:
        view = arm(case)
        full = COUNTER.count_messages(case.messages)
        target = int(0.5 * full)
        assert view.budget["target_tokens"] == target and view.kept_tokens <= target
        if view.info["steps_dropped"] == 0:  # clearing alone reached the budget: exactly the library's view
            assert view.messages == _direct(case.messages, trigger=target, clear_at_least=full - target, keep=3)
            checked += 1
    assert checked >= len(real_cases) // 2


@pytest.mark.parametrize("override, message", [
    ("arm.keep=-1", "arm.keep must be >= 0"),
    ("arm.exclude_tools=bash", "arm.exclude_tools: expected a list of tool names"),
    ("arm.budget=0", "arm.budget must be > 0"),
])
def test_context_edit_settings_are_checked_in_one_line(override, message):
    with pytest.raises(ConfigError, match=message):
        build_policy(_compose("arm=context_edit", override), COUNTER)
