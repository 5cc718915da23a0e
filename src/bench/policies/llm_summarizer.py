"""The LLM summarizer for ``arm=compact`` (``summarizer=openai`` or ``summarizer=anthropic``), beside the
extractive one.

    summarizer = LLMSummarizer(name="gpt-4o-mini")
    summary, usage = summarizer.summarize(messages, prompt)

The summary request goes through a :class:`bench.llm.ChatClient` (cache, retries,
accounting). A history longer than the summarizer's context raises ``ContextOverflow``.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from bench.llm import ChatClient, ContextOverflow, ModelSetupError, current_callbacks, model_client, sum_usage
from bench.text.content import content_text, message_text

__all__ = ["LLMSummarizer", "SUMMARY_SYSTEM"]

SUMMARY_SYSTEM = (
    "You summarize the conversation of a software engineering agent so that it can continue "
    "its work from the summary alone. Follow the user's instructions for the summary exactly."
)


def _transcript(messages: list[BaseMessage]) -> str:
    lines = []
    for message in messages:
        role = {"human": "USER", "ai": "ASSISTANT", "tool": f"TOOL RESULT ({message.name or 'tool'})",
                "system": "SYSTEM"}.get(message.type, message.type.upper())
        text = content_text(message.content) if message.type == "tool" else message_text(message)
        lines.append(f"### {role}\n{text}")
    return "\n\n".join(lines)


class LLMSummarizer:
    """Summary model for ``arm=compact`` (``summarizer=openai``), implements the Summarizer protocol.

    ``input``: ``messages`` sends the history as chat messages followed by the summary
    prompt as a user message (what an agent's auto-compaction does); ``transcript`` sends
    one user message holding the history as text, then the prompt.
    """

    calls_model = True  # views that need a summary are I/O-bound: the runner builds them concurrently

    def __init__(self, *, client: ChatClient | None = None, input: str = "messages",
                 system: str | None = SUMMARY_SYSTEM, **settings: Any) -> None:
        if input not in ("messages", "transcript"):
            raise ModelSetupError(f"summarizer.input must be messages or transcript, got {input!r}")
        self.client = client or model_client("summarizer", kind="summarizer", **settings)
        self.input = input
        self.system = system
        self.name = f"llm:{self.client.model}"

    def clients(self) -> list[ChatClient]:
        return [self.client]

    def summarize(self, messages: list[BaseMessage], prompt: str, profile: Any = None) -> tuple[str, dict[str, Any]]:
        head = [SystemMessage(self.system)] if self.system else []
        if self.input == "transcript":
            request = [*head, HumanMessage(f"Conversation to summarize:\n\n{_transcript(messages)}\n\n{prompt}")]
        else:
            request = [*head, *messages, HumanMessage(prompt)]
        try:
            reply, record = self.client.chat(request, callbacks=current_callbacks())
        except ContextOverflow as err:  # the history to summarize is longer than the summarizer's context
            raise ContextOverflow(f"summary request: {err}") from None
        text = content_text(reply.content).strip()
        return text, sum_usage([record], model=self.client.model)
