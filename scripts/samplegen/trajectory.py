"""A small DSL for OpenHands-style trajectories in the nebius column schema.

Shared by the sample generator (``samplegen.rows``) and the tests' row builders
(``tests/support/builders.py``): one home for the shape of a message, a tool call, an exchange (an
assistant message and the results of its calls, in call order), a row, and the observation
texts OpenHands writes (shell markers, editor replies).

    t = Traj("synthetic-001")                       # call ids derived from the row id
    repo = Repo("/workspace/acme__x__1.0", {"x/core.py": CORE})
    t.act("Let me look.", repo.view("x/core.py"), repo.sh("ls", "README.md"))
    t.act("", repo.replace("x/core.py", "old", "new"))   # the in-memory file changes too
    nebius_row(tid, ..., messages=t.messages, model_patch=repo.diff())

Deterministic: no randomness, no clock. Edits are applied to in-memory file contents, so
editor outputs, line numbers and the patch agree with the edits.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from dataclasses import dataclass
from typing import Any

__all__ = ["Message", "PYTHON", "SNIPPET", "NO_NEW_OUTPUT", "message", "tool_call", "exchange", "nebius_row", "bash_out",
           "editor_reply", "cat_n", "git_blob", "Call", "Traj", "Repo"]

PYTHON = "/usr/bin/python"
SNIPPET = 4  # context lines OpenHands shows around an edit

Message = dict[str, Any]


def message(role: str, content: str, tool_calls: list[dict[str, Any]] | None = None,
            tool_call_id: str | None = None, name: str | None = None) -> Message:
    """One trajectory message: the five keys of the nebius schema, always all present."""
    return {"role": role, "content": content, "tool_calls": tool_calls, "tool_call_id": tool_call_id, "name": name}


def tool_call(call_id: str, name: str, args: dict[str, Any] | str) -> dict[str, Any]:
    """An OpenAI-style tool call; ``args`` as a str is written verbatim (e.g. invalid JSON)."""
    arguments = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def nebius_row(trajectory_id: str, instance_id: str, repo: str, resolved: bool | None, exit_status: str,
               model_patch: str, tools: list[dict[str, Any]], trajectory: list[Message], **extra: Any
               ) -> dict[str, Any]:
    """A row in the columns of ``nebius/SWE-rebench-openhands-trajectories`` (then ``extra``)."""
    return {"trajectory_id": trajectory_id, "instance_id": instance_id, "repo": repo, "resolved": resolved,
            "exit_status": exit_status, "model_patch": model_patch, "tools": tools, "trajectory": trajectory,
            **extra}


# --------------------------------------------------------------------------------------
# Observation texts
# --------------------------------------------------------------------------------------

NO_NEW_OUTPUT = (
    "[The command has no new output after 10 seconds. You may wait longer to see additional "
    "output by sending empty command '', send other commands to interact with the current "
    'process, send keys ("C-c", "C-z", "C-d") to interrupt/kill the previous command before '
    "sending your new command, or use the timeout parameter in execute_bash for future "
    "commands.]"
)


def bash_out(body: str, code: int, cwd: str, glue: str | None = None, obs: bool = False,
             python: str | None = PYTHON) -> str:
    """Command output followed by the OpenHands metadata markers.

    glue=None:   body, newline, cwd / interpreter / exit-code markers (normal case)
    glue="code": the exit-code marker glued to the last output line, no other markers
    glue="py":   the interpreter marker glued to the last line, exit-code marker after it
    obs:         prefix "OBSERVATION:\\n" (older OpenHands); python=None: no interpreter marker
    """
    cwd_m = f"[Current working directory: {cwd}]"
    py_m = f"[Python Interpreter: {python}]"
    code_m = f"[Command finished with exit code {code}]"
    if glue == "code":
        text = body + code_m
    elif glue == "py":
        text = body + py_m + "\n" + code_m
    else:
        if code == -1:
            body = (body + "\n" if body else "") + NO_NEW_OUTPUT
        markers = [cwd_m] + ([py_m] if python is not None else []) + [code_m]
        text = (body + "\n" if body else "") + "\n".join(markers)
    return ("OBSERVATION:\n" + text) if obs else text


def editor_reply(command: str, path: str) -> str:
    """str_replace_editor's short success reply (a create's is exactly this; an edit's shows no snippet)."""
    if command == "create":
        return f"File created successfully at: {path}"
    return f"The file {path} has been edited. Here's the result of running `cat -n`."


def cat_n(text: str, start: int = 1) -> str:
    lines = text.split("\n")
    return "\n".join(f"{i + start:6}\t{line}" for i, line in enumerate(lines))


def git_blob(text: str) -> str:
    data = text.encode()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()[:7]


# --------------------------------------------------------------------------------------
# Calls, exchanges, trajectories
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


def exchange(text: str, calls: list[Call]) -> list[Message]:
    """One assistant message with ``calls`` (each has its id), then their results in call order."""
    messages = [message("assistant", text, tool_calls=[tool_call(c.id or "", c.name, c.args) for c in calls])]
    messages += [message("tool", c.result, tool_call_id=c.id, name=c.name) for c in calls if c.result is not None]
    return messages


class Traj:
    """A trajectory being written; call ids are derived from a hash of the row id and call number."""

    def __init__(self, tid: str):
        self.tid = tid
        self.messages: list[Message] = []
        self._n = 0

    def new_id(self) -> str:
        self._n += 1
        digest = hashlib.sha256(f"{self.tid}#{self._n}".encode()).digest()
        return "call_" + _base62(digest)[:24]

    def system(self, text: str) -> None:
        self.messages.append(message("system", text))

    def user(self, text: str) -> None:
        self.messages.append(message("user", text))

    def say(self, text: str) -> None:
        self.messages.append(message("assistant", text))

    def act(self, text: str, *calls: Call) -> list[str]:
        """One assistant message with ``calls``; their replies follow in call order."""
        ids = []
        for c in calls:
            c.id = c.id or self.new_id()
            ids.append(c.id)
        self.messages += exchange(text, list(calls))
        return ids

    def tool_raw(self, name: str, content: str, call_id: str) -> None:
        self.messages.append(message("tool", content, tool_call_id=call_id, name=name))

    def index(self) -> int:
        """Index the next message will get."""
        return len(self.messages)


# --------------------------------------------------------------------------------------
# A task repository: shell and editor calls that change its in-memory files
# --------------------------------------------------------------------------------------


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
        return Call("str_replace_editor", args, self._o(editor_reply("create", path)))

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
        for rel, (old_text, new_text) in (extra or {}).items():
            pairs[rel] = (old_text, new_text)
        if rels is not None:
            pairs = {r: pairs[r] for r in rels}
        out = []
        for rel in sorted(pairs):
            before, after = pairs[rel]
            out.append(f"diff --git a/{rel} b/{rel}\n")
            a_lines: list[str]
            if before is None:
                out.append("new file mode 100644\n")
                out.append(f"index 0000000..{git_blob(after)}\n")
                a_lines, fromfile = [], "/dev/null"
            else:
                out.append(f"index {git_blob(before)}..{git_blob(after)} 100644\n")
                a_lines, fromfile = before.splitlines(keepends=True), f"a/{rel}"
            out.extend(
                difflib.unified_diff(
                    a_lines, after.splitlines(keepends=True), fromfile=fromfile, tofile=f"b/{rel}"
                )
            )
        return "".join(out)
