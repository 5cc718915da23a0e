"""Guessable questions (issue 17): a question whose answer needs no history is not asked.

Three classes of behaviour, each dropped with its reason (``Case.dropped_questions``):

- ``header-only``: the reference is empty, or a single line that only heads an empty listing
  (``total 0``, ``dir:``, a table's column names) - nothing to remember;
- ``readable in the question``: the reference, or every value it states, is in the quoted
  arguments or the tool name the question itself shows;
- ``template answer``: the same reference answers the type for the same tool in at least
  ``TEMPLATE_MIN_CASES`` cases of the case set or in at least ``TEMPLATE_SHARE`` of its cases
  (never fewer than two cases): a reply every run gets ("Transfer successful", "[]").

The first two are per question (:func:`guess_reason`); the template rule needs the whole
case set (:func:`drop_templates`).
"""

from __future__ import annotations

import json
import logging
import re
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from bench.history import args_text
from bench.questions.matching import squash
from bench.questions.tool_output import output_values
from bench.schema import Case, DroppedQuestion, Question

__all__ = ["TEMPLATE_MIN_CASES", "TEMPLATE_SHARE", "GUESSED_TYPES", "guess_reason", "drop_templates",
           "header_only", "readable_in_question", "template_key"]

log = logging.getLogger(__name__)

TEMPLATE_MIN_CASES = 3  # a reference shared by this many cases of the set is a template
TEMPLATE_SHARE = 0.2  # ... or by this share of them (at least two cases)
# types whose reference is what a tool returned: the same reply across cases is the tool's
# template (a model can guess it), and a value quoted in the question is no test. Not
# user_fact: its value comes from the user, and one persona's id recurring across cases
# is not guessable from inside one case (its builder drops values readable in the task).
GUESSED_TYPES = ("tool_output", "tool_value", "latest_value")

# a listing's header with nothing under it: "total 0", "<dir>:", "./", a row of column names
_HEADER = re.compile(r"^(?:total \d+|[\w./~-]*/?:|\.{1,2}/?|(?:[A-Z][A-Za-z_]*\s+){1,}[A-Z][A-Za-z_]*|[-=+| ]+)$")


def _reference_text(question: Question) -> str:
    ref = question.reference
    if isinstance(ref, str):
        return ref
    return json.dumps(ref, ensure_ascii=False) if isinstance(ref, (dict, list)) else str(ref).lower() \
        if isinstance(ref, bool) else str(ref)


def header_only(reference: Any, quoted: str = "") -> bool:
    """Empty, or a listing's header with nothing under it but what the question quotes (the
    listed directory itself: ``Here's the files ... in /repo, excluding hidden items:`` + ``/repo``)."""
    if reference is None:
        return True
    text = reference if isinstance(reference, str) else str(reference)
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    if not lines:
        return True
    headed = lines[0].endswith(":") or bool(_HEADER.match(lines[0]))
    if not headed:
        return False
    quoted = quoted.lower()
    return all(line.rstrip("/").lower() in quoted and len(line.rstrip("/")) > 1 for line in lines[1:])


def _quoted(question: Question) -> str:
    target = question.target or {}
    return squash(f"{target.get('tool', '')} {args_text(target.get('arguments') or {})}")


def readable_in_question(question: Question) -> bool:
    """The reference (or every value it states) is in what the question quotes: tool and arguments."""
    target = question.target or {}
    if "tool" not in target:
        return False
    quoted = _quoted(question).lower()
    ref = squash(_reference_text(question)).lower()
    if ref and ref in quoted:
        return True
    if question.type == "tool_output" and isinstance(question.reference, str):
        values = [squash(str(v)).lower() for v in output_values(question.reference)]
        values = [v for v in values if len(v) >= 2]
        return bool(values) and all(v in quoted for v in values)
    return False


def guess_reason(question: Question) -> str | None:
    """Why a question needs no history (None: it does)."""
    if question.type not in GUESSED_TYPES:
        return None
    if question.type == "tool_output" and header_only(question.reference, _quoted(question)):
        return "header-only or empty output"
    if readable_in_question(question):
        return "readable in the question (the quoted arguments or tool name)"
    return None


def template_key(question: Question | dict[str, Any]) -> tuple[str, str, str] | None:
    """(type, tool, reference text) for a type whose answers may be templates; else None."""
    q = Question(**question) if isinstance(question, dict) else question
    if q.type not in GUESSED_TYPES or "tool" not in (q.target or {}):
        return None
    return q.type, str(q.target["tool"]), squash(_reference_text(q))


def drop_templates(cases: Sequence[Case], min_cases: int = TEMPLATE_MIN_CASES,
                   share: float = TEMPLATE_SHARE) -> int:
    """Drop (in place, with the reason) every question whose answer is a template over the case
    set; returns how many were dropped."""
    holders: dict[tuple[str, str, str], set[str]] = defaultdict(set)
    for case in cases:
        for q in case.questions:
            key = template_key(q)
            if key is not None:
                holders[key].add(case.case_id)
    n = len(cases)
    templates = {k for k, held in holders.items()
                 if len(held) >= 2 and (len(held) >= min_cases or len(held) >= share * n)}
    dropped = 0
    for case in cases:
        kept = []
        for q in case.questions:
            key = template_key(q)
            if key in templates:
                reason = (f"template answer (the same reference answers {q.type} of `{key[1]}` in "
                          f"{len(holders[key])} of {n} cases)")
                case.dropped_questions.append(DroppedQuestion(q.type, reason))
                log.debug("dropped %s question of %s: %s", q.type, case.case_id, reason)
                dropped += 1
            else:
                kept.append(q)
        case.questions = kept
    return dropped
