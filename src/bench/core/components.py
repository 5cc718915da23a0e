"""The parts a job is built from, and the one place their model clients are found.

An answerer, a judge, a policy (and its summarizer) each list the model clients they call
through (``clients()``: ``[]`` offline). From that list alone the runner derives what used to
be walks over attribute names and forwarding methods: the fail-fast check of every endpoint
(:func:`preflight`), the limiters and the kinds of calls sharing them
(``bench.llm.limiter.find_limiters``), and whether building a view calls a model
(:func:`calls_model`: views are then built concurrently).

    preflight(answerer, judge, policy)       # each client checks its key and endpoint, once
    calls_model(policy)                      # True when a view needs a model call
    check_part(judge, "judge")               # the Judge protocol's members, or one ContractError line

An answerer and a judge are named by ``_target_`` in the config: :func:`check_part` reads each against
its protocol when the job builds it, before any case is read.
"""

from __future__ import annotations

from typing import Any, Protocol

from bench.core.contracts import check, problems

__all__ = ["ModelClient", "Component", "Answerer", "AnswererOptions", "Judge", "KINDS", "check_part", "clients_of",
           "calls_model", "preflight"]


class ModelClient(Protocol):
    """What the runner needs of a model client (``bench.llm.ChatClient``)."""

    kind: str       # answer | judge | summarizer: the calls it makes
    limiter: Any    # its concurrency limiter

    def preflight(self, seen: set | None = None) -> None: ...


class Component(Protocol):
    """A part of a job that may call models."""

    def clients(self) -> list[ModelClient]: ...


class Answerer(Component, Protocol):
    """Answers a question about a case from a view (``bench.answering.evidence_reader``: offline; ``bench.answering.agent``: a model)."""

    name: str

    def answer(self, case: Any, view: Any, question: Any) -> Any: ...


class Judge(Component, Protocol):
    """Grades an answer against the question's reference: ``correct | wrong | abstained | unscored``."""

    name: str

    def score(self, question: Any, answer: Any, repo_root: str | None = None) -> Any: ...


class AnswererOptions(Protocol):
    """What an answerer may add; each is read only when it has it."""

    warm_prefix: bool  # send a view's first question alone, so the others read its prefix from the cache
    calls_model: bool  # it calls a model although it lists no client (the start line, the stack check)


# The parts a job config names by ``_target_`` and checks here: group -> (kind, protocol, its optional members)
KINDS: dict[str, tuple[str, type, type | None]] = {"model": ("answerer", Answerer, AnswererOptions),
                                                   "judge": ("judge", Judge, None)}


def check_part(part: Any, group: str, label: str | None = None) -> Any:
    """``part`` (built from the config group ``model`` or ``judge``) when it has its protocol's members;
    else ContractError, one line: ``judge 'mine': missing clients``."""
    kind, protocol, optional = KINDS[group]
    return check(part, protocol, kind, label,
                 rules=(lambda p: problems(p, optional, optional=True)) if optional is not None else None)


def clients_of(*components: Any) -> list[Any]:
    """The model clients of the components, each once, in order (a component without ``clients()``
    has none)."""
    found: dict[int, Any] = {}
    for component in components:
        listed = getattr(component, "clients", None)
        for client in (listed() if callable(listed) else []):
            found.setdefault(id(client), client)
    return list(found.values())


def calls_model(component: Any) -> bool:
    """Whether the component calls a model: it lists a client; one of one's own that lists none
    says so with ``calls_model`` (unknown: it does, the safe side for concurrency)."""
    listed = getattr(component, "clients", None)
    if callable(listed):
        return bool(listed())
    return bool(getattr(component, "calls_model", True))


def preflight(*components: Any) -> None:
    """Fail fast: every model client of the components checks its key and endpoint, each endpoint once."""
    seen: set = set()
    for client in clients_of(*components):
        client.preflight(seen)
