"""Reading claims out of free-text answers: abstentions, candidates, paths, code, identifiers
(numbers, dates and multi-part values: :mod:`bench.questions.values`; exception types and
messages: :mod:`bench.questions.messages`).

The exact judge's per-type ``claim`` functions use these to read what an LLM wrote (prose,
markdown, JSON, code fences) as tolerantly as the grading rule allows (README, "Grading").

    parse_json('```json\\n{"a": 1}\\n```')     # {'a': 1}
    path_tokens("I edited `mypy/checker.py`")  # ['mypy/checker.py']
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Callable
from typing import Any

__all__ = ["ABSTAIN_PATTERNS", "is_abstention", "claims_none", "has_values", "declined_values", "final_claim", "value_like",
           "offers_alternatives", "stated_bool", "parse_json", "squash", "nows", "path_tokens", "norm_path", "match_paths", "code_candidates",
           "has_identifier",
           "negated_spans", "names", "is_file"]


ABSTAIN_PATTERNS = re.compile(
    r"\b(i (?:do not|don't|no longer) have (?:the|that|it|any|this)"
    r"|i (?:do not|don't|cannot|can't|no longer|am not able to|am unable to|did not|didn't) (?:know|recall|"
    r"remember|see|tell|determine|find|say|access|keep (?:count|track))"
    r"|i (?:can't|cannot) count|not (?:available|visible|in my context|able to (?:recall|determine|tell))"
    r"|(?:i'm|i am|i\u2019m) (?:not able|unable) to (?:\w+ly )?(?:know|recall|remember|see|tell|determine|find|say|"
    r"reconstruct|reproduce|list|quote|count|access)"
    r"|cannot (?:be )?determine|unable to (?:determine|recall|tell)|no (?:longer )?(?:access|record)"
    r"|(?:is|was|are|were)(?:n't| not| no longer) (?:in my (?:context|memory|notes|history)|visible|available|shown)"
    r"|(?:don't|do not|no longer) have (?:\w+ ){0,4}in front of me"
    r"|no longer (?:have|see|visible|available|in my)|(?:won't|will not) guess|no idea"
    r"|(?:was|were|has been|have been) (?:cleared|removed|dropped|compacted) from my"
    r"|(?:i'm|i am) not (?:sure|certain) (?:what|which|how|whether)|i have no (?:way|information|memory)"
    r"|i (?:do not|don't) have (?:a |any )?(?:clear |reliable |complete |good )?(?:record|memory|recollection)"
    r"|(?:rather|prefer to) not (?:to )?guess"
    r"|i(?:'d| would) (?:have|need) to (?:rerun|re-run|reopen|re-open|check|look|scroll|open|see|run)"
    r"|(?:can't|cannot|can not) (?:\w+ly )?(?:say|reconstruct|reproduce|list|quote|recall|count|tell|remember)"
    r"|lost (?:count|track)|summari[sz]ed away|not (?:sure|certain) (?:any ?more|of)|no (?:longer )?details?"
    r"|(?:did not|didn't) keep (?:the|that|it|its|any|this|track|count)\b(?:[^.;\n]*\bin mind)?)\b"
    r"|^\W*(?:unknown|not sure|n/a|none available|-+|\?+)\W*$|^\W*not (?:sure|certain)\s*[-\u2013\u2014,:;]",
    re.I,
)


# "The user never gave me a phone number", "no phone number was given", "there was no such field": a claim that
# there was none (wrong where the reference has one), not a decline
_NONE_GIVEN = re.compile(r"(?:\bnever|\bdid not|n't)\s+(?:\w+\s+){0,2}?(?:gave|give|given|provided?|stated?|mentioned|"
                         r"shared?|told|tell|returned|return)\b"
                         r"|\bno (?:\w+ ){0,2}(?:was|were) (?:ever )?(?:given|provided|stated|mentioned|returned|shared)\b"
                         r"|\bthere (?:was|were|is) no (?:such )?\w+", re.I)


def claims_none(text: str) -> bool:
    """The answer says there was none ("the user never gave me a phone number"): a claim, not an abstention."""
    return bool(_NONE_GIVEN.search(text or ""))


def is_abstention(text: str) -> bool:
    """The answer says it does not know (or is empty)."""
    return not (text or "").strip() or bool(ABSTAIN_PATTERNS.search(text))


_VALUE = re.compile(r"\d|`[^`]+`|\"[^\"]+\"|(?<![A-Za-z])'[^'\s][^']*'(?![A-Za-z])|\b\w+_\w+\b|\b[a-z]+[A-Z]\w*|\w/\w")


_NOT_A_VALUE = re.compile(r"\bn/a\b", re.I)  # "N/A" is no path


def value_like(reference: Any) -> bool:
    """A reference that is one value of a shape an answer must show to claim it: a number (not a
    boolean), or one token holding a digit (an id, a phone number, a date)."""
    if isinstance(reference, bool):
        return False
    if isinstance(reference, (int, float)):
        return True
    return isinstance(reference, str) and bool(re.fullmatch(r"[\w.@+:/-]*\d[\w.@+:/-]*", reference.strip()))


def has_values(text: str, besides: str = "") -> bool:
    """Whether a text holds something specific: a number, a quoted string, an identifier, a path;
    with ``besides`` (the question), one that the question itself does not already state."""
    if not besides:
        return bool(_VALUE.search(_NOT_A_VALUE.sub(" ", text or "")))
    for match in _OWN_VALUE.finditer(_NOT_A_VALUE.sub(" ", text or "")):
        token = match.group(0).strip("`'\"").strip().rstrip(".,:;-")
        if token and not has_identifier(token, besides):
            return True
    return False


# the values of _VALUE as whole tokens (a number, not its digits), to compare with the question's
_OWN_VALUE = re.compile(r"[\w.-]*\d[\w.-]*|`[^`]+`|\"[^\"]+\"|(?<![A-Za-z])'[^'\s][^']*'(?![A-Za-z])|\b\w+_\w+\b"
                        r"|\b[a-z]+[A-Z]\w*|\w+/\w+")


# within one sentence: a dot inside a token (3.5, a.b@c.com) does not end it
_SENTENCE = r"(?:[^.\n]|\.(?=\S))*"
_COUNT = r"(?:\d+(?:\.\d+)?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
# an id-like value: a token with a digit (C1001, 555-0101, 2.5), or a quoted one
_ID_TOKEN = r"(?:[A-Za-z_]*\d[\w.@:/-]*\w|`[^`\n]+`)"
_ALTERNATIVES = re.compile(rf"\beither\b{_SENTENCE}\bor\b|\bor\b{_SENTENCE}\b(?:not sure which|can't tell which)"
                           rf"|(?<![\w.-]){_COUNT} or {_COUNT}(?![\w.-])"
                           rf"|(?<![\w.@:/-]){_ID_TOKEN},? or (?:(?:maybe|perhaps|possibly) )?{_ID_TOKEN}(?![\w@:/-])"
                           r"|,? or (?:maybe|perhaps|possibly)\b", re.I)

# "C1001 - no wait, it was C1002", "9 times? No wait - 8", "X - sorry, no: Y", "12 times... actually, it was 14":
# the claim is what follows the last correction ("actually" corrects only after a break: "it was actually X" does not)
_CORRECTION = re.compile(r"(?:\b(?:no,? wait|wait,? no|scratch that|correction|i mean|make that|no,? actually"
                         # "12 passed - hmm, no, that was after the fix; the first run had 13": an interjection that
                         # takes the claim back, or "no, that was" (another run, another call)
                         r"|(?:hmm+|umm*|uh+|oh|ah),? no|no,? that (?:was|is|'s|one was)"
                         r"|sorry,? (?:(?:no|nope|wrong)\b(?=\s*[:,;.!\u2013\u2014-])|i mean|it was|actually|my mistake)"
                         r"|my mistake)\b"
                         r"|(?:\.\.\.|\u2026|[-\u2013\u2014;,]|[.!?](?=\s))\s*actually\b)"
                         r"[\s,:;.!?\u2013\u2014-]*", re.I)

# "I don't know what X returned when I ran Y": what the answer does not know is no claim
_DECLINED_OBJECT = re.compile(r"\b(?:what|which|how|whether|if|where|when)\b[^.;\n]*"
                              r"|\b(?:the|that|this|its) (?:\w+ )?(?:output|result|response|reply|value|view|run|call)s?"
                              r" (?:of|from|for)\b[^.;\n]*", re.I)


def final_claim(text: str, reference: str = "", retracts: Callable[[str, str], bool] | None = None) -> str:
    """The text after its last self-correction ("X - no wait, Y" claims Y), else the text. Words of the
    reference (a tool's output that says "..., actually ...") are not a correction. A type's ``retracts(head,
    tail)`` says when a correction takes back one item of a list by name: then the claim is the whole text."""
    if reference and _CORRECTION.search(reference):
        return text
    corrections = list(_CORRECTION.finditer(text or ""))
    if not corrections or not text[corrections[-1].end():].strip():
        return text
    head, tail = text[: corrections[-1].start()], text[corrections[-1].end():]
    return text if retracts is not None and retracts(head, tail) else tail


def names(text: str) -> set[str]:
    """The identifiers (CamelCase, snake_case, backticked) and file stems a text names (``FindNull``)."""
    found = {m.group(0).strip("`") for m in _OWN_NAME.finditer(text)}
    found |= {posixpath.basename(t).rsplit(".", 1)[0] for t in path_tokens(text, skip_negated=False)}
    return {n for n in found if len(n) >= 3}


def declined_values(text: str, besides: str = "") -> bool:
    """Whether a declining answer names values of its own outside what it says it does not know
    ("I can't recall what `make` printed in src/app" names only what it cannot recall)."""
    kept = []
    for sentence in re.split(r"(?<=[.;!?])\s+|\n", text or ""):
        found = ABSTAIN_PATTERNS.search(sentence)
        kept.append(sentence[: found.end()] + _DECLINED_OBJECT.sub(" ", sentence[found.end():], count=1)
                    if found else sentence)
    return has_values(" ".join(kept), besides)


_NEGATED_YES = re.compile(r"\b(?:not|n't|never|no longer)\s+(?:\w+\s+)?(?:enabled|on|active|true|connected|yes|set)\b",
                          re.I)
TRUE_WORDS = ("true", "yes", "enabled", "on", "active", "connected")
FALSE_WORDS = ("false", "no", "disabled", "off", "not", "none", "inactive", "disconnected")


def stated_bool(text: str) -> bool | None:
    """The yes/no a text states ("not enabled" is no), None when it states neither or both."""
    words = set(re.findall(r"[a-z]+", _NEGATED_YES.sub(" false ", text or "").lower()))
    yes, no = bool(words & set(TRUE_WORDS)), bool(words & set(FALSE_WORDS))
    return None if yes == no else yes


def offers_alternatives(text: str) -> bool:
    """The answer offers candidates without choosing ("either X or Y", "X or Y, not sure which")."""
    return bool(_ALTERNATIVES.search(text or ""))


def parse_json(text: str) -> Any:
    """The answer as JSON (a whole JSON text, or the first fenced ```json block), else None."""
    text = (text or "").strip()
    fenced = re.search(r"```(?:json)?\s*(.*?)```", text, re.S)
    for candidate in ([fenced.group(1).strip()] if fenced else []) + [text]:
        try:
            return json.loads(candidate)
        except (json.JSONDecodeError, ValueError):
            continue
    return None


def squash(text: str) -> str:
    """Whitespace runs folded to one space."""
    return re.sub(r"\s+", " ", text or "").strip()


def nows(text: str) -> str:
    """All whitespace removed (code compared with indentation and line breaks ignored)."""
    return re.sub(r"\s+", "", text or "")


# --- paths -------------------------------------------------------------------------------

# File name extensions a repository file commonly has (a token like `2022.6` or
# `module.function` is not a file).
_EXTENSIONS = {
    "py", "pyi", "pyx", "pxd", "java", "kt", "kts", "scala", "groovy", "gradle", "js", "jsx", "ts", "tsx", "mjs",
    "cjs", "go", "rs", "c", "h", "cc", "cpp", "hpp", "cxx", "m", "mm", "swift", "rb", "php", "cs", "fs", "pony",
    "lua", "pl", "r", "jl", "hs", "ml", "ex", "exs", "erl", "clj", "dart", "vue", "svelte", "sh", "bash", "zsh",
    "ps1", "bat", "md", "rst", "txt", "toml", "cfg", "ini", "yaml", "yml", "json", "xml", "html", "htm", "css",
    "scss", "less", "sql", "proto", "properties", "lock", "in", "csv", "tsv", "conf", "mk", "cmake", "dockerfile",
    "tf", "gemspec", "podspec", "sbt", "ipynb", "tex", "bib", "svg", "po", "pot", "j2", "jinja", "tmpl", "env",
}
_PATH = re.compile(r"(?<![\w@])(?:\.{0,2}/)?[\w.+-]+(?:/[\w.+-]+)*")
_NEGATION = re.compile(
    r"(?:not|n't|never|without|no longer|instead of|rather than|unchanged|untouched|"
    r"(?:only|just) (?:read|viewed|looked|opened|inspected)|"
    r"did not|didn't)\b",
    re.I,
)


# a sentence that says files were not changed: the denial covers the whole sentence
# (``n't`` has no word boundary before it: "didn't change them" is a denial)
_DENIES_CHANGE = re.compile(r"(?:\bnot|n't|\bnever|\bno longer|\bwithout)\s+(?:\w+\s+){0,2}?(?:chang|modif|edit|touch|alter|"
                            r"updat|writ|patch)\w*|\b(?:unchanged|untouched|unmodified)\b|\bleft (?:it|them|that|those) (?:as is|alone)\b"
                            r"|\b(?:only|just) (?:read|viewed|looked|opened|inspected|ran|run|executed)\b"
                            # set apart as a script it only ran ("x.py was just a scratch script I ran")
                            r"|\b(?:only|just) an? (?:\w+ ){0,2}?(?:script|file|helper) (?:i|we) (?:ran|run|executed|used)\b"
                            r"|\boutside (?:of )?(?:the |this |my )?(?:repo|repository|project|source tree|workspace)\b"
                            r"|\bnot (?:in|inside|part of|under) (?:the |this )?(?:repo|repository)\b", re.I)
# a sentence (or list item): a dot inside a token (a.py, 2.5) does not end it
_SENTENCE_SPAN = re.compile(r"(?:[^\n.;!?]|[.!?](?=[^\s]))+(?:[.;!?](?=\s|$)|\n|$)")
_CLAUSE_END = re.compile(r"[,;:()]|\b(?:and|but|while)\b")


# a clause of a sentence: what a denial that names its own object ("FindNull I only read") covers
_CLAUSE = re.compile(r"[^,;:()]+?(?=[,;:()]|\b(?:but|while|whereas|though|although)\b|$)", re.I)
# what a clause names of its own: an identifier (CamelCase, snake_case, backticked), else it refers back ("them")
_OWN_NAME = re.compile(r"`[^`\n]+`|\b[A-Z][a-z0-9]+[A-Z]\w*|\b[a-z]\w*_\w+\b")


def _denied_clauses(sentence: str) -> list[tuple[int, int]] | None:
    """The clauses of a denying sentence that deny, when each names what it denies ("I edited a.py, b.py was
    unchanged"; "X.java is what I edited, FindNull I only read") or is a parenthesis after what it denies ("b.py
    (not in the repo)"); None when a denial refers back ("..., but did not change them"): the whole sentence."""
    spans = []
    for clause in _CLAUSE.finditer(sentence):
        if _DENIES_CHANGE.search(clause.group(0)):
            files = [t for t in _PATH.finditer(sentence[: clause.start()]) if _is_file(t.group(0).rstrip(".,:;"))]
            if _OWN_NAME.search(clause.group(0)) or any(_is_file(t.group(0).rstrip(".,:;"))
                                                        for t in _PATH.finditer(clause.group(0))):
                spans.append(clause.span())
            elif sentence[: clause.start()].rstrip().endswith("(") and files:
                spans.append((files[-1].start(), clause.end()))
            else:
                return None
    return spans or None


def negated_spans(text: str) -> list[tuple[int, int]]:
    """Character spans that deny something: a sentence (or list item) that says "X was not changed" (only the
    denying clauses when each names what it denies), or, where the negation is followed by a path in its clause
    ("a.py and b.py, not c.py"), that clause's rest."""
    spans = []
    for match in _SENTENCE_SPAN.finditer(text):
        sentence, start = match.group(0), match.start()
        if _DENIES_CHANGE.search(sentence):  # "(I also opened x.py and y.py, but did not change them.)"
            clauses = _denied_clauses(sentence)
            spans += [(start + a, start + b) for a, b in clauses] if clauses else [match.span()]
            continue
        for negation in _NEGATION.finditer(sentence):  # "a.py and b.py, not c.py"; "not sure" denies no file
            end = _CLAUSE_END.search(sentence, negation.end())
            clause = sentence[negation.end(): end.start() if end else len(sentence)]
            if any(_is_file(t.group(0).rstrip(".,:;")) for t in _PATH.finditer(clause)):
                spans.append((start + negation.start(), start + negation.end() + len(clause)))
    return spans


# Files a repository commonly has without an extension (a build file named in prose is a file)
_BARE_FILES = {"Makefile", "makefile", "GNUmakefile", "Dockerfile", "Containerfile", "Jenkinsfile", "Vagrantfile",
               "Gemfile", "Rakefile", "Procfile", "Pipfile", "Brewfile", "Snakefile", "Justfile", "justfile"}


def _is_file(token: str) -> bool:
    name = token.rstrip("/").rsplit("/", 1)[-1]
    if name in _BARE_FILES:
        return True
    if "." not in name.strip("."):
        return False
    extension = name.rsplit(".", 1)[-1].lower()
    return extension in _EXTENSIONS


def is_file(token: str) -> bool:
    """A token names a file: a file name extension a repository file commonly has, or a build file without one."""
    return _is_file(token)


def path_tokens(text: str, *, skip_negated: bool = True) -> list[str]:
    """File paths named in a text, in order (things like `2022.6` or `pkg.module` are not files)."""
    denied = negated_spans(text) if skip_negated else []
    found: list[str] = []
    for match in _PATH.finditer(text or ""):
        token = match.group(0).rstrip(".,:;")
        if not _is_file(token):
            continue
        if any(start <= match.start() < end for start, end in denied):
            continue
        found.append(token)
    return list(dict.fromkeys(found))


def norm_path(path: str, root: str | None) -> str:
    """A claimed path relative to the repository root when it is under it (``./`` dropped)."""
    path = str(path).strip().strip("`'\",")
    if root:
        root = root.rstrip("/")
        if path.startswith(root + "/"):
            path = path[len(root) + 1 :]
    while path.startswith("./"):
        path = path[2:]
    return posixpath.normpath(path) if path else path


def match_paths(claimed: list[str], reference: list[str], root: str | None) -> tuple[set[str], list[str]]:
    """(reference paths the claim names, claimed paths that name no reference path).

    A claimed path names a reference path when it is that path relative to the root, the
    absolute path under the root (or, without a known root, an absolute path ending in it),
    or its bare file name when exactly one reference path has that name.
    """
    named: set[str] = set()
    extra: list[str] = []
    basenames: dict[str, list[str]] = {}
    for ref in reference:
        basenames.setdefault(posixpath.basename(ref), []).append(ref)
    for raw in claimed:
        path = norm_path(raw, root)
        if path in reference:
            named.add(path)
        elif path.startswith("/") and not root and (hits := [r for r in reference if path.endswith("/" + r)]):
            named.add(hits[0])
        elif "/" not in path and len(basenames.get(path, [])) == 1:
            named.add(basenames[path][0])
        else:
            extra.append(path)
    return named, extra


# --- code --------------------------------------------------------------------------------


def code_candidates(text: str) -> tuple[str, bool]:
    """The code an answer gives: its fenced blocks, else its inline code spans, else the whole
    text; and whether it was delimited (fenced or inline) rather than the whole text."""
    blocks = re.findall(r"```[\w+.-]*[ \t]*\n?(.*?)```", text or "", re.S)
    if blocks:
        return "\n".join(b.strip("\n") for b in blocks), True
    spans = re.findall(r"`([^`\n]+)`", text or "")
    if spans:
        return "\n".join(spans), True
    return text or "", False


def has_identifier(key: str, text: str) -> bool:
    """``key`` occurs in ``text`` as a whole identifier: `erfa` is not in `pyerfa` nor in `astropy.erfa` (a name
    qualified by another is another name), nor `mock_dynamodb` in `mock_dynamodb2` (case folded; the key's own
    punctuation may touch anything)."""
    before = r"(?<![\w])(?<!\w\.)" if re.match(r"\w", key) else ""
    after = r"(?![\w])" if re.search(r"\w$", key) else ""
    return re.search(before + re.escape(key) + after, text, re.I) is not None
