"""Every kind of part is checked against its contract where it is registered: a part missing one member is
refused in one line naming the part and the member, before any work; docs/extending.md lists every member
of each kind's protocol; the lists of types and prompts are read from the registries."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import pytest
import yaml
from omegaconf import OmegaConf

from bench.answering.answerer import Answerer, AnswererOptions
from bench.config.arms import build_policy
from bench.config.checks import CONF_DIR, check_prompt, compose, dataset_source, validate
from bench.core.contracts import ContractError, members
from bench.policies import PolicyContext, clean_start, make_view
from bench.policies.policy import Policy, PolicyOptions
from bench.profiles import OPENHANDS, Profile
from bench.profiles import registry as profile_registry
from bench.profiles.profile import PATTERN_FIELDS
from bench.prompts import PROMPT_KEYS, PROMPT_NAMES
from bench.questions import REGISTRY
from bench.questions.question_type import QuestionType, QuestionTypeOptions, make_question, registry, value_spans
from bench.runner.setup import build
from bench.scoring.judge import Judge
from bench.scoring.panel import PanelJudge
from bench.sources import Shipped, Source
from bench.store.schema import Answer, DroppedQuestion, Score
from bench.text.tokens import TokenCounter

PROJECT = Path(__file__).resolve().parents[2]
GUIDE = (PROJECT / "docs" / "extending.md").read_text(encoding="utf-8")


def _section(heading: str) -> str:
    """The text of docs/extending.md's section ``## <heading>`` (to the next ``## ``)."""
    start = GUIDE.index(f"\n## {heading}")
    end = GUIDE.find("\n## ", start + 1)
    return GUIDE[start:end if end > 0 else None]


def _without(cls: type, member: str) -> type:
    """``cls`` with one member taken out (its other members as they are)."""
    return type(cls.__name__, (), {k: v for k, v in vars(cls).items() if k != member and not k.startswith("__")})


# ---- question types: refused when registered
class FirstTool:
    """A complete question type (the throwaway one of tests/test_throwaway_parts.py)."""

    name = "first_tool"
    rubric = "Tool: the answer names the tool the reference names, exactly."
    answer_format = {"tool": "the tool's name"}

    def text(self, target):
        return "Which tool did you call first?"

    def applies(self, profile):
        return True

    def build(self, facts):
        events = facts.asked_events()
        if not events:
            return DroppedQuestion(self.name, "no tool call")
        return make_question(facts.case, self.name, self.text({}), events[0].name, [], [events[0].call_index],
                             target={"tool": events[0].name})

    def spans(self, reference):
        return value_spans(reference)

    def claim(self, parsed, text, repo_root):
        return text.strip() or None

    def grade(self, reference, claim, repo_root):
        return claim == reference, "compared"

    def answer_keys(self, reference):
        return []


def test_a_complete_question_type_registers():
    assert list(registry(FirstTool())) == ["first_tool"]


@pytest.mark.parametrize("member", [m.name for m in members(QuestionType)])
def test_a_question_type_missing_one_member_is_refused_when_registered(member):
    label = "first_tool" if member != "name" else f"{__name__}.FirstTool"
    with pytest.raises(ContractError) as refused:
        registry(_without(FirstTool, member)())
    assert str(refused.value) == f"question type '{label}': missing {member}"


def test_the_newcomers_type_gets_one_line_naming_every_missing_member():
    """Issue 33's newcomer: a type written by the old guide, without answer_format, answer_keys and grade,
    took four runs and three errors mid-job; now one line names the three when it is registered."""
    partial = _without(_without(_without(FirstTool, "answer_format"), "grade"), "answer_keys")
    with pytest.raises(ContractError, match=r"^question type 'first_tool': missing answer_format, grade, answer_keys$"):
        registry(partial())


@pytest.mark.parametrize("change,line", [
    ({"answer_format": "tool"}, "answer_format must be a dict (got str)"),
    ({"answer_format": {}}, "answer_format is empty"),
    ({"rubric": None}, "rubric must be a str (got NoneType)"),
    ({"grade": lambda self, reference: True}, "grade() does not take (reference, claim, repo_root)"),
    ({"text": "Which tool?"}, "text must be a method (got str)"),
    ({"name": "First Tool"}, "name must be lower case letters, digits and _"),
    ({"candidates": lambda self, facts: []}, "candidates() needs none_eligible()"),
    ({"reference_kind": "error"}, "reference_kind 'error' needs template_text(reference)"),
    ({"reference_kind": "reply"}, "reference_kind must be one of"),
    ({"values_only": "yes"}, "values_only must be a bool (got str)"),
])
def test_a_question_type_with_a_member_of_the_wrong_kind_is_refused(change, line):
    qtype = type("FirstTool", (FirstTool,), change)()
    with pytest.raises(ContractError) as refused:
        registry(qtype)
    assert str(refused.value).startswith(f"question type '{qtype.name}': {line}")


def test_a_type_registered_twice_is_refused():
    with pytest.raises(ContractError, match="question type 'first_tool': registered twice"):
        registry(FirstTool(), FirstTool())


# ---- profiles: refused when registered
@pytest.mark.parametrize("profile,line", [
    (Profile(name="lines", exit_code_marker=r"exit code \d+"), "exit_code_marker must have 1 group"),
    (Profile(name="lines", error_result="(unclosed"), "error_result is not a regular expression"),
    (Profile(name="lines", shell_tools="bash"), "shell_tools must be a tuple of names (got 'bash')"),
    (Profile(name="lines", editor_commands=(("create", "file_text", "x"),)), "editor_commands must be a tuple of"),
    (Profile(name="Lines"), "name must be lower case letters"),
])
def test_a_profile_with_a_field_of_the_wrong_kind_is_refused_when_registered(profile, line):
    with pytest.raises(ContractError) as refused:
        profile_registry(OPENHANDS, profile)
    assert str(refused.value).startswith(f"profile '{profile.name}': {line}")
    with pytest.raises(ContractError, match="profile 'openhands': registered twice"):
        profile_registry(OPENHANDS, OPENHANDS)


# ---- arms: refused when the job builds them
@dataclass
class LastSix:
    name: str = "lastsix"
    calls_model: ClassVar[bool] = False
    uses: ClassVar[frozenset[str]] = frozenset()
    context: PolicyContext = field(default_factory=PolicyContext, repr=False)

    def __call__(self, case):
        kept = case.messages[clean_start(case.messages, len(case.messages) - 6):]
        return make_view(case, self.name, kept, self.context.counter)


@dataclass
class NoCallsModel:  # LastSix without calls_model
    name: str = "lastsix"
    uses: ClassVar[frozenset[str]] = frozenset()
    context: PolicyContext = field(default_factory=PolicyContext, repr=False)

    def __call__(self, case):
        return LastSix(context=self.context)(case)


@dataclass
class NoContext:  # takes no context: the job could not hand it its counter
    name: str = "lastsix"
    calls_model: ClassVar[bool] = False
    uses: ClassVar[frozenset[str]] = frozenset()

    def __call__(self, case):
        return LastSix()(case)


class WrongRole(LastSix):
    role = "champion"


class UnknownPart(LastSix):
    uses: ClassVar[frozenset[str]] = frozenset({"oracle"})


@pytest.fixture
def conf(tmp_path) -> Path:
    copy = tmp_path / "conf"
    shutil.copytree(CONF_DIR, copy)
    return copy


def _arm(conf: Path, cls: type) -> Any:
    (conf / "arm" / "mine.yaml").write_text(f"_target_: {__name__}.{cls.__name__}  # the class\nname: lastsix  # label\n")
    return build_policy(compose(["arm=mine"], config_dir=conf), TokenCounter())


def test_a_complete_arm_builds(conf):
    assert _arm(conf, LastSix).name == "lastsix"


@pytest.mark.parametrize("cls,line", [
    (NoCallsModel, "missing calls_model"),
    (NoContext, "it takes no context"),
    (WrongRole, "role must be one of ('reference', 'baseline', 'candidate'), got 'champion'"),
    (UnknownPart, "uses unknown context parts ['oracle']"),
])
def test_an_arm_missing_a_member_is_refused_when_the_job_builds_it(conf, cls, line):
    with pytest.raises(ContractError) as refused:
        _arm(conf, cls)
    assert str(refused.value).startswith(f"arm 'lastsix': {line}")


# ---- answerers and judges: refused when the job builds them
class Mute:
    name = "mute"

    def answer(self, case, view, question):
        return Answer(case_id=case.case_id, qid=question.qid, type=question.type, answer='{"unknown": true}')


class Hasty(Mute):
    def clients(self):
        return []

    def answer(self, case, view):  # the question is not taken
        raise AssertionError


class NoClients:
    name = "noclients"

    def score(self, question, answer, repo_root=None):
        return Score(case_id=answer.case_id, qid=answer.qid, type=question.type, judge=self.name, verdict="wrong")


@pytest.mark.parametrize("cls,group,line", [
    (Mute, "model", "answerer 'mute': missing clients"),
    (Hasty, "model", "answerer 'mute': answer() does not take (case, view, question)"),
    (NoClients, "judge", "judge 'noclients': missing clients"),
])
def test_an_answerer_or_judge_missing_a_member_is_refused_when_built(cls, group, line):
    with pytest.raises(ContractError) as refused:
        build(OmegaConf.create({"_target_": f"{__name__}.{cls.__name__}"}), group)
    assert str(refused.value) == line


def test_a_panel_member_missing_a_member_is_refused_when_the_panel_is_built():
    from bench.scoring.judge import ExactJudge

    with pytest.raises(ContractError, match="^judge 'noclients': missing clients$"):
        PanelJudge(members={"exact": ExactJudge(), "mine": NoClients()})


def test_the_command_refuses_a_judge_missing_a_member_in_one_line_and_leaves_no_job(tmp_path, conf):
    (conf / "judge" / "noclients.yaml").write_text(f"_target_: {__name__}.NoClients  # the class\n")
    out = tmp_path / "job"
    done = subprocess.run([sys.executable, "-m", "bench.main", "judge=noclients", f"hydra.searchpath=[file://{conf}]",
                           f"output_dir={out}"], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          env=_env())
    assert done.returncode == 2, done.stderr[-2000:]
    assert [line for line in done.stderr.splitlines() if line.startswith("error:")] == [
        "error: judge 'noclients': missing clients"]
    assert not out.exists()


def _env() -> dict[str, str]:
    import os

    from paths import pythonpath

    return {**{k: v for k, v in os.environ.items() if k != "HYDRA_FULL_ERROR"}, "PYTHONPATH": pythonpath(Path(__file__).parent)}


# ---- sources: refused when the job reads their config
@dataclass(kw_only=True)
class NoRows(Source):
    source: str = "norows"
    names: ClassVar[tuple[str, ...]] = ("norows",)


class Undecorated(Source):  # its keys would not be fields
    names: ClassVar[tuple[str, ...]] = ("undecorated",)
    skip: int = 0

    def rows(self):
        yield from Shipped(source="ops").rows()


@pytest.mark.parametrize("cls,line", [
    (NoRows, "missing rows"),
    (Undecorated, "not a dataclass"),
])
def test_a_source_missing_a_member_is_refused_before_any_row_is_read(cls, line):
    with pytest.raises(ContractError) as refused:
        dataset_source(OmegaConf.create({"_target_": f"{__name__}.{cls.__name__}", "source": "x"}))
    assert str(refused.value).startswith(f"source '{__name__}.{cls.__name__}': {line}")


# ---- summary prompts: refused when the job reads their config
@pytest.mark.parametrize("text,line", [
    ("file: mine.txt  # no name\ntext: ${bench.prompt:${.file}}  # the text\n", "summary prompt 'mine.txt': missing name"),
    ("name: mine  # its label\nfile: mine.txt  # the file\ntext: ${bench.prompt:${.file}}  # the text\nsections: 2  # ?\n",
     "summary prompt 'mine': sections: not a key of a prompt (its keys: name, file, text)"),
    ("name: mine  # its label\nfile: mine.txt  # the file\ntext: '  '  # empty\n",
     "summary prompt 'mine': its text is empty (file mine.txt)"),
])
def test_a_prompt_missing_a_member_is_refused_when_the_job_reads_it(conf, text, line):
    (conf / "prompt" / "mine.yaml").write_text(text)
    cfg = compose(["prompt=mine"], config_dir=conf)
    with pytest.raises(ContractError) as refused:
        validate(cfg)
    assert str(refused.value) == line


# ---- the guide lists every member of every kind
@pytest.mark.parametrize("heading,protocols", [
    ("A question type", (QuestionType, QuestionTypeOptions)),
    ("A history policy", (Policy, PolicyOptions)),
    ("A judge", (Judge,)),
    ("An answerer", (Answerer, AnswererOptions)),
])
def test_the_guide_lists_every_member_of_each_protocol(heading, protocols):
    section = _section(heading)
    unlisted = [m.name for p in protocols for m in members(p) if not re.search(rf"`{re.escape(m.name)}\b", section)]
    assert not unlisted, f"docs/extending.md, '{heading}' does not list {unlisted}"


def test_the_guide_lists_what_a_source_a_profile_and_a_prompt_need():
    source, profile, prompt = _section("A source"), _section("A profile"), _section("A summary prompt")
    assert all(f"`{member}" in source for member in ("names", "rows()", "@dataclass(kw_only=True)"))
    assert "`name`" in profile and all(f"`{name}`" in profile for name, groups in PATTERN_FIELDS.items() if groups)
    assert all(f"`{key}:" in prompt for key in PROMPT_KEYS)


def test_the_guides_table_has_a_row_per_kind_and_the_sections_name_their_proofs():
    rows = re.findall(r"^\| ([^|]+?) \| (`src/bench/[^|]+) \|", GUIDE, re.M)
    assert [kind for kind, _ in rows] == ["history policy (arm)", "question type", "judge", "answerer", "source",
                                          "profile", "summary prompt"]
    proofs = re.findall(r"`(tests/[\w/]+\.py)::(\w+)`", GUIDE)
    assert sum(path.endswith("test_throwaway_parts.py") for path, _ in proofs) == len(rows)
    missing = [f"{path}::{name}" for path, name in proofs
               if not re.search(rf"^(?:def {name}\(|{name}\b)", (PROJECT / path).read_text(encoding="utf-8"), re.M)]
    assert not missing, f"docs/extending.md names proofs that are not there: {missing}"


# ---- lists read from the registries
def test_the_lists_of_types_are_the_registrys():
    from bench.calibrate import KNOWN_TYPES
    from bench.questions import CODING_TYPES, QUESTION_TYPES
    from bench.runner.costing import OUTPUT_TOKENS, answer_tokens

    assert KNOWN_TYPES == QUESTION_TYPES == tuple(REGISTRY)
    assert set(CODING_TYPES) < set(REGISTRY)
    assert answer_tokens("no_such_type") == OUTPUT_TOKENS and answer_tokens("first_edit") == REGISTRY[
        "first_edit"].answer_tokens


def test_the_shipped_prompts_are_the_prompt_files_and_every_option_passes_its_check():
    package = PROJECT / "src" / "bench" / "prompts"
    files = {}
    for path in sorted((CONF_DIR / "prompt").glob("*.yaml")):
        check_prompt(OmegaConf.create(yaml.safe_load(path.read_text())))  # as written: the file name, no text
        check_prompt(compose([f"prompt={path.stem}"]).prompt)  # as composed: the text read from the file
        files[path.stem] = yaml.safe_load(path.read_text())["file"]
    assert set(PROMPT_NAMES) == {name for name, file in files.items() if (package / file).is_file()}
    assert PROMPT_NAMES[0] == "sre"  # the default, first in study tables
