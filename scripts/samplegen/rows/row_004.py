"""Row 004: unittest with failures and errors; soft timeout, is_input continuation, C-c."""

from __future__ import annotations

from samplegen.expected import Accepted, Counts, FirstEdit, FirstError, SampleRow, synthetic_row
from samplegen.openhands import SYSTEM_PROMPT, TOOLS_NEW, finish, think, user_prompt
from samplegen.runners import lineno
from samplegen.trajectory import Repo, Traj

CRON = '''"""Tiny cron expression parser used by acme-scheduler."""

from __future__ import annotations

FIELDS = (
    ("minute", 0, 59),
    ("hour", 0, 23),
    ("day", 1, 31),
    ("month", 1, 12),
    ("weekday", 0, 6),
)


class CronError(ValueError):
    """Raised for malformed cron expressions."""


def _parse_field(text: str, lo: int, hi: int) -> list[int]:
    values: set[int] = set()
    for part in text.split(","):
        step = 1
        if "/" in part:
            part, step_text = part.split("/", 1)
            step = int(step_text)
        if part == "*":
            start, end = lo, hi
        elif "-" in part:
            a, b = part.split("-", 1)
            start, end = int(a), int(b)
        else:
            start = end = int(part)
        if start < lo or end > hi:
            raise CronError(f"value out of range: {part}")
        values.update(range(lo, end + 1, step))
    return sorted(values)


def parse(expr: str) -> dict[str, list[int]]:
    parts = expr.split()
    if len(parts) != len(FIELDS):
        raise CronError(f"expected {len(FIELDS)} fields, got {len(parts)}")
    return {
        name: _parse_field(part, lo, hi)
        for part, (name, lo, hi) in zip(parts, FIELDS)
    }
'''


def build() -> SampleRow:
    tid = "synthetic-004"
    root = "/workspace/acme__scheduler__0.9"
    repo = Repo(root, {"scheduler/cron.py": CRON})
    t = Traj(tid)
    t.system(SYSTEM_PROMPT)
    t.user(user_prompt(root, """
Cron steps: `*/0` crashes and ranges with a step start at the wrong value

1. `parse("*/0 * * * *")` fails with a bare `ValueError` from `range()`; it should raise
   `CronError` with a clear message.
2. `parse("1-30/10 * * * *")["minute"]` returns `[0, 10, 20, 30]`; it should be `[1, 11, 21]`.
"""))
    t.act(
        "",
        repo.sh(
            f"cd {root} && git log --oneline -3 && ls scheduler tests",
            "9f2c1e4 (HEAD -> main) Add weekday ranges\n"
            "41b7a0d Runner: wait for the lock before running jobs\n"
            "c3d9e12 Initial cron parser\n"
            "scheduler:\n__init__.py\ncron.py\nrunner.py\n\n"
            "tests:\n__init__.py\ntest_cron.py\ntest_runner.py",
        ),
    )
    t.act("", repo.view("scheduler/cron.py"))
    repro = f"cd {root} && python -c \"from scheduler.cron import parse; print(parse('*/0 * * * *'))\""
    range_line = lineno(CRON, "values.update(range(lo, end + 1, step))")
    parse_line = lineno(CRON, "name: _parse_field(part, lo, hi)")
    exc = "ValueError: range() arg 3 must not be zero"
    tb = (
        "Traceback (most recent call last):\n"
        '  File "<string>", line 1, in <module>\n'
        f'  File "{root}/scheduler/cron.py", line {parse_line - 3}, in parse\n'
        "    return {\n"
        "           ^\n"
        f'  File "{root}/scheduler/cron.py", line {parse_line}, in <dictcomp>\n'
        "    name: _parse_field(part, lo, hi)\n"
        "          ^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
        f'  File "{root}/scheduler/cron.py", line {range_line}, in _parse_field\n'
        "    values.update(range(lo, end + 1, step))\n"
        "                  ^^^^^^^^^^^^^^^^^^^^^^^^\n"
    )
    # exit-code marker glued to the exception line
    t.act("Reproducing the first problem.", repo.sh(repro, tb + exc, code=1, glue="code"))
    discover = f"cd {root} && python -m unittest discover -s tests -v"
    cron_tests = [
        ("test_every_minute", "ok"), ("test_hour_list", "ok"), ("test_out_of_range", "ok"),
        ("test_range_with_step", "FAIL"), ("test_step_zero", "ERROR"),
        ("test_weekday_range", "ok"), ("test_wrong_field_count", "ok"),
    ]
    partial = "\n".join(f"{n} (test_cron.CronTests.{n}) ... {r}" for n, r in cron_tests)
    partial += ("\ntest_job_order (test_runner.RunnerTests.test_job_order) ... ok"
                "\ntest_run_pending_waits_for_lock "
                "(test_runner.RunnerTests.test_run_pending_waits_for_lock) ... ")
    t.act("Let me run the whole test suite.", repo.sh(discover, partial, code=-1))
    t.act("It seems to hang; waiting for more output.", repo.sh_input("", "", -1))
    t.act(
        "The runner test is stuck waiting for a lock. Interrupting.",
        repo.sh_input(
            "C-c",
            "^C\nTraceback (most recent call last):\n"
            '  File "/usr/lib/python3.11/threading.py", line 1590, in _shutdown\n'
            "    lock.acquire()\n"
            "KeyboardInterrupt",
            130,
        ),
    )
    t.act(
        "",
        think(
            "test_runner hangs on a lock (unrelated to cron). Run only tests.test_cron, with a "
            "hard timeout. Expect test_step_zero to error (ValueError instead of CronError) and "
            "test_range_with_step to fail because range() starts at lo instead of start."
        ),
    )
    ut = f"cd {root} && timeout 60 python -m unittest tests.test_cron -v"
    lines = [f"{n} (tests.test_cron.CronTests.{n}) ... {r}" for n, r in cron_tests]
    sep1, sep2 = "=" * 70, "-" * 70
    lines += [
        "",
        sep1,
        "ERROR: test_step_zero (tests.test_cron.CronTests.test_step_zero)",
        sep2,
        "Traceback (most recent call last):",
        f'  File "{root}/tests/test_cron.py", line 38, in test_step_zero',
        '    parse("*/0 * * * *")',
        f'  File "{root}/scheduler/cron.py", line {parse_line - 3}, in parse',
        "    return {",
        "           ^",
        f'  File "{root}/scheduler/cron.py", line {parse_line}, in <dictcomp>',
        "    name: _parse_field(part, lo, hi)",
        "          ^^^^^^^^^^^^^^^^^^^^^^^^^^",
        f'  File "{root}/scheduler/cron.py", line {range_line}, in _parse_field',
        "    values.update(range(lo, end + 1, step))",
        "                  ^^^^^^^^^^^^^^^^^^^^^^^^",
        exc,
        "",
        sep1,
        "FAIL: test_range_with_step (tests.test_cron.CronTests.test_range_with_step)",
        sep2,
        "Traceback (most recent call last):",
        f'  File "{root}/tests/test_cron.py", line 30, in test_range_with_step',
        '    self.assertEqual(parse("1-30/10 * * * *")["minute"], [1, 11, 21])',
        "AssertionError: Lists differ: [0, 10, 20, 30] != [1, 11, 21]",
        "",
        "First differing element 0:",
        "0",
        "1",
        "",
        "First list contains 1 additional elements.",
        "First extra element 3:",
        "30",
        "",
        "- [0, 10, 20, 30]",
        "+ [1, 11, 21]",
        "",
        sep2,
        "Ran 7 tests in 0.003s",
        "",
        "FAILED (failures=1, errors=1)",
    ]
    t.act("", repo.sh(ut, "\n".join(lines), code=1))
    step_line = lineno(repo.files["scheduler/cron.py"], "step = int(step_text)")
    first_new = (
        "            if step <= 0:\n"
        '                raise CronError(f"step must be positive: {step_text}")'
    )
    first_edit_idx = t.index()
    t.act("First, reject non-positive steps.", repo.insert("scheduler/cron.py", step_line, first_new))
    t.act(
        "Then start the range at `start`.",
        repo.replace(
            "scheduler/cron.py",
            "        values.update(range(lo, end + 1, step))",
            "        values.update(range(start, end + 1, step))",
        ),
    )
    ok = [f"{n} (tests.test_cron.CronTests.{n}) ... ok" for n, _ in cron_tests]
    ok += ["", sep2, "Ran 7 tests in 0.002s", "", "OK"]
    run2_idx = t.index() + 1
    t.act("", repo.sh(ut, "\n".join(ok)))
    new_cron = repo.files["scheduler/cron.py"]
    raise_line = lineno(new_cron, "raise CronError(f\"step must be positive")
    t.act(
        "",
        repo.sh(
            repro,
            "Traceback (most recent call last):\n"
            '  File "<string>", line 1, in <module>\n'
            f'  File "{root}/scheduler/cron.py", line {lineno(new_cron, "name: _parse_field") - 3}, in parse\n'
            "    return {\n"
            "           ^\n"
            f'  File "{root}/scheduler/cron.py", line {lineno(new_cron, "name: _parse_field")}, in <dictcomp>\n'
            "    name: _parse_field(part, lo, hi)\n"
            "          ^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
            f'  File "{root}/scheduler/cron.py", line {raise_line}, in _parse_field\n'
            '    raise CronError(f"step must be positive: {step_text}")\n'
            "scheduler.cron.CronError: step must be positive: 0",
            code=1,
        ),
    )
    t.act("", finish("`*/0` now raises CronError and stepped ranges start at the range start."))
    expected = Accepted(
        conversion="final `finish` call without reply dropped",
        trailing=("finish",),
        files_changed=["scheduler/cron.py"],
        first_edit=FirstEdit(path="scheduler/cron.py", code=first_new, message_index=first_edit_idx,
                             note="an `insert` (insert_line)"),
        test_counts=Counts(command=ut, k=2, passed=7, failed=0, errors=0,
                           message_index=run2_idx,
                           note="run 1 (`Ran 7 tests` + `FAILED (failures=1, errors=1)`) prints no "
                                "passed count, so run 2 (`Ran 7 tests` + `OK`) is asked; the hung "
                                "discover run (exit -1, empty is_input, C-c) has no summary"),
        first_error=FirstError(command=repro, k=1, exception=exc,
                               note="exit-code marker glued to the exception line; the later "
                                    "KeyboardInterrupt (C-c) and CronError come after it"),
        dropped=[],
    )
    return synthetic_row(
        tid, "acme__scheduler-88", "acme/scheduler", True, "submit", repo.diff(), TOOLS_NEW, t.messages,
        "unittest summaries (failures and errors, not asked: no passed count printed; then OK), a soft-timeout command (exit -1) "
        "continued with an empty is_input command and stopped with C-c (not new runs), a glued "
        "exit-code marker and an `insert` first edit; all four questions kept.",
        expected,
    )
