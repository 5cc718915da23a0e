"""Convert mini-swe-agent text-action trajectories into bench's chat-log JSONL (``dataset=chat``).

mini-swe-agent v1 (``trajectory_format: mini-swe-agent-1``, and v2 run without tool calling) does not
record tool calls: the model writes its one action as a fenced block in its reply (```bash, or
```mswea_bash_command), the harness runs it and answers with a user message
``<returncode>N</returncode><output>...</output>``. bench reads tool calls, so each such step becomes
what a tool-calling run records::

    assistant "THOUGHT ...\\n\\n```bash\\nls -la\\n```"   ->  assistant "THOUGHT ..." + call bash {"command": "ls -la"}
    user "<returncode>0</returncode>\\n<output>..."      ->  tool (that call's result, the text unchanged)

A reply with no block, or with several, got the harness's format-error message: both stay as they are
(assistant text, user text), as the model saw them. The system and task messages are kept; an empty
final user message (a run that ended on its submit command) is the submit call's empty result.

Input: ``.traj.json`` files (``{"info": ..., "messages": [...], "trajectory_format": ...}``) or bare JSON
lists of messages. Output: one conversation a line; ``id`` is the trajectory's ``instance_id``, else the
file name without ``.traj.json``; ``metadata`` keeps ``info.exit_status`` and, as ``model_patch``,
``info.submission`` when it is a diff. Then run, as the README shows for shell-only logs::

    uv run python scripts/mini_swe_agent_to_chat.py runs/*.traj.json -o runs.jsonl
    uv run python -m bench.main dataset=chat dataset.path=runs.jsonl 'dataset.shell_tools=[bash]' \\
        "dataset.error_pattern='<returncode>[1-9]'"

A file that is not such a trajectory (tool calls already, no action block) is refused with one line
(exit 2) and nothing is written.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

ACTION = re.compile(r"```(?:bash|mswea_bash_command)\s*\n(.*?)\n```", re.DOTALL)  # mini-swe-agent's action regex
TOOL = "bash"


class ConvertError(ValueError):
    """A file this converter does not read; the message names it and why."""


def messages_of(data: Any, where: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The messages and the ``info`` of a trajectory file's JSON."""
    if isinstance(data, list):
        messages, info = data, {}
    elif isinstance(data, dict) and isinstance(data.get("messages"), list):
        messages, info = data["messages"], data.get("info") or {}
    else:
        raise ConvertError(f"{where}: not a mini-swe-agent trajectory (a list of messages, or an object with "
                           "`messages`)")
    if not all(isinstance(m, dict) and isinstance(m.get("role"), str) for m in messages):
        raise ConvertError(f"{where}: a message is not an object with a role")
    if any(m.get("tool_calls") for m in messages):
        raise ConvertError(f"{where}: the run has tool calls already: bench reads it as it is "
                           "(dataset=chat; README, Your own trajectories)")
    return messages, info


def convert(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The chat messages of one text-action run (see the module docstring)."""
    out: list[dict[str, Any]] = []
    pending: str | None = None  # the id of the call whose result the next user message is
    steps = 0
    for message in messages:
        role, content = message["role"], message.get("content")
        text = content if isinstance(content, str) else json.dumps(content)
        if role == "assistant":
            actions = ACTION.findall(text)
            if len(actions) == 1:
                steps += 1
                pending = f"call_{steps}"
                thought = ACTION.sub("", text).strip()
                out.append({"role": "assistant", "content": thought or None, "tool_calls": [{
                    "id": pending, "type": "function",
                    "function": {"name": TOOL, "arguments": json.dumps({"command": actions[0]})}}]})
                continue
            out.append({"role": "assistant", "content": text})
        elif role == "user" and pending is not None:
            out.append({"role": "tool", "tool_call_id": pending, "name": TOOL, "content": text})
        elif role in ("system", "user"):
            out.append({"role": role, "content": text})
        else:
            out.append({"role": role, "content": text})  # another role (e.g. v2's "exit"): dataset.roles maps it
        pending = None
    if steps == 0:
        raise ConvertError("no action block (```bash ... ```) in any assistant message")
    return out


def record(path: Path) -> dict[str, Any]:
    """One chat-log record for the trajectory at ``path``."""
    where = str(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ConvertError(f"{where}: cannot read it as JSON ({err})") from None
    messages, info = messages_of(data, where)
    try:
        chat = convert(messages)
    except ConvertError as err:
        raise ConvertError(f"{where}: {err}") from None
    name = path.name.removesuffix(".json").removesuffix(".traj")
    run_id = data.get("instance_id") if isinstance(data, dict) and data.get("instance_id") else name
    metadata: dict[str, Any] = {}
    if info.get("exit_status"):
        metadata["exit_status"] = str(info["exit_status"])
    submission = info.get("submission")
    if isinstance(submission, str) and submission.lstrip().startswith("diff --git"):
        metadata["model_patch"] = submission
    return {"id": str(run_id), "messages": chat, "metadata": metadata}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="mini_swe_agent_to_chat.py",
                                     description="mini-swe-agent text-action trajectories -> bench chat-log JSONL")
    parser.add_argument("trajectories", nargs="+", type=Path, help=".traj.json files (or JSON lists of messages)")
    parser.add_argument("-o", "--output", type=Path, required=True, help="the chat log to write (JSONL)")
    args = parser.parse_args(argv)
    try:
        records = [record(path) for path in args.trajectories]
    except ConvertError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    try:
        with args.output.open("w", encoding="utf-8") as handle:
            for item in records:
                handle.write(json.dumps(item, ensure_ascii=False) + "\n")
    except OSError as err:
        print(f"error: cannot write {args.output}: {err.strerror or err}", file=sys.stderr)
        return 2
    print(f"{len(records)} conversation(s) -> {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
