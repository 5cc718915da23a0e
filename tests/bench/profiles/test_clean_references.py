"""Clean references (issue 17, item 3): every output marker a profile knows is stripped from
references wherever it sits, one test per marker on real rows.

Real rows: the 15 OpenHands runs of ``tests/data/real/dev.parquet`` and the shipped coding
sample. The echoed command (86 dev results open with it) is tested on them; neither has
``[Command exited with code N]`` or a prompt line at the start of a result (the shell-only
coding runs of issue 17 do): those are tested on a real dev result with the decoration added.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from omegaconf import OmegaConf

from bench.data.selection import load_cases
from bench.extract.history import tool_events
from bench.profiles import OPENHANDS
from bench.questions import add_questions
from bench.store.schema import Case
from bench.text.tokens import TokenCounter

from paths import DEV_PARQUET

COUNTER = TokenCounter()
# Each marker the OpenHands profile knows, as it shows in a recorded result (multiline search).
MARKERS = {
    "observation_prefix": r"\A\s*OBSERVATION:",
    "python_interpreter": r"\[Python [Ii]nterpreter: [^\]\n]*\]",
    "working_directory": r"\[Current working directory: [^\]\n]*\]",
    "command_finished": r"\[Command finished with exit code -?\d+\]",
    "command_completed": r"\[The command completed with exit code -?\d+\.\]",
    "ansi_colour": r"\x1b\[[0-9;?]*[A-Za-z]",
    "trailing_prompt": r"^[\w.-]+@[\w.-]+:[^\n]*[#$] *$",
}
REAL = tuple(MARKERS)


def _load(cfg: dict[str, Any]) -> list[Case]:
    return load_cases(OmegaConf.create({**cfg, "filters": {}}), COUNTER).cases


@pytest.fixture(scope="module")
def real_cases() -> list[Case]:
    return (_load({"source": "local", "path": str(DEV_PARQUET), "profile": "openhands"})
            + _load({"source": "sample", "profile": "openhands"}))


def _leaves(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [s for v in value.values() for s in _leaves(v)]
    if isinstance(value, list):
        return [s for v in value for s in _leaves(v)]
    return [str(value)] if value is not None else []


@pytest.mark.parametrize("marker", REAL)
def test_marker_of_real_results_is_stripped(real_cases: list[Case], marker: str) -> None:
    pattern = re.compile(MARKERS[marker], re.M)
    found = 0
    for case in real_cases:
        for event in tool_events(case.messages, case.profile):
            if event.raw and pattern.search(event.raw):
                found += 1
                assert not pattern.search(event.output or ""), (case.case_id, marker, event.output[-200:])
    assert found, f"no real result carries {marker}"  # the test reads real decoration


def test_no_reference_carries_a_marker(real_cases: list[Case]) -> None:
    patterns = [re.compile(p, re.M) for p in MARKERS.values()]
    asked = 0
    for case in real_cases:
        for question in case.questions:
            for text in _leaves(question.reference):
                asked += 1
                assert not any(p.search(text) for p in patterns), (question.qid, text[-200:])
    assert asked


def test_completed_marker_left_the_real_reference(real_cases: list[Case]) -> None:
    # ponyc's listing: its tool_output reference ended with "[The command completed with exit code 0.]"
    case = next(c for c in real_cases if c.case_id == "ponylang__ponyc-4588@7")
    raw = [e.raw for e in tool_events(case.messages, case.profile) if e.raw and "The command completed" in e.raw]
    assert raw
    for question in case.questions:
        assert all("command completed" not in s for s in _leaves(question.reference)), question.qid


def test_trailing_prompt_left_the_real_reference(real_cases: list[Case]) -> None:
    case = next(c for c in real_cases if c.case_id == "python__mypy-10308@0")
    reference = next(q.reference for q in case.questions if q.type == "tool_output")
    assert reference.endswith("res: List[Constraint],")  # the grep hit, without "root@openhands-workspace:... #"


def _fold(text: str) -> str:
    return " ".join(text.split())


def test_echoed_command_of_real_results_is_stripped(real_cases: list[Case]) -> None:
    found = 0
    for case in real_cases:
        for event in tool_events(case.messages, case.profile):
            command = _fold(OPENHANDS.command_of(event.args))
            if not (OPENHANDS.is_shell(event.name) and event.raw and command):
                continue
            first = OPENHANDS.clean(event.raw).lstrip("\n").split("\n", 1)[0]
            if _fold(first) == command:
                found += 1
                assert _fold((event.output or "").lstrip("\n").split("\n", 1)[0]) != command, case.case_id
    assert found >= 50


def _real_shell_result(cases: list[Case]) -> tuple[str, str]:
    """A real dev shell call (command, recorded result without prefix or echo), short clean output."""
    for case in cases:
        for event in tool_events(case.messages, case.profile):
            raw = event.raw or ""
            if OPENHANDS.is_shell(event.name) and event.output and 20 < len(event.output) < 300 \
                    and "\n" not in OPENHANDS.command_of(event.args) and "OBSERVATION" not in raw \
                    and OPENHANDS.clean(raw) == event.output:
                return OPENHANDS.command_of(event.args), raw
    raise AssertionError("no real shell result")


@pytest.mark.parametrize("decoration", ["echoed_command", "leading_prompt", "prompt_and_echo", "exited_marker"])
def test_decoration_at_the_start_of_a_real_shell_result_is_stripped(real_cases: list[Case], decoration: str) -> None:
    command, raw = _real_shell_result(real_cases)
    args = {"command": command}
    clean = OPENHANDS.clean_result(raw, "execute_bash", args)
    decorated = {
        "echoed_command": f"{command}\n{raw}",
        "leading_prompt": f"root@runtime-1:/testbed# {command}\n{raw}",
        "prompt_and_echo": f"(testbed) root@runtime-1:/testbed$ \n{command}\n{raw}",
        "exited_marker": f"{raw}\n[Command exited with code 0]",
    }[decoration]
    assert OPENHANDS.clean_result(decorated, "execute_bash", args) == clean
    # the same first line is output, not an echo, for a tool that is not a shell
    assert OPENHANDS.clean_result(f"{command}\n{raw}", "str_replace_editor", args).startswith(command)
    # and a reference built from the decorated result is the clean output
    call = {"name": "execute_bash", "args": args, "id": "c1", "type": "tool_call"}
    history = [HumanMessage("go"), AIMessage(content="", tool_calls=[call]),
               ToolMessage(content=decorated, tool_call_id="c1", name="execute_bash")]
    case = Case(case_id="c", instance_id="i", repo="r", source_row=0, trajectory_id="t", system_prompt="",
                messages=history, tools=[], model_patch="", repo_root="/repo")
    add_questions(case, types=["tool_output"])
    assert [q.reference for q in case.questions] == [clean]


def test_an_output_line_equal_to_the_command_elsewhere_stays() -> None:
    raw = "first line\necho hi\n[Command finished with exit code 0]"
    assert OPENHANDS.clean_result(raw, "execute_bash", {"command": "echo hi"}) == "first line\necho hi"
