"""``tool_value``: in what a tool returned the k-th time, what was one field's value?

The earliest result that is a JSON object with a top-level scalar field (string, number,
boolean) whose value, as text, appears nowhere else in the history (no other message, no
call's arguments): the first such field in the object's key order. Reference: the value.
"""

from __future__ import annotations

import json
import re
from typing import Any

from bench.profiles import Profile
from bench.questions.matching import has_values, is_abstention, parse_json, stated_bool
from bench.questions.messages import in_substance
from bench.questions.question_type import CaseFacts, QuestionType, args_text, make_question, ordinal, value_spans
from bench.questions.values import all_parts, numbers, same_date, same_number, same_text
from bench.store.schema import DroppedQuestion, Question

__all__ = ["TOOL_VALUE", "value_text"]

NAME = "tool_value"


def value_text(value: Any) -> str:
    """A scalar as it reads in JSON text (strings without their quotes)."""
    return value if isinstance(value, str) else json.dumps(value)


def _record(output: str | None) -> dict[str, Any] | None:
    try:
        data = json.loads(output or "")
    except (json.JSONDecodeError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _message_like(value: str) -> bool:
    """A value that is a message: three words or more, one of them an identifier or a number
    (``*** [Makefile:192: build] Error 1``); such a value is stated in substance, like an error message."""
    return len(re.findall(r"[A-Za-z0-9]+", value)) >= 3 and bool(re.search(r"\d|\w[._/:]\w|\w_\w", value))


class ToolValue:
    name = NAME
    values_only = True  # its claim is a value: an answer that says it does not know and names only the question's values abstains
    template = "In what `{tool}` with `{arguments}` returned the {nth} time, what was `{field}`?"
    answer_format = {"value": "the value"}  # the typed answer's keys (bench.questions.answers)
    reference_kind = "value"  # a value a tool returned (bench.questions.guess)
    answer_tokens = 20  # a typical typed answer's output tokens (bench.estimate)
    rubric = ("Value: the stated value equals the reference: numbers numerically (275 = 275.00, a unit may "
              "follow), strings case-insensitively (quotes ignored), booleans as true/false or yes/no. A value "
              "that is a message (several words with an identifier or a number) is stated in substance: its "
              "identifiers and numbers kept, a location (make's `[Makefile:9: all]`) optional. A `|`-separated value "
              "needs every part, in words or symbols (icons left out; \"battery at 80 percent\" for \"🔋 80%\", \"data off\" for \"Data Disabled\"). A date "
              "and time may be told in words (\"June 3, 2024 at 9 AM\" = 2024-06-03T09:00:00); the date alone "
              "states no time.")

    def text(self, target: dict[str, Any]) -> str:
        return self.template.format(tool=target["tool"], arguments=args_text(target["arguments"]),
                                    nth=ordinal(target["ordinal"]), field=target["field"])

    def applies(self, profile: Profile) -> bool:
        return True

    def build(self, facts: CaseFacts) -> Question | DroppedQuestion:
        found = self.candidates(facts)
        return found[0] if found else self.none_eligible()

    def none_eligible(self) -> DroppedQuestion:
        return DroppedQuestion(NAME, "no JSON object result with a scalar field whose value appears nowhere else")

    def candidates(self, facts: CaseFacts) -> list[Question]:
        """Each eligible result's question (its first eligible field), in history order."""
        found = []
        for event in facts.asked_events():
            record = _record(event.output)
            if record is None or event.result_index is None:
                continue
            for field, value in record.items():
                if value is None or isinstance(value, (dict, list)):
                    continue
                shown = value_text(value)
                if not shown.strip() or facts.elsewhere(shown, event.result_index):
                    continue
                target = {"tool": event.name, "arguments": event.args, "ordinal": facts.ordinal(event),
                          "field": field}
                found.append(make_question(facts.case, NAME, self.text(target), value, [shown],
                                           [event.call_index, event.result_index], target=target))
                break
        return found

    def spans(self, reference: Any) -> list[str] | None:
        return None if isinstance(reference, bool) else value_spans(value_text(reference))

    def claim(self, parsed: Any, text: str, repo_root: str | None) -> dict[str, Any] | None:
        if isinstance(parsed, (str, int, float, bool)):
            return {"value": parsed}
        if isinstance(parsed, dict) and len(parsed) == 1:
            return {"value": next(iter(parsed.values()))}
        if not text.strip() or (is_abstention(text) and not has_values(text)):
            return None
        return {"text": text}

    def grade(self, reference: Any, claim: dict[str, Any], repo_root: str | None) -> tuple[bool, str]:
        if "value" in claim:
            got = claim["value"]
            text = value_text(got) if not isinstance(got, str) else got
        else:
            got, text = None, claim["text"]
        low = text.lower()
        if isinstance(reference, bool):
            ok = stated_bool(text) is reference
        elif isinstance(reference, (int, float)):
            ok = any(same_number(reference, n) for n in numbers(text, words=False))
        elif (as_date := same_date(str(reference), text)) is not None:
            ok = as_date  # 2025-02-28 = "February 28, 2025"; 2024-05-15T15:00:00 = "2024-05-15 at 15:00"
        elif " | " in str(reference):
            ok = all_parts(str(reference), text)  # "📵 No Signal | 🔋 80%": every part, in words
        else:
            want = str(reference).strip().lower()
            ok = same_text(low, want) if "value" in claim else want in low
            if not ok and parse_json(text) is not None:
                ok = str(parse_json(text)).strip().lower() == want
            if not ok and _message_like(str(reference)):
                ok = in_substance(str(reference), text)  # "Error 1: the build at Makefile:192" for the make line
        if ok:
            return True, "same value"
        return False, f"expected {value_text(reference)!r}"

    def answer_keys(self, reference: Any) -> list[str]:
        return [value_text(reference)]


TOOL_VALUE: QuestionType[Any, dict[str, Any]] = ToolValue()  # its reference, its claim
