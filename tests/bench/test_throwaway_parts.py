"""docs/extending.md kept true, kind by kind: a throwaway part added to a scratch copy of the project with only
the files the guide's table lists runs where it belongs (a job, the calibration, the command line), and the
files each test touched are exactly that table's row for its kind.

The scratch copy (``src/bench`` and ``conf``) is what ``python -m bench.main`` imports and reads in the
subprocess (``PYTHONPATH`` puts it before the installed package; ``conf/`` is found beside ``src/``), so
a part that needs a line in a registry (``REGISTRY``, ``PROFILES``, ``bench.sources``) is added the way the
guide says, and nothing else of the repository can make it work.
"""

from __future__ import annotations

import filecmp
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[2]
GUIDE = PROJECT / "docs" / "extending.md"
_SKIP = shutil.ignore_patterns("__pycache__", "*.pyc")


def guide_files(kind: str, name: str) -> set[str]:
    """The files docs/extending.md's table lists for ``kind``, with ``<name>`` filled in."""
    for line in GUIDE.read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if line.startswith("|") and cells[0] == kind:
            return {path.replace("<name>", name) for path in re.findall(r"`([^`]+)`", cells[1])}
    raise AssertionError(f"docs/extending.md has no row for {kind!r} in its table of files touched")


class Scratch:
    """A copy of the project's package and config; :meth:`touched` is every file that differs from the
    repository's (added or changed)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        shutil.copytree(PROJECT / "src" / "bench", root / "src" / "bench", ignore=_SKIP)
        shutil.copytree(PROJECT / "conf", root / "conf", ignore=_SKIP)

    def write(self, relative: str, text: str) -> None:
        path = self.root / relative
        assert not path.exists(), f"{relative} exists already: a throwaway part adds its own file"
        path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")

    def edit(self, relative: str, old: str, new: str) -> None:
        path = self.root / relative
        text = path.read_text(encoding="utf-8")
        assert text.count(old) == 1, f"{old!r} is not once in {relative}"
        path.write_text(text.replace(old, new), encoding="utf-8")

    def touched(self) -> set[str]:
        found = set()
        for top in ("src/bench", "conf"):
            for path in (self.root / top).rglob("*"):
                if path.is_dir() or "__pycache__" in path.parts:
                    continue
                relative = path.relative_to(self.root).as_posix()
                original = PROJECT / relative
                if not original.is_file() or not filecmp.cmp(path, original, shallow=False):
                    found.add(relative)
        return found

    def run(self, module: str, *args: str) -> subprocess.CompletedProcess:
        """``python -m module args`` (``module`` ``-c``: ``python -c args``) on the scratch copy."""
        env = {k: v for k, v in os.environ.items() if k not in ("HYDRA_FULL_ERROR", "PYTHONPATH")}
        env["PYTHONPATH"] = str(self.root / "src")
        command = [sys.executable, "-c", *args] if module == "-c" else [sys.executable, "-m", module, *args]
        return subprocess.run(command, cwd=self.root, env=env, capture_output=True, text=True, timeout=600)

    def job(self, out: Path, *args: str) -> dict:
        done = self.run("bench.main", *args, f"output_dir={out}", "cache.enabled=false")
        assert done.returncode == 0, done.stderr[-3000:]
        return json.loads((out / "metrics.json").read_text())


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


# ---- a question type: its module and its line in the registry
FIRST_TOOL = '''
    """``first_tool``: which tool did you call first? (a throwaway type, tests/test_throwaway_parts.py)"""

    from __future__ import annotations

    from typing import Any

    from bench.profiles import Profile
    from bench.questions.question_type import CaseFacts, make_question, value_spans
    from bench.store.schema import DroppedQuestion, Question

    NAME = "first_tool"


    class FirstTool:
        name = NAME
        rubric = "Tool: the answer names the tool the reference names, exactly."
        answer_format = {"tool": "the tool's name"}

        def text(self, target: dict[str, Any]) -> str:
            return "Which tool did you call first?"

        def applies(self, profile: Profile) -> bool:
            return True

        def build(self, facts: CaseFacts) -> Question | DroppedQuestion:
            events = facts.asked_events()
            if not events:
                return DroppedQuestion(NAME, "no tool call")
            first = events[0]
            return make_question(facts.case, NAME, self.text({}), first.name, [first.name], [first.call_index],
                                 target={"tool": first.name})

        def spans(self, reference: str) -> list[str] | None:
            return value_spans(reference)

        def claim(self, parsed: Any, text: str, repo_root: str | None) -> str | None:
            said = parsed if isinstance(parsed, str) else text
            return said.strip().strip("`") or None

        def grade(self, reference: str, claim: str, repo_root: str | None) -> tuple[bool, str]:
            return (True, "the same tool") if claim == reference else (False, f"expected {reference}, got {claim}")

        def answer_keys(self, reference: str) -> list[str]:
            return []


    FIRST_TOOL = FirstTool()
'''


def add_first_tool(scratch: Scratch) -> None:
    scratch.write("src/bench/questions/first_tool.py", FIRST_TOOL)
    scratch.edit("src/bench/questions/__init__.py", "from bench.questions.first_error import FIRST_ERROR\n",
                 "from bench.questions.first_error import FIRST_ERROR\nfrom bench.questions.first_tool import FIRST_TOOL\n")
    scratch.edit("src/bench/questions/__init__.py", "    WRITE_ACTIONS,", "    WRITE_ACTIONS, FIRST_TOOL,")


def test_a_throwaway_question_type_is_its_module_and_its_registry_line(tmp_path):
    scratch = Scratch(tmp_path / "project")
    add_first_tool(scratch)
    metrics = scratch.job(tmp_path / "job", "dataset=ops", "dataset.limit=3", "questions.types=[first_tool]")
    cases = _lines(tmp_path / "job" / "cases.jsonl")
    asked = [q for case in cases for q in case["questions"]]
    assert len(asked) == 3 and {q["type"] for q in asked} == {"first_tool"}
    assert all(q["answer_format"] == {"tool": "the tool's name"} and q["reference"] for q in asked)
    scores = _lines(tmp_path / "job" / "scores.jsonl")
    assert [s["verdict"] for s in scores] == ["correct"] * 3  # the full history: the reader answers, the judge agrees
    assert metrics["accuracy"] == 1.0
    # calibration's known types are the registry's: a labelled answer of the new type is judged, not refused
    labelled = tmp_path / "labelled.jsonl"
    labelled.write_text("".join(json.dumps(row) + "\n" for row in [
        {"id": "a", "type": "first_tool", "question": "Which tool?", "reference": "get_customer_by_phone",
         "answer": '{"tool": "get_customer_by_phone"}', "verdict": "correct"},
        {"id": "b", "type": "first_tool", "question": "Which tool?", "reference": "get_customer_by_phone",
         "answer": "run_speed_test", "verdict": "wrong"}]), encoding="utf-8")
    done = scratch.run("bench.calibrate", str(labelled))
    assert done.returncode == 0, done.stderr[-2000:]
    assert "agreement 2/2" in done.stdout and "first_tool" in done.stdout
    assert scratch.touched() == guide_files("question type", "first_tool")


def test_a_question_type_without_grade_is_refused_at_import_in_one_line(tmp_path):
    scratch = Scratch(tmp_path / "project")
    add_first_tool(scratch)
    scratch.edit("src/bench/questions/first_tool.py", "    def grade(", "    def grade_(")
    done = scratch.run("bench.main", "questions.types=[first_tool]", f"output_dir={tmp_path / 'job'}")
    assert done.returncode == 2 and not (tmp_path / "job").exists()
    assert done.stderr.strip().splitlines() == ["error: question type 'first_tool': missing grade"]  # no traceback


# ---- an arm: its module and its YAML
@pytest.mark.slow  # a job with such a part runs in the default suite already (docs/extending.md); .ci/run runs this
def test_a_throwaway_arm_is_its_module_and_its_yaml(tmp_path):
    scratch = Scratch(tmp_path / "project")
    scratch.write("src/bench/policies/lastsix.py", '''
        """The six latest messages (a throwaway arm, tests/test_throwaway_parts.py)."""

        from dataclasses import dataclass, field
        from typing import ClassVar

        from bench.policies import PolicyContext, clean_start, make_view


        @dataclass
        class LastSix:
            name: str = "lastsix"
            calls_model: ClassVar[bool] = False
            uses: ClassVar[frozenset[str]] = frozenset()
            order: ClassVar[int] = 12
            context: PolicyContext = field(default_factory=PolicyContext, repr=False)

            def __call__(self, case):
                kept = case.messages[clean_start(case.messages, len(case.messages) - 6):]
                return make_view(case, self.name, kept, self.context.counter)
    ''')
    scratch.write("conf/arm/lastsix.yaml", '''
        # The six latest messages (a throwaway arm).
        _target_: bench.policies.lastsix.LastSix
        name: lastsix            # arm label in outputs and reports
    ''')
    metrics = scratch.job(tmp_path / "job", "arm=lastsix", "dataset.limit=2")
    run = json.loads((tmp_path / "job" / "run.json").read_text())
    assert run["policy"]["name"] == "lastsix" and run["policy"]["order"] == 12 and run["status"] == "complete"
    views = _lines(tmp_path / "job" / "views.jsonl")
    assert views and all(v["arm"] == "lastsix" and v["kept_messages"] <= 6 for v in views)
    assert metrics["n_scored"] > 0
    assert scratch.touched() == guide_files("history policy (arm)", "lastsix")


# ---- a judge: its module and its YAML
@pytest.mark.slow  # a job with such a part runs in the default suite already (docs/extending.md); .ci/run runs this
def test_a_throwaway_judge_is_its_module_and_its_yaml(tmp_path):
    scratch = Scratch(tmp_path / "project")
    scratch.write("src/bench/scoring/always_wrong.py", '''
        """A judge for whom every answer is wrong (a throwaway judge, tests/test_throwaway_parts.py)."""

        from bench.store.schema import Score


        class AlwaysWrong:
            name = "always-wrong"

            def clients(self):
                return []

            def score(self, question, answer, repo_root=None):
                return Score(case_id=answer.case_id, qid=answer.qid, type=question.type, judge=self.name,
                             verdict="wrong", reason="throwaway judge")
    ''')
    scratch.write("conf/judge/always_wrong.yaml", '''
        # Every answer is wrong (a throwaway judge).
        _target_: bench.scoring.always_wrong.AlwaysWrong
    ''')
    metrics = scratch.job(tmp_path / "job", "judge=always_wrong", "dataset.limit=2")
    assert metrics["n_scored"] > 0 and metrics["accuracy"] == 0.0
    assert {s["judge"] for s in _lines(tmp_path / "job" / "scores.jsonl")} == {"always-wrong"}
    assert scratch.touched() == guide_files("judge", "always_wrong")


# ---- an answerer: its module and its YAML
def test_a_throwaway_answerer_is_its_module_and_its_yaml(tmp_path):
    scratch = Scratch(tmp_path / "project")
    scratch.write("src/bench/answering/abstainer.py", '''
        """An answerer that never knows (a throwaway answerer, tests/test_throwaway_parts.py)."""

        from bench.store.schema import Answer


        class Abstainer:
            name = "abstainer"

            def clients(self):
                return []

            def answer(self, case, view, question):
                return Answer(case_id=case.case_id, qid=question.qid, type=question.type, answer='{"unknown": true}',
                              usage={"model": self.name, "calls": 0, "input_tokens": 0, "output_tokens": 0})
    ''')
    scratch.write("conf/model/abstainer.yaml", '''
        # Never knows (a throwaway answerer).
        _target_: bench.answering.abstainer.Abstainer
    ''')
    scratch.job(tmp_path / "job", "model=abstainer", "dataset.limit=2")
    answers = _lines(tmp_path / "job" / "answers.jsonl")
    assert answers and {a["usage"]["model"] for a in answers} == {"abstainer"}
    assert {s["verdict"] for s in _lines(tmp_path / "job" / "scores.jsonl")} == {"abstained"}
    assert scratch.touched() == guide_files("answerer", "abstainer")


# ---- a source: its class, its import and its YAML
@pytest.mark.slow  # a job with such a part runs in the default suite already (docs/extending.md); .ci/run runs this
def test_a_throwaway_source_is_its_class_its_import_and_its_yaml(tmp_path):
    scratch = Scratch(tmp_path / "project")
    scratch.write("src/bench/sources/reversed_ops.py", '''
        """The shipped operations rows, last first (a throwaway source, tests/test_throwaway_parts.py)."""

        from dataclasses import dataclass
        from typing import ClassVar

        from bench.sources.shipped import Shipped
        from bench.sources.source import Source


        @dataclass(kw_only=True)
        class ReversedOps(Source):
            source: str = "reversed_ops"
            names: ClassVar[tuple[str, ...]] = ("reversed_ops",)
            skip: int = 0  # its own key: rows dropped from the end first

            def rows(self):
                yield from list(Shipped(source="ops").rows())[::-1][self.skip:]
    ''')
    scratch.edit("src/bench/sources/__init__.py", "from bench.sources.shipped import Shipped\n",
                 "from bench.sources.shipped import Shipped\nfrom bench.sources.reversed_ops import ReversedOps\n")
    scratch.write("conf/dataset/reversed_ops.yaml", '''
        # The shipped operations rows, last first (a throwaway source).
        defaults:
          - sample
          - _self_
        _target_: bench.sources.reversed_ops.ReversedOps  # the class
        source: reversed_ops     # its name
        profile: tau2            # tau2-bench tools
        skip: 1                  # rows dropped from the end first
    ''')
    scratch.job(tmp_path / "job", "dataset=reversed_ops", "dataset.limit=3")
    ops = [json.loads(line)["instance_id"]
           for line in (PROJECT / "src/bench/samples/ops/dev.jsonl").read_text().splitlines() if line.strip()]
    assert [c["instance_id"] for c in _lines(tmp_path / "job" / "cases.jsonl")] == ops[::-1][1:4]
    # the import makes its key known to the command line: given to another source, it is named as its key
    done = scratch.run("bench.main", "dataset=sample", "dataset.skip=1", f"output_dir={tmp_path / 'refused'}")
    assert done.returncode == 2 and done.stderr.strip().splitlines()[-1].startswith(
        "error: dataset.skip=1 is not used by dataset=sample"), done.stderr[-2000:]
    assert scratch.touched() == guide_files("source", "reversed_ops")


# ---- a profile: its module and its line in the registry
def test_a_throwaway_profile_is_its_module_and_its_registry_line(tmp_path):
    scratch = Scratch(tmp_path / "project")
    scratch.write("src/bench/profiles/telecom_lines.py", '''
        """tau2-bench telecom runs whose writes are the account's only (a throwaway profile,
        tests/test_throwaway_parts.py): a device toggled by the customer is not the agent's write."""

        from bench.profiles.profile import Profile

        TELECOM_LINES = Profile(
            name="telecom_lines",
            finish_tools=("done", "transfer_to_human_agents"),
            error_result=r"error\\b\\s*:",
            write_tools=r"(?:resume|suspend|refuel|send|make)_\\w+",
        )
    ''')
    scratch.edit("src/bench/profiles/__init__.py", "from bench.profiles.tau2 import TAU2\n",
                 "from bench.profiles.tau2 import TAU2\nfrom bench.profiles.telecom_lines import TELECOM_LINES\n")
    scratch.edit("src/bench/profiles/__init__.py", "registry(OPENHANDS, TAU2, GENERIC)",
                 "registry(OPENHANDS, TAU2, GENERIC, TELECOM_LINES)")
    scratch.job(tmp_path / "job", "dataset=ops", "dataset.profile=telecom_lines",
                "questions.types=[write_actions,call_count]")
    cases = _lines(tmp_path / "job" / "cases.jsonl")
    assert cases and {c["profile"]["name"] for c in cases} == {"telecom_lines"}
    written = [a["tool"] for c in cases for q in c["questions"] if q["type"] == "write_actions" for a in q["reference"]]
    assert written and all(re.fullmatch(r"(?:resume|suspend|refuel|send|make)_\w+", tool) for tool in written)
    assert scratch.touched() == guide_files("profile", "telecom_lines")


# ---- a summary prompt: its text and its YAML
@pytest.mark.slow  # a job with such a part runs in the default suite already (docs/extending.md); .ci/run runs this
def test_a_throwaway_prompt_is_its_text_and_its_yaml(tmp_path):
    scratch = Scratch(tmp_path / "project")
    text = "Summarize the conversation.\n1. Files touched: every path.\n2. Errors: each error, verbatim.\n"
    scratch.write("src/bench/prompts/brief.txt", text)
    scratch.write("conf/prompt/brief.yaml", '''
        # Two sections: files and errors (a throwaway prompt).
        name: brief              # its label in views and reports
        file: brief.txt          # prompt file in src/bench/prompts/
        text: ${bench.prompt:${.file}}  # the prompt text, read from the file (hashed into run.json)
    ''')
    scratch.job(tmp_path / "job", "arm=compact", "prompt=brief", "dataset.limit=2")
    from bench.runner.provenance import text_hash

    assert json.loads((tmp_path / "job" / "run.json").read_text())["prompt_hash"] == text_hash(text)
    # the shipped prompts are read from the files: the study's prompt order and the error lines know it
    listed = scratch.run("-c", "from bench.prompts import PROMPT_NAMES; print(*PROMPT_NAMES)")
    assert listed.stdout.split() == ["sre", "brief", "generic", "hybrid", "hybrid_v2"], listed.stderr[-2000:]
    assert scratch.touched() == guide_files("summary prompt", "brief")
