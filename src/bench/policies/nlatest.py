"""The ``nlatest`` arm (spec 2.2): keep the N latest history messages, nothing else.

No summary, no retrieval. The cut moves toward newer messages until no tool exchange is
split, so a view can hold fewer than N messages. Two optional token bounds drop the
oldest whole steps (an assistant call with all its results, or a single message):

- ``max_tokens``: a fixed guard;
- ``match=<arm>``: per case, the tokens that other arm kept for the same case, so two
  arms are compared at equal input size (``build_policy`` builds that arm in-process);
- ``budget`` (:mod:`bench.policies.budget`): per case, the budget's target (a share of the
  case's history tokens, or a token count): the latest whole steps within the target. With
  ``n``, ``max_tokens`` or ``match`` as well, the smallest bound wins.

Run::

    uv run python -m bench.main -m arm=nlatest arm.n=10,20,40
    uv run python -m bench.main arm=nlatest arm.match=compact mechanism=tail
    uv run python -m bench.main arm=nlatest arm.n=null arm.budget=0.25

``view.info`` records the first kept index, how far the boundary moved, the steps the
token bounds dropped, and per question whether its evidence messages are all in the
kept suffix (``in_kept_suffix``), which explains failures caused by position alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from bench.core.components import ModelClient, calls_model, clients_of
from bench.core.errors import ConfigError
from bench.core.typecheck import check_types
from bench.policies.budget import Budget
from bench.policies.policy import Policy, PolicyContext, clean_start, make_view, steps
from bench.store.schema import Case, View
from bench.text.tokens import TokenCounter

__all__ = ["NLatest", "latest_suffix"]


def latest_suffix(
    case: Case, counter: TokenCounter, n: int | None, budget: int | None
) -> tuple[int, dict[str, Any]]:
    """Index of the first kept message, and the accounting of how it was chosen.

    ``n`` bounds the message count (None: no bound); ``budget`` bounds the kept tokens
    (None: no bound) by dropping the oldest whole steps.
    """
    messages = case.messages
    wanted = 0 if n is None else max(0, len(messages) - n)
    start = clean_start(messages, wanted)
    spans = steps(messages, start)
    sizes = [counter.count_messages(messages[b:e]) for b, e in spans]
    tokens = sum(sizes)
    dropped = 0
    if budget is not None:
        while dropped < len(spans) and tokens > budget:
            tokens -= sizes[dropped]
            dropped += 1
    first = spans[dropped][0] if dropped < len(spans) else len(messages)
    return first, {
        "wanted_start": wanted,
        "boundary_moved": start - wanted,  # messages skipped to avoid splitting an exchange
        "steps_dropped_by_tokens": dropped,  # oldest whole steps dropped by the token bound
        "budget_tokens": budget,
    }


@dataclass
class NLatest:
    """``arm=nlatest``: the latest N messages, cut cleanly, optionally token-bounded."""

    name: str = "nlatest"
    n: int | None = None  # messages to keep (None only together with match)
    max_tokens: int | None = None  # token guard on the kept suffix (None: no guard)
    match: str | None = None  # arm whose per-case kept tokens bound this arm (e.g. compact)
    budget: float | int | None = None  # share of each case's history tokens, or tokens (None: no budget)
    context: PolicyContext = field(default_factory=PolicyContext, repr=False)  # budget_policy: the matched arm
    uses: ClassVar[frozenset[str]] = frozenset({"budget_policy"})
    order: ClassVar[int] = 10  # reports: right after the reference

    def __post_init__(self) -> None:
        self.counter = self.context.counter
        self.budget_policy: Policy | None = self.context.budget_policy
        check_types(self, "arm")  # arm.n=abc fails here, before any model call
        self.limit = Budget.parse(self.budget)
        if self.n is None and self.match is None and self.max_tokens is None and self.limit is None:
            raise ConfigError("arm=nlatest needs arm.n=N (or arm.match=ARM / arm.max_tokens=T / arm.budget=B)")
        if self.n is not None and self.n < 0:
            raise ConfigError(f"arm.n must be >= 0, got {self.n}")
        if self.match is not None and self.budget_policy is None:
            raise ConfigError(f"arm.match={self.match!r} needs the matched arm's policy in the context "
                              "(use build_policy)")

    def clients(self) -> list[ModelClient]:
        """The matched arm's (its summarizer's), if any."""
        return clients_of(self.budget_policy) if self.budget_policy is not None else []

    @property
    def calls_model(self) -> bool:
        """Building a view calls a model only through the matched arm (an LLM summary)."""
        return self.budget_policy is not None and calls_model(self.budget_policy)

    def __call__(self, case: Case) -> View:
        budget = self.max_tokens
        info: dict[str, Any] = {"n": self.n, "max_tokens": self.max_tokens}
        if self.budget_policy is not None:
            matched = self.budget_policy(case)
            budget = matched.kept_tokens if budget is None else min(budget, matched.kept_tokens)
            info["match"] = {
                "arm": self.match,
                "kept_tokens": matched.kept_tokens,
                "kept_messages": matched.kept_messages,
                "summarizer_calls": matched.summarizer_calls,  # spent to learn the budget
            }
        target = None
        if self.limit is not None:
            target = self.limit.target(self.counter.count_messages(case.messages))
            budget = target if budget is None else min(budget, target)
        first, accounting = latest_suffix(case, self.counter, self.n, budget)
        info.update(accounting)
        info["first_kept"] = first
        info["in_kept_suffix"] = {
            q.qid: all(i >= first for i in q.evidence_messages) for q in case.questions
        }
        view = make_view(case, self.name, list(case.messages[first:]), self.counter, info=info)
        if self.limit is None or target is None:
            return view
        return self.limit.record(view, target, {"max_tokens": budget, "steps_dropped": accounting[
            "steps_dropped_by_tokens"]})
