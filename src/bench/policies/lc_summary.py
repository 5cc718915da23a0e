"""The ``lc_summary`` arm: LangChain's ``SummarizationMiddleware``, as a LangChain agent
(``create_agent(..., middleware=[SummarizationMiddleware(...)])``) would shrink its history.

The library itself decides: its ``trigger`` (when to summarise), ``keep`` (what stays
verbatim, cut where a tool exchange stays whole) and ``trim_tokens_to_summarize`` (how much of
the older history the summarizer reads). The middleware is driven through its public hook,
``before_model(state, runtime)``, once before every recorded model call of the trajectory
and once more before the question, so it fires as often as it would have while the agent
ran; a later summary reads the previous one (it is the first message of the history it
summarises), exactly as LangChain's agent lives it.

The configured summarizer (``summarizer`` group: offline extractive, or a model) writes the
summaries, passed as the middleware's ``summarizer`` function, so caching, rate limits and
usage accounting are the project's. It receives the messages to summarise and the
instruction part of ``summary_prompt`` (LangChain's default unless set): the text before its
``<messages>`` block, which LangChain documents as part of the prompt's public contract.

Token counts use the project's counter, so ``("tokens", 4000)`` means the same as every other
arm's budget. The defaults are LangChain's documented example: ``trigger=("tokens", 4000)``,
``keep=("messages", 20)``.

With ``budget`` (:mod:`bench.policies.budget`), per case with target T tokens: ``trigger`` becomes
``("tokens", T)`` (the middleware summarises before any call whose history reached T), ``keep``
``("tokens", KEEP_SHARE x T)``, and each summary is capped at ``SUMMARY_SHARE x T`` (the
summarizer is given the cap and its reply is cut there); ``trim_tokens_to_summarize`` stays
as configured. So a view is never over T, and right after a summary it holds about
``KEEP_SHARE + SUMMARY_SHARE`` of it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, cast

from langchain.agents.middleware import SummarizationMiddleware
from langchain.agents.middleware.summarization import DEFAULT_SUMMARY_PROMPT
from langchain_core.language_models import ModelProfile
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, RemoveMessage, convert_to_messages
from langgraph.runtime import Runtime

from bench.core.errors import ConfigError
from bench.core.typecheck import check_types
from bench.policies.budget import KEEP_SHARE, SUMMARY_SHARE, Budget, summarize_within
from bench.policies.policy import PolicyContext, SummarizingArm, make_view
from bench.policies.summarize import ExtractiveSummarizer, Summarizer
from bench.store.schema import Case, View
from bench.text.content import content_text

__all__ = ["LangChainSummarization", "DEFAULT_SUMMARY_PROMPT", "summary_instruction"]

_MESSAGES_MARKER = "<messages>"


def summary_instruction(prompt: str) -> str:
    """The instruction of a SummarizationMiddleware prompt: its text before the messages block.

    LangChain's prompt ends with ``<messages>...{messages}</messages>``; the project's
    summarizers receive the messages themselves, so only the instruction is passed on.
    """
    for marker in (_MESSAGES_MARKER, "{messages}"):
        if marker in prompt:
            return prompt.split(marker, 1)[0].rstrip()
    return prompt.rstrip()


def _context_size(value: Any, key: str) -> tuple[str, float]:
    """``[kind, value]`` from the config as the ``(kind, value)`` tuple LangChain takes."""
    items = None if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__") else list(value)
    if items is None or len(items) != 2 or not isinstance(items[0], str):
        raise ConfigError(f"arm.{key}: expected [kind, value] with kind tokens, messages or fraction, got {value!r}")
    return (items[0], items[1])


@dataclass
class LangChainSummarization(SummarizingArm):
    name: str = "lc_summary"
    trigger: Any = ("tokens", 4000)  # [kind, value] (tokens|messages|fraction) or a list of them: any fires
    keep: Any = ("messages", 20)  # [kind, value]: what stays verbatim after a summary
    trim_tokens_to_summarize: int | None = 4000  # LangChain's cap on the tokens the summarizer reads
    summary_prompt: str | None = None  # None: LangChain's DEFAULT_SUMMARY_PROMPT
    context_window: int | None = None  # the model's max input tokens (fraction trigger/keep need it)
    budget: float | int | None = None  # share of each case's history tokens, or tokens (None: trigger and keep)
    context: PolicyContext = field(default_factory=PolicyContext, repr=False)  # summarizer, counter
    uses: ClassVar[frozenset[str]] = frozenset({"summarizer"})
    order: ClassVar[int] = 35

    def __post_init__(self) -> None:
        check_types(self, "arm")
        if self.trigger is None or isinstance(self.trigger, str) or not hasattr(self.trigger, "__iter__"):
            raise ConfigError(f"arm.trigger: expected [kind, value] or a list of them, got {self.trigger!r}")
        nested = bool(list(self.trigger)) and not isinstance(list(self.trigger)[0], str)
        self.trigger = [_context_size(t, "trigger") for t in self.trigger] if nested else _context_size(
            self.trigger, "trigger")
        self.keep = _context_size(self.keep, "keep")
        if self.trim_tokens_to_summarize is not None and self.trim_tokens_to_summarize <= 0:
            raise ConfigError(f"arm.trim_tokens_to_summarize must be > 0 or null, got {self.trim_tokens_to_summarize}")
        if self.context_window is not None and self.context_window <= 0:
            raise ConfigError(f"arm.context_window must be > 0 or null, got {self.context_window}")
        sizes = {"trigger": self.trigger if isinstance(self.trigger, list) else [self.trigger], "keep": [self.keep]}
        fraction = next((key for key, items in sizes.items() if any(kind == "fraction" for kind, _ in items)), None)
        if fraction and self.context_window is None:  # LangChain would ask for a model profile, not this key
            raise ConfigError(f"arm.{fraction}: a fraction of the context needs its size: set arm.context_window "
                              "to the model's max input tokens (e.g. arm.context_window=128000)")
        self.prompt_text = self.summary_prompt or DEFAULT_SUMMARY_PROMPT
        self.summarizer: Summarizer = self.context.summarizer or ExtractiveSummarizer()
        self.limit = Budget.parse(self.budget)
        self._middleware(lambda messages: "")  # LangChain checks trigger and keep here: fail at build time

    def _sizes(self, target: int | None) -> tuple[Any, Any, int | None]:
        """(trigger, keep, summary cap) for a case: the configured ones, or its target's."""
        if target is None:
            return self.trigger, self.keep, None
        return ("tokens", target), ("tokens", max(1, int(KEEP_SHARE * target))), max(1, int(SUMMARY_SHARE * target))

    def _middleware(self, summarize: Callable[[list[AnyMessage]], str], target: int | None = None) -> SummarizationMiddleware:
        # ``model`` is only read for its profile (fraction limits) and never called: the
        # summarizer function replaces the summary call and the project's counter counts.
        profile = ModelProfile(max_input_tokens=self.context_window) if self.context_window else None
        managed = GenericFakeChatModel(messages=iter(()), profile=profile)
        trigger, keep, _ = self._sizes(target)
        counter = self.context.counter
        try:
            return SummarizationMiddleware(  # its counter is typed for any message-like input: converted
                managed, trigger=trigger, keep=keep, token_counter=lambda m: counter.count_messages(convert_to_messages(m)),
                summary_prompt=self.prompt_text, trim_tokens_to_summarize=self.trim_tokens_to_summarize,
                summarizer=summarize)
        except ValueError as error:
            raise ConfigError(f"arm (lc_summary): {' '.join(str(error).split())}") from None

    def __call__(self, case: Case) -> View:
        usage: list[dict[str, Any]] = []
        originals: dict[str, BaseMessage] = {}
        instruction = summary_instruction(self.prompt_text)
        target = self.limit.target(self.context.counter.count_messages(case.messages)) if self.limit else None
        trigger, keep, cap = self._sizes(target)

        def restore(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
            """The case's own message objects back, and no ids on the summaries."""
            return [originals.get(m.id or "") or m.model_copy(update={"id": None}) for m in messages]

        def summarize(messages: list[AnyMessage]) -> str:
            text, used = summarize_within(self.summarizer, restore(messages), instruction, case.profile, cap,
                                          self.context.counter)
            usage.append(used)
            return text

        middleware = self._middleware(summarize, target)
        runtime: Runtime = Runtime()
        view: list[BaseMessage] = []
        summarizations: list[dict[str, Any]] = []
        summary: BaseMessage | None = None

        def before_model(at_message: int) -> None:
            nonlocal view, summary
            if not view:
                return
            before = self.context.counter.count_messages(view)
            calls = len(usage)
            # the case's messages are of the concrete chat classes LangChain's AnyMessage names
            update = middleware.before_model({"messages": cast(list[AnyMessage], view)}, runtime)
            if not update:
                return
            new = list(update["messages"])
            if not (new and isinstance(new[0], RemoveMessage)):
                raise ValueError(f"lc_summary: unexpected middleware update for {case.case_id}")
            summarized = len(view) - (len(new) - 2)  # new: remove-all, the summary, what is kept
            view = new[1:]
            summary = view[0]
            summarizations.append({"at_message": at_message, "tokens_before": before,
                                   "tokens_after": self.context.counter.count_messages(view),
                                   "summarized": summarized, # None: LangChain wrote its own stand-in ("too long to summarize") without a call
                                   "summarizer_call": calls if len(usage) > calls else None})

        for index, message in enumerate(case.messages):
            if isinstance(message, AIMessage):
                before_model(index)
            # The middleware needs ids (it would write uuids into messages without one): a copy
            # carries the case message's own id, and the view is mapped back to the case's messages.
            own_id = message.id or f"case-{index}"
            view.append(message.model_copy(update={"id": own_id}))
            originals[own_id] = message
        before_model(len(case.messages))  # the question is one more model call
        messages = restore(view)
        info = {"trigger": trigger, "keep": keep, "summarizations": summarizations, "summarizer_usage": usage}
        built = make_view(case, self.name, messages, self.context.counter, info=info,
                          summarizer_calls=len(usage), summary=content_text(summary) if summary is not None else None)
        if self.limit is None or target is None:
            return built
        return self.limit.record(built, target, {"trigger": list(trigger), "keep": list(keep), "summary_max_tokens": cap})
