"""The shipped synthetic sample exercises every question, drop and rejection rule."""

from __future__ import annotations

import json

from omegaconf import OmegaConf

from bench.questions import CODING_TYPES
from bench.selection import load_cases, sample_path


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
    assert refs["acme__jsonpath-212"]["test_counts"].reference == {"passed": 11, "failed": 1, "errors": 0}
    assert refs["acme__scheduler-88"]["test_counts"].reference == {"passed": 5, "failed": 1, "errors": 1}
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
