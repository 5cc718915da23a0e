"""The structure stays as drawn: a layered, acyclic import graph (import-linter contracts in
pyproject.toml), dependencies through their public APIs only, modules of one concept each."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

from paths import PROJECT

SRC = PROJECT / "src" / "bench"
MAX_LINES = 350
# Modules above MAX_LINES, each one concept (README, "Layout"):
ONE_CONCEPT = {
    "cli/argv.py": "the command line checked before Hydra writes anything: secrets, paths, groups, habits from "
                   "other tools, the answering stack, Hydra's errors as one line",
    "policies/compact.py": "the compaction replay: micro_compact, collapse, auto_compact and the view, call by call",
    "llm/client.py": "the model client: cache, retries, limiter, accounting of one call, and its construction",
    "llm/limiter.py": "the concurrency limiters (fixed, adaptive AIMD with pacing) and their accounting",
    "llm/batch.py": "the Batch API round: gathering, submission, polling, the ledger, each request retried",
    "runner/pipeline.py": "a job's phases on worker threads: views, answers, judgements and their records",
    "questions/tool_output.py": "the tool_output type: a call's printed output as a reference, its candidates and "
                                "their grading (captions, markup, tracebacks, paths)",
    "questions/messages.py": "comparing an error message with an answer: exception types, a word or number changed "
                             "(numbers under each other's words), the opposite cause, the message in substance",
    "questions/write_actions.py": "the write_actions type: the changes as a reference and their grading, read from "
                                  "JSON or prose (a tool's words, its verb and values, the order the answer states)",
    "study/jobs.py": "reading job directories: records, config, status, label, the metrics recomputed from them",
    "stats/intervals.py": "the uncertainty of the figures: intervals of shares and paired differences (the estimand's "
                "one-way method, the two-way one behind stats.generalize_types), the sign-flip test, t quantiles",
}


def test_the_import_graph_keeps_its_contracts():
    linter = Path(sys.executable).parent / "lint-imports"
    done = subprocess.run([str(linter)], capture_output=True, text=True, cwd=SRC.parents[1], timeout=120)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout


def _private_uses(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    third_party: set[str] = set()
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if not alias.name.startswith("bench"):
                    third_party.add(alias.asname or alias.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom) and node.module and not node.module.startswith("bench") and node.level == 0:
            if node.module != "__future__" and any(part.startswith("_") for part in node.module.split(".")):
                found.append(f"from {node.module} import ...")
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.startswith("__"):
                    found.append(f"from {node.module} import {alias.name}")
                else:
                    third_party.add(alias.asname or alias.name)
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")
                and isinstance(node.value, ast.Name) and node.value.id in third_party):
            found.append(f"{node.value.id}.{node.attr}")
    text = path.read_text(encoding="utf-8")
    found += [m.group(0) for m in re.finditer(r"getattr\([^,()]+, \"_[a-z]\w*\"", text)]
    return found


def test_no_private_name_of_a_dependency_is_used():
    offenders = {str(p.relative_to(SRC)): uses for p in SRC.rglob("*.py") if (uses := _private_uses(p))}
    assert not offenders, offenders


def test_modules_hold_one_concept():
    long = {str(p.relative_to(SRC)): len(p.read_text(encoding="utf-8").splitlines()) for p in SRC.rglob("*.py")}
    too_long = {name: n for name, n in long.items() if n > MAX_LINES and name not in ONE_CONCEPT}
    assert not too_long, f"split these by concept, or name their one concept in ONE_CONCEPT: {too_long}"
    assert all(long.get(name, 0) > MAX_LINES for name in ONE_CONCEPT), "an allowed module shrank: drop it"


COMMANDS = {"main", "estimate", "report", "compare", "rescore", "calibrate", "download", "dataset"}


def _root_entries() -> list[str]:
    return sorted(p.name + ("/" if p.is_dir() else "") for p in SRC.iterdir()
                  if p.name != "__pycache__" and (p.suffix == ".py" or p.is_dir()))


def test_the_root_holds_commands_and_the_public_api_only():
    """A root module is a command (``python -m bench.X``: a ``main`` run under ``__main__``) or ``__init__``."""
    modules = {p.stem for p in SRC.glob("*.py")} - {"__init__"}
    assert modules == COMMANDS, f"move these into the package of their concept: {sorted(modules - COMMANDS)}"
    for name in COMMANDS:
        tree = ast.parse((SRC / f"{name}.py").read_text(encoding="utf-8"))
        defined = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
        defined |= {a.asname or a.name for n in tree.body if isinstance(n, ast.ImportFrom) for a in n.names}
        assert "main" in defined, name
        assert 'if __name__ == "__main__"' in (SRC / f"{name}.py").read_text(encoding="utf-8"), name
    packages = [p for p in SRC.iterdir() if p.is_dir() and p.name not in {"__pycache__", "samples"}]
    assert all((p / "__init__.py").exists() or p.name == "prompts" for p in packages), packages


def test_no_two_modules_share_a_name():
    seen: dict[str, list[str]] = {}
    for path in SRC.rglob("*.py"):
        if path.name not in {"__init__.py", "__main__.py"}:
            seen.setdefault(path.name, []).append(str(path.relative_to(SRC)))
    assert not {name: where for name, where in seen.items() if len(where) > 1}


def test_the_readme_layout_lists_the_root_as_it_is_in_layer_order():
    """README's "Layout": every root module and package once, nothing else, packages top-down by layer."""
    import tomllib

    readme = (SRC.parents[1] / "README.md").read_text(encoding="utf-8")
    block = readme.split("## Layout", 1)[1].split("```", 2)[1]
    listed = [m.group(1) for line in block.splitlines() if (m := re.match(r"^  (\S+)\s", line))]
    assert sorted(listed) == _root_entries(), (sorted(set(listed) ^ set(_root_entries())))
    assert len(listed) == len(set(listed))
    layers = tomllib.loads((SRC.parents[1] / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"][
        "contracts"][0]["layers"]
    rank = {name.strip(): i for i, layer in enumerate(layers) for name in layer.split("|")}
    order = [rank[name.rstrip("/")] for name in listed if name.endswith("/") and name.rstrip("/") in rank]
    assert order == sorted(order), "README's packages are not listed in the order of the import layers"
    assert {name.rstrip("/") for name in listed if name.endswith("/")} - set(rank) <= {"samples", "prompts"} | set()


def test_mypy_checks_the_whole_package():
    """``uv run mypy`` (in .ci/run, without paths) reads ``[tool.mypy] files``: the whole package, not a list of
    seams a new module could be left out of, with partial signatures refused."""
    import tomllib

    mypy = tomllib.loads((SRC.parents[1] / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    assert "src/bench" in [path.rstrip("/") for path in mypy["files"]]
    assert not [path for path in mypy["files"] if path.startswith("src/bench/")], "a sub-path is covered already"
    assert mypy["check_untyped_defs"] and mypy["warn_unused_ignores"] and mypy["disallow_incomplete_defs"]
    ci = (SRC.parents[1] / ".ci" / "run").read_text(encoding="utf-8")
    assert re.search(r"^uv run mypy\s*(#.*)?$", ci, re.M), "CI runs mypy on [tool.mypy] files, with no paths of its own"


def test_every_package_has_its_place_in_the_layers():
    import tomllib

    layers = tomllib.loads((SRC.parents[1] / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"][
        "contracts"][0]["layers"]
    placed = {name.strip() for layer in layers for name in layer.split("|")}
    code = {p.stem for p in SRC.glob("*.py")} | {p.name for p in SRC.iterdir() if (p / "__init__.py").exists()}
    assert code - {"__init__"} - placed == set()


def _lint_with(tmp_path: Path, planted: dict[str, str]) -> str:
    """lint-imports over a copy of the package with extra modules planted in it."""
    import shutil

    root = tmp_path / "copy"
    shutil.copytree(SRC, root / "src" / "bench", ignore=shutil.ignore_patterns("__pycache__", "samples"))
    shutil.copy(SRC.parents[1] / "pyproject.toml", root / "pyproject.toml")
    for name, text in planted.items():
        path = root / "src" / "bench" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if not (path.parent / "__init__.py").exists():
            (path.parent / "__init__.py").write_text("")
        path.write_text(text)
    linter = Path(sys.executable).parent / "lint-imports"
    env = {**__import__("os").environ, "PYTHONPATH": str(root / "src")}
    done = subprocess.run([str(linter), "--no-cache"], capture_output=True, text=True, cwd=root, env=env, timeout=300)
    return done.stdout


def test_a_planted_vendor_import_breaks_its_contract_with_no_list_to_keep(tmp_path):
    """Vendor containment is "only these may import X": a new module anywhere else is refused without any
    edit to pyproject.toml, a new module inside the allowed part is accepted."""
    out = _lint_with(tmp_path, {
        "scoring/planted_sdk.py": "import openai\n",
        "brand_new/planted_plot.py": "import matplotlib\n",
        "llm/planted_ok.py": "import anthropic\n",
    })
    assert "bench.scoring.planted_sdk -> openai" in out, out[-3000:]
    assert "bench.brand_new.planted_plot -> matplotlib" in out, out[-3000:]
    assert "planted_ok" not in out, out[-3000:]


def test_the_rename_map_knows_every_module_of_the_packages_that_took_an_old_name():
    """``bench.config.X``: an old attribute of bench/config.py unless X is a module of the package now."""
    from bench.core.renames import _SUBMODULES

    for package, modules in _SUBMODULES.items():
        folder = SRC / package.split(".", 1)[1]
        assert set(modules) == {p.stem for p in folder.glob("*.py")} - {"__init__"}, package
