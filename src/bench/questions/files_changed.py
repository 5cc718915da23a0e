"""``files_changed``: which files did the agent change in the repository?

Reference: the repo-relative paths of the ``model_patch`` diff headers, sorted. Dropped when
the patch names no file or when the files the trajectory visibly changes differ from the
patch (the offline reader must be able to reproduce the reference from the history).
"""

from __future__ import annotations

import re
from typing import Any

from bench.extract import edited_files
from bench.profiles import Profile
from bench.questions.base import CaseFacts, make_question
from bench.questions.matching import match_paths, path_tokens
from bench.schema import DroppedQuestion, Question

__all__ = ["FILES_CHANGED", "patch_paths"]

NAME = "files_changed"
QUESTION = "Which files did you change in the repository? List every path relative to the repository root."

_DIFF_HEADER = re.compile(r"^diff --git a/(\S+) b/(\S+)", re.M)


def patch_paths(model_patch: str) -> list[str]:
    """Repo-relative paths named in the patch's ``diff --git`` headers, sorted."""
    paths = set()
    for old, new in _DIFF_HEADER.findall(model_patch or ""):
        paths.add(new if new != "/dev/null" else old)
    return sorted(paths)


class FilesChanged:
    name = NAME
    answer_format = {"files": "list of the paths of the files you changed, relative to the repository root"}  # the typed answer's keys (bench.questions.answers)
    rubric = ("Files: the set of repository files the answer names as changed equals the reference set. "
              "Absolute paths under the repository root and paths relative to it are the same file; a bare "
              "file name counts when exactly one reference path has that name. The right file name in the "
              "wrong directory, a missing file or an extra file makes it wrong. Things that are not file "
              "paths (a module.function, a version number) are not files; build files without an extension "
              "(Makefile, Dockerfile) are. Files the answer says it only opened or did not change are not named "
              "as changed.")

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
        return found or None

    def grade(self, reference: list[str], claim: list[str], repo_root: str | None) -> tuple[bool, str]:
        named, extra = match_paths(claim, reference, repo_root)
        missing = sorted(set(reference) - named)
        if not missing and not extra:
            return True, "same set of files"
        return False, f"missing {missing}, extra {sorted(set(extra))}"

    def answer_keys(self, reference: list[str]) -> list[str]:
        return list(reference)


FILES_CHANGED = FilesChanged()
