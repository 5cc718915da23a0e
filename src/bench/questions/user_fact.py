"""``user_fact``: what value did the user give the agent (in a later turn) for a tool call?

A value the user stated in a user message other than the first (an id, a number, a name)
that a later call used as an argument: exactly what "only the last user message stays
verbatim" loses. Candidates, in history order: each scalar argument (top level, or inside
lists and objects: the argument is named by its top-level key) of a call after a user
message that states the value as a whole word. A candidate is skipped when the value is
readable without the run (in the first user message or the system prompt), too short to be
a fact (< 3 characters, a boolean), or ambiguous (the tool is called with another value
for that argument). Values with a digit (ids, numbers) are preferred; the earliest wins.
Reference: the value (as the call passed it).
"""

from __future__ import annotations

import re
from typing import Any

from langchain_core.messages import HumanMessage

from bench.history import ToolEvent
from bench.profiles import Profile
from bench.questions.base import CaseFacts, make_question, value_spans
from bench.questions.matching import has_values, is_abstention
from bench.questions.tool_value import value_text
from bench.questions.values import numbers, same_number
from bench.schema import DroppedQuestion, Question
from bench.text import content_text

__all__ = ["USER_FACT", "argument_values"]

NAME = "user_fact"
MIN_CHARS = 3


def argument_values(value: Any) -> list[Any]:
    """The scalar values inside an argument (lists and objects walked), in order."""
    if isinstance(value, dict):
        return [v for item in value.values() for v in argument_values(item)]
    if isinstance(value, list):
        return [v for item in value for v in argument_values(item)]
    return [] if value is None else [value]


def _stated(value: str, text: str) -> bool:
    """``value`` appears in ``text`` as a whole word (case folded)."""
    return re.search(rf"(?<![\w.-]){re.escape(value)}(?![\w-])", text, re.I) is not None


def _ambiguous(events: list[ToolEvent], tool: str, argument: str, value: Any) -> bool:
    """Some call of ``tool`` passed another value for ``argument``."""
    return any(e.name == tool and argument in e.args and e.args[argument] != value for e in events)


class UserFact:
    name = NAME
    values_only = True  # its claim is a value: an answer that says it does not know and names only the question's values abstains
    template = "What `{argument}` did the user give you for `{tool}`?"
    answer_format = {"value": "the value the user gave"}  # the typed answer's keys (bench.questions.answers)
    rubric = ("User fact: the stated value equals the reference: ids and names character for character "
              "(case and quotes ignored), numbers numerically. A different value, or several values offered "
              "without choosing, is wrong.")

    def text(self, target: dict[str, Any]) -> str:
        return self.template.format(argument=target["argument"], tool=target["tool"])

    def applies(self, profile: Profile) -> bool:
        return True

    def build(self, facts: CaseFacts) -> Question | DroppedQuestion:
        case = facts.case
        users = [(i, content_text(m.content)) for i, m in enumerate(case.messages) if isinstance(m, HumanMessage)]
        if len(users) < 2:
            return DroppedQuestion(NAME, "no user message after the first")
        readable = f"{users[0][1]}\n{case.system_prompt}"
        events = facts.asked_events()
        candidates: list[tuple[bool, int, Question]] = []
        reasons: set[str] = set()
        for index, text in users[1:]:
            for event in events:
                if event.call_index < index:
                    continue
                for argument, raw in event.args.items():
                    values = argument_values(raw)
                    for value in values:
                        shown = value_text(value)
                        if isinstance(value, bool) or len(shown) < MIN_CHARS or not _stated(shown, text):
                            continue
                        if _stated(shown, readable):
                            reasons.add("readable in the first user message or the system prompt")
                            continue
                        if len(values) > 1:
                            reasons.add("the argument holds several values")
                            continue
                        if _ambiguous(events, event.name, argument, raw):
                            reasons.add("the tool got other values for that argument")
                            continue
                        target = {"tool": event.name, "argument": argument}
                        question = make_question(case, NAME, self.text(target), raw, [shown],
                                                 [index, event.call_index], target=target)
                        candidates.append((not any(ch.isdigit() for ch in shown), len(candidates), question))
        if candidates:
            return min(candidates, key=lambda c: (c[0], c[1]))[2]
        if reasons:
            return DroppedQuestion(NAME, f"no usable value the user stated later ({'; '.join(sorted(reasons))})")
        return DroppedQuestion(NAME, "no value stated in a later user message is a call's argument")

    def spans(self, reference: Any) -> list[str] | None:
        return None if isinstance(reference, (bool, dict, list)) else value_spans(value_text(reference))

    def claim(self, parsed: Any, text: str, repo_root: str | None) -> Any:
        if isinstance(parsed, (str, int, float)) and not isinstance(parsed, bool):
            return {"value": parsed}
        if isinstance(parsed, dict) and len(parsed) == 1:
            return {"value": next(iter(parsed.values()))}
        if not text.strip() or (is_abstention(text) and not has_values(text)):
            return None
        return {"text": text}

    def grade(self, reference: Any, claim: dict[str, Any], repo_root: str | None) -> tuple[bool, str]:
        want = value_text(reference)
        if "value" in claim:
            got = claim["value"]
            if isinstance(reference, (int, float)) and isinstance(got, (int, float)):
                ok = same_number(reference, got)
            else:
                ok = value_text(got).strip().strip("'\"`").lower() == want.lower()
        elif isinstance(reference, (int, float)):
            ok = any(same_number(reference, n) for n in numbers(claim["text"], words=False))
        else:
            ok = _stated(want, claim["text"])
        return (True, "same value") if ok else (False, f"expected {want!r}")

    def answer_keys(self, reference: Any) -> list[str]:
        return [value_text(reference)]


USER_FACT = UserFact()
