"""Evidence extractors: what a history shows about edits, command runs, tests, errors.

The same functions build the references from the full recorded history and let the
offline evidence reader answer from a shrunk view, which is why the full arm scores
100% by construction. They work on LangChain messages; a tool result that is missing
from the view or replaced by a placeholder has ``output=None`` (unknown).

    events = tool_events(case.messages)
    runs = command_runs(events)
    parse_test_counts(runs[0].output)
"""

from __future__ import annotations

import posixpath
import re
import shlex
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from bench.text import clean_output, content_text, is_placeholder

__all__ = [
    "ToolEvent",
    "CommandRun",
    "Edit",
    "tool_events",
    "command_runs",
    "repo_edits",
    "edited_files",
    "parse_test_counts",
    "parse_first_exception",
    "is_process_input",
    "relative_to_repo",
]


@dataclass
class ToolEvent:
    """One tool call and its (cleaned) result, if the result is known."""

    call_index: int
    result_index: int | None
    call_id: str
    name: str
    args: dict[str, Any]
    output: str | None
    cwd: str | None = None  # working directory reported after the previous bash command


@dataclass
class CommandRun:
    """One ``execute_bash`` command (inputs to a running process folded into it)."""

    command: str
    ordinal: int  # 1 for the first run of this exact command text
    call_index: int
    result_indices: list[int] = field(default_factory=list)
    output: str | None = None
    cwd: str | None = None


@dataclass
class Edit:
    """A change to the repository: an editor edit (citable) or a shell edit (not)."""

    kind: str  # "editor" | "shell" | "delete"
    path: str | None  # absolute path, None when a shell edit names no file
    code: str | None  # inserted code for editor edits
    command: str
    call_index: int
    result_index: int | None


_CWD_MARKER = re.compile(r"\[Current working directory: ([^\]\n]+)\]")


def tool_events(messages: list[BaseMessage]) -> list[ToolEvent]:
    """Tool calls in call order with their results (``None`` when absent or cleared)."""
    results: dict[str, tuple[int, str]] = {}
    for index, message in enumerate(messages):
        if isinstance(message, ToolMessage):
            results[message.tool_call_id] = (index, content_text(message.content))
    events: list[ToolEvent] = []
    cwd: str | None = None
    for index, message in enumerate(messages):
        if not isinstance(message, AIMessage):
            continue
        for call in message.tool_calls:
            result_index, raw = results.get(call["id"], (None, None))
            output = None if raw is None or is_placeholder(raw) else clean_output(raw)
            events.append(
                ToolEvent(index, result_index, call["id"], call["name"], call["args"], output, cwd)
            )
            if call["name"] == "execute_bash" and raw:
                found = _CWD_MARKER.findall(raw)
                if found:
                    cwd = found[-1].strip()
    return events


_INPUT_COMMANDS = {"", "c-c", "ctrl+c", "c-d", "ctrl+d", "c-z", "ctrl+z"}


def is_process_input(args: dict[str, Any]) -> bool:
    """Input sent to a running process (not a new command run)."""
    if str(args.get("is_input", "")).lower() == "true":
        return True
    return str(args.get("command", "")).strip().lower() in _INPUT_COMMANDS


def command_runs(events: list[ToolEvent]) -> list[CommandRun]:
    """``execute_bash`` runs in order, with ordinals per exact command text."""
    runs: list[CommandRun] = []
    seen: dict[str, int] = {}
    for event in events:
        if event.name != "execute_bash":
            continue
        if is_process_input(event.args):
            if runs and event.output is not None:
                last = runs[-1]
                last.output = event.output if last.output is None else f"{last.output}\n{event.output}"
                if event.result_index is not None:
                    last.result_indices.append(event.result_index)
            continue
        command = str(event.args.get("command", "")).strip()
        seen[command] = seen.get(command, 0) + 1
        runs.append(
            CommandRun(
                command=command,
                ordinal=seen[command],
                call_index=event.call_index,
                result_indices=[event.result_index] if event.result_index is not None else [],
                output=event.output,
                cwd=event.cwd,
            )
        )
    return runs


# --- edits -----------------------------------------------------------------------------

_EDIT_COMMANDS = {"create": "file_text", "str_replace": "new_str", "insert": "new_str"}
_EDITOR_FAILURES = (
    "no replacement was performed",
    "did not appear verbatim",
    "cannot overwrite",
    "invalid `path` parameter",
    "is not an absolute path",
    "parameter `",
    "invalid `insert_line` parameter",
    "multiple occurrences of old_str",
)


def _editor_failed(output: str | None) -> bool:
    """Editor reply says the edit was not applied (unknown output counts as applied)."""
    if output is None:
        return False
    head = output.lstrip()[:400].lower()
    return head.startswith("error") or any(marker in head for marker in _EDITOR_FAILURES)


def relative_to_repo(path: str | None, repo_root: str | None, cwd: str | None = None) -> str | None:
    """Repo-relative path, or None when the path lies outside the repository."""
    if not path or not repo_root:
        return None
    if not path.startswith("/"):
        if not cwd:
            return None
        path = posixpath.join(cwd, path)
    path = posixpath.normpath(path)
    root = posixpath.normpath(repo_root)
    if path == root or not path.startswith(root + "/"):
        return None
    return path[len(root) + 1 :]


_CD_PREFIX = re.compile(r"^\s*cd\s+(\S+)\s*(?:&&|;)")
_HEREDOC = re.compile(r"<<-?\s*['\"]?(\w+)['\"]?")
_SEPARATORS = {"&&", "||", ";", "|", "&", ";;", "(", ")"}


def _shell_lines(command: str) -> list[str]:
    """Command lines with heredoc bodies left out (their text is data, not commands)."""
    lines, delimiter = [], None
    for line in command.splitlines():
        if delimiter is not None:
            if line.strip() == delimiter:
                delimiter = None
            continue
        lines.append(line)
        match = _HEREDOC.search(line)
        if match:
            delimiter = match.group(1)
    return lines


def _tokens(line: str) -> list[str]:
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        return list(lexer)
    except ValueError:  # unbalanced quotes: give up on this line rather than guess
        return []


def _shell_targets(command: str, cwd: str | None) -> tuple[list[tuple[str, str]], str | None]:
    """(kind, path) pairs a shell command writes or deletes, and its effective cwd.

    Writes: redirects (``>``, ``>>``), ``tee``, ``sed -i``/``perl -i``; ``git apply`` and
    ``patch`` change the repository without naming one file (path ``""``). Deletes: ``rm``.
    """
    match = _CD_PREFIX.match(command)
    if match:
        target = match.group(1).strip("'\"")
        cwd = target if target.startswith("/") else posixpath.join(cwd or "/", target)
    targets: list[tuple[str, str]] = []
    for line in _shell_lines(command):
        tokens = _tokens(line)
        segments: list[list[str]] = [[]]
        for position, token in enumerate(tokens):
            if token in (">", ">>", ">|") and position + 1 < len(tokens):
                path = tokens[position + 1]
                if not path.startswith("/dev/") and path not in _SEPARATORS:
                    targets.append(("shell", path))
            if token in _SEPARATORS:
                segments.append([])
            elif not set(token) <= set("<>&|"):
                segments[-1].append(token)
        for seg in segments:
            targets.extend(_program_targets(seg))
    return targets, cwd


def _program_targets(seg: list[str]) -> list[tuple[str, str]]:
    if not seg:
        return []
    program, args = posixpath.basename(seg[0]), seg[1:]
    options = [a for a in args if a.startswith("-")]
    operands = [a for a in args if not a.startswith("-")]
    if program == "sed" and any(o == "--in-place" or (not o.startswith("--") and "i" in o) for o in options):
        files, scripts, skip = [], 0, False
        for arg in args:
            if skip:
                skip = False
            elif arg in ("-e", "--expression", "-f", "--file"):
                scripts, skip = scripts + 1, True
            elif arg.startswith("-e") and len(arg) > 2:
                scripts += 1
            elif not arg.startswith("-"):
                files.append(arg)
        return [("shell", f) for f in (files if scripts else files[1:])]
    if program == "perl" and any("i" in o and not o.startswith("--") for o in options):
        return [("shell", f) for f in operands[1:]]
    if program == "tee":
        return [("shell", f) for f in operands]
    if program == "rm":
        return [("delete", f) for f in operands]
    if program == "patch" or (program == "git" and operands[:1] == ["apply"]):
        return [("shell", "")]
    return []


def repo_edits(events: list[ToolEvent], repo_root: str | None) -> list[Edit]:
    """Applied changes inside the repository, in order."""
    edits: list[Edit] = []
    for event in events:
        if event.name == "str_replace_editor":
            command = event.args.get("command")
            if command not in _EDIT_COMMANDS or _editor_failed(event.output):
                continue
            path = event.args.get("path")
            if relative_to_repo(path, repo_root) is None:
                continue
            code = event.args.get(_EDIT_COMMANDS[command])
            edits.append(
                Edit("editor", path, code if isinstance(code, str) else None, command,
                     event.call_index, event.result_index)
            )
        elif event.name == "execute_bash" and not is_process_input(event.args):
            command = str(event.args.get("command", ""))
            targets, cwd = _shell_targets(command, event.cwd)
            for kind, path in targets:
                if path == "":  # git apply / patch: the repo changes, no single file named
                    if cwd and (cwd == repo_root or relative_to_repo(cwd, repo_root)):
                        edits.append(Edit("shell", None, None, command, event.call_index, event.result_index))
                    continue
                rel = relative_to_repo(path, repo_root, cwd)
                if rel is None:
                    continue
                absolute = posixpath.join(repo_root, rel)
                edits.append(Edit(kind, absolute, None, command, event.call_index, event.result_index))
    return edits


def edited_files(edits: list[Edit], repo_root: str | None) -> list[str]:
    """Repo-relative files the edits leave changed.

    ``rm`` only undoes files the agent created itself: whether another deleted path was
    tracked by git (build directories usually are not) cannot be told from the history.
    """
    changed: dict[str, bool] = {}  # path -> created by the agent
    for edit in edits:
        rel = relative_to_repo(edit.path, repo_root)
        if rel is None:
            continue
        if edit.kind == "delete":
            if changed.get(rel):
                del changed[rel]
        else:
            changed.setdefault(rel, edit.command == "create")
    return sorted(changed)


# --- test runner summaries -------------------------------------------------------------

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


def _pytest_counts(text: str) -> tuple[int, dict[str, int]] | None:
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
    return match.start(), counts


def _unittest_counts(text: str) -> tuple[int, dict[str, int]] | None:
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
    return ran.start(), {"passed": total - failed - errors - skipped, "failed": failed, "errors": errors}


def _maven_counts(text: str) -> tuple[int, dict[str, int]] | None:
    matches = list(_MAVEN.finditer(text))
    if not matches:
        return None
    totals = [m for m in matches if not m.group(5)]  # the summary line has no "Time elapsed"
    match = totals[0] if totals else matches[-1]
    run, failures, errors, skipped = (int(match.group(i)) for i in range(1, 5))
    return match.start(), {"passed": run - failures - errors - skipped, "failed": failures, "errors": errors}


def _gradle_counts(text: str) -> tuple[int, dict[str, int]] | None:
    match = _GRADLE.search(text)
    if not match:
        return None
    total, failed, skipped = int(match.group(1)), int(match.group(2)), int(match.group(3) or 0)
    return match.start(), {"passed": total - failed - skipped, "failed": failed}


def _junit_counts(text: str) -> tuple[int, dict[str, int]] | None:
    ok = _JUNIT_OK.search(text)
    failed = _JUNIT_FAILED.search(text)
    if not ok or not failed:
        return None
    return min(ok.start(), failed.start()), {"passed": int(ok.group(1)), "failed": int(failed.group(1))}


def _first_summary(output: str | None) -> tuple[int, dict[str, int]] | None:
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


def summary_line(output: str) -> str:
    """The line carrying the summary that :func:`parse_test_counts` read (an evidence key)."""
    hit = _first_summary(output)
    if hit is None:
        return ""
    start = output.rfind("\n", 0, hit[0]) + 1
    end = output.find("\n", hit[0])
    return output[start : end if end >= 0 else len(output)].strip()


# --- exceptions ------------------------------------------------------------------------

_TRACEBACK = "Traceback (most recent call last):"
_PY_EXCEPTION = re.compile(r"^([A-Za-z_][\w.]*)(?::[ \t]?(.*))?$")
_JAVA_EXCEPTION = re.compile(
    r"^\s*(?:Exception in thread \"[^\"]*\"\s+|Caused by:\s+)?"
    r"((?:[a-zA-Z_$][\w$]*\.)+[A-Za-z_$][\w$]*(?:Exception|Error))(?::\s*(.*?))?\s*$"
)


def _python_exception(lines: list[str], start: int) -> tuple[int, dict[str, str]] | None:
    for index in range(start + 1, len(lines)):
        line = lines[index]
        if not line.strip() or line[0] in " \t":
            continue
        match = _PY_EXCEPTION.match(line.rstrip())
        if match:
            return index, {"type": match.group(1), "message": (match.group(2) or "").strip()}
        return None
    return None


def parse_first_exception(output: str | None) -> tuple[dict[str, str], str] | None:
    """The first exception an output shows, and its line: a Python traceback's last line
    or a Java ``pkg.SomeException: message`` line."""
    if not output:
        return None
    lines = output.splitlines()
    for index, line in enumerate(lines):
        if line.strip() == _TRACEBACK:
            hit = _python_exception(lines, index)
            if hit:
                return hit[1], lines[hit[0]].strip()
        match = _JAVA_EXCEPTION.match(line)
        if match:
            return {"type": match.group(1), "message": (match.group(2) or "").strip()}, line.strip()
    return None
