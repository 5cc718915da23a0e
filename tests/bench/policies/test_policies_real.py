"""Property checks of the history policies on real OpenHands trajectories.

The 15 runs of ``tests/data/real/dev.parquet`` (a copy of ../shared/data/real/dev.parquet,
README beside it), so a fresh clone runs them.

    uv run pytest tests/bench/policies/test_policies_real.py
"""

from __future__ import annotations

import pytest
from langchain_core.messages import ToolMessage
from omegaconf import OmegaConf

from bench.answering.evidence import evidence_flags
from bench.policies import CompactPolicy, NLatest, PolicyContext, view_problems
from bench.policies.compact import micro_compact_targets
from bench.store.schema import Case
from bench.text.content import content_text
from bench.text.formats import is_placeholder, placeholder_handle
from bench.text.tokens import TokenCounter

from paths import DEV_PARQUET

COUNTER = TokenCounter()
PRESETS = {
    "shipped": {},
    "tail": {"tail": True},
    "stepcut": {"tail": True, "stepcut": True},
    "offload": {"tail": True, "stepcut": True, "offload": True},
    "collapse": {"tail": True, "stepcut": True, "offload": True, "collapse": True},
    "verify": {"tail": True, "stepcut": True, "offload": True, "collapse": True, "verify": True},
}


@pytest.fixture(scope="module")
def cases() -> list[Case]:
    from bench.data.selection import load_cases

    assert DEV_PARQUET.exists(), f"missing test data {DEV_PARQUET}"
    cfg = OmegaConf.create({"source": "local", "path": str(DEV_PARQUET), "filters": {}})
    selection = load_cases(cfg, COUNTER)
    assert selection.cases, "dev.parquet yielded no case"
    return selection.cases


def test_nlatest_views_are_valid_suffixes_and_evidence_is_monotone(cases: list[Case]) -> None:
    for case in cases:
        previous: dict[str, dict[str, bool]] | None = None
        previous_in_suffix: dict[str, bool] | None = None
        for n in (10, 20, 40):
            view = NLatest(n=n, context=PolicyContext(counter=COUNTER))(case)
            assert not view_problems(view.messages), (case.case_id, n)
            assert len(view.messages) <= n
            assert view.messages == case.messages[len(case.messages) - len(view.messages):]
            assert view.kept_tokens == COUNTER.count_messages(view.messages)
            flags = evidence_flags(case, view)
            in_suffix = view.info["in_kept_suffix"]
            if previous is not None:
                for qid, flag in previous.items():
                    assert not flag["visible"] or flags[qid]["visible"], (case.case_id, qid, n)
                    assert not previous_in_suffix[qid] or in_suffix[qid], (case.case_id, qid, n)
            for qid, inside in in_suffix.items():
                assert not inside or flags[qid]["visible"], (case.case_id, qid, n)  # kept => visible
            previous, previous_in_suffix = flags, in_suffix


@pytest.mark.parametrize("preset", list(PRESETS))
def test_compact_views_are_valid_with_every_preset(cases: list[Case], preset: str) -> None:
    policy = CompactPolicy(context=PolicyContext(counter=COUNTER, mechanism={"name": preset, **PRESETS[preset]}))
    for case in cases:
        view = policy(case)
        assert not view_problems(view.messages), case.case_id
        assert view.summary and view.summarizer_calls == 1
        assert view.kept_tokens < view.full_tokens
        tail = view.info["tail"]
        if tail is not None:
            assert tail["tokens"] <= tail["budget_tokens"]
            assert tail["messages"] == len(view.messages) - 1
        for message in view.messages:  # every handle in the view opens a stored output
            handle = placeholder_handle(content_text(message.content))
            if handle:
                assert handle in view.store
        recorded = {m.content for m in case.messages if isinstance(m, ToolMessage)}  # call ids may repeat
        assert set(view.store.values()) <= recorded
        assert bool(view.store) == bool(PRESETS[preset].get("offload"))


def test_replay_per_call_equals_the_rule_at_question_time(cases: list[Case]) -> None:
    policy = CompactPolicy(auto_compact={"enabled": False}, context=PolicyContext(counter=COUNTER))
    for case in cases:
        view = policy(case)
        cleared = {m.tool_call_id for m in view.messages if isinstance(m, ToolMessage) and is_placeholder(m.content)}
        rule = {case.messages[i].tool_call_id for i in micro_compact_targets(case.messages, new_turn=True)}
        assert cleared == rule, case.case_id
