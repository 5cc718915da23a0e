"""The exact judge applies the one grading rule (README, "Grading"): a rule per test."""

from __future__ import annotations

import json

import pytest

from bench.calibrate import main as calibrate_main

from grading import EDIT, FILES, ROOT, grade
from paths import DATA

CALIBRATION = DATA / "judge_calibration.jsonl"
HOLDOUT = DATA / "judge_calibration_holdout.jsonl"





@pytest.mark.parametrize("text, verdict", [
    ('["src/widgets/core.py", "tests/test_core.py"]', "correct"),
    (f"I changed {ROOT}/src/widgets/core.py and ./tests/test_core.py.", "correct"),  # absolute and ./ paths
    ("core.py and test_core.py", "correct"),  # unambiguous bare names
    ("I think it was src/widgets/core.py and tests/test_core.py, but I'm not sure.", "correct"),  # hedged claim
    ("src/widgets/core.py, tests/test_core.py and setup.py", "wrong"),  # an extra file
    ("lib/widgets/core.py and tests/test_core.py", "wrong"),  # right name, wrong directory
    ("src/widgets/core.py (widgets.core.size, released in 2022.6) and tests/test_core.py", "correct"),
    ("I don't remember which files I changed.", "abstained"),
    ("Unknown.", "abstained"),
])
def test_files_changed(text, verdict):
    assert grade("files_changed", FILES, text) == verdict


@pytest.mark.parametrize("text, verdict", [
    (json.dumps({"path": "src/widgets/core.py", "code": "width = cfg.get('width', 80)"}), "correct"),  # changed only
    ("In `src/widgets/core.py`:\n```python\ndef size(cfg):\n        width = cfg.get('width', 80)\n"
     "        return width\n```", "correct"),  # context too, other indentation
    ("In `src/widgets/core.py`:\n```python\nwidth = cfg.get('width', 80)\nprint(width)\n```", "wrong"),  # invented
    ("In `lib/core.py`:\n```python\nwidth = cfg.get('width', 80)\n```", "wrong"),  # wrong file
    ("In `src/widgets/core.py`:\n```python\nwidth = cfg.get('width', 8)\n```", "wrong"),
])
def test_first_edit(text, verdict):
    assert grade("first_edit", EDIT, text) == verdict


@pytest.mark.parametrize("reference, text, verdict", [
    ({"passed": 21, "failed": 0}, "All 21 tests passed, none failed.", "correct"),
    ({"passed": 21, "failed": 0}, "**Passed:** 21\n**Failed:** 0", "correct"),
    ({"passed": 3, "failed": 1, "errors": 2}, "3 passed and 3 failed", "correct"),  # failed includes errors
    ({"passed": 3, "failed": 1, "errors": 2}, "3 passed, 3 failed, 0 errors", "wrong"),  # errors named: must equal
    ({"passed": 3, "failed": 1, "errors": 2}, "3 passed, 1 failed, 2 errors", "correct"),
    ({"passed": 4, "failed": 1}, "Probably 4 passed and 2 failed.", "wrong"),
    ({"passed": 4, "failed": 1}, "No idea.", "abstained"),
])
def test_test_counts(reference, text, verdict):
    assert grade("test_counts", reference, text) == verdict


@pytest.mark.parametrize("reference, text, verdict", [
    ({"type": "KeyError", "message": "'width'"}, "A KeyError: 'width'", "correct"),
    ({"type": "java.lang.NullPointerException", "message": 'Cannot invoke "String.length()" because "s" is null'},
     'NullPointerException: "s" was null when String.length() was invoked', "correct"),  # paraphrase, keys kept
    ({"type": "AssertionError", "message": ""}, "A KeyError, not an AssertionError.", "wrong"),
    ({"type": "AssertionError", "message": ""}, "It raised an AssertionError (no message).", "correct"),
    ({"type": "ValueError", "message": "invalid literal for int() with base 10: 'x'"},
     "Either a ValueError or a TypeError.", "wrong"),
    ({"type": "ValueError", "message": "bad"}, "The run's output isn't in my context anymore.", "abstained"),
])
def test_first_error(reference, text, verdict):
    assert grade("first_error", reference, text) == verdict


@pytest.mark.parametrize("qtype, reference, text, verdict", [
    ("tool_output", "Speed Test Result: 275.00 Mbps (Excellent).", "275 Mbps, rated Excellent.", "correct"),
    ("tool_output", "Speed Test Result: 275.00 Mbps (Excellent).", "275 Kbps (Excellent)", "wrong"),
    ("tool_output", "Roaming: No\nData: Yes", "Roaming: Yes\nData: Yes", "wrong"),  # a value under its own label
    ("tool_output", "Speed Test Result: 275.00 Mbps (Excellent).", "I can no longer see that result.", "abstained"),
    ("tool_value", 3.2, "data_used_gb was 3.20 GB", "correct"),
    ("tool_value", False, "No, roaming was not enabled.", "correct"),
    ("tool_value", "C1001", "It was C1002.", "wrong"),
    ("tool_value", 65.0, "Either 65 or 50, I'm not sure.", "wrong"),
    ("call_count", 31, "thirty-one", "correct"),
    ("call_count", 3, "I called it twice.", "wrong"),
    ("call_count", 3, "I didn't keep count.", "abstained"),
    ("first_tool_error", {"tool": "resume_line", "message": "Error: Line must be suspended to resume"},
     "resume_line said the line must be suspended before it can be resumed", "correct"),
    ("first_tool_error", {"tool": "resume_line", "message": "Error: Line must be suspended to resume"},
     "refuel_data returned: Error: Line must be suspended to resume", "wrong"),  # another tool named
])
def test_domain_neutral_types(qtype, reference, text, verdict):
    assert grade(qtype, reference, text) == verdict


def test_an_answer_without_a_claim_is_abstained():
    assert grade("test_counts", {"passed": 1, "failed": 0}, "The tests ran.") == "abstained"
    assert grade("call_count", 23, "Out of the 70-odd steps I can't say how many were edits.") == "abstained"
    assert grade("first_error", {"type": "AssertionError", "message": ""}, "No exception was printed.") == "wrong"


FRESH = DATA / "judge_calibration_fresh.jsonl"
LATER = [DATA / f"judge_calibration_fresh{n}.jsonl" for n in range(2, 16)]


# The exact judge was tuned on the first two files (the second was held out until it had been
# measured once: 82.9%), so they gate at 0.95. Each fresh file was measured once unseen (fresh 88.2%,
# fresh2 87.9%, fresh3 85.8%, fresh4 91.9%, fresh5 98.4%, fresh6 197/227 = 86.8%, fresh7 256/278 = 92.1%, fresh8
# 366/402 = 91.0%, fresh9 320/343 = 93.3%, fresh10 315/325 = 96.9%, fresh11 291/309 = 94.2%, fresh12 315/339 = 92.9%, fresh13 607/638 = 95.1%,
# fresh14 574/608 = 94.4%, fresh15 445/454 = 98.0%: the honest figures,
# tests/data/README.md); all
# but fresh5 and fresh15 were then tuned on by the classes of their disagreements (97.9-100% after, fresh5 98.4% and
# fresh15 98.0% untouched). These floors only catch regressions.
@pytest.mark.parametrize("path, floor", [(CALIBRATION, "0.95"), (HOLDOUT, "0.95"), (FRESH, "0.95"),
                                         *((path, "0.95") for path in LATER)])
def test_the_exact_judge_agrees_with_human_verdicts(path, floor, capsys):
    if not path.exists():
        pytest.skip(f"{path.name} not present")
    assert calibrate_main([str(path), "judge=exact", "--fail-under", floor]) == 0
    assert capsys.readouterr().out.strip().splitlines()[-1].startswith("agreement ")
