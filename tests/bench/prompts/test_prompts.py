"""The summary prompts: complete, general-purpose, and free of the benchmark's question types.

A prompt that asks for the very things the benchmark asks about (which files changed,
the first edit, test pass/fail counts, the exception a run printed) would measure the
prompt's knowledge of the test, not compaction. These patterns catch such wording; they
are checked to catch the benchmark's own questions.

    uv run pytest tests/bench/prompts/test_prompts.py
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bench.policies.compact import DEFAULT_GUIDANCE, DEFAULT_OFFLOAD_NOTE
from bench.policies.summarize import EXTRACTIVE_LABEL, PROMPT_NAMES, load_prompt, prompt_sections
from bench.questions import question_text

from paths import CONF_DIR

CONF = CONF_DIR

QUESTION_TYPE_PATTERNS = {
    "files_changed": re.compile(
        r"\bwhich\s+files\b|\bfiles?\s+(?:that\s+)?(?:you\s+|were\s+|have\s+been\s+|has\s+been\s+)?"
        r"(?:changed|modified|edited)\b|\b(?:changed|modified|edited)\s+files?\b|files[\s_-]changed",
        re.I),
    "first_edit": re.compile(
        r"\bfirst\s+(?:\w+\s+)?(?:edit|change|modification|patch)(?:es|s)?\b|first[\s_-]edit", re.I),
    "test_counts": re.compile(
        r"\bhow\s+many\s+tests\b|\b(?:tests?|pass(?:ed|ing)?|fail(?:ed|ing|ures?)?)\s+(?:counts?|tall(?:y|ies))\b"
        r"|\bnumbers?\s+of\s+(?:tests|passed|failed|passing|failing|failures)\b"
        r"|\b(?:passed|passing)\b[^.\n]{0,20}\b(?:failed|failing)\b|test[\s_-]counts?", re.I),
    "first_error": re.compile(
        r"\bfirst\s+(?:\w+\s+)?(?:error|exception|failure|traceback)s?\b"
        r"|\bexceptions?\s*\(?\s*(?:types?|messages?|names?|class(?:es)?)\b"
        r"|\b(?:exact|verbatim)\s+(?:\w+\s+)?(?:exceptions?|tracebacks?|error\s+messages?)\b"
        r"|\bwhat\s+exception\b|first[\s_-]error", re.I),
    "run_ordinal": re.compile(
        r"\b(?:k|n)-?th\s+(?:run|time)\b|\b\d+(?:st|nd|rd|th)\s+(?:run|time\s+you\s+ran)\b|\brun\s+ordinals?\b",
        re.I),
}


def question_type_mentions(text: str) -> list[str]:
    found = []
    for name, pattern in QUESTION_TYPE_PATTERNS.items():
        found += [f"{name}: {m.group(0)!r}" for m in pattern.finditer(text)]
    return found


def test_the_patterns_catch_the_benchmarks_own_questions() -> None:
    questions = [
        question_text("files_changed", {}),
        question_text("first_edit", {}),
        question_text("test_counts", {"command": "pytest", "ordinal": 2}),
        question_text("first_error", {"command": "python x.py", "ordinal": 1}),
    ]
    for text in questions:
        assert question_type_mentions(text), text
    for phrase in ("List the modified files.", "Record the first edit you made.", "the test counts of each run",
                   "how many tests passed and failed", "number of failing tests", "keep 12 passed / 3 failed",
                   "the exception type and message", "quote the exact error message", "the first traceback",
                   "the 3rd run of the command", "the k-th time", "files you changed"):
        assert question_type_mentions(phrase), phrase


def test_the_patterns_leave_general_wording_alone() -> None:
    for phrase in ("Files and Code Sections: files examined, created or updated", "Errors and Fixes",
                   "commands run and what they showed", "the test suite", "first, review the conversation"):
        assert not question_type_mentions(phrase), phrase


@pytest.mark.parametrize("name", PROMPT_NAMES)
def test_prompts_do_not_mention_question_types(name: str) -> None:
    assert question_type_mentions(load_prompt(name)) == []


def test_mechanism_texts_do_not_mention_question_types() -> None:
    from omegaconf import OmegaConf

    shipped = OmegaConf.load(CONF / "mechanism" / "shipped.yaml")
    for text in (DEFAULT_GUIDANCE, DEFAULT_OFFLOAD_NOTE, shipped.guidance, shipped.offload_note, EXTRACTIVE_LABEL):
        assert question_type_mentions(text) == []
    assert " ".join(shipped.guidance.split()) == DEFAULT_GUIDANCE
    assert " ".join(shipped.offload_note.split()) == DEFAULT_OFFLOAD_NOTE


@pytest.mark.parametrize("name", PROMPT_NAMES)
def test_prompts_are_complete(name: str) -> None:
    text = load_prompt(name)
    sections = prompt_sections(text)
    assert len(sections) >= 4 and len(set(sections)) == len(sections)
    numbers = [int(n) for n in re.findall(r"^(\d+)\. [A-Z][^:\n]+:", text, re.M)]
    assert numbers == list(range(1, len(sections) + 1))  # numbered in order, none skipped
    assert len(text.split()) > 100 and text.endswith("\n")
    assert "summary" in text.lower()


def test_sre_prompt_has_nine_sections() -> None:
    sections = prompt_sections(load_prompt("sre"))
    assert len(sections) == 9
    assert sections[0] == "Primary Request and Intent" and sections[-1] == "Current Work and Next Step"
    assert "All User Messages" in sections and "Pending Tasks" in sections


def test_prompt_configs_resolve_to_the_files() -> None:
    from hydra import compose, initialize_config_dir

    import bench.policies  # noqa: F401 - registers the ${bench.prompt:...} resolver

    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        for name in PROMPT_NAMES:
            cfg = compose("config", overrides=["arm=compact", f"prompt={name}"])
            assert cfg.prompt.name == name and cfg.prompt.text == load_prompt(name)


def test_load_prompt_errors(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown summary prompt"):
        load_prompt("nosuch")
    with pytest.raises(ValueError, match="not found"):
        load_prompt(str(tmp_path / "missing.txt"))
    own = tmp_path / "mine.txt"
    own.write_text("1. Goal: what the user wants.\n")
    assert load_prompt(str(own)).startswith("1. Goal")


@pytest.mark.parametrize("name", PROMPT_NAMES)
def test_extractive_summarizer_fills_every_section_of_every_prompt(name: str) -> None:
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    from bench.policies import ExtractiveSummarizer
    from bench.text.formats import placeholder

    def step(call_id: str, tool: str, args: dict, output: str, text: str = "") -> list:
        return [AIMessage(content=text, tool_calls=[{"name": tool, "args": args, "id": call_id, "type": "tool_call"}]),
                ToolMessage(content=output, tool_call_id=call_id, name=tool)]

    history = [
        HumanMessage("Please make the service start again."),
        *step("a", "execute_bash", {"command": "systemctl status web"},
              "web.service failed\nError: port in use\n[Current working directory: /srv]\n"
              "[Command finished with exit code 3]", text="Checking the service."),
        *step("b", "str_replace_editor", {"command": "view", "path": "/srv/web.conf"}, placeholder("out_abc123")),
        *step("c", "str_replace_editor", {"command": "str_replace", "path": "/srv/web.conf", "old_str": "80",
                                          "new_str": "8080"}, "The file /srv/web.conf has been edited."),
        HumanMessage("Thanks, also restart it."),
        AIMessage("Restarting now."),
    ]
    text, _ = ExtractiveSummarizer().summarize(history, load_prompt(name))
    assert text.startswith(EXTRACTIVE_LABEL)
    sections = prompt_sections(load_prompt(name))
    for number, title in enumerate(sections, start=1):
        assert f"{number}. {title}:" in text
    assert "(nothing found by the rules)" not in text, text
