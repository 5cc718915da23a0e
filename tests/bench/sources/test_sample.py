"""The shipped synthetic sample exercises every question, drop and rejection rule, and is what its
generator (``scripts/make_sample.py``, package ``scripts/samplegen``) builds."""

from __future__ import annotations

import dataclasses
import json

from omegaconf import OmegaConf

from bench.data.selection import load_cases, sample_path
from bench.questions import CODING_TYPES
from bench.sources import LocalFile
from samplegen.check import bench_problems, check_sample, row_problems
from samplegen.cli import OUT_JSONL, render, stale
from samplegen.expected import Accepted, Counts, FirstEdit, FirstError, SampleRow, synthetic_row
from samplegen.openhands import SYSTEM_PROMPT, TOOLS_NEW, finish, user_prompt
from samplegen.rows import build_rows
from samplegen.runners import pytest_sep
from samplegen.trajectory import Repo, Traj


def _selection():
    return load_cases(OmegaConf.create({"source": "sample", "limit": None, "filters": {}}))


def test_sample_is_marked_synthetic():
    rows = [json.loads(line) for line in sample_path().read_text().splitlines()]
    assert rows and all(r["synthetic"] is True and r["trajectory_id"].startswith("synthetic-") for r in rows)


def test_sample_outcomes():
    selection = _selection()
    cases = {c.instance_id: c for c in selection.cases}
    assert {r.instance_id for r in selection.rejected} == {"acme__shapes-7", "acme__mailer-12", "acme__cache-5"}
    reasons = " | ".join(r.reason for r in selection.rejected)
    assert "not valid JSON" in reasons and "has no call" in reasons and "has no result" in reasons

    refs = {iid: {q.type: q for q in c.questions} for iid, c in cases.items()}
    widgets = refs["acme__widgets-101"]
    assert widgets["files_changed"].reference == ["tests/test_core.py", "widgets/core.py"]
    assert widgets["first_edit"].reference["path"] == "widgets/core.py"
    assert widgets["test_counts"].reference == {"passed": 4, "failed": 1}
    assert widgets["test_counts"].params["ordinal"] == 2
    assert widgets["first_error"].reference == {"type": "KeyError", "message": "'width'"}

    ledger = cases["acme__ledger-57"]
    assert [d.type for d in ledger.dropped_questions if d.type in CODING_TYPES] == ["first_edit"]  # sed -i came first
    # runs whose summary prints no passed count are not asked (issue 31): the all-pass runs are
    assert refs["acme__jsonpath-212"]["test_counts"].reference == {"passed": 12, "failed": 0, "errors": 0}
    assert refs["acme__jsonpath-212"]["test_counts"].params["ordinal"] == 2
    assert refs["acme__scheduler-88"]["test_counts"].reference == {"passed": 7, "failed": 0, "errors": 0}
    assert "test_counts" not in refs["acme__units-31"]  # Gradle's "5 tests completed, 1 failed" only
    assert refs["acme__slugify-19"]["first_error"].params["ordinal"] == 2
    assert refs["acme__units-31"]["first_error"].reference == {
        "type": "java.lang.NumberFormatException", "message": 'For input string: "12.5"'}
    assert refs["acme__geo-64"]["first_error"].reference["type"] == "geo.distance.ProjectionError"
    cli = cases["acme__cli-240"]
    assert {d.type for d in cli.dropped_questions if d.type in CODING_TYPES} == {
        "files_changed", "test_counts", "first_error"}


def test_sample_covers_parallel_calls_think_tracker_and_long_outputs():
    cases = _selection().cases
    calls = [c for case in cases for m in case.messages for c in getattr(m, "tool_calls", [])]
    assert {"think", "task_tracker", "str_replace_editor", "execute_bash"} <= {c["name"] for c in calls}
    assert any(len(getattr(m, "tool_calls", [])) > 1 for case in cases for m in case.messages)
    assert any(m.type == "tool" and len(m.content) > 2000 for case in cases for m in case.messages)


def test_the_shipped_sample_is_what_the_generator_builds_and_reads_as_its_rows_expect():
    """`scripts/make_sample.py --check` (also run by .ci/run): a drift between the generator and the
    shipped files, or between a row's declared outcome and what bench makes of it, fails here."""
    rows = build_rows()
    assert stale(*render(rows)) == [], "run: uv run python scripts/make_sample.py"
    assert check_sample(rows, OUT_JSONL, datasets=False) == []


def _throwaway_row() -> SampleRow:
    """A sample row as docs/extending.md ("A sample row") writes one: its template, a module's build()."""
    tid, root = "synthetic-999", "/workspace/acme__tiny__0.1"
    repo = Repo(root, {"tiny/core.py": "def double(x):\n    return x + x\n"})
    t = Traj(tid)
    t.system(SYSTEM_PROMPT)
    t.user(user_prompt(root, "double() should accept strings of digits."))
    t.act("", repo.view("tiny/core.py"))
    repro = f"cd {root} && python -c 'from tiny.core import double; print(double(\"2\"))'"
    t.act("", repo.sh(repro, "Traceback (most recent call last):\n  File \"<string>\", line 1, in <module>\n"
                             "ValueError: not a number", code=1))
    edit_at = t.index()
    t.act("", repo.replace("tiny/core.py", "    return x + x", "    return int(x) * 2"))
    pytest_cmd = f"cd {root} && python -m pytest -q"
    run_at = t.index() + 1  # the run's result
    t.act("", repo.sh(pytest_cmd, "..F\n" + pytest_sep("1 failed, 2 passed in 0.01s"), code=1))
    t.act("", repo.sh(pytest_cmd, "...\n" + pytest_sep("3 passed in 0.01s")))
    t.act("", finish("double() now accepts digit strings."))
    expected = Accepted(
        conversion="final `finish` call without reply dropped", trailing=("finish",),
        files_changed=["tiny/core.py"],
        first_edit=FirstEdit(path="tiny/core.py", code="    return int(x) * 2", message_index=edit_at),
        test_counts=Counts(command=pytest_cmd, k=1, passed=2, failed=1, errors=0, message_index=run_at),
        first_error=FirstError(command=repro, k=1, exception="ValueError: not a number"),
        dropped=[],
    )
    return synthetic_row(tid, "acme__tiny-1", "acme/tiny", True, "submit", repo.diff(), TOOLS_NEW, t.messages,
                         "A throwaway row.", expected)


def test_a_throwaway_sample_row_is_its_module_and_its_line_in_rows(tmp_path):
    rows = build_rows() + [_throwaway_row()]  # its line in samplegen.rows.ROWS
    jsonl, md = render(rows)
    assert "| `synthetic-999` (13 msgs) | A throwaway row. | accepted; " in md and "### `synthetic-999` — acme/tiny" in md
    assert row_problems(rows[-1].row) == []
    path = tmp_path / "sample.jsonl"
    path.write_text(jsonl, encoding="utf-8")
    selection = load_cases(LocalFile(path=str(path)))  # the rows as a user's jsonl, through `datasets`
    assert bench_problems(rows, selection, "local") == []
    # the check is not vacuous: a wrong count, trailing drop, edited file or kept type each fail it
    row = rows[-1]
    expected = row.expected
    assert isinstance(expected, Accepted) and expected.test_counts and expected.first_edit
    wrong = [
        dataclasses.replace(expected, test_counts=dataclasses.replace(expected.test_counts, passed=3)),
        dataclasses.replace(expected, trailing=()),
        dataclasses.replace(expected, first_edit=dataclasses.replace(expected.first_edit, path="tiny/other.py")),
        dataclasses.replace(expected, first_error=None, dropped=[("first_error", "none")]),
    ]
    for expectation in wrong:
        problems = bench_problems([*rows[:-1], SampleRow(row.row, expectation)], selection, "local")
        assert problems and all("synthetic-999" in p for p in problems), problems
