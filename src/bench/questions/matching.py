"""Reading claims out of free-text answers: abstentions, candidates, corrections, code, identifiers
(file paths: :mod:`bench.questions.paths`; numbers, dates and multi-part values: :mod:`bench.questions.values`;
exception types and messages: :mod:`bench.questions.messages`).

The exact judge's per-type ``claim`` functions use these to read what an LLM wrote (prose,
markdown, JSON, code fences) as tolerantly as the grading rule allows (README, "Grading").

    parse_json('```json\\n{"a": 1}\\n```')     # {'a': 1}
    final_claim("C1001 - no wait, C1002")       # 'C1002'
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from bench.questions.values import clauses

__all__ = ["ABSTAIN_PATTERNS", "is_abstention", "claims_none", "has_values", "declined_values", "final_claim", "value_like",
           "offers_alternatives", "stated_bool", "parse_json", "squash", "nows", "code_candidates", "has_identifier",
           "stated_declines", "said_outside_decline"]


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
    # "I cannot give an exact count": a decline of the number asked
    r"|(?:can't|cannot|can not) give (?:you )?(?:an? |the )?(?:exact|precise) (?:count|number|figure)"
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


def said_outside_decline(text: str, pattern: re.Pattern[str]) -> str | None:
    """What ``pattern`` finds in the first clause of the text that does not decline ("I can't see it - I only
    remember touching the distance code": the second clause's words), else None: a vague claim beside a decline."""
    for clause in clauses(text):
        if not is_abstention(clause) and (said := pattern.search(clause)):
            return said.group(0)
    return None


# what a value that reads like a decline is replaced by where the answer states it, for the abstention checks
STATED_VALUE = "`<stated value>`"


def stated_declines(text: str, reference: Any) -> tuple[str, str]:
    """A reference value that itself reads like a decline ("Seat not available", "No record found", "Unknown"), where
    the answer states it, is the answer's claim, not its decline: ``(heard, quoted)``, the answer with each such
    statement replaced by a neutral value (what the abstention checks read) and with it quoted (what the type's
    claim reads: a quoted value is a value). Words of a decline outside the stated value still decline; an answer
    that only declines, for a reference that does not read like one, is unchanged."""
    leaves = [reference] if isinstance(reference, str) else \
        [v for v in reference.values() if isinstance(v, str)] if isinstance(reference, dict) else []
    heard, quoted = text or "", text or ""
    for leaf in sorted({squash(v) for v in leaves if squash(v) and ABSTAIN_PATTERNS.search(squash(v))}, key=len,
                       reverse=True):
        words = r"\s+".join(re.escape(w) for w in leaf.split(" "))
        pattern = re.compile((r"(?<!\w)" if re.match(r"\w", leaf) else "") + words
                             + (r"(?!\w)" if re.search(r"\w$", leaf) else ""), re.I)
        heard = pattern.sub(STATED_VALUE, heard)
        quoted = pattern.sub(lambda m: f"`{m.group(0)}`", quoted)
    return heard, quoted


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
# (a dot or hyphen may part its letters before the digits: omar.davis7857)
_ID_TOKEN = r"(?:[A-Za-z_]*(?:[.-][A-Za-z_]+)*\d[\w.@:/-]*\w|`[^`\n]+`)"
_ALTERNATIVES = re.compile(rf"\beither\b{_SENTENCE}\bor\b|\bor\b{_SENTENCE}\b(?:not sure which|can't tell which"
                           # "A or B - one of those": the answer says it offers candidates
                           r"|one of (?:those|these|them|the two|both)\b)"
                           rf"|(?<![\w.-]){_COUNT} or {_COUNT}(?![\w.-])"
                           rf"|(?<![\w.@:/-]){_ID_TOKEN},? or (?:(?:maybe|perhaps|possibly) )?{_ID_TOKEN}(?![\w@:/-])"
                           r"|,? or (?:maybe|perhaps|possibly)\b"
                           # "Error 2 or Error 1": one label with two numbers
                           r"|\b([A-Za-z]+) \d+ or \1 \d+\b"
                           # "X, though it might have been Y": a second candidate beside the first
                           # ("... it might still have been the other one": "still" or "also" between)
                           r"|,? (?:though|but|although) (?:it )?(?:might|may|could) (?:also |still )?have been\b"
                           # "24 - though I'm not fully sure, it might have been 25": a hedge between them
                           r"|\b(?:though|but|although) (?:i'm|i am) not (?:\w+ )?(?:sure|certain),? it (?:might|may|could) "
                           r"(?:also |still )?have been\b"
                           # a range of counts ("6-8 times", "between 4 and 5 calls"): two candidates, neither chosen
                           rf"|(?<![\w.-]){_COUNT}\s*(?:-|\u2013|to)\s*{_COUNT}\s+(?:times|calls|tests|attempts|runs)\b"
                           rf"|\bbetween {_COUNT} and {_COUNT}\b", re.I)

# "C1001 - no wait, it was C1002", "9 times? No wait - 8", "X - sorry, no: Y", "12 times... actually, it was 14":
# the claim is what follows the last correction ("actually" corrects only after a break: "it was actually X" does not)
_CORRECTION = re.compile(r"(?:\b(?:no,? wait|wait,? no|scratch that|correction|i mean|make that|no,? actually"
                         # "12 passed - hmm, no, that was after the fix; the first run had 13": an interjection that
                         # takes the claim back, or "no, that was" (another run, another call)
                         r"|(?:hmm+|umm*|uh+|oh|ah),? no|no,? that (?:was|is|'s|one was)"
                         r"|sorry,? (?:(?:no|nope|wrong)\b(?=\s*[:,;.!\u2013\u2014-])|i mean|it was|actually|my mistake)"
                         r"|my mistake"
                         # "9 - actually 10 ... Let me say 11 to include the view": a count settled on at the end
                         r"|let me say|let's say|(?:i'll|i will|let me|let's) (?:go|settle) (?:with|on))\b"
                         r"|(?:\.\.\.|\u2026|[-\u2013\u2014;,]|[.!?](?=\s))\s*actually\b"
                         # "I make it 7 - no, 8 with the final check": a dash, "no," and the number that replaces it
                         r"|(?:[\u2013\u2014]|\s-)\s*no,(?=\s*\d))"
                         r"[\s,:;.!?\u2013\u2014-]*", re.I)

# "I don't know what X returned when I ran Y": what the answer does not know is no claim
_DECLINED_OBJECT = re.compile(r"\b(?:what|which|how|whether|if|where|when)\b[^.;\n]*"
                              r"|\b(?:the|that|this|its) (?:\w+ )?(?:output|result|response|reply|value|view|run|call)s?"
                              r" (?:of|from|for)\b[^.;\n]*", re.I)


def final_claim(text: str, reference: str = "", retracts: Callable[[str, str], bool] | None = None,
                corrects: Callable[[str, str], str] | None = None) -> str:
    """The text after its last self-correction ("X - no wait, Y" claims Y), else the text. Words of the
    reference (a tool's output that says "..., actually ...") are not a correction. A type's ``retracts(head,
    tail)`` says when a correction takes back one item of a list by name: then the claim is the whole text; its
    ``corrects(head, tail)`` gives the claim a correction of one part leaves (an exception's message corrected, its
    type kept)."""
    if reference and _CORRECTION.search(reference):
        return text
    corrections = list(_CORRECTION.finditer(text or ""))
    if not corrections or not text[corrections[-1].end():].strip():
        return text
    head, tail = text[: corrections[-1].start()], text[corrections[-1].end():]
    if retracts is not None and retracts(head, tail):
        return text
    return corrects(head, tail) if corrects is not None else tail


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


# a comment after a JSON text (`{"count": 3} // once per round`, `{...} # why`): it does not change the JSON's claim
_JSON_COMMENT = re.compile(r"\s*(?://|#)[^\n]*\s*\Z")


def parse_json(text: str) -> Any:
    """The answer as JSON (a whole JSON text, or the first fenced ```json block, or a JSON object or list followed by a
    `//` or `#` comment: the comment is not the answer), else None."""
    text = (text or "").strip()
    fenced = re.search(r"```(?:json)?\s*(.*?)```", text, re.S)
    for candidate in ([fenced.group(1).strip()] if fenced else []) + [text]:
        try:
            return json.loads(candidate)
        except (json.JSONDecodeError, ValueError):
            continue
    if text.startswith(("{", "[")):
        try:
            value, end = json.JSONDecoder().raw_decode(text)
        except (json.JSONDecodeError, ValueError):
            return None
        if _JSON_COMMENT.match(text, end):
            return value
    return None


def squash(text: str) -> str:
    """Whitespace runs folded to one space."""
    return re.sub(r"\s+", " ", text or "").strip()


def nows(text: str) -> str:
    """All whitespace removed (code compared with indentation and line breaks ignored)."""
    return re.sub(r"\s+", "", text or "")


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
