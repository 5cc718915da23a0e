"""The ``none`` arm: no history at all, only the system prompt, the tools and the question.

The guessing baseline: what a model gets right without seeing anything of the run (template
replies, values readable in the question, priors). The report shows every arm's accuracy
above it beside its accuracy relative to full.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from bench.policies.policy import PolicyContext, make_view
from bench.store.schema import Case, View

__all__ = ["NoHistory"]


@dataclass
class NoHistory:
    name: str = "none"
    calls_model: ClassVar[bool] = False
    uses: ClassVar[frozenset[str]] = frozenset()
    role: ClassVar[str] = "baseline"  # accuracy "above none" is measured against this arm
    order: ClassVar[int] = 5  # reports: right after the reference
    uses_tokenizer: ClassVar[bool] = False
    context: PolicyContext = field(default_factory=PolicyContext, repr=False)

    def __call__(self, case: Case) -> View:
        return make_view(case, self.name, [], self.context.counter)
