"""Test-runner summaries in a command's output: pytest, unittest, Maven/Surefire, Gradle, JUnit.

    parse_test_counts(output)   # {"passed": 4, "failed": 1[, "errors": 2]} from the first summary, or None
    stated_test_counts(output)  # the same, or None when the summary does not print every count
    summary_line(output)        # the line that summary was read from
"""

from __future__ import annotations

import re

__all__ = ["parse_test_counts", "stated_test_counts", "summary_line"]

_PYTEST_WORDS = "passed|failed|errors?|skipped|xfailed|xpassed|warnings?|deselected|rerun"
_PYTEST = re.compile(
    rf"^=*\s*((?:\d+ (?:{_PYTEST_WORDS})(?:, )?)+)\s+in\s+[\d.]+\s*s(?:econds)?"
    r"(?:\s*\([^)]*\))?\s*=*\s*$",
    re.M,
)
_UNITTEST_RAN = re.compile(r"^Ran (\d+) tests? in [\d.]+s\s*$", re.M)
_UNITTEST_RESULT = re.compile(r"^(OK|FAILED)(?: \(([^)]*)\))?\s*$", re.M)
_MAVEN = re.compile(
    r"Tests run: (\d+), Failures: (\d+), Errors: (\d+), Skipped: (\d+)(, Time elapsed)?"
)
_GRADLE = re.compile(r"^(\d+) tests? completed, (\d+) failed(?:, (\d+) skipped)?", re.M)
_JUNIT_OK = re.compile(r"\[\s*(\d+) tests successful\s*\]")
_JUNIT_FAILED = re.compile(r"\[\s*(\d+) tests failed\s*\]")


# Each parser returns (position, counts, stated): ``stated`` is False when a count is derived by
# arithmetic the output does not show (unittest's passed = ran - failures - errors - skipped).


def _pytest_counts(text: str) -> tuple[int, dict[str, int], bool] | None:
    match = _PYTEST.search(text)
    if not match:
        return None
    counts = {"passed": 0, "failed": 0}
    for number, word in re.findall(rf"(\d+) ({_PYTEST_WORDS})", match.group(1)):
        if word in ("passed", "failed"):
            counts[word] = int(number)
        elif word.startswith("error"):
            counts["errors"] = int(number)
    if not re.search(r"\d+ (passed|failed|errors?)", match.group(1)):
        return None
    return match.start(), counts, True  # every count is printed (a count not printed is zero)


def _unittest_counts(text: str) -> tuple[int, dict[str, int], bool] | None:
    ran = _UNITTEST_RAN.search(text)
    if not ran:
        return None
    result = _UNITTEST_RESULT.search(text, ran.end())
    if not result:
        return None
    details = dict(
        (k.strip(), int(v)) for k, v in re.findall(r"([a-z ]+)=(\d+)", result.group(2) or "")
    )
    failed, errors = details.get("failures", 0), details.get("errors", 0)
    skipped = details.get("skipped", 0) + details.get("expected failures", 0)
    total = int(ran.group(1))
    counts = {"passed": total - failed - errors - skipped, "failed": failed, "errors": errors}
    return ran.start(), counts, failed == errors == skipped == 0  # "Ran N tests ... OK": N passed, as printed


def _maven_counts(text: str) -> tuple[int, dict[str, int], bool] | None:
    matches = list(_MAVEN.finditer(text))
    if not matches:
        return None
    totals = [m for m in matches if not m.group(5)]  # the summary line has no "Time elapsed"
    match = totals[0] if totals else matches[-1]
    run, failures, errors, skipped = (int(match.group(i)) for i in range(1, 5))
    counts = {"passed": run - failures - errors - skipped, "failed": failures, "errors": errors}
    return match.start(), counts, failures == errors == skipped == 0


def _gradle_counts(text: str) -> tuple[int, dict[str, int], bool] | None:
    match = _GRADLE.search(text)
    if not match:
        return None
    total, failed, skipped = int(match.group(1)), int(match.group(2)), int(match.group(3) or 0)
    return match.start(), {"passed": total - failed - skipped, "failed": failed}, failed == skipped == 0


def _junit_counts(text: str) -> tuple[int, dict[str, int], bool] | None:
    ok = _JUNIT_OK.search(text)
    failed = _JUNIT_FAILED.search(text)
    if not ok or not failed:
        return None
    return min(ok.start(), failed.start()), {"passed": int(ok.group(1)), "failed": int(failed.group(1))}, True


def _first_summary(output: str | None) -> tuple[int, dict[str, int], bool] | None:
    """Position and counts of the first test-runner summary in an output."""
    if not output:
        return None
    found = [
        hit
        for parser in (_pytest_counts, _unittest_counts, _maven_counts, _gradle_counts, _junit_counts)
        if (hit := parser(output)) is not None
    ]
    return min(found, key=lambda hit: hit[0]) if found else None


def parse_test_counts(output: str | None) -> dict[str, int] | None:
    """Counts from the first test-runner summary in an output, or None.

    pytest ``N failed, M passed``, unittest ``Ran N tests`` + ``OK``/``FAILED (...)``,
    Maven/Surefire ``Tests run: ...`` (the total line), Gradle ``N tests completed, M
    failed`` and the JUnit console launcher. ``errors`` is present when the runner reports
    errors apart.
    """
    hit = _first_summary(output)
    return hit[1] if hit else None


def stated_test_counts(output: str | None) -> dict[str, int] | None:
    """:func:`parse_test_counts` when the summary prints every count it gives (issue 31): None
    when a count would be derived by arithmetic the output does not show (unittest's passed =
    ran - failures - errors - skipped; Maven's and Gradle's passed with failures, errors or
    skips) or is negative ("Ran 0 tests ... FAILED (errors=1)")."""
    hit = _first_summary(output)
    if hit is None or not hit[2] or any(v < 0 for v in hit[1].values()):
        return None
    return hit[1]


def summary_line(output: str) -> str:
    """The line carrying the summary that :func:`parse_test_counts` read (an evidence key)."""
    hit = _first_summary(output)
    if hit is None:
        return ""
    start = output.rfind("\n", 0, hit[0]) + 1
    end = output.find("\n", hit[0])
    return output[start : end if end >= 0 else len(output)].strip()
