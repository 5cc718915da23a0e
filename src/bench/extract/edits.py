"""Changes to the repository a history shows: editor edits (citable), shell writes (not), undo, rm.

    edits = repo_edits(events, case.repo_root, case.profile)
    edited_files(edits, case.repo_root)       # repo-relative files left changed
    added_lines(old_str, new_str)             # what a replacement added
"""

from __future__ import annotations

import difflib
import functools
import posixpath
import re
import shlex
from dataclasses import dataclass

from bench.extract.history import ToolEvent
from bench.profiles import Profile

__all__ = ["Edit", "repo_edits", "edited_files", "added_lines", "changed_lines", "relative_to_repo"]


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


@functools.lru_cache(maxsize=4096)  # every question of a view reads the same commands again
def _tokens(line: str) -> tuple[str, ...]:
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        return tuple(lexer)
    except ValueError:  # unbalanced quotes: give up on this line rather than guess
        return ()


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
    if not repo_root:  # no repository: no path lies inside it
        return edits
    for event in events:
        if profile.is_editor(event.name):
            command = event.args.get(profile.editor_command_arg)
            if not isinstance(command, str):  # no command: neither an edit nor an undo
                continue
            argument = profile.edit_argument(command)
            undo = profile.editor_undo is not None and command == profile.editor_undo
            if (argument is None and not undo) or profile.editor_failed(event.output):
                continue
            path = event.args.get(profile.editor_path_arg)
            if relative_to_repo(path, repo_root) is None:
                continue
            if undo or argument is None:  # argument None: an undo (anything else was skipped above)
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
