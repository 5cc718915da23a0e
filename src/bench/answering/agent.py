"""The answering agent: a LangGraph tool loop over the view an arm left (``model=openai``).

For one question the agent sees ``case.system_prompt`` (plus ``view.guidance``), the
case's own tool schemas (plus ``read_tool_output`` when the arm stored outputs), the
view's messages and the question as a user message. The original sandbox is gone:

* every recorded tool (a shell, an editor, a domain tool) replies with a sandbox-shutdown
  message;
* the profile's think tools acknowledge;
* the profile's finish tools end the loop, their ``message`` (or the reply's text) is the answer;
* ``read_tool_output(handle)`` returns an output this arm stored and exposed in this
  view; anything else (unknown handle, path, other case's handle) gets a tool error;
* a plain text reply without tool calls is the answer;
* after ``max_steps`` model calls without an answer, one last call with
  ``tool_choice="none"`` asks for the answer as text (``final_answer_at_limit``; when off,
  the answer is the last text the agent wrote, usually empty).

The graph is compiled once per answerer (tools, tags and stored outputs are passed as
the run's context) and has no checkpointer: the run is streamed (``stream_mode="values"``),
so the state after each completed step is at hand, and a run that fails keeps the accounting
of the calls it made. (An in-memory checkpointer did the same at ~1.2 ms of CPU per answer:
the state pickled and a thread started for each write.) Every model call goes through
:class:`bench.llm.ChatClient` (cache, retries, accounting).

    answerer = LangGraphAnswerer(name="gpt-4o-mini", base_url=None, seed=0)
    answer = answerer.answer(case, view, question)
"""

from __future__ import annotations

import functools
import operator
import re
from dataclasses import dataclass
from typing import Annotated, Any, TypedDict, cast

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from bench.answering.request import READ_TOOL, READ_TOOL_SCHEMA, first_messages, tools_for
from bench.config.checks import ConfigError
from bench.llm import ChatClient, ContextOverflow, current_callbacks, current_tags, model_client, sum_usage
from bench.profiles import OPENHANDS, Profile
from bench.store.schema import Answer, Case, Question, View
from bench.text.content import content_text

__all__ = [
    "LangGraphAnswerer",
    "first_messages",
    "tools_for",
    "READ_TOOL",
    "READ_TOOL_SCHEMA",
    "sandbox_reply",
    "THINK_REPLY",
]

THINK_REPLY = "Your thought has been logged."
FINISH_REPLY = "Finished."
_HANDLE = re.compile(r"^[A-Za-z0-9_-]{1,128}$")


def sandbox_reply(tool: str, has_store: bool) -> str:
    hint = f" Stored outputs can still be opened with {READ_TOOL}." if has_store else ""
    return (f"ERROR: the sandbox of this task has been shut down, so `{tool}` cannot run any more. "
            f"Answer from the conversation history.{hint}")


class AgentState(TypedDict):
    messages: Annotated[list[BaseMessage], operator.add]
    records: Annotated[list[dict[str, Any]], operator.add]  # accounting of each model call
    retrievals: Annotated[list[str], operator.add]  # handles opened
    steps: int  # model calls so far
    final: str | None  # the answer once finish was called
    limit: bool  # the step limit stopped the loop


@dataclass(frozen=True)
class AgentContext:
    """What changes per question in the compiled graph: tool schemas, accounting tags, stored outputs."""

    tools: list[dict[str, Any]]
    tags: dict[str, Any]
    store: dict[str, str]
    profile: Profile = OPENHANDS  # which recorded tools finish or only think
    extra: dict[str, Any] | None = None  # a provider arm's request parameters (View.request["params"])
    prefix: int | None = None  # messages every request of the view shares (system, view): cache breakpoints


class LangGraphAnswerer:
    """Answering agent for real models (``model=openai``); see the module docstring.

    ``client`` is given in tests (a scripted chat model); otherwise the model settings
    (``name``, ``base_url``, ``api_key_env``, ``temperature``, ``seed``, ``timeout``,
    ``max_retries``, ``max_concurrency``, cache ...) build an OpenAI-compatible client.
    """

    def __init__(self, *, client: ChatClient | None = None, max_steps: int = 8,
                 final_answer_at_limit: bool = True, warm_prefix: bool = True, **settings: Any) -> None:
        if max_steps < 1:
            raise ConfigError(f"model.max_steps must be >= 1, got {max_steps}")
        self.client = client or model_client("model", kind="answer", **settings)
        self.max_steps = int(max_steps)
        self.final_answer_at_limit = bool(final_answer_at_limit)
        # one question of a view first, the others once it completed: they share its prefix
        # (system, tools, view), which a provider's prefix cache then bills as cached input
        self.warm_prefix = bool(warm_prefix)
        self.max_concurrency = self.client.max_concurrency
        self.name = f"llm:{self.client.model}"

    def clients(self) -> list[ChatClient]:
        return [self.client]

    # ------------------------------------------------------------------ graph
    @functools.cached_property
    def graph(self):
        """The agent graph, compiled once per answerer; a question's tools, tags and stored
        outputs come in through the run's context (:class:`AgentContext`)."""
        client, max_steps = self.client, self.max_steps

        def agent(state: AgentState, runtime: Runtime[AgentContext]) -> dict[str, Any]:
            ctx = runtime.context
            reply, record = client.chat(state["messages"], ctx.tools, tags=ctx.tags, extra=ctx.extra,
                                        prefix=ctx.prefix)
            update: dict[str, Any] = {"messages": [reply], "records": [record], "steps": state["steps"] + 1}
            calls = reply.tool_calls
            if calls and not reply.invalid_tool_calls and all(ctx.profile.is_finish(c["name"]) for c in calls):
                # only finish calls: the run ends here (their replies are recorded as the tools node would)
                update["messages"] += [ToolMessage(FINISH_REPLY, tool_call_id=c.get("id") or "", name=c["name"])
                                       for c in calls]
                update["final"] = _finish_text(calls[-1].get("args") or {}, reply)
            return update

        def answer_now(state: AgentState, runtime: Runtime[AgentContext]) -> dict[str, Any]:
            """Step limit reached without an answer: one call that may not use tools."""
            ctx = runtime.context
            reply, record = client.chat(state["messages"], ctx.tools, tags=ctx.tags, tool_choice="none",
                                        extra=ctx.extra, prefix=ctx.prefix)
            text = content_text(reply.content)
            return {"messages": [AIMessage(text)], "records": [record], "final": text, "limit": True}

        def run_tools(state: AgentState, runtime: Runtime[AgentContext]) -> dict[str, Any]:
            store, profile = runtime.context.store, runtime.context.profile
            last = cast(AIMessage, state["messages"][-1])  # routed here by after_agent: a reply with calls
            replies: list[BaseMessage] = []
            opened: list[str] = []
            final = None
            for call in last.tool_calls:
                text, handle = self._tool_reply(call["name"], call.get("args") or {}, store, profile)
                if handle:
                    opened.append(handle)
                if profile.is_finish(call["name"]):
                    final = _finish_text(call.get("args") or {}, last)
                replies.append(ToolMessage(text, tool_call_id=call.get("id") or "", name=call["name"]))
            for bad in last.invalid_tool_calls:
                replies.append(ToolMessage(
                    f"ERROR: the arguments of `{bad.get('name')}` are not valid JSON: {bad.get('error') or ''}".strip(),
                    tool_call_id=bad.get("id") or "", name=bad.get("name") or "unknown", status="error"))
            return {"messages": replies, "retrievals": opened, "final": final}

        def after_agent(state: AgentState) -> str:
            if state["final"] is not None:  # `finish` was the only call
                return END
            last = state["messages"][-1]
            return "tools" if isinstance(last, AIMessage) and (last.tool_calls or last.invalid_tool_calls) else END

        def after_tools(state: AgentState) -> str:
            if state["final"] is not None:
                return END
            if state["steps"] >= max_steps:
                return "answer_now" if self.final_answer_at_limit else END
            return "agent"

        graph = StateGraph(AgentState, context_schema=AgentContext)
        graph.add_node("agent", agent)
        graph.add_node("tools", run_tools)
        graph.add_node("answer_now", answer_now)
        graph.add_edge(START, "agent")
        graph.add_conditional_edges("agent", after_agent, ["tools", END])
        graph.add_conditional_edges("tools", after_tools, ["agent", "answer_now", END])
        graph.add_edge("answer_now", END)
        return graph.compile()  # no checkpointer: answer() streams the state (module docstring)

    @staticmethod
    def _tool_reply(name: str, args: dict[str, Any], store: dict[str, str],
                    profile: Profile = OPENHANDS) -> tuple[str, str | None]:
        """Reply text of one tool call, and the handle it opened (if any)."""
        if name == READ_TOOL:
            if not store:
                return f"ERROR: `{READ_TOOL}` is not available: no output was stored in this conversation.", None
            handle = args.get("handle")
            if not isinstance(handle, str) or not handle.strip():
                return f"ERROR: `{READ_TOOL}` needs a `handle` argument (a string from a placeholder).", None
            handle = handle.strip().strip("'\"")
            if not _HANDLE.match(handle):
                return (f"ERROR: {handle[:200]!r} is not a handle. `{READ_TOOL}` opens only the opaque "
                        "handles shown in this conversation's placeholders; file paths and other names "
                        "are not accepted."), None
            if handle not in store:
                return (f"ERROR: no stored output has the handle {handle!r} in this conversation. Use a "
                        "handle exactly as shown in a placeholder."), None
            return store[handle], handle
        if profile.is_think(name):
            return THINK_REPLY, None
        if profile.is_finish(name):
            return FINISH_REPLY, None
        return sandbox_reply(name, bool(store)), None

    def tools_for(self, case: Case, view: View) -> list[dict[str, Any]]:
        return tools_for(case, view)

    # ------------------------------------------------------------------ answering
    def answer(self, case: Case, view: View, question: Question) -> Answer:
        messages = first_messages(case, view, question)
        tags = {**current_tags(), "case_id": case.case_id, "qid": question.qid, "arm": view.arm}
        config: dict[str, Any] = {"recursion_limit": 2 * self.max_steps + 4}
        callbacks = current_callbacks()  # a tracer's: the run's steps, tool calls and model calls become spans
        graph = self.graph
        request = view.request or {}
        if request and request.get("provider") != self.client.provider:
            raise ValueError(f"view of arm {view.arm} is for {request.get('provider')} models; the answering "
                             f"model {self.client.model} is {self.client.provider}'s")
        context = AgentContext(tools=self.tools_for(case, view), tags=tags, store=view.store, profile=case.profile,
                               extra=request.get("params") or None, prefix=len(messages) - 1)
        if callbacks:
            config["callbacks"] = callbacks
        state: dict[str, Any] = {}
        try:
            # the state after each completed step (references, not copies): when a step fails, the
            # last one holds the records of the calls made so far
            for step in graph.stream({"messages": messages, "records": [], "retrievals": [], "steps": 0,
                                      "final": None, "limit": False},
                                     config, context=context, stream_mode="values"):
                state = step
            outcome, error = "answered", None
        except ContextOverflow as err:
            outcome, error = "context_overflow", str(err)
        except Exception as err:  # noqa: BLE001 - recorded, the job goes on
            outcome, error = "error", f"{type(err).__name__}: {err}"
        records = list(state.get("records") or [])
        steps = int(state.get("steps") or 0)
        final = state.get("final")
        text = ""
        if outcome == "answered":
            text = final if final is not None else _last_text(state.get("messages") or [], len(messages))
        history = state.get("messages") or []
        limit = bool(state.get("limit")) or (final is None and bool(history) and isinstance(history[-1], ToolMessage))
        usage = sum_usage(records, model=self.client.model, steps=steps, step_limit=int(limit))
        return Answer(case_id=case.case_id, qid=question.qid, type=question.type, answer=text, usage=usage, retrievals=list(state.get("retrievals") or []),
                      outcome=outcome, error=error)


def _finish_text(args: dict[str, Any], message: AIMessage) -> str:
    for key in ("message", "answer", "text", "content"):
        value = args.get(key)
        if isinstance(value, str) and value.strip():
            return value
    return content_text(message.content)


def _last_text(messages: list[BaseMessage], start: int) -> str:
    """The newest assistant text the agent produced (plain final reply, or at the step limit)."""
    for message in reversed(messages[start:]):
        if isinstance(message, AIMessage) and content_text(message.content).strip():
            return content_text(message.content)
    return ""

