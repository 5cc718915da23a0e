"""Reading error claims out of answers: exception types, and a message in substance.

    exception_types("a KeyError, not an AssertionError")     # ['KeyError']
    in_substance("No module named 'yaml'", "ModuleNotFoundError: no module named 'yaml'")  # True
"""

from __future__ import annotations

import builtins
import difflib
import posixpath
import re

from bench.questions.matching import has_identifier, squash
from bench.questions.values import numbers

__all__ = ["requoted_value", "exception_types", "same_type", "in_substance", "substituted", "opposite_cause", "same_word", "key_tokens"]


_EXC = re.compile(r"(?<![\w.])((?:[A-Za-z_$][\w$]*\.)*(?:[A-Za-z_$][\w$]*)?(?:Error|Exception|Exit|Interrupt|"
                  r"Warning|Failure|Iteration))\b")
_JAVA_HEADER = re.compile(r"Exception in thread\b")
_NOT_BEFORE = re.compile(r"(?:\bnot|n't|\bno|\binstead of|\brather than)\s+(?:an?\s+|the\s+)?[`'\"]?$", re.I)


# The way a runtime prints an exception, ``Name: message``: a CamelCase class (``InvalidOperation``,
# ``decimal.InvalidOperation``) before a colon names the type whatever its name ends in
_EXC_LINE = re.compile(r"(?<![\w.$])((?:[a-z_][\w]*\.)*[A-Z][a-z0-9]+[A-Z]\w*):[ \t]+\S")


# A class named by a verb of raising ("it raised decimal.InvalidOperation - a ...", "threw QuotaExceeded"), and a
# package-qualified class ("decimal.ConversionSyntax" as the whole answer): the type, whatever its name ends in
# (and "it was a `LedgerClosed`", "the exception was LedgerClosed": a CamelCase class said to be what it was)
_RAISED = re.compile(r"\b(?:raised|raises|raising|threw|throws|thrown|throwing)\s+(?:an?\s+|the\s+)?[`'\"]?"
                     r"((?:[a-z_][\w]*\.)*[A-Z][\w]*)\b"
                     r"|\b(?i:it|the (?:exception|error))\s+was\s+(?:an?\s+|the\s+)?[`'\"]?"
                     r"((?:[a-z_][\w]*\.)*[A-Z][a-z0-9]+[A-Z]\w*)\b")
_QUALIFIED = re.compile(r"(?<![\w.$/])((?:[a-z_][\w]*\.)+[A-Z][\w]*)\b(?![./]\w)")
# A CamelCase class that heads the answer, set apart by a comma, a dash or the end ("InvalidOperation, with
# ConversionSyntax in the message", "QuotaExceeded - over the limit"): the answer's subject, the type
# ("An `InvalidOperation` from the decimal module; ...": an article before it, the module it came from after it)
_HEAD = re.compile(r"^[\W_]*?(?:(?:An?|The)\s+[`'\"*]*)?((?:[a-z_][\w]*\.)*[A-Z][a-z0-9]+[A-Z]\w*)[`'\"*]*\s*"
                   r"(?:from\s+(?:the\s+)?[`'\"]?[\w.]+[`'\"]?\s+(?:module|package|library)\s*)?(?:[,;\u2013\u2014]|\s-+\s|$)")


def exception_types(text: str, printed: bool = False) -> list[str]:
    """Exception type names the text asserts, in order; names it denies ("not a KeyError") are left out. With
    ``printed`` (an answer to "what exception"), when no name ends like an exception class: a CamelCase name
    printed as ``Name: message`` ("InvalidOperation: [...]"), else one named by a verb of raising ("it raised
    decimal.InvalidOperation"), else a package-qualified class ("decimal.ConversionSyntax"), else one heading the
    answer, set apart by a comma or a dash ("InvalidOperation, with ConversionSyntax in the message")."""
    found = []
    matches = list(_EXC.finditer(text or ""))
    for fallback in (_EXC_LINE, _RAISED, _QUALIFIED, _HEAD):
        if not printed or matches:
            break
        matches = list(fallback.finditer(text or ""))
    for match in matches:
        if _NOT_BEFORE.search(text[max(0, match.start() - 20): match.start()]):
            continue
        if _JAVA_HEADER.match(text, match.start()):  # 'Exception in thread "main" java.lang.X: ...' names X
            continue
        found.append(next(g for g in match.groups() if g))
    return list(dict.fromkeys(found))


# Python's built-in exceptions: printed without a package, so a package-qualified class of the same name
# (requests.exceptions.ConnectionError) is another class
_BUILTIN = {name for name, value in vars(builtins).items() if isinstance(value, type) and issubclass(value, BaseException)}


def same_type(got: str, want: str) -> bool:
    """Same exception type, qualified or not (java.lang.NullPointerException = NullPointerException); a class of
    the same name from another package is another type (``jsonschema.ValidationError`` is not
    ``pydantic.ValidationError``, nor ``requests.exceptions.ConnectionError`` the built-in ``ConnectionError``):
    when both are qualified their top-level packages agree, and a built-in is not qualified by a package."""
    got, want = got.strip(), want.strip()
    if got.rsplit(".", 1)[-1] != want.rsplit(".", 1)[-1]:
        return False
    if "." not in want and want in _BUILTIN and "." in got:
        return got.split(".", 1)[0] in ("builtins", "exceptions")
    return "." not in got or "." not in want or got.split(".", 1)[0] == want.split(".", 1)[0]


# --- messages in substance ----------------------------------------------------------------

_STOP = {"you", "your", "please", "ensure", "cannot", "because", "when", "while", "which", "there", "here", "than",
         "the", "a", "an", "of", "to", "in", "on", "for", "is", "are", "was", "were", "be", "and", "or", "with",
         "that", "this", "it", "its", "at", "by", "as", "from", "has", "have", "had", "not", "no", "can", "could",
         "should", "must", "will", "does", "did", "do"}
_KEY = re.compile(r"'[^'\n]+'|\"[^\"\n]+\"|`[^`\n]+`|[\w./:-]*\d[\w./:-]*|[\w]+[._/:][\w./:-]+|"
                  r"\b[a-z]+[A-Z]\w*|\b[A-Z][a-z]+[A-Z]\w*|\b[A-Z]{2,}\w*|\b\w+_\w+")


def key_tokens(message: str) -> list[str]:
    """The key identifiers of a message (quoted strings, names with digits, dots, underscores or inner capitals,
    paths): what an answer must keep to state it in substance."""
    return _key_tokens(message)


def _key_tokens(message: str) -> list[str]:
    keys = []
    for token in _KEY.findall(message):
        token = token.strip("'\"`").strip().rstrip(".,:;")
        if token:
            keys.append(token)
    return keys


_CLASS_REPR = re.compile(r"<class '([\w.]+)'>")  # Python's repr of a class: the class's name
_NUMBER_KEY = re.compile(r"-?\d+(?:\.\d+)?")
_QUALIFIED_CLASS = re.compile(r"(?:[a-z_]\w*\.)+([A-Z]\w*)")


def _key_said(key: str, reference: str, text: str) -> bool:
    """A key identifier of the message is in the text: whole; a number outside quotes numerically ("286" for
    "286.0"); a package-qualified class by its class name, as a type may be ("ConversionSyntax" for
    "decimal.ConversionSyntax"; another package's is another class)."""
    if has_identifier(key, text):
        return True
    if _NUMBER_KEY.fullmatch(key) and not re.search(rf"['\"`]{re.escape(key)}['\"`]", reference):
        return any(abs(float(key) - n) < 1e-9 for n in numbers(text))
    qualified = _QUALIFIED_CLASS.fullmatch(key)
    return qualified is not None and has_identifier(qualified.group(1), text)


# Where an error happened, appended to its message: "... from 'conans' (/testbed/conans/__init__.py)",
# '... (file.py, line 3)', ' at /path/x.py:12'. An answer may leave the location out.
_LOCATION = re.compile(r"\s*(?:\((?:[^()]*(?:/|\\|\.py\b|line \d+)[^()]*)\)|\bat [\w./\\-]+:\d+)\s*$")


# make's location of the failed recipe, before its message: "*** [Makefile:192: build] Error 1"
_BRACKET_LOCATION = re.compile(r"\[[^\[\]\n]*?[\w.-]+:\d+[^\[\]\n]*\]\s*")
_FILE_LINE = re.compile(r"[\w.-]+:\d+")


def _optional_location(reference: str, text: str) -> str:
    """The reference without a location the text does not give: a trailing one, or make's bracketed one
    (which stays when the text gives another file:line: "link.mk:40" for "[build.mk:40: link]")."""
    match = _LOCATION.search(reference)
    if match and match.start() > 0 and squash(match.group(0)).strip("() ").lower() not in text.lower() \
            and not _other_location(match.group(0), text):
        reference = reference[: match.start()]
    bracket = _BRACKET_LOCATION.search(reference)
    if bracket and not any(spot not in bracket.group(0) for spot in _FILE_LINE.findall(text)) \
            and squash(bracket.group(0)).lower() not in text.lower():
        reference = reference[: bracket.start()] + reference[bracket.end():]
    return reference


# a location the answer gives in parentheses: a path alone, or a path and a line ("(x.py, line 3)")
_GIVEN_LOCATION = re.compile(r"\(\s*([\w./\\-]*[/\\.][\w./\\-]+)(?:,\s*line (\d+))?\s*\)")


def _other_location(location: str, text: str) -> bool:
    """The text gives a location in parentheses that is not the reference's: another path (a path under another
    root: ``/workspace/x/pkg/a.py`` for ``/testbed/pkg/a.py``) or another line. The reference's path may be given
    by its end (``pkg/a.py``, relative to where it was printed)."""
    paths = re.findall(r"[\w./\\-]*[/\\.][\w./\\-]+", location)
    lines = re.findall(r"line (\d+)", location)
    for given in _GIVEN_LOCATION.finditer(text):
        path, line = given.group(1), given.group(2)
        if not any(p == path or p.endswith("/" + path.lstrip("./")) for p in paths) or (line and line not in lines):
            return True
    return False


def same_word(a: str, b: str) -> bool:
    """The same word in another inflection (returning / returned): a common start of all but three letters."""
    common = len(posixpath.commonprefix([a, b]))
    return a == b or common >= max(4, min(len(a), len(b)) - 3)


def _label_of(words: list[str]) -> dict[str, str]:
    """The word before each number (its label: ``paid`` in "paid 305")."""
    return {w: words[i - 1] for i, w in enumerate(words) if w.isdigit() and i > 0}


def _times(word: str, words: list[str]) -> int:
    """How many of ``words`` are ``word`` in some inflection."""
    return sum(1 for w in words if same_word(word, w))


_FILLER = {"is", "was", "are", "were", "be", "of", "the", "a", "an", "to", "at", "only", "just"}


def _swapped(reference: str, text: str) -> str | None:
    """Numbers told under each other's words ("total price 255 but paid 305" for "total price is 305, but paid
    255"), however much of the rest is paraphrased: the numbers, else None. A number's word is the word right before
    it in its clause (filler words between, no punctuation: a list's "2." after "...structure;" has none); only numbers
    the reference has once, under words of their own."""
    filler = "|".join(sorted(_FILLER))
    labelled = re.compile(rf"(?<![\w-])([a-z]+)(?:\s+(?:{filler}))*\s+(\d+)(?![\w.])")

    def labels(words: str) -> dict[str, list[str]]:
        found: dict[str, list[str]] = {}
        for match in labelled.finditer(words.lower()):
            if match.group(1) not in _FILLER:
                found.setdefault(match.group(2), []).append(match.group(1))
        return found
    mine, theirs = labels(reference), labels(text)
    counts = {n: len(re.findall(rf"(?<![\w.]){n}(?![\w.])", reference)) for n in mine}
    own = {n: ws[0] for n, ws in mine.items() if len(ws) == 1 and counts[n] == 1}
    if len(set(own.values())) < 2:
        return None
    for number, word in own.items():
        for said in theirs.get(number, []):
            other = next((n for n, w in own.items() if n != number and same_word(w, said)), None)
            if other and not same_word(said, word):
                return f"{number} told under {said!r} ({other}'s word)"
    return None


def substituted(reference: str, text: str) -> str | None:
    """A message restated nearly word for word with a word or number changed ("must be active" for
    "must be suspended", "price is 255, but paid 305" for "... 305 ... 255"): the change, else None.
    Nearly word for word: at least 60% of the reference's words in order, a change of at most three
    words each way; another inflection of the same word is no change."""
    ref, got = re.findall(r"[a-z0-9_]+", reference.lower()), re.findall(r"[a-z0-9_]+", text.lower())
    if len(ref) < 4:
        return None
    if swapped := _swapped(reference, text):
        return f"numbers under each other's words: {swapped}"
    matcher = difflib.SequenceMatcher(a=ref, b=got, autojunk=False)
    if sum(block.size for block in matcher.get_matching_blocks()) < 0.6 * len(ref):
        return None
    numbers_of = [w for w in ref if w.isdigit()]
    stated = [w for w in got if w in numbers_of]
    if len(set(numbers_of)) >= 2 and sorted(stated) == sorted(numbers_of) and stated != numbers_of \
            and _label_of(ref) != _label_of(got):
        # "total 255, paid 305" for "total 305, paid 255"; "Error 1 at Makefile:192" for "Makefile:192 ... Error 1"
        # keeps each number with its word, so it is the same message in another order
        return f"numbers in another order: {' '.join(stated)}"
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "replace" or i2 - i1 > 3 or j2 - j1 > 3:
            continue
        # a change: words of the reference the answer has fewer times (nowhere, or once for twice: "left: Type,
        # right: Instance" for "left: Instance, right: Instance"), for words the answer has more times
        lost = [w for w in ref[i1:i2] if w not in _STOP and _times(w, got) < _times(w, ref)]
        said = [w for w in got[j1:j2] if w not in _STOP and _times(w, ref) < _times(w, got)]
        if numbers(" ".join(lost)) == numbers(" ".join(said)) and all(numbers(w) for w in lost + said):
            continue  # "three" for "3": the same number
        if lost and said:
            return f"{' '.join(ref[i1:i2])} -> {' '.join(got[j1:j2])}"
    return None


# Two causes a lookup fails for, each the other's opposite: the thing was not there, or it was there several times
# ("old_str `x` did not appear verbatim" vs "Multiple occurrences of old_str `x`")
_ABSENT = re.compile(r"\b(?:did not|didn't|does not|doesn't|do not|don't|could not|couldn't|was not|wasn't|were not|"
                     r"weren't|is not|isn't)\s+(?:\w+\s+)?(?:appear|exist|found|find|match|present)\w*"
                     r"|\bnot found\b|\bno (?:such|match(?:es)?|occurrences?)\b|\bnowhere\b", re.I)
_SEVERAL = re.compile(r"\bmultiple (?:occurrences|matches|times|places)\b|\bmore than once\b|\bnot unique\b"
                      r"|\b(?:several|many) (?:occurrences|matches|times|places)\b|\bambiguous\b|\bduplicates?\b", re.I)


# A requirement ("Line must be suspended to resume") says the thing was not in that state; a state ("the line was
# already suspended") says it was: each the other's opposite
_REQUIRED = re.compile(r"\b(?:must|needs? to|has to|have to|should) be (\w+)", re.I)
_IN_STATE = r"\b(?:already|(?<!not )(?:is|was|were|are)(?! not\b)(?:\s+already)?)\s+{}\b"


def _required_vs_state(reference: str, text: str) -> bool:
    for required in _REQUIRED.finditer(reference):
        word = re.escape(required.group(1))
        if not re.search(_REQUIRED.pattern.replace("(\\w+)", word), text, re.I) \
                and re.search(_IN_STATE.format(word), text, re.I) and not re.search(r"n't\s+(?:\w+\s+)?" + word, text):
            return True
    return False


# A message cut before its cause that opens as one cause's message does: the editor's "No replacement was performed,
# old_str `x` did not appear verbatim ..." (its several-occurrence message reads "No replacement was performed.
# Multiple occurrences of old_str `x` ..."): the opening states the cause
_ABSENT_OPENING = re.compile(r"\bno replacement was performed,\s*old_str\b", re.I)


def opposite_cause(reference: str, text: str) -> bool:
    """The text gives the opposite cause of the reference's: absent for several, or several for absent (a reference
    cut before its cause states it by its opening); in the state a requirement asks for ("already suspended" for
    "must be suspended"), or the reverse."""
    if _ABSENT_OPENING.search(reference) and _SEVERAL.search(text) and not _ABSENT.search(text) \
            and not _SEVERAL.search(reference):
        return True
    for one, other in ((_SEVERAL, _ABSENT), (_ABSENT, _SEVERAL)):
        if one.search(reference) and not other.search(reference) and other.search(text) and not one.search(text):
            return True
    return _required_vs_state(reference, text) or _required_vs_state(text, reference)


_QUOTED = re.compile(r"(?<![A-Za-z])'([^'\n]+)'(?![A-Za-z])|\"([^\"\n]+)\"|`([^`\n]+)`")


def _quoted(text: str) -> list[str]:
    return [next(g for g in m.groups() if g is not None).strip() for m in _QUOTED.finditer(text)]


def _requoted(reference: str, text: str) -> str | None:
    """A value the reference quotes that the text quotes with more in it ("12.5 kg" for "12.5", 'pkg.sub' for
    'pkg'): a quoted value is one value, stated whole; the value, else None."""
    said = [q.lower() for q in _quoted(text)]
    for value in _quoted(reference):
        if value.lower() not in said and any(has_identifier(value, q) for q in said):
            return value
    return None


_IN_QUOTES = re.compile(r"(?<![A-Za-z])'([^'\n]+)'(?![A-Za-z])|\"([^\"\n]+)\"")


def requoted_value(reference: str, text: str) -> str | None:
    """A value the reference puts in quotes, put in quotes by the text with more in it ('"12.5 kg"' for '"12.5"'),
    else None: a tool output's quoted value is one value too (a code span in backticks is a restated line, not a
    value: it holds the quoted value and more)."""
    said = [next(g for g in m.groups() if g is not None).strip().lower() for m in _IN_QUOTES.finditer(text)]
    for m in _IN_QUOTES.finditer(reference):
        value = next(g for g in m.groups() if g is not None).strip()
        if value.lower() not in said and any(has_identifier(value, q) for q in said):
            return value
    return None


def _present(words: list[str], text: str) -> int:
    """How many of ``words`` the text has in some inflection (its stem: all but the last two letters, at least four)."""
    return sum(1 for w in words if re.search(rf"\b{re.escape(w[:max(4, len(w) - 2)])}", text.lower()))


def _a_sentence_said(rest: str, text: str) -> bool:
    """A message of several sentences (its key identifiers taken out) has one whose words the text states, two
    thirds of them at least."""
    sentences = [re.findall(r"[A-Za-z]{3,}", s.lower()) for s in re.split(r"(?<=[.!?])\s+(?=[A-Z])", rest)]
    sentences = [[w for w in s if w not in _STOP] for s in sentences]
    return len(sentences) >= 2 and any(s and _present(s, text) * 3 >= len(s) * 2 for s in sentences)


def in_substance(reference: str, text: str) -> bool:
    """The reference message is in the text in substance: verbatim (whitespace folded), or every
    key identifier of it (quoted strings, names with digits, dots, underscores or inner capitals,
    paths) is in the text; a message without such identifiers needs two thirds of its words."""
    reference, text = squash(_CLASS_REPR.sub(r"\1", reference)), squash(_CLASS_REPR.sub(r"\1", text))
    if not reference:
        return True
    if opposite_cause(reference, text):  # "did not appear verbatim" for "Multiple occurrences of ...": another message
        return False
    if reference.lower() in text.lower():
        return True
    reference = _optional_location(reference, text)
    if reference.lower() in text.lower():
        return True
    keys = _key_tokens(reference)
    # the value a parameter had, in parentheses after its name ("the path (pkg/sub) is a directory" for "`path`
    # points to a directory"): an aside, no word of the message changed
    aside = re.compile(r"(?<![\w`])(`?(?:" + "|".join(re.escape(k) for k in keys if re.fullmatch(r"\w+", k)) +
                       r")`?)\s*\([^()\n]*\)") if any(re.fullmatch(r"\w+", k) for k in keys) else None
    if substituted(reference, aside.sub(r"\1", text) if aside else text):
        return False  # "Line must be active to resume" for "... suspended ...": another message
    # a parameter's name right before the value the message echoes ("old_str `x`") labels that value, itself a key
    labels = {k for k in keys if "_" in k and re.search(rf"(?<![\w`]){re.escape(k)}\s+`[^`]+`", reference)}
    if keys and not all(_key_said(key, reference, text) for key in keys if key not in labels):
        return False
    if _requoted(reference, text):  # 'For input string: "12.5 kg"' for '... "12.5"': another value
        return False
    # with identifiers, the words around them still count a little (a quarter: a paraphrase keeps
    # few of them); without identifiers, two thirds of the words
    rest = reference
    for key in keys:
        rest = rest.replace(key, " ")
    words = [w for w in re.findall(r"[A-Za-z]{3,}", rest.lower()) if w not in _STOP]
    if not words:
        return bool(keys)
    if keys and _a_sentence_said(rest, text):  # "Invalid `path` parameter: X. The path X does not exist. ...": its
        return True                            # keys and the sentence that says what went wrong
    present = _present(words, text)  # a word counts in any inflection
    for cause in (_SEVERAL, _ABSENT):  # the cause in other words ("occurred more than once": multiple occurrences)
        if (said := cause.search(reference)) and cause.search(text):
            told = [w for w in re.findall(r"[A-Za-z]{3,}", said.group(0).lower()) if w in words]
            present += sum(1 for w in told if not _present([w], text))
    return present * 4 >= len(words) if keys else present * 3 >= len(words) * 2
