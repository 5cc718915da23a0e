"""``write_actions``: which changes did the agent make, in order?

The state-changing calls (the profile's ``write_tools``; ``generic``: ``dataset.write_tools``)
whose result is known and is not an error (a refused call changed nothing), in call order.
Reference: a list of ``{"tool", "arguments"}`` with the key arguments of each call: the
profile's ``write_key_args``, else its identifier arguments (``id``, ``*_id``), else every
scalar argument. Dropped when the source names no write tool, when no write call succeeded,
when a write call's result is unknown (it may or may not have applied), or when there are
more than ``MAX_CHANGES`` (a list that long is a test of transcription, not of memory).
"""

from __future__ import annotations

import re
from typing import Any

from bench.history import ToolEvent
from bench.profiles import Profile
from bench.questions.base import CaseFacts, make_question
from bench.questions.matching import has_values, is_abstention
from bench.questions.tool_value import value_text
from bench.questions.values import same_number
from bench.schema import DroppedQuestion, Question

__all__ = ["WRITE_ACTIONS", "key_arguments"]

NAME = "write_actions"
QUESTION = "Which changes did you make, in order? Name each state-changing tool call and its key arguments."
MAX_CHANGES = 12
_ID = re.compile(r"(?:^|_)id$", re.I)


def _scalar(value: Any) -> bool:
    return isinstance(value, (str, int, float, bool)) and value is not None


def key_arguments(profile: Profile, args: dict[str, Any]) -> dict[str, Any]:
    """The arguments an answer must give for a change (see the module doc)."""
    if profile.write_key_args:
        return {k: args[k] for k in profile.write_key_args if k in args}
    ids = {k: v for k, v in args.items() if _ID.search(k) and _scalar(v)}
    return ids or {k: v for k, v in args.items() if _scalar(v)}


def _change(profile: Profile, event: ToolEvent) -> dict[str, Any]:
    return {"tool": event.name, "arguments": key_arguments(profile, event.args)}


class WriteActions:
    name = NAME
    answer_format = {"actions": "list of {\"tool\": name, \"arguments\": {...}}, in the order made"}  # the typed answer's keys (bench.questions.answers)
    rubric = ("Changes: the state-changing calls the answer lists are the reference's, in the same order "
              "(a missing, extra or reordered change is wrong), each with the reference's key argument values "
              "(ids character for character, numbers numerically). Read-only calls the answer also mentions "
              "do not count against it.")

    def text(self, target: dict[str, Any]) -> str:
        return QUESTION

    def applies(self, profile: Profile) -> bool:
        return bool(profile.write_tools)

    def build(self, facts: CaseFacts) -> Question | DroppedQuestion:
        profile = facts.profile
        writes = [e for e in facts.events if profile.is_write(e.name)]
        if not writes:
            return DroppedQuestion(NAME, "no call of a write tool")
        unknown = [e for e in writes if e.output is None]
        if unknown:
            return DroppedQuestion(NAME, f"the result of a {unknown[0].name} call is unknown")
        applied = [e for e in writes if not profile.is_error(e.raw)]
        if not applied:
            return DroppedQuestion(NAME, "every write call returned an error")
        if len(applied) > MAX_CHANGES:
            return DroppedQuestion(NAME, f"more than {MAX_CHANGES} changes ({len(applied)})")
        changes = [_change(profile, e) for e in applied]
        keys = [k for c in changes for k in (c["tool"], *(value_text(v) for v in c["arguments"].values()))]
        indices = [i for e in applied for i in (e.call_index, e.result_index)]
        return make_question(facts.case, NAME, QUESTION, changes, keys, indices,
                             target={"tools": sorted({c["tool"] for c in changes})})

    def spans(self, reference: list[dict[str, Any]]) -> None:
        return None  # a list: only every change's call and result show it

    def claim(self, parsed: Any, text: str, repo_root: str | None) -> Any:
        if isinstance(parsed, dict):
            parsed = parsed.get("changes") or parsed.get("actions") or parsed
        if isinstance(parsed, dict) and "tool" in parsed:
            parsed = [parsed]
        if isinstance(parsed, list) and parsed and all(isinstance(c, dict) and "tool" in c for c in parsed):
            return {"changes": [{"tool": str(c["tool"]), "arguments": c.get("arguments") or {}} for c in parsed]}
        if not text.strip() or (is_abstention(text) and not has_values(text)):
            return None
        return {"text": text}

    def grade(self, reference: list[dict[str, Any]], claim: dict[str, Any], repo_root: str | None
              ) -> tuple[bool, str]:
        want = [c["tool"] for c in reference]
        if "changes" in claim:
            got = claim["changes"]
            tools = [c["tool"].strip("` ") for c in got]
            if tools != want:
                return False, f"changes {tools}, expected {want}"
            for ref, item in zip(reference, got, strict=True):
                for key, value in ref["arguments"].items():
                    if not _same(value, (item.get("arguments") or {}).get(key)):
                        return False, f"{ref['tool']}: {key} differs from {value_text(value)!r}"
            return True, "same changes in order"
        text = claim["text"]
        names = sorted(set(want), key=len, reverse=True)
        found = re.findall(r"(?<!\w)(" + "|".join(re.escape(n) for n in names) + r")(?!\w)", text)
        if found != want:
            return False, f"changes named {found}, expected {want}"
        low = text.lower()
        missing = [value_text(v) for c in reference for v in c["arguments"].values()
                   if value_text(v).lower() not in low]
        if missing:
            return False, f"key arguments missing: {missing}"
        # changes of the same tool are told apart by their own values (ids no other change has):
        # those must be named in the reference's order
        firsts = []
        for change in reference:
            own = [value_text(v).lower() for v in change["arguments"].values()
                   if not any(value_text(v) == value_text(w) for other in reference if other is not change
                              for w in other["arguments"].values())]
            if own:
                firsts.append(min(low.find(v) for v in own))
        if firsts != sorted(firsts):
            return False, "changes named in another order"
        return True, "same changes in order"

    def answer_keys(self, reference: list[dict[str, Any]]) -> list[str]:
        return []  # a list of changes is never readable in the task text


def _same(want: Any, got: Any) -> bool:
    if isinstance(want, (int, float)) and not isinstance(want, bool):
        try:
            return same_number(want, float(got))
        except (TypeError, ValueError):
            return False
    return got is not None and value_text(got).strip().lower() == value_text(want).strip().lower()


WRITE_ACTIONS = WriteActions()
