"""The parts a job is built from, and the one place their model clients are found.

An answerer, a judge, a policy (and its summarizer) each list the model clients they call
through (``clients()``: ``[]`` offline). From that list alone the runner derives what used to
be walks over attribute names and forwarding methods: the fail-fast check of every endpoint
(:func:`preflight`), the limiters and the kinds of calls sharing them
(``bench.llm.limiter.find_limiters``), and whether building a view calls a model
(:func:`calls_model`: views are then built concurrently).

    preflight(answerer, judge, policy)       # each client checks its key and endpoint, once
    calls_model(policy)                      # True when a view needs a model call

An answerer and a judge are named by ``_target_`` in the config: ``bench.answering.answerer.check_answerer``
and ``bench.scoring.judge.check_judge`` read each against its protocol when the job builds it, before any
case is read.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

__all__ = ["ModelClient", "Component", "clients_of", "calls_model", "preflight"]

# The protocols of the parts themselves live beside the records they read and write, above this layer:
# bench.answering.answerer.Answerer, bench.scoring.judge.Judge, bench.policies.policy.Policy,
# bench.policies.summarize.Summarizer, bench.questions.question_type.QuestionType.


class ModelClient(Protocol):
    """What the runner needs of a model client (``bench.llm.ChatClient``)."""

    kind: str  # answer | judge | summarizer: the calls it makes

    @property
    def limiter(self) -> object:
        """Its concurrency limiter (``bench.llm.limiter.find_limiters`` knows the kinds)."""

    def preflight(self, seen: set[tuple[str, str]] | None = None) -> None:
        """Check its key and endpoint; ``seen``: the (endpoint, key digest) pairs checked already."""


class Component(Protocol):
    """A part of a job that may call models."""

    def clients(self) -> Sequence[ModelClient]:
        """The model clients it calls through (``[]`` offline)."""


def clients_of(*components: object) -> list[ModelClient]:
    """The model clients of the components, each once, in order (a component without ``clients()``
    has none)."""
    found: dict[int, ModelClient] = {}
    for component in components:
        listed = getattr(component, "clients", None)
        for client in (listed() if callable(listed) else []):
            found.setdefault(id(client), client)
    return list(found.values())


def calls_model(component: object) -> bool:
    """Whether the component calls a model: it lists a client; one of one's own that lists none
    says so with ``calls_model`` (unknown: it does, the safe side for concurrency)."""
    listed = getattr(component, "clients", None)
    if callable(listed):
        return bool(listed())
    return bool(getattr(component, "calls_model", True))


def preflight(*components: object) -> None:
    """Fail fast: every model client of the components checks its key and endpoint, each endpoint once."""
    seen: set[tuple[str, str]] = set()
    for client in clients_of(*components):
        client.preflight(seen)
