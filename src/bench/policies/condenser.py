"""The ``condenser`` arm: an LLM summarizing condenser as OpenHands ships it
(``LLMSummarizingCondenser``), written from its documented behaviour.

The agent's view grows one step at a time. Whenever it holds more than ``max_size`` events
(messages here), the condenser keeps the first ``keep_first`` events and the latest ones,
so that the new view holds about ``max_size // 2`` events, and replaces the events between
them (with the previous summary, if any) by one summary written by the summarizer. Later
condensations summarise the previous summary plus what was forgotten since, as the agent
would have lived it. Boundaries move to whole steps, so a tool exchange is never split.
Defaults are OpenHands' (``max_size`` 100, ``keep_first`` 1).

With ``budget`` (:mod:`bench.policies.budget`) the condenser's size is counted in tokens, per
case with target T: it condenses whenever the view holds more than T tokens (``max_size``),
keeps the first ``keep_first`` events and the latest whole steps within ``KEEP_SHARE x T``,
and caps the summary at ``SUMMARY_SHARE x T`` (the summarizer is given the cap; its reply is cut
there). OpenHands halves the view by events; a budget keeps it near its target instead, so the
view at the question is between about ``KEEP_SHARE`` of T and T.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from langchain_core.messages import BaseMessage, HumanMessage

from bench.core.errors import ConfigError
from bench.core.typecheck import check_types
from bench.policies.budget import KEEP_SHARE, SUMMARY_SHARE, Budget, summarize_within
from bench.policies.policy import PolicyContext, SummarizingArm, clean_start, make_view, steps
from bench.policies.summarize import ExtractiveSummarizer, Summarizer
from bench.store.schema import Case, View

__all__ = ["SummarizingCondenser", "CONDENSER_PROMPT"]

# The condenser's own instruction (OpenHands keeps its prompt beside the condenser, not in
# the agent's prompt group): a state summary the agent can continue from.
CONDENSER_PROMPT = """You are maintaining a context-aware state summary for an interactive agent. You will be given
the previous summary (if any) and a list of events the agent can no longer see. Write the
new summary so the agent can continue its task without them. Keep every identifier, path,
value, error message and result that may matter later, verbatim.

1. User requests: what the user asked for, including later requests and stated facts
2. Files touched: files read, created or changed, with what changed
3. Commands run: commands and tool calls with their key results
4. Errors: errors and failures seen, with their messages
5. Current work: what was being done and what is left
"""


@dataclass
class SummarizingCondenser(SummarizingArm):
    name: str = "condenser"
    max_size: int = 100  # condense when the view holds more events than this
    keep_first: int = 1  # events at the start that always stay (the task)
    budget: float | int | None = None  # share of each case's history tokens, or tokens (None: max_size events)
    context: PolicyContext = field(default_factory=PolicyContext, repr=False)  # summarizer
    uses: ClassVar[frozenset[str]] = frozenset({"summarizer"})
    order: ClassVar[int] = 40

    def __post_init__(self) -> None:
        check_types(self, "arm")
        if self.max_size < 4:
            raise ConfigError(f"arm.max_size must be >= 4, got {self.max_size}")
        if not 0 <= self.keep_first < self.max_size // 2:
            raise ConfigError(f"arm.keep_first must be in [0, max_size // 2), got {self.keep_first}")
        self.summarizer: Summarizer = self.context.summarizer or ExtractiveSummarizer()
        self.limit = Budget.parse(self.budget)

    def __call__(self, case: Case) -> View:
        if self.limit is not None:
            return self._within_budget(case)
        view: list[BaseMessage] = []
        summary: BaseMessage | None = None  # the summary event inside ``view``, if any
        usage: list[dict[str, Any]] = []
        condensations: list[dict[str, Any]] = []
        for begin, end in steps(case.messages):
            view.extend(case.messages[begin:end])
            if len(view) <= self.max_size:
                continue
            head_end = self._head_end(view, summary)
            target = self.max_size // 2
            tail_start = clean_start(view, max(head_end, len(view) - max(1, target - head_end - 1)))
            forgotten = [m for m in view[head_end:tail_start] if m is not summary]
            if not forgotten:
                continue
            previous = [summary] if summary is not None else []
            text, used = summarize_within(self.summarizer, previous + forgotten, CONDENSER_PROMPT, case.profile, None,
                                          self.context.counter)
            usage.append(used)
            summary = HumanMessage(content=f"[Summary of earlier events]\n{text}")
            condensations.append({"at_message": end, "events_before": len(view),
                                  "forgotten": len(forgotten), "events_after": head_end + 1 + len(view) - tail_start})
            view = view[:head_end] + [summary] + view[tail_start:]
        info = {"max_size": self.max_size, "keep_first": self.keep_first, "condensations": condensations,
                "summarizer_usage": usage}
        return make_view(case, self.name, view, self.context.counter, info=info, summarizer_calls=len(usage),
                         summary=summary.content if summary is not None else None)

    def _within_budget(self, case: Case) -> View:
        """The condenser counted in tokens: condense over the target, keep the latest steps within
        ``KEEP_SHARE`` of it after the head and the summary."""
        assert self.limit is not None
        counter = self.context.counter
        target = self.limit.target(counter.count_messages(case.messages))
        keep, cap = max(1, int(KEEP_SHARE * target)), max(1, int(SUMMARY_SHARE * target))
        view: list[BaseMessage] = []
        summary: BaseMessage | None = None
        usage: list[dict[str, Any]] = []
        condensations: list[dict[str, Any]] = []
        for begin, end in steps(case.messages):
            view.extend(case.messages[begin:end])
            tokens = counter.count_messages(view)
            if tokens <= target:
                continue
            head_end = self._head_end(view, summary)
            room = keep - counter.count_messages([m for m in view[:head_end]])
            tail_start = len(view)
            for step_begin, _ in reversed(steps(view, head_end)):  # the latest whole steps within the room
                if view[step_begin] is summary or counter.count_messages(view[step_begin:]) > room:
                    break
                tail_start = step_begin
            tail_start = clean_start(view, tail_start)
            forgotten = [m for m in view[head_end:tail_start] if m is not summary]
            if not forgotten:
                continue
            previous = [summary] if summary is not None else []
            text, used = summarize_within(self.summarizer, previous + forgotten, CONDENSER_PROMPT, case.profile, cap,
                                          counter)
            usage.append(used)
            summary = HumanMessage(content=f"[Summary of earlier events]\n{text}")
            condensations.append({"at_message": end, "tokens_before": tokens, "forgotten": len(forgotten),
                                  "events_after": head_end + 1 + len(view) - tail_start})
            view = view[:head_end] + [summary] + view[tail_start:]
        info = {"max_tokens": target, "keep_tokens": keep, "keep_first": self.keep_first,
                "condensations": condensations, "summarizer_usage": usage}
        result = make_view(case, self.name, view, counter, info=info, summarizer_calls=len(usage),
                           summary=summary.content if summary is not None else None)
        return self.limit.record(result, target, {"max_tokens": target, "keep_tokens": keep,
                                                  "summary_max_tokens": cap})

    def _head_end(self, view: list[BaseMessage], summary: BaseMessage | None) -> int:
        """End of the kept head: ``keep_first`` events, extended to a whole step, before any summary."""
        end = 0
        for begin, stop in steps(view):
            if end >= self.keep_first or view[begin] is summary:
                break
            end = stop
        return end
