"""Row 001: clean python row, all four questions, test_counts on the 2nd run."""

from __future__ import annotations

from samplegen.expected import Accepted, Counts, FirstEdit, FirstError, SampleRow, synthetic_row
from samplegen.openhands import SYSTEM_PROMPT, TOOLS_NEW, plan, think, user_prompt
from samplegen.runners import lineno, pytest_line, pytest_sep
from samplegen.trajectory import PYTHON, Call, Repo, Traj

WIDGETS_CORE = '''"""Core widget model for acme-widgets."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

DEFAULT_WIDTH = 80
DEFAULT_HEIGHT = 24
MIN_SIZE = 1


class WidgetError(ValueError):
    """Raised when a widget is configured with invalid values."""


@dataclass
class Widget:
    name: str
    width: int = DEFAULT_WIDTH
    height: int = DEFAULT_HEIGHT
    tags: list[str] = field(default_factory=list)

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> "Widget":
        """Build a widget from a config mapping (as loaded from widgets.toml)."""
        name = config.get("name", "widget")
        width = config["width"]
        height = config.get("height", DEFAULT_HEIGHT)
        tags = list(config.get("tags", []))
        return cls(name=name, width=int(width), height=int(height), tags=tags)

    def resize(self, width: int | None = None, height: int | None = None) -> "Widget":
        """Return a copy of the widget with a new size."""
        new_width = self.width if width is None else width
        new_height = self.height if height is None else height
        if new_width < MIN_SIZE or new_height < MIN_SIZE:
            raise WidgetError(f"bad size: {new_width}x{new_height}")
        return Widget(self.name, new_width, new_height, list(self.tags))

    def area(self) -> int:
        return self.width * self.height

    def describe(self) -> str:
        tag_text = ", ".join(sorted(self.tags)) or "-"
        return f"{self.name} [{self.width}x{self.height}] tags: {tag_text}"


def load_widgets(configs: list[Mapping[str, Any]]) -> list[Widget]:
    """Build widgets from a list of config mappings, skipping disabled ones."""
    widgets = []
    for config in configs:
        if config.get("disabled"):
            continue
        widgets.append(Widget.from_config(config))
    return widgets


def total_area(widgets: list[Widget]) -> int:
    return sum(w.area() for w in widgets)
'''

WIDGETS_TEST = '''import pytest

from widgets.core import Widget, WidgetError, load_widgets, total_area


def test_defaults():
    w = Widget("main")
    assert (w.width, w.height) == (80, 24)


def test_resize_keeps_tags():
    w = Widget("main", tags=["a"]).resize(width=100)
    assert w.width == 100 and w.tags == ["a"]


def test_resize_rejects_zero():
    with pytest.raises(WidgetError):
        Widget("main").resize(width=0)


def test_describe():
    assert Widget("x", 2, 3, ["b", "a"]).describe() == "x [2x3] tags: a, b"


def test_load_widgets_skips_disabled():
    configs = [
        {"name": "a", "width": 10, "height": 2},
        {"name": "b", "disabled": True},
        {"name": "c", "height": 5},
    ]
    widgets = load_widgets(configs)
    assert [w.name for w in widgets] == ["a", "c"]
    assert total_area(widgets) == 10 * 2 + 80 * 5
'''


def build() -> SampleRow:
    tid = "synthetic-001"
    root = "/workspace/acme__widgets__1.0"
    repo = Repo(root, {"widgets/core.py": WIDGETS_CORE, "tests/test_core.py": WIDGETS_TEST})
    t = Traj(tid)
    t.system(SYSTEM_PROMPT)
    t.user(user_prompt(root, """
Widget.from_config crashes when `width` is missing

Loading a `widgets.toml` entry without a `width` key raises `KeyError: 'width'` instead of
falling back to the default width (80), although `height` already falls back to its
default. Widths written as strings with a unit, e.g. `"120px"`, should also be accepted.
"""))
    t.act(
        "I'll start by planning the work.",
        plan(tid, [
            ("Explore widgets.core and the tests", "in_progress", "Find where width is read"),
            ("Reproduce the KeyError", "todo", "Small script outside the repo"),
            ("Fix from_config", "todo", "Default width and 'px' suffix"),
            ("Run tests and add a regression test", "todo", "tests/test_core.py"),
        ]),
    )
    # parallel tool call: two calls, two results
    grep_cmd = f'grep -rn "config\\[" {root}/widgets'
    width_line = lineno(WIDGETS_CORE, 'width = config["width"]')
    t.act(
        "Let me look at the repository layout and where config keys are read.",
        repo.view_dir([
            "README.md", "pyproject.toml", "tests/", "tests/__init__.py", "tests/test_core.py",
            "widgets/", "widgets/__init__.py", "widgets/core.py",
        ]),
        repo.sh(grep_cmd, f'{root}/widgets/core.py:{width_line}:        width = config["width"]'),
    )
    t.act("", repo.view("widgets/core.py"))
    t.act(
        "",
        think(
            "from_config reads config['width'] directly while height uses config.get with a "
            "default. Fix: use config.get('width', DEFAULT_WIDTH) and strip a trailing 'px' "
            "before int(). load_widgets calls from_config, so it fails for any entry without "
            "a width too."
        ),
    )
    scratch = (
        "import sys\n"
        f'sys.path.insert(0, "{root}")\n'
        "from widgets.core import Widget\n\n"
        'print(Widget.from_config({"name": "panel", "height": 10}).describe())\n'
        'print(Widget.from_config({"name": "panel", "width": "120px"}).describe())\n'
    )
    t.act(
        "Let me write a reproduction script outside the repository.",
        Call(
            "str_replace_editor",
            {"command": "create", "path": "/tmp/scratch.py", "file_text": scratch},
            "File created successfully at: /tmp/scratch.py",
        ),
    )
    run_scratch = "python /tmp/scratch.py"
    t.act(
        "",
        repo.sh(
            run_scratch,
            "Traceback (most recent call last):\n"
            '  File "/tmp/scratch.py", line 5, in <module>\n'
            '    print(Widget.from_config({"name": "panel", "height": 10}).describe())\n'
            "          ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
            f'  File "{root}/widgets/core.py", line {width_line}, in from_config\n'
            '    width = config["width"]\n'
            "            ~~~~~~^^^^^^^^^\n"
            "KeyError: 'width'",
            code=1,
        ),
    )
    pytest_cmd = f"cd {root} && python -m pytest tests/test_core.py -v"
    t.act("Now the existing tests.", repo.sh(pytest_cmd, f"{PYTHON}: No module named pytest", 1))
    t.act(
        "",
        repo.sh(
            "pip install -q pytest",
            "WARNING: Running pip as the 'root' user can result in broken permissions and "
            "conflicting behaviour with the system package manager. It is recommended to use "
            "a virtual environment instead: https://pip.pypa.io/warnings/venv",
        ),
    )
    load_line = lineno(WIDGETS_CORE, "widgets.append(Widget.from_config(config))")
    test_line = lineno(WIDGETS_TEST, "widgets = load_widgets(configs)")
    names = ["test_defaults", "test_resize_keeps_tags", "test_resize_rejects_zero",
             "test_describe", "test_load_widgets_skips_disabled"]
    results = ["PASSED"] * 4 + ["FAILED"]
    header = [
        pytest_sep("test session starts"),
        f"platform linux -- Python 3.11.9, pytest-8.3.3, pluggy-1.5.0 -- {PYTHON}",
        "cachedir: .pytest_cache",
        f"rootdir: {root}",
        "configfile: pyproject.toml",
    ]
    lines = header + [f"collecting ... collected {len(names)} items", ""]
    for i, (n, r) in enumerate(zip(names, results, strict=True), 1):
        lines.append(pytest_line(f"tests/test_core.py::{n} {r}", f"[{100 * i // len(names):3d}%]"))
    half = "_ " * 39 + "_"
    lines += [
        "",
        pytest_sep("FAILURES"),
        pytest_sep("test_load_widgets_skips_disabled", "_"),
        "",
        "    def test_load_widgets_skips_disabled():",
        "        configs = [",
        '            {"name": "a", "width": 10, "height": 2},',
        '            {"name": "b", "disabled": True},',
        '            {"name": "c", "height": 5},',
        "        ]",
        ">       widgets = load_widgets(configs)",
        "",
        f"tests/test_core.py:{test_line}: ",
        half,
        "",
        ("configs = [{'height': 2, 'name': 'a', 'width': 10}, {'disabled': True, 'name': 'b'}, "
        "{'height': 5, 'name': 'c'}]"),
        "",
        "    def load_widgets(configs: list[Mapping[str, Any]]) -> list[Widget]:",
        '        """Build widgets from a list of config mappings, skipping disabled ones."""',
        "        widgets = []",
        "        for config in configs:",
        '            if config.get("disabled"):',
        "                continue",
        ">           widgets.append(Widget.from_config(config))",
        "",
        f"widgets/core.py:{load_line}: ",
        half,
        "",
        "cls = <class 'widgets.core.Widget'>, config = {'height': 5, 'name': 'c'}",
        "",
        "    @classmethod",
        '    def from_config(cls, config: Mapping[str, Any]) -> "Widget":',
        '        """Build a widget from a config mapping (as loaded from widgets.toml)."""',
        '        name = config.get("name", "widget")',
        '>       width = config["width"]',
        "E       KeyError: 'width'",
        "",
        f"widgets/core.py:{width_line}: KeyError",
        pytest_sep("short test summary info"),
        "FAILED tests/test_core.py::test_load_widgets_skips_disabled - KeyError: 'width'",
        pytest_sep("1 failed, 4 passed in 0.31s"),
    ]
    run2_idx = t.index() + 1
    t.act("", repo.sh(pytest_cmd, "\n".join(lines), code=1))
    # failed str_replace (single quotes), then a view, then the real first edit
    t.act(
        "The failing test confirms the issue. Let me fix `from_config`.",
        repo.replace_fail(
            "widgets/core.py",
            "        width = config['width']",
            "        width = config.get('width', DEFAULT_WIDTH)",
        ),
    )
    t.act("The file uses double quotes; let me check the exact lines.",
          repo.view("widgets/core.py", [width_line - 3, width_line + 4]))
    first_new = (
        '        width = config.get("width", DEFAULT_WIDTH)\n'
        "        if isinstance(width, str):\n"
        '            width = width.strip().removesuffix("px")'
    )
    first_edit_idx = t.index()
    t.act("", repo.replace("widgets/core.py", '        width = config["width"]', first_new))
    t.act("", repo.sh(run_scratch, "panel [80x10] tags: -\npanel [120x24] tags: -"))
    test_add = (
        "\n\n"
        "def test_from_config_defaults_width_and_accepts_px():\n"
        '    assert Widget.from_config({"name": "p"}).width == 80\n'
        '    assert Widget.from_config({"name": "p", "width": "120px"}).width == 120'
    )
    n_test_lines = repo.files["tests/test_core.py"].rstrip("\n").count("\n") + 1
    t.act("Adding a regression test.", repo.insert("tests/test_core.py", n_test_lines, test_add))
    names6 = names + ["test_from_config_defaults_width_and_accepts_px"]
    lines = header + [f"collecting ... collected {len(names6)} items", ""]
    for i, n in enumerate(names6, 1):
        lines.append(pytest_line(f"tests/test_core.py::{n} PASSED", f"[{100 * i // 6:3d}%]"))
    lines += ["", pytest_sep("6 passed in 0.05s")]
    t.act("", repo.sh(pytest_cmd, "\n".join(lines)))
    t.act(
        "",
        plan(tid, [
            ("Explore widgets.core and the tests", "done", "width read with config['width']"),
            ("Reproduce the KeyError", "done", "/tmp/scratch.py"),
            ("Fix from_config", "done", "config.get + 'px' suffix"),
            ("Run tests and add a regression test", "done", "6 passed"),
        ]),
    )
    t.say(
        "`Widget.from_config` now falls back to `DEFAULT_WIDTH` when `width` is missing and "
        "accepts widths such as `\"120px\"`. I added a regression test; all 6 tests pass."
    )
    patch = repo.diff()
    expected = Accepted(
        conversion="nothing dropped (ends with a plain assistant message)",
        trailing=(),
        files_changed=["tests/test_core.py", "widgets/core.py"],
        first_edit=FirstEdit(path="widgets/core.py", code=first_new, message_index=first_edit_idx),
        test_counts=Counts(command=pytest_cmd, k=2, passed=4, failed=1, errors=0,
                           message_index=run2_idx),
        first_error=FirstError(command=run_scratch, k=1, exception="KeyError: 'width'"),
        dropped=[],
    )
    return synthetic_row(
        tid, "acme__widgets-101", "acme/widgets", True, "submit", patch, TOOLS_NEW, t.messages,
        "Clean python row with a parallel call, think, task_tracker, a failed str_replace and "
        "an out-of-repo /tmp create before the first repo edit, and long outputs; all four "
        "questions kept, test_counts on the 2nd run of the pytest command.",
        expected,
    )
