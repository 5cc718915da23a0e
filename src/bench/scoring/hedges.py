"""Hedges: does an answer state its claim with a marked uncertainty? (one rule, README "Hedges")

A wrong answer that hedges ("I think it was `foo.py`", "probably 3") is counted apart from a
wrong answer stated flatly: ``confidently_wrong_rate`` counts only the flat ones,
``hedged_wrong_rate`` the hedged ones. The rule is a list of hedge *classes*, each a pattern over
the answer's prose (code spans and JSON strings are left out, so an identifier such as
``maybe_retry`` or a quoted error message never counts):

- ``uncertain``: an explicit doubt: not sure, not certain, unsure, uncertain, fairly/pretty sure,
  best guess, if I recall / remember (correctly), as far as I can tell, to my knowledge, I can't
  confirm;
- ``epistemic``: a first-person belief verb: I think / believe / suspect / guess / assume / recall;
- ``adverb``: a modal adverb or adjective: probably, likely, unlikely, possibly, perhaps, maybe,
  presumably, apparently, seemingly;
- ``modal``: might / may / could + be/have/not be/... (a possibility, not "could not find");
- ``appearance``: it seems / appears / looks like.

    hedge_class("I think the file was foo.py")  ->  "epistemic"
    is_hedged("The file was foo.py")            ->  False
"""

from __future__ import annotations

import re

__all__ = ["HEDGE_CLASSES", "hedge_class", "is_hedged"]

HEDGE_CLASSES: dict[str, re.Pattern[str]] = {  # checked in this order; the first match names the class
    "uncertain": re.compile(r"\b(?:not\s+(?:entirely\s+|completely\s+|100%\s+)?(?:sure|certain)|unsure|uncertain|"
                            r"(?:fairly|pretty|reasonably|quite|almost)\s+(?:sure|certain|confident)|"
                            r"best\s+guess|if\s+I\s+(?:recall|remember)|as\s+far\s+as\s+I\s+(?:can\s+tell|know)|"
                            r"to\s+(?:the\s+best\s+of\s+)?my\s+knowledge|I\s+(?:can(?:'|no)?t|cannot)\s+confirm)",
                            re.I),
    "epistemic": re.compile(r"\bI(?:'m|'d| am| would)?\s+(?:\w+\s+)?(?:think|believe|suspect|guess|assume|recall)\b",
                            re.I),
    "adverb": re.compile(r"\b(?:probably|(?:un)?likely|possibly|perhaps|maybe|presumably|apparently|seemingly)\b",
                         re.I),
    "modal": re.compile(r"\b(?:might|may|could)\s+(?:(?:not|well|also|have)\s+)?(?:be|been|have|contain|include|"
                        r"refer|mean|return|show|point)\b", re.I),
    "appearance": re.compile(r"\b(?:it|this|that|which|there)\s+(?:seems?|appears?|looks?\s+like)\b"
                             r"|\b(?:seems|appears)\s+to\b", re.I),
}

# what is quoted is the claim's content, not the way it is stated
_QUOTED = re.compile(r"```.*?```|`[^`]*`|\"(?:[^\"\\]|\\.)*\"", re.S)


def hedge_class(answer: str | None) -> str | None:
    """The first hedge class whose pattern occurs in the answer's prose, or None."""
    if not answer:
        return None
    prose = _QUOTED.sub(" ", answer)
    for name, pattern in HEDGE_CLASSES.items():
        if pattern.search(prose):
            return name
    return None


def is_hedged(answer: str | None) -> bool:
    return hedge_class(answer) is not None
