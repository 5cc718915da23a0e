"""Guessable questions (issue 17): a question whose answer needs no history is not asked.

Three classes of behaviour, each dropped with its reason (``Case.dropped_questions``):

- ``header-only``: the reference is empty, or a single line that only heads an empty listing
  (``total 0``, ``dir:``, a table's column names) - nothing to remember;
- ``readable in the question``: the reference, or every value it states, is in the quoted
  arguments or the tool name the question itself shows;
- ``template answer``: the same reference answers the type for the same tool in at least
  ``TEMPLATE_MIN_CASES`` cases of the case set or in at least ``TEMPLATE_SHARE`` of its cases
  (never fewer than two cases): a reply every run gets ("Transfer successful", "[]"). Error
  messages too: the same message answering the question in that many cases is the tool's or
  the environment's template (an editor's "did not appear verbatim", a missing module every run
  of a benchmark hits).

Which rules apply to a type is what its reference is, as the type declares it (``reference_kind``,
:data:`bench.questions.question_type.REFERENCE_KINDS`): a tool's whole ``output`` (every rule; the
header-only rule and the values it states are an output's), a ``value`` a tool returned (readable in
the question, template), an ``error`` message (template, keyed by the type's ``template_text``); a
type that declares none (a count, a list, a value the user gave) is never dropped here. The first
two are per question (:func:`guess_reason`); the template rule needs the whole case set
(:func:`drop_templates`).
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from collections.abc import Sequence
from typing import Any

from bench.extract.history import args_text
from bench.questions.matching import squash
from bench.questions.tool_output import output_values
from bench.store.schema import Case, DroppedQuestion, Question

__all__ = ["TEMPLATE_MIN_CASES", "TEMPLATE_SHARE", "GUESSED_KINDS", "TEMPLATE_KINDS", "reference_kind", "guess_reason",
           "drop_templates",
           "header_only", "readable_in_question", "template_key", "TemplateCount"]

log = logging.getLogger(__name__)

TEMPLATE_MIN_CASES = 3  # a reference shared by this many cases of the set is a template
TEMPLATE_SHARE = 0.2  # ... or by this share of them (at least two cases)
# Reference kinds (a type's ``reference_kind``) whose reference is what a tool returned: the same reply
# across cases is the tool's template (a model can guess it), and a value quoted in the question is no
# test. Not a value the user gave (user_fact): one persona's id recurring across cases is not guessable
# from inside one case (its builder drops values readable in the task).
GUESSED_KINDS = ("output", "value")
# kinds the template rule applies to: those, and error messages (issue 31): the same error answering the
# question in several cases is a template (their questions quote no arguments, so only the template rule
# applies to them)
TEMPLATE_KINDS = (*GUESSED_KINDS, "error")


def reference_kind(qtype: str) -> str | None:
    """What a registered type's reference is (its ``reference_kind``; None for an unknown type)."""
    from bench.questions import REGISTRY  # the registry is built from the types, which this module serves

    return getattr(REGISTRY.get(qtype), "reference_kind", None)

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
    if reference_kind(question.type) == "output" and isinstance(question.reference, str):
        values = [squash(str(v)).lower() for v in output_values(question.reference)]
        values = [v for v in values if len(v) >= 2]
        return bool(values) and all(v in quoted for v in values)
    return False


def guess_reason(question: Question) -> str | None:
    """Why a question needs no history (None: it does)."""
    kind = reference_kind(question.type)
    if kind not in GUESSED_KINDS:
        return None
    if kind == "output" and header_only(question.reference, _quoted(question)):
        return "header-only or empty output"
    if readable_in_question(question):
        return "readable in the question (the quoted arguments or tool name)"
    return None


def template_key(question: Question | dict[str, Any]) -> tuple[str, str, str] | None:
    """(type, tool, reference text) for a type whose answers may be templates; else None. An
    error's key is its message alone (the same message, whatever call returned it)."""
    q = Question(**question) if isinstance(question, dict) else question
    kind = reference_kind(q.type)
    if kind not in TEMPLATE_KINDS or "tool" not in (q.target or {}):
        return None
    if kind == "error" and isinstance(q.reference, dict):
        from bench.questions import REGISTRY

        return q.type, "", squash(REGISTRY[q.type].template_text(q.reference))  # type: ignore[attr-defined]
    return q.type, str(q.target["tool"]), squash(_reference_text(q))


class TemplateCount:
    """The template rule over a case set seen one case at a time: :meth:`add` every case, then
    :meth:`drop` from each. What it holds per distinct answer is a digest, the tool's name and a
    count, never the case, so a streamed case set of any size is counted in little memory."""

    def __init__(self, min_cases: int = TEMPLATE_MIN_CASES, share: float = TEMPLATE_SHARE) -> None:
        self.min_cases, self.share = min_cases, share
        self.n_cases = 0
        self._holders: dict[bytes, list[Any]] = {}  # digest of the template key -> [cases holding it, tool]

    @staticmethod
    def _digest(key: tuple[str, str, str]) -> bytes:
        return hashlib.blake2b("\x00".join(key).encode("utf-8", "surrogatepass"), digest_size=16).digest()

    def add(self, case: Case) -> None:
        """Count ``case``'s answers (each distinct answer once per case)."""
        self.n_cases += 1
        keys = {key for key in map(template_key, case.questions) if key is not None}
        for key in keys:
            held = self._holders.setdefault(self._digest(key), [0, key[1]])
            held[0] += 1

    def holders(self, key: tuple[str, str, str]) -> int:
        """How many of the counted cases hold this answer."""
        held = self._holders.get(self._digest(key))
        return held[0] if held else 0

    def _is_template(self, held: int) -> bool:
        return held >= 2 and (held >= self.min_cases or held >= self.share * self.n_cases)

    def is_template(self, key: tuple[str, str, str] | None) -> bool:
        return key is not None and self._is_template(self.holders(key))

    def reason(self, question: Question | dict[str, Any]) -> str | None:
        """Why ``question`` is dropped as a template answer (None: it is not one)."""
        key = template_key(question)
        if key is None:
            return None
        held = self.holders(key)
        if not self._is_template(held):
            return None
        of = f" of `{key[1]}`" if key[1] else ""
        return (f"template answer (the same reference answers {key[0]}{of} in "
                f"{held} of {self.n_cases} cases)")

    def _split(self, questions: list[Any]) -> tuple[list[Any], list[tuple[Any, str]]]:
        """``questions`` (objects or records) as (kept, [(dropped question, reason)])."""
        kept, dropped = [], []
        for q in questions:
            reason = self.reason(q)
            if reason is None:
                kept.append(q)
            else:
                dropped.append((q, reason))
        return kept, dropped

    def drop(self, case: Case) -> int:
        """Drop (in place, with the reason) ``case``'s questions whose answer is a template; how many."""
        kept, dropped = self._split(case.questions)
        for q, reason in dropped:
            case.dropped_questions.append(DroppedQuestion(q.type, reason))
            log.debug("dropped %s question of %s: %s", q.type, case.case_id, reason)
        if dropped:
            case.questions = kept
        return len(dropped)

    def drop_from_record(self, record: dict[str, Any]) -> int:
        """:meth:`drop` on a ``cases.jsonl`` record (``questions`` -> ``dropped_questions``); how many."""
        kept, dropped = self._split(record["questions"])
        record["dropped_questions"] += [{"type": q["type"], "reason": reason} for q, reason in dropped]
        if dropped:
            record["questions"] = kept
        return len(dropped)


def drop_templates(cases: Sequence[Case], min_cases: int = TEMPLATE_MIN_CASES,
                   share: float = TEMPLATE_SHARE) -> int:
    """Drop (in place, with the reason) every question whose answer is a template over the case
    set; returns how many were dropped."""
    count = TemplateCount(min_cases, share)
    for case in cases:
        count.add(case)
    return sum(count.drop(case) for case in cases)
