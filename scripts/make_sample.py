#!/usr/bin/env python3
"""Generate the shipped sample ``src/bench/samples/sample.jsonl`` (and its README).

Every row is a SYNTHETIC OpenHands-style trajectory written for this project: not a
real agent run, no real repository (all repositories are fictional ``acme/*``). Rows use
the column schema of the Hugging Face dataset ``nebius/SWE-rebench-openhands-trajectories``
(``trajectory_id``, ``instance_id``, ``repo``, ``resolved``, ``exit_status``,
``model_patch``, ``tools``, ``trajectory``) plus ``synthetic`` (always true) and ``notes``.

Each row exercises one part of the case conversion and reference extraction (SPEC 1.2,
1.3) and has a well-defined expected outcome, listed in ``EXPECTED`` below and written
to ``src/bench/samples/README.md``.

The output is deterministic: no randomness, no clock. Call ids are derived from a hash
of the row id and call number; file edits are applied to in-memory file contents, so
editor outputs, tracebacks' line numbers and ``model_patch`` agree with the edits.

Usage::

    python scripts/make_sample.py            # write sample.jsonl + README.md, then verify
    python scripts/make_sample.py --check    # verify the existing files are up to date
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PROJECT = Path(__file__).resolve().parents[1]
OUT_DIR = PROJECT / "src" / "bench" / "samples"
OUT_JSONL = OUT_DIR / "sample.jsonl"
OUT_README = OUT_DIR / "README.md"

PYTHON = "/usr/bin/python"
SNIPPET = 4  # context lines OpenHands shows around an edit

# --------------------------------------------------------------------------------------
# Tool schemas (OpenHands CodeAct tools, descriptions shortened)
# --------------------------------------------------------------------------------------

EXECUTE_BASH = {
    "type": "function",
    "function": {
        "name": "execute_bash",
        "description": (
            "Execute a bash command in the terminal within a persistent shell session.\n\n"
            "### Command Execution\n"
            "* One command at a time: You can only execute one bash command at a time. If you "
            "need to run multiple commands sequentially, use `&&` or `;` to chain them together.\n"
            "* Soft timeout: Commands have a soft timeout of 10 seconds, once that's reached, "
            "you have the option to continue or interrupt the command.\n\n"
            "### Long-running Commands\n"
            "* If a bash command returns exit code `-1`, this means the process hit the soft "
            "timeout and is not yet finished. By setting `is_input` to `true`, you can:\n"
            "  - Send empty `command` to retrieve additional logs\n"
            "  - Send text (set `command` to the text) to STDIN of the running process\n"
            "  - Send control commands like `C-c` (Ctrl+C), `C-d` (Ctrl+D), or `C-z` (Ctrl+Z) "
            "to interrupt the process\n"
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "command": {
                    "type": "string",
                    "description": (
                        "The bash command to execute. Can be empty string to view additional "
                        "logs when previous exit code is `-1`. Can be `C-c` (Ctrl+C) to "
                        "interrupt the currently running process."
                    ),
                },
                "is_input": {
                    "type": "string",
                    "description": (
                        "If True, the command is an input to the running process. If False, "
                        "the command is a bash command to be executed in the terminal. "
                        "Default is False."
                    ),
                    "enum": ["true", "false"],
                },
                "timeout": {
                    "type": "number",
                    "description": (
                        "Optional. Sets a hard timeout in seconds for the command execution. "
                        "If not provided, the command will use the default soft timeout behavior."
                    ),
                },
            },
            "required": ["command"],
        },
    },
}

STR_REPLACE_EDITOR = {
    "type": "function",
    "function": {
        "name": "str_replace_editor",
        "description": (
            "Custom editing tool for viewing, creating and editing files in plain-text format\n"
            "* State is persistent across command calls and discussions with the user\n"
            "* If `path` is a file, `view` displays the result of applying `cat -n`. If `path` "
            "is a directory, `view` lists non-hidden files and directories up to 2 levels deep\n"
            "* The `create` command cannot be used if the specified `path` already exists as a "
            "file\n"
            "* The `undo_edit` command will revert the last edit made to the file at `path`\n\n"
            "Notes for using the `str_replace` command:\n"
            "* The `old_str` parameter should match EXACTLY one or more consecutive lines from "
            "the original file. Be mindful of whitespaces!\n"
            "* If the `old_str` parameter is not unique in the file, the replacement will not be "
            "performed. Make sure to include enough context in `old_str` to make it unique\n"
            "* The `new_str` parameter should contain the edited lines that should replace the "
            "`old_str`\n"
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "command": {
                    "type": "string",
                    "description": (
                        "The commands to run. Allowed options are: `view`, `create`, "
                        "`str_replace`, `insert`, `undo_edit`."
                    ),
                    "enum": ["view", "create", "str_replace", "insert", "undo_edit"],
                },
                "path": {
                    "type": "string",
                    "description": "Absolute path to file or directory.",
                },
                "file_text": {
                    "type": "string",
                    "description": "Required parameter of `create` command: the file content.",
                },
                "old_str": {
                    "type": "string",
                    "description": (
                        "Required parameter of `str_replace` command containing the string in "
                        "`path` to replace."
                    ),
                },
                "new_str": {
                    "type": "string",
                    "description": (
                        "New string for `str_replace`; required string to insert for `insert`."
                    ),
                },
                "insert_line": {
                    "type": "integer",
                    "description": (
                        "Required parameter of `insert` command. The `new_str` will be inserted "
                        "AFTER the line `insert_line` of `path`."
                    ),
                },
                "view_range": {
                    "type": "array",
                    "description": (
                        "Optional parameter of `view` for files: line range to show, e.g. [11, 12]."
                    ),
                    "items": {"type": "integer"},
                },
            },
            "required": ["command", "path"],
        },
    },
}

THINK = {
    "type": "function",
    "function": {
        "name": "think",
        "description": (
            "Use the tool to think about something. It will not obtain new information or make "
            "any changes to the repository, but just log the thought. Use it when complex "
            "reasoning or brainstorming is needed."
        ),
        "parameters": {
            "type": "object",
            "properties": {"thought": {"type": "string", "description": "The thought to log."}},
            "required": ["thought"],
        },
    },
}

TASK_TRACKER = {
    "type": "function",
    "function": {
        "name": "task_tracker",
        "description": (
            "Provides structured task management for development workflows, enabling progress\n"
            "tracking and systematic organization of complex coding activities.\n\n"
            "* Apply to multi-phase projects (3+ distinct steps) or when managing multiple user "
            "requirements\n"
            "* Update status (todo/in_progress/done) dynamically throughout work\n"
            "* Mark completion immediately upon task finish\n"
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "command": {
                    "type": "string",
                    "description": "`view` shows the task list; `plan` creates or updates it.",
                    "enum": ["view", "plan"],
                },
                "task_list": {
                    "type": "array",
                    "description": "The full task list. Required parameter of `plan` command.",
                    "items": {
                        "type": "object",
                        "properties": {
                            "id": {"type": "string", "description": "Unique task identifier"},
                            "title": {"type": "string", "description": "Brief task description"},
                            "status": {
                                "type": "string",
                                "description": "Current task status",
                                "enum": ["todo", "in_progress", "done"],
                            },
                            "notes": {
                                "type": "string",
                                "description": "Optional additional context or details",
                            },
                        },
                        "required": ["id", "title", "status"],
                    },
                },
            },
            "required": ["command"],
        },
    },
}

FINISH = {
    "type": "function",
    "function": {
        "name": "finish",
        "description": (
            "Signals the completion of the current task or conversation.\n\n"
            "Use this tool when:\n"
            "- You have successfully completed the user's requested task\n"
            "- You cannot proceed further due to technical limitations or missing information\n"
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "message": {"type": "string", "description": "Final message to send to the user"}
            },
            "required": ["message"],
        },
    },
}

TOOLS_NEW = [EXECUTE_BASH, STR_REPLACE_EDITOR, THINK, TASK_TRACKER, FINISH]
TOOLS_OLD = [EXECUTE_BASH, STR_REPLACE_EDITOR, FINISH]  # older OpenHands prompt, fewer tools

SYSTEM_PROMPT = """You are OpenHands agent, a helpful AI assistant that can interact with a computer to solve tasks.

<ROLE>
Your primary role is to assist users by executing commands, modifying code, and solving technical problems effectively. You should be thorough, methodical, and prioritize quality over speed.
* If the user asks a question, like "why is X happening", don't try to fix the problem. Just give an answer to the question.
</ROLE>

<EFFICIENCY>
* Each action you take is somewhat expensive. Wherever possible, combine multiple actions into a single action, e.g. combine multiple bash commands into one, using sed and grep to edit/view multiple files at once.
* When exploring the codebase, use efficient tools like find, grep, and git commands with appropriate filters to minimize unnecessary operations.
</EFFICIENCY>

<FILE_SYSTEM_GUIDELINES>
* When a user provides a file path, do NOT assume it's relative to the current working directory. First explore the file system to locate the file before working on it.
* If asked to edit a file, edit the file directly, rather than creating a new file with a different filename.
* For global search-and-replace operations, consider using `sed` instead of opening file editors multiple times.
</FILE_SYSTEM_GUIDELINES>

<CODE_QUALITY>
* When implementing solutions, focus on making the minimal changes needed to solve the problem.
</CODE_QUALITY>

<PROBLEM_SOLVING_WORKFLOW>
1. EXPLORATION: Thoroughly explore relevant files and understand the context before proposing solutions
2. ANALYSIS: Consider multiple approaches and select the most promising one
3. TESTING: For bug fixes, create tests to verify issues before implementing fixes
4. IMPLEMENTATION: Make focused, minimal changes to address the problem
5. VERIFICATION: Test your implementation thoroughly, including edge cases
</PROBLEM_SOLVING_WORKFLOW>"""

SYSTEM_PROMPT_OLD = """You are a helpful assistant that can interact with a computer to solve tasks.
<IMPORTANT>
* If user provides a path, you should NOT assume it's relative to the current working directory. Instead, you should explore the file system to find the file before working on it.
</IMPORTANT>"""

CONTINUE = (
    "Please continue working on the task on whatever approach you think is suitable.\n"
    "If you think you have solved the task, please first send your answer to user through "
    "message and then finish the interaction.\n"
    "IMPORTANT: YOU SHOULD NEVER ASK FOR HUMAN HELP.\n"
)


def user_prompt(root: str, issue: str, language: str = "python") -> str:
    dirname = root.rstrip("/").rsplit("/", 1)[-1]
    return (
        f"<uploaded_files>\n{root}\n</uploaded_files>\n"
        f"I've uploaded a {language} code repository in the directory {dirname}. "
        "Consider the following issue description:\n\n"
        f"<issue_description>\n{issue.strip()}\n</issue_description>\n\n"
        "Can you help me implement the necessary changes to the repository so that the "
        "requirements specified in the <issue_description> are met?\n"
        f"Your task is to make the minimal changes to non-test files in the {root} directory "
        "to ensure the <issue_description> is satisfied.\n\n"
        "Follow these phases to resolve the issue:\n"
        "Phase 1. READING: reword the problem in clearer terms.\n"
        "Phase 2. EXPLORATION: find the files related to the problem.\n"
        "Phase 3. REPRODUCTION: create a script to reproduce the issue.\n"
        "Phase 4. FIX: edit the source code to implement your chosen solution.\n"
        "Phase 5. VERIFICATION: run the reproduction and the relevant tests.\n\n"
        "Be thorough in your exploration, testing, and reasoning."
    )


# --------------------------------------------------------------------------------------
# Output formatting (OpenHands observation text)
# --------------------------------------------------------------------------------------

NO_NEW_OUTPUT = (
    "[The command has no new output after 10 seconds. You may wait longer to see additional "
    "output by sending empty command '', send other commands to interact with the current "
    'process, send keys ("C-c", "C-z", "C-d") to interrupt/kill the previous command before '
    "sending your new command, or use the timeout parameter in execute_bash for future "
    "commands.]"
)


def bash_out(body: str, code: int, cwd: str, glue: str | None = None, obs: bool = False) -> str:
    """Command output followed by the OpenHands metadata markers.

    glue=None:   body, newline, cwd / interpreter / exit-code markers (normal case)
    glue="code": the exit-code marker glued to the last output line, no other markers
    glue="py":   the interpreter marker glued to the last line, exit-code marker after it
    """
    cwd_m = f"[Current working directory: {cwd}]"
    py_m = f"[Python Interpreter: {PYTHON}]"
    code_m = f"[Command finished with exit code {code}]"
    if glue == "code":
        text = body + code_m
    elif glue == "py":
        text = body + py_m + "\n" + code_m
    else:
        if code == -1:
            body = (body + "\n" if body else "") + NO_NEW_OUTPUT
        text = (body + "\n" if body else "") + cwd_m + "\n" + py_m + "\n" + code_m
    return ("OBSERVATION:\n" + text) if obs else text


def cat_n(text: str, start: int = 1) -> str:
    lines = text.split("\n")
    return "\n".join(f"{i + start:6}\t{line}" for i, line in enumerate(lines))


def pytest_sep(title: str, ch: str = "=", width: int = 80) -> str:
    """A pytest separator line such as '==== 1 failed, 4 passed in 0.31s ===='."""
    if not title:
        return ch * width
    n = max((width - len(title) - 2) // len(ch) // 2, 1)
    line = f"{ch * n} {title} {ch * n}"
    if len(line) + len(ch) <= width:
        line += ch
    return line


def pytest_line(left: str, right: str, width: int = 80) -> str:
    return left + " " * max(width - len(left) - len(right), 1) + right


def git_blob(text: str) -> str:
    data = text.encode()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()[:7]


def lineno(text: str, needle: str) -> int:
    """1-based line number of the first line containing ``needle``."""
    for i, line in enumerate(text.split("\n"), 1):
        if needle in line:
            return i
    raise AssertionError(f"{needle!r} not found")


def tracker_reply(n: int, tid: str) -> str:
    session = hashlib.sha256(tid.encode()).hexdigest()
    sid = f"{session[:8]}-{session[8:12]}-{session[12:16]}-{session[16:20]}-{session[20:32]}"
    return (
        f"Task list has been updated with {n} items. "
        f"Stored in session directory: sessions/{sid}/TASKS.md"
    )


THOUGHT_LOGGED = "Your thought has been logged."

# --------------------------------------------------------------------------------------
# Trajectory builder
# --------------------------------------------------------------------------------------

_B62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def _base62(data: bytes) -> str:
    n = int.from_bytes(data, "big")
    out = []
    while n:
        n, r = divmod(n, 62)
        out.append(_B62[r])
    return "".join(out)


@dataclass
class Call:
    name: str
    args: dict[str, Any] | str  # a str is written verbatim (used for the invalid-JSON row)
    result: str | None  # None: the recording holds no tool reply for this call
    id: str | None = None


class Traj:
    def __init__(self, tid: str):
        self.tid = tid
        self.messages: list[dict[str, Any]] = []
        self._n = 0

    def new_id(self) -> str:
        self._n += 1
        digest = hashlib.sha256(f"{self.tid}#{self._n}".encode()).digest()
        return "call_" + _base62(digest)[:24]

    def _msg(self, role, content, tool_calls=None, tool_call_id=None, name=None) -> None:
        self.messages.append(
            {
                "role": role,
                "content": content,
                "tool_calls": tool_calls,
                "tool_call_id": tool_call_id,
                "name": name,
            }
        )

    def system(self, text: str) -> None:
        self._msg("system", text)

    def user(self, text: str) -> None:
        self._msg("user", text)

    def say(self, text: str) -> None:
        self._msg("assistant", text)

    def act(self, text: str, *calls: Call) -> list[str]:
        """One assistant message with ``calls``; their replies follow in call order."""
        tool_calls = []
        for c in calls:
            cid = c.id or self.new_id()
            c.id = cid
            args = c.args if isinstance(c.args, str) else json.dumps(c.args, ensure_ascii=False)
            tool_calls.append(
                {"id": cid, "type": "function", "function": {"name": c.name, "arguments": args}}
            )
        self._msg("assistant", text, tool_calls=tool_calls)
        for c in calls:
            if c.result is not None:
                self._msg("tool", c.result, tool_call_id=c.id, name=c.name)
        return [c.id for c in calls]

    def tool_raw(self, name: str, content: str, call_id: str) -> None:
        self._msg("tool", content, tool_call_id=call_id, name=name)

    def index(self) -> int:
        """Index the next message will get."""
        return len(self.messages)


def think(thought: str) -> Call:
    return Call("think", {"thought": thought}, THOUGHT_LOGGED)


def plan(tid: str, tasks: list[tuple[str, str, str]]) -> Call:
    task_list = [
        {"id": str(i), "title": title, "status": status, "notes": notes}
        for i, (title, status, notes) in enumerate(tasks, 1)
    ]
    return Call(
        "task_tracker", {"command": "plan", "task_list": task_list}, tracker_reply(len(tasks), tid)
    )


def finish(message: str) -> Call:
    return Call("finish", {"message": message}, None)


class Repo:
    """In-memory files of one task repository; editor calls change them like OpenHands does."""

    def __init__(self, root: str, files: dict[str, str], obs: bool = False):
        self.root = root
        self.orig = dict(files)
        self.files = dict(files)
        self.obs = obs  # prefix tool outputs with "OBSERVATION:\n" (older OpenHands)

    def abs(self, rel: str) -> str:
        return f"{self.root}/{rel}"

    def _o(self, text: str) -> str:
        return ("OBSERVATION:\n" + text) if self.obs else text

    # ---- shell ------------------------------------------------------------------------
    def sh(self, cmd: str, body: str, code: int = 0, glue: str | None = None,
           timeout: int | None = None, cwd: str | None = None) -> Call:
        args: dict[str, Any] = {"command": cmd}
        if timeout is not None:
            args["timeout"] = timeout
        return Call("execute_bash", args, bash_out(body, code, cwd or self.root, glue, self.obs))

    def sh_input(self, text: str, body: str, code: int) -> Call:
        args = {"command": text, "is_input": "true"}
        return Call("execute_bash", args, bash_out(body, code, self.root, None, self.obs))

    def shell_edit(self, rel: str, old: str, new: str) -> None:
        """Apply the effect of a shell edit (sed -i / redirect) recorded with ``sh``."""
        assert self.files[rel].count(old) == 1, (rel, old)
        self.files[rel] = self.files[rel].replace(old, new)

    # ---- editor -----------------------------------------------------------------------
    def view(self, rel: str, view_range: list[int] | None = None) -> Call:
        path = self.abs(rel)
        text = self.files[rel]
        args: dict[str, Any] = {"command": "view", "path": path}
        if view_range:
            args["view_range"] = view_range
            lines = text.split("\n")
            a, b = view_range
            text = "\n".join(lines[a - 1 : b])
            start = a
        else:
            start = 1
            text = text.removesuffix("\n")
        out = f"Here's the result of running `cat -n` on {path}:\n{cat_n(text, start)}\n"
        return Call("str_replace_editor", args, self._o(out))

    def view_dir(self, listing: list[str], hidden: int = 3) -> Call:
        out = (
            f"Here's the files and directories up to 2 levels deep in {self.root}, "
            "excluding hidden items:\n"
            + f"{self.root}/\n"
            + "".join(f"{self.root}/{p}\n" for p in listing)
            + f"\n{hidden} hidden files/directories in this directory are excluded. "
            f"You can use 'ls -la {self.root}' to see them."
        )
        return Call("str_replace_editor", {"command": "view", "path": self.root}, self._o(out))

    def create(self, rel: str, text: str) -> Call:
        assert rel not in self.files, rel
        self.files[rel] = text
        path = self.abs(rel)
        args = {"command": "create", "path": path, "file_text": text}
        return Call("str_replace_editor", args, self._o(f"File created successfully at: {path}"))

    def replace(self, rel: str, old: str, new: str) -> Call:
        path = self.abs(rel)
        content = self.files[rel]
        assert content.count(old) == 1, f"old_str must occur once in {rel}: {old!r}"
        line = content.split(old)[0].count("\n")
        self.files[rel] = new_content = content.replace(old, new)
        start = max(0, line - SNIPPET)
        end = line + SNIPPET + new.count("\n")
        snippet = "\n".join(new_content.split("\n")[start : end + 1])
        out = (
            f"The file {path} has been edited. Here's the result of running `cat -n` on a "
            f"snippet of {path}:\n{cat_n(snippet, start + 1)}\n"
            "Review the changes and make sure they are as expected. Edit the file again if "
            "necessary."
        )
        args = {"command": "str_replace", "path": path, "old_str": old, "new_str": new}
        return Call("str_replace_editor", args, self._o(out))

    def replace_fail(self, rel: str, old: str, new: str) -> Call:
        path = self.abs(rel)
        assert old not in self.files[rel], f"old_str must NOT occur in {rel}: {old!r}"
        out = (
            "ERROR:\nNo replacement was performed, old_str `"
            + old
            + f"` did not appear verbatim in {path}."
        )
        args = {"command": "str_replace", "path": path, "old_str": old, "new_str": new}
        return Call("str_replace_editor", args, self._o(out))

    def insert(self, rel: str, insert_line: int, new: str) -> Call:
        path = self.abs(rel)
        lines = self.files[rel].split("\n")
        new_lines = new.split("\n")
        self.files[rel] = "\n".join(lines[:insert_line] + new_lines + lines[insert_line:])
        snippet = (
            lines[max(0, insert_line - SNIPPET) : insert_line]
            + new_lines
            + lines[insert_line : insert_line + SNIPPET]
        )
        out = (
            f"The file {path} has been edited. Here's the result of running `cat -n` on a "
            f"snippet of the edited file:\n"
            f"{cat_n(chr(10).join(snippet), max(1, insert_line - SNIPPET + 1))}\n"
            "Review the changes and make sure they are as expected (correct indentation, no "
            "duplicate lines, etc). Edit the file again if necessary."
        )
        args = {"command": "insert", "path": path, "insert_line": insert_line, "new_str": new}
        return Call("str_replace_editor", args, self._o(out))

    # ---- git ----------------------------------------------------------------------------
    def diff(self, rels: list[str] | None = None, extra: dict[str, tuple[str, str]] | None = None,
             tracked_only: bool = False) -> str:
        """Unified git diff of the changed files (``extra``: rel -> (old, new) not in files)."""
        pairs: dict[str, tuple[str | None, str]] = {}
        for rel, text in self.files.items():
            old = self.orig.get(rel)
            if old != text and (not tracked_only or old is not None):
                pairs[rel] = (old, text)
        for rel, (old, new) in (extra or {}).items():
            pairs[rel] = (old, new)
        if rels is not None:
            pairs = {r: pairs[r] for r in rels}
        out = []
        for rel in sorted(pairs):
            old, new = pairs[rel]
            out.append(f"diff --git a/{rel} b/{rel}\n")
            if old is None:
                out.append("new file mode 100644\n")
                out.append(f"index 0000000..{git_blob(new)}\n")
                a_lines, fromfile = [], "/dev/null"
            else:
                out.append(f"index {git_blob(old)}..{git_blob(new)} 100644\n")
                a_lines, fromfile = old.splitlines(keepends=True), f"a/{rel}"
            out.extend(
                difflib.unified_diff(
                    a_lines, new.splitlines(keepends=True), fromfile=fromfile, tofile=f"b/{rel}"
                )
            )
        return "".join(out)


# --------------------------------------------------------------------------------------
# Expected outcomes (README table); filled by the row builders
# --------------------------------------------------------------------------------------

EXPECTED: dict[str, dict[str, Any]] = {}


def expect(tid: str, **kw: Any) -> None:
    EXPECTED[tid] = kw


def row(tid, instance_id, repo, resolved, exit_status, patch, tools, traj, notes) -> dict:
    return {
        "trajectory_id": tid,
        "instance_id": instance_id,
        "repo": repo,
        "resolved": resolved,
        "exit_status": exit_status,
        "model_patch": patch,
        "tools": tools,
        "trajectory": traj.messages,
        "synthetic": True,
        "notes": notes,
    }


# ======================================================================================
# Row 001: clean python row, all four questions, test_counts on the 2nd run
# ======================================================================================

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


def row_001() -> dict:
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
    expect(
        tid,
        status="accepted",
        conversion="nothing dropped (ends with a plain assistant message)",
        files_changed=["tests/test_core.py", "widgets/core.py"],
        first_edit={"path": "widgets/core.py", "code": first_new, "message_index": first_edit_idx},
        test_counts={"command": pytest_cmd, "k": 2, "passed": 4, "failed": 1, "errors": 0,
                     "message_index": run2_idx},
        first_error={"command": run_scratch, "k": 1, "exception": "KeyError: 'width'"},
        dropped=[],
    )
    return row(
        tid, "acme__widgets-101", "acme/widgets", True, "submit", patch, TOOLS_NEW, t,
        "Clean python row with a parallel call, think, task_tracker, a failed str_replace and "
        "an out-of-repo /tmp create before the first repo edit, and long outputs; all four "
        "questions kept, test_counts on the 2nd run of the pytest command.",
    )


# ======================================================================================
# Row 002: first repo edit is `sed -i` -> first_edit dropped
# ======================================================================================

LEDGER_MONEY = '''"""Money helpers for acme-ledger."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

CENTS = Decimal("0.01")


def parse_amount(text: str) -> Decimal:
    """Parse a user-entered amount such as '12.50', '-3' or '1 200.00'."""
    cleaned = text.strip().replace(" ", "")
    return Decimal(cleaned).quantize(CENTS, rounding=ROUND_HALF_UP)


def format_amount(value: Decimal, currency: str = "EUR") -> str:
    return f"{value:.2f} {currency}"


def split_evenly(total: Decimal, parts: int) -> list[Decimal]:
    """Split an amount into `parts` shares whose sum is exactly `total`."""
    share = (total / parts).quantize(CENTS, rounding=ROUND_HALF_UP)
    shares = [share] * parts
    shares[-1] = total - share * (parts - 1)
    return shares
'''

LEDGER_NEW_TEST = '''from decimal import Decimal

import pytest

from ledger.money import parse_amount


@pytest.mark.parametrize(
    "text, expected",
    [
        ("1,50", "1.50"),
        ("-0,5", "-0.50"),
        ("1.234,50", "1234.50"),
        ("1 234,50", "1234.50"),
    ],
)
def test_decimal_comma(text, expected):
    assert parse_amount(text) == Decimal(expected)
'''


def row_002() -> dict:
    tid = "synthetic-002"
    root = "/workspace/acme__ledger__2.3"
    repo = Repo(root, {"ledger/money.py": LEDGER_MONEY})
    t = Traj(tid)
    t.system(SYSTEM_PROMPT)
    t.user(user_prompt(root, """
parse_amount crashes on decimal commas

`ledger.money.parse_amount("1,50")` raises `decimal.InvalidOperation`. Users in European
locales type amounts with a decimal comma, optionally with dots as thousands separators
(`1.234,50`). Both forms should parse to the same value as `1.50` / `1234.50`.
"""))
    listing = "README.md\nledger\npyproject.toml\ntests\n"
    t.act(
        "Let me look at the money module.",
        repo.sh(f"cd {root} && ls && cat ledger/money.py", listing + LEDGER_MONEY.rstrip("\n")),
    )
    repro = (
        f"cd {root} && python -c 'from ledger.money import parse_amount; "
        "print(parse_amount(\"1,50\"))'"
    )
    pline = lineno(LEDGER_MONEY, "return Decimal(cleaned)")
    exc = "decimal.InvalidOperation: [<class 'decimal.ConversionSyntax'>]"
    t.act(
        "",
        repo.sh(
            repro,
            "Traceback (most recent call last):\n"
            '  File "<string>", line 1, in <module>\n'
            f'  File "{root}/ledger/money.py", line {pline}, in parse_amount\n'
            "    return Decimal(cleaned).quantize(CENTS, rounding=ROUND_HALF_UP)\n"
            "           ^^^^^^^^^^^^^^^^\n" + exc,
            code=1,
        ),
    )
    # first repo edit: a shell edit (sed -i)
    sed_cmd = (
        "sed -i 's/replace(\" \", \"\")$/replace(\" \", \"\").replace(\",\", \".\")/' "
        f"{root}/ledger/money.py"
    )
    sed_idx = t.index()
    t.act("A quick first fix: turn commas into dots.", repo.sh(sed_cmd, ""))
    repo.shell_edit(
        "ledger/money.py",
        '    cleaned = text.strip().replace(" ", "")\n',
        '    cleaned = text.strip().replace(" ", "").replace(",", ".")\n',
    )
    t.act("", repo.sh(repro, "1.50"))
    t.act("Now a test file for the different notations.",
          repo.create("tests/test_money_comma.py", LEDGER_NEW_TEST))
    test_cmd = f"cd {root} && python -m pytest tests -q"
    tline = lineno(LEDGER_NEW_TEST, "assert parse_amount(text)")
    body = "\n".join([
        pytest_line("...........F.", "[100%]"),
        pytest_sep("FAILURES"),
        pytest_sep("test_decimal_comma[1.234,50-1234.50]", "_"),
        "",
        "text = '1.234,50', expected = '1234.50'",
        "",
        "    @pytest.mark.parametrize(",
        '        "text, expected",',
        "        [",
        '            ("1,50", "1.50"),',
        '            ("-0,5", "-0.50"),',
        '            ("1.234,50", "1234.50"),',
        '            ("1 234,50", "1234.50"),',
        "        ],",
        "    )",
        "    def test_decimal_comma(text, expected):",
        ">       assert parse_amount(text) == Decimal(expected)",
        "",
        f"tests/test_money_comma.py:{tline}: ",
        "_ " * 39 + "_",
        "",
        "text = '1.234,50'",
        "",
        "    def parse_amount(text: str) -> Decimal:",
        '        """Parse a user-entered amount such as \'12.50\', \'-3\' or \'1 200.00\'."""',
        '        cleaned = text.strip().replace(" ", "").replace(",", ".")',
        ">       return Decimal(cleaned).quantize(CENTS, rounding=ROUND_HALF_UP)",
        "E       decimal.InvalidOperation: [<class 'decimal.ConversionSyntax'>]",
        "",
        f"ledger/money.py:{pline}: InvalidOperation",
        pytest_sep("short test summary info"),
        ("FAILED tests/test_money_comma.py::test_decimal_comma[1.234,50-1234.50] - "
        "decimal.InvalidOperation: [<class 'decimal.ConversionSyntax'>]"),
        "1 failed, 12 passed in 0.45s",
    ])
    run1_idx = t.index() + 1
    # interpreter marker glued to the last line (as in real OpenHands output)
    t.act("", repo.sh(test_cmd, body, code=1, glue="py"))
    t.act(
        "",
        think(
            "Replacing ',' with '.' breaks '1.234,50' (two dots). When a comma is present it is "
            "the decimal separator and any dots are thousands separators: drop the dots first, "
            "then turn the comma into a dot."
        ),
    )
    editor_new = (
        '    cleaned = text.strip().replace(" ", "")\n'
        '    if "," in cleaned:\n'
        "        # decimal comma, optionally with dots as thousands separators: 1.234,50\n"
        '        cleaned = cleaned.replace(".", "").replace(",", ".")'
    )
    t.act(
        "",
        repo.replace(
            "ledger/money.py",
            '    cleaned = text.strip().replace(" ", "").replace(",", ".")',
            editor_new,
        ),
    )
    t.act("", repo.sh(test_cmd, pytest_line("." * 13, "[100%]") + "\n13 passed in 0.41s"))
    t.act("", repo.sh(repro, "1.50"))
    t.act("", repo.sh(f"cd {root} && git diff", repo.diff(tracked_only=True).rstrip("\n")))
    t.act("", finish(
        "parse_amount now accepts decimal commas (`1,50`) and dot thousands separators "
        "(`1.234,50`); new tests in tests/test_money_comma.py pass."
    ))
    expect(
        tid,
        status="accepted",
        conversion="final `finish` call without reply dropped",
        files_changed=["ledger/money.py", "tests/test_money_comma.py"],
        first_edit=None,
        test_counts={"command": test_cmd, "k": 1, "passed": 12, "failed": 1, "errors": 0,
                     "message_index": run1_idx,
                     "note": "pytest -q summary without '====', interpreter marker glued"},
        first_error={"command": repro, "k": 1, "exception": exc},
        dropped=[("first_edit", (f"first repo edit is a shell edit (sed -i) at message {sed_idx}; "
                  "later editor edits must not replace it"))],
    )
    return row(
        tid, "acme__ledger-57", "acme/ledger", True, "submit", repo.diff(), TOOLS_NEW, t,
        "First edit of the repository is a `sed -i` (first_edit dropped, not replaced by the "
        "later editor create/str_replace); pytest -q summary with a glued interpreter marker.",
    )


# ======================================================================================
# Row 003: Java / Maven, repo root /testbed
# ======================================================================================

PATH_COMPILER = '''package com.acme.jsonpath;

import java.util.ArrayList;
import java.util.List;

/**
 * Compiles JSONPath expressions such as {@code $.store.items[0].name} into tokens.
 */
final class PathCompiler {

    private final String path;
    private int pos;

    PathCompiler(String path) {
        this.path = path;
    }

    List<Token> compile() {
        if (path.isEmpty() || path.charAt(0) != '$') {
            throw new IllegalArgumentException("Path must start with '$': " + path);
        }
        pos = 1;
        List<Token> tokens = new ArrayList<>();
        while (pos < path.length()) {
            char c = path.charAt(pos);
            if (c == '.') {
                pos++;
                tokens.add(Token.property(readName()));
            } else if (c == '[') {
                pos++;
                tokens.add(Token.index(readIndex()));
                expect(']');
            } else {
                throw new IllegalStateException("Unexpected character '" + c + "' at " + pos);
            }
        }
        return tokens;
    }

    private String readName() {
        int start = pos;
        while (pos < path.length() && Character.isJavaIdentifierPart(path.charAt(pos))) {
            pos++;
        }
        return path.substring(start, pos);
    }

    private int readIndex() {
        int start = pos;
        while (pos < path.length() && Character.isDigit(path.charAt(pos))) {
            pos++;
        }
        if (start == pos) {
            if (path.charAt(pos) == '-') {
                throw new IllegalStateException(
                        "Negative index not supported: " + path.substring(pos, path.indexOf(']', pos)));
            }
            throw new IllegalStateException("Expected index at " + start);
        }
        return Integer.parseInt(path.substring(start, pos));
    }

    private void expect(char c) {
        if (pos >= path.length() || path.charAt(pos) != c) {
            throw new IllegalStateException("Expected '" + c + "' at " + pos);
        }
        pos++;
    }
}
'''

EVALUATOR = '''package com.acme.jsonpath;

import java.util.List;
import java.util.Map;

final class Evaluator {

    private Evaluator() {
    }

    static Object read(Object root, List<Token> tokens) {
        Object current = root;
        for (Token token : tokens) {
            if (current == null) {
                return null;
            }
            if (token.isIndex()) {
                if (!(current instanceof List)) {
                    return null;
                }
                List<?> list = (List<?>) current;
                int index = token.index();
                if (index >= list.size()) {
                    return null;
                }
                current = list.get(index);
            } else {
                if (!(current instanceof Map)) {
                    return null;
                }
                current = ((Map<?, ?>) current).get(token.name());
            }
        }
        return current;
    }
}
'''

PATH_COMPILER_TEST = '''package com.acme.jsonpath;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import org.junit.jupiter.api.Test;

class PathCompilerTest {

    @Test
    void compilesRoot() {
        assertEquals(List.of(), new PathCompiler("$").compile());
    }

    @Test
    void compilesProperties() {
        assertEquals(List.of(Token.property("a"), Token.property("b")), new PathCompiler("$.a.b").compile());
    }

    @Test
    void compilesIndex() {
        assertEquals(List.of(Token.property("items"), Token.index(2)), new PathCompiler("$.items[2]").compile());
    }

    @Test
    void rejectsMissingRoot() {
        assertThrows(IllegalArgumentException.class, () -> new PathCompiler("a.b").compile());
    }

    @Test
    void rejectsUnclosedBracket() {
        assertThrows(IllegalStateException.class, () -> new PathCompiler("$.a[1").compile());
    }

    @Test
    void rejectsEmptyIndex() {
        assertThrows(IllegalStateException.class, () -> new PathCompiler("$.a[]").compile());
    }

    @Test
    void rejectsGarbage() {
        assertThrows(IllegalStateException.class, () -> new PathCompiler("$.a#").compile());
    }

    @Test
    void rejectsNegativeIndex() {
        assertThrows(IllegalStateException.class, () -> new PathCompiler("$.items[-1]").compile());
    }
}
'''

MVN_HEAD = """[INFO] Scanning for projects...
[INFO] 
[INFO] --------------------------< com.acme:jsonpath >--------------------------
[INFO] Building acme-jsonpath 0.7.1-SNAPSHOT
[INFO]   from pom.xml
[INFO] --------------------------------[ jar ]---------------------------------
[INFO] 
[INFO] --- resources:3.3.1:resources (default-resources) @ jsonpath ---
[INFO] skip non existing resourceDirectory /testbed/src/main/resources
[INFO] 
[INFO] --- compiler:3.11.0:compile (default-compile) @ jsonpath ---
[INFO] Changes detected - recompiling the module! :source
[INFO] Compiling 6 source files with javac [debug target 17] to target/classes
[INFO] 
[INFO] --- resources:3.3.1:testResources (default-testResources) @ jsonpath ---
[INFO] skip non existing resourceDirectory /testbed/src/test/resources
[INFO] 
[INFO] --- compiler:3.11.0:testCompile (default-testCompile) @ jsonpath ---
[INFO] Changes detected - recompiling the module! :dependency
[INFO] Compiling 2 source files with javac [debug target 17] to target/test-classes
[INFO] 
[INFO] --- surefire:3.2.2:test (default-test) @ jsonpath ---
[INFO] Using auto detected provider org.apache.maven.surefire.junitplatform.JUnitPlatformProvider
[INFO] 
[INFO] -------------------------------------------------------
[INFO]  T E S T S
[INFO] -------------------------------------------------------
[INFO] Running com.acme.jsonpath.JsonPathTest
[INFO] Tests run: 4, Failures: 0, Errors: 0, Skipped: 0, Time elapsed: 0.041 s -- in com.acme.jsonpath.JsonPathTest
[INFO] Running com.acme.jsonpath.PathCompilerTest"""


def row_003() -> dict:
    tid = "synthetic-003"
    root = "/testbed"
    pc = "src/main/java/com/acme/jsonpath/PathCompiler.java"
    ev = "src/main/java/com/acme/jsonpath/Evaluator.java"
    pct = "src/test/java/com/acme/jsonpath/PathCompilerTest.java"
    repo = Repo(root, {pc: PATH_COMPILER, ev: EVALUATOR, pct: PATH_COMPILER_TEST})
    t = Traj(tid)
    t.system(SYSTEM_PROMPT)
    t.user(user_prompt(root, """
Support negative array indices in paths

`JsonPath.compile("$.items[-1]")` throws
`IllegalStateException: Negative index not supported: -1`. Negative indices should count
from the end of the array, like in most JSONPath implementations: `$.items[-1]` reads the
last element, and an index that is out of range in either direction reads `null`.
""", language="Java"))
    t.act(
        "",
        plan(tid, [
            ("Explore the compiler and evaluator", "in_progress", ""),
            ("Reproduce with a small Java class", "todo", "outside the repository"),
            ("Accept negative indices in PathCompiler", "todo", ""),
            ("Resolve negative indices in Evaluator", "todo", ""),
            ("Run PathCompilerTest and JsonPathTest", "todo", "mvn -o test"),
        ]),
    )
    t.act(
        "",
        repo.sh(
            f"cd {root} && find src -name '*.java' | sort",
            "\n".join([
                ev, "src/main/java/com/acme/jsonpath/JsonPath.java", pc,
                "src/main/java/com/acme/jsonpath/PathException.java",
                "src/main/java/com/acme/jsonpath/Token.java",
                "src/main/java/com/acme/jsonpath/package-info.java",
                "src/test/java/com/acme/jsonpath/JsonPathTest.java", pct,
            ]),
        ),
    )
    t.act("", repo.view(pc))
    repro_src = """import com.acme.jsonpath.JsonPath;
import java.util.List;
import java.util.Map;

public class Repro {
    public static void main(String[] args) {
        Map<String, Object> doc = Map.of("items", List.of("a", "b", "c"));
        System.out.println(JsonPath.compile("$.items[-1]").read(doc));
    }
}
"""
    t.act(
        "",
        Call("str_replace_editor",
             {"command": "create", "path": "/tmp/Repro.java", "file_text": repro_src},
             "File created successfully at: /tmp/Repro.java"),
    )
    repro = ("cd /tmp && javac -cp /testbed/target/classes Repro.java && "
             "java -cp /testbed/target/classes:. Repro")
    # the `throw new ...(` line just above the message line
    throw_line = lineno(PATH_COMPILER, '"Negative index not supported: "') - 1
    exc = "java.lang.IllegalStateException: Negative index not supported: -1"
    t.act(
        "",
        repo.sh(
            repro,
            f'Exception in thread "main" {exc}\n'
            f"\tat com.acme.jsonpath.PathCompiler.readIndex(PathCompiler.java:{throw_line})\n"
            f"\tat com.acme.jsonpath.PathCompiler.compile(PathCompiler.java:"
            f"{lineno(PATH_COMPILER, 'Token.index(readIndex())')})\n"
            "\tat com.acme.jsonpath.JsonPath.compile(JsonPath.java:19)\n"
            "\tat Repro.main(Repro.java:8)",
            code=1, cwd="/tmp",
        ),
    )
    t.act(
        "",
        think(
            "readIndex only accepts digits. Accept an optional leading '-', keep the 'Expected "
            "index' error when no digits follow. Then Evaluator must map a negative index to "
            "size + index and return null when it is still out of range."
        ),
    )
    old = PATH_COMPILER[PATH_COMPILER.index("    private int readIndex() {"):
                        PATH_COMPILER.index('            throw new IllegalStateException("Expected index at " + start);\n        }\n')]
    old += '            throw new IllegalStateException("Expected index at " + start);\n        }'
    first_new = """    private int readIndex() {
        int start = pos;
        if (pos < path.length() && path.charAt(pos) == '-') {
            pos++;
        }
        int digits = pos;
        while (pos < path.length() && Character.isDigit(path.charAt(pos))) {
            pos++;
        }
        if (digits == pos) {
            throw new IllegalStateException("Expected index at " + start);
        }"""
    first_edit_idx = t.index()
    t.act("", repo.replace(pc, old, first_new))
    repro2 = f"cd {root} && mvn -q -o compile && {repro}"
    ev_line = lineno(EVALUATOR, "current = list.get(index);")
    t.act(
        "",
        repo.sh(
            repro2,
            'Exception in thread "main" java.lang.IndexOutOfBoundsException: '
            "Index -1 out of bounds for length 3\n"
            "\tat java.base/jdk.internal.util.Preconditions.outOfBounds(Preconditions.java:100)\n"
            "\tat java.base/jdk.internal.util.Preconditions.outOfBoundsCheckIndex"
            "(Preconditions.java:106)\n"
            "\tat java.base/jdk.internal.util.Preconditions.checkIndex(Preconditions.java:302)\n"
            "\tat java.base/java.util.Objects.checkIndex(Objects.java:385)\n"
            "\tat java.base/java.util.ImmutableCollections$ListN.get(ImmutableCollections.java:687)\n"
            f"\tat com.acme.jsonpath.Evaluator.read(Evaluator.java:{ev_line})\n"
            "\tat com.acme.jsonpath.JsonPath.read(JsonPath.java:27)\n"
            "\tat Repro.main(Repro.java:8)",
            code=1, cwd="/tmp",
        ),
    )
    t.act(
        "Now the evaluator.",
        repo.replace(
            ev,
            "                int index = token.index();\n"
            "                if (index >= list.size()) {",
            "                int index = token.index() < 0 ? list.size() + token.index() : token.index();\n"
            "                if (index < 0 || index >= list.size()) {",
        ),
    )
    t.act("", repo.sh(repro2, "c", cwd="/tmp"))
    mvn = f"cd {root} && mvn -o test -Dtest='PathCompilerTest,JsonPathTest'"
    neg_line = lineno(PATH_COMPILER_TEST, 'new PathCompiler("$.items[-1]")')
    fail_msg = "Expected java.lang.IllegalStateException to be thrown, but nothing was thrown."
    body = MVN_HEAD + "\n" + "\n".join([
        ("[ERROR] Tests run: 8, Failures: 1, Errors: 0, Skipped: 0, Time elapsed: 0.018 s "
        "<<< FAILURE! -- in com.acme.jsonpath.PathCompilerTest"),
        ("[ERROR] com.acme.jsonpath.PathCompilerTest.rejectsNegativeIndex -- Time elapsed: "
        "0.006 s <<< FAILURE!"),
        f"org.opentest4j.AssertionFailedError: {fail_msg}",
        "\tat org.junit.jupiter.api.AssertionFailureBuilder.build(AssertionFailureBuilder.java:152)",
        "\tat org.junit.jupiter.api.AssertThrows.assertThrows(AssertThrows.java:73)",
        "\tat org.junit.jupiter.api.AssertThrows.assertThrows(AssertThrows.java:35)",
        "\tat org.junit.jupiter.api.Assertions.assertThrows(Assertions.java:3115)",
        f"\tat com.acme.jsonpath.PathCompilerTest.rejectsNegativeIndex(PathCompilerTest.java:{neg_line})",
        "\tat java.base/java.lang.reflect.Method.invoke(Method.java:568)",
        "\tat java.base/java.util.ArrayList.forEach(ArrayList.java:1511)",
        "",
        "[INFO] ",
        "[INFO] Results:",
        "[INFO] ",
        "[ERROR] Failures: ",
        f"[ERROR]   PathCompilerTest.rejectsNegativeIndex:{neg_line} {fail_msg}",
        "[INFO] ",
        "[ERROR] Tests run: 12, Failures: 1, Errors: 0, Skipped: 0",
        "[INFO] ",
        "[INFO] ------------------------------------------------------------------------",
        "[INFO] BUILD FAILURE",
        "[INFO] ------------------------------------------------------------------------",
        "[INFO] Total time:  3.412 s",
        "[INFO] Finished at: 2025-03-14T10:22:31Z",
        "[INFO] ------------------------------------------------------------------------",
        ("[ERROR] Failed to execute goal org.apache.maven.plugins:maven-surefire-plugin:3.2.2:test "
        "(default-test) on project jsonpath: There are test failures."),
        "[ERROR] ",
        "[ERROR] Please refer to /testbed/target/surefire-reports for the individual test results.",
        ("[ERROR] Please refer to dump files (if any exist) [date].dump, [date]-jvmRun[N].dump and "
        "[date].dumpstream."),
        "[ERROR] -> [Help 1]",
    ])
    run1_idx = t.index() + 1
    t.act("Let me run the relevant test classes.", repo.sh(mvn, body, code=1))
    t.act(
        "`rejectsNegativeIndex` asserted the old behaviour that the issue asks to change; "
        "I'll turn it into a test of the new behaviour.",
        repo.replace(
            pct,
            "    void rejectsNegativeIndex() {\n"
            "        assertThrows(IllegalStateException.class, () -> new PathCompiler(\"$.items[-1]\").compile());",
            "    void compilesNegativeIndex() {\n"
            "        assertEquals(List.of(Token.property(\"items\"), Token.index(-1)), "
            "new PathCompiler(\"$.items[-1]\").compile());",
        ),
    )
    ok = MVN_HEAD.replace("Compiling 2 source files", "Compiling 1 source file") + "\n" + "\n".join([
        ("[INFO] Tests run: 8, Failures: 0, Errors: 0, Skipped: 0, Time elapsed: 0.015 s -- in "
        "com.acme.jsonpath.PathCompilerTest"),
        "[INFO] ",
        "[INFO] Results:",
        "[INFO] ",
        "[INFO] Tests run: 12, Failures: 0, Errors: 0, Skipped: 0",
        "[INFO] ",
        "[INFO] ------------------------------------------------------------------------",
        "[INFO] BUILD SUCCESS",
        "[INFO] ------------------------------------------------------------------------",
        "[INFO] Total time:  3.107 s",
        "[INFO] Finished at: 2025-03-14T10:24:02Z",
        "[INFO] ------------------------------------------------------------------------",
    ])
    t.act("", repo.sh(mvn, ok))
    t.act(
        "",
        plan(tid, [
            ("Explore the compiler and evaluator", "done", ""),
            ("Reproduce with a small Java class", "done", "/tmp/Repro.java"),
            ("Accept negative indices in PathCompiler", "done", ""),
            ("Resolve negative indices in Evaluator", "done", ""),
            ("Run PathCompilerTest and JsonPathTest", "done", "12 tests pass"),
        ]),
    )
    t.act("", finish("Negative indices are now compiled and resolved from the end of arrays."))
    expect(
        tid,
        status="accepted",
        conversion="final `finish` call without reply dropped",
        files_changed=sorted([ev, pc, pct]),
        first_edit={"path": pc, "code": first_new, "message_index": first_edit_idx},
        test_counts={"command": mvn, "k": 1, "passed": 11, "failed": 1, "errors": 0,
                     "message_index": run1_idx,
                     "note": "use the aggregate line after `[INFO] Results:` (Tests run: 12), "
                             "not the per-class lines (4 and 8) printed earlier"},
        first_error={"command": repro, "k": 1, "exception": exc,
                     "note": "printed as `Exception in thread \"main\" ...`; a later "
                             "IndexOutOfBoundsException belongs to another command"},
        dropped=[],
    )
    return row(
        tid, "acme__jsonpath-212", "acme/jsonpath", None, "submit", repo.diff(), TOOLS_NEW, t,
        "Java/Maven row with repo root /testbed: Maven per-class and aggregate `Tests run:` "
        "lines, a Java `Exception in thread \"main\"` error and an out-of-repo /tmp create; "
        "all four questions kept.",
    )


# ======================================================================================
# Row 004: unittest with failures and errors; soft timeout, is_input continuation, C-c
# ======================================================================================

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


def row_004() -> dict:
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
    run1_idx = t.index() + 1
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
    expect(
        tid,
        status="accepted",
        conversion="final `finish` call without reply dropped",
        files_changed=["scheduler/cron.py"],
        first_edit={"path": "scheduler/cron.py", "code": first_new, "message_index": first_edit_idx,
                    "note": "an `insert` (insert_line)"},
        test_counts={"command": ut, "k": 1, "passed": 5, "failed": 1, "errors": 1,
                     "message_index": run1_idx,
                     "note": "unittest `Ran 7 tests` + `FAILED (failures=1, errors=1)`; the "
                             "hung discover run (exit -1, empty is_input, C-c) has no summary"},
        first_error={"command": repro, "k": 1, "exception": exc,
                     "note": "exit-code marker glued to the exception line; the later "
                             "KeyboardInterrupt (C-c) and CronError come after it"},
        dropped=[],
    )
    return row(
        tid, "acme__scheduler-88", "acme/scheduler", True, "submit", repo.diff(), TOOLS_NEW, t,
        "unittest summary with failures and errors kept apart, a soft-timeout command (exit -1) "
        "continued with an empty is_input command and stopped with C-c (not new runs), a glued "
        "exit-code marker and an `insert` first edit; all four questions kept.",
    )


# ======================================================================================
# Row 005: retry chains and a second user turn
# ======================================================================================

SLUG_CORE = '''"""URL slug helpers."""

import re

_SEPARATORS = re.compile(r"[^a-z0-9]+")


def slugify(text: str, separator: str = "-", max_length: int | None = None) -> str:
    """Turn ``text`` into a lowercase ASCII slug."""
    text = text.lower()
    text = text.encode("ascii", "ignore").decode("ascii")
    slug = _SEPARATORS.sub(separator, text).strip(separator)
    if max_length is not None:
        slug = slug[:max_length].rstrip(separator)
    return slug
'''

SLUG_TEST = '''import unittest

from slugify import slugify


class SlugifyTests(unittest.TestCase):
    def test_simple(self):
        self.assertEqual(slugify("Hello World"), "hello-world")

    def test_separator(self):
        self.assertEqual(slugify("a b c", separator="_"), "a_b_c")

    def test_strips_edges(self):
        self.assertEqual(slugify("  --Hi!--  "), "hi")

    def test_collapses_runs(self):
        self.assertEqual(slugify("a   &&  b"), "a-b")

    def test_digits(self):
        self.assertEqual(slugify("Version 2.0"), "version-2-0")

    def test_max_length(self):
        self.assertEqual(slugify("abc def ghi", max_length=5), "abc-d")

    def test_max_length_no_trailing_separator(self):
        self.assertEqual(slugify("abc def", max_length=4), "abc")

    def test_empty(self):
        self.assertEqual(slugify(""), "")

    def test_only_symbols(self):
        self.assertEqual(slugify("!!!"), "")
'''


def row_005() -> dict:
    tid = "synthetic-005"
    root = "/workspace/acme__slugify__3.1"
    repo = Repo(root, {"slugify/core.py": SLUG_CORE, "tests/test_slugify.py": SLUG_TEST})
    t = Traj(tid)
    t.system(SYSTEM_PROMPT)
    t.user(user_prompt(root, """
Accented letters are dropped instead of transliterated

`slugify("Crème brûlée")` returns `"crme-brle"`. Accented Latin letters should be
transliterated to their ASCII base letter: `"creme-brulee"`.
"""))
    t.act("", repo.view("slugify/core.py"))
    repro = f"cd {root} && python -c \"from slugify import slugify; print(slugify('Crème brûlée'))\""
    t.act("", repo.sh(repro, "crme-brle"))
    first_new = (
        '    text = unicodedata.normalize("NFKD", text)\n'
        '    text = text.encode("ascii", "ignore").decode("ascii")'
    )
    first_edit_idx = t.index()
    t.act(
        "Decompose accented letters before dropping non-ASCII characters.",
        repo.replace("slugify/core.py", '    text = text.encode("ascii", "ignore").decode("ascii")',
                     first_new),
    )
    enc_line = lineno(repo.files["slugify/core.py"], "unicodedata.normalize")
    exc = "NameError: name 'unicodedata' is not defined"
    run2_idx = t.index() + 1
    t.act(
        "",
        repo.sh(
            repro,
            "Traceback (most recent call last):\n"
            '  File "<string>", line 1, in <module>\n'
            f'  File "{root}/slugify/core.py", line {enc_line}, in slugify\n'
            '    text = unicodedata.normalize("NFKD", text)\n'
            "           ^^^^^^^^^^^\n" + exc,
            code=1,
        ),
    )
    # retry chain 1: three failed str_replace attempts, then success
    chain1 = [t.index()]
    t.act("I forgot the import.",
          repo.replace_fail("slugify/core.py", "import re\nimport string",
                            "import re\nimport string\nimport unicodedata"))
    chain1.append(t.index())
    t.act("",
          repo.replace_fail("slugify/core.py",
                            "import re\n\n_SEPARATORS = re.compile(r'[^a-z0-9]+')",
                            "import re\nimport unicodedata\n\n_SEPARATORS = re.compile(r'[^a-z0-9]+')"))
    chain1.append(t.index())
    t.act("",
          repo.replace_fail("slugify/core.py", '"""URL slug helpers"""\nimport re',
                            '"""URL slug helpers"""\nimport re\nimport unicodedata'))
    chain1.append(t.index())
    t.act("", repo.replace("slugify/core.py", "import re", "import re\nimport unicodedata"))
    t.act("", repo.sh(repro, "creme-brulee"))
    t.say("The slug is now transliterated: `creme-brulee`. Should I also run the test suite?")
    turn2 = t.index()
    t.user(CONTINUE)
    # retry chain 2: three failing commands, then a working one
    chain2 = [t.index()]
    t.act("", repo.sh(f"cd {root} && pytest tests -q", "bash: pytest: command not found", 127))
    chain2.append(t.index())
    t.act("", repo.sh(f"cd {root} && python -m pytest tests -q",
                      f"{PYTHON}: No module named pytest", 1))
    chain2.append(t.index())
    t.act("", repo.sh(
        "pip install -q pytest",
        "WARNING: Retrying (Retry(total=4, connect=None, read=None, redirect=None, status=None)) "
        "after connection broken by 'NewConnectionError': /simple/pytest/\n"
        "ERROR: Could not find a version that satisfies the requirement pytest (from versions: "
        "none)\nERROR: No matching distribution found for pytest",
        1,
    ))
    chain2.append(t.index())
    ut = f"cd {root} && python -m unittest discover -s tests -v"
    names = [line.split("def ")[1].split("(")[0] for line in SLUG_TEST.splitlines()
             if line.strip().startswith("def test_")]
    out = [f"{n} (test_slugify.SlugifyTests.{n}) ... ok" for n in names]
    out += ["", "-" * 70, f"Ran {len(names)} tests in 0.002s", "", "OK"]
    run_ut_idx = t.index() + 1
    t.act("No pytest and no network; the tests are unittest-based anyway.",
          repo.sh(ut, "\n".join(out)))
    n_lines = repo.files["tests/test_slugify.py"].rstrip("\n").count("\n") + 1
    t.act(
        "Adding a regression test.",
        repo.insert(
            "tests/test_slugify.py", n_lines,
            "\n    def test_transliterates_accents(self):\n"
            '        self.assertEqual(slugify("Crème brûlée"), "creme-brulee")',
        ),
    )
    names.append("test_transliterates_accents")
    out = [f"{n} (test_slugify.SlugifyTests.{n}) ... ok" for n in names]
    out += ["", "-" * 70, f"Ran {len(names)} tests in 0.002s", "", "OK"]
    t.act("", repo.sh(ut, "\n".join(out)))
    t.act("", finish("slugify now transliterates accented letters (NFKD) before dropping "
                     "non-ASCII characters; 10 tests pass."))
    expect(
        tid,
        status="accepted",
        conversion="final `finish` call without reply dropped",
        files_changed=["slugify/core.py", "tests/test_slugify.py"],
        first_edit={"path": "slugify/core.py", "code": first_new, "message_index": first_edit_idx},
        test_counts={"command": ut, "k": 1, "passed": 9, "failed": 0, "errors": 0,
                     "message_index": run_ut_idx, "note": "unittest `Ran 9 tests` + `OK`"},
        first_error={"command": repro, "k": 2, "exception": exc, "message_index": run2_idx,
                     "note": "run 1 of the same command printed no exception"},
        dropped=[],
        retry_chains=[
            f"turn 1: failed str_replace at messages {chain1[:3]}, success at {chain1[3]}",
            (f"turn 2 (user message {turn2}): failed commands at messages {chain2[:3]}, "
            f"success at {chain2[3]}"),
        ],
    )
    return row(
        tid, "acme__slugify-19", "acme/slugify", True, "submit", repo.diff(), TOOLS_NEW, t,
        "Two settled retry chains (three failed str_replace then success; after a 'Please "
        "continue' user turn, three failing commands then success) and first_error on the 2nd "
        "run of the same command; all four questions kept.",
    )


# ======================================================================================
# Row 006: Gradle; ends with a `finish` call without reply (dropped, not rejected)
# ======================================================================================

QUANTITY = '''package com.acme.units;

import java.util.Objects;

public final class Quantity {

    private final double value;
    private final String unit;

    public Quantity(double value, String unit) {
        this.value = value;
        this.unit = Objects.requireNonNull(unit, "unit");
    }

    /** Parses strings such as {@code "12 kg"}, {@code "3m"} or {@code "-4 C"}. */
    public static Quantity parse(String text) {
        String trimmed = text.trim();
        int i = 0;
        while (i < trimmed.length() && (Character.isDigit(trimmed.charAt(i))
                || trimmed.charAt(i) == '-' || trimmed.charAt(i) == '.')) {
            i++;
        }
        if (i == 0) {
            throw new IllegalArgumentException("No number in: " + text);
        }
        int value = Integer.parseInt(trimmed.substring(0, i));
        return new Quantity(value, trimmed.substring(i).trim());
    }

    public double value() {
        return value;
    }

    public String unit() {
        return unit;
    }

    @Override
    public String toString() {
        String number = value == Math.rint(value) ? String.valueOf((long) value) : String.valueOf(value);
        return number + " " + unit;
    }
}
'''

GRADLE_HEAD = """> Task :compileJava
> Task :processResources NO-SOURCE
> Task :classes
> Task :compileTestJava
> Task :processTestResources NO-SOURCE
> Task :testClasses
"""


def row_006() -> dict:
    tid = "synthetic-006"
    root = "/workspace/acme__units__2.0"
    q = "src/main/java/com/acme/units/Quantity.java"
    repo = Repo(root, {q: QUANTITY})
    t = Traj(tid)
    t.system(SYSTEM_PROMPT)
    t.user(user_prompt(root, """
Quantity.parse fails on decimal values

`Quantity.parse("12.5 kg")` throws `NumberFormatException: For input string: "12.5"`.
Decimal values should be supported; `toString()` must keep printing whole numbers without
a decimal part (`"12 kg"`).
""", language="Java"))
    t.act("", repo.sh(
        f"cd {root} && find src -name '*.java'",
        f"{q}\nsrc/main/java/com/acme/units/Units.java\n"
        "src/test/java/com/acme/units/QuantityTest.java",
    ))
    t.act("", repo.view(q))
    repro_src = (
        "import com.acme.units.Quantity;\n\n"
        "public class Repro {\n"
        "    public static void main(String[] args) {\n"
        '        System.out.println(Quantity.parse("12.5 kg"));\n'
        "    }\n"
        "}\n"
    )
    # a shell redirect OUTSIDE the repository: must not count as a repository edit
    t.act("", Call("execute_bash",
                   {"command": f"cat > /tmp/Repro.java <<'EOF'\n{repro_src}EOF"},
                   bash_out("", 0, root)))
    cp = f"{root}/build/classes/java/main"
    repro = f"cd /tmp && javac -cp {cp} Repro.java && java -cp {cp}:. Repro"
    exc = 'java.lang.NumberFormatException: For input string: "12.5"'
    t.act("", repo.sh(
        repro,
        f'Exception in thread "main" {exc}\n'
        "\tat java.base/java.lang.NumberFormatException.forInputString"
        "(NumberFormatException.java:67)\n"
        "\tat java.base/java.lang.Integer.parseInt(Integer.java:668)\n"
        "\tat java.base/java.lang.Integer.parseInt(Integer.java:786)\n"
        f"\tat com.acme.units.Quantity.parse(Quantity.java:{lineno(QUANTITY, 'Integer.parseInt')})\n"
        "\tat Repro.main(Repro.java:5)",
        code=1, cwd="/tmp",
    ))
    old = QUANTITY[QUANTITY.index("        String trimmed = text.trim();"):
                   QUANTITY.index("        return new Quantity(value, trimmed.substring(i).trim());")]
    old += "        return new Quantity(value, trimmed.substring(i).trim());"
    first_new = (
        "        String[] parts = text.trim().split(\"\\\\s+\", 2);\n"
        "        if (parts.length < 2) {\n"
        "            throw new IllegalArgumentException(\"No unit in: \" + text);\n"
        "        }\n"
        "        return new Quantity(Double.parseDouble(parts[0]), parts[1]);"
    )
    first_edit_idx = t.index()
    t.act("Splitting number and unit is simpler.", repo.replace(q, old, first_new))
    gradle = f"cd {root} && ./gradlew test --offline"
    body = GRADLE_HEAD + "\n".join([
        "",
        "> Task :test",
        "",
        "QuantityTest > parsesCompactForm() FAILED",
        "    java.lang.IllegalArgumentException at QuantityTest.java:24",
        "",
        "5 tests completed, 1 failed",
        "",
        "> Task :test FAILED",
        "",
        "FAILURE: Build failed with an exception.",
        "",
        "* What went wrong:",
        "Execution failed for task ':test'.",
        f"> There were failing tests. See the report at: file://{root}/build/reports/tests/test/index.html",
        "",
        "* Try:",
        "> Run with --scan to get full insights.",
        "",
        "BUILD FAILED in 4s",
        "4 actionable tasks: 4 executed",
    ])
    run1_idx = t.index() + 1
    t.act("", repo.sh(gradle, body, code=1))
    t.act("", think(
        "Splitting on whitespace breaks the compact form '3m'. Keep the original scanning loop "
        "(it already accepts '.') and only replace Integer.parseInt with Double.parseDouble."
    ))
    t.act("", repo.replace(q, first_new, old.replace(
        "        int value = Integer.parseInt(trimmed.substring(0, i));",
        "        double value = Double.parseDouble(trimmed.substring(0, i));")))
    t.act("", repo.sh(gradle, GRADLE_HEAD + "> Task :test\n\nBUILD SUCCESSFUL in 3s\n"
                      "4 actionable tasks: 4 executed"))
    t.act("", repo.sh(repro, "12.5 kg", cwd="/tmp"))
    t.act("", finish("Quantity.parse now accepts decimal values; whole numbers still print "
                     "without a decimal part."))
    expect(
        tid,
        status="accepted",
        conversion="final `finish` call without reply dropped (row is not rejected)",
        files_changed=[q],
        first_edit={"path": q, "code": first_new, "message_index": first_edit_idx,
                    "note": "a later edit reverts most of it; the first edit is still the reference"},
        test_counts={"command": gradle, "k": 1, "passed": 4, "failed": 1, "errors": 0,
                     "message_index": run1_idx,
                     "note": "Gradle `5 tests completed, 1 failed`; run 2 (all pass) prints no count"},
        first_error={"command": repro, "k": 1, "exception": exc},
        dropped=[],
    )
    return row(
        tid, "acme__units-31", "acme/units", None, "submit", repo.diff(), TOOLS_NEW, t,
        "Gradle row ending with a `finish` call that has no reply (dropped, not rejected), with "
        "a heredoc shell redirect to /tmp that is not a repository edit; all four questions kept.",
    )


# ======================================================================================
# Row 007: trailing assistant message with 2 parallel calls, only 1 result (trailing drop)
# ======================================================================================

GEO = '''"""Great-circle distances."""

from __future__ import annotations

import math

EARTH_RADIUS_KM = 6371.0088


class ProjectionError(ValueError):
    """Raised for coordinates outside the valid range."""


def _check(lat: float, lon: float) -> None:
    if not -90.0 <= lat <= 90.0:
        raise ProjectionError(f"latitude {lat} out of range")
    if not -180.0 <= lon <= 180.0:
        raise ProjectionError(f"longitude {lon} out of range")


def haversine(a: tuple[float, float], b: tuple[float, float]) -> float:
    """Distance in kilometres between two (lat, lon) points."""
    (lat1, lon1), (lat2, lon2) = a, b
    _check(lat1, lon1)
    _check(lat2, lon2)
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp = p2 - p1
    dl = math.radians(lon2 - lon1)
    h = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * EARTH_RADIUS_KM * math.asin(math.sqrt(h))


def normalize_lon(lon: float) -> float:
    """Wrap a longitude into [-180, 180)."""
    return (lon + 180.0) % 360.0 - 180.0
'''

GEO_TEST = '''import pytest

from geo.distance import ProjectionError, haversine, normalize_lon


def test_same_point():
    assert haversine((10.0, 20.0), (10.0, 20.0)) == 0.0


def test_berlin_paris():
    assert round(haversine((52.52, 13.405), (48.857, 2.352))) == 878


def test_rejects_bad_latitude():
    with pytest.raises(ProjectionError):
        haversine((91.0, 0.0), (0.0, 0.0))


def test_rejects_bad_longitude():
    with pytest.raises(ProjectionError):
        haversine((0.0, 190.0), (0.0, 0.0))


def test_normalize_lon():
    assert normalize_lon(190.0) == -170.0
'''


def _haversine(a, b):
    import math
    (lat1, lon1), (lat2, lon2) = a, b
    p1, p2 = math.radians(lat1), math.radians(lat2)
    h = (math.sin((p2 - p1) / 2) ** 2
         + math.cos(p1) * math.cos(p2) * math.sin(math.radians(lon2 - lon1) / 2) ** 2)
    return 2 * 6371.0088 * math.asin(math.sqrt(h))


def row_007() -> dict:
    tid = "synthetic-007"
    root = "/workspace/acme__geo__1.2"
    repo = Repo(root, {"geo/distance.py": GEO, "tests/test_distance.py": GEO_TEST})
    t = Traj(tid)
    t.system(SYSTEM_PROMPT)
    t.user(user_prompt(root, """
haversine rejects longitudes in the 0..360 convention

Some GPS receivers report longitudes in `[0, 360)`. `haversine((52.5, 13.4), (40.7, 286.0))`
raises `ProjectionError: longitude 286.0 out of range` although 286.0 is the same meridian
as -74.0. Longitudes should be wrapped with `normalize_lon` before the range check.
"""))
    t.act("", repo.sh(
        f"cd {root} && ls -R geo tests",
        "geo:\n__init__.py\ncache.py\ndistance.py\ntesting.py\n\n"
        "tests:\n__init__.py\ntest_cache.py\ntest_distance.py",
    ))
    t.act("", repo.view("geo/distance.py"))
    repro = (f"cd {root} && python -c \"from geo.distance import haversine; "
             "print(haversine((52.5, 13.4), (40.7, 286.0)))\"")
    chk = lineno(GEO, "_check(lat2, lon2)")
    lon_raise = lineno(GEO, 'raise ProjectionError(f"longitude')
    exc = "geo.distance.ProjectionError: longitude 286.0 out of range"
    t.act("", repo.sh(
        repro,
        "Traceback (most recent call last):\n"
        '  File "<string>", line 1, in <module>\n'
        f'  File "{root}/geo/distance.py", line {chk}, in haversine\n'
        "    _check(lat2, lon2)\n"
        f'  File "{root}/geo/distance.py", line {lon_raise}, in _check\n'
        '    raise ProjectionError(f"longitude {lon} out of range")\n' + exc,
        code=1,
    ))
    first_new = (
        "    (lat1, lon1), (lat2, lon2) = a, b\n"
        "    # GPS receivers may report longitudes in [0, 360); wrap them first.\n"
        "    lon1, lon2 = normalize_lon(lon1), normalize_lon(lon2)\n"
        "    _check(lat1, lon1)"
    )
    first_edit_idx = t.index()
    t.act("", repo.replace("geo/distance.py",
                           "    (lat1, lon1), (lat2, lon2) = a, b\n    _check(lat1, lon1)",
                           first_new))
    t.act("", repo.sh(repro, repr(_haversine((52.5, 13.4), (40.7, -74.0)))))
    test_cmd = f"cd {root} && python -m pytest tests"
    bad_lon_line = lineno(GEO_TEST, "haversine((0.0, 190.0), (0.0, 0.0))")
    cache_line = 17  # tests/test_cache.py is not shown; its third test starts here
    body = "\n".join([
        pytest_sep("test session starts"),
        "platform linux -- Python 3.11.9, pytest-8.3.3, pluggy-1.5.0",
        f"rootdir: {root}",
        "collected 8 items",
        "",
        pytest_line("tests/test_cache.py ..E", "[ 37%]"),
        pytest_line("tests/test_distance.py ...F.", "[100%]"),
        "",
        pytest_sep("ERRORS"),
        pytest_sep("ERROR at setup of test_cache_roundtrip", "_"),
        f"file {root}/tests/test_cache.py, line {cache_line}",
        "  def test_cache_roundtrip(tmp_geo_cache):",
        "E       fixture 'tmp_geo_cache' not found",
        (">       available fixtures: cache, capfd, capfdbinary, caplog, capsys, capsysbinary, "
        "doctest_namespace, monkeypatch, pytestconfig, record_property, record_testsuite_property, "
        "record_xml_attribute, recwarn, tmp_path, tmp_path_factory, tmpdir, tmpdir_factory"),
        ">       use 'pytest --fixtures [testpath]' for help on them.",
        "",
        f"{root}/tests/test_cache.py:{cache_line}",
        pytest_sep("FAILURES"),
        pytest_sep("test_rejects_bad_longitude", "_"),
        "",
        "    def test_rejects_bad_longitude():",
        ">       with pytest.raises(ProjectionError):",
        "E       Failed: DID NOT RAISE <class 'geo.distance.ProjectionError'>",
        "",
        f"tests/test_distance.py:{bad_lon_line - 1}: Failed",
        pytest_sep("short test summary info"),
        ("FAILED tests/test_distance.py::test_rejects_bad_longitude - Failed: DID NOT RAISE "
        "<class 'geo.distance.ProjectionError'>"),
        "ERROR tests/test_cache.py::test_cache_roundtrip",
        pytest_sep("1 failed, 6 passed, 1 error in 0.52s"),
    ])
    run1_idx = t.index() + 1
    t.act("", repo.sh(test_cmd, body, code=1))
    t.act("", think(
        "test_rejects_bad_longitude encodes the old behaviour: longitude 190 must now wrap to "
        "-170, not raise. The test_cache error is a missing fixture (tmp_geo_cache), unrelated "
        "to this change; probably provided by a plugin module."
    ))
    t.act("", repo.replace(
        "tests/test_distance.py",
        "def test_rejects_bad_longitude():\n"
        "    with pytest.raises(ProjectionError):\n"
        "        haversine((0.0, 190.0), (0.0, 0.0))",
        "def test_wraps_longitude():\n"
        "    assert haversine((0.0, 190.0), (0.0, -170.0)) == 0.0",
    ))
    t.act("", Call(
        "str_replace_editor",
        {"command": "view", "path": f"{root}/tests/conftest.py"},
        f"ERROR:\nInvalid `path` parameter: {root}/tests/conftest.py. The path "
        f"{root}/tests/conftest.py does not exist. Please provide a valid path.",
    ))
    t.act("", repo.sh(
        f"cd {root} && grep -rn \"tmp_geo_cache\" .",
        f"./tests/test_cache.py:{cache_line}:def test_cache_roundtrip(tmp_geo_cache):\n"
        "./docs/testing.md:8:Use the `tmp_geo_cache` fixture from `geo.testing` "
        "(enable it with `-p geo.testing`).",
    ))
    # trailing message: two parallel calls, only the first has a result (run out of steps)
    last_idx = t.index()
    t.act(
        "",
        repo.sh(f"cd {root} && git status --short",
                " M geo/distance.py\n M tests/test_distance.py"),
        Call("str_replace_editor", {"command": "view", "path": f"{root}/geo/testing.py"}, None),
    )
    expect(
        tid,
        status="accepted",
        conversion=(f"trailing assistant message {last_idx} (2 parallel calls, only the first "
                    f"has a result) dropped together with its result {last_idx + 1}"),
        files_changed=["geo/distance.py", "tests/test_distance.py"],
        first_edit={"path": "geo/distance.py", "code": first_new, "message_index": first_edit_idx},
        test_counts={"command": test_cmd, "k": 1, "passed": 6, "failed": 1, "errors": 1,
                     "message_index": run1_idx,
                     "note": "pytest `1 failed, 6 passed, 1 error` (setup error kept apart)"},
        first_error={"command": repro, "k": 1, "exception": exc},
        dropped=[],
    )
    return row(
        tid, "acme__geo-64", "acme/geo", False, "max_iterations", repo.diff(), TOOLS_NEW, t,
        "max_iterations row whose last assistant message has two parallel calls with only one "
        "result (trailing drop, not rejected); pytest summary with a setup error; all four "
        "questions kept.",
    )


# ======================================================================================
# Rows 008-010: rejected rows
# ======================================================================================

SHAPES = '''"""Polygon helpers."""

from __future__ import annotations

Point = tuple[float, float]


def area(points: list[Point]) -> float:
    """Area of a simple polygon (shoelace formula)."""
    total = 0.0
    for (x1, y1), (x2, y2) in zip(points, points[1:] + points[:1]):
        total += x1 * y2 - x2 * y1
    return total / 2


def perimeter(points: list[Point]) -> float:
    return sum(
        ((x2 - x1) ** 2 + (y2 - y1) ** 2) ** 0.5
        for (x1, y1), (x2, y2) in zip(points, points[1:] + points[:1])
    )
'''


def _small_python_row(t: Traj, repo: Repo, issue: str, repro: str, repro_out: str) -> None:
    t.system(SYSTEM_PROMPT)
    t.user(user_prompt(repo.root, issue))
    rel = next(iter(repo.files))
    t.act("", repo.sh(f"cd {repo.root} && git status --short && ls", "README.md\n"
                      + rel.split("/")[0] + "\npyproject.toml\ntests"))
    t.act("", repo.view(rel))
    t.act("", repo.sh(repro, repro_out))


def row_008() -> dict:
    tid = "synthetic-008"
    root = "/workspace/acme__shapes__0.2"
    repo = Repo(root, {"shapes/poly.py": SHAPES})
    t = Traj(tid)
    repro = (f"cd {root} && python -c \"from shapes.poly import area; "
             "print(area([(0, 0), (0, 1), (1, 1), (1, 0)]))\"")
    _small_python_row(t, repo, """
area() is negative for clockwise polygons

`area([(0, 0), (0, 1), (1, 1), (1, 0)])` returns `-1.0`. The area should not depend on
the orientation of the points.
""", repro, "-1.0")
    # valid call, then a call whose arguments are truncated (invalid JSON) but has a reply
    call = repo.replace("shapes/poly.py", "    return total / 2", "    return abs(total) / 2")
    good_args = json.dumps(call.args, ensure_ascii=False)
    call.args = good_args[:-1]  # missing closing brace: not valid JSON
    bad_idx = t.index()
    t.act("Use the absolute value.", call)
    t.act("", repo.sh(repro, "1.0"))
    t.act("", repo.sh(f"cd {root} && python -m pytest tests -q",
                      pytest_line("......", "[100%]") + "\n6 passed in 0.02s"))
    t.act("", repo.sh(f"cd {root} && git diff --stat",
                      " shapes/poly.py | 2 +-\n 1 file changed, 1 insertion(+), 1 deletion(-)"))
    t.act("", finish("area() now returns the absolute area."))
    expect(
        tid,
        status="rejected",
        reason=(f"tool-call arguments are not valid JSON (message {bad_idx}, call "
                f"{call.id}: truncated, missing closing brace)"),
    )
    return row(
        tid, "acme__shapes-7", "acme/shapes", True, "submit", repo.diff(), TOOLS_NEW, t,
        "Rejected row: one str_replace_editor call has truncated arguments that are not valid "
        "JSON, so the case is rejected with a reason (not repaired, no crash).",
    )


MAILER = '''"""Address helpers for acme-mailer."""

from __future__ import annotations


def normalize_address(address: str) -> str:
    """Lower-case the domain part of an e-mail address."""
    local, _, domain = address.partition("@")
    return f"{local}@{domain.lower()}"


def split_recipients(text: str) -> list[str]:
    return [part.strip() for part in text.split(",")]
'''


def row_009() -> dict:
    tid = "synthetic-009"
    root = "/workspace/acme__mailer__4.0"
    repo = Repo(root, {"mailer/address.py": MAILER})
    t = Traj(tid)
    repro = (f"cd {root} && python -c \"from mailer.address import split_recipients; "
             "print(split_recipients('a@x.org, b@y.org,'))\"")
    _small_python_row(t, repo, """
split_recipients keeps empty entries

`split_recipients("a@x.org, b@y.org,")` returns `['a@x.org', 'b@y.org', '']`. Empty entries
(trailing commas, doubled commas) should be skipped.
""", repro, "['a@x.org', 'b@y.org', '']")
    t.act("", repo.replace(
        "mailer/address.py",
        '    return [part.strip() for part in text.split(",")]',
        '    return [part.strip() for part in text.split(",") if part.strip()]',
    ))
    orphan_idx = t.index()
    # a tool result whose tool_call_id matches no call in the row
    orphan_id = Traj(tid + "-orphan").new_id()
    t.tool_raw("execute_bash", bash_out("['a@x.org', 'b@y.org']", 0, root), orphan_id)
    t.act("", repo.sh(repro, "['a@x.org', 'b@y.org']"))
    t.act("", repo.sh(f"cd {root} && python -m pytest tests -q",
                      pytest_line("....", "[100%]") + "\n4 passed in 0.01s"))
    t.act("", finish("split_recipients now skips empty entries."))
    expect(
        tid,
        status="rejected",
        reason=f"tool result without a call (message {orphan_idx}, tool_call_id {orphan_id})",
    )
    return row(
        tid, "acme__mailer-12", "acme/mailer", True, "submit", repo.diff(), TOOLS_NEW, t,
        "Rejected row: a tool result in the middle whose tool_call_id matches no call.",
    )


CACHE = '''"""A tiny TTL cache."""

from __future__ import annotations

import time


class TTLCache:
    def __init__(self, ttl: float, clock=time.monotonic):
        self.ttl = ttl
        self.clock = clock
        self._data: dict[str, tuple[float, object]] = {}

    def set(self, key: str, value: object) -> None:
        self._data[key] = (self.clock(), value)

    def get(self, key: str, default: object = None) -> object:
        item = self._data.get(key)
        if item is None:
            return default
        stored, value = item
        if self.clock() - stored > self.ttl:
            return default
        return value
'''


def row_010() -> dict:
    tid = "synthetic-010"
    root = "/workspace/acme__cache__1.1"
    repo = Repo(root, {"cache/ttl.py": CACHE})
    t = Traj(tid)
    repro = (f"cd {root} && python -c \"from cache.ttl import TTLCache; "
             "c = TTLCache(0); c.set('a', 1); print(len(c._data), c.get('a'))\"")
    _small_python_row(t, repo, """
Expired entries are never evicted

`TTLCache.get` returns the default for expired keys but leaves them in the cache, so
memory grows forever. Expired entries should be removed when they are read.
""", repro, "1 None")
    t.act("", repo.replace(
        "cache/ttl.py",
        "        if self.clock() - stored > self.ttl:\n            return default",
        "        if self.clock() - stored > self.ttl:\n"
        "            del self._data[key]\n"
        "            return default",
    ))
    missing_idx = t.index()
    # a call in the middle that never got a result
    ids = t.act("", Call("execute_bash", {"command": repro}, None))
    t.act("", repo.sh(repro, "0 None"))
    t.act("", repo.sh(f"cd {root} && python -m pytest tests -q",
                      pytest_line(".....", "[100%]") + "\n5 passed in 0.02s"))
    t.act("", finish("Expired entries are now removed when read."))
    expect(
        tid,
        status="rejected",
        reason=f"tool call without a result in the middle (message {missing_idx}, call {ids[0]})",
    )
    return row(
        tid, "acme__cache-5", "acme/cache", True, "submit", repo.diff(), TOOLS_NEW, t,
        "Rejected row: an execute_bash call in the middle of the history has no result (not "
        "trailing, so it is not dropped).",
    )


# ======================================================================================
# Row 011: no tests, no exception; patch lists a file never edited (files_changed dropped)
# ======================================================================================

CLI_CONFIG = '''"""Configuration defaults for the acme command line tool."""

from __future__ import annotations

import os

DEFAULTS = {
    "color": "always",
    "pager": "less -R",
    "timeout": 30,
    "retries": 3,
}

ENV_PREFIX = "ACME_"


def load(env: dict[str, str] | None = None) -> dict[str, object]:
    """Return the effective configuration: defaults overridden by ACME_* variables."""
    env = os.environ if env is None else env
    config = dict(DEFAULTS)
    for key in DEFAULTS:
        value = env.get(ENV_PREFIX + key.upper())
        if value is not None:
            config[key] = type(DEFAULTS[key])(value)
    return config
'''

CLI_DOC_OLD = """# Configuration

| key | default | environment |
|---|---|---|
| color | `always` | `ACME_COLOR` |
| pager | `less -R` | `ACME_PAGER` |
| timeout | `30` | `ACME_TIMEOUT` |
| retries | `3` | `ACME_RETRIES` |
"""

CLI_DOC_NEW = CLI_DOC_OLD.replace("| color | `always` |", "| color | `auto` |") + (
    "\nSetting `NO_COLOR` (any non-empty value) turns colour off.\n"
)


def row_011() -> dict:
    tid = "synthetic-011"
    root = "/workspace/acme__cli__5.0"
    repo = Repo(root, {"acme_cli/config.py": CLI_CONFIG}, obs=True)
    t = Traj(tid)
    t.system(SYSTEM_PROMPT_OLD)
    t.user(user_prompt(root, """
Colour codes end up in files when output is piped

The default for `color` should be `auto` instead of `always`, and the `NO_COLOR`
environment variable (https://no-color.org) should turn colour off.
"""))
    t.act("", repo.sh(
        f"cd {root} && grep -rn \"color\" acme_cli/ docs/",
        'acme_cli/config.py:8:    "color": "always",\n'
        "acme_cli/output.py:14:    if config[\"color\"] == \"always\":\n"
        "acme_cli/output.py:16:    if config[\"color\"] == \"auto\":\n"
        "docs/configuration.md:5:| color | `always` | `ACME_COLOR` |",
    ))
    t.act("", repo.view("acme_cli/config.py"))
    show = f"cd {root} && python -c \"from acme_cli.config import load; print(load({{}}))\""
    t.act("", repo.sh(show, "{'color': 'always', 'pager': 'less -R', 'timeout': 30, 'retries': 3}"))
    first_new = '    "color": "auto",'
    first_edit_idx = t.index()
    t.act("", repo.replace("acme_cli/config.py", '    "color": "always",', first_new))
    t.act("", repo.replace(
        "acme_cli/config.py",
        "            config[key] = type(DEFAULTS[key])(value)\n    return config",
        "            config[key] = type(DEFAULTS[key])(value)\n"
        '    if env.get("NO_COLOR"):\n'
        '        config["color"] = "never"\n'
        "    return config",
    ))
    t.act("", repo.sh(show, "{'color': 'auto', 'pager': 'less -R', 'timeout': 30, 'retries': 3}"))
    t.act("", repo.sh(
        f"cd {root} && python -c \"from acme_cli.config import load; "
        "print(load({'NO_COLOR': '1', 'ACME_COLOR': 'always'})['color'])\"",
        "never",
    ))
    t.act("", repo.sh(f"cd {root} && git diff --stat",
                      " acme_cli/config.py | 4 +++-\n 1 file changed, 3 insertions(+), 1 deletion(-)"))
    t.act("", finish("The colour default is now `auto` and NO_COLOR turns colour off."))
    patch = repo.diff(extra={"docs/configuration.md": (CLI_DOC_OLD, CLI_DOC_NEW)})
    expect(
        tid,
        status="accepted",
        conversion="final `finish` call without reply dropped",
        files_changed=None,
        first_edit={"path": "acme_cli/config.py", "code": first_new,
                    "message_index": first_edit_idx},
        test_counts=None,
        first_error=None,
        dropped=[
            ("files_changed", ("patch lists docs/configuration.md, which the trajectory never "
                              "edits (patch: acme_cli/config.py, docs/configuration.md; edited: "
                              "acme_cli/config.py)")),
            ("test_counts", "no tool output has a test-runner summary line"),
            ("first_error", "no tool output contains an exception"),
        ],
    )
    return row(
        tid, "acme__cli-240", "acme/cli", None, "submit", patch, TOOLS_OLD, t,
        "Older-style row (OBSERVATION: prefixes, three tools) with no test run and no "
        "exception, and a patch that lists a file never edited: only first_edit is kept.",
    )


BUILDERS = [row_001, row_002, row_003, row_004, row_005, row_006, row_007, row_008, row_009,
            row_010, row_011]


# --------------------------------------------------------------------------------------
# README
# --------------------------------------------------------------------------------------


def _code(s: str) -> str:
    s = s.replace("\n", "⏎")
    return "`` " + s + " ``" if "`" in s else "`" + s + "`"


def readme(rows: list[dict]) -> str:
    out = [
        "# Shipped sample: synthetic trajectories",
        "",
        "**Synthetic trajectories written for this project (not real agent runs).** Every row of",
        "`sample.jsonl` was written by `scripts/make_sample.py` (deterministic; rerun it to",
        "regenerate this file and the sample). Repositories (`acme/*`), issues, code, outputs and",
        "patches are invented; each row has `synthetic: true` and a one-sentence `notes` field.",
        "",
        "Rows follow the column schema of the Hugging Face dataset",
        "`nebius/SWE-rebench-openhands-trajectories` (`trajectory_id`, `instance_id`, `repo`,",
        "`resolved`, `exit_status`, `model_patch`, `tools`, `trajectory`) so the local `jsonl`",
        "source and the conversion/question code can be exercised offline. Messages are",
        "`{role, content, tool_calls, tool_call_id, name}`; `arguments` are JSON strings.",
        "Message indices below are 0-based positions in the recorded `trajectory`.",
        "",
        "| row | exercises | expected outcome |",
        "|---|---|---|",
    ]
    for r in rows:
        e = EXPECTED[r["trajectory_id"]]
        if e["status"] == "rejected":
            outcome = f"**rejected**: {e['reason']}"
        else:
            kept = [q for q in ("files_changed", "first_edit", "test_counts", "first_error")
                    if e.get(q) is not None]
            outcome = f"accepted; {e['conversion']}; kept: {', '.join(kept)}"
            if e["dropped"]:
                outcome += "; dropped: " + ", ".join(q for q, _ in e["dropped"])
        out.append(f"| `{r['trajectory_id']}` ({len(r['trajectory'])} msgs) | {r['notes']} | "
                   f"{outcome} |")
    out += ["", "## Expected references and drops", ""]
    for r in rows:
        e = EXPECTED[r["trajectory_id"]]
        out.append(f"### `{r['trajectory_id']}` — {r['repo']} ({r['exit_status']}, "
                   f"resolved={json.dumps(r['resolved'])})")
        out.append("")
        if e["status"] == "rejected":
            out += [f"- **Rejected**: {e['reason']}.", ""]
            continue
        out.append(f"- Conversion: {e['conversion']}.")
        if e.get("files_changed") is not None:
            out.append(f"- `files_changed`: {', '.join(_code(p) for p in e['files_changed'])}")
        fe = e.get("first_edit")
        if fe is not None:
            note = f" ({fe['note']})" if fe.get("note") else ""
            out.append(f"- `first_edit` (message {fe['message_index']}){note}: file "
                       f"`{fe['path']}`, code:")
            out += ["", "  ```", *("  " + line for line in fe["code"].split("\n")), "  ```"]
        tc = e.get("test_counts")
        if tc is not None:
            note = f"; {tc['note']}" if tc.get("note") else ""
            out.append(f"- `test_counts`: run k={tc['k']} of {_code(tc['command'])} "
                       f"(message {tc['message_index']}) -> passed={tc['passed']}, "
                       f"failed={tc['failed']}, errors={tc['errors']}{note}")
        fr = e.get("first_error")
        if fr is not None:
            note = f"; {fr['note']}" if fr.get("note") else ""
            out.append(f"- `first_error`: run k={fr['k']} of {_code(fr['command'])} -> "
                       f"{_code(fr['exception'])}{note}")
        for q, why in e["dropped"]:
            out.append(f"- `{q}` **dropped**: {why}")
        for chain in e.get("retry_chains", []):
            out.append(f"- retry chain: {chain}")
        out.append("")
    out += [
        "## Output markers",
        "",
        "Tool outputs carry OpenHands metadata that references must not contain: the",
        "`OBSERVATION:` prefix (row 011), `[Current working directory: ...]`,",
        "`[Python Interpreter: ...]` and `[Command finished with exit code N]`. Two outputs have",
        "a marker glued to the last line: row 002's pytest run (`... in 0.45s[Python Interpreter:",
        "...]`) and row 004's first reproduction (`...must not be zero[Command finished with exit",
        "code 1]`).",
        "",
    ]
    return "\n".join(out)


# --------------------------------------------------------------------------------------
# Verification
# --------------------------------------------------------------------------------------


def verify(path: Path) -> list[str]:
    """Structural checks of the written file; returns a list of problems (empty = fine)."""
    problems: list[str] = []
    text = path.read_text(encoding="utf-8")
    if len(text.encode()) > 250_000:
        problems.append(f"file is {len(text.encode())} bytes (> 250 KB)")
    seen_long = 0
    for ln, line in enumerate(text.splitlines(), 1):
        try:
            r = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(f"line {ln}: not JSON ({exc})")
            continue
        tid = r["trajectory_id"]
        e = EXPECTED[tid]
        msgs = r["trajectory"]
        if not 12 <= len(msgs) <= 40:
            problems.append(f"{tid}: {len(msgs)} messages")
        if r.get("synthetic") is not True or not r.get("notes"):
            problems.append(f"{tid}: synthetic/notes missing")
        if [m["role"] for m in msgs[:2]] != ["system", "user"]:
            problems.append(f"{tid}: must start with system, user")
        for m in msgs:
            if set(m) != {"role", "content", "tool_calls", "tool_call_id", "name"}:
                problems.append(f"{tid}: message keys {sorted(m)}")
            if not isinstance(m["content"], str):
                problems.append(f"{tid}: non-string content")
            if m["role"] == "tool" and len(m["content"]) > 2000:
                seen_long += 1
        # arguments parse / ids pair
        bad_json, calls, results, order_bad = [], {}, [], []
        pending: list[str] = []
        for i, m in enumerate(msgs):
            if m["role"] == "assistant":
                pending = []
                for tc in m["tool_calls"] or []:
                    calls[tc["id"]] = i
                    pending.append(tc["id"])
                    try:
                        json.loads(tc["function"]["arguments"])
                    except json.JSONDecodeError:
                        bad_json.append(tc["id"])
            elif m["role"] == "tool":
                results.append(m["tool_call_id"])
                if m["tool_call_id"] in pending:
                    if pending[0] != m["tool_call_id"]:
                        order_bad.append(m["tool_call_id"])
                    pending.remove(m["tool_call_id"])
            else:
                pending = []
        orphans = [c for c in results if c not in calls]
        unanswered = [c for c in calls if c not in results]
        last = max(i for i, m in enumerate(msgs) if m["role"] == "assistant")
        trailing = {tc["id"] for tc in msgs[last]["tool_calls"] or []}
        mid_unanswered = [c for c in unanswered if c not in trailing]
        if order_bad:
            problems.append(f"{tid}: results out of order {order_bad}")
        defects = {"json": bad_json, "orphan": orphans, "missing": mid_unanswered}
        want = {"synthetic-008": "json", "synthetic-009": "orphan", "synthetic-010": "missing"}
        for kind, found in defects.items():
            if want.get(tid) == kind:
                if len(found) != 1:
                    problems.append(f"{tid}: expected exactly one {kind} defect, got {found}")
            elif found:
                problems.append(f"{tid}: unexpected {kind} defect {found}")
        if e["status"] == "accepted":
            # patch headers vs expected files_changed
            heads = sorted({
                h.split(" b/")[0][len("diff --git a/"):]
                for h in r["model_patch"].splitlines() if h.startswith("diff --git a/")
            })
            if e["files_changed"] is not None and heads != e["files_changed"]:
                problems.append(f"{tid}: patch files {heads} != {e['files_changed']}")
            for q in ("first_edit", "test_counts"):
                ref = e.get(q)
                if ref and "message_index" in ref:
                    m = msgs[ref["message_index"]]
                    if q == "first_edit":
                        args = json.loads(m["tool_calls"][0]["function"]["arguments"])
                        code = args.get("new_str", args.get("file_text"))
                        if code != ref["code"] or not args["path"].endswith("/" + ref["path"]):
                            problems.append(f"{tid}: first_edit index mismatch")
                    elif m["role"] != "tool":
                        problems.append(f"{tid}: test_counts index is not a tool message")
            fr = e.get("first_error")
            if fr and not any(fr["exception"] in m["content"] for m in msgs if m["role"] == "tool"):
                problems.append(f"{tid}: first_error text not found")
    if seen_long < 2:
        problems.append("fewer than two tool outputs longer than 2,000 characters")
    return problems


def check_datasets(path: Path) -> str:
    """Load the file through `datasets` (as the local jsonl source will); report row count."""
    try:
        import datasets
    except ImportError:
        return "datasets not installed: skipped"
    ds = datasets.load_dataset("json", data_files=str(path), split="train")
    return f"datasets: {ds.num_rows} rows, columns {ds.column_names}"


def build() -> tuple[str, str]:
    EXPECTED.clear()
    rows = [b() for b in BUILDERS]
    jsonl = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    return jsonl, readme(rows) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true",
                    help="only verify that the files on disk are up to date and valid")
    ap.add_argument("--no-datasets", action="store_true", help="skip the datasets load check")
    args = ap.parse_args()
    jsonl, md = build()
    if args.check:
        stale = [p.name for p, want in ((OUT_JSONL, jsonl), (OUT_README, md))
                 if not p.exists() or p.read_text(encoding="utf-8") != want]
        if stale:
            print(f"out of date: {', '.join(stale)} (run scripts/make_sample.py)")
            return 1
    else:
        OUT_DIR.mkdir(parents=True, exist_ok=True)
        OUT_JSONL.write_text(jsonl, encoding="utf-8")
        OUT_README.write_text(md, encoding="utf-8")
        print(f"wrote {OUT_JSONL.relative_to(PROJECT)} ({len(jsonl.encode())} bytes, "
              f"{jsonl.count(chr(10))} rows) and {OUT_README.relative_to(PROJECT)}")
    problems = verify(OUT_JSONL)
    for p in problems:
        print("PROBLEM:", p)
    if not args.no_datasets:
        print(check_datasets(OUT_JSONL))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
