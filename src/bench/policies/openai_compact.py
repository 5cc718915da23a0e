"""The ``openai_compact`` arm: the recorded history compacted by OpenAI's Responses API, answered through the
Responses API with the window it returned (``model=openai model.api=responses``).

The view is made by the standalone ``responses.compact(model, input, instructions)`` call
(``ResponseCompactParams``): the input is the history as Responses input items
(:func:`bench.llm.responses.responses_input`), the instructions the case's system prompt. The returned
window (``CompactedResponse.output``: every user message, then one ``compaction`` item,
``ResponseCompactionItem``: an opaque ``encrypted_content``) is the view: the user messages as human
messages (the case's own objects when returned unchanged: what the view keeps verbatim) and the item as an
assistant message holding it as a content block, which ``ChatOpenAI`` (``use_responses_api``) sends back as
a ``ResponseCompactionItemParamParam`` before the question. ``threshold`` (tokens of the history, our
counter): compact only a longer history (null: every history), as an agent that calls ``compact`` when its
context fills; under it the history is the view, as recorded.

Server-side compaction (``context_management=[{type: compaction, compact_threshold}]`` on
``responses.create``) is not an option of this arm: its response does not report the compaction item's
size apart from the reply's, so a view made that way would have no realized size to record.

The item is opaque: ``views.jsonl`` has no summary for it, and its size is the one the provider reports
(``usage.output_tokens`` of the compaction: ``info.compaction_tokens``), counted in ``kept_tokens`` beside
the kept user messages (our counter).

With ``budget`` (:mod:`bench.policies.budget`), per case with target T tokens: the threshold is T (a
history over T is compacted). What the compaction keeps is the provider's decision: the realized size is
recorded against T, not forced to it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from bench.core.errors import ConfigError
from bench.core.typecheck import check_types
from bench.policies.budget import Budget
from bench.policies.policy import PolicyContext, make_view
from bench.policies.provider import ProviderArm, verbatim_map
from bench.store.schema import Case, View
from bench.text.tokens import MESSAGE_OVERHEAD

__all__ = ["OpenAICompaction"]


@dataclass
class OpenAICompaction(ProviderArm):
    name: str = "openai_compact"
    provider: str = "openai"  # the provider whose server builds the views (fixed: OpenAI)
    model_api: str = "responses"  # the answering model's API it needs (fixed: the Responses API)
    threshold: int | None = None  # tokens of the history over which it is compacted (null: always)
    budget: float | int | None = None  # share of each case's history tokens, or tokens (None: threshold)
    context: PolicyContext = field(default_factory=PolicyContext, repr=False)
    PROVIDER: ClassVar[str] = "openai"
    API: ClassVar[str | None] = "responses"
    FEATURE: ClassVar[str] = "Responses API compaction (responses.compact)"
    order: ClassVar[int] = 37  # reports: beside the summarizing arms

    def __post_init__(self) -> None:
        check_types(self, "arm")
        if self.threshold is not None and self.threshold < 1:
            raise ConfigError(f"arm.threshold must be >= 1 or null, got {self.threshold}")
        self.limit = Budget.parse(self.budget)
        self.connect()

    def _threshold(self, full: int) -> tuple[int | None, int | None]:
        target = self.limit.target(full) if self.limit is not None else None
        return target, (target if target is not None else self.threshold)

    def __call__(self, case: Case) -> View:
        counter = self.context.counter
        full = counter.count_messages(case.messages)
        target, threshold = self._threshold(full)
        request = {"provider": "openai", "params": {}, "send": "view"}
        info: dict[str, Any] = {"threshold": threshold, "compacted": False}
        if threshold is not None and full <= threshold:
            view = make_view(case, self.name, list(case.messages), counter, info=info, request=request)
        else:
            view = self._compacted(case, info, request)
        if self.limit is None or target is None:
            return view
        return self.limit.record(view, target, {"threshold": threshold})

    def _compacted(self, case: Case, info: dict[str, Any], request: dict[str, Any]) -> View:
        from bench.llm.responses import compact, responses_input

        data, record = compact(self.client, responses_input(case.messages), instructions=case.system_prompt,
                               tags={"case_id": case.case_id, "arm": self.name})
        own = verbatim_map(case)
        messages: list[BaseMessage] = []
        items = []
        compaction_tokens = int(record.get("output_tokens") or 0)
        for item in data.get("output") or []:
            kind = item.get("type", "message")
            items.append(kind if kind != "message" else f"message:{item.get('role')}")
            if kind == "compaction":
                block = {k: item[k] for k in ("type", "id", "encrypted_content") if item.get(k) is not None}
                messages.append(AIMessage(content=[block]))
                info["compaction_id"] = item.get("id")
            elif kind == "message" and item.get("role") == "user":
                text = "".join(p.get("text", "") for p in item.get("content") or [] if isinstance(p, dict)) \
                    if isinstance(item.get("content"), list) else str(item.get("content") or "")
                same = own.get(("human", text))
                messages.append(same.pop(0) if same else HumanMessage(text))
            else:
                raise ValueError(f"openai_compact: responses.compact returned a {kind} item for {case.case_id}, "
                                 "which this arm does not carry into the answer")
        verbatim = sum(1 for m in messages if any(m is c for c in case.messages))
        info.update(compacted=True, items=items, compaction_tokens=compaction_tokens, verbatim_messages=verbatim,
                    call={k: record.get(k) for k in ("input_tokens", "cached_tokens", "output_tokens", "cached")})
        view = make_view(case, self.name, messages, counter=self.context.counter, info=info, request=request,
                         summarizer_calls=1)
        return self._sized(view, messages, compaction_tokens)

    def _sized(self, view: View, messages: list[BaseMessage], compaction_tokens: int) -> View:
        """``kept_tokens``: the visible messages by our counter, the opaque item by the provider's count (the
        compaction call's output tokens)."""
        from dataclasses import replace

        visible = [m for m in messages if not (isinstance(m, AIMessage) and isinstance(m.content, list))]
        kept = self.context.counter.count_messages(visible) + MESSAGE_OVERHEAD + int(compaction_tokens)
        return replace(view, kept_tokens=kept)
