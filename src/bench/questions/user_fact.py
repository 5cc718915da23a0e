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

from bench.profiles import Profile
from bench.questions.matching import has_values, is_abstention
from bench.questions.question_type import CaseFacts, QuestionType, find_in, make_question, value_spans, word_index
from bench.questions.tool_value import value_text
from bench.questions.values import numbers, same_number, same_text
from bench.store.schema import DroppedQuestion, Question
from bench.text.content import content_text

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


def _stated_whole(value: str, text: str) -> bool:
    """``value`` is stated as the answer's value: a whole word, and, for a value with digits, with no digit group
    joined to it ("+1 555-123-2002" is another value than 555-123-2002: a country code added)."""
    for match in re.finditer(rf"(?<![\w.-]){re.escape(value)}(?![\w-])", text, re.I):
        joined = re.search(r"(?:\+\d{1,3}|\d)[ .-]?$", text[: match.start()]) or re.match(r"[ .-]\d", text[match.end():])
        if not (re.search(r"\d", value) and joined):
            return True
    return False


class UserFact:
    name = NAME
    values_only = True  # its claim is a value: an answer that says it does not know and names only the question's values abstains
    template = "What `{argument}` did the user give you for `{tool}`?"
    answer_format = {"value": "the value the user gave"}  # the typed answer's keys (bench.questions.answers)
    answer_tokens = 20  # a typical typed answer's output tokens (bench.estimate)
    rubric = ("User fact: the stated value equals the reference: ids and names character for character "
              "(case and quotes ignored; a phone number's separators too: 5551232002 is not 555-123-2002), "
              "numbers numerically; something joined to it, \"+1 555-123-2002\", is another value. A different value, or "
              "several values offered without choosing, is wrong; so is an answer that the user gave none.")

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
        later = users[1:]
        texts = [text for _, text in later]
        words = word_index(texts)
        passed: dict[tuple[str, str], list[Any]] = {}  # (tool, argument) -> the distinct values it got
        for event in events:
            for argument, raw in event.args.items():
                got = passed.setdefault((event.name, argument), [])
                if all(raw != v for v in got):
                    got.append(raw)
        # One pass over the calls; each value looked up in the later user messages through a word
        # index (not every user message against every call: that is quadratic in a long run). The
        # earliest (user message, call, argument, value) wins, values with a digit first.
        best: tuple[tuple[bool, int, int, int, int], Question] | None = None
        reasons: set[str] = set()
        for order, event in enumerate(events):
            if event.call_index < later[0][0]:
                continue
            for position, (argument, raw) in enumerate(event.args.items()):
                values = argument_values(raw)
                for number, value in enumerate(values):
                    shown = value_text(value)
                    if isinstance(value, bool) or len(shown) < MIN_CHARS:
                        continue
                    user = next((u for u in find_in(shown, texts, words, case=False)
                                 if later[u][0] < event.call_index and _stated(shown, texts[u])), None)
                    if user is None:
                        continue
                    if _stated(shown, readable):
                        reasons.add("readable in the first user message or the system prompt")
                        continue
                    if len(values) > 1:
                        reasons.add("the argument holds several values")
                        continue
                    if any(raw != v for v in passed[(event.name, argument)]):
                        reasons.add("the tool got other values for that argument")
                        continue
                    key = (not any(ch.isdigit() for ch in shown), user, order, position, number)
                    if best is None or key < best[0]:
                        target = {"tool": event.name, "argument": argument}
                        best = key, make_question(case, NAME, self.text(target), raw, [shown],
                                                  [later[user][0], event.call_index], target=target)
        if best is not None:
            return best[1]
        if reasons:
            return DroppedQuestion(NAME, f"no usable value the user stated later ({'; '.join(sorted(reasons))})")
        return DroppedQuestion(NAME, "no value stated in a later user message is a call's argument")

    def spans(self, reference: Any) -> list[str] | None:
        return None if isinstance(reference, (bool, dict, list)) else value_spans(value_text(reference))

    def claim(self, parsed: Any, text: str, repo_root: str | None) -> dict[str, Any] | None:
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
                ok = same_text(value_text(got), want)
        elif isinstance(reference, (int, float)):
            ok = any(same_number(reference, n) for n in numbers(claim["text"], words=False))
        else:
            ok = _stated_whole(want, claim["text"])
        return (True, "same value") if ok else (False, f"expected {want!r}")

    def answer_keys(self, reference: Any) -> list[str]:
        return [value_text(reference)]


USER_FACT: QuestionType[Any, dict[str, Any]] = UserFact()  # its reference, its claim
