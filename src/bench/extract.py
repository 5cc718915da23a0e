"""Evidence extractors: what a history shows about edits, command runs, tests, errors.

The same functions build the references from the full recorded history and let the
offline evidence reader answer from a shrunk view, which is why the full arm scores
100% by construction. They work on tool events (:func:`bench.history.tool_events`); a tool
result that is missing from the view or replaced by a placeholder has ``output=None``
(unknown). Which tool is a shell or an editor is the case's profile's business.

    events = tool_events(case.messages, case.profile)
    runs = command_runs(events, case.profile)
    parse_test_counts(runs[0].output)
"""

from __future__ import annotations

import difflib
import posixpath
import re
import shlex
from dataclasses import dataclass, field

from bench.history import ToolEvent, tool_events
from bench.profiles import Profile

__all__ = [
    "ToolEvent",
    "CommandRun",
    "Edit",
    "tool_events",
    "command_runs",
    "repo_edits",
    "edited_files",
    "added_lines",
    "changed_lines",
    "parse_test_counts",
    "parse_first_exception",
    "relative_to_repo",
]


@dataclass
class CommandRun:
    """One shell command run (inputs to a running process folded into it)."""

    command: str
    ordinal: int  # 1 for the first run of this exact command text
    call_index: int
    result_indices: list[int] = field(default_factory=list)
    output: str | None = None
    cwd: str | None = None


@dataclass
class Edit:
    """A change to the repository: an editor edit (citable) or a shell edit (not)."""

    kind: str  # "editor" | "shell" | "delete" | "undo"
    path: str | None  # absolute path, None when a shell edit names no file
    code: str | None  # inserted text for editor edits (new_str / file_text)
    command: str
    call_index: int
    result_index: int | None
    old: str | None = None  # the text a replacement removed (old_str)


def command_runs(events: list[ToolEvent], profile: Profile) -> list[CommandRun]:
    """Shell command runs in order, with ordinals per exact command text.

    Input sent to a running process is folded into that run; a call whose result says it
    never executed (the sandbox failed) is not a run.
    """
    runs: list[CommandRun] = []
    seen: dict[str, int] = {}
    for event in events:
        if not profile.is_shell(event.name) or profile.never_ran(event.raw):
            continue
        if profile.is_process_input(event.args):
            if runs and event.output is not None:
                last = runs[-1]
                last.output = event.output if last.output is None else f"{last.output}\n{event.output}"
                if event.result_index is not None:
                    last.result_indices.append(event.result_index)
            continue
        command = profile.command_of(event.args).strip()
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


def repo_edits(events: list[ToolEvent], repo_root: str | None, profile: Profile) -> list[Edit]:
    """Applied changes inside the repository, in order (an applied undo of the editor is an edit
    of kind ``undo``: it reverts the last editor edit of its file)."""
    edits: list[Edit] = []
    for event in events:
        if profile.is_editor(event.name):
            command = event.args.get(profile.editor_command_arg)
            argument = profile.edit_argument(command)
            undo = profile.editor_undo is not None and command == profile.editor_undo
            if (argument is None and not undo) or profile.editor_failed(event.output):
                continue
            path = event.args.get(profile.editor_path_arg)
            if relative_to_repo(path, repo_root) is None:
                continue
            if undo:
                edits.append(Edit("undo", path, None, command, event.call_index, event.result_index))
                continue
            code = event.args.get(argument)
            old = event.args.get(profile.editor_old_arg) if profile.editor_old_arg else None
            edits.append(
                Edit("editor", path, code if isinstance(code, str) else None, command,
                     event.call_index, event.result_index, old if isinstance(old, str) else None)
            )
        elif profile.is_shell(event.name) and not profile.is_process_input(event.args) \
                and not profile.never_ran(event.raw):
            command = profile.command_of(event.args)
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

    ``undo`` reverts the file's last editor edit: a file whose editor edits are all undone
    (and that no shell command wrote) is unchanged. ``rm`` only undoes files the agent
    created itself: whether another deleted path was tracked by git (build directories
    usually are not) cannot be told from the history.
    """
    editor: dict[str, int] = {}  # path -> editor edits not undone
    shell: set[str] = set()  # paths a shell command wrote
    created: dict[str, bool] = {}  # path -> created by the agent (first edit was a create)
    for edit in edits:
        rel = relative_to_repo(edit.path, repo_root)
        if rel is None:
            continue
        if edit.kind == "delete":
            if created.get(rel):
                editor.pop(rel, None)
                shell.discard(rel)
                created.pop(rel, None)
        elif edit.kind == "undo":
            if editor.get(rel):
                editor[rel] -= 1
        else:
            created.setdefault(rel, edit.command == "create")
            if edit.kind == "editor":
                editor[rel] = editor.get(rel, 0) + 1
            else:
                shell.add(rel)
    return sorted({p for p, n in editor.items() if n > 0} | shell)


def changed_lines(old: str | None, new: str) -> list[str]:
    """The lines of ``new`` a line diff against ``old`` marks as inserted or replaced (all of
    ``new`` without ``old``): inside the added block, the lines the edit really changed."""
    new_lines = new.split("\n")
    if old is None:
        return new_lines
    matcher = difflib.SequenceMatcher(a=old.split("\n"), b=new_lines, autojunk=False)
    return [line for tag, _, _, j1, j2 in matcher.get_opcodes() if tag in ("replace", "insert")
            for line in new_lines[j1:j2]]


def added_lines(old: str | None, new: str) -> str:
    """The lines an edit added: ``new`` without the leading and trailing lines it shares with
    ``old`` (for a replacement); all of ``new`` for an insertion or a new file."""
    if old is None:
        return new
    old_lines, new_lines = old.split("\n"), new.split("\n")
    start = 0
    while start < min(len(old_lines), len(new_lines)) and old_lines[start] == new_lines[start]:
        start += 1
    end = 0
    while (end < min(len(old_lines), len(new_lines)) - start
           and old_lines[-1 - end] == new_lines[-1 - end]):
        end += 1
    return "\n".join(new_lines[start: len(new_lines) - end])  # "" when the edit only removed lines


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
    r"((?:[a-zA-Z_$][\w$]*\.)+(?:[A-Za-z_$][\w$]*)?(?:Exception|Error))(?::\s*(.*?))?\s*$"
)
# Python reports a syntax error of the script it was asked to run without a traceback header:
#   File "x.py", line 3 / the line / a caret / SyntaxError: invalid syntax
_PY_SYNTAX = re.compile(r"^((?:SyntaxError|IndentationError|TabError))(?::[ \t]?(.*))?$")
_PY_FILE_LINE = re.compile(r'^\s*File "[^"]+", line \d+')


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
    """The first exception an output shows, and its line: a Python traceback's last line, a
    Python syntax error printed without a traceback header (after its ``File ..., line N``
    lines), or a Java ``pkg.SomeException: message`` line (also ``Exception in thread "main"
    java.lang.Exception: ...``)."""
    if not output:
        return None
    lines = output.splitlines()
    for index, line in enumerate(lines):
        if line.strip() == _TRACEBACK:
            hit = _python_exception(lines, index)
            if hit:
                return hit[1], lines[hit[0]].strip()
        match = _PY_SYNTAX.match(line.rstrip())
        if match and any(_PY_FILE_LINE.match(earlier) for earlier in lines[max(0, index - 6):index]):
            return {"type": match.group(1), "message": (match.group(2) or "").strip()}, line.strip()
        match = _JAVA_EXCEPTION.match(line)
        if match:
            return {"type": match.group(1), "message": (match.group(2) or "").strip()}, line.strip()
    return None
