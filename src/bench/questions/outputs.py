"""What of a tool output an answer must restate, and in which forms (``tool_output``'s reading; README "Grading").

- markup: a tag is markup when the output closes it (``<returncode>0</returncode>``); Python's ``<string>`` and
  ``<module>`` are names, not markup;
- a caption: the first line of a multi-line output that is a sentence ending in ``:`` ("Here's the files and directories up to 2
  levels deep in /srv/app, excluding hidden items:", "Traceback (most recent call last):") introduces the output:
  only its paths are values (the listing repeats them);
- a Python traceback's frames (``File "x.py", line 3, in f``, the code line under it, the ``^^^`` marker) say
  where its exception was raised: optional, like a message's location; a line number the answer gives must be a
  frame's;
- quote characters of a literal in a line of code (``config["w"]``) are part of the line: ``config['w']`` is
  another line (in Java or C another literal); quotes around a value or around the whole output may differ;
- a path may be stated relative to the repository root, or by its file name when no other path of the output has
  that name (as for ``files_changed``); a ``:189:`` line suffix stays with it.

    untagged("<returncode>0</returncode><output>x</output>")   # '\\n0\\n\\nx\\n'
"""

from __future__ import annotations

import posixpath
import re

from bench.questions.values import clauses

__all__ = ["untagged", "without_caption", "without_frames", "frame_lines", "path_said", "outcome_claim",
           "requoted_code"]

_TAG = re.compile(r"<(/?)([A-Za-z_][\w-]*)>")


def untagged(text: str) -> str:
    """The text without its markup tags: the tags it closes (``<output>...</output>``), each tag a line break."""
    closed = {m.group(2) for m in _TAG.finditer(text) if m.group(1)}
    return _TAG.sub(lambda m: "\n" if m.group(2) in closed else m.group(0), text)


# a caption is a sentence: a capital first, three words or more, a colon last (not "   40\tcase OPEN:")
_CAPTION = re.compile(r"^[A-Z][\w'’]*(?:\W+\w[\w'’]*){2,}.*:$")


def without_caption(text: str) -> str:
    """A multi-line output with its caption line reduced to the paths it names."""
    lines = text.strip("\n").split("\n")
    if len(lines) < 2 or not _CAPTION.match(lines[0].rstrip()):
        return text
    paths = [p.rstrip(",.:") for p in re.findall(r"(?<![\w])/[\w./-]+", lines[0])]
    return "\n".join([" ".join(paths), *lines[1:]])


_FRAME = re.compile(r"^\s*File \"[^\"]*\", line (\d+)(?:, in .*)?$")
_CARETS = re.compile(r"^\s*[\^~]+\s*$")
# a Java stack frame ("\tat java.base/java.lang.Integer.parseInt(Integer.java:668)") and the elision of the rest
_JAVA_FRAME = re.compile(r"^\s*at [\w$.<>/-]+\((?:[^():\n]*?(?::(\d+))?|Native Method|Unknown Source)\)\s*$")
_JAVA_MORE = re.compile(r"^\s*\.\.\. \d+ more\s*$")


def frame_lines(text: str) -> list[int]:
    """The line numbers of a traceback's frames (Python's ``line 3``, Java's ``(X.java:3)``)."""
    return [int(m.group(1)) for line in text.split("\n")
            if (m := _FRAME.match(line) or _JAVA_FRAME.match(line)) and m.group(1)]


def without_frames(text: str) -> str:
    """A traceback without its frames: Python's ``File ...`` lines, the code line under each and the markers; Java's
    ``at pkg.Class.method(File.java:3)`` lines and ``... 3 more``. The exception lines stay."""
    if "Traceback (most recent call last)" not in text:
        lines = text.split("\n")
        if not any(_JAVA_FRAME.match(line) for line in lines):
            return text
        return "\n".join(line for line in lines if not (_JAVA_FRAME.match(line) or _JAVA_MORE.match(line)))
    kept, skip_code = [], False
    for line in text.split("\n"):
        if _FRAME.match(line):
            skip_code = True
            continue
        if _CARETS.match(line) or (skip_code and line.startswith("    ")):
            continue
        skip_code = False
        kept.append(line)
    return "\n".join(kept)


_SUFFIX = re.compile(r"((?::\d+)+:?)$")


def path_said(token: str, claim: str, repo_root: str | None, paths: list[str]) -> bool:
    """A path of the output stated relative to the repository root, without its leading ``./``, or by its file name
    when no other path of the output has that name (a ``:189:`` suffix kept with it)."""
    suffix = _SUFFIX.search(token)
    path = token[: suffix.start()] if suffix else token
    tail = suffix.group(1).rstrip(":") if suffix else ""
    forms = []
    root = (repo_root or "").rstrip("/")
    if root and path.startswith(root + "/"):
        forms.append(path[len(root) + 1:])
    if path.startswith("./"):  # find's "./pkg/a.py" is the entry "pkg/a.py" of the directory it searched
        forms.append(path[2:])
    name = posixpath.basename(path.rstrip("/"))
    names = [posixpath.basename(_SUFFIX.sub("", p).rstrip("/")) for p in paths]
    if "." in name and names.count(name) <= 1:
        forms.append(name)
    if any(re.search(rf"(?<![\w/.-]){re.escape(form + tail)}(?![\w/])", claim) for form in forms if form):
        return True
    # a grep hit's line told in prose beside its path ("totals.py, line 57", "totals.py at line 57", "line 57 of
    # totals.py")
    line = tail.lstrip(":")
    return line.isdigit() and any(
        re.search(rf"(?<![\w/.-]){re.escape(form)}`?,?\s+(?:at\s+|on\s+)?line\s+{line}(?!\d)", claim, re.I)
        or re.search(rf"\bline\s+{line}\s+(?:of|in)\s+`?{re.escape(form)}(?![\w/])", claim, re.I)
        for form in forms if form)


# a clause that says how the call went ("I only remember it didn't work"): a claim about the output, if vague
# (a test run's too: "the test didn't pass"), or what it held, vaguely ("it listed a handful of Java files")
# The subject may carry a word before it and what it was of ("the editable install of astropy failed"); "went fine" /
# "went wrong" says how it went as "worked" / "failed" do
_OUTCOME = re.compile(r"\b(?:it|they|(?:the|that|this) (?:[\w-]+ )?(?:call|command|run|install\w*|build|tool|request|script|tests?|suite|"
                      r"output)(?: of [\w./-]+)?)\s+"
                      # an adverb between ("it still failed", "it again failed")
                      r"(?:(?:still|again|also|just|then|eventually|ultimately|finally)\s+)?"
                      r"(?:(?:did not|didn't|never)\s+(?:work|succeed|pass|run)|(?:failed|errored|crashed|succeeded|worked|"
                      r"passed|broke)\b|went (?:fine|well|ok(?:ay)?|smoothly|badly|wrong)\b|(?:listed|showed|printed|returned|contained|gave|reported|had)\s+(?:only |just )?"
                      r"(?:a (?:few|handful|couple|bunch|lot|list|number)|some|several|many|lots|a|an)\b)"
                      # "everything was green": how a run went, in a test runner's colours
                      r"|\beverything (?:was|went|came back|stayed|turned) (?:all )?(?:green|red)\b", re.I)


def outcome_claim(text: str, declines: re.Pattern[str]) -> str | None:
    """A clause outside the answer's decline that says how the call went ("I can't see it; it didn't work")."""
    for clause in clauses(text):
        if not declines.search(clause) and (said := _OUTCOME.search(clause)):
            return said.group(0)
    return None


# a literal attached to code: after a name, a bracket, a parenthesis, "=" or ","
_CODE_LITERAL = re.compile(r"(?<=[\w\[(=,])([\"'])([^\"'\n]{1,80})\1")


def requoted_code(reference: str, claim: str) -> str | None:
    """A literal of a restated code line given with the other quote character (``['w']`` for ``["w"]``)."""
    for match in _CODE_LITERAL.finditer(reference):
        before, quote, value = reference[match.start() - 1], match.group(1), match.group(2)
        other = "'" if quote == '"' else '"'
        if before + other + value + other in claim and before + quote + value + quote not in claim:
            return f"{before}{other}{value}{other} for {before}{quote}{value}{quote}"
    return None
