"""The ``full`` arm: the whole recorded history (the reference condition)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from bench.policies.policy import PolicyContext, make_view
from bench.store.schema import Case, View

__all__ = ["FullHistory"]


@dataclass
class FullHistory:
    name: str = "full"
    calls_model: ClassVar[bool] = False  # pure CPU: the runner builds these views one at a time
    uses: ClassVar[frozenset[str]] = frozenset()  # nothing but the token counter
    role: ClassVar[str] = "reference"  # every other arm is scored against it (relative to full)
    order: ClassVar[int] = 0
    uses_tokenizer: ClassVar[bool] = False
    context: PolicyContext = field(default_factory=PolicyContext, repr=False)

    def __call__(self, case: Case) -> View:
        return make_view(case, self.name, list(case.messages), self.context.counter)
