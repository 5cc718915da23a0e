"""The ``mask`` arm: observation masking, the "simple masking" baseline of the agent
context-management literature (keep every call, hide old tool results).

Tool results older than the ``window`` latest turns are replaced by a short placeholder;
assistant messages, their calls and every user message stay, so the view is always valid
and the agent still sees what it did, only not what it saw. A turn is one assistant step
(a message with its calls' results); the default window, M = 10, is the literature's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from langchain_core.messages import AIMessage, ToolMessage

from bench.errors import ConfigError
from bench.policies.base import PolicyContext, make_view, steps
from bench.schema import Case, View
from bench.typecheck import check_types

__all__ = ["ObservationMask", "MASK_PLACEHOLDER"]

MASK_PLACEHOLDER = "[old tool output omitted]"


@dataclass
class ObservationMask:
    name: str = "mask"
    window: int = 10  # latest assistant turns whose tool results stay verbatim
    placeholder: str = MASK_PLACEHOLDER
    calls_model: ClassVar[bool] = False
    uses: ClassVar[frozenset[str]] = frozenset()
    order: ClassVar[int] = 20
    uses_tokenizer: ClassVar[bool] = False
    context: PolicyContext = field(default_factory=PolicyContext, repr=False)

    def __post_init__(self) -> None:
        check_types(self, "arm")
        if self.window < 0:
            raise ConfigError(f"arm.window must be >= 0, got {self.window}")

    def __call__(self, case: Case) -> View:
        messages = list(case.messages)
        turns = [(b, e) for b, e in steps(messages) if isinstance(messages[b], AIMessage) and messages[b].tool_calls]
        old = turns[: max(0, len(turns) - self.window)]
        masked = 0
        for begin, end in old:
            for index in range(begin + 1, end):
                result = messages[index]
                if isinstance(result, ToolMessage):
                    messages[index] = result.model_copy(update={"content": self.placeholder})
                    masked += 1
        info: dict[str, Any] = {"window": self.window, "turns": len(turns), "results_masked": masked,
                                "first_unmasked_turn": old[-1][1] if old else 0}
        return make_view(case, self.name, messages, self.context.counter, info=info)
