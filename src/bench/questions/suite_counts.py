"""``test_counts``: the k-th time the agent ran a command, how many tests passed and failed?

Reference ``{"passed", "failed"[, "errors"]}`` from the first command run whose output has a
test-runner summary (pytest, unittest, Maven/Surefire, Gradle, JUnit console) that prints every
count (never derived by arithmetic the output does not show, never negative: a unittest
``FAILED (failures=1)`` run is skipped); ``errors`` only when the runner reports errors apart. Runs are counted per exact command text;
input sent to a running command is not a run, nor is a call that never executed.
"""

from __future__ import annotations

import re
from typing import Any

from bench.extract import parse_test_counts, stated_test_counts, summary_line
from bench.profiles import Profile
from bench.questions.matching import ABSTAIN_PATTERNS
from bench.questions.outputs import outcome_claim
from bench.questions.question_type import CaseFacts, QuestionType, make_question, ordinal
from bench.questions.values import ORDINAL, numbers, ordinal_number, same_number
from bench.store.schema import DroppedQuestion, Question

__all__ = ["TEST_COUNTS", "run_question_text"]

NAME = "test_counts"

_TENS = r"(?:twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)(?:[- ](?:one|two|three|four|five|six|seven|eight|nine))?"
_WORD = (r"(\d+|no|none|neither|both|single|sole|zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
         rf"[a-z]+teen|{_TENS})")
# "passed: 3" forms first: in "Passed: 21 / Failed: 0" the 21 is not a failure count; "4 of them passed" (of the
# tests a run collected) counts as "4 passed"
_OF_THEM = r"(?:\w+[ \t]+|of[ \t]+(?:them|those|these)[ \t]+)?"  # a word between, or "of them"
_COUNT = {
    "passed": [r"\b(?:passed|passing|successful|succeeded)[ \t]*(?:[:=][ \t]*|(?=\d))(\d+)\b(?![ \t]*(?:tests?[ \t]+)?(?:fail|error))",
               rf"{_WORD}[ \t]+{_OF_THEM}(?:tests?[ \t]+|cases?[ \t]+)?(?:passed|pass(?:es|ing)?|succeeded|successful|ok)\b"],
    "failed": [r"\b(?:failed|failures?|failing)[ \t]*(?:[:=][ \t]*|(?=\d))(\d+)\b(?![ \t]*(?:tests?[ \t]+)?(?:pass|error))",
               rf"{_WORD}[ \t]+{_OF_THEM}(?:tests?[ \t]+|cases?[ \t]+)?(?:failed|fail(?:s|ing|ures?)?)\b"],
    "errors": [r"\berrors?[ \t]*(?:[:=][ \t]*|(?=\d))(\d+)\b(?![ \t]*(?:tests?[ \t]+)?(?:pass|fail))",
               rf"{_WORD}[ \t]+{_OF_THEM}(?:tests?[ \t]+)?errors?(?:ed)?\b"],
}
_NONE_FAILED = re.compile(r"\b(?:none|nothing|no (?:tests? )?(?:failures?|failed|fails))\b[^.\n]{0,20}?(?:failed|failures?)?"
                          r"|\bno failures\b|\bnone (?:of them )?failed\b|\b(?:0|zero) fail", re.I)
# a run's total with all of it passing: "it ran 1 test and it passed", "ran three tests; they all passed"
# ("ran a single test and that test passed": "that test" is the one it ran)
_RAN_ALL = re.compile(rf"\b(?:ran|run|executed|collected)\s+(?:a\s+)?{_WORD}\s+(?:\w+\s+)?tests?\b[^.;\n]{{0,30}}?"
                      r"(?:\band\b|[,;:])\s*"
                      r"(?:(?:it|they|all(?: of them)?|both|each|every one|(?:that|the) tests?)\s+(?:all\s+)?"
                      r"(?:passed|succeeded|ok)\b"
                      # unittest's own "Ran 1 test ... OK": "OK" alone ends the clause
                      r"|ok\b(?=\s*(?:[.;!\n]|$)))", re.I)
_ALL_PASSED = re.compile(r"\ball\s+(?:of\s+the\s+)?(\d+|[a-z]+)?\s*(?:tests?\s+)?(?:passed|pass(?:es|ing)?|succeeded)\b"
                         r"|\b(?:everything|every test|all of them|all tests)\s+(?:\w+\s+)?(?:passed|succeeded)\b", re.I)
# the run's total told beside "everything passed" ("Everything passed - 13 tests", "all green: 13 tests"): that many
_TOTAL = re.compile(rf"\b{_WORD}\s+tests?\b(?!\s+(?:passed|failed|errored|ran))", re.I)


# the failing tests named instead of counted ("test_load failed", "test_a and TestB::test_c failed"): one each
_TEST_ID = r"`?(?:[\w./-]+::)*(?=\w*(?:_|[a-z][A-Z]))\w*[Tt]est\w*(?:\[[^\]\s]*\])?`?"  # a name, not "the test"
_NAMED_FAILED = re.compile(rf"(?<![\w`])({_TEST_ID}(?:\s*(?:,|\band\b|&)\s*{_TEST_ID})*)\s+(?:both\s+)?"
                           r"(?:failed|fails|(?:was |were )?failing)\b")  # "still had test_x failing"


def run_question_text(template: str, params: dict[str, Any]) -> str:
    return template.format(nth=ordinal(params["ordinal"]), command=params["command"])


def _number(word: str) -> int | None:
    found = numbers(word)
    if word.lower() in ("no", "none", "neither"):
        return 0
    if word.lower() == "both":
        return 2
    if word.lower() in ("single", "sole"):  # "the single test failed": one
        return 1
    return int(found[0]) if found else None


_TABLE_ROW = re.compile(r"^\s*\|(.+)\|\s*$")


def table_counts(text: str) -> dict[str, int]:
    """Counts of a markdown table: a header row naming passed / failed / errors over a row of numbers
    (also a table written on one line, rows run together)."""
    cells = [c.strip().strip("*_` ").lower() for c in text.replace("||", "|\n|").split("|")]
    cells = [c for c in cells if c and not set(c) <= set("-: ")]
    keys = {"passed": ("passed", "pass", "passing"), "failed": ("failed", "fail", "failures", "failing"),
            "errors": ("errors", "error", "errored")}
    header = [next((k for k, names in keys.items() if c in names), None) for c in cells]
    for start in range(len(cells)):
        width = 0
        while start + width < len(cells) and header[start + width] is not None:
            width += 1
        if width < 2:
            continue
        values = cells[start + width: start + 2 * width]
        if len(values) == width and all(v.isdigit() for v in values):
            return {name: int(value) for name, value in zip(header[start: start + width], values, strict=True)
                    if name is not None}  # every one named (the width counts named cells)
    return {}


def table_rows(text: str) -> list[tuple[str, dict[str, int]]]:
    """The rows of a markdown table of several runs (``| run | passed | failed |`` over ``| 2nd | 7 | 0 |``): each row's
    label (its cells that are not counts, lower case) and its counts; [] for a table without a label column."""
    lines = [[c.strip().strip("*_` ").lower() for c in line.strip().strip("|").split("|")]
             for line in text.replace("||", "|\n|").splitlines() if _TABLE_ROW.match(line)]
    lines = [cells for cells in lines if not all(set(c) <= set("-: ") for c in cells)]
    keys = {"passed": ("passed", "pass", "passing"), "failed": ("failed", "fail", "failures", "failing"),
            "errors": ("errors", "error", "errored")}
    for at, cells in enumerate(lines):
        header = [next((k for k, names in keys.items() if c in names), None) for c in cells]
        if sum(h is not None for h in header) < 2 or all(h is not None for h in header):
            continue
        rows = []
        for row in lines[at + 1:]:
            if len(row) != len(header) or not all(row[i].isdigit() for i, h in enumerate(header) if h is not None):
                break
            label = " ".join(c for c, h in zip(row, header, strict=True) if h is None)
            rows.append((label, {h: int(c) for c, h in zip(row, header, strict=True) if h is not None}))
        return rows
    return []


def asked_row(text: str, nth: int) -> dict[str, int] | None:
    """The counts of the table row labelled with the asked run (the 2nd: "2nd", "second", "run 2", "#2"), when a table
    of several runs has exactly one such row."""
    rows = table_rows(text)
    if len(rows) < 2:
        return None
    named = [counts for label, counts in rows
             if any(ordinal_number(w) == nth for w in re.findall(r"\w+", label))
             or re.search(rf"(?:\b(?:run|attempt|try)\s*|#){nth}\b", label)]
    return named[0] if len(named) == 1 else None


def text_counts(text: str) -> dict[str, int]:
    """Test counts a free-text answer states (``passed``, ``failed``, ``errors``)."""
    if "|" in text and (table := table_counts(text)):
        return table
    counts: dict[str, int] = {}
    for key, patterns in _COUNT.items():
        for pattern in patterns:
            match = re.search(pattern, text, re.I)
            if match and (value := _number(match.group(1))) is not None:
                counts[key] = value
                break
    if "failed" not in counts and _NONE_FAILED.search(text):
        counts["failed"] = 0
    if "failed" not in counts and (named := _NAMED_FAILED.search(text)):
        counts["failed"] = len(re.findall(_TEST_ID, named.group(1)))
    ran_all = _RAN_ALL.search(text)
    if ran_all and (value := _number(ran_all.group(1))) is not None:
        counts.setdefault("passed", value)
        counts.setdefault("failed", 0)
    every = _ALL_PASSED.search(text)
    if every:
        if "passed" not in counts and every.group(1) and (value := _number(every.group(1))) is not None:
            counts["passed"] = value
        sentence = re.split(r"[.;\n]", text[every.start():])[0] + " " + re.split(r"[.;\n]", text[: every.start()])[-1]
        if "passed" not in counts and (total := _TOTAL.search(sentence)) and (value := _number(total.group(1))) is not None:
            counts["passed"] = value  # "Everything passed - 13 tests": 13 passed
        counts.setdefault("failed", 0)
    return counts


class TestCounts:
    name = NAME
    template = ("The {nth} time you ran `{command}`, how many tests passed and how many failed? "
                "Report errors separately if the test runner did.")
    answer_format = {"passed": "number of tests passed", "failed": "number failed", "errors?": "number of errors, if the run reported errors"}  # the typed answer's keys (bench.questions.answers)
    answer_tokens = 30  # a typical typed answer's output tokens (bench.estimate)
    rubric = ("Test counts: passed and failed equal the reference. When the reference has `errors` and the "
              "answer does not name errors, its failed count must include them (failed + errors: an answer "
              "that counts the errored tests nowhere is wrong); when the answer names errors they must equal. A count the answer leaves out is zero only when it says "
              "so or implies it (\"all 21 tests passed\" = 21 passed, 0 failed; \"it ran 1 test and it passed\" = 1 passed, "
              "0 failed). A runner's own summary quoted counts as the runner reports it (Maven's `Tests run: 12, "
              "Failures: 0, Errors: 0, Skipped: 0` = 12 passed). An answer with no count that says how the run went "
              "(\"I only remember the test didn't pass\") is a vague claim: wrong. Failing tests named instead of "
              "counted (\"4 passed; test_load failed\", \"test_load still failing; the other 4 passed\") are one failure each. \"Everything passed - 13 tests\" is 13 passed, "
              "0 failed; \"the single test failed\" is 0 passed, 1 failed; \"Ran 10 tests, all OK\" and \"Ran 10 tests, OK\" are 10 passed, 0 failed; "
              "\"6 of them passed\" is 6 passed; \"it ran a single test and that test passed\" is 1 passed, 0 failed; "
              "\"the run went fine\", \"everything was green\" or \"it still failed\" (no count) is a vague claim: wrong. In a table of several runs the row of the run "
              "the question asks for (\"2nd\" for the 2nd time) is the answer's.")

    def text(self, target: dict[str, Any]) -> str:
        return run_question_text(self.template, target)

    def applies(self, profile: Profile) -> bool:
        return bool(profile.shell_tools)

    def build(self, facts: CaseFacts) -> Question | DroppedQuestion:
        derived = False
        for run in facts.runs:
            counts = stated_test_counts(run.output)
            if counts is None:
                derived = derived or parse_test_counts(run.output) is not None
            else:
                params = {"command": run.command, "ordinal": run.ordinal}
                return make_question(
                    facts.case, NAME, run_question_text(self.template, params), counts,
                    [run.command, summary_line(run.output or "")], [run.call_index, *run.result_indices],
                    params=params, target={"tool": facts.profile.shell_tools[0], **params})
        if derived:
            return DroppedQuestion(NAME, "no test-runner summary prints its counts (passed would be derived by "
                                         "arithmetic the output does not show)")
        return DroppedQuestion(NAME, "no test-runner summary in any command output")

    def spans(self, reference: dict[str, int]) -> None:
        return None  # counts: only the run's messages show them

    def claim(self, parsed: Any, text: str, repo_root: str | None) -> dict[str, int] | None:
        if isinstance(parsed, dict) and any(k in parsed for k in ("passed", "failed")):
            got = {}
            for key in ("passed", "failed", "errors"):
                if key in parsed:
                    try:
                        got[key] = int(parsed[key])
                    except (TypeError, ValueError):
                        return None
            return got
        # markdown emphasis (**Passed:** 21, __3__): not the underscores inside a test's name
        counts = text_counts(re.sub(r"\*+|(?<!\w)_+|_+(?!\w)", "", text))
        if "passed" not in counts and (quoted := stated_test_counts(text)) is not None:
            counts = quoted  # a runner's own summary quoted ("Tests run: 12, Failures: 0, ..."), read as the runner's
        return counts if ("passed" in counts or "failed" in counts) else None

    def claim_question(self, question: Question, parsed: Any, text: str, repo_root: str | None) -> dict[str, int] | None:
        """The claim, where the answer is a table of several runs: the row of the run the question asks for (its
        ordinal, "The 2nd time you ran ..."), read from the row's label."""
        asked = re.match(rf"the ({ORDINAL}) time\b", question.question, re.I)
        nth = (question.params or {}).get("ordinal") or (ordinal_number(asked.group(1)) if asked else None)
        if parsed is None and nth and "|" in text and (row := asked_row(text, int(nth))) is not None:
            return row
        return self.claim(parsed, text, repo_root)

    def vague(self, text: str) -> str | None:
        """An answer that states no count but says how the run went ("I can't see it; I only remember the test
        didn't pass") claims something of it, vaguely: wrong (it states no count)."""
        said = outcome_claim(text, ABSTAIN_PATTERNS)
        return f"a vague claim about the run ({said!r}), not its counts" if said else None

    def grade(self, reference: dict[str, int], claim: dict[str, int], repo_root: str | None) -> tuple[bool, str]:
        want_errors = int(reference.get("errors", 0))
        passed_ok = same_number(claim.get("passed", 0), reference["passed"])
        if "errors" in claim:
            failed_ok = same_number(claim.get("failed", 0), reference["failed"]) and \
                same_number(claim["errors"], want_errors)
        else:  # the errored tests are counted somewhere: as failures when the answer names no errors
            failed_ok = same_number(claim.get("failed", 0), reference["failed"] + want_errors)
        if passed_ok and failed_ok:
            return True, "same counts"
        wanted = ", ".join(f"{k} {reference[k]}" for k in ("passed", "failed", "errors") if k in reference)
        stated = ", ".join(f"{k} {v}" for k, v in claim.items())
        return False, f"expected {wanted}; the answer says {stated}"

    def answer_keys(self, reference: dict[str, int]) -> list[str]:
        return [f"{reference['passed']} passed", f"{reference['failed']} failed"]


TEST_COUNTS: QuestionType[dict[str, int], dict[str, int]] = TestCounts()  # its reference, its claim
