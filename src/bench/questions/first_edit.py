"""``first_edit``: what exact code did the agent's first edit of the repository insert?

Reference ``{"path", "code", "context", "changed"}``: the first successful editor create /
str_replace / insert inside the task repository; ``code`` = the lines it added (for a
replacement, ``new_str`` without the leading and trailing lines it shares with ``old_str``),
``context`` = the whole inserted text, ``changed`` = the lines of ``code`` a line diff marks
as new (unchanged lines inside the block are context too: an answer needs only these). Dropped (never replaced by a later edit) when the first change
was a shell command that cannot be cited exactly (``sed -i``, a redirect), or when it only
removed lines.
"""

from __future__ import annotations

import re
import textwrap
from typing import Any

from bench.extract import added_lines, changed_lines, relative_to_repo
from bench.profiles import Profile
from bench.questions.matching import code_candidates, is_abstention, nows
from bench.questions.paths import match_paths, path_tokens
from bench.questions.question_type import CaseFacts, QuestionType, make_question
from bench.store.schema import DroppedQuestion, Question

__all__ = ["FIRST_EDIT"]

NAME = "first_edit"
QUESTION = ("What exact code did your first edit of the repository insert? "
            "Give the file (path relative to the repository root) and the code.")

# a line of code in an answer that does not delimit its code (prose lines are not checked)
_CODE_LINE = re.compile(r"^\s*(?:#|//|/\*|@\w|def |class |import |from \S+ import|return\b|[\w.\[\]]+\s*[-+*/]?=[^=])")
_ELLIPSIS = re.compile(r"^(?:#|//|/\*)?\s*(?:\.\.\.|…)+\s*(?:\*/)?$")


def _first_edit(edits):
    return next((e for e in edits if e.kind not in ("delete", "undo")), None)


def _in_order(lines: list[str], text: str) -> bool:
    """Every (non-empty) line is in ``text``, in this order."""
    at = 0
    for line in lines:
        if not line:
            continue
        found = text.find(line, at)
        if found < 0:
            return False
        at = found + len(line)
    return True


# Code the answer names as what was replaced ("replaced `old` with `new`", "changed `old` to `new`", "instead of
# `old`", "`new` (it replaced `old`)", "`new`, replacing `old`"): the edit did not insert it, and the answer does not
# claim it did
_PIECE = r"(```.*?```|`[^`\n]+`)"
_REPLACED = re.compile(r"\b(?:replac\w*|chang\w*|turn\w*|swapp?\w*|rewr\w*|upd\w*)\s+(?:\w+\s+){0,3}?" + _PIECE +
                       r"\s*(?:\w+\s+)?(?=(?:with|to|into|by|for)\b)|\bfrom\s+" + _PIECE + r"\s+(?=to\b)"
                       r"|\binstead of\s+" + _PIECE +
                       # the new code as the subject: "`new` (it replaced `old`)", "`new`, replacing `old`"
                       r"|\b(?:(?:it|which|this|that|they)\s+(?:\w+\s+)?replac\w*|replacing|in place of|previously|"
                       r"formerly)\s+(?:\w+\s+){0,2}?" + _PIECE + r"(?!\s*(?:with|to|into|by)\b)", re.I | re.S)


def _without_replaced(text: str) -> str:
    """The answer without the code it names as replaced (that code is not claimed as inserted)."""
    return _REPLACED.sub(lambda m: m.group(0).replace(next(g for g in m.groups() if g), " "), text)


# A fenced unified diff: ```diff (or ```patch), or a block whose lines all carry a diff prefix with a "+" line
_FENCE = re.compile(r"```([\w+.-]*)[ \t]*\n?(.*?)```", re.S)
_DIFF_LINE = re.compile(r"^(?:[+ -]|@@|\\ No newline|$)")
_HEADER_PATH = re.compile(r"^[ab]/")  # "+++ b/src/x.py": git's side prefix


# An unfenced unified diff: its `--- x` / `+++ y` header pair, then lines with a diff prefix (or empty)
_BARE_DIFF = re.compile(r"^--- \S[^\n]*\n\+\+\+ \S[^\n]*(?:\n(?:[+ -]|@@|\\ No newline)[^\n]*|\n(?=\n|[+ @-]))*", re.M)


def _diff_as_code(text: str) -> str:
    """Fenced diffs read as what they insert: ``+`` lines and context lines without their prefix; ``-`` lines
    (what the edit removed) and headers (``@@``, ``---``/``+++``) are not claimed as inserted. An unfenced diff
    (an answer without fences whose lines open with a ``--- a/x`` / ``+++ b/x`` header pair) is read alike."""
    if "```" not in text:
        text = _BARE_DIFF.sub(lambda m: "```diff\n" + m.group(0) + "\n```", text)
    def rewrite(match: re.Match[str]) -> str:
        language, body = match.group(1).lower(), match.group(2)
        lines = body.strip("\n").split("\n")
        is_diff = language in ("diff", "patch", "udiff") or (
            any(line.startswith("+") for line in lines) and all(_DIFF_LINE.match(line) for line in lines))
        if not is_diff:
            return match.group(0)
        kept = [line[1:] for line in lines if line[:1] in ("+", " ") and not line.startswith(("+++", "---"))]
        # the file its headers name (git's a/ and b/ prefixes are no directories), said outside the code
        files = [_HEADER_PATH.sub("", line[4:].strip()).split("\t")[0] for line in lines
                 if line.startswith(("+++ ", "--- ")) and "/dev/null" not in line]
        named = f"In {', '.join(dict.fromkeys(files))}:\n" if files else ""
        return named + "```\n" + "\n".join(kept) + "\n```"
    return _FENCE.sub(rewrite, text)


def _diff_context(text: str) -> list[str]:
    """The context lines of an answer's diffs (a space prefix): the file's lines around the insertion, shown, not
    claimed as inserted."""
    if "```" not in text:
        text = _BARE_DIFF.sub(lambda m: "```diff\n" + m.group(0) + "\n```", text)
    shown = []
    for match in _FENCE.finditer(text):
        lines = match.group(2).strip("\n").split("\n")
        if match.group(1).lower() in ("diff", "patch", "udiff") or (
                any(line.startswith("+") for line in lines) and all(_DIFF_LINE.match(line) for line in lines)):
            shown += [nows(line[1:]) for line in lines if line.startswith(" ") and line.strip()]
    return shown


# a dash parts a clause too ("It was a.py - I don't remember the exact code": a.py is stated, the code declined)
_CLAUSES = re.compile(r"[.;!?\n]+\s|,?\s+(?:but|though|although|so|yet)\s+|\s[-\u2013\u2014]+\s", re.I)
# markdown's indented code block ("In `a.py` I inserted:\n\n    x = 1\n    y = 2"): lines indented by four spaces
# or a tab after a blank line
_INDENTED_BLOCK = re.compile(r"(?:^|\n)[ \t]*\n((?:(?: {4}|\t)[^\n]*\S[^\n]*(?:\n|$)|[ \t]*\n)+)")
_ELSEWHERE = re.compile(r"\b(?:later|other|another|subsequent|afterwards?|next|second)\b", re.I)


# an edit told by what it touched: a verb (or noun) of editing and a name of code (a method, Class.method)
_EDITED = re.compile(r"\b(?:edit(?:ed)?|chang\w*|modif\w*|insert\w*|added|fix\w*|updat\w*|rewr\w*)\b", re.I)
_CODE_NAME = re.compile(r"\b[a-z_]+[A-Z]\w*\b|\b[A-Z]\w*\.[a-z_]\w*\b")


class FirstEdit:
    name = NAME
    answer_format = {"path": "the edited file's path", "code": "the lines the edit added or changed"}  # the typed answer's keys (bench.questions.answers)
    answer_tokens = 150  # a typical typed answer's output tokens (bench.estimate)
    rubric = ("Code: the right file (as for files) and the lines the edit changed (`changed`, all inside "
              "`code`), whitespace and indentation ignored. The other lines of `code` and `context` are "
              "optional; giving them is fine. Lines that are in none of them (invented code) make it wrong. "
              "Code the answer names as what the edit replaced (\"replaced `old` with `new`\", \"`new` (it replaced "
              "`old`)\") is not claimed "
              "as inserted; a diff is read as what it inserts: its `+` and context lines, not its `-` lines (its "
              "context lines are the file's: never invented code); its "
              "`--- a/x` / `+++ b/x` headers name its file (a/ and b/ are git's prefixes), fenced or not.")

    def text(self, target: dict[str, Any]) -> str:
        return QUESTION

    def applies(self, profile: Profile) -> bool:
        return profile.has_repository

    def build(self, facts: CaseFacts) -> Question | DroppedQuestion:
        case = facts.case
        first = _first_edit(facts.edits)
        if case.repo_root is None:
            return DroppedQuestion(NAME, "repository root unknown (no <uploaded_files>)")
        if first is None:
            return DroppedQuestion(NAME, "no edit inside the repository")
        if first.kind != "editor" or first.code is None:
            return DroppedQuestion(NAME, f"first edit of the repository was a shell command that cannot be cited "
                                         f"exactly: {first.command[:120]!r}")
        code = added_lines(first.old, first.code)
        if not code.strip():
            return DroppedQuestion(NAME, "first edit of the repository only removed lines (it inserted no code)")
        path = relative_to_repo(first.path, case.repo_root)
        changed = [line for line in changed_lines(first.old, first.code) if line.strip()]
        reference = {"path": path, "code": code, "context": first.code, "changed": changed}
        return make_question(case, NAME, QUESTION, reference,
                             [path, code], [first.call_index, first.result_index],
                             target={"repository": case.repo_root, "tool": facts.profile.editor_tool,
                                     "command": first.command})

    def spans(self, reference: dict[str, Any]) -> list[str] | None:
        code = reference["code"].strip("\n")
        return [code] if code.strip() else None  # the inserted code, as the edit wrote it

    def claim(self, parsed: Any, text: str, repo_root: str | None) -> dict[str, Any] | None:
        if isinstance(parsed, dict) and isinstance(parsed.get("code"), str):
            path = parsed.get("path") or parsed.get("file") or ""
            return {"paths": [str(path)] if path else [], "code": parsed["code"], "delimited": True}
        shown = _diff_context(text)
        text = _without_replaced(_diff_as_code(text))
        code, delimited = code_candidates(text)
        # the only inline spans are the file's path ("In `a.py` I inserted:"): markdown's indented code block after
        # it is the code (else the spans, the path, would be read as the code)
        spans_paths = delimited and "```" not in text and set(code.split("\n")) <= set(path_tokens(text))
        indented = _INDENTED_BLOCK.search(text) if spans_paths else None
        if indented:
            outside = text[: indented.start()] + text[indented.end():]
            return {"paths": path_tokens(outside, skip_negated=False), "code": textwrap.dedent(indented.group(1)),
                    "delimited": True}
        if not delimited and not path_tokens(text):
            if _EDITED.search(text) and _CODE_NAME.search(text) and not is_abstention(text):
                # "The edit to Loader.read, which changed the fallback": an edit described by the code it touched
                return {"paths": [], "code": "", "delimited": False}
            return None  # neither code nor a file
        if not delimited and is_abstention(text):
            # a file stated as the answer with the code not known is a partial claim (wrong); a file named
            # only as where to look, or as another edit, is no claim
            stated = [p for clause in _CLAUSES.split(text) if not is_abstention(clause) and not _ELSEWHERE.search(clause)
                      for p in path_tokens(clause)]
            return {"paths": stated, "code": "", "delimited": False} if stated else None
        outside = text
        if delimited:  # paths are named outside the code (a path inside the code is code)
            outside = re.sub(r"```.*?```", " ", text, flags=re.S)
        return {"paths": path_tokens(outside, skip_negated=False), "code": code, "delimited": delimited,
                "shown": shown}

    def grade(self, reference: dict[str, Any], claim: dict[str, Any], repo_root: str | None) -> tuple[bool, str]:
        named, _ = match_paths(claim["paths"], [reference["path"]], repo_root)
        path_ok = bool(named)
        context = nows(reference.get("context") or reference["code"])
        got = claim["code"]
        changed = [nows(line) for line in reference.get("changed") or reference["code"].split("\n")]
        code_ok = _in_order(changed, nows(got))
        if not code_ok and "\n" not in got.strip():  # one line told inline without its trailing separator
            code_ok = all(re.search(re.escape(line.rstrip(",;")) + r"(?![\w.])", nows(got)) for line in changed if line)
        invented = []
        if code_ok:  # undelimited code: only lines that look like code can be checked
            invented = [line for line in got.split("\n")
                        if nows(line) and not _ELLIPSIS.match(line.strip()) and nows(line) not in context
                        and nows(line) not in claim.get("shown", ())  # a diff's context line: the file's
                        and not any(nows(line) in nows(p) for p in claim["paths"])
                        and (claim["delimited"] or _CODE_LINE.match(line))]
        if path_ok and code_ok and not invented:
            return True, "same file and added code"
        if invented:
            return False, f"code has lines the edit did not insert: {invented[0].strip()[:80]!r}"
        return False, f"path {'matches' if path_ok else 'differs'}, code {'matches' if code_ok else 'differs'}"

    def answer_keys(self, reference: dict[str, Any]) -> list[str]:
        return [line.strip() for line in reference.get("changed") or reference["code"].split("\n") if line.strip()]


FIRST_EDIT: QuestionType[dict[str, Any], dict[str, Any]] = FirstEdit()  # its reference, its claim
