"""``tool_output``: the k-th time the agent called a tool with some arguments, what did it return?

Eligible results: 1-400 characters (markers stripped, trimmed), not an error result, text
unique among the case's results, not contained in the first user message; the call's
arguments quote in at most 500 characters (the question quotes them); finish and think
tools are not asked about. The earliest eligible call is asked (``questions.depths``: one per
distance bucket, ``bench.questions.depth``); "the k-th call" counts
calls of that tool with the same arguments.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any

from bench.profiles import Profile
from bench.questions.base import CaseFacts, ReaderAnswer, args_text, calls_of, make_question, ordinal
from bench.questions.matching import (
    FALSE_WORDS,
    TRUE_WORDS,
    has_values,
    is_abstention,
    numbers,
    parse_json,
    same_number,
    squash,
)
from bench.reading import Reading, find_call
from bench.schema import DroppedQuestion, Question

__all__ = ["TOOL_OUTPUT", "MAX_OUTPUT_CHARS", "MAX_ARGS_CHARS", "output_values"]

NAME = "tool_output"
MAX_OUTPUT_CHARS = 400
MAX_ARGS_CHARS = 500
_NEGATED = re.compile(r"\b(?:not|n't|never|no longer)\s+(?:\w+\s+)?(?:enabled|on|active|true|connected|yes|set)\b",
                      re.I)
_INLINE_KEY = re.compile(r"['\"]?[A-Za-z_][\w]*['\"]?\s*:\s")
_PAIR = re.compile(r"^([A-Za-z][\w ./()-]{0,40}?):\s+(\S.*)$")  # "Cellular Signal: excellent"
# What free text states: numbers (with a unit), identifiers, paths, quoted and parenthesised words.
_CONTENT = re.compile(r"[\w./:-]*\d[\w./:-]*|(?<=\d )[A-Za-z%/]{1,6}\b|`[^`]+`|\"[^\"]+\"|(?<![A-Za-z])'[^'\n]+'(?![A-Za-z])|\([A-Za-z][^)\s]*\)|/[\w./-]+|\b\w+_\w+\b"
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


def output_values(reference: str) -> list[Any]:
    """The values a tool output states: a JSON record's scalar leaves; a readout's values after
    its labels; in free text its numbers, identifiers, paths, quoted and parenthesised words."""
    data = parse_json(reference)
    if isinstance(data, (dict, list)):
        return _leaves(data, [])
    values: list[Any] = [token for _, value in _pairs(reference) for token in _value_tokens(value)]
    rest = "\n".join(line for line in reference.split("\n") if not _PAIR.match(line.strip()))
    values += [t.strip("'\"`()") for t in _CONTENT.findall(_INLINE_KEY.sub(" ", rest))]
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
    rubric = ("Tool output: every value in the reference output (numbers with their units, identifiers, "
              "names, status words) is stated, and stated correctly; format, quoting and order may differ. "
              "A missing or different value makes it wrong.")

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
            same = calls_of(facts.events, event.name, event.args)
            k = next(i for i, e in enumerate(same, start=1) if e is event)
            target = {"tool": event.name, "arguments": event.args, "ordinal": k}
            found.append(make_question(facts.case, NAME, self.text(target), text, [text],
                                       [event.call_index, event.result_index], target=target))
        return found

    def read(self, question: Question, reading: Reading, repo_root: str | None) -> ReaderAnswer:
        found = find_call(reading, question.target, whole_output=True)
        if found is None:
            return ReaderAnswer(None)
        seen, position = found
        output = seen.event.output
        return ReaderAnswer(output.strip() if output is not None else None, [position])

    def claim(self, parsed: Any, text: str, repo_root: str | None) -> str | None:
        if isinstance(parsed, (dict, list)):
            return json.dumps(parsed, ensure_ascii=False)
        if isinstance(parsed, str):
            return parsed
        if not text.strip() or (is_abstention(text) and not has_values(text)):
            return None
        return text

    def grade(self, reference: str, claim: str, repo_root: str | None) -> tuple[bool, str]:
        if squash(reference).lower() in squash(claim).lower():
            return True, "the output, verbatim"
        want, got = parse_json(reference), parse_json(claim)
        if want is not None and got is not None:
            return (True, "the same JSON value") if got == want else (False, "a different JSON value")
        # a value stated under its own label must be that label's value ("Data Roaming Enabled: Yes")
        stated = dict(_pairs(claim))
        for label, value in _pairs(reference):
            if label in stated and not _same_value(value, stated[label]):
                return False, f"{label}: expected {value!r}, the answer says {stated[label]!r}"
        found = numbers(claim, words=False)
        missing = [v for v in output_values(reference) if not _value_in(v, claim, found)]
        if not missing:
            return True, "every value of the output"
        return False, f"missing or different: {', '.join(str(v) for v in missing[:5])}"

    def answer_keys(self, reference: str) -> list[str]:
        return [reference]


TOOL_OUTPUT = ToolOutput()
