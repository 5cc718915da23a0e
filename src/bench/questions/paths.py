"""Reading file paths out of free-text answers: which files an answer names, which it denies changing, and how a
claimed path names a reference path (README, "Grading": ``files_changed``, ``first_edit``, ``tool_output``).

    path_tokens("I edited `mypy/checker.py`")  # ['mypy/checker.py']
    path_tokens("a.py; b.py I only read")      # ['a.py']
"""

from __future__ import annotations

import posixpath
import re

__all__ = ["path_tokens", "norm_path", "match_paths", "negated_spans", "names", "is_file"]


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
                            r"|\b(?:only|just) (?:tried to |meant to |wanted to )?(?:read|view(?:ed)?|look(?:ed)?|open(?:ed)?|"
                            r"inspect(?:ed)?|ran|run|executed)\b"
                            # set apart as a script it only ran ("x.py was just a scratch script I ran")
                            r"|\b(?:only|just) an? (?:\w+ ){0,2}?(?:script|file|helper|test|program|check|repro\w*) (?:i|we) "
                            r"(?:ran|run|executed|used)\b"
                            # or as a throwaway ("x.py was a throwaway repro", "a scratch script")
                            r"|\b(?:throw-?away|scratch)\s+(?:repro\w*|script|file|test|helper|check|program)\b"
                            # a file told as looked at ("I also looked at c.py but it did not exist"): looking is
                            # no change, unless its clause also tells one ("opened a.py and fixed the import")
                            r"|\b(?:looked (?:at|into)|viewed|inspected|opened|peeked at|glanced at)\s+(?:the\s+)?"
                            r"(?:file\s+)?[`'\"]?[\w./+-]+\.[A-Za-z]\w*(?!(?:(?!\b(?:but|though|although|while|whereas)\b)[^,;:()\n])*\b(?:chang|modif|edit|fix|patch|"
                            r"updat|rewr|wrote|writ|add|remov|delet|creat|renam|replac|insert|touch)\w*)"
                            # a change taken back ("b.py I edited but reverted") leaves the file unchanged;
                            # "nothing changed there" denies
                            r"|\b(?:reverted|undone|undid|rolled back|backed out)\b"
                            r"|\bnothing (?:was |got |has been |had been )?(?:chang|modif|edit|writ|touch)\w*"
                            r"|\boutside (?:of )?(?:the |this |my )?(?:repo|repository|project|source tree|workspace)\b"
                            r"|\bnot (?:in|inside|part of|under) (?:the |this )?(?:repo|repository)\b", re.I)
# a sentence (or list item): a dot inside a token (a.py, 2.5) does not end it
_SENTENCE_SPAN = re.compile(r"(?:[^\n.;!?]|[.!?](?=[^\s]))+(?:[.;!?](?=\s|$)|\n|$)")
_CLAUSE_END = re.compile(r"[,;:()]|\b(?:and|but|while)\b")


# a clause of a sentence: what a denial that names its own object ("FindNull I only read") covers
_CLAUSE = re.compile(r"[^,;:()]+?(?=[,;:()]|\b(?:but|while|whereas|though|although)\b|\s[-\u2013\u2014]+\s|$)", re.I)
# what a clause names of its own: an identifier (CamelCase, snake_case, backticked), else it refers back ("them")
_OWN_NAME = re.compile(r"`[^`\n]+`|\b[A-Z][a-z0-9]+[A-Z]\w*|\b[a-z]\w*_\w+\b")


_PAREN = re.compile(r"\(([^()]*)\)")
# a parenthesis that denies something besides the item ("a.py (nothing else changed)") denies no file
_ELSE = re.compile(r"\b(?:else|other|others|more)\b", re.I)


def _is_file_token(token: str) -> bool:
    return _is_file(token.rstrip(".,:;"))


_DASH = re.compile(r"\s[-\u2013\u2014]+\s")


def _set_apart(sentence: str, end: int) -> int | None:
    """Where a dash sets apart the files a denial that refers back covers ("a.py, b.py - also c.py, though I only
    viewed that one": c.py), when the part after the last dash before ``end`` names a file; else None."""
    dashes = list(_DASH.finditer(sentence, 0, end))
    if not dashes:
        return None
    part = sentence[dashes[-1].end(): end]
    return dashes[-1].start() if any(_is_file_token(t.group(0)) for t in _PATH.finditer(part)) else None


def _denied_clauses(sentence: str) -> list[tuple[int, int]] | None:
    """The clauses of a denying sentence that deny, when each names what it denies ("I edited a.py, b.py was
    unchanged"; "X.java is what I edited, FindNull I only read") or is a parenthesis: one that names what it denies
    covers itself ("(b.py I edited but reverted)"), one that does not, the item it follows ("b.py (not changed, only
    read)"); None when a denial refers back ("..., but did not change them"): the whole sentence."""
    spans = []
    for paren in _PAREN.finditer(sentence):  # a parenthesis is read whole, whatever its commas
        inside = paren.group(1)
        if not _DENIES_CHANGE.search(inside):
            continue
        files = [t for t in _PATH.finditer(sentence[: paren.start()]) if _is_file_token(t.group(0))]
        if _OWN_NAME.search(inside) or any(_is_file_token(t.group(0)) for t in _PATH.finditer(inside)):
            spans.append(paren.span())
        elif files and not _ELSE.search(inside):
            spans.append((files[-1].start(), paren.end()))
        elif not _ELSE.search(inside):
            return None
        sentence = sentence[: paren.start()] + " " * (paren.end() - paren.start()) + sentence[paren.end():]
    for clause in _CLAUSE.finditer(sentence):
        if _DENIES_CHANGE.search(clause.group(0)):
            files = [t for t in _PATH.finditer(sentence[: clause.start()]) if _is_file(t.group(0).rstrip(".,:;"))]
            if _OWN_NAME.search(clause.group(0)) or any(_is_file(t.group(0).rstrip(".,:;"))
                                                        for t in _PATH.finditer(clause.group(0))):
                spans.append(clause.span())
            elif sentence[: clause.start()].rstrip().endswith("(") and files:
                spans.append((files[-1].start(), clause.end()))
            elif (dash := _set_apart(sentence, clause.start())) is not None:
                spans.append((dash, clause.end()))  # "a.py, b.py - also c.py, though I only viewed that one"
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


def names(text: str) -> set[str]:
    """The identifiers (CamelCase, snake_case, backticked) and file stems a text names (``FindNull``)."""
    found = {m.group(0).strip("`") for m in _OWN_NAME.finditer(text)}
    found |= {posixpath.basename(t).rsplit(".", 1)[0] for t in path_tokens(text, skip_negated=False)}
    return {n for n in found if len(n) >= 3}
