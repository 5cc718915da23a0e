"""The ``full`` arm: the whole recorded history (the reference condition)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from bench.policies.base import make_view
from bench.schema import Case, View
from bench.tokens import TokenCounter

__all__ = ["FullHistory"]


@dataclass
class FullHistory:
    name: str = "full"
    calls_model: ClassVar[bool] = False  # pure CPU: the runner builds these views one at a time
    counter: TokenCounter = field(default_factory=TokenCounter, repr=False)

    def __call__(self, case: Case) -> View:
        return make_view(case, self.name, list(case.messages), self.counter)
