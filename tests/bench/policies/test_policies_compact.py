"""The compact arm (spec 2.3) on small hand-built histories: every rule of every mechanism.

    uv run pytest tests/bench/policies/test_policies_compact.py
"""

from __future__ import annotations

import random
import re
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from bench.answering.evidence import evidence_flags
from bench.answering.evidence_reader import EvidenceReader
from bench.config.arms import build_policy
from bench.policies import CompactPolicy, ExtractiveSummarizer, PolicyContext, steps, view_problems
from bench.policies.compact import command_key, micro_compact_targets, result_failed
from bench.policies.summarize import EXTRACTIVE_LABEL
from bench.profiles import OPENHANDS
from bench.questions import add_questions
from bench.store.schema import Case, Question
from bench.text.content import content_text
from bench.text.formats import PLACEHOLDER, is_placeholder, placeholder_handle
from bench.text.tokens import TokenCounter

from builders import random_history
from paths import CONF_DIR

CONF = CONF_DIR
COUNTER = TokenCounter()
BIG = "line of output\n" * 40  # 600 characters: over micro_compact's 500
SMALL = "ok"


def call(call_id: str, command: str) -> dict[str, Any]:
    return {"name": "execute_bash", "args": {"command": command}, "id": call_id, "type": "tool_call"}


def bash(call_id: str, command: str, output: str, code: int = 0, text: str = "") -> list[BaseMessage]:
    return [AIMessage(content=text, tool_calls=[call(call_id, command)]),
            ToolMessage(content=f"{output}\n[Command finished with exit code {code}]", tool_call_id=call_id,
                        name="execute_bash")]


def edit(call_id: str, path: str, reply: str, command: str = "str_replace") -> list[BaseMessage]:
    args = {"command": command, "path": path, "old_str": "a", "new_str": "b"}
    return [AIMessage(content="", tool_calls=[{"name": "str_replace_editor", "args": args, "id": call_id,
                                               "type": "tool_call"}]),
            ToolMessage(content=reply, tool_call_id=call_id, name="str_replace_editor")]


def results(n: int, prefix: str, output: str = BIG) -> list[BaseMessage]:
    out: list[BaseMessage] = []
    for i in range(n):
        out += bash(f"{prefix}{i}", f"cat {prefix}{i}.txt", f"{prefix}{i}\n{output}")
    return out


def make_case(messages: list[BaseMessage], questions: list[Question] | None = None, case_id: str = "c") -> Case:
    return Case(case_id=case_id, instance_id="i", repo="r", source_row=0, trajectory_id="t", system_prompt="",
                messages=messages, tools=[], model_patch="", repo_root="/repo", questions=questions or [])


def policy(mechanism: dict | None = None, summarizer=None, prompt_name: str = "sre", **kw) -> CompactPolicy:
    context = PolicyContext(counter=COUNTER, mechanism=mechanism or {}, summarizer=summarizer,
                            prompt_name=prompt_name)
    return CompactPolicy(context=context, **kw)


NO_AUTO = {"enabled": False}
NO_MICRO = {"enabled": False}


def cleared(messages: list[BaseMessage]) -> list[str]:
    """Call ids of results shown as placeholders."""
    return [m.tool_call_id for m in messages if isinstance(m, ToolMessage) and is_placeholder(m.content)]


class Recorder:
    """A summarizer that records what it was asked to summarize."""

    name = "recorder"

    def __init__(self) -> None:
        self.inputs: list[list[BaseMessage]] = []
        self.prompts: list[str] = []

    def summarize(self, messages, prompt, profile=None):
        self.inputs.append(list(messages))
        self.prompts.append(prompt)
        return f"summary #{len(self.inputs)}", {"model": self.name}


# --- micro_compact -------------------------------------------------------------------


def test_micro_compact_at_question_keeps_newest_five_large_results() -> None:
    history = [HumanMessage("go"), *results(8, "r")]
    view = policy(auto_compact=NO_AUTO)(make_case(history))
    assert cleared(view.messages) == ["r0", "r1", "r2"]
    assert [m.content for m in view.messages if is_placeholder(m.content)] == [PLACEHOLDER] * 3
    assert view.info["micro_compact"] == {"replaced_during_replay": 0, "replaced_at_question": 3}
    assert view.summary is None and view.summarizer_calls == 0


def test_micro_compact_character_threshold() -> None:
    at_limit = "x" * (500 - len("\n[Command finished with exit code 0]"))
    history = [HumanMessage("go"), *bash("a", "cmd a", at_limit), *bash("b", "cmd b", at_limit + "y"),
               *bash("s", "cmd s", SMALL), *results(5, "r")]
    assert len(history[2].content) == 500 and len(history[4].content) == 501
    view = policy(auto_compact=NO_AUTO)(make_case(history))
    assert cleared(view.messages) == ["b"]  # longer than 500 only; small results never


def test_micro_compact_window_is_max_of_five_and_current_turn() -> None:
    # Turn 1: 3 large results. Turn 2: 7 large results, then the call under test.
    turn1, turn2 = [HumanMessage("one"), *results(3, "a")], [HumanMessage("two"), *results(7, "b")]
    history = [*turn1, *turn2, AIMessage("x")]
    # The current turn holds 7 results: the window is 7, so every turn-1 result is cleared
    # and no turn-2 result is (results of the current turn are never cleared).
    targets = micro_compact_targets(history[:-1], new_turn=False)
    assert [history[i].tool_call_id for i in targets] == ["a0", "a1", "a2"]
    # With 2 results in the current turn the window is 5: all of turn 1 stays.
    early = [*turn1, *turn2[:5]]
    assert micro_compact_targets(early, new_turn=False) == []
    # A third result in the current turn pushes the oldest turn-1 result out of the window.
    three = [*turn1, *turn2[:7]]
    assert [three[i].tool_call_id for i in micro_compact_targets(three, new_turn=False)] == ["a0"]
    # When the question opens a new turn every result is old: the newest 5 stay.
    new_turn = micro_compact_targets(history, new_turn=True)
    assert [history[i].tool_call_id for i in new_turn] == ["a0", "a1", "a2", "b0", "b1"]
    # Thresholds come from config.
    assert micro_compact_targets(history, new_turn=True, keep_recent=9) == new_turn[:1]
    assert micro_compact_targets(history, new_turn=True, min_chars=10_000) == []


def test_micro_compact_replay_clears_during_the_trajectory_and_persists() -> None:
    history = [HumanMessage("one"), *results(6, "a"), HumanMessage("two"), *bash("z", "ls", SMALL),
               AIMessage("done")]
    view = policy(auto_compact=NO_AUTO)(make_case(history))
    # At the calls of turn two, the turn-1 results outside the newest 5 were cleared already.
    assert view.info["micro_compact"]["replaced_during_replay"] >= 1
    assert cleared(view.messages) == ["a0", "a1"]


def test_replay_per_call_equals_the_rule_at_question_time() -> None:
    rng = random.Random(3)
    for _ in range(150):
        history = random_history(rng)
        view = policy(auto_compact=NO_AUTO)(make_case(history))
        once = {history[i].tool_call_id for i in micro_compact_targets(history, new_turn=True)}
        assert set(cleared(view.messages)) == once
        assert len(view.messages) == len(history)


# --- auto_compact --------------------------------------------------------------------


def test_forced_auto_compact_summarizes_the_whole_history() -> None:
    history = [HumanMessage("please fix"), *results(7, "r")]
    recorder = Recorder()
    view = policy(summarizer=recorder)(make_case(history))
    assert len(view.messages) == 1 and isinstance(view.messages[0], HumanMessage)
    assert view.messages[0].content.endswith("summary #1") and view.summary == "summary #1"
    assert view.summarizer_calls == 1
    # The summarizer saw the micro-compacted history (the question is the last user message).
    assert len(recorder.inputs[0]) == len(history)
    assert cleared(recorder.inputs[0]) == ["r0", "r1"]
    assert view.info["auto_compact"]["fired_at_question"] is True


def test_threshold_honoured_when_not_forced() -> None:
    history = [HumanMessage("please fix"), *results(3, "r")]
    tokens = COUNTER.count_messages(history)
    below = policy(auto_compact={"force": False, "context_window": 10 * tokens})(make_case(history))
    assert below.summary is None and below.messages == history
    above = policy(auto_compact={"force": False, "context_window": tokens})(make_case(history))
    assert above.summary is not None and above.summarizer_calls == 1


def test_auto_compact_during_replay_keeps_the_last_user_message_verbatim() -> None:
    second = HumanMessage("now the second part, verbatim")
    history = [HumanMessage("first part"), *results(3, "a", SMALL * 300), second, *results(2, "b", SMALL),
               AIMessage("done")]
    recorder = Recorder()
    # The first turn alone sits at the threshold (not over it): the first compaction fires at the
    # second turn's first call, by the shipped rule.
    tokens = COUNTER.count_messages(history[: history.index(second)])
    view = policy(auto_compact={"force": False, "threshold": 1.0, "context_window": tokens},
                  micro_compact=NO_MICRO, summarizer=recorder)(make_case(history))
    assert view.info["auto_compact"]["fired_during_replay"] >= 1
    first_input = recorder.inputs[0]
    assert first_input == history[: history.index(second)]  # everything before the last user message
    assert second in view.messages or second in recorder.inputs[-1]
    assert not view_problems(view.messages)


def test_extractive_summary_is_labelled_and_fills_the_prompt_sections() -> None:
    history = [HumanMessage("please fix the parser"), *edit("e1", "/repo/src/parse.py", "The file was edited."),
               *bash("b1", "python run.py", "Traceback (most recent call last):\nValueError: bad", code=1)]
    view = policy(prompt_name="generic")(make_case(history))
    assert view.summary.startswith(EXTRACTIVE_LABEL)
    for heading in ("1. Goal:", "2. Progress So Far:", "3. Important Details:", "4. Open Questions and Next Steps:"):
        assert heading in view.summary
    assert "please fix the parser" in view.summary
    text, usage = ExtractiveSummarizer().summarize(history, "no headings here")
    assert "Files touched" in text and "/repo/src/parse.py" in text and "ValueError: bad" in text
    assert usage["calls"] == 1


# --- tail and stepcut ----------------------------------------------------------------


def _tail_history() -> list[BaseMessage]:
    pair = AIMessage(content="", tool_calls=[call("p", "cat big"), call("q", "echo small")])
    return [HumanMessage("go"), *results(4, "r", SMALL * 100), pair,
            ToolMessage(content=BIG * 4, tool_call_id="p", name="execute_bash"),
            ToolMessage(content="small", tool_call_id="q", name="execute_bash"),
            AIMessage("all done, the fix is in place")]


def test_message_cut_removes_leading_orphans_and_respects_the_budget() -> None:
    history = _tail_history()
    budget_fraction = (COUNTER.count_messages(history[-2:]) + 1) / COUNTER.count_messages(history)
    recorder = Recorder()
    view = policy({"tail": True, "tail_fraction": budget_fraction}, micro_compact=NO_MICRO,
                  summarizer=recorder)(make_case(history))
    tail = view.messages[1:]
    assert tail == history[-1:]  # the result of q was cut off from its call: removed
    assert view.info["tail"]["orphans_removed"] == 1 and view.info["tail"]["cut"] == "message"
    assert view.info["tail"]["tokens"] <= view.info["tail"]["budget_tokens"]
    # The head ends at the cut: the call keeps only the results before it, and stays valid.
    head = recorder.inputs[0]
    assert not view_problems(head)
    assert [c["id"] for c in head[-2].tool_calls] == ["p"] and head[-1].tool_call_id == "p"
    assert "most recent messages follow verbatim" in view.messages[0].content
    assert not view_problems(view.messages)


def test_stepcut_keeps_whole_steps_only() -> None:
    history = _tail_history()
    budget_fraction = (COUNTER.count_messages(history[-2:]) + 1) / COUNTER.count_messages(history)
    recorder = Recorder()
    view = policy({"stepcut": True, "tail_fraction": budget_fraction}, micro_compact=NO_MICRO,
                  summarizer=recorder)(make_case(history))
    assert view.messages[1:] == history[-1:]
    assert view.info["tail"]["orphans_removed"] == 0 and view.info["tail"]["cut"] == "step"
    assert recorder.inputs[0] == history[:-1]  # the whole step went to the summary


def test_tail_and_stepcut_budget_property() -> None:
    rng = random.Random(11)
    for _ in range(120):
        history = random_history(rng)
        case = make_case(history)
        fraction = rng.choice([0.0, 0.1, 0.2, 0.5, 1.0])
        for switches in ({"tail": True}, {"stepcut": True}, {"tail": True, "stepcut": True}):
            view = policy({**switches, "tail_fraction": fraction})(case)
            assert not view_problems(view.messages)
            tail = view.messages[1:] if view.summary is not None else view.messages  # no head: no summary
            info = view.info["tail"]
            assert info["tokens"] == COUNTER.count_messages(tail) <= info["budget_tokens"]
            assert not tail or not isinstance(tail[0], ToolMessage)
            if switches.get("stepcut"):
                # The tail is a run of whole steps of the stored history it was cut from.
                stored = policy({"tail": False}, auto_compact=NO_AUTO)(case).messages
                starts = {b for b, _ in steps(stored)}
                assert not tail or len(stored) - len(tail) in starts
                assert stored[len(stored) - len(tail):] == tail


# --- offload and verify --------------------------------------------------------------


HANDLE = re.compile(r"^[A-Za-z0-9_-]+$")


def test_offload_handles_only_for_stored_outputs() -> None:
    history = [HumanMessage("go"), *results(8, "r"), *bash("s", "echo hi", SMALL)]
    case = make_case(history)
    plain = policy({"tail": True, "tail_fraction": 1.0})(case)
    assert plain.store == {} and all(placeholder_handle(content_text(m.content)) is None for m in plain.messages)
    view = policy({"tail": True, "tail_fraction": 1.0, "offload": True})(case)
    placeholders = [m for m in view.messages if isinstance(m, ToolMessage) and is_placeholder(m.content)]
    assert placeholders
    originals = {m.tool_call_id: m.content for m in history if isinstance(m, ToolMessage)}
    for message in placeholders:
        handle = placeholder_handle(message.content)
        assert handle and HANDLE.match(handle) and "/" not in handle
        assert view.store[handle] == originals[message.tool_call_id]  # the recorded output, whole
    # Small outputs are not stored; every exposed handle is named in the view.
    assert originals["s"] not in view.store.values()
    text = "\n".join(content_text(m.content) for m in view.messages) + (view.summary or "")
    assert all(h in text for h in view.store)
    assert view.info["offload"]["stored"] >= len(view.store) > 0


def test_offload_large_outputs_summarized_away_are_cited_by_the_summary() -> None:
    history = [HumanMessage("go"), *results(3, "r")]  # within the newest 5: never cleared
    view = policy({"offload": True})(make_case(history))
    assert len(view.store) == 3 and all(h in view.summary for h in view.store)
    assert view.info["evidence_handles"] == {}


def test_handles_are_unique_per_case_and_arm_config() -> None:
    history = [HumanMessage("go"), *results(7, "r")]
    mech = {"tail": True, "tail_fraction": 1.0, "offload": True}
    a = set(policy(mech)(make_case(history)).store)
    b = set(policy(mech)(make_case(history, case_id="other")).store)
    c = set(policy({**mech, "collapse": True})(make_case(history)).store)
    d = set(policy(mech, prompt_name="generic")(make_case(history)).store)
    assert a and a == set(policy(mech)(make_case(history)).store)  # deterministic
    assert not a & b and not a & c and not a & d


def test_verify_sets_guidance_and_the_reader_opens_handles() -> None:
    history = [HumanMessage("go"), *bash("t", "pytest", "x\n" * 300 + "=== 3 failed, 5 passed in 0.1s ==="),
               *results(5, "r")]
    question = Question(qid="c:test_counts", type="test_counts", question="?",
                        reference={"passed": 5, "failed": 3}, evidence_keys=["=== 3 failed, 5 passed in 0.1s ==="],
                        evidence_messages=[1, 2], params={"command": "pytest", "ordinal": 1})
    case = make_case(history, [question])
    mech = {"tail": True, "tail_fraction": 1.0, "offload": True}
    no_verify = policy(mech)(case)
    assert no_verify.guidance is None
    view = policy({**mech, "verify": True})(case)
    assert view.guidance and "read_tool_output" in view.guidance
    answer = EvidenceReader().answer(case, view, question)
    assert answer.retrievals and '"failed": 3' in answer.answer
    assert policy({"verify": True})(case).guidance  # usable alone


# --- collapse ------------------------------------------------------------------------


def test_collapse_folds_a_settled_chain_into_the_final_attempt() -> None:
    history = [HumanMessage("go"), *bash("f1", "pytest tests/a.py -x", "ImportError: nope", code=1),
               *bash("f2", "pytest tests/a.py -q", "ImportError: still", code=2),
               *bash("ok", "pytest tests/a.py", "1 passed", text="try again"),
               *bash("n", "ls", SMALL)]
    view = policy({"collapse": True}, auto_compact=NO_AUTO)(make_case(history))
    ids = [m.tool_call_id for m in view.messages if isinstance(m, ToolMessage)]
    assert ids == ["ok", "n"]
    final = next(m for m in view.messages if isinstance(m, AIMessage) and m.tool_calls[0]["id"] == "ok")
    assert "2 earlier failed attempt(s)" in final.content and "ImportError: still" in final.content
    assert final.content.endswith("try again")
    assert view.info["collapse"] == {"chains": 1, "attempts_removed": 2, "messages_removed": 4}
    assert not view_problems(view.messages)
    stored = policy({"collapse": True, "offload": True}, auto_compact=NO_AUTO)(make_case(history))
    note = next(m for m in stored.messages if isinstance(m, AIMessage) and m.tool_calls[0]["id"] == "ok")
    assert len(stored.store) == 2 and all(f'handle="{h}"' in note.content for h in stored.store)
    assert sorted(stored.store.values()) == sorted(m.content for m in history[2:6:2])


def test_collapse_keeps_active_and_unrelated_chains() -> None:
    active = [HumanMessage("go"), *bash("f1", "make build", "error: x", code=1),
              *bash("f2", "make build", "error: y", code=1)]
    across_turns = [HumanMessage("go"), *bash("f1", "make build", "error", code=1), HumanMessage("again"),
                    *bash("ok", "make build", "done")]
    interrupted = [HumanMessage("go"), *bash("f1", "make build", "error", code=1),
                   *bash("x", "cat Makefile", "all:"), *bash("ok", "make build", "done")]
    other_target = [HumanMessage("go"), *bash("f1", "make build", "error", code=1),
                    *bash("ok", "make test", "done")]
    for history in (active, across_turns, interrupted, other_target):
        view = policy({"collapse": True}, auto_compact=NO_AUTO)(make_case(history))
        assert view.messages == history
        assert view.info["collapse"]["chains"] == 0
    editor = [HumanMessage("go"), *edit("e1", "/repo/a.py", "ERROR:\nNo replacement was performed, old_str ..."),
              *edit("e2", "/repo/a.py", "The file /repo/a.py has been edited.")]
    view = policy({"collapse": True}, auto_compact=NO_AUTO)(make_case(editor))
    assert [m.tool_call_id for m in view.messages if isinstance(m, ToolMessage)] == ["e2"]


def test_failure_and_command_key_rules() -> None:
    assert result_failed(OPENHANDS, "boom\n[Command finished with exit code 1]") is True
    assert result_failed(OPENHANDS, "fine\n[Command finished with exit code 0]") is False
    assert result_failed(OPENHANDS, "ERROR:\nInvalid `path` parameter") is True
    assert result_failed(OPENHANDS, "OBSERVATION:\nThe file x has been edited.") is False
    assert result_failed(OPENHANDS, PLACEHOLDER) is None
    assert command_key("cd /repo && FOO=1 python -m pytest tests/a.py -x") == ("python", "pytest")
    assert command_key("pytest -q tests/a.py") == command_key("pytest tests/a.py -vv")
    assert command_key("grep -n 'unterminated") == ("grep", "'unterminated")


# --- evidence flags ------------------------------------------------------------------


TRACEBACK = 'Traceback (most recent call last):\n  File "run.py", line 1, in <module>\n'


def test_evidence_flags_visible_and_recoverable() -> None:
    # the flags are the offline reader's (bench.answering.evidence): built by the question type, not by hand
    key = "ValueError: the evidence line"
    history = [HumanMessage("go"), *bash("e", "python run.py", "x\n" * 300 + TRACEBACK + key, code=1),
               *results(6, "r")]
    case = add_questions(make_case(history), types=["first_error"])
    assert [q.qid for q in case.questions] == ["c:first_error"]
    mech = {"tail": True, "tail_fraction": 1.0}
    gone = policy(mech)(case)
    assert evidence_flags(case, gone) == {"c:first_error": {"visible": False, "recoverable": False}}
    stored = policy({**mech, "offload": True})(case)
    assert evidence_flags(case, stored) == {"c:first_error": {"visible": False, "recoverable": True}}
    assert stored.info["evidence_handles"]["c:first_error"] == {"stored": True, "exposed": True}
    kept = policy(mech, micro_compact=NO_MICRO)(case)
    assert evidence_flags(case, kept) == {"c:first_error": {"visible": True, "recoverable": True}}


# --- config ---------------------------------------------------------------------------


def _compose(overrides: list[str]):
    from hydra import compose, initialize_config_dir

    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        return compose("config", overrides=overrides)


PRESETS = ["shipped", "tail", "stepcut", "offload", "collapse", "verify"]
SWITCHES = ["tail", "stepcut", "offload", "collapse", "verify"]


def test_presets_are_cumulative() -> None:
    for position, preset in enumerate(PRESETS):
        mech = _compose(["arm=compact", f"mechanism={preset}"]).mechanism
        assert mech.name == preset
        on = {s for s in SWITCHES if mech[s]}
        assert on == set(SWITCHES[:position])
        assert mech.tail_fraction == 0.2


@pytest.mark.parametrize("switch", SWITCHES)
def test_each_switch_works_alone(switch: str) -> None:
    cfg = _compose(["arm=compact", "mechanism=shipped", f"mechanism.{switch}=true"])
    built = build_policy(cfg, COUNTER)
    view = built(make_case([HumanMessage("go"), *results(7, "r"),
                            *bash("f", "make", "error", code=1), *bash("g", "make", "done")]))
    assert {k for k, v in view.info["mechanism"].items() if v is True} == {switch}
    assert not view_problems(view.messages)


@pytest.mark.parametrize("prompt", ["sre", "generic", "hybrid", "hybrid_v2"])
@pytest.mark.parametrize("preset", PRESETS)
def test_every_prompt_and_preset_builds_and_runs(prompt: str, preset: str) -> None:
    cfg = _compose(["arm=compact", f"prompt={prompt}", f"mechanism={preset}"])
    built = build_policy(cfg, COUNTER)
    assert isinstance(built, CompactPolicy) and built.prompt == cfg.prompt.text and built.prompt_name == prompt
    view = built(make_case([HumanMessage("go"), *results(7, "r")]))
    assert view.arm == "compact" and view.summarizer_calls == 1 and not view_problems(view.messages)
    assert view.info["prompt"] == prompt and view.info["mechanism"]["name"] == preset


def test_arm_options_compose_and_build() -> None:
    from bench.policies import FullHistory, NLatest

    assert isinstance(build_policy(_compose(["arm=full"]), COUNTER), FullHistory)
    assert isinstance(build_policy(_compose(["arm=nlatest", "arm.n=10"]), COUNTER), NLatest)
    nested = _compose(["arm=compact", "arm.micro_compact.min_chars=900", "arm.auto_compact.force=false"])
    built = build_policy(nested, COUNTER)
    assert built.micro_compact.min_chars == 900 and built.auto_compact.force is False
    assert built.auto_compact.threshold_tokens == int(0.8 * 131072)
    with pytest.raises(Exception, match="n"):
        build_policy(_compose(["arm=nlatest"]), COUNTER)  # arm.n is required


def test_bad_values_fail_when_the_policy_is_built() -> None:
    from bench.config.checks import ConfigError

    with pytest.raises(ConfigError, match="mechanism.tail"):
        build_policy(_compose(["arm=compact", "mechanism.tail=maybe"]), COUNTER)
    with pytest.raises(ConfigError, match="arm.micro_compact.min_chars"):
        build_policy(_compose(["arm=compact", "arm.micro_compact.min_chars=lots"]), COUNTER)
    with pytest.raises(ValueError, match="tail_fraction"):
        build_policy(_compose(["arm=compact", "mechanism.tail_fraction=1.5"]), COUNTER)
    with pytest.raises(ValueError, match="unknown Mechanisms key"):
        CompactPolicy(context=PolicyContext(counter=COUNTER, mechanism={"offlaod": True}))
    with pytest.raises(Exception, match="offlaod"):
        _compose(["arm=compact", "mechanism.offlaod=true"])  # Hydra rejects unknown keys
