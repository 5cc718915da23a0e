"""``tool_output``: the k-th time the agent called a tool with some arguments, what did it return?

Eligible results: 1-400 characters (markers stripped, trimmed), not an error result, text
unique among the case's results, not contained in the first user message; the call's
arguments quote in at most 500 characters (the question quotes them); finish and think
tools are not asked about. The earliest eligible call is asked (``questions.depths``: one per
distance bucket, ``bench.questions.depth``); "the k-th call" counts
calls of that tool with the same arguments.
"""

from __future__ import annotations

import difflib
import json
import posixpath
import re
from collections import Counter
from typing import Any

from bench.profiles import Profile
from bench.questions.matching import (
    ABSTAIN_PATTERNS,
    FALSE_WORDS,
    TRUE_WORDS,
    has_identifier,
    has_values,
    is_abstention,
    parse_json,
    squash,
    stated_bool,
)
from bench.questions.messages import exception_types, in_substance, requoted_value, same_type, same_word, substituted
from bench.questions.outputs import (
    frame_lines,
    outcome_claim,
    path_said,
    requoted_code,
    untagged,
    without_caption,
    without_frames,
)
from bench.questions.paths import is_file
from bench.questions.question_type import CaseFacts, QuestionType, args_text, make_question, ordinal, value_spans
from bench.questions.values import numbers, same_date, same_number
from bench.store.schema import DroppedQuestion, Question

__all__ = ["TOOL_OUTPUT", "MAX_OUTPUT_CHARS", "MAX_ARGS_CHARS", "output_values"]

NAME = "tool_output"
MAX_OUTPUT_CHARS = 400
MAX_ARGS_CHARS = 500
_NEGATED = re.compile(r"\b(?:not|n't|never|no longer)\s+(?:\w+\s+)?(?:enabled|on|active|true|connected|yes|set)\b",
                      re.I)
_INLINE_KEY = re.compile(r"(?<![\w/.])['\"]?[A-Za-z_][\w]*['\"]?\s*:\s")  # not the end of a path (/srv/app:)
_PAIR = re.compile(r"^([A-Za-z][\w ./()-]{0,40}?):\s+(\S.*)$")  # "Cellular Signal: excellent"
# What free text states: numbers (with a unit), identifiers, paths, quoted and parenthesised words.
_CONTENT = re.compile(r"[\w./:-]*\d[\w./:-]*|(?<=\d )[A-Za-z%/]{1,6}\b|`[^`]+`|\"[^\"]+\"|(?<![A-Za-z])'[^'\n]+'(?![A-Za-z])|\([A-Za-z][^)\s]*\)|[\w.-]*/[\w./-]+|\b\w+_\w+\b"
                      r"|\b[a-z]+[A-Z]\w*\b|\b[A-Z]{2,}\w*\b")


def _pairs(text: str) -> list[tuple[str, str]]:
    """``label: value`` pairs of a readout (one per line, or per comma/semicolon-separated part)."""
    pairs = []
    for part in re.split(r"\n|;|,(?=\s*[A-Za-z][\w ./-]{0,40}:)", text):
        match = _PAIR.match(part.strip())
        if match:
            pairs.append((match.group(1).strip().lower(), match.group(2).strip()))
    return pairs


def _leaves(value: Any, out: list[Any]) -> list[Any]:
    if isinstance(value, dict):
        for item in value.values():
            _leaves(item, out)
    elif isinstance(value, list):
        for item in value:
            _leaves(item, out)
    elif value is not None:
        out.append(value)
    return out


# an empty result in words: "an empty list", "returned nothing", "no results"
_EMPTY = re.compile(r"\bempty\b|\bnothing\b|\bno (?:results?|items?|entries|records?|output|matches|data)\b|\bnone\b"
                    r"|\[\s*\]|\{\s*\}|\bnull\b", re.I)
# the bare words of exception names ("Error: could not load cache" names no exception class)
_GENERIC = {"Error", "Exception", "Warning", "Failure", "Exit", "Interrupt", "Iteration"}
# a clause about another run or call ("the earlier ValueError is gone", "no longer raises")
_ELSEWHERE = re.compile(r"\b(?:earlier|before|previous(?:ly)?|prior|fixed|no longer|any ?more|this time|instead of|"
                        r"other|later)\b", re.I)
# "raised at core.py line 11", "(Mean.java:18)": a traceback's frame
_LINE_NUMBER = re.compile(r"\bline (\d+)\b|\b[\w$]+\.(?:java|kt|scala|groovy):(\d+)\b", re.I)
_TABLE_ROW = re.compile(r"^\|\s*([^|]+?)\s*\|\s*([^|]+?)\s*\|$")
_FILE_NAME = re.compile(r"(?<![\w./-])[\w.+-]*\w\.[A-Za-z0-9]+(?![\w/-])")
# a relative path (an entry of `find .`, its ./ left out or not)
_REL_PATH = re.compile(r"(?<![\w./-])(?:\./)?[\w+-][\w.+-]*(?:/[\w.+-]+)+(?![\w/-])")
# (⏳ and ⌛ are in the Miscellaneous Technical block, U+2300-23FF)
_SIGN = r"[\u2300-\u23ff\u2600-\u27bf\u2b00-\u2bff\U0001f000-\U0001faff]|\[[ xX]\]"
_MARKER = re.compile(rf"^\s*(?:\d+[.)]\s*)?({_SIGN})\s*(.+)$")


def _plain_json(value: Any) -> Any:
    """A JSON value with numbers compared as numbers ("15.1" = 15.1)."""
    if isinstance(value, dict):
        return {k: _plain_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain_json(v) for v in value]
    if isinstance(value, str) and re.fullmatch(r"-?\d+(?:\.\d+)?", value.strip()):
        return float(value)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return value


def _label(key: str) -> str:
    return re.sub(r"[\s_]+", " ", key).strip().lower()


def _stated_pairs(text: str) -> dict[str, str]:
    """``label: value`` lines and two-cell markdown table rows, labels normalised (``_`` = space)."""
    rows = [m.groups() for line in text.split("\n") if (m := _TABLE_ROW.match(line.strip()))
            and not set(m.group(2)) <= set("-: ")]
    return {_label(k): v for k, v in [*_pairs(text), *rows]}


def _bool_near_label(key: str, value: bool, text: str) -> bool | None:
    """What the text says of a yes/no field where it names the field: "roaming enabled" claims
    ``roaming_enabled`` true, "roaming disabled" false; None when the field is not named."""
    words = [w for w in re.split(r"[_\s]+|(?<=[a-z])(?=[A-Z])", key.lower()) if w]
    subject = [w for w in words if w not in ("is", "has", "enabled", "active", "on", "flag")] or words
    for clause in re.split(r"[,;.\n]|\band\b", text):
        low = clause.lower()
        if subject and re.search(rf"\b{re.escape(subject[0])}", low):
            said = stated_bool(clause)
            if said is None and all(re.search(rf"\b{re.escape(w[:max(4, len(w) - 2)])}", low) for w in words):
                said = not re.search(r"\b(?:not|no|never)\b|n't\b", low)
            if said is not None:
                return said
    return None


def _marked_lines(text: str) -> dict[str, str]:
    """Lines with a status marker (✅ 🔄 ⏳, [x]): the line's words -> its marker."""
    marked = {}
    for line in text.split("\n"):
        match = _MARKER.match(line)
        if match:
            marked[squash(match.group(2)).lower()] = match.group(1)
        elif line.strip().startswith("|"):  # a markdown table's row: "| 2 | ✅ | Write the loader |"
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            signs = [c for c in cells if re.fullmatch(_SIGN, c)]
            words = [c for c in cells if re.search(r"[^\W\d_]{2}", c)]
            if len(signs) == 1 and len(words) == 1:
                marked[squash(words[0]).lower()] = signs[0]
    return marked


# a range of line numbers ("lines 205-209", "lines 12 to 15"), or of rows sharing one status marker ("3-7 ⏳: A, B,
# ..."): every number in it is stated
_LINE_RANGE = re.compile(r"\blines?\s+(\d+)\s*(?:-|\u2013|to|through)\s*(\d+)\b"
                         r"|(?<![\w.-])(\d+)\s*[-\u2013]\s*(\d+)\s*(?=[\u2300-\u23ff\u2600-\u27bf\u2b00-\u2bff"
                         r"\U0001f000-\U0001faff]|\[[ xX]\])", re.I)


def _spanned(text: str) -> list[float]:
    """The numbers a range of lines or marked rows states ("Lines 205-209 of ma.py: ..." states 206 too; "3-7 ⏳: ..."
    5), at most 200 of them."""
    found = []
    for m in _LINE_RANGE.finditer(text):
        first, last = int(m.group(1) or m.group(3)), int(m.group(2) or m.group(4))
        if not 0 < last - first <= 200:
            continue
        if m.group(3):  # marked rows: only when a text follows for each of them ("3-5 ⏳: A, B, C")
            texts = re.split(r"[;\n]", text[m.end():], maxsplit=1)[0]
            items = [t for t in texts.split(":", 1)[-1].split(",") if re.search(r"[A-Za-z]", t)]
            rows = last - first + 1  # "A, B and C": the last two joined by "and"
            if not (len(items) == rows or len(items) == rows - 1 and re.search(r"\band\b", items[-1])):
                continue
        found += [float(n) for n in range(first, last + 1)]
    return found


def _row_problem(reference: str, claim: str) -> str | None:
    """A row of a multi-line output restated with other values: a line of the answer that names the
    row (a word only that row has) and gives at least half its numbers, or another row's number (``cat -n``
    lines swapped), must give all of them."""
    rows = [line for line in reference.split("\n") if line.strip()]
    if len(rows) < 2:
        return None
    words = [set(re.findall(r"[A-Za-z][\w.-]{2,}", row)) for row in rows]
    said = [(line, numbers(line, words=False) + _spanned(line)) for line in claim.split("\n") if line.strip()]
    for row, own in zip(rows, words, strict=True):
        # a word only this row has: not in another row, not even inside a longer token (np.ma in np.ma.empty_like)
        unique = {u for u in own if not any(has_identifier(u, other) for other in rows if other is not row)}
        wanted = numbers(row, words=False)
        if not unique or not wanted:
            continue
        others = {n for other in rows if other is not row for n in numbers(other, words=False)} - set(wanted)
        for line, found in said:
            if not any(has_identifier(u, line) for u in unique):
                continue
            present = sum(1 for n in wanted if any(same_number(n, f) for f in found))
            if present < len(wanted) and (present * 2 >= len(wanted) or others & set(found)):
                return f"the row of {sorted(unique)[0]} with other values"
    return None


def _range_numbers(text: str) -> list[int]:
    """The line numbers a range of lines states ("Lines 41-43": 41, 42, 43), not a range of marked rows."""
    return [n for m in _LINE_RANGE.finditer(text) if m.group(1) and 0 < int(m.group(2)) - int(m.group(1)) <= 200
            for n in range(int(m.group(1)), int(m.group(2)) + 1)]


_VIEW_ROW = re.compile(r"^\s*(\d+)\t(.*)$")  # a line of `cat -n`
_NUMBERED = re.compile(r"^\s*(?:line\s+)?(\d+)\s*[:.)\t]?\s+(\S.*)$", re.I)  # "43: return x", "line 43  return x"


def _renumbered_line(reference: str, claim: str) -> str | None:
    """A line of a `cat -n` view restated under its number with other code ("317: if (...)" for "317 return x;",
    a later view's line), or one of the lines a range tells ("Lines 315-317: ...") not told: the line's number, else
    None. The code is compared without spaces and backticks; under its number either may hold the other (a comment
    added or a colon dropped is no other code)."""
    rows = {int(m.group(1)): squash(m.group(2)).replace(" ", "") for line in reference.split("\n")
            if (m := _VIEW_ROW.match(line))}
    if len(rows) < 2:
        return None
    for line in claim.split("\n"):
        match = _NUMBERED.match(line)
        code = rows.get(int(match.group(1))) if match else None
        if match and code:
            said = squash(match.group(2).replace("`", "")).replace(" ", "")
            if code not in said and said not in code:
                return match.group(1)
    # lines told after their range ("Lines 41-43: `a`, `b`, `c`"): each line's code is told
    told = squash(claim.replace("`", "")).replace(" ", "")
    return next((str(n) for n in _range_numbers(claim) if rows.get(n) and rows[n] not in told), None)


def _shortened_line(reference: str, claim: str) -> str | None:
    """A line of a prose output restated on a line of its own with words of it left out ("Actual method called" for
    "Actual method called indirectly"): the words left out, else None. Only words, not numbers (a `cat -n` line told
    without its number is the same line), 1-3 of them, the line kept at least half; not when the whole line is also
    told, nor lines with paths (told relative) or a table's rows (their cells part a line)."""
    def words(text: str) -> list[str]:
        return re.findall(r"[a-z0-9_]+", text.lower())
    told = " ".join(words(claim))
    for row in (words(line) for line in reference.split("\n") if "/" not in line):  # a path may lose its root
        if len(row) < 3 or f" {' '.join(row)} " in f" {told} ":
            continue
        for line in (words(line.strip("`*-> ")) for line in claim.split("\n") if "|" not in line):  # not a table's
            if len(line) < 2 or len(line) * 2 < len(row) or len(line) >= len(row):
                continue
            matcher = difflib.SequenceMatcher(a=row, b=line, autojunk=False)
            codes = [c for c in matcher.get_opcodes() if c[0] != "equal"]
            lost = [w for tag, i1, i2, _, _ in codes for w in row[i1:i2]]
            if codes and all(c[0] == "delete" for c in codes) and len(lost) <= 3 and all(w.isalpha() for w in lost):
                return " ".join(lost)
    return None


def _untold_row(reference: str, claim: str) -> str | None:
    """Numbered rows of a readout that share a value ("Result 1 (...): null", "Result 2 (...): null"): which row said
    what is told only by the rows' numbers, so each must be told ("All four printed null" tells none): the first
    row not told, else None."""
    pairs = [(label, value) for label, value in _pairs(reference) if numbers(label, words=False)]
    shared = Counter(value.lower() for _, value in pairs)
    if len(pairs) < 2 or max(shared.values()) < 2:
        return None
    found = numbers(claim, words=False)
    return next((label for label, value in pairs if shared[value.lower()] >= 2
                 and not all(any(same_number(n, f) for f in found) for n in numbers(label, words=False))), None)


def _relative_to_listing(path: str, claim: str, paths: list[str]) -> bool:
    """A path of a listing stated relative to the listing's root ("lib/core/" for /srv/app/lib/core/)."""
    root = posixpath.commonpath(paths) if len(paths) >= 2 else ""
    if not root or root == "/" or not path.startswith(root + "/"):
        return False
    rest = path[len(root) + 1:]
    return bool(rest) and re.search(rf"(?<![\w/.]){re.escape(rest.rstrip('/'))}/?(?![\w/])", claim) is not None


_SMALL = {"of", "is", "was", "at", "to", "its", "the", "a", "an", "were", "are", "be"}
_TOKEN = re.compile(r"[\w.+-]*\d[\w.+-]*(?<![.+-])|[A-Za-z]+|[^\sA-Za-z\d]")
_NUMBER_TOKEN = re.compile(r"-?\d+(?:\.\d+)?")


def _number_beside(label: str, labels: list[str], claim: str) -> list[str]:
    """The numbers prose states for a field by a word only its label has ("used" of data_used_gb, "limit" of
    data_limit_gb): the number before the word, a unit or a noun between ("15.1 GB used", "41 seats used"), else
    the one after it ("used 15.0 GB", "limit of 15.0"); nothing when the label has no such word or the prose does
    not use it. Numbers are whole tokens (L1002, 555-123-2002 hold no number)."""
    mine = [w for w in re.split(r"[_\W]+", label.lower()) if len(w) >= 3]
    theirs = {w for other in labels if other != label for w in re.split(r"[_\W]+", other.lower())}
    words = [w for w in mine if not any(same_word(w, t) for t in theirs)]
    tokens = _TOKEN.findall(claim)
    said = []
    for i, token in enumerate(tokens):
        if not token.isalpha() or not any(same_word(token.lower(), w) for w in words):
            continue
        before = i - 1
        if before >= 1 and (tokens[before] == "%" or (tokens[before].isalpha() and len(tokens[before]) <= 8)):
            before -= 1  # a unit or a noun between the number and the word
        if before >= 0 and _NUMBER_TOKEN.fullmatch(tokens[before]):
            said.append(tokens[before])
            continue
        after = i + 1
        while after < len(tokens) and (tokens[after].lower() in _SMALL or tokens[after] in ":="):
            after += 1
        if after < len(tokens) and _NUMBER_TOKEN.fullmatch(tokens[after]):
            said.append(tokens[after])
    return said


def _invented_path(reference: str, claim: str, paths: list[str]) -> str | None:
    """An absolute path the answer gives under a directory of the output that the output does not show (an entry
    added to a listing); a directory on the way to one of its paths is no invention."""
    for match in re.finditer(r"(?<![\w./-])/[\w.+-]+(?:/[\w.+-]+)+", claim):
        path = match.group(0).rstrip(".")
        if any(path.startswith(p.rstrip("/") + "/") for p in paths) \
                and not any(p.rstrip("/") == path or p.startswith(path + "/") for p in paths) \
                and not re.search(rf"(?<![\w/.-]){re.escape(path)}(?![\w/])", reference):
            return path
    return None


def _invented_name(reference: str, claim: str, asked: str) -> str | None:
    """A file name the answer gives that a listing (an output of one entry a line: `ls`, `ls -R`, `find`) does not
    show: an entry added to it, though without a directory ("geo: a.py, b.py, extra.py"); a listing of one entry is
    one path (`find`'s "./pkg/a.py")."""
    lines = [line.strip() for line in without_caption(untagged(reference)).split("\n") if line.strip()]
    if any(len(line.split()) != 1 for line in lines) or not lines \
            or (len(lines) == 1 and not ("/" in lines[0] and is_file(lines[0]))):
        return None
    entries = {posixpath.basename(line.rstrip("/:")) for line in lines}
    for token in _FILE_NAME.findall(claim) + _REL_PATH.findall(claim):  # bare, or with its directories
        if is_file(token) and posixpath.basename(token) not in entries and token not in asked:
            return token
    return None


_PATH_TOKEN = re.compile(r"(?<![\w./-])(?:\./)?[\w+-][\w.+-]*(?:/[\w.+-]+)*/?")


def _invented_entry(reference: str, claim: str, asked: str) -> str | None:
    """A path the answer gives that a listing of relative paths (`find .`'s output, one a line) does not show: an entry
    added, even where its file name is a listed one's (./src/x/A.java beside the listed ./A.java). A path is shown
    when it is a listed one (its ./ optional), a directory on the way to one, or a listed one with directories in
    front (the listing's own root, "pkg/a.py" for `cd pkg && find .`'s "./a.py") when the answer does not also
    give that entry as listed; a path the question states is the question's."""
    lines = [line.strip() for line in without_caption(untagged(reference)).split("\n") if line.strip()]
    if not lines or any(len(line.split()) != 1 or line.startswith("/") or "/" not in line for line in lines):
        return None  # not a listing of relative paths (absolute ones: ``_invented_path``)
    def norm(path: str) -> str:
        return re.sub(r"^\./", "", path).rstrip("/")
    shown = {norm(line) for line in lines}
    claimed = [norm(m.group(0)) for m in _PATH_TOKEN.finditer(claim)]
    for path in claimed:
        if "/" not in path or not is_file(path) and not any(s.startswith(path + "/") for s in shown):
            continue  # a bare name (``_invented_name`` reads those), or a word with a slash that names no file
        if path in shown or any(s.startswith(path + "/") for s in shown) \
                or any(path.endswith("/" + s) and s not in claimed for s in shown) \
                or re.search(rf"(?<![\w/.-]){re.escape(path)}/?(?![\w/])", asked):
            continue
        return path
    return None


# a number told with a word in a restated line ("Found 1 error in 1 file"), digits only
_TOLD_NUMBER = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)(?=\s+[A-Za-z])")


def _invented_number(reference: str, claim: str, asked: str) -> str | None:
    """A number the answer tells that a one-line prose output does not show ("Found 1 error in 1 file (checked 3
    source files)" for "Success: no issues found in 3 source files"): another line, though its own numbers are kept."""
    text = without_caption(untagged(reference)).strip()
    if "\n" in text or parse_json(text) is not None or len(text.split()) < 3:
        return None
    shown = numbers(text, words=False) + numbers(asked, words=False)
    return next((m.group(1) for m in _TOLD_NUMBER.finditer(claim)
                 if not any(same_number(m.group(1), n) for n in shown)), None)


_THREAD = re.compile(r"^Exception in thread \"[^\"\n]*\"\s+(?=[\w.$]+(?::|$))", re.M)


def output_values(reference: str) -> list[Any]:
    """The values a tool output states: a JSON record's scalar leaves; a readout's values after
    its labels; in free text its numbers, identifiers, paths, quoted and parenthesised words."""
    data = parse_json(reference)
    if isinstance(data, (dict, list)):
        return _leaves(data, [])
    reference = without_caption(without_frames(untagged(reference)))
    # Java's thread header is a header, like Python's "Traceback (most recent call last):"; its exception is the value
    headed = _THREAD.search(reference)
    reference = _THREAD.sub("", reference)
    values: list[Any] = [token for _, value in _pairs(reference) for token in _value_tokens(value)]
    rest = "\n".join(line for line in reference.split("\n") if not _PAIR.match(line.strip()))
    values += [t.strip("'\"`()") for t in _CONTENT.findall(_INLINE_KEY.sub(" ", rest))]
    # file names are values too, though they hold no digit, underscore or slash (an `ls` of cache.py, testing.py)
    values += [t for t in _FILE_NAME.findall(rest) if is_file(t)]
    if headed:  # its exception is the value the header leads to (a class name holds no digit or underscore)
        values += exception_types(reference)[:1]
    return [v for v in values if str(v).strip(".,:;!?'\"()[]{} ")]


def _as_bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    word = str(value).strip().lower()
    if word in ("true", "yes", "on", "enabled"):
        return True
    if word in ("false", "no", "off", "disabled"):
        return False
    return None


def _value_in(value: Any, text: str, found_numbers: list[float]) -> bool:
    flag = _as_bool(value)
    if flag is not None:
        words = set(re.findall(r"[a-z]+", _NEGATED.sub(" false ", text).lower()))
        return bool(words & set(TRUE_WORDS if flag else FALSE_WORDS))
    if isinstance(value, (int, float)):
        return any(same_number(value, n) for n in found_numbers)
    token = str(value).strip(".,:;!?'\"`() ")
    as_number = numbers(token, words=False)
    if len(as_number) == 1 and re.fullmatch(r"-?[\d,]+(?:\.\d+)?", token):
        return any(same_number(as_number[0], n) for n in found_numbers)
    if "/" in token:  # a path is one whole token: /a/b/ is not in /a/b/c/ (a trailing slash may be added)
        return re.search(rf"(?<![\w/]){re.escape(token)}/?(?![\w/])", text, re.I) is not None
    return token.lower() in text.lower()


def _value_tokens(value: str) -> list[str]:
    """A readout value as checkable tokens: itself when one word, else what it states (the keys
    of a record printed inside it, ``'server_address': ...``, are not values)."""
    if " " not in value.strip():
        return [value]
    value = _INLINE_KEY.sub(" ", value)
    return [t.strip("'\"`()") for t in _CONTENT.findall(value)] or [value]


def _same_value(want: str, got: str) -> bool:
    found = numbers(got, words=False)
    return all(_value_in(token, got, found) for token in _value_tokens(want))


class ToolOutput:
    name = NAME
    values_only = True  # its claim is a value: an answer that says it does not know and names only the question's values abstains
    template = "The {nth} time you called `{tool}` with `{arguments}`, what did it return?"
    answer_format = {"output": "the output, as the tool returned it"}  # the typed answer's keys (bench.questions.answers)
    reference_kind = "output"  # a tool's whole output (bench.questions.guess)
    answer_tokens = 120  # a typical typed answer's output tokens (bench.estimate)
    rubric = ("Tool output: every value in the reference output (numbers with their units, identifiers, "
              "names, status words) is stated, and stated correctly; format, quoting and order may differ. "
              "A missing or different value makes it wrong, so does a word changed in a restated line or an "
              "exception the output does not show, or quote characters changed inside a restated line of code "
              "(`env['X']` for `env[\"X\"]`). A caption line introducing the output (\"Here's the files ... up to 2 "
              "levels deep in /a:\") and a traceback's frames (Python's `File ...` lines, Java's `at ...` lines) are not "
              "values to restate (its exception line is; a line number given must be a frame's). A value the output "
              "quotes is one value, stated whole (\"12.5 kg\" for \"12.5\" is wrong). A path may be given relative to the repository root, "
              "without the leading ./ `find .` prints (pkg/a.py for ./pkg/a.py), or by its "
              "file name when no other path of the output has it; file names (cache.py) are values like any other, and an "
              "entry added under a listed directory is wrong (also beside the listing restated whole, and a path "
              "`find .` did not list though its file name is a listed one's), so is a file name a listing does not "
              "show or a number a "
              "one-line output does not show (\"Found 1 error in 1 file\" for \"no issues found in 3 files\"). A path the question itself states (the viewed file, "
              "the listed directory: the call's own argument echoed back) need not be restated. Numbers told in prose "
              "beside a word of their label (\"used 15.0 GB of its 15.1 GB limit\") are that label's values. Status "
              "markers (\u2705 \U0001f504 \u23f3) are their line's values. Line numbers told as a range (\"Lines 205-209: "
              "...\", the lines in order) state every number in it, as do rows numbered as a range with their one "
              "shared marker, a text following for each (\"3-7 \u23f3: A, B, C, D, E\"). An empty output ([] or {}) may be said in "
              "words (\"an empty list\"). A decline that says how the call went or what it held (\"it didn't work\", "
              "\"it listed a handful of files\") is a vague claim: wrong.")

    def text(self, target: dict[str, Any]) -> str:
        return self.template.format(nth=ordinal(target["ordinal"]), tool=target["tool"],
                                    arguments=args_text(target["arguments"]))

    def applies(self, profile: Profile) -> bool:
        return True

    def build(self, facts: CaseFacts) -> Question | DroppedQuestion:
        found = self.candidates(facts)
        return found[0] if found else self.none_eligible()

    def none_eligible(self) -> DroppedQuestion:
        return DroppedQuestion(NAME, f"no tool result of 1-{MAX_OUTPUT_CHARS} characters that is unique, not an "
                                     "error and not in the task text")

    def candidates(self, facts: CaseFacts) -> list[Question]:
        """Every eligible call's question, in history order (``questions.depths`` picks among them)."""
        events = facts.asked_events()
        texts = Counter((e.output or "").strip() for e in events if e.result_index is not None)
        task = facts.task_text
        found = []
        for event in events:
            text = (event.output or "").strip()
            if (event.result_index is None or not 1 <= len(text) <= MAX_OUTPUT_CHARS or texts[text] != 1
                    or facts.profile.is_error(event.raw) or facts.profile.never_ran(event.raw) or text in task
                    or len(args_text(event.args)) > MAX_ARGS_CHARS):
                continue
            target = {"tool": event.name, "arguments": event.args, "ordinal": facts.ordinal(event)}
            found.append(make_question(facts.case, NAME, self.text(target), text, [text],
                                       [event.call_index, event.result_index], target=target))
        return found

    def spans(self, reference: str) -> list[str] | None:
        return value_spans(reference)  # the output, whole

    def claim(self, parsed: Any, text: str, repo_root: str | None) -> str | None:
        if isinstance(parsed, (dict, list)):
            return json.dumps(parsed, ensure_ascii=False)
        if isinstance(parsed, str):
            return parsed
        if not text.strip() or (is_abstention(text) and not has_values(text)):
            return None
        return text

    def vague(self, text: str) -> str | None:
        """A declining answer that still says how the call went ("I can't see it; it didn't work") claims
        something of the output, vaguely: wrong (it states none of the output's values)."""
        said = outcome_claim(text, ABSTAIN_PATTERNS)
        return f"a vague claim about the output ({said!r}), not its values" if said else None

    def grade_question(self, question: Question, claim: str, repo_root: str | None) -> tuple[bool, str]:
        return self.grade(question.reference, claim, repo_root, asked=question.question)

    def grade(self, reference: str, claim: str, repo_root: str | None, asked: str = "") -> tuple[bool, str]:
        marked, said = _marked_lines(reference), _marked_lines(claim)
        for item, marker in marked.items():  # a status marker is its line's value
            if item in said and said[item] != marker:
                return False, f"{item!r}: marked {said[item]} in the answer, {marker} in the output"
        told = " ".join(c for c in re.split(r"[.;\n()]", claim) if not _ELSEWHERE.search(c))  # not other runs
        raised = [t for t in exception_types(told) if t not in _GENERIC and t.lower() not in reference.lower()
                  and not any(same_type(t, r) for r in exception_types(reference))]
        if raised:  # "... then Exception in thread "main" java.lang.NullPointerException": not in this output
            return False, f"an exception the output does not show: {raised[0]}"
        # an entry added to a listing, the output's own lines given whole beside it
        added = _invented_name(reference, claim, asked) or _invented_entry(reference, claim, asked)
        if added is not None:
            return False, f"an entry the listing does not show: {added}"
        verbatim = re.search(r"(?<![\w/])" + re.escape(squash(reference).lower()) + r"(?![\w/])", squash(claim).lower())
        if verbatim:
            return True, "the output, verbatim"
        want, got = parse_json(reference), parse_json(claim)
        if want in ([], {}, None) and reference.strip() in ("[]", "{}", "null", "None", '""'):
            # an empty result said in words ("an empty list", "nothing: []"), and nothing else claimed
            empty = got == want or (_EMPTY.search(claim) and not output_values(claim))
            return (True, "the empty output") if empty else (False, f"the output was {reference.strip()}")
        # (a grep hit's path may be told relative to the root or by its file name: its directories are no words the
        # answer changed; the paths themselves are values, checked below)
        # (nor are the words of a view's caption: "Here's the result of running `cat -n` on" is no line to restate)
        plain = re.sub(r"^\s*Here's the result of running `cat -n` on [^\n]*\n", "", untagged(reference))
        named = re.sub(r"^/(?:[\w.+-]+/)+(?=[\w.+-]+:\d+:)", "", plain, flags=re.M)
        if want is None and (change := substituted(named, claim)):
            return False, f"a word or number of the output changed: {change}"
        if want is None and (lost := _shortened_line(without_caption(untagged(reference)), claim)):
            return False, f"a restated line with words left out: {lost}"
        if want is None and (value := requoted_value(untagged(reference), claim)) is not None:
            return False, f"a value the output quotes stated with more in it: {value!r}"  # "12.5 kg" for "12.5"
        if want is not None and got is not None:
            same = _plain_json(got) == _plain_json(want)
            return (True, "the same JSON value") if same else (False, "a different JSON value")
        # a value stated under its own label must be that label's value ("Data Roaming Enabled: Yes")
        stated = _stated_pairs(claim)
        labelled = ([(k, v) for k, v in want.items() if not isinstance(v, (dict, list, type(None)))]
                    if isinstance(want, dict)
                    else _pairs(reference))
        for label, value in labelled:
            if isinstance(value, bool) and (near := _bool_near_label(label, value, claim)) is not None:
                if near is not value:
                    return False, f"{label}: expected {str(value).lower()}, the answer says {str(near).lower()}"
            if _label(label) in stated and not _same_value(str(value), stated[_label(label)]):
                return False, f"{label}: expected {value!r}, the answer says {stated[_label(label)]!r}"
        for label, value in labelled:  # "used 15.0 GB of its 15.1 GB limit": numbers beside their labels' words
            numeric = not isinstance(value, bool) and re.fullmatch(r"-?\d+(?:\.\d+)?", str(value).strip())
            if numeric and (beside := _number_beside(label, [k for k, _ in labelled], claim)) \
                    and not any(_value_in(str(value), s, numbers(s, words=False)) for s in beside):
                return False, f"{label}: expected {value!r}, the answer says {beside[0]!r}"
        if want is None and (label := _untold_row(untagged(reference), claim)) is not None:
            return False, f"the row {label!r} not told (its value is other rows' too)"
        if (row := _row_problem(_THREAD.sub("", without_caption(untagged(reference))), claim)) is not None:
            return False, row
        if (number := _renumbered_line(untagged(reference), claim)) is not None:
            return False, f"line {number} of the view restated with other code, or not told"
        if (quoted := requoted_code(untagged(reference), claim)) is not None:
            return False, f"quotes changed in a restated line of code: {quoted}"
        found = numbers(claim) + _spanned(claim)  # "Lines 205-209: ..." states 206, 207 and 208
        values = output_values(reference)
        if not values and not in_substance(reference, claim):  # prose without values: its words
            return False, "not the output in substance"
        paths = [str(v) for v in values if str(v).startswith("/")]
        missing = [v for v in values if not _value_in(v, claim, found) and not (
            isinstance(v, str) and (_relative_to_listing(v, claim, paths) or same_date(v, claim)
                                    or path_said(v, claim, repo_root, [str(p) for p in values if "/" in str(p)])))]
        if (invented := _invented_path(reference, claim, paths)) is not None:
            return False, f"a path the output does not show: {invented}"
        if (invented := _invented_name(reference, claim, asked)) is not None:
            return False, f"an entry the listing does not show: {invented}"
        if (invented := _invented_number(reference, claim, asked)) is not None:
            return False, f"a number the output does not show: {invented}"
        frames = frame_lines(reference)
        if not missing and frames and (other := [n for pair in _LINE_NUMBER.findall(claim) for n in pair
                                                 if n and int(n) not in frames]):
            return False, f"line {other[0]}: a frame the traceback does not show"
        # a path the question itself states (the call's own argument echoed: the viewed file in a caption, the
        # listed directory) is the question's, not a value to restate
        missing = [v for v in missing if not (isinstance(v, str) and "/" in v and asked  # with its slash or not
                                              and re.search(rf"(?<![\w/.-]){re.escape(v.rstrip('/'))}/?(?![\w/])", asked))]
        if not missing:
            return True, "every value of the output"
        return False, f"missing or different: {', '.join(str(v) for v in missing[:5])}"

    def answer_keys(self, reference: str) -> list[str]:
        return [reference]


TOOL_OUTPUT: QuestionType[str, str] = ToolOutput()  # its reference, its claim
