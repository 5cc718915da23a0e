"""Convert the real trajectory excerpts in ``source/`` into the benchmark's chat-log JSONL.

    uv run python tests/data/real/chat/convert.py      # writes airline.jsonl and shell.jsonl here

- ``source/tau_bench_gpt-4o-airline_tasks0_2.json`` (tau-bench ``historical_trajectories`` format: a
  list of ``{task_id, reward, info, traj, trial}``) -> ``airline.jsonl``: ``traj`` is already an
  OpenAI chat, kept as is; ``resolved`` = reward 1.0.
- ``source/mini-swe-agent_astropy__astropy-12907_excerpt.traj.json`` (mini-swe-agent 2.x
  ``.traj.json``: ``{info, messages, instance_id}``) -> ``shell.jsonl``: messages kept as they are,
  including the final ``exit`` role message (declare ``dataset.roles={exit: skip}`` to read it);
  the per-message ``extra`` (raw API responses, timestamps) is left out; the submission (the
  ``exit`` message's diff) becomes ``model_patch``.

Nothing else is changed: no message is added, reordered or rewritten (PROVENANCE.md).
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).parent
SOURCE = HERE / "source"


def airline() -> list[dict]:
    runs = json.loads((SOURCE / "tau_bench_gpt-4o-airline_tasks0_2.json").read_text(encoding="utf-8"))
    return [{"id": f"tau-bench-airline-gpt-4o-task{run['task_id']}-trial{run['trial']}", "messages": run["traj"],
             "metadata": {"resolved": run["reward"] == 1.0, "trajectory_id": f"task{run['task_id']}"}}
            for run in runs]


def shell() -> list[dict]:
    doc = json.loads((SOURCE / "mini-swe-agent_astropy__astropy-12907_excerpt.traj.json").read_text(encoding="utf-8"))
    messages = [{k: v for k, v in m.items() if k != "extra"} for m in doc["messages"]]
    patch = next((m["content"] for m in messages if m["role"] == "exit"), "")
    return [{"id": doc["instance_id"], "messages": messages,
             "metadata": {"repo": "astropy/astropy", "model_patch": patch,
                          "exit_status": doc["info"]["exit_status"]}}]


def write(name: str, records: list[dict]) -> None:
    with (HERE / name).open("w", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    write("airline.jsonl", airline())
    write("shell.jsonl", shell())
