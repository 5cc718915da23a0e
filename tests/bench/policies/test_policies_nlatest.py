"""The nlatest arm (spec 2.2) on small hand-built histories: cuts, token guard, matched budget.

    uv run pytest tests/bench/policies/test_policies_nlatest.py
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from bench.config.arms import build_policy
from bench.policies import NLatest, PolicyContext, view_problems
from bench.store.schema import Case, Question, View
from bench.text.tokens import TokenCounter

from builders import random_history
from paths import CONF_DIR

CONF = CONF_DIR
COUNTER = TokenCounter()
CONTEXT = PolicyContext(counter=COUNTER)


def ai(*ids: str, text: str = "") -> AIMessage:
    return AIMessage(content=text, tool_calls=[
        {"name": "execute_bash", "args": {"command": f"echo {i}"}, "id": i, "type": "tool_call"} for i in ids])


def res(call_id: str, text: str | None = None) -> ToolMessage:
    return ToolMessage(content=text or f"output of {call_id}", tool_call_id=call_id, name="execute_bash")


def make_case(messages: list[BaseMessage], evidence: dict[str, list[int]] | None = None) -> Case:
    questions = [Question(qid=f"c:{name}", type="first_error", question="?", reference=None,
                          evidence_keys=[], evidence_messages=indices)
                 for name, indices in (evidence or {}).items()]
    return Case(case_id="c", instance_id="i", repo="r", source_row=0, trajectory_id="t", system_prompt="",
                messages=messages, tools=[], model_patch="", repo_root="/repo", questions=questions)


# H, A(a,b,c) Ta Tb Tc, A(d) Td, A(text)
PARALLEL = [HumanMessage("fix it"), ai("a", "b", "c"), res("a"), res("b"), res("c"), ai("d"), res("d"),
            AIMessage("done")]


def kept(view: View) -> list[BaseMessage]:
    return view.messages


def test_cut_inside_parallel_results_moves_toward_newer() -> None:
    view = NLatest(n=5, context=CONTEXT)(make_case(PARALLEL))  # would start at Tb
    assert kept(view) == PARALLEL[5:]
    assert view.info["boundary_moved"] == 2 and view.info["first_kept"] == 5
    assert not view_problems(view.messages)


def test_cut_at_the_call_keeps_all_its_results() -> None:
    view = NLatest(n=7, context=CONTEXT)(make_case(PARALLEL))  # starts exactly at A(a,b,c)
    assert kept(view) == PARALLEL[1:]
    assert view.info["boundary_moved"] == 0
    assert view.kept_messages == 7


def test_cut_right_after_the_call_drops_the_whole_exchange() -> None:
    view = NLatest(n=6, context=CONTEXT)(make_case(PARALLEL))  # starts at Ta: call is gone
    assert kept(view) == PARALLEL[5:]


def test_trailing_tool_group() -> None:
    history = [HumanMessage("go"), ai("a"), res("a"), ai("x", "y"), res("x"), res("y")]
    for n, expected in ((1, []), (2, []), (3, history[3:]), (4, history[3:]), (5, history[1:])):
        view = NLatest(n=n, context=CONTEXT)(make_case(history))
        assert kept(view) == expected, n
        assert not view_problems(view.messages)


def test_n_bounds() -> None:
    case = make_case(PARALLEL)
    assert kept(NLatest(n=0, context=CONTEXT)(case)) == []
    assert kept(NLatest(n=100, context=CONTEXT)(case)) == PARALLEL
    with pytest.raises(ValueError, match="arm.n"):
        NLatest(n=None, context=CONTEXT)
    with pytest.raises(ValueError):
        NLatest(n=-1, context=CONTEXT)


def test_token_guard_drops_oldest_whole_steps() -> None:
    history = [HumanMessage("go")]
    for i in range(6):
        history += [ai(f"c{i}"), res(f"c{i}", "x " * 50)]
    case = make_case(history)
    full = COUNTER.count_messages(history)
    step = COUNTER.count_messages(history[-2:])
    view = NLatest(n=100, max_tokens=3 * step + 1, context=CONTEXT)(case)
    assert kept(view) == history[-6:]
    assert view.kept_tokens <= 3 * step + 1 < full
    assert view.info["steps_dropped_by_tokens"] == 4  # the user message and three exchanges
    assert not view_problems(view.messages)
    tiny = NLatest(n=100, max_tokens=1, context=CONTEXT)(case)
    assert tiny.messages == [] and tiny.kept_tokens == 0


def test_in_kept_suffix_per_question() -> None:
    case = make_case(PARALLEL, evidence={"old": [1, 2], "new": [5, 6], "none": []})
    view = NLatest(n=3, context=CONTEXT)(case)
    assert view.info["in_kept_suffix"] == {"c:old": False, "c:new": True, "c:none": True}


@dataclass
class FixedBudget:
    """A stand-in for the matched arm: keeps ``tokens`` tokens of every case."""

    tokens: int
    name: str = "fixed"
    calls: list[str] = field(default_factory=list)

    def __call__(self, case: Case) -> View:
        self.calls.append(case.case_id)
        return View(case_id=case.case_id, arm=self.name, messages=[], kept_tokens=self.tokens,
                    full_messages=len(case.messages), full_tokens=0)


def test_match_keeps_latest_complete_exchanges_within_the_matched_tokens() -> None:
    history = [HumanMessage("go")]
    for i in range(5):
        history += [ai(f"c{i}", f"d{i}"), res(f"c{i}", "y " * 30), res(f"d{i}", "z " * 10)]
    case = make_case(history)
    for budget in range(0, COUNTER.count_messages(history) + 10, 17):
        view = NLatest(n=None, match="fixed", context=PolicyContext(counter=COUNTER, budget_policy=FixedBudget(budget)))(case)
        assert view.kept_tokens <= budget
        assert not view_problems(view.messages)
        first = view.info["first_kept"]
        assert view.messages == history[first:]
        # The latest exchanges that fit: one more (older) step would not.
        if first > 0:
            previous = max(i for i in range(first) if not isinstance(history[i], ToolMessage))
            assert COUNTER.count_messages(history[previous:]) > budget
        assert view.info["match"]["kept_tokens"] == budget


def test_match_with_n_applies_both_bounds() -> None:
    case = make_case(PARALLEL)
    view = NLatest(n=3, match="fixed", context=PolicyContext(counter=COUNTER, budget_policy=FixedBudget(10_000)))(case)
    assert kept(view) == PARALLEL[5:]


def test_property_every_cut_is_a_valid_suffix_of_at_most_n_messages() -> None:
    rng = random.Random(7)
    for _ in range(200):
        history = random_history(rng, max_steps=25, output_lengths=(2, 40, 80))
        case = make_case(history, evidence={"q": [rng.randrange(len(history))]})
        visible_before = False
        for n in range(0, len(history) + 2):
            view = NLatest(n=n, context=CONTEXT)(case)
            assert not view_problems(view.messages)
            assert len(view.messages) <= n
            assert view.messages == history[len(history) - len(view.messages):]
            visible = view.info["in_kept_suffix"]["c:q"]
            assert visible or not visible_before  # monotone in n
            visible_before = visible


def test_build_policy_match_composes_the_other_arm() -> None:
    from hydra import compose, initialize_config_dir

    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        cfg = compose("config", overrides=["arm=nlatest", "arm.match=compact", "mechanism=tail"])
    policy = build_policy(cfg, COUNTER)
    history = [HumanMessage("go")]
    for i in range(8):
        history += [ai(f"c{i}"), res(f"c{i}", f"line {i}\n" * 60)]
    case = make_case(history)
    view = policy(case)
    compact_view = policy.budget_policy(case)
    assert compact_view.arm == "compact" and compact_view.info["mechanism"]["tail"] is True
    assert view.info["match"] == {"arm": "compact", "kept_tokens": compact_view.kept_tokens,
                                  "kept_messages": compact_view.kept_messages, "summarizer_calls": 1}
    assert view.kept_tokens <= compact_view.kept_tokens
    assert view.summarizer_calls == 0 and view.summary is None


def test_build_policy_rejects_unknown_match() -> None:
    from hydra import compose, initialize_config_dir

    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        cfg = compose("config", overrides=["arm=nlatest", "arm.n=5", "arm.match=nosuch"])
        with pytest.raises(ValueError, match="no such arm"):
            build_policy(cfg, COUNTER)
