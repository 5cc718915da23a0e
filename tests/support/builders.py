"""Tiny builders for nebius-schema rows, so each rule gets a case built for it.

Written in the trajectory DSL the shipped sample is generated with (``samplegen.trajectory``,
``scripts/samplegen``): the same message, call, exchange, row and observation shapes.
"""

from __future__ import annotations

from typing import Any

from samplegen.trajectory import Call, bash_out, editor_reply, exchange, message, nebius_row, tool_call

ROOT = "/workspace/acme__widgets__1.0"


def system(text: str = "You are a coding agent.") -> dict[str, Any]:
    return message("system", text)


def user(text: str | None = None) -> dict[str, Any]:
    return message("user", text or f"<uploaded_files>\n{ROOT}\n</uploaded_files>\nFix the widget bug.")


def call(call_id: str, name: str, args: dict[str, Any] | str) -> dict[str, Any]:
    return tool_call(call_id, name, args)


def assistant(*calls: dict[str, Any], text: str = "") -> dict[str, Any]:
    return message("assistant", text, tool_calls=list(calls) or None)


def result(call_id: str, name: str, content: str) -> dict[str, Any]:
    return message("tool", content, tool_call_id=call_id, name=name)


def bash(call_id: str, command: str, output: str, exit_code: int = 0, **extra) -> list[dict[str, Any]]:
    """An execute_bash call and its OpenHands-style reply (working directory and exit code markers)."""
    reply = bash_out(output, exit_code, ROOT, python=None)
    return exchange("", [Call("execute_bash", {"command": command, **extra}, reply, id="c" + call_id)])


def edit(call_id: str, command: str, path: str, reply: str | None = None, **args) -> list[dict[str, Any]]:
    """A str_replace_editor call and its reply (success by default)."""
    reply = editor_reply(command, path) if reply is None else reply
    return exchange("", [Call("str_replace_editor", {"command": command, "path": path, **args}, reply,
                              id="c" + call_id)])


def row(*messages: dict[str, Any] | list[dict[str, Any]], patch_files: tuple[str, ...] = (),
        instance_id: str = "acme__widgets-1", **extra) -> dict[str, Any]:
    flat: list[dict[str, Any]] = [system(), user()]
    for item in messages:
        flat.extend(item if isinstance(item, list) else [item])
    patch = "".join(f"diff --git a/{p} b/{p}\n--- a/{p}\n+++ b/{p}\n@@ -1 +1 @@\n-a\n+b\n" for p in patch_files)
    tools = [{"type": "function", "function": {"name": "execute_bash", "description": "Run", "parameters": {
        "type": "object", "properties": {"command": {"type": "string"}}}}}]
    return {**nebius_row(f"t-{instance_id}", instance_id, "acme/widgets", True, "submit", patch, tools, flat), **extra}


def random_history(rng, max_steps: int = 30, output_lengths=(10, 400, 501, 900, 2000)):
    """A random valid chat history for property tests: user turns, plain assistant
    messages and (parallel) execute_bash exchanges with outputs of the given lengths."""
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    history = [HumanMessage("start")]
    made = 0
    for _ in range(rng.randint(0, max_steps)):
        roll = rng.random()
        if roll < 0.1:
            history.append(HumanMessage("continue"))
        elif roll < 0.2:
            history.append(AIMessage("thinking"))
        else:
            ids = [f"k{made + j}" for j in range(rng.choice([1, 1, 2, 3]))]
            made += len(ids)
            history.append(AIMessage(content="", tool_calls=[
                {"name": "execute_bash", "args": {"command": f"cmd {i}"}, "id": i, "type": "tool_call"}
                for i in ids]))
            history += [ToolMessage(content="o" * rng.choice(output_lengths), tool_call_id=i, name="execute_bash")
                        for i in ids]
    return history


def sample_questions() -> int:
    """Questions of the shipped sample as the default job asks them (``load_job_cases`` on the
    default config: every type that applies, at the default ``questions.depths``)."""
    from bench.config.checks import compose
    from bench.config.job_cases import load_job_cases

    global _SAMPLE_QUESTIONS
    if _SAMPLE_QUESTIONS is None:
        _SAMPLE_QUESTIONS = sum(len(c.questions) for c in load_job_cases(compose()).cases)
    return _SAMPLE_QUESTIONS


_SAMPLE_QUESTIONS: int | None = None

