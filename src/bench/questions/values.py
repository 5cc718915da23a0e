"""Reading quantities out of answers: numbers (digits and words), dates and times, multi-part values.

    numbers("three tests, 2.50 s")                    # [3.0, 2.5]
    same_date("2025-02-28", "on February 28, 2025")   # True
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["numbers", "ordinal_number", "same_number", "dates", "same_date", "all_parts", "some_parts", "clauses", "same_text",
           "bare_value"]


_WORDS = {"zero": 0, "no": 0, "none": 0, "one": 1, "once": 1, "single": 1, "two": 2, "twice": 2, "three": 3,
          "thrice": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
          "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16,
          "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20}
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80,
         "ninety": 90}
_UNITS = "|".join(w for w, n in _WORDS.items() if 1 <= n <= 9 and w not in ("once", "twice", "thrice", "single"))
_NUMBER = re.compile(
    r"(?<![\w.])-?\d+(?:,\d{3})*(?:\.\d+)?(?![\w.]*\w)"
    rf"|\b({'|'.join(_TENS)})(?:[- ]({_UNITS}))?\b"
    r"|\b(" + "|".join(_WORDS) + r")\b", re.I)


def numbers(text: str, words: bool = True) -> list[float]:
    """Numbers in a text, in order (digits, and number words such as 'three', 'thirty-one' or 'twice')."""
    found = []
    for match in _NUMBER.finditer(text or ""):
        tens, unit, word = match.group(1), match.group(2), match.group(3)
        if tens:
            if words:
                found.append(float(_TENS[tens.lower()] + (_WORDS[unit.lower()] if unit else 0)))
        elif word:
            if words and word.lower() not in ("no", "none", "single"):
                found.append(float(_WORDS[word.lower()]))
        else:
            found.append(float(match.group(0).replace(",", "")))
    return found


_ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8,
             "ninth": 9, "tenth": 10, "eleventh": 11, "twelfth": 12, "thirteenth": 13, "fourteenth": 14,
             "fifteenth": 15, "sixteenth": 16, "seventeenth": 17, "eighteenth": 18, "nineteenth": 19, "twentieth": 20}
ORDINAL = r"(?:\d+(?:st|nd|rd|th)|" + "|".join(_ORDINALS) + ")"


def ordinal_number(word: str) -> int | None:
    """The number of an ordinal ("fifth", "5th"), None for anything else."""
    word = word.strip().lower()
    if re.fullmatch(r"\d+(?:st|nd|rd|th)", word):
        return int(word[:-2])
    return _ORDINALS.get(word)


_MONTHS = {m: i for i, m in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov",
                                        "dec"), start=1)}
# a time after the date: "T15:00", " 15:00:30", "at 3:00 PM", or an hour on the 12-hour clock alone ("at 3 PM": minutes 00)
_TIME = r"(?:(?:T|,?\s+(?:at\s+)?)(\d{1,2})(?::(\d{2})(?::(\d{2}))?|(?=\s*[AaPp]\.?[Mm]\b))" \
        r"(?:\s*([AaPp])\.?[Mm]\b\.?)?)?"
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})" + _TIME)
_MONTH_DAY = re.compile(r"\b([A-Za-z]{3,9})\.? (\d{1,2})(?:st|nd|rd|th)?,? (\d{4})" + _TIME)
_DAY_MONTH = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)? (?:of )?([A-Za-z]{3,9}),? (\d{4})" + _TIME)


def _date_key(year: str, month: int | None, day: str, clock: tuple[str | None, ...]) -> str | None:
    if month is None:
        return None
    hour, minute, second, half = clock
    stamp = f"{int(year):04d}-{month:02d}-{int(day):02d}"
    if hour is None:
        return stamp
    hours = int(hour) % 12 + (12 if half and half.lower() == "p" else 0) if half else int(hour)  # 3:00 PM = 15:00
    return stamp + f"T{hours:02d}:{minute or '00'}:{second or '00'}"


def dates(text: str) -> list[str]:
    """Dates (and times) a text states, as ``YYYY-MM-DD`` or ``YYYY-MM-DDTHH:MM:SS``: ISO, "February 28,
    2025", "28 Feb 2025", a time after ``T``, a space or "at" (seconds optional)."""
    found = []
    for match in _ISO_DATE.finditer(text or ""):
        found.append(_date_key(match.group(1), int(match.group(2)), match.group(3), match.groups()[3:]))
    for match in _MONTH_DAY.finditer(text or ""):
        found.append(_date_key(match.group(3), _MONTHS.get(match.group(1)[:3].lower()), match.group(2),
                               match.groups()[3:]))
    for match in _DAY_MONTH.finditer(text or ""):
        found.append(_date_key(match.group(3), _MONTHS.get(match.group(2)[:3].lower()), match.group(1),
                               match.groups()[3:]))
    return [d for d in found if d]


def same_date(want: str, text: str) -> bool | None:
    """For a reference that is a date or a date and time: whether the text states it (in any of the forms
    of :func:`dates`); None when the reference is not one."""
    wanted = dates(want)
    if len(wanted) != 1 or not _ISO_DATE.fullmatch(want.strip()):
        return None
    return wanted[0] in dates(text)


# a percentage in words or spaced ("80 percent", "80 per cent", "80 %") is the number with its sign ("80%")
_PERCENT = re.compile(r"(\d)\s*(?:%|\bper ?cent\b)", re.I)


# a status word and its plain form: "Data Disabled" is "data off", "Roaming Enabled" "roaming on"
_STATUS = {"disabled": "off", "enabled": "on"}


def _words(text: str) -> list[str]:
    words = re.findall(r"[a-z0-9%]+(?:\.[0-9]+)?", _PERCENT.sub(r"\1%", (text or "").lower()))
    return [_STATUS.get(word, word) for word in words]


def all_parts(reference: str, text: str) -> bool:
    """Every ``|``-separated part of a value is in the text as a phrase of its words (symbols such as
    emoji and punctuation ignored): "📵 Data Disabled | 🔋 80%" is in "mobile data disabled, battery at 80%"."""
    said = " " + " ".join(_words(text)) + " "
    parts = [_words(part) for part in reference.split("|")]
    return all(f" {' '.join(words)} " in said for words in parts if words)


# where an answer's clauses part: a sentence's end, ", but" and a spaced dash ("a.py - I don't remember the code")
_CLAUSE_BREAK = re.compile(r"[.;!?\n]+|,?\s+but\s+|\s[-\u2013\u2014]+\s")


def clauses(text: str | None) -> list[str]:
    """The answer's clauses, read one by one where a decline in one leaves a claim in another."""
    return _CLAUSE_BREAK.split(text or "")


def some_parts(reference: str, text: str, declines: re.Pattern[str]) -> bool:
    """A clause of the text that does not decline states a ``|``-separated part of the value ("No signal and data
    disabled - I don't recall the battery level"): a claim of part of it, not an abstention."""
    parts = [" " + " ".join(words) + " " for part in reference.split("|") if (words := _words(part))]
    if len(parts) < 2:
        return False
    for clause in clauses(text):
        said = " " + " ".join(_words(clause)) + " "
        if not declines.search(clause) and any(part in said for part in parts):
            return True
    return False


def same_number(a: Any, b: Any) -> bool:
    try:
        return abs(float(a) - float(b)) < 1e-9
    except (TypeError, ValueError):
        return False


_QUOTES = "'\"`"


def same_text(got: str, want: str) -> bool:
    """A stated value is the reference's text: case folded, surrounding whitespace ignored, and
    surrounding quotes ignored on both sides alike (issue 31: stripping the answer's quotes but
    not the reference's made ``No module named 'pytz'`` or ``b'My Content'`` unanswerable)."""
    g, w = got.strip().lower(), want.strip().lower()
    return g == w or g.strip(_QUOTES).strip() == w.strip(_QUOTES).strip()


# Words that name no value: the question's kind of words and the pronouns an answer restates it with
_NO_VALUE = {"the", "a", "an", "it", "its", "was", "is", "were", "they", "them", "their", "he", "she", "his", "her",
             "i", "me", "my", "you", "your", "user", "customer", "gave", "given", "said", "told", "provided",
             "mentioned", "that", "this", "value", "number", "same", "one", "of", "for", "to", "in"}


# a code as the whole answer: capitals (and digits), three or more ("HATHAT", a reservation id); not a decline
_CODE = re.compile(r"[`'\"*]*([A-Z][A-Z0-9_-]{2,})[`'\"*]*[.!]?")
_NOT_A_CODE = {"IDK", "TBD", "NONE", "UNKNOWN", "N/A"}


# an email address as the whole answer ("mia.li@example.com"): a value, though it has no digit
_EMAIL = re.compile(r"[`'\"*<]*[\w.+-]+@[\w-]+(?:\.[\w-]+)+[`'\"*>]*[.!]?")


def bare_value(text: str, question: str) -> bool:
    """The whole answer is a name the question does not state, two to four capitalised words ("John Smith" asked
    for a phone number), a code in capitals ("HATHAT") or an email address: a claim, though it states no number or
    identifier (not "Their phone number.", nor a one-word reply such as "Forgot.")."""
    if _EMAIL.fullmatch((text or "").strip()):
        return True
    code = _CODE.fullmatch((text or "").strip())
    if code and code.group(1) not in _NOT_A_CODE:
        return code.group(1).lower() not in {w.lower() for w in re.findall(r"[A-Za-z0-9]+", question or "")}
    words = re.findall(r"[A-Za-z][\w'-]*", text or "")
    if not 2 <= len(words) <= 4 or re.search(r"[.;!?]\s+\S|\n", (text or "").strip()) \
            or not all(w[0].isupper() for w in words):
        return False
    # the question's words: a field's ("phone_number": "phone", "number"), but an identifier with a digit in it is a
    # value, not words ("mia_li_3668" states no name "Mia Li")
    asked = {w.lower() for token in re.findall(r"\w+", question or "") if not re.search(r"\d", token)
             for w in re.findall(r"[A-Za-z0-9]+", token)}
    return any(w.lower() not in asked and w.lower() not in _NO_VALUE for w in words)
