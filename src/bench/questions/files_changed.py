"""``files_changed``: which files did the agent change in the repository?

Reference: the repo-relative paths of the ``model_patch`` diff headers, sorted. Dropped when
the patch names no file or when the files the trajectory visibly changes differ from the
patch (the offline reader must be able to reproduce the reference from the history).
"""

from __future__ import annotations

import posixpath
import re
from typing import Any

from bench.extract import edited_files
from bench.profiles import Profile
from bench.questions.matching import is_abstention, said_outside_decline
from bench.questions.paths import match_paths, names, negated_spans, path_tokens
from bench.questions.question_type import CaseFacts, QuestionType, make_question
from bench.store.schema import DroppedQuestion, Question

__all__ = ["FILES_CHANGED", "patch_paths", "vague_change"]

NAME = "files_changed"
QUESTION = "Which files did you change in the repository? List every path relative to the repository root."

# an answer that says no file was changed: a claim (the empty set), not an abstention
_NO_FILES = re.compile(r"^\W*(?:none|nothing|no files?)\W*(?:$|[.;:,!\u2013\u2014-])|\b(?:no|zero) files?\b|\b(?:did not|didn't|never) (?:\w+ )?"
                       r"(?:change|modify|edit|touch|write)\w* any(?:thing| files?)?\b|\bnothing was (?:changed|modified)\b",
                       re.I)
# what was changed, told vaguely ("I only remember touching the distance code"): a claim about the files (wrong: it
# names none), not an abstention; a bare quantifier ("I changed some files") says nothing of which
# "working (somewhere) in the X code" says where the changes were as "touching the X code" does; a hyphenated
# word names the part too ("the match-expression code")
_VAGUE_CHANGE = re.compile(r"\b(?:(?:touch|edit|chang|modif|fix|patch|updat|rewr|wrote|writ)\w*"
                           r"|work(?:ed|ing)?\s+(?:somewhere\s+)?(?:in|on))\s+(?:the\s+|some\s+|my\s+|a\s+)?"
                           r"(?!(?:some|few|several|many|a|the|my|those|these|all|any|couple|bunch|of|two|three|other)\b)"
                           r"(\w+(?:-\w+)*)(?:\s+\w+)?\s+(?:code|files?|modules?|tests?|class(?:es)?|functions?|logic|parts?|package)\b",
                           re.I)


def vague_change(text: str) -> str | None:
    """What a clause outside the answer's decline says was changed, vaguely ("touching the distance code"), or None."""
    return said_outside_decline(text, _VAGUE_CHANGE)


_DIFF_HEADER = re.compile(r"^diff --git a/(\S+) b/(\S+)", re.M)


def patch_paths(model_patch: str) -> list[str]:
    """Repo-relative paths named in the patch's ``diff --git`` headers, sorted."""
    paths = set()
    for old, new in _DIFF_HEADER.findall(model_patch or ""):
        paths.add(new if new != "/dev/null" else old)
    return sorted(paths)


def denied_names(text: str) -> set[str]:
    """The identifiers and file stems named where the text denies a change ("FindNull I only read")."""
    return set().union(set(), *(names(text[a:b]) for a, b in negated_spans(text)))


class FilesChanged:
    name = NAME
    answer_format = {"files": "list of the paths of the files you changed, relative to the repository root"}  # the typed answer's keys (bench.questions.answers)
    answer_tokens = 60  # a typical typed answer's output tokens (bench.estimate)
    rubric = ("Files: the set of repository files the answer names as changed equals the reference set. "
              "Absolute paths under the repository root and paths relative to it are the same file; a bare "
              "file name counts when exactly one reference path has that name. The right file name in the "
              "wrong directory, a missing file or an extra file makes it wrong. Things that are not file "
              "paths (a module.function, a version number) are not files; build files without an extension "
              "(Makefile, Dockerfile) are. Files the answer says it only opened or only ran (\"just a scratch script I "
              "ran\", \"which I only compiled and ran\", \"the c.py experiment\", \"(that one I only tried to open)\", \"- also c.py, though I only viewed that one\", \"I also looked at c.py\" unless the clause also tells a "
              "change), did not change (\"(not changed, only read)\"; an edit reverted is no change, \"b.py I edited but "
              "reverted\") or are outside the "
              "repository are not named as changed. An answer that it changed no file claims the empty set.")

    def text(self, target: dict[str, Any]) -> str:
        return QUESTION

    def applies(self, profile: Profile) -> bool:
        return profile.has_repository

    def build(self, facts: CaseFacts) -> Question | DroppedQuestion:
        case = facts.case
        changed = patch_paths(case.model_patch)
        shown = edited_files(facts.edits, case.repo_root)
        if not changed:
            return DroppedQuestion(NAME, "model_patch names no file")
        if shown != changed:
            missing = sorted(set(changed) - set(shown))
            extra = sorted(set(shown) - set(changed))
            return DroppedQuestion(NAME, f"patch files differ from the edits the trajectory shows "
                                         f"(in patch only: {missing}; edited only: {extra})")
        indices = [e.call_index for e in facts.edits] + [e.result_index for e in facts.edits]
        return make_question(case, NAME, QUESTION, changed, changed, indices,
                             target={"repository": case.repo_root})

    def vague(self, text: str) -> str | None:
        """An answer that names no file but says what it changed, vaguely ("I can't see the edits - I only remember
        touching the distance code"): a claim about the files, wrong (a clause that declines is no claim)."""
        said = vague_change(text)
        return f"a vague claim about the changes ({said!r}), no file named" if said else None

    def retracts(self, head: str, tail: str) -> bool:
        """A self-correction that takes back a file of the list by name ("a.py, b.py - wait, no: c.py; b I only
        read") corrects that file only: the others stand (``matching.final_claim``)."""
        return bool(denied_names(tail) & names(head))

    def spans(self, reference: list[str]) -> None:
        return None  # a list: only every edit shows it

    def claim(self, parsed: Any, text: str, repo_root: str | None) -> list[str] | None:
        if isinstance(parsed, list) and parsed and all(isinstance(p, str) for p in parsed):
            return parsed
        if isinstance(parsed, dict):
            listed = parsed.get("files") or parsed.get("files_changed") or parsed.get("paths")
            if isinstance(listed, list) and listed:
                return [str(p) for p in listed]
        found = path_tokens(text)
        if repo_root:  # the repository root itself is not a changed file
            found = [p for p in found if p.rstrip("/") != repo_root.rstrip("/")]
        denied = denied_names(text)  # "FindNull I only read" takes back src/FindNull.java wherever it is named
        found = [p for p in found if posixpath.basename(p).rsplit(".", 1)[0] not in denied]
        if not found and _NO_FILES.search(text) and not is_abstention(text):
            return []  # "None: I changed no file" claims the empty set
        return found or None

    def grade(self, reference: list[str], claim: list[str], repo_root: str | None) -> tuple[bool, str]:
        named, extra = match_paths(claim, reference, repo_root)
        missing = sorted(set(reference) - named)
        if not missing and not extra:
            return True, "same set of files"
        return False, f"missing {missing}, extra {sorted(set(extra))}"

    def answer_keys(self, reference: list[str]) -> list[str]:
        return list(reference)


FILES_CHANGED: QuestionType[list[str], list[str]] = FilesChanged()  # its reference, its claim
