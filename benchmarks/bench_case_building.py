"""Case building time as one conversation grows: seconds per 1,000 messages at 1k, 4k and 10k.

One long conversation is made from the real rows of ``tests/data/real/dev.parquet``: the task's
system and first user message, then the steps of every row after its first user message, row
after row, repeated until the conversation holds N messages (call ids made unique per pass, so
pairing stays exact; commands and arguments stay as recorded, so the same command is re-run
again and again, as in a long session; the outputs of a later pass end with a ``(pass k)`` line,
since a re-run prints its own output, so outputs stay distinct as in a real session). Building the case is what a job does per row:
``row_to_case`` then ``add_questions`` with the token counter and the default depths. Building
should be linear in the messages: the 10k/1k ratio of seconds per 1,000 messages is printed
(issue 31: at most 12x, where 1.0 is exactly linear).

    uv run python benchmarks/bench_case_building.py [--sizes 1000,4000,10000] [--repeat 1] [--data dev|ops]
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import DEV  # noqa: E402


def source_rows(data: str) -> list[dict]:
    """The rows a conversation is made of: ``dev`` (tests/data/real/dev.parquet) or ``ops`` (the
    shipped operations sample: JSON results, later user turns, so tool_value and user_fact ask)."""
    import pandas as pd

    if data == "ops":
        from bench.data.selection import sample_path

        path = sample_path().parent / "ops" / "dev.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return pd.read_parquet(DEV).to_dict("records")


def conversation(size: int, data: str = "dev") -> dict:
    """A nebius-schema row of ``size`` history messages (plus the system message)."""
    from bench.data.cases import strip_nulls

    rows = source_rows(data)
    first = strip_nulls(rows[0]["trajectory"])
    head = [m for m in first[:2]]  # system prompt and the task
    steps: list[list[dict]] = []
    for row in rows:
        trajectory = strip_nulls(row["trajectory"])
        start = next(i for i, m in enumerate(trajectory) if m.get("role") == "user") + 1
        body = trajectory[start:]
        # whole steps only: an assistant message with its results, or a single message
        i = 0
        while i < len(body):
            end = i + 1
            if body[i].get("role") == "assistant" and body[i].get("tool_calls"):
                while end < len(body) and body[end].get("role") == "tool":
                    end += 1
            steps.append(body[i:end])
            i = end
    out = list(head)
    passes = 0
    while len(out) - 1 < size:
        for step in steps:
            if len(out) - 1 >= size:
                break
            calls = [c for m in step for c in m.get("tool_calls") or []]
            if any(c.get("function", {}).get("name") == "finish" for c in calls):
                continue
            if len(calls) != sum(1 for m in step if m.get("role") == "tool"):
                continue  # a step the row ended on without all its results
            for message in step:
                copy = json.loads(json.dumps(message))
                for call in copy.get("tool_calls") or []:
                    call["id"] = f"{call['id']}-{passes}"
                if copy.get("tool_call_id"):
                    copy["tool_call_id"] = f"{copy['tool_call_id']}-{passes}"
                    if passes and isinstance(copy.get("content"), str):
                        copy["content"] += f"\n(pass {passes})"  # a re-run prints its own output
                out.append(copy)
        passes += 1
    while out and out[-1].get("role") == "assistant" and out[-1].get("tool_calls"):
        out.pop()  # never end on calls without results
    return {"instance_id": "long__conversation-1", "repo": rows[0].get("repo") or "", "trajectory": out,
            "tools": rows[0].get("tools"), "model_patch": rows[0].get("model_patch") or "", "resolved": True}


def build_seconds(row: dict, repeat: int, profile_name: str = "openhands") -> tuple[float, int, int]:
    """Best wall seconds of row_to_case + add_questions; messages and questions of the case."""
    from bench.data.cases import row_to_case
    from bench.profiles import get_profile
    from bench.questions import DEPTHS, add_questions
    from bench.store.schema import Case
    from bench.text.tokens import TokenCounter

    best = None
    for _ in range(max(1, repeat)):
        counter = TokenCounter()
        start = time.perf_counter()
        case = row_to_case(dict(row), 0, get_profile(profile_name))
        assert isinstance(case, Case), case
        add_questions(case, counter, None, list(DEPTHS))
        took = time.perf_counter() - start
        best = took if best is None else min(best, took)
    return best, len(case.messages), len(case.questions)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,4000,10000", help="messages of the conversation, comma-separated")
    parser.add_argument("--repeat", type=int, default=1, help="builds per size (the best is shown)")
    parser.add_argument("--data", choices=("dev", "ops"), default="dev",
                        help="rows the conversation is made of (ops: the shipped operations sample, tau2 profile)")
    args = parser.parse_args(argv)
    logging.disable(logging.WARNING)
    sizes = [int(s) for s in args.sizes.split(",")]
    print("| messages | questions | seconds | s per 1,000 messages | x the smallest |")
    print("|---|---|---|---|---|")
    per_k = {}
    for size in sizes:
        seconds, messages, questions = build_seconds(conversation(size, args.data), args.repeat,
                                                     "tau2" if args.data == "ops" else "openhands")
        per_k[size] = seconds / messages * 1000
        print(f"| {messages} | {questions} | {seconds:.2f} | {per_k[size]:.3f} | {per_k[size] / per_k[sizes[0]]:.2f} |",
              flush=True)
    if len(sizes) > 1:
        total = {s: per_k[s] * s / 1000 for s in sizes}
        print(f"\n{sizes[-1]}/{sizes[0]} wall ratio: {total[sizes[-1]] / total[sizes[0]]:.1f}x "
              f"(linear: {sizes[-1] / sizes[0]:.0f}x; per-1,000 ratio {per_k[sizes[-1]] / per_k[sizes[0]]:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
