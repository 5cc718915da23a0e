"""One budget for every shrinking arm (``arm.budget``): what a view may keep, and what it kept.

``arm.budget`` is either a **share** of each case's history tokens (a number in (0, 1]: ``0.25``
keeps at most a quarter of the case's history) or an absolute **token count** (an integer
above 1: ``4000``). Each shrinking arm translates it, per case, into its own parameters (its
module says how) so that the view lands within the target; unset, every arm keeps its own
settings exactly as before.

    budget = Budget.parse(0.25)                  # None when unset; ConfigError when invalid
    target = budget.target(full_tokens)          # the case's target in tokens
    view = budget.record(view, target, {"max_tokens": target})   # target and realized in views.jsonl

Every budgeted view records ``budget``: the value, the target tokens, the realized kept tokens,
their ratio, whether it is more than :data:`OVER_TOLERANCE` over its target, and the
arm's translation (the parameters the budget became for that case).

The summarizing arms share two constants: a summary may take at most :data:`SUMMARY_SHARE`
of the target, and the trigger-driven ones (``lc_summary``, ``condenser``) keep
:data:`KEEP_SHARE` of it verbatim after a summary, so that whenever they fire the view is
back between ``KEEP_SHARE`` and 1 of the target, never over it (a narrower sawtooth means
more summaries; a wider one, views far below their budget).
"""

from __future__ import annotations

import inspect
import math
from dataclasses import dataclass, replace
from typing import Any, Protocol, cast

from langchain_core.messages import BaseMessage

from bench.core.errors import ConfigError
from bench.extract.history import steps
from bench.policies.summarize import Summarizer
from bench.profiles import Profile
from bench.store.schema import View
from bench.text.tokens import TokenCounter

__all__ = ["Budget", "OVER_TOLERANCE", "SUMMARY_SHARE", "KEEP_SHARE", "SIZE_NOTE", "drop_oldest_steps",
           "summarize_within"]

OVER_TOLERANCE = 0.2  # a view more than 20% over its target is flagged (views.jsonl, metrics, report)
SUMMARY_SHARE = 0.2  # the most of a view's target a summary may take
KEEP_SHARE = 1 - SUMMARY_SHARE  # what a trigger-driven summarizing arm keeps verbatim after a summary, of its target


@dataclass(frozen=True)
class Budget:
    """``arm.budget``: a share of the case's history tokens, or a number of tokens."""

    value: float | int

    @classmethod
    def parse(cls, value: Any, key: str = "arm.budget") -> Budget | None:
        """The budget of a config value (None: unset); a value that is neither a share in (0, 1]
        nor a whole number of tokens above 1 fails in one line."""
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ConfigError(f"{key}: expected a share of the history's tokens in (0, 1] or a number of tokens "
                              f"(an integer > 1), got {value!r}")
        if value <= 0:
            raise ConfigError(f"{key} must be > 0 (a share in (0, 1] or a number of tokens), got {value!r}")
        if value > 1 and not float(value).is_integer():
            raise ConfigError(f"{key}={value!r}: above 1 a budget is a number of tokens (an integer); "
                              "a share is in (0, 1]")
        return cls(float(value) if value <= 1 else int(value))

    @property
    def kind(self) -> str:
        """``share`` (of each case's history tokens) or ``tokens``."""
        return "share" if self.value <= 1 else "tokens"

    def target(self, full_tokens: int) -> int:
        """The case's target in tokens: the share of its history's tokens (at least 1), or the count."""
        if self.kind == "tokens":
            return int(self.value)
        return max(1, math.floor(self.value * full_tokens))

    def record(self, view: View, target: int, translation: dict[str, Any]) -> View:
        """``view`` with its budget record: target, realized, ratio, flag, and the arm's translation."""
        ratio = view.kept_tokens / target if target else None
        return replace(view, budget={
            "value": self.value, "kind": self.kind, "target_tokens": target, "realized_tokens": view.kept_tokens,
            "realized_over_target": round(ratio, 4) if ratio is not None else None,
            "over": ratio is not None and ratio > 1 + OVER_TOLERANCE,
            "translation": translation,
        })


def drop_oldest_steps(messages: list[BaseMessage], counter: TokenCounter, target: int) -> tuple[list[BaseMessage], int]:
    """The latest whole steps (an assistant message with its results, or one other message) whose
    tokens fit ``target``, and how many steps were dropped. The kept list is a slice: the
    message objects are the given ones."""
    spans = steps(messages)
    sizes = [counter.count_messages(messages[b:e]) for b, e in spans]
    tokens, dropped = sum(sizes), 0
    while dropped < len(spans) and tokens > target:
        tokens -= sizes[dropped]
        dropped += 1
    first = spans[dropped][0] if dropped < len(spans) else len(messages)
    return messages[first:], dropped


# What a summarizer that cannot be given a size (a model's, a user's own) reads at the end of its
# prompt when an arm's budget bounds the summary: the reply is cut at the bound all the same.
SIZE_NOTE = "Keep the summary within {tokens} tokens."


class _SizedSummarize(Protocol):
    """A summarizer's ``summarize`` that takes the bound itself (the extractive one's)."""

    def __call__(self, messages: list[BaseMessage], prompt: str, profile: Profile, *,
                 within_tokens: int) -> tuple[str, dict[str, Any]]: ...


def summarize_within(summarizer: Summarizer, messages: list[BaseMessage], prompt: str, profile: Profile,
                     within_tokens: int | None, counter: TokenCounter) -> tuple[str, dict[str, Any]]:
    """A summary of at most ``within_tokens`` tokens (an arm's budget, :mod:`bench.policies.budget`).

    None: the summarizer's own call, exactly as without a budget. Otherwise a summarizer whose
    ``summarize`` takes ``within_tokens`` (the extractive one) is given it; any other reads
    :data:`SIZE_NOTE` after its prompt. A summary still longer is cut at the bound
    (``usage["cut_to_tokens"]``), so a budgeted view never exceeds its target through its summary.
    """
    if within_tokens is None:
        return summarizer.summarize(messages, prompt, profile)
    if "within_tokens" in inspect.signature(summarizer.summarize).parameters:  # checked: it takes the bound
        text, usage = cast(_SizedSummarize, summarizer.summarize)(messages, prompt, profile, within_tokens=within_tokens)
    else:
        text, usage = summarizer.summarize(messages, f"{prompt.rstrip()}\n\n{SIZE_NOTE.format(tokens=within_tokens)}",
                                           profile)
    usage = {**(usage or {}), "within_tokens": within_tokens}
    if counter.count_text(text) > within_tokens:
        text = counter.cut_text(text, within_tokens)
        usage["cut_to_tokens"] = within_tokens
    return text, usage
