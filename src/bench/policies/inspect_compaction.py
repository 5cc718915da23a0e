"""The ``inspect`` arm: inspect_ai's compaction strategies (``CompactionEdit``, ``CompactionTrim``,
``CompactionSummary`` from ``inspect_ai.model``; ``arm.strategy=edit|trim|summary``), applied to the recorded
history through inspect_ai's public API, as an inspect agent lives them.

inspect_ai applies a strategy with the handler of ``inspect_ai.model.compaction(strategy, prefix, tools,
model)``: an agent calls its ``compact_input(messages)`` with its whole history before every model call,
sends the input it returns and appends the supplemental message (a summary) to its history. This arm
does exactly that over a case: the history (as inspect's ``ChatMessage`` types, with the case's system
prompt as the preserved prefix) is handed to ``compact_input`` before every recorded model call and once
more before the question, and the last input is the view (its system message left to the answering
agent, which sends the case's own). The threshold gate, the prefix rule, the up to three passes and the
strategies' edits are inspect's; this module copies none of them.

The strategies count tokens and summarize through the model the handler is given. That model is
inspect's public interface for a provider: a ``ModelAPI`` registered with ``@modelapi`` (``bench``) and
built by ``get_model("bench/...")``. Its ``count_tokens`` is the project's counter (so a threshold means
what every other arm's budget means) and its ``generate`` (called by ``CompactionSummary`` only) is the
configured summarizer: a model summarizer (``summarizer=openai|anthropic``) gets inspect's summarization
request as it is (system, input, conversation, then inspect's prompt); the offline extractive stand-in
(``summarizer=offline``, a lower bound) summarizes the same messages under inspect's prompt.

Defaults are inspect's: ``threshold=0.9`` of the context window (``context_window``, inspect's own fallback
128,000 when it knows no window), ``CompactionEdit(keep_tool_uses=3, keep_tool_inputs=True)``,
``CompactionTrim(preserve=0.8)``, ``CompactionSummary`` with its default prompt.

With ``budget`` (:mod:`bench.policies.budget`), per case with target T tokens: ``threshold`` is T plus the
system prompt's tokens (the handler counts its prefix, the case's system prompt, which a view and its budget
do not; tool definitions are not given to it, so it counts the messages as every other arm's budget does),
and a summary is capped at ``SUMMARY_SHARE x T`` (inspect's ``instructions`` ask for it and the reply is
cut there). When inspect's handler cannot bring the input under its threshold in three passes it raises
``Compaction insufficient`` (an inspect agent would stop there); the arm then keeps the input of that
last call, the messages since, and drops their oldest whole steps until the view fits
(``info.insufficient``: inspect's message; ``translation.steps_dropped``), as ``trim_messages`` after the
strategy would, so every case has a view at every budget.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from dataclasses import dataclass, field
from typing import Any, ClassVar

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from bench.core.components import ModelClient
from bench.core.errors import ConfigError
from bench.core.typecheck import check_types
from bench.policies.budget import SIZE_NOTE, SUMMARY_SHARE, Budget, drop_oldest_steps, summarize_within
from bench.policies.policy import PolicyContext, SummarizingArm, make_view
from bench.policies.summarize import ExtractiveSummarizer
from bench.store.schema import Case, View
from bench.text.content import content_text

try:
    from inspect_ai.model import (
        ChatMessage,
        ChatMessageAssistant,
        ChatMessageSystem,
        ChatMessageTool,
        ChatMessageUser,
        CompactionEdit,
        CompactionStrategy,
        CompactionSummary,
        CompactionTrim,
        GenerateConfig,
        ModelAPI,
        ModelOutput,
        compaction,
        get_model,
        modelapi,
    )
    from inspect_ai.tool import ToolCall
except ImportError as missing:  # the `inspect` extra (installed with the dev group)
    raise ConfigError("arm=inspect needs inspect_ai: uv sync --extra inspect (pip install 'bench[inspect]')") from missing

__all__ = ["InspectCompaction", "STRATEGIES", "to_inspect", "from_inspect"]

STRATEGIES = ("edit", "trim", "summary")
_PREFIX = "case-"  # ids of the inspect messages made from the case's own (case-<index>)


def to_inspect(message: BaseMessage, id_: str) -> ChatMessage:
    """A LangChain message as inspect's ``ChatMessage`` of the same role (text content, tool calls)."""
    text = content_text(message.content)
    if isinstance(message, SystemMessage):
        return ChatMessageSystem(content=text, id=id_)
    if isinstance(message, HumanMessage):
        return ChatMessageUser(content=text, id=id_)
    if isinstance(message, AIMessage):
        calls = [ToolCall(id=c.get("id") or "", function=c["name"], arguments=dict(c.get("args") or {}))
                 for c in message.tool_calls]
        return ChatMessageAssistant(content=text, id=id_, tool_calls=calls or None)
    if isinstance(message, ToolMessage):
        return ChatMessageTool(content=text, id=id_, tool_call_id=message.tool_call_id, function=message.name)
    raise ValueError(f"inspect: a {type(message).__name__} has no ChatMessage role")


def from_inspect(message: ChatMessage) -> BaseMessage:
    """An inspect ``ChatMessage`` as the LangChain message of the same role."""
    if isinstance(message, ChatMessageSystem):
        return SystemMessage(message.text)
    if isinstance(message, ChatMessageUser):
        return HumanMessage(message.text)
    if isinstance(message, ChatMessageAssistant):
        calls = [{"name": c.function, "args": dict(c.arguments or {}), "id": c.id} for c in message.tool_calls or []]
        return AIMessage(content=message.text, tool_calls=calls)
    if isinstance(message, ChatMessageTool):
        return ToolMessage(message.text, tool_call_id=message.tool_call_id or "", name=message.function)
    raise ValueError(f"inspect: a {type(message).__name__} has no LangChain message type")


@modelapi(name="bench")
class BenchModelAPI(ModelAPI):
    """inspect's interface to a provider, over this project's counter and summarizer (module docstring)."""

    def __init__(self, model_name: str, base_url: str | None = None, api_key: str | None = None,
                 config: GenerateConfig | None = None, *, counter: Any = None, summarizer: Any = None,
                 profile: Any = None, cap: int | None = None, usage: list[dict[str, Any]] | None = None) -> None:
        super().__init__(model_name=model_name, base_url=base_url, api_key=api_key, config=config or GenerateConfig())
        self.counter, self.summarizer, self.profile, self.cap = counter, summarizer, profile, cap
        self.usage = usage if usage is not None else []

    async def count_tokens(self, input: str | list[ChatMessage], config: GenerateConfig | None = None) -> int:
        if isinstance(input, str):
            return self.counter.count_text(input)
        return self.counter.count_messages([from_inspect(m) for m in input])

    async def count_text_tokens(self, text: str) -> int:
        return self.counter.count_text(text)

    async def generate(self, input: list[ChatMessage], tools: list[Any], tool_choice: Any,
                       config: GenerateConfig) -> ModelOutput:
        text = await asyncio.to_thread(self._summary, [from_inspect(m) for m in input])
        return ModelOutput.from_content(model=self.model_name, content=text)

    def _summary(self, messages: list[BaseMessage]) -> str:
        """The summary of inspect's request: its last message is inspect's summarization prompt."""
        client = getattr(self.summarizer, "client", None)
        if client is not None:  # a model: inspect's request as it is
            from bench.llm import current_callbacks, sum_usage

            reply, record = client.chat(messages, callbacks=current_callbacks())
            text, used = content_text(reply.content).strip(), sum_usage([record], model=client.model)
        else:  # the extractive stand-in (or a summarizer of one's own): the same messages, inspect's prompt
            *history, prompt = messages
            text, used = summarize_within(self.summarizer, [m for m in history if not isinstance(m, SystemMessage)],
                                          content_text(prompt.content), self.profile, self.cap, self.counter)
        if self.cap is not None and self.counter.count_text(text) > self.cap:
            text = self.counter.cut_text(text, self.cap)
            used = {**used, "cut_to_tokens": self.cap}
        self.usage.append(used)
        return text


class _Loop:
    """One asyncio loop on a daemon thread: inspect's coroutines of every view of the arm run there (its
    concurrency primitives belong to one loop; views are built from several threads)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None

    def run(self, coroutine: Any) -> Any:
        with self._lock:
            if self._loop is None:
                self._loop = asyncio.new_event_loop()
                threading.Thread(target=self._loop.run_forever, name="inspect-compaction", daemon=True).start()
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result()


_LOOP = _Loop()


@dataclass
class InspectCompaction(SummarizingArm):
    name: str = "inspect"
    strategy: str = "edit"  # edit (CompactionEdit) | trim (CompactionTrim) | summary (CompactionSummary)
    threshold: float | int = 0.9  # tokens, or a share of context_window, over which the strategy runs
    context_window: int = 128_000  # the model's context window a share threshold is of
    keep_tool_uses: int = 3  # edit: latest tool uses kept
    keep_tool_inputs: bool = True  # edit: keep the cleared results' calls (False: remove call and result)
    exclude_tools: Any = ()  # edit: tools whose uses are never cleared
    preserve: float = 0.8  # trim: share of the conversation's messages kept
    instructions: str | None = None  # summary: extra instructions in inspect's prompt
    prompt: str | None = None  # summary: a prompt replacing inspect's (its {addendums} placeholder kept)
    budget: float | int | None = None  # share of each case's history tokens, or tokens (None: threshold)
    context: PolicyContext = field(default_factory=PolicyContext, repr=False)  # summarizer, counter
    # per instance too (not a ClassVar; unannotated: not a dataclass field): edit and trim narrow it to none
    uses = frozenset({"summarizer"})
    order: ClassVar[int] = 36  # reports: beside the other libraries' policies

    def __post_init__(self) -> None:
        check_types(self, "arm")
        if self.strategy not in STRATEGIES:
            raise ConfigError(f"arm.strategy must be one of {', '.join(STRATEGIES)}, got {self.strategy!r}")
        if not self.threshold > 0 or (isinstance(self.threshold, float) and self.threshold > 1
                                      and not self.threshold.is_integer()):
            raise ConfigError(f"arm.threshold: a share of the context window in (0, 1] or a token count, "
                              f"got {self.threshold!r}")
        if self.context_window < 1 or self.keep_tool_uses < 0 or not 0 < self.preserve <= 1:
            raise ConfigError("arm.context_window >= 1, arm.keep_tool_uses >= 0 and arm.preserve in (0, 1] please")
        tools = [] if self.exclude_tools is None else self.exclude_tools
        if isinstance(tools, str) or not all(isinstance(t, str) for t in tools):
            raise ConfigError(f"arm.exclude_tools: expected a list of tool names, got {self.exclude_tools!r}")
        self.exclude_tools = tuple(tools)
        self.limit = Budget.parse(self.budget)
        self.summarizer = self.context.summarizer or ExtractiveSummarizer()
        if self.strategy != "summary":  # edit and trim call no summarizer: the arm neither summarizes nor calls
            self.uses = frozenset()
            self.summarizer = None

    @staticmethod
    def summarizes_with(arm: Any) -> bool:
        """Whether an arm config of this class writes summaries (``bench.config.arms.summarizes``)."""
        return arm.get("strategy", "edit") == "summary"

    def clients(self) -> list[ModelClient]:
        return super().clients() if self.summarizer is not None else []

    @property
    def calls_model(self) -> bool:
        return self.summarizer is not None and super().calls_model

    def _threshold(self, target: int | None, system_tokens: int) -> int:
        """The handler's threshold: the configured one, or the target plus the system prompt's tokens (the
        handler counts the prefix, the view and its budget do not)."""
        if target is not None:
            return target + system_tokens
        share = isinstance(self.threshold, float) and self.threshold <= 1
        return int(self.threshold * self.context_window) if share else int(self.threshold)

    def _strategy(self, threshold: int, cap: int | None, model: Any) -> CompactionStrategy:
        if self.strategy == "edit":
            return CompactionEdit(threshold=threshold, keep_tool_uses=self.keep_tool_uses,
                                  keep_tool_inputs=self.keep_tool_inputs, exclude_tools=list(self.exclude_tools) or None)
        if self.strategy == "trim":
            return CompactionTrim(threshold=threshold, preserve=self.preserve)
        instructions = [self.instructions] if self.instructions else []
        if cap is not None:
            instructions.append(SIZE_NOTE.format(tokens=cap))
        return CompactionSummary(threshold=threshold, model=model, instructions="\n\n".join(instructions) or None,
                                 prompt=self.prompt)

    def __call__(self, case: Case) -> View:
        counter = self.context.counter
        target = self.limit.target(counter.count_messages(case.messages)) if self.limit is not None else None
        system_tokens = counter.count_messages([SystemMessage(case.system_prompt)])
        threshold = self._threshold(target, system_tokens)
        cap = max(1, int(SUMMARY_SHARE * target)) if target is not None and self.strategy == "summary" else None
        usage: list[dict[str, Any]] = []
        hook = sys.excepthook  # inspect installs its own exception hook when a model is made: the job keeps its own
        try:
            model = get_model(f"bench/{getattr(self.summarizer, 'name', None) or 'counter'}", memoize=False,
                              counter=counter, summarizer=self.summarizer, profile=case.profile, cap=cap, usage=usage)
        finally:
            sys.excepthook = hook
        strategy = self._strategy(threshold, cap, model)
        final, compacted_at, insufficient = _LOOP.run(self._drive(case, strategy, model))
        messages = self._restore(case, [m for m in final if not isinstance(m, ChatMessageSystem)])
        summaries = [m.text for m in final if isinstance(m, ChatMessageUser) and (m.metadata or {}).get("summary")]
        # compacted_at: before which recorded message (its index; the question: len(messages)) the handler compacted
        info: dict[str, Any] = {"strategy": type(strategy).__name__, "threshold": threshold,
                                "compacted_at": compacted_at, "summarizer_usage": usage}
        dropped = 0
        if insufficient is not None:
            info["insufficient"] = insufficient
            messages, dropped = drop_oldest_steps(messages, counter, threshold - system_tokens)
            info["steps_dropped"] = dropped
        view = make_view(case, self.name, messages, counter, info=info, summarizer_calls=len(usage),
                         summary=summaries[-1] if summaries else None)
        if self.limit is None or target is None:
            return view
        return self.limit.record(view, target, {"threshold": threshold, "summary_max_tokens": cap,
                                                "steps_dropped": dropped})

    async def _drive(self, case: Case, strategy: CompactionStrategy,
                     model: Any) -> tuple[list[ChatMessage], list[int], str | None]:
        """``compact_input`` before every recorded model call and the question: (the last input, before which
        messages it compacted, inspect's ``Compaction insufficient`` message or None)."""
        system = ChatMessageSystem(content=case.system_prompt, id=f"{_PREFIX}system")
        handler = compaction(strategy, prefix=[system], tools=None, model=model)
        history: list[ChatMessage] = [system]
        last: list[ChatMessage] = [system]
        since: list[ChatMessage] = []
        runs: list[int] = []

        async def before_call(at: int) -> str | None:
            nonlocal last, since
            try:
                given, appended = await handler.compact_input(history)
            except RuntimeError as err:
                if "Compaction insufficient" not in str(err):
                    raise
                return str(err).split("\n")[0]
            if appended is not None or [m.id for m in given] != [m.id for m in last + since]:
                runs.append(at)
            if appended is not None:
                history.append(appended)
            last, since = list(given), []
            return None

        for index, message in enumerate(case.messages):
            if isinstance(message, AIMessage) and len(history) > 1:
                refused = await before_call(index)
                if refused is not None:
                    return last + since + [to_inspect(m, f"{_PREFIX}{i}") for i, m in
                                           enumerate(case.messages) if i >= index], runs, refused
            converted = to_inspect(message, f"{_PREFIX}{index}")
            history.append(converted)
            since.append(converted)
        refused = await before_call(len(case.messages))
        return (last + since if refused is not None else last), runs, refused

    @staticmethod
    def _restore(case: Case, messages: list[ChatMessage]) -> list[BaseMessage]:
        """LangChain messages of inspect's: the case's own objects where inspect kept one unchanged."""
        out: list[BaseMessage] = []
        for message in messages:
            index = message.id[len(_PREFIX):] if message.id and message.id.startswith(_PREFIX) else ""
            original = case.messages[int(index)] if index.isdigit() else None
            if original is not None and content_text(original.content) == message.text:
                out.append(original)
            else:  # inspect's edit of a recorded message keeps its id (provenance: not verbatim, its content differs)
                converted = from_inspect(message)
                converted.id = original.id if original is not None else None
                out.append(converted)
        return out
