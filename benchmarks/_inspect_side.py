"""The inspect_ai side of ``bench_inspect.py``: the same answering requests through ``inspect_ai.eval``.

    python benchmarks/_inspect_side.py SAMPLES.json BASE_URL CONCURRENCY LOG_DIR

``SAMPLES.json`` holds the requests the runner's job sends (OpenAI-format messages and tool
schemas, one per question). Each becomes a ``Sample`` whose solver makes exactly one model
call with those messages and tools (``Model.generate``: no tool is run), scored by ``match()``
(no model call), against the fake server through inspect's ``openai`` provider (chat
completions), at most CONCURRENCY requests and samples in flight; inspect writes its log as a
user's run would.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys

from inspect_ai import Task, eval
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import get_model, messages_from_openai
from inspect_ai.scorer import match
from inspect_ai.solver import Generate, TaskState, solver
from inspect_ai.tool import ToolInfo, ToolParams


def tool_infos(tools: list[dict]) -> list[ToolInfo]:
    return [ToolInfo(name=t["function"]["name"], description=t["function"].get("description") or "",
                     parameters=ToolParams(**(t["function"].get("parameters") or {}))) for t in tools]


@solver
def one_call():
    """One model call with the sample's messages and tools (as the runner's answering call)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        output = await get_model().generate(state.messages, tools=tool_infos(state.metadata["tools"]))
        state.output = output
        state.messages.append(output.message)
        return state

    return solve


async def samples(path: str) -> list[Sample]:
    rows = json.loads(open(path, encoding="utf-8").read())
    return [Sample(id=row["id"], input=await messages_from_openai(row["messages"]), target="",
                   metadata={"tools": row["tools"]}) for row in rows]


def main() -> int:
    path, base_url, concurrency, log_dir = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    os.environ.setdefault("OPENAI_API_KEY", "no-key")
    task = Task(dataset=MemoryDataset(asyncio.run(samples(path))), solver=one_call(), scorer=match())
    logs = eval(task, model="openai/gpt-4o-mini", model_base_url=base_url, model_args={"responses_api": False},
                max_connections=concurrency, max_samples=concurrency, max_retries=6, display="none",
                log_dir=log_dir)
    log = logs[0]
    print(json.dumps({"status": log.status, "samples": len(log.samples or []),
                      "errors": sum(1 for s in log.samples or [] if s.error)}))
    return 0 if log.status == "success" else 1


if __name__ == "__main__":
    sys.exit(main())
