"""The answerer protocol: what the runner asks of an answering model.

``bench.answering.evidence_reader.EvidenceReader`` (offline) and ``bench.answering.agent.LangGraphAnswerer``
(a model) implement it; a new one is a class and ``conf/model/<name>.yaml`` (``docs/extending.md``).
It lives here, above the records it reads and writes (``bench.store.schema``), not in ``bench.core``:
the import contract keeps core below the records.

    answer = answerer.answer(case, view, question)
"""

from __future__ import annotations

from typing import Protocol

from bench.core.components import Component
from bench.store.schema import Answer, Case, Question, View

__all__ = ["Answerer"]


class Answerer(Component, Protocol):
    """Answers a question about a case from a view (``clients()``: its model clients, ``[]`` offline).
    ``warm_prefix`` (optional, an attribute) asks the pipeline to send a view's first question alone."""

    name: str

    def answer(self, case: Case, view: View, question: Question) -> Answer:
        """The answer, with its usage (an error of the call raises: resume asks again)."""
