"""The ``mask`` arm: observation masking, the "simple masking" baseline of the agent
context-management literature (keep every call, hide old tool results).

Tool results older than the ``window`` latest turns are replaced by a short placeholder;
assistant messages, their calls and every user message stay, so the view is always valid
and the agent still sees what it did, only not what it saw. A turn is one assistant step
(a message with its calls' results); the default window, M = 10, is the literature's.

With ``budget`` (:mod:`bench.policies.budget`), the window is chosen per case: the largest
window whose view fits the case's target. Masking alone has a floor (every call, user and
assistant message stays): when even ``window=0`` is over the target, the oldest whole steps
of the masked view are dropped until it fits (``translation.steps_dropped``), as a masking
agent's history guard would. Results that are kept are the case's own message objects.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from langchain_core.messages import BaseMessage, ToolMessage

from bench.core.errors import ConfigError
from bench.core.typecheck import check_types
from bench.extract.history import calls_of
from bench.policies.budget import Budget, drop_oldest_steps
from bench.policies.policy import PolicyContext, make_view, steps
from bench.store.schema import Case, View

__all__ = ["ObservationMask", "MASK_PLACEHOLDER"]

MASK_PLACEHOLDER = "[old tool output omitted]"


@dataclass
class ObservationMask:
    name: str = "mask"
    window: int = 10  # latest assistant turns whose tool results stay verbatim
    placeholder: str = MASK_PLACEHOLDER
    budget: float | int | None = None  # share of each case's history tokens, or tokens (None: the window)
    calls_model: ClassVar[bool] = False
    uses: ClassVar[frozenset[str]] = frozenset()
    order: ClassVar[int] = 20
    context: PolicyContext = field(default_factory=PolicyContext, repr=False)

    def __post_init__(self) -> None:
        check_types(self, "arm")
        if self.window < 0:
            raise ConfigError(f"arm.window must be >= 0, got {self.window}")
        self.limit = Budget.parse(self.budget)

    @property
    def uses_tokenizer(self) -> bool:
        """Its views depend on the token counter only through a budget."""
        return self.limit is not None

    def _masked(self, case: Case, turns: list[tuple[int, int]], window: int) -> tuple[list[BaseMessage], int]:
        """The history with the results of all but the ``window`` latest turns masked, and how many."""
        messages = list(case.messages)
        old = turns[: max(0, len(turns) - window)]
        masked = 0
        for begin, end in old:
            for index in range(begin + 1, end):
                result = messages[index]
                if isinstance(result, ToolMessage):
                    messages[index] = result.model_copy(update={"content": self.placeholder})
                    masked += 1
        return messages, masked

    def __call__(self, case: Case) -> View:
        turns = [(b, e) for b, e in steps(case.messages)
                 if calls_of(case.messages[b])]
        if self.limit is not None:
            return self._within_budget(case, turns)
        messages, masked = self._masked(case, turns, self.window)
        old = turns[: max(0, len(turns) - self.window)]
        info: dict[str, Any] = {"window": self.window, "turns": len(turns), "results_masked": masked,
                                "first_unmasked_turn": old[-1][1] if old else 0}
        return make_view(case, self.name, messages, self.context.counter, info=info)

    def _within_budget(self, case: Case, turns: list[tuple[int, int]]) -> View:
        """The largest window whose view fits the target (a binary search: a wider window keeps
        more); at window 0 still over, the oldest whole steps dropped."""
        assert self.limit is not None
        counter = self.context.counter
        target = self.limit.target(counter.count_messages(case.messages))
        low, high = 0, len(turns)  # the answer is in [low, high]; window 0 may not fit either
        while low < high:
            middle = (low + high + 1) // 2
            if counter.count_messages(self._masked(case, turns, middle)[0]) <= target:
                low = middle
            else:
                high = middle - 1
        messages, masked = self._masked(case, turns, low)
        kept, dropped = drop_oldest_steps(messages, counter, target)
        old = turns[: max(0, len(turns) - low)]
        info: dict[str, Any] = {"window": low, "turns": len(turns), "results_masked": masked,
                                "first_unmasked_turn": old[-1][1] if old else 0, "steps_dropped": dropped}
        view = make_view(case, self.name, kept, counter, info=info)
        return self.limit.record(view, target, {"window": low, "steps_dropped": dropped})
