"""The answerer protocol: what the runner asks of an answering model.

``bench.answering.evidence_reader.EvidenceReader`` (offline) and ``bench.answering.agent.LangGraphAnswerer``
(a model) implement it; a new one is a class and ``conf/model/<name>.yaml`` (``docs/extending.md``).
It lives here, above the records it reads and writes (``bench.store.schema``), not in ``bench.core``:
the import contract keeps core below the records.

    answer = answerer.answer(case, view, question)
"""

from __future__ import annotations

from typing import Any, Protocol

from bench.core.components import Component
from bench.core.contracts import check, problems
from bench.store.schema import Answer, Case, Question, View

__all__ = ["Answerer", "AnswererOptions", "check_answerer"]


class Answerer(Component, Protocol):
    """Answers a question about a case from a view (``clients()``: its model clients, ``[]`` offline).
    ``warm_prefix`` (optional, an attribute) asks the pipeline to send a view's first question alone."""

    name: str

    def answer(self, case: Case, view: View, question: Question) -> Answer:
        """The answer, with its usage (an error of the call raises: resume asks again)."""


class AnswererOptions(Protocol):
    """What an answerer may add; each is read only when it has it."""

    warm_prefix: bool  # send a view's first question alone, so the others read its prefix from the cache
    calls_model: bool  # it calls a model although it lists no client (the start line, the stack check)


def check_answerer(part: Any, label: str | None = None) -> Any:
    """``part`` (built from the config group ``model``) when it has the :class:`Answerer` members; else
    ContractError, one line: ``answerer 'mine': missing clients``."""
    return check(part, Answerer, "answerer", label, rules=lambda p: problems(p, AnswererOptions, optional=True))
