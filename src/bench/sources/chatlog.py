"""Your own trajectories: OpenAI-format chat logs (``dataset=chat``), reader and writer.

One conversation a line (JSONL), the format most agent stacks can dump; a JSON array of
conversations and conversations pretty-printed over several lines are read too::

    {"id": "run-17", "messages": [OpenAI chat messages], "tools": [OpenAI tool schemas], "metadata": {...}}

``messages`` are OpenAI chat messages (``role`` system / user / assistant / tool;
assistant ``tool_calls`` with JSON ``arguments``; tool ``tool_call_id``); ``tools`` and
``metadata`` are optional. A line becomes a row of the benchmark's column schema (the
nebius schema): ``instance_id`` = ``id``, ``trajectory`` = ``messages``; ``metadata`` may
give ``repo``, ``resolved``, ``exit_status``, ``model_patch`` and ``trajectory_id``.

    rows = iter_chat_rows("my_runs.jsonl")          # rows for bench.data.cases.row_to_case
    write_chat_jsonl(rows, "out.jsonl")             # rows of the column schema -> chat JSONL

Bad lines are not guessed at: a line that is not a JSON object, or lacks ``id`` or
``messages``, raises :class:`ChatLogError` naming the file and the line. Shapes other tools write
are named with their fix: a file of one run's messages, and a mini-swe-agent text-action log
(``scripts/mini_swe_agent_to_chat.py`` converts it). tau2-bench's own message shape (calls
``{id, name, arguments}``, results ``{role: tool, id, requestor}``) is read as it is
(:mod:`bench.data.cases`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from bench.core.errors import BenchError

__all__ = ["ChatLogError", "iter_chat_rows", "chat_record", "write_chat_jsonl", "iter_jsonl", "iter_records", "UNREADABLE",
           "text_action_log"]

# A line that is valid JSON nested past the parser's recursion limit: yielded as
# ``{UNREADABLE: reason}`` so that conversation alone is rejected (bench.data.cases.row_to_case).
UNREADABLE = "__bench_unreadable__"

_METADATA_COLUMNS = ("repo", "resolved", "exit_status", "model_patch", "trajectory_id")


class ChatLogError(BenchError, ValueError):
    """A chat log line that cannot be read; the message names the file and line."""


def iter_jsonl(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` of each non-empty line of a JSONL file, read on ``\\n`` only."""
    with open(path, "rb") as handle:  # bytes: a line that is not UTF-8 is named by its number
        for number, raw in enumerate(handle, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as err:
                raise ChatLogError(f"{path}, line {number}: not UTF-8 text ({err.reason} at byte {err.start} "
                                   "of the line)") from None
            if not line.strip():
                continue
            try:
                data = json.loads(line)
            except json.JSONDecodeError as err:
                raise ChatLogError(f"{path}, line {number}: not valid JSON ({err.msg} at char {err.pos})") from None
            except RecursionError:
                yield number, {UNREADABLE: "nested too deeply to read (JSON deeper than the parser's limit)"}
                continue
            if isinstance(data, list):
                raise ChatLogError(f"{path}, line {number}: a JSON array where JSONL holds one object a line "
                                   f"(write one record a line, e.g. jq -c '.[]' {path})")
            if not isinstance(data, dict):
                raise ChatLogError(f"{path}, line {number}: not a JSON object")
            yield number, data


def _first_line(path: str | Path) -> str:
    with open(path, encoding="utf-8", errors="replace", newline="\n") as handle:
        return next((line for line in handle if line.strip()), "")


def iter_records(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` of each record of a chat log: JSONL (one object a line, read as it
    streams), a JSON array of objects, or objects pretty-printed over several lines one after the
    other (the README's example pasted as shown). The last two are read whole; the line is where
    the record starts."""
    first = _first_line(path)
    stripped = first.strip()
    if not stripped.startswith("["):
        try:
            json.loads(stripped)
        except (json.JSONDecodeError, RecursionError):
            pass
        else:
            yield from iter_jsonl(path)
            return
    try:
        text = Path(path).read_bytes().decode("utf-8")
    except UnicodeDecodeError as err:
        raise ChatLogError(f"{path}: not UTF-8 (byte offset {err.start})") from None
    decoder = json.JSONDecoder()
    pos, records = 0, []
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos >= len(text):
            break
        line = text.count("\n", 0, pos) + 1
        try:
            value, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as err:
            raise ChatLogError(f"{path}, line {err.lineno}: not valid JSON ({err.msg}, column {err.colno})") from None
        except RecursionError:
            raise ChatLogError(f"{path}, line {line}: nested too deeply to read") from None
        records.append((line, value))
    for line, value in records:
        items = value if isinstance(value, list) else [value]
        for item in items:
            if not isinstance(item, dict):
                raise ChatLogError(f"{path}, line {line}: not a JSON object (a record is one conversation object)")
            yield line, item


# mini-swe-agent v1 (and v2 in text mode) writes its actions as one fenced block in the assistant's text
# and their results as the next user message, ``<returncode>N</returncode>...``: no tool calls to read.
_TEXT_ACTION = re.compile(r"```(?:bash|mswea_bash_command)\s*\n")
CONVERTER = "python scripts/mini_swe_agent_to_chat.py TRAJ.json... -o runs.jsonl"


def text_action_log(messages: Any) -> bool:
    """True for a mini-swe-agent text-action conversation: no message carries tool calls, and an
    assistant's fenced action block is answered by a user message starting ``<returncode>``."""
    if not isinstance(messages, list) or any(isinstance(m, dict) and m.get("tool_calls") for m in messages):
        return False
    return any(isinstance(m, dict) and isinstance(n, dict) and m.get("role") == "assistant"
               and _TEXT_ACTION.search(str(m.get("content") or "")) and n.get("role") == "user"
               and str(n.get("content") or "").lstrip().startswith("<returncode>")
               for m, n in zip(messages, messages[1:], strict=False))


def _row(record: dict[str, Any], where: str) -> dict[str, Any]:
    if UNREADABLE in record:  # rejected with its reason by row_to_case; the other conversations go on
        return {"instance_id": where.rpartition(", ")[2].replace(" ", ""), UNREADABLE: record[UNREADABLE]}
    if "role" in record and "messages" not in record:
        raise ChatLogError(f"{where}: a chat message where a conversation is expected ({{\"id\", \"messages\": "
                           "[...]}, one a line): a file holding one run's list of messages (a mini-swe-agent "
                           f"trajectory?) is converted first: {CONVERTER}")
    if text_action_log(record.get("messages")) or str(record.get("trajectory_format", "")) == "mini-swe-agent-1":
        raise ChatLogError(f"{where}: a mini-swe-agent text-action log (actions are ```bash blocks in the "
                           "assistant's text, results are user messages), and bench reads tool calls: convert it "
                           f"with {CONVERTER} (README, Your own trajectories)")
    if "id" not in record or record["id"] in (None, ""):
        raise ChatLogError(f"{where}: no `id`")
    messages = record.get("messages")
    if not isinstance(messages, list):
        raise ChatLogError(f"{where}: `messages` must be a list of chat messages")
    metadata = record.get("metadata") or {}
    if not isinstance(metadata, dict):
        raise ChatLogError(f"{where}: `metadata` must be an object")
    row = {"instance_id": str(record["id"]), "trajectory": messages, "tools": record.get("tools") or [],
           "repo": "", "model_patch": "", "resolved": None, "exit_status": None, "trajectory_id": ""}
    row.update({k: metadata[k] for k in _METADATA_COLUMNS if k in metadata})
    return row


def iter_chat_rows(path: str | Path) -> Iterator[dict[str, Any]]:
    """Rows of the column schema, one per conversation of a chat log."""
    for number, record in iter_records(path):
        yield _row(record, f"{path}, line {number}")


def chat_record(row: dict[str, Any]) -> dict[str, Any]:
    """A row of the column schema as one chat-log line (what :func:`iter_chat_rows` reads back)."""
    metadata = {k: row[k] for k in _METADATA_COLUMNS if row.get(k) not in (None, "")}
    return {"id": row["instance_id"], "messages": row["trajectory"], "tools": row.get("tools") or [],
            "metadata": metadata}


def write_chat_jsonl(rows: Iterable[dict[str, Any]], path: str | Path) -> Path:
    path = Path(path)
    with path.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(chat_record(row), ensure_ascii=False) + "\n")
    return path
