"""Typed answers: the JSON shape each question type asks for, its writer and its reader.

Every question type declares ``answer_format``: the keys of the JSON object its answer
carries, each with what it holds (a key ending in ``?`` is optional), e.g. ``call_count``'s
``{"count": "number of calls"}`` or ``test_counts``' ``{"passed", "failed", "errors?"}`` (each type's
module; its registration checks it, ``bench.questions.question_type.registry``).

``{"unknown": true}`` is how any answer abstains. The question tells the model the shape
(:func:`ask_text`); the offline reader writes it (:func:`typed_answer`); the judges read it
(:func:`read_typed`) before the type's own ``claim``: a typed answer is graded on its fields
(extra keys such as ``note`` or ``confidence`` ignored), free text by the one grading rule.
The writer and the reader live here together and are round-trip tested.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

__all__ = ["UNKNOWN", "AnswerFormat", "format_keys", "format_instruction", "ask_text", "typed_answer", "read_typed",
           "TypedReading"]

UNKNOWN: dict[str, bool] = {"unknown": True}  # the typed abstention


def format_keys(answer_format: dict[str, str]) -> list[str]:
    """The answer's keys (without the optional marker), in the format's order."""
    return [key.rstrip("?") for key in answer_format]


AnswerFormat = dict[str, str]  # key (``?``: optional) -> what its value holds


def format_instruction(answer_format: AnswerFormat) -> str:
    """The sentence that tells the model the shape, and how to abstain."""
    fields = ", ".join(f'"{key.rstrip("?")}": <{what}{", optional" if key.endswith("?") else ""}>'
                       for key, what in answer_format.items())
    return ("Answer with one JSON object of this shape: {" + fields + "}. "
            'If what you can see does not tell you, answer {"unknown": true}.')


def ask_text(question: str, answer_format: AnswerFormat | None) -> str:
    """The question as the answering model receives it: the question, then the shape."""
    return question if not answer_format else f"{question}\n\n{format_instruction(answer_format)}"


def typed_answer(answer_format: AnswerFormat | None, value: Any) -> str:
    """The answer text for a value in the format (None: the typed abstention).

    A one-key format wraps the value (``{"count": 3}``) unless it is already an object with
    that key; a format of several keys takes the value's object as it is.
    """
    if value is None:
        return json.dumps(UNKNOWN)
    keys = format_keys(answer_format or {})
    if len(keys) == 1 and not (isinstance(value, dict) and keys[0] in value):
        value = {keys[0]: value}
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


@dataclass(frozen=True)
class TypedReading:
    """An answer as the judge reads it: ``unknown`` (the typed abstention), or the parsed value
    and the text the type's ``claim`` reads (the typed fields only, for a typed answer)."""

    parsed: Any
    text: str
    unknown: bool = False
    typed: bool = False


def read_typed(answer_format: AnswerFormat | None, parsed: Any, text: str) -> TypedReading:
    """What of an answer the type grades.

    ``{"unknown": true}`` (with any other keys) is an abstention. An object that holds the
    format's keys is reduced to them: a one-key format to that key's value (and, for text,
    to the value's text, so a count written ``"three"`` is read from the field alone), a
    format of several keys to the object of its keys. Anything else is left as it is.
    """
    if isinstance(parsed, dict) and parsed.get("unknown") is True:
        return TypedReading(None, "", unknown=True, typed=True)
    keys = format_keys(answer_format or {})
    if not isinstance(parsed, dict) or not keys or not any(key in parsed for key in keys):
        return TypedReading(parsed, text)
    if len(keys) == 1:
        value = parsed[keys[0]]
        if value is None:
            return TypedReading(None, "", unknown=True, typed=True)
        shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        return TypedReading(value, shown, typed=True)
    fields = {key: parsed[key] for key in keys if key in parsed}
    return TypedReading(fields, json.dumps(fields, ensure_ascii=False), typed=True)
