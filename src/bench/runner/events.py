"""What a job's tasks report to the thread that writes the records (``bench.runner.pipeline``)."""

from __future__ import annotations

from dataclasses import dataclass

from bench.store.schema import Answer, Case, Question, Score, View

__all__ = ["ViewBuilt", "PrefixWarm", "ViewRecord", "Answered", "Scored", "JudgeFailed"]


@dataclass(frozen=True)
class ViewBuilt:
    case: Case
    view: View | None  # None: building it failed
    error: tuple[str, str] | None = None  # (error text, outcome) when it failed


@dataclass(frozen=True)
class PrefixWarm:
    case: Case  # the first reply of the case's first question is in: its view's prefix is cached


@dataclass(frozen=True)
class ViewRecord:
    case: Case
    line: str  # the views.jsonl line, encoded on the worker


@dataclass(frozen=True)
class Answered:
    case: Case
    question: Question
    answer: Answer
    traced: bool  # its case has a trace (the phase traces, and the view was built)


@dataclass(frozen=True)
class Scored:
    case: Case
    question: Question
    answer: Answer
    score: Score
    traced: bool


@dataclass(frozen=True)
class JudgeFailed:
    case: Case
    question: Question
    error: BaseException
