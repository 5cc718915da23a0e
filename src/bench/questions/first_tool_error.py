"""``first_tool_error``: what error did the agent's first failed tool call return?

The earliest result the profile marks as an error (tau2: ``Error: ...``; OpenHands: editor
and tool replies starting with ``ERROR``). Reference ``{"tool", "message"}``: the tool and the
result's first line (when that line is only a label such as ``ERROR:``, the next line).
"""

from __future__ import annotations

import re
from typing import Any

from bench.profiles import Profile
from bench.questions.base import CaseFacts, ReaderAnswer, calls_of, make_question
from bench.questions.matching import has_values, is_abstention
from bench.questions.messages import in_substance
from bench.reading import Reading
from bench.schema import DroppedQuestion, Question

__all__ = ["FIRST_TOOL_ERROR", "error_message"]

NAME = "first_tool_error"
_TOOL_NAME = re.compile(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b")
_LABEL_ONLY = re.compile(r"^\W*(?:error|exception|failed|failure)\W*$", re.I)
# A line of markup only, e.g. ``<returncode>1</returncode>`` or ``<output>`` (mini-swe-agent results).
_MARKER_LINE = re.compile(r"^(?:<[^<>\n]+>[^<>\n]{0,40})*<[^<>\n]+>$")


def error_message(output: str) -> str:
    """The first line of an error result that is not a marker (the next line when the first is only
    a label such as ``ERROR:``)."""
    lines = [line.strip() for line in output.strip().splitlines() if line.strip()]
    lines = [line for line in lines if not _MARKER_LINE.match(line)] or lines
    if not lines:
        return ""
    if _LABEL_ONLY.match(lines[0]) and len(lines) > 1:
        return lines[1]
    return lines[0]


class FirstToolError:
    name = NAME
    values_only = True  # its claim is a value: an answer that says it does not know and names only the question's values abstains
    template = "What error did the first failed tool call return?"
    answer_format = {"tool": "the tool's name", "message": "the error message"}  # the typed answer's keys (bench.questions.answers)
    rubric = ("Tool error: the error message in substance (a paraphrase keeping the key identifiers, numbers "
              "and quoted strings is fine). If the answer names the tool, it must be the reference tool. A word "
              "changed (\"must be active\" for \"must be suspended\") or the opposite cause (not found for "
              "multiple occurrences, or the reverse) is another message.")

    def text(self, target: dict[str, Any]) -> str:
        return self.template

    def applies(self, profile: Profile) -> bool:
        return True

    def build(self, facts: CaseFacts) -> Question | DroppedQuestion:
        for event in facts.events:
            if event.output is None or not facts.profile.is_error(event.raw):
                continue
            message = error_message(event.output)
            same = calls_of(facts.events, event.name, event.args)
            k = next(i for i, e in enumerate(same, start=1) if e is event)
            target = {"tool": event.name, "arguments": event.args, "ordinal": k}
            return make_question(facts.case, NAME, self.template, {"tool": event.name, "message": message},
                                 [message], [event.call_index, event.result_index], target=target)
        return DroppedQuestion(NAME, "no tool result is an error")

    def read(self, question: Question, reading: Reading, repo_root: str | None) -> ReaderAnswer:
        if reading.summary and not reading.timeline_complete:
            return ReaderAnswer(None)
        if reading.collapsed:
            return ReaderAnswer(None)  # removed failed attempts were errors at unknown places
        unknown: list[int] = []
        for position, seen in enumerate(reading.events):
            output = seen.event.output
            if output is None or seen.partial:
                if seen.handle:
                    unknown.append(position)
                return ReaderAnswer(None, unknown)  # an earlier result is unknown: it may be the error
            if reading.profile.is_error(output):
                return ReaderAnswer({"tool": seen.event.name, "message": error_message(output)}, unknown)
        return ReaderAnswer(None)

    def claim(self, parsed: Any, text: str, repo_root: str | None) -> dict[str, Any] | None:
        if isinstance(parsed, dict) and isinstance(parsed.get("message"), str):
            return {"tool": parsed.get("tool"), "text": parsed["message"]}
        if not text.strip() or (is_abstention(text) and not has_values(text)):
            return None
        return {"tool": None, "text": text}

    def grade(self, reference: dict[str, str], claim: dict[str, Any], repo_root: str | None) -> tuple[bool, str]:
        if claim["tool"] and str(claim["tool"]).strip("` ") != reference["tool"]:
            return False, f"tool {claim['tool']} differs from {reference['tool']}"
        if claim["tool"] is None:  # a tool named in prose: snake_case names that are not part of the message
            named = set(_TOOL_NAME.findall(claim["text"])) - set(_TOOL_NAME.findall(reference["message"]))
            if named and not any(n == reference["tool"] or reference["tool"].startswith(n) for n in named):
                return False, f"names another tool ({', '.join(sorted(named))}), not {reference['tool']}"
        if in_substance(_strip_label(reference["message"]), claim["text"]):
            return True, "same error message"
        return False, "error message differs"

    def answer_keys(self, reference: dict[str, str]) -> list[str]:
        return [_strip_label(reference["message"])]


def _strip_label(message: str) -> str:
    """The message without its ``Error:`` label (an answer need not repeat the label)."""
    return re.sub(r"^\s*(?:error|exception)\s*:?\s*", "", message, flags=re.I) or message


FIRST_TOOL_ERROR = FirstToolError()
