"""What a question's request holds: its messages (``first_messages``), the tools it offers
(``tools_for``), among them the read tool that opens a stored output (its name, its schema: one home
for the name every summary, placeholder and guidance text cites).

Kept apart from ``bench.answering.agent`` so what needs only the tools (``bench.runner.costing``) does not
import LangGraph.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from bench.questions.answers import ask_text
from bench.text.formats import HANDLE_TOOL

__all__ = ["READ_TOOL", "READ_TOOL_SCHEMA", "first_messages", "tools_for"]

READ_TOOL = HANDLE_TOOL  # the name bench.text.formats writes in placeholders and handle references
READ_TOOL_SCHEMA: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": READ_TOOL,
        "description": (
            "Open a tool output that was cleared from this conversation and stored. Pass the handle "
            'exactly as it appears in a placeholder such as read_tool_output(handle="..."). '
            "Returns the full stored output."
        ),
        "parameters": {
            "type": "object",
            "properties": {"handle": {"type": "string", "description": "The opaque handle of a stored output."}},
            "required": ["handle"],
        },
    },
}


def _tool_name(tool: dict[str, Any]) -> str | None:
    return (tool.get("function") or {}).get("name") or tool.get("name")


def tools_for(case: Any, view: Any) -> list[dict[str, Any]]:
    """The tools a question's requests offer: the case's, and the read tool when the view stored outputs."""
    tools = [t for t in case.tools if _tool_name(t) != READ_TOOL]
    if view.store:
        tools.append(READ_TOOL_SCHEMA)
    return tools


def first_messages(case: Any, view: Any, question: Any) -> list[BaseMessage]:
    """The messages of a question's first request: the case's system prompt (and the view's guidance),
    the view, and the question last (every question of a view shares all but that last message).

    A view whose requests send the recorded history for the provider to edit on its server
    (``view.request["send"] == "history"``: Anthropic's tool-result clearing) sends ``case.messages``."""
    system = case.system_prompt + (f"\n\n{view.guidance}" if view.guidance else "")
    asked = ask_text(question.question, question.answer_format)  # the question, then its answer's shape
    history = case.messages if (getattr(view, "request", None) or {}).get("send") == "history" else view.messages
    return [SystemMessage(system), *history, HumanMessage(asked)]
