"""The question-type interface, and what every type's builder reads of a case.

A question type is one module (``bench/questions/<name>.py``) holding one object that
implements :class:`QuestionType`, registered in ``bench/questions/__init__.py``:

- ``text(target)``: the question asked about a target (tool, arguments, run ordinal ...);
- ``applies(profile)``: whether the type makes sense for a source (coding types need a repository);
- ``build(facts)``: a :class:`~bench.store.schema.Question` with its code-extracted reference,
  evidence and ``target``, or a :class:`~bench.store.schema.DroppedQuestion` with the reason;
- ``spans(reference)``: the texts whose verbatim presence in a view shows the answer (None: the
  answer is not a text span, e.g. a count or a list: only its evidence messages show it;
  :mod:`bench.text.view_contents`, :mod:`bench.answering.evidence`);
- ``claim(parsed, text, repo_root)`` / ``grade(reference, claim, repo_root)``: the exact
  judge's reading of an answer (None: no specific claim) and its check of that claim;
- ``rubric``: the type's lines of the LLM judge's rubric (the one grading rule, README);
- ``answer_format``: the keys of its typed answer (``{"count": ...}``; :mod:`bench.questions.answers`);
- ``answer_keys(reference)``: strings that show the answer (``in_task_text`` looks for them
  in the task text).

What a type may add (:class:`QuestionTypeOptions`, read only when present) and the rules of
:func:`type_problems` complete the contract; :func:`registry` checks both for every type it
registers (``bench.questions.REGISTRY``), so a type that lacks a member is refused at import in
one line (``question type 'mine': missing answer_format, grade``), not in the middle of a job.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Sequence
from typing import Any, Protocol, TypeVar, runtime_checkable

from langchain_core.messages import ToolMessage

from bench.core.contracts import ContractError, check, problems
from bench.extract import CommandRun, Edit, command_runs, repo_edits
from bench.extract.history import ToolEvent, args_text, tool_events
from bench.profiles import Profile
from bench.store.schema import Case, DroppedQuestion, Question, assign_message_ids
from bench.text.content import content_text, message_text

__all__ = ["QuestionType", "ChoosingType", "QuestionTypeOptions", "registry", "type_problems", "REFERENCE_KINDS", "CaseFacts", "make_question", "ordinal", "args_text", "same_args", "calls_of",
           "MIN_SPAN_CHARS", "value_spans", "word_index", "find_in"]

_WORD = re.compile(r"\w+")
# A value shorter than this is no span: present in any view by chance ("5", "ok").
MIN_SPAN_CHARS = 3


def value_spans(shown: str) -> list[str] | None:
    """A scalar answer's span (its text), or None when it is too short to tell a view apart."""
    shown = shown.strip()
    return [shown] if len(shown) >= MIN_SPAN_CHARS else None


# A type's reference (what ``build`` extracts: a count, a list of paths, an object ...) and its claim
# (what ``claim`` reads of an answer and ``grade`` checks against the reference): each type's own.
_Reference = TypeVar("_Reference", contravariant=True)
_Claim = TypeVar("_Claim")


class QuestionType(Protocol[_Reference, _Claim]):
    """A question type (module docstring), generic in its reference and its claim: a type's module states
    both (``CALL_COUNT: QuestionType[int, float]``), so that its ``claim`` returns what its ``grade`` takes;
    the registry holds types of every kind (``QuestionType[Any, Any]``: ``Question.reference`` is JSON)."""

    name: str
    rubric: str
    answer_format: dict[str, str]  # the typed answer's keys and what each holds (bench.questions.answers)

    def text(self, target: dict[str, Any]) -> str: ...

    def applies(self, profile: Profile) -> bool: ...

    def build(self, facts: CaseFacts) -> Question | DroppedQuestion: ...

    def spans(self, reference: _Reference) -> list[str] | None: ...

    def claim(self, parsed: object, text: str, repo_root: str | None) -> _Claim | None:
        """What the answer asserts (``parsed``: its JSON, any shape; None: no specific claim)."""

    def grade(self, reference: _Reference, claim: _Claim, repo_root: str | None) -> tuple[bool, str]: ...

    def answer_keys(self, reference: _Reference) -> list[str]: ...


@runtime_checkable
class ChoosingType(Protocol):
    """A type that may ask about one of several targets (``questions.depths``: one per depth bucket): its
    eligible questions in history order, and the drop when none is (``build`` asks the first)."""

    def candidates(self, facts: CaseFacts) -> list[Question]: ...

    def none_eligible(self) -> DroppedQuestion: ...


class QuestionTypeOptions(Protocol):
    """What a type may add; each is read only when the type has it."""

    values_only: bool  # its claim is a value: an answer naming only the question's own values abstains
    # what its reference is, for the guessable-answer drops (bench.questions.guess; REFERENCE_KINDS)
    reference_kind: str | None
    answer_tokens: int  # a typical typed answer's output tokens (bench.estimate; 60 when left out)

    def candidates(self, facts: CaseFacts) -> list[Question]: ...  # every eligible target (with none_eligible)

    def none_eligible(self) -> DroppedQuestion: ...  # the drop when no candidate is left

    def off_target(self, question: Question, text: str) -> str | None: ...  # an answer about something else

    def grade_question(self, question: Question, claim: Any, repo_root: str | None) -> tuple[bool, str]: ...

    def claim_question(self, question: Question, parsed: Any, text: str, repo_root: str | None) -> Any: ...  # claim, asked

    def vague(self, text: str) -> str | None: ...  # a declining answer that still claims something

    def retracts(self, head: str, tail: str) -> bool: ...  # a self-correction that takes back one item

    def template_text(self, reference: Any) -> str: ...  # an error's text as the template rule compares it


# What a type's reference is, for the guessable-answer drops (bench.questions.guess): a tool's whole output
# (an empty listing or a value the question quotes is no test), a value a tool returned (quoted in the
# question: no test), an error message (the same one across cases is a template); None: none of these.
REFERENCE_KINDS = ("output", "value", "error", None)
_NAME = re.compile(r"[a-z][a-z0-9_]*")


def type_problems(qtype: Any) -> list[str]:
    """A type's own rules beyond its members: a name usable in qids and config lists, a typed answer
    format, the optional members it has well-formed and complete."""
    found = problems(qtype, QuestionTypeOptions, optional=True)
    if not _NAME.fullmatch(qtype.name):
        found.append(f"name must be lower case letters, digits and _ (it is in qids and questions.types), "
                     f"got {qtype.name!r}")
    answer_format = qtype.answer_format
    if not answer_format:
        found.append('answer_format is empty (the typed answer\'s keys, e.g. {"count": "number of calls"})')
    elif not all(isinstance(k, str) and k.rstrip("?") and isinstance(v, str) for k, v in answer_format.items()):
        found.append("answer_format must map each key (a trailing ? marks it optional) to what its value holds")
    if hasattr(qtype, "candidates") and not hasattr(qtype, "none_eligible"):
        found.append("candidates() needs none_eligible() (the drop when no candidate is left)")
    kind = getattr(qtype, "reference_kind", None)
    if kind not in REFERENCE_KINDS:
        found.append(f"reference_kind must be one of {REFERENCE_KINDS}, got {kind!r}")
    elif kind == "error" and not hasattr(qtype, "template_text"):
        found.append("reference_kind 'error' needs template_text(reference)")
    return found


def registry(*types: Any) -> dict[str, QuestionType]:
    """The registry of ``types`` by name, in order, each checked against the contract (ContractError:
    one line naming the type and what is missing or wrong)."""
    registered: dict[str, QuestionType] = {}
    for qtype in types:
        check(qtype, QuestionType, "question type", rules=type_problems)
        if qtype.name in registered:
            raise ContractError(f"question type {qtype.name!r}: registered twice")
        registered[qtype.name] = qtype
    return registered


class CaseFacts:
    """What the builders read of a case's full recorded history, each computed once."""

    def __init__(self, case: Case) -> None:
        assign_message_ids(case.messages)
        self.case = case
        self.profile: Profile = case.profile

    @functools.cached_property
    def events(self) -> list[ToolEvent]:
        return tool_events(self.case.messages, self.profile)

    @functools.cached_property
    def runs(self) -> list[CommandRun]:
        return command_runs(self.events, self.profile)

    @functools.cached_property
    def edits(self) -> list[Edit]:
        return repo_edits(self.events, self.case.repo_root, self.profile)

    @functools.cached_property
    def task_text(self) -> str:
        return self.case.task_text

    @functools.cached_property
    def _ordinals(self) -> dict[int, int]:
        """``id(event)`` -> its ordinal among the calls of its tool with the same arguments (one pass)."""
        seen: dict[tuple[str, str], int] = {}
        ordinals = {}
        for event in self.events:
            key = (event.name, args_text(event.args))
            seen[key] = seen.get(key, 0) + 1
            ordinals[id(event)] = seen[key]
        return ordinals

    def ordinal(self, event: ToolEvent) -> int:
        """The event's k: it is the k-th call of its tool with these arguments (1, 2, ...)."""
        return self._ordinals[id(event)]

    @functools.cached_property
    def texts(self) -> list[str]:
        """Each message's text as a reader sees it (a tool output as recorded; a call with its arguments)."""
        return [content_text(m.content) if isinstance(m, ToolMessage) else message_text(m) for m in self.case.messages]

    @functools.cached_property
    def _words(self) -> dict[str, list[int]]:
        """Each word (``\\w+``, lower case) -> the messages whose text holds it, in order."""
        return word_index(self.texts)

    def elsewhere(self, text: str, index: int | None) -> bool:
        """Whether ``text`` appears in a message other than message ``index`` (an index, not a scan)."""
        return any(i != index for i in find_in(text, self.texts, self._words))

    def asked_events(self) -> list[ToolEvent]:
        """Calls a domain-neutral question may ask about: not finish or think tools."""
        return [e for e in self.events if not self.profile.is_finish(e.name) and not self.profile.is_think(e.name)]


def word_index(texts: list[str]) -> dict[str, list[int]]:
    """Each word (``\\w+``, lower case) -> the positions of the texts holding it, in order."""
    index: dict[str, list[int]] = {}
    for position, text in enumerate(texts):
        for word in set(_WORD.findall(text.lower())):
            index.setdefault(word, []).append(position)
    return index


def find_in(text: str, texts: list[str], index: dict[str, list[int]], case: bool = True) -> Iterator[int]:
    """Positions of the texts that contain ``text``, in order, looked up through its longest word
    (``word_index``); a text without a word is looked for in every text."""
    words = _WORD.findall(text.lower())
    positions = index.get(max(words, key=len), []) if words else range(len(texts))
    wanted = text if case else text.lower()
    for position in positions:
        if wanted in (texts[position] if case else texts[position].lower()):
            yield position


def ordinal(k: int) -> str:
    suffix = "th" if 10 <= k % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(k % 10, "th")
    return f"{k}{suffix}"


def same_args(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return args_text(a) == args_text(b)


def calls_of(events: list[ToolEvent], tool: str, args: dict[str, Any]) -> list[ToolEvent]:
    """The calls of ``tool`` with exactly these arguments, in order (their ordinals are 1, 2, ...)."""
    return [e for e in events if e.name == tool and same_args(e.args, args)]


def make_question(case: Case, qtype: str, question: str, reference: Any, keys: Sequence[str | None],
                  indices: Sequence[int | None], *, target: dict[str, Any], params: dict[str, Any] | None = None
                  ) -> Question:
    """A question; ``indices`` are the messages holding its evidence (recorded by index and by id). An
    empty key or a None index (a call without its result) holds none."""
    evidence = sorted(set(i for i in indices if i is not None))
    return Question(
        qid=f"{case.case_id}:{qtype}",
        type=qtype,
        question=question,
        reference=reference,
        evidence_keys=[k for k in keys if k],
        evidence_messages=evidence,
        params=params or {},
        target=target,
        evidence_ids=[str(case.messages[i].id) for i in evidence],
    )
