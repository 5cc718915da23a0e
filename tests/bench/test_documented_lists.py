"""The lists the docs and config comments keep by hand, against what they list (issue 33, item 4).

A table, count or comment that names the options of a config group (``conf/<group>/*.yaml``) or the
entries of a registry (question types, profiles, shipped samples, providers, verdicts) is read and
compared with the group directory or the registry itself; a dotted ``bench.x.y`` path named in the
docs, a docstring, a comment or a config file must import (an old path from before issue 33's move
only in ``docs/handover.md`` and ``docs/decisions.md``, which are history). Each check returns the
problems it finds, read from a project root, so the drift tests below plant a drift in a copy of the
project (or in a registry) and see it caught.
"""

from __future__ import annotations

import importlib
import importlib.util
import math
import re
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from omegaconf import OmegaConf

import bench.questions
from bench.config.checks import compose
from bench.core.renames import RENAMED, current_target
from bench.llm import PROVIDERS
from bench.profiles import PROFILES
from bench.sources import SHIPPED, source_classes
from bench.store.schema import VERDICTS

from conftest import PROJECT

HISTORY_DOCS = {"handover.md", "decisions.md"}  # what was: old paths belong there
NUMBERS = {w: i for i, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve".split())}


# ---------------------------------------------------------------- reading the docs and the conf tree


def options(root: Path, group: str) -> list[str]:
    """The options of a config group: one YAML each under ``conf/<group>/``."""
    return sorted(p.stem for p in (root / "conf" / group).glob("*.yaml"))


def groups(root: Path) -> list[str]:
    """The config groups a job chooses from (``hydra/`` is Hydra's own)."""
    return sorted(p.name for p in (root / "conf").iterdir() if p.is_dir() and p.name != "hydra")


def section(text: str, heading: str) -> str:
    """The text under a markdown heading, up to the next heading of the same or a higher level (a shell
    comment in a code block is no heading)."""
    level = heading.split(" ", 1)[0]
    start = text.index(heading + "\n") + len(heading) + 1
    prose = re.sub(r"^```.*?^```", lambda m: re.sub(r"[^\n]", " ", m.group(0)), text[start:], flags=re.M | re.S)
    end = re.search(rf"^#{{1,{len(level)}}} ", prose, re.M)
    return text[start:start + end.start()] if end else text[start:]


def table(text: str) -> list[list[str]]:
    """The body rows of the first markdown table in ``text``, cells split at unescaped pipes."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("|"))
    rows = lines[start:next((i for i in range(start, len(lines)) if not lines[i].startswith("|")), len(lines))]
    return [[c.strip() for c in re.split(r"(?<!\\)\|", r)[1:-1]] for r in rows[2:]]


# ``a | b | c``: a run of names, each maybe followed by a parenthesis ("offline (extractive) | openai")
PIPE_RUN = re.compile(r"[\w-]+(?: \([^)]*\))?(?: \| [\w-]+(?: \([^)]*\))?)+")


def pipe_listed(comment: str) -> list[str]:
    """The names of the longest ``a | b | c`` run in a comment (none: an empty list)."""
    runs = PIPE_RUN.findall(comment)
    return re.findall(r"(?:^|\| )([\w-]+)", max(runs, key=len)) if runs else []


def ticked(text: str) -> list[str]:
    """The names in backticks."""
    return re.findall(r"`([^`]+)`", text)


def product(values: list[str]) -> int:
    return math.prod(len(str(v).split(",")) for v in values)


def sweep(root: Path, experiment: str) -> dict[str, str]:
    """An experiment's swept keys and their comma-separated values (``hydra.sweeper.params``)."""
    data = yaml.safe_load((root / "conf" / "experiment" / f"{experiment}.yaml").read_text(encoding="utf-8"))
    return {k: str(v) for k, v in data["hydra"]["sweeper"]["params"].items()}


def swept_arms(root: Path, experiment: str) -> set[str]:
    """The arms an experiment sweeps (``+experiment/arm``), budgets left out (``mask_10pct``: ``mask``)."""
    return {re.sub(r"_\d+pct$", "", a) for a in sweep(root, experiment).get("+experiment/arm", "").split(",") if a}


def applying_types(profile_name: str) -> list[str]:
    registry = bench.questions.REGISTRY  # read at call time: a test may plant a type
    return [name for name, qtype in registry.items() if qtype.applies(PROFILES[profile_name])]


def types_cell(profile_name: str) -> str:
    """What the README's sources table says of a profile's question types, derived from the registry:
    how many apply, then the few that do not (``all but``) or else the ones that do."""
    names = applying_types(profile_name)
    left_out = [name for name in bench.questions.REGISTRY if name not in names]
    if not left_out:
        return f"{len(names)}: all"
    listed = f"all but {', '.join(f'`{n}`' for n in left_out)}" if len(left_out) <= 2 else ", ".join(
        f"`{n}`" for n in names)
    return f"{len(names)}: {listed}"


def read(root: Path, name: str) -> str:
    return (root / name).read_text(encoding="utf-8")


def differ(what: str, documented: list[str] | set[str], actual: list[str] | set[str]) -> list[str]:
    missing, extra = sorted(set(actual) - set(documented)), sorted(set(documented) - set(actual))
    return [f"{what}: missing {missing}, not there {extra}"] if missing or extra else []


# ---------------------------------------------------------------- the checks: each returns its problems


def readme_sources(root: Path) -> list[str]:
    """README "Sources and profiles": every dataset once, its profile and the question types that apply."""
    rows = table(section(read(root, "README.md"), "### Sources and profiles"))
    problems = differ("README sources table, datasets", [d for r in rows for d in ticked(r[0])], options(root, "dataset"))
    for row in rows:
        for dataset in ticked(row[0]):
            if dataset not in options(root, "dataset"):
                continue
            profile = compose([f"dataset={dataset}"], config_dir=root / "conf").dataset.profile
            if ticked(row[2]) != [profile]:
                problems.append(f"README sources table: dataset {dataset} has profile {profile}, says {row[2]}")
            if row[3] != types_cell(profile):
                problems.append(f"README sources table: dataset {dataset}: {row[3]!r}, the registry says "
                                f"{types_cell(profile)!r}")
    return problems


def readme_arms(root: Path) -> list[str]:
    rows = table(section(read(root, "README.md"), "## History policies (arms)"))
    return differ("README arms table", [ticked(r[0])[0] for r in rows], options(root, "arm"))


def readme_budget_arms(root: Path) -> list[str]:
    """The budget table names the arms whose config has an ``arm.budget`` key, and no other."""
    rows = table(section(read(root, "README.md"), "### One budget for every shrinking arm"))
    budgeted = [a for a in options(root, "arm") if "budget" in OmegaConf.load(root / "conf" / "arm" / f"{a}.yaml")]
    return differ("README budget table", [ticked(r[0])[0] for r in rows], budgeted)


def readme_question_types(root: Path) -> list[str]:
    """The questions table lists the registry in its order; the grading rules name every type."""
    rows = table(section(read(root, "README.md"), "## Questions"))
    listed, registry = [ticked(r[0])[0] for r in rows], list(bench.questions.REGISTRY)
    problems = [] if listed == registry else [f"README questions table: {listed}, the registry: {registry}"]
    grading = set(ticked(section(read(root, "README.md"), "## Grading")))
    return problems + [f"README Grading: no rule names {name}" for name in registry if name not in grading]


def readme_groups_and_experiments(root: Path) -> list[str]:
    text = read(root, "README.md")
    sentence = re.search(r"Hydra config groups: (.*?)\. ", text, re.S).group(1)
    problems = differ("README Sweeps, config groups", [g for g in ticked(sentence) if re.fullmatch(r"\w+", g) and g != "seed"], groups(root))
    named = re.search(r"Named sweeps in `conf/experiment/` \((.*?)\)", text, re.S).group(1)
    return problems + differ("README The study, named sweeps", ticked(named), options(root, "experiment"))


def inline_group_lists(root: Path) -> list[str]:
    """``group=a|b|c`` in the README and the guides names every option of the group."""
    problems = []
    for doc in [root / "README.md", *sorted((root / "docs").glob("*.md"))]:
        if doc.name in HISTORY_DOCS:
            continue
        for group, listed in re.findall(r"\b([a-z]+)=((?:[\w-]+\\?\|)+[\w-]+)", doc.read_text(encoding="utf-8")):
            if group in groups(root):
                problems += differ(f"{doc.name}: {group}=...", listed.replace("\\", "").split("|"), options(root, group))
    return problems


# the counts the README states in words or digits: (pattern with the count as group 1, the true count)
def readme_counts(root: Path) -> list[tuple[str, Callable[[], int]]]:
    frontier = sweep(root, "frontier")["+experiment/arm"].split(",")
    calibration = [yaml.safe_load(line) for line in read(root, "tests/data/judge_calibration.jsonl").splitlines() if line]
    return [
        (r"`\+experiment=frontier` runs the (\w+) arms", lambda: len({re.sub(r"_\d+pct$", "", a) for a in frontier
                                                                      if a.endswith("pct")})),
        (r"\+experiment=frontier dataset=ops +# (\d+) jobs", lambda: product(list(sweep(root, "frontier").values()))),
        (r"judge_calibration.jsonl` *\nholds (\d+) answers", lambda: len(calibration)),
        (r"holds \d+ answers over all (\w+) question types", lambda: len({r["type"] for r in calibration})),
        (r"over all (\w+) question types with verdicts", lambda: len(bench.questions.REGISTRY)),
    ]


def readme_numbers(root: Path) -> list[str]:
    text, problems = read(root, "README.md"), []
    for pattern, truth in readme_counts(root):
        found = re.search(pattern, text)
        if found is None:
            problems.append(f"README: no sentence matches {pattern!r}")
            continue
        said = found.group(1)
        said = NUMBERS.get(said, None) if not said.isdigit() else int(said)
        if said != truth():
            problems.append(f"README: {found.group(0)!r} says {said}, it is {truth()}")
    return problems


def study_experiments(root: Path) -> list[str]:
    """docs/study.md's experiments table: every experiment, its job count, its swept values and arms."""
    rows = table(section(read(root, "docs/study.md"), "## Experiments"))
    problems = differ("docs/study.md experiments", [ticked(r[0])[0] for r in rows], options(root, "experiment"))
    for row in rows:
        name = ticked(row[0])[0]
        if name not in options(root, "experiment"):
            continue
        params = sweep(root, name)
        if int(row[2]) != product(list(params.values())):
            problems.append(f"docs/study.md: {name} runs {product(list(params.values()))} jobs, says {row[2]}")
        for key, values in re.findall(r"`([\w.]+)=([\w.,]+)`", row[1]):
            if key in params and "," in values and values != params[key]:
                problems.append(f"docs/study.md: {name} sweeps {key}={params[key]}, says {values}")
        named = set(ticked(row[1]))  # an experiment named in the grid: its arms too ("`peers` and ...")
        named |= {arm for other in named & set(options(root, "experiment")) for arm in swept_arms(root, other)}
        problems += [f"docs/study.md: {name} runs arm {arm}, not named" for arm in sorted(swept_arms(root, name) - named)]
    return problems


def experiment_job_counts(root: Path) -> list[str]:
    """An experiment's YAML comment that says how many jobs it runs says it right."""
    problems = []
    for name in options(root, "experiment"):
        text = read(root, f"conf/experiment/{name}.yaml")
        for said in re.findall(r"(\d+) jobs", text):
            if int(said) != product(list(sweep(root, name).values())):
                problems.append(f"conf/experiment/{name}.yaml says {said} jobs, runs {product(list(sweep(root, name).values()))}")
    return problems


def config_defaults_comments(root: Path) -> list[str]:
    """``conf/config.yaml``: each group's defaults line lists every option of the group (``a | b | c``,
    continued on the comment lines below it)."""
    lines, problems = read(root, "conf/config.yaml").splitlines(), []
    for i, line in enumerate(lines):
        entry = re.match(r"\s+- (\w+): \w+\s+#(.*)", line)
        if not entry or entry.group(1) not in groups(root):
            continue
        comment = entry.group(2)
        for more in lines[i + 1:]:
            if not re.match(r"\s+#", more):
                break
            comment += " " + more.strip().lstrip("#")
        problems += differ(f"conf/config.yaml, {entry.group(1)}", pipe_listed(re.sub(r"\s+", " ", comment)), options(root, entry.group(1)))
    return problems


def help_groups(root: Path) -> list[str]:
    """``--help`` lists the groups and options through Hydra's ``$APP_CONFIG_GROUPS`` (read off the conf tree),
    never by hand."""
    help_text = yaml.safe_load(read(root, "conf/hydra/help/bench.yaml"))
    problems = [] if "$APP_CONFIG_GROUPS" in help_text["template"] else ["--help: the template lists no $APP_CONFIG_GROUPS"]
    for part in ("header", "footer", "template"):
        for group, listed in re.findall(r"\b([a-z]+)=((?:[\w-]+ ?\| ?)+[\w-]+)", help_text[part]):
            if group in groups(root):
                problems += differ(f"--help {part}: {group}=...", re.split(r" ?\| ?", listed), options(root, group))
    return problems


@dataclass(frozen=True)
class PipeList:
    """``a | b | c`` on the line of ``file`` that matches ``line``: the entries of a registry."""

    file: str
    line: str
    truth: Callable[[], list[str]]


PIPE_LISTS = (
    PipeList("conf/dataset/sample.yaml", r"^source: ", lambda: list(SHIPPED)),
    PipeList("conf/dataset/sample.yaml", r"^profile: ", lambda: list(PROFILES)),
    PipeList("src/bench/profiles/__init__.py", r"get_profile\(\"openhands\"\)", lambda: list(PROFILES)),
    PipeList("conf/judge/llm.yaml", r"^provider: ", lambda: list(PROVIDERS)),
    PipeList("conf/summarizer/openai.yaml", r"^provider: ", lambda: list(PROVIDERS)),
    PipeList("conf/model/openai.yaml", r"^provider: ", lambda: list(PROVIDERS)),
    PipeList("src/bench/llm/client.py", r"provider: str = ", lambda: list(PROVIDERS)),
    PipeList("src/bench/store/schema.py", r"verdict: str  #", lambda: list(VERDICTS)),
)


def pipe_lists(root: Path) -> list[str]:
    problems = []
    for claim in PIPE_LISTS:
        line = next((x for x in read(root, claim.file).splitlines() if re.search(claim.line, x)), None)
        if line is None:
            problems.append(f"{claim.file}: no line matches {claim.line!r}")
            continue
        problems += differ(f"{claim.file} {claim.line!r}", pipe_listed(line.split("#", 1)[1]), claim.truth())
    return problems


def readme_layout_registries(root: Path) -> list[str]:
    """README "Layout": the profiles named, and one source named per source class."""
    text = read(root, "README.md")
    named = re.search(r"^  profiles/ .*\(([^)]*)\)", text, re.M).group(1)
    problems = differ("README Layout, profiles", [p.strip() for p in named.split(",")], list(PROFILES))
    sources = re.search(r"^  sources/ .*one class per source \(([^)]*)\)", text, re.M).group(1).split(",")
    classes = [c for c in source_classes() if c.__module__.startswith("bench.")]  # not a test's own source
    if len(sources) != len(classes):
        problems.append(f"README Layout, sources: {len(sources)} named, {len(classes)} source classes")
    return problems


def arm_targets(root: Path) -> list[str]:
    """Every arm's ``_target_`` is a class of a module of ``bench.policies`` (its docstring says so)."""
    problems = []
    for arm in options(root, "arm"):
        target = OmegaConf.load(root / "conf" / "arm" / f"{arm}.yaml").get("_target_")
        if not str(target).startswith("bench.policies.") or not isinstance(resolve(str(target)), type):
            problems.append(f"conf/arm/{arm}.yaml: _target_ {target} is not a class in bench.policies")
    return problems


DOTTED = re.compile(r"(?<![\w/.\-])bench(?:\.[A-Za-z_]\w*)+")


def resolve(dotted: str) -> object | None:
    """The module or attribute a dotted path names, None when it names nothing (or only by an old name)."""
    if current_target(dotted) != dotted and dotted not in _packages():
        return None  # a path from before the move: bench.core.renames maps it, docs name the new one
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        name = ".".join(parts[:i])
        try:
            found: object = importlib.import_module(name)
        except ModuleNotFoundError:
            continue
        for attribute in parts[i:]:
            found = getattr(found, attribute, None)
            if found is None:
                return None
        return found
    return None


def _packages() -> set[str]:
    """Current packages that took an old module's name (``bench.store``: a package now, named as such)."""
    return {name for name in RENAMED if (spec := importlib.util.find_spec(name)) is not None
            and spec.submodule_search_locations is not None}


def _named_texts(root: Path) -> dict[str, str]:
    """Where dotted paths are read: the README and the guides, every text of the package and the
    config files (docstrings and comments alike), the benchmarks and scripts."""
    texts = {str(p.relative_to(root)): p.read_text(encoding="utf-8")
             for p in [root / "README.md", *sorted((root / "docs").glob("*.md"))] if p.name not in HISTORY_DOCS}
    for pattern in ("src/bench/**/*.py", "src/bench/**/*.md", "conf/**/*.yaml", "benchmarks/*.py", "scripts/**/*.py"):
        texts |= {str(p.relative_to(root)): p.read_text(encoding="utf-8") for p in sorted(root.glob(pattern))}
    texts.pop("src/bench/core/renames.py", None)  # the map of the old paths to the new
    return texts


def dotted_paths(root: Path) -> list[str]:
    problems = []  # bench.config.checks (imported above) registered the ${bench.*:...} resolvers, named like paths
    for name, text in _named_texts(root).items():
        for found in sorted({m.group(0).rstrip(".") for m in DOTTED.finditer(text)}):
            if not OmegaConf.has_resolver(found) and resolve(found) is None:
                hint = f" (now {current_target(found)})" if current_target(found) != found else ""
                problems.append(f"{name}: {found} names nothing{hint}")
    return problems


CHECKS = (readme_sources, readme_arms, readme_budget_arms, readme_question_types, readme_groups_and_experiments,
          inline_group_lists, readme_numbers, study_experiments, experiment_job_counts, config_defaults_comments,
          help_groups, pipe_lists, readme_layout_registries, arm_targets, dotted_paths)


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.__name__)
def test_the_documented_list_is_what_it_lists(check):
    assert check(PROJECT) == []


# ---------------------------------------------------------------- drift planted: each check catches it


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    """The parts of the project the checks read, copied to drift."""
    for name in ("README.md", "docs", "conf", "src/bench", "benchmarks", "scripts", "tests/data/judge_calibration.jsonl"):
        source, target = PROJECT / name, tmp_path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__", "samples", "*.pyc"))
        else:
            shutil.copy(source, target)
    return tmp_path


def _edit(root: Path, name: str, old: str, new: str) -> None:
    text = read(root, name)
    assert old in text, (name, old)
    (root / name).write_text(text.replace(old, new, 1), encoding="utf-8")


def test_a_new_option_of_a_group_is_caught(copy):
    shutil.copy(copy / "conf" / "arm" / "full.yaml", copy / "conf" / "arm" / "newarm.yaml")
    shutil.copy(copy / "conf" / "judge" / "exact.yaml", copy / "conf" / "judge" / "newjudge.yaml")
    shutil.copy(copy / "conf" / "dataset" / "ops.yaml", copy / "conf" / "dataset" / "newdata.yaml")
    assert any("newarm" in p for p in readme_arms(copy))
    assert any("newdata" in p for p in readme_sources(copy))
    found = config_defaults_comments(copy)
    assert all(any(name in p for p in found) for name in ("newarm", "newjudge", "newdata")), found
    (copy / "conf" / "mechanism" / "newmech.yaml").write_text("{}\n")
    assert any("newmech" in p for p in inline_group_lists(copy))
    _edit(copy, "conf/hydra/help/bench.yaml", "  $APP_CONFIG_GROUPS", "  dataset=sample|local")  # a list by hand
    assert {p.split(":")[0] for p in help_groups(copy)} == {"--help", "--help template"}
    (copy / "conf" / "newgroup").mkdir()
    assert any("newgroup" in p for p in readme_groups_and_experiments(copy))


def test_a_new_question_type_or_profile_is_caught(monkeypatch):
    monkeypatch.setattr(bench.questions, "REGISTRY", {**bench.questions.REGISTRY, "new_type": _renamed("new_type")})
    assert any("new_type" in p for p in readme_question_types(PROJECT))
    assert len(readme_sources(PROJECT)) == len(options(PROJECT, "dataset"))  # every dataset's count and list
    assert any("calibration" in p or "question types" in p for p in readme_numbers(PROJECT))
    monkeypatch.setitem(PROFILES, "new_profile", PROFILES["generic"])
    assert any("new_profile" in p for p in pipe_lists(PROJECT))
    assert any("new_profile" in p for p in readme_layout_registries(PROJECT))
    classes = source_classes()
    monkeypatch.setattr(sys.modules[__name__], "source_classes", lambda: [*classes, classes[0]])
    assert any("source classes" in p for p in readme_layout_registries(PROJECT))


def _renamed(name: str) -> object:
    """A registered type under another name (for types that are not dataclasses)."""
    base = bench.questions.REGISTRY["call_count"]

    class Renamed:
        def __getattr__(self, attribute: str) -> object:
            return getattr(base, attribute)

    renamed = Renamed()
    renamed.name = name  # type: ignore[attr-defined]
    return renamed


def test_a_stale_count_or_grid_is_caught(copy):
    _edit(copy, "conf/experiment/peers.yaml", "inspect_summary  #", "inspect_summary,openai_compact  #")
    assert any("peers runs 13 jobs" in p for p in study_experiments(copy))
    assert any("openai_compact" in p for p in study_experiments(copy))
    assert any("peers.yaml says 12 jobs" in p for p in experiment_job_counts(copy))
    _edit(copy, "conf/experiment/nlatest.yaml", "arm.n: 10,20,40", "arm.n: 10,20,80")
    assert any("arm.n=10,20,80" in p for p in study_experiments(copy))
    _edit(copy, "conf/experiment/frontier.yaml", ",condenser_50pct", "")
    assert any("23 jobs" in p for p in readme_numbers(copy))


def test_a_broken_or_old_dotted_path_is_caught(copy):
    _edit(copy, "docs/study.md", "# The study", "# The study (bench.scoring.nothing, bench.judge.LLMJudge)")
    _edit(copy, "src/bench/policies/policy.py", '"""', '"""See bench.policies.nothing_here. ')
    found = dotted_paths(copy)
    assert any("bench.scoring.nothing" in p for p in found)
    assert any("bench.judge.LLMJudge" in p and "now bench.scoring.judge.LLMJudge" in p for p in found)
    assert any("bench.policies.nothing_here" in p for p in found)
    _edit(copy, "docs/decisions.md", "#", "# bench.judge.LLMJudge ")  # history may name old paths
    assert not any("decisions.md" in p for p in dotted_paths(copy))
