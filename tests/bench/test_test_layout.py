"""The tests are laid out like the code: ``tests/bench/<package>/`` for each package of ``src/bench/``, the
commands' tests and the whole-package ones at ``tests/bench/``, shared helpers in ``tests/support/``.

A test file in a folder no package has, a root test named after no command, a file named after an issue
or a pass (``hostile``, ``rough_edges``, ``issue12``, a trailing number) instead of what it tests, two test
files with one basename (pytest imports them by basename) and a test file importing another one are each
named in one line. The rules are derived from the tree (packages, commands), not from a list.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from paths import PROJECT, TESTS

# Root tests that are about the whole package rather than one command: its import structure, this layout,
# the commands the docs show, the pinned records, the extension guide, the benchmarks, a real model end to end.
WHOLE_PACKAGE = {"structure", "test_layout", "documented_commands", "documented_lists", "pins", "extending",
                 "throwaway_parts", "extension_contracts", "benchmarks",
                 "bench_coverage", "e2e_llama"}
# Words that name when or why a test was written, not what it tests.
HISTORY = re.compile(r"hostile|rough_edges|issue|newcomer|first_hour|second_pass|pass\d|round\d|phase\d|regression"
                     r"|\d+$")
ROOT_ENTRIES = {"conftest.py", "bench", "support", "data", "__pycache__"}


def layout_problems(tests: Path, src: Path) -> list[str]:
    """Every way the test tree under ``tests`` departs from the packages and commands of ``src``."""
    packages = {p.parent.relative_to(src) for p in src.rglob("__init__.py") if p.parent != src}
    commands = {p.stem for p in src.glob("*.py") if p.stem != "__init__"}
    problems = [f"{entry.name}: tests/ holds conftest.py, bench/, support/ and data/ only"
                for entry in sorted(tests.iterdir()) if entry.name not in ROOT_ENTRIES]
    files = sorted(p for p in tests.rglob("test_*.py") if "data" not in p.relative_to(tests).parts[:1])
    seen: dict[str, Path] = {}
    for path in files:
        where = path.relative_to(tests)
        stem = path.stem.removeprefix("test_")
        if where.parts[0] != "bench":
            problems.append(f"{where}: a test file lives under tests/bench/")
        else:
            folder = Path(*where.parts[1:-1])
            if folder.parts and folder not in packages:
                problems.append(f"{where}: no package src/bench/{folder.as_posix()}/ for its folder")
            if not folder.parts and stem not in WHOLE_PACKAGE and not any(
                    stem == c or stem.startswith(f"{c}_") for c in commands):
                problems.append(f"{where}: a root test is named test_<command>[_<behaviour>].py for a command "
                                f"({', '.join(sorted(commands))}) or is a whole-package test")
        if HISTORY.search(stem):
            problems.append(f"{where}: named after an issue or a pass, not after what it tests")
        if path.name in seen:
            problems.append(f"{where}: same basename as {seen[path.name].relative_to(tests)}")
        seen.setdefault(path.name, path)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            problems += [f"{where}: imports the test module {name} (shared code goes in tests/support/)"
                         for name in names if name.split(".")[0].startswith("test_")]
    for folder in sorted(p for p in (tests / "bench").rglob("*") if p.is_dir() and p.name != "__pycache__"):
        if folder.relative_to(tests / "bench") not in packages:
            problems.append(f"{folder.relative_to(tests)}: no package src/bench/{folder.relative_to(tests / 'bench')}/")
    problems += [f"{p.relative_to(tests)}: a helper module is not a test file" for p in (tests / "support").glob("test_*.py")]
    return problems


def test_the_tests_mirror_the_packages_and_commands():
    assert layout_problems(TESTS, PROJECT / "src" / "bench") == []


def test_a_misplaced_or_history_named_test_is_named(tmp_path):
    src, tests = tmp_path / "src", tmp_path / "tests"
    for module in ("__init__.py", "main.py", "report.py", "cache/__init__.py", "cache/sqlite.py", "store/__init__.py"):
        (src / module).parent.mkdir(parents=True, exist_ok=True)
        (src / module).write_text("")
    good = ["bench/test_main.py", "bench/test_report_screenshot.py", "bench/test_structure.py",
            "bench/cache/test_sqlite.py", "support/builders.py", "data/real/test_fixture_row.py", "conftest.py"]
    bad = {"test_loose.py": "lives under tests/bench/",
           "bench/nosuchpkg/test_thing.py": "no package src/bench/nosuchpkg/",
           "bench/test_helpers.py": "a root test is named test_<command>",
           "bench/cache/test_hostile.py": "named after an issue or a pass",
           "bench/cache/test_sqlite2.py": "named after an issue or a pass",
           "bench/cache/test_issue12_prune.py": "named after an issue or a pass",
           "bench/test_report_rough_edges.py": "named after an issue or a pass",
           "bench/test_main_newcomer.py": "named after an issue or a pass",
           "support/test_fake.py": "a helper module is not a test file",
           "helpers.py": "tests/ holds conftest.py, bench/, support/ and data/ only"}
    for name in [*good, *bad]:
        (tests / name).parent.mkdir(parents=True, exist_ok=True)
        (tests / name).write_text("")
    (tests / "bench" / "cache" / "test_admin.py").write_text("from test_sqlite import job\n")
    (tests / "bench" / "test_report.py").write_text("import test_main\n")
    for twin in ("cache", "store"):
        (tests / "bench" / twin).mkdir(exist_ok=True)
        (tests / "bench" / twin / "test_stats.py").write_text("")
    problems = layout_problems(tests, src)
    for name, reason in bad.items():
        assert any(p.startswith(f"{name}: ") and reason in p for p in problems), (name, problems)
    assert "bench/cache/test_admin.py: imports the test module test_sqlite (shared code goes in tests/support/)" \
        in problems
    assert "bench/test_report.py: imports the test module test_main (shared code goes in tests/support/)" in problems
    assert "bench/store/test_stats.py: same basename as bench/cache/test_stats.py" in problems
    assert not [p for p in problems if p.startswith(tuple(good))], problems
