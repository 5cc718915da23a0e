"""``latest_value``: what was a field the last time the agent called a tool with some arguments?

Stale-state confusion: a tool called more than once with the same arguments whose results
disagree on a field: a scalar of a JSON object result (top level, or nested objects as
``a.b``), or in a text readout a ``Label: value`` line (``MMSC URL: Not Set``; a label that
shows twice in one result is no field, nor is an exception's name: ``KeyError: 'x'`` is an
error printed). The evidence is the last call and its result. The
question asks the field's value in the last such result; the reference is that value and
the most recent earlier value that differs is kept as ``stale`` in the question's params.
An answer giving the stale value is ``wrong`` with a reason starting ``stale value``
(:data:`bench.store.schema.STALE_REASON`), which the metrics count apart. Dropped when no tool is
called twice with the same arguments, when the repeated results have no fields, or
when no field changed between them (the last call's result must show the field). The
earliest changing pair wins (first by the last
call's position, then by the field's order in the result).
"""

from __future__ import annotations

import json
import re
from typing import Any

from bench.extract.history import ToolEvent, args_text
from bench.profiles import Profile
from bench.questions.question_type import CaseFacts, QuestionType, make_question, value_spans
from bench.questions.tool_value import ToolValue, value_text
from bench.store.schema import STALE_REASON, DroppedQuestion, Question

__all__ = ["LATEST_VALUE", "flat_fields"]

NAME = "latest_value"


_READOUT = re.compile(r"^([A-Za-z][^:\n]{0,39}?):[ \t]+(\S[^\n]{0,199})$", re.M)


# A line ``SomeError: message`` (``pkg.SomeException: ...``, ``Traceback ...:``) is an error printed,
# not a field of a readout: its "label" names an exception class.
_EXCEPTION_LABEL = re.compile(r"^(?:[A-Za-z_][\w]*\.)*[A-Z]\w*(?:Error|Exception|Warning|Exit|Interrupt|Failure)$"
                              r"|^Traceback\b")


def _readout(text: str) -> dict[str, Any] | None:
    """``Label: value`` lines of a text result (labels that show once and are not exception
    names), or None."""
    found = [(label, value) for label, value in _READOUT.findall(text)
             if not _EXCEPTION_LABEL.match(label.strip())]
    counts: dict[str, int] = {}
    for label, _ in found:
        counts[label] = counts.get(label, 0) + 1
    fields = {label.strip(): value.strip() for label, value in found if counts[label] == 1}
    return fields or None


def flat_fields(output: str | None) -> dict[str, Any] | None:
    """A result's fields: a JSON object's scalars, nested objects flattened to ``a.b``, or a text
    readout's ``Label: value`` lines (None: no fields)."""
    try:
        data = json.loads(output or "")
    except (json.JSONDecodeError, ValueError):
        return _readout(output or "")
    if not isinstance(data, dict):
        return None
    flat: dict[str, Any] = {}

    def walk(node: dict[str, Any], prefix: str) -> None:
        for key, value in node.items():
            if isinstance(value, dict):
                walk(value, f"{prefix}{key}.")
            elif value is not None and not isinstance(value, list):
                flat[f"{prefix}{key}"] = value
    walk(data, "")
    return flat


class LatestValue:
    name = NAME
    values_only = True  # its claim is a value: an answer that says it does not know and names only the question's values abstains
    template = "What was `{field}` the last time you called `{tool}` with `{arguments}`?"
    answer_format = {"value": "the value in the latest result"}  # the typed answer's keys (bench.questions.answers)
    reference_kind = "value"  # a value a tool returned (bench.questions.guess)
    answer_tokens = 20  # a typical typed answer's output tokens (bench.estimate)
    rubric = ("Latest value: the value the field had in the LAST result of that call, as in the reference "
              "(numbers numerically, strings case-insensitively, booleans as true/false or yes/no; a message-like "
              "value in substance, its identifiers and numbers kept, a location optional; every part of a "
              "`|`-separated value). The value an earlier call returned (the reference's params.stale) is wrong.")

    def __init__(self) -> None:
        self._value = ToolValue()  # the same reading of a stated value as tool_value's

    def text(self, target: dict[str, Any]) -> str:
        return self.template.format(field=target["field"], tool=target["tool"], arguments=args_text(target["arguments"]))

    def applies(self, profile: Profile) -> bool:
        return True

    def build(self, facts: CaseFacts) -> Question | DroppedQuestion:
        groups: dict[tuple[str, str], list[ToolEvent]] = {}
        for event in facts.asked_events():
            groups.setdefault((event.name, args_text(event.args)), []).append(event)
        repeated = [calls for calls in groups.values() if len(calls) > 1]
        if not repeated:
            return DroppedQuestion(NAME, "no tool called twice with the same arguments")
        found: list[tuple[int, int, Question]] = []
        objects = last_bare = False
        for calls in repeated:
            last = calls[-1]  # the question asks the last call: its result must show the field
            latest = flat_fields(last.output)
            earlier = [r for r in (flat_fields(e.output) for e in calls[:-1]) if r is not None]
            if latest is None or not earlier:
                last_bare = last_bare or (latest is None and bool(earlier))
                continue
            objects = True
            for order, (field, value) in enumerate(latest.items()):
                before = [r[field] for r in earlier if field in r and r[field] != value]
                if not before:
                    continue
                target = {"tool": last.name, "arguments": last.args, "field": field}
                indices = [last.call_index, last.result_index]  # the latest value's call and result
                question = make_question(facts.case, NAME, self.text(target), value, [value_text(value)], indices,
                                         target=target, params={"stale": before[-1]})
                found.append((last.call_index, order, question))
                break
        if found:
            return min(found, key=lambda f: (f[0], f[1]))[2]
        if not objects and last_bare:
            return DroppedQuestion(NAME, "the last repeated call's result has no fields (earlier ones have)")
        if not objects:
            return DroppedQuestion(NAME, "the repeated calls' results have no fields (JSON object or Label: value)")
        return DroppedQuestion(NAME, "no field changed between repeated calls with the same arguments")

    def spans(self, reference: Any) -> list[str] | None:
        return None if isinstance(reference, bool) else value_spans(value_text(reference))

    def claim(self, parsed: Any, text: str, repo_root: str | None) -> dict[str, Any] | None:
        return self._value.claim(parsed, text, repo_root)

    def grade(self, reference: Any, claim: dict[str, Any], repo_root: str | None) -> tuple[bool, str]:
        return self._value.grade(reference, claim, repo_root)

    def answer_keys(self, reference: Any) -> list[str]:
        return [value_text(reference)]

    def grade_question(self, question: Question, claim: dict[str, Any], repo_root: str | None) -> tuple[bool, str]:
        """The grade, with a wrong answer that gives the earlier value marked stale."""
        ok, why = self.grade(question.reference, claim, repo_root)
        stale = question.params.get("stale")
        if not ok and stale is not None and self.grade(stale, claim, repo_root)[0]:
            return False, f"{STALE_REASON}: {value_text(stale)!r} is what an earlier call returned, " \
                          f"expected {value_text(question.reference)!r}"
        return ok, why


LATEST_VALUE: QuestionType[Any, dict[str, Any]] = LatestValue()  # its reference, its claim
