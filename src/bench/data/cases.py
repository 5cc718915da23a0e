"""Row -> case conversion (spec 1.2): chat messages, clean tool schemas, rejections.

A row becomes a :class:`~bench.store.schema.Case` with LangChain messages, or a
:class:`~bench.store.schema.Rejected` with a reason. Nothing is silently repaired except the
two documented trailing cases (a final ``finish`` call without reply, and a trailing
assistant message whose calls lack results). Every message gets a stable id, ``m<position>``
(its position in the source trajectory): questions name their evidence by these ids and views
the messages they keep verbatim (``bench.answering.evidence``).

    from bench.data.cases import row_to_case
    case_or_rejected = row_to_case(row, source_row=0)
"""

from __future__ import annotations

import json
import logging
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from bench.extract.history import unpaired
from bench.profiles import OPENHANDS, Profile
from bench.sources.chatlog import UNREADABLE
from bench.store.schema import Case, Rejected
from bench.text.content import content_text

__all__ = ["row_to_case", "strip_nulls", "too_deep", "MAX_NESTING", "RejectedRow"]

log = logging.getLogger(__name__)


class RejectedRow(ValueError):
    """A row that cannot become a valid case; the message is the reason."""


# Deeper than this a row is not a trajectory but a hostile or broken one: rejected before any
# recursive code (here, LangChain, pydantic, JSON writers) meets Python's recursion limit.
MAX_NESTING = 100


def strip_nulls(value: Any, _depth: int = 0) -> Any:
    """Recursively drop keys whose value is null (parquet's padding of tool schemas).

    RejectedRow when ``value`` nests deeper than :data:`MAX_NESTING` levels."""
    if _depth > MAX_NESTING:
        raise RejectedRow(f"nested more than {MAX_NESTING} levels deep")
    if isinstance(value, dict):
        return {k: strip_nulls(v, _depth + 1) for k, v in value.items() if v is not None}
    if isinstance(value, (list, tuple)):
        return [strip_nulls(v, _depth + 1) for v in value]
    if hasattr(value, "tolist"):  # numpy arrays from pandas-read parquet
        return strip_nulls(value.tolist(), _depth)
    return value


def too_deep(value: Any) -> bool:
    """True when ``value`` nests deeper than :data:`MAX_NESTING` (iterative: any depth is safe)."""
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_NESTING:
            return True
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend((v, depth + 1) for v in item)
    return False


def _loads(text: str) -> Any:
    """``json.loads``; JSON nested past the parser's recursion limit is a JSONDecodeError like any bad JSON."""
    try:
        return json.loads(text)
    except RecursionError:
        raise json.JSONDecodeError(f"nested more than {MAX_NESTING} levels deep", text, 0) from None


def _parse_calls(raw_calls: Any, position: int) -> list[dict[str, Any]]:
    """OpenAI's call shape ``{id, type, function: {name, arguments}}``, or tau2-bench's own
    ``{id, name, arguments: {...}, requestor}`` (its ``ToolCall``: no ``function`` object)."""
    calls = []
    for raw in strip_nulls(raw_calls) or []:
        if not isinstance(raw, dict) or not isinstance(raw.get("function") or {}, dict):
            raise RejectedRow(f"message {position}: a tool call that is not an object with a function object")
        function = raw.get("function") or ({"name": raw["name"], "arguments": raw.get("arguments")}
                                           if "function" not in raw and "name" in raw else {})
        name = function.get("name")
        call_id = raw.get("id")
        if not name or not call_id:
            raise RejectedRow(f"message {position}: tool call without name or id")
        if not isinstance(name, str) or not isinstance(call_id, str):
            raise RejectedRow(f"message {position}: tool call id and function name must be strings "
                              f"(got {type(call_id).__name__} and {type(name).__name__})")
        arguments = function.get("arguments")
        if isinstance(arguments, dict):
            args = arguments
        elif arguments is not None and not isinstance(arguments, str):
            raise RejectedRow(f"message {position}: arguments of {name} call {call_id} are a "
                              f"{type(arguments).__name__}, not a JSON object or its text")
        else:
            try:
                args = _loads(arguments or "{}")
            except json.JSONDecodeError as err:
                raise RejectedRow(
                    f"message {position}: arguments of {name} call {call_id} are not valid "
                    f"JSON ({err.msg} at char {err.pos})"
                ) from None
            if not isinstance(args, dict):
                raise RejectedRow(
                    f"message {position}: arguments of {name} call {call_id} are not a JSON object"
                )
        if too_deep(args):
            raise RejectedRow(f"message {position}: arguments of {name} call {call_id} are nested more than "
                              f"{MAX_NESTING} levels deep")
        calls.append({"name": name, "args": args, "id": call_id, "type": "tool_call"})
    return calls


def _to_messages(trajectory: list[dict[str, Any]], profile: Profile = OPENHANDS
                 ) -> tuple[str, list[BaseMessage], list[int]]:
    """System prompt, history messages, and each message's position in the trajectory (roles
    the profile maps are read as the role they map to; "skip" drops the message)."""
    system_prompt = ""
    messages: list[BaseMessage] = []
    positions: list[int] = []
    for position, raw in enumerate(trajectory):
        role = profile.role_of(raw.get("role"))
        if role == "skip":
            continue
        text = content_text(raw.get("content"))
        if role == "system":
            if messages or system_prompt:
                raise RejectedRow(f"message {position}: system message inside the history")
            system_prompt = text
            continue
        if role == "tool" and raw.get("requestor") == "user":
            continue  # tau2-bench: the simulated user's own tool (its phone), a call the agent never saw
        positions.append(position)
        message_id = f"m{position}"  # stable: the message's position in the source trajectory
        if role == "user":
            messages.append(HumanMessage(content=text, id=message_id))
        elif role == "assistant":
            messages.append(AIMessage(content=text, tool_calls=_parse_calls(raw.get("tool_calls"), position),
                                      id=message_id))
        elif role == "tool":
            # tau2-bench's ToolMessage names the call it answers ``id`` (OpenAI: ``tool_call_id``)
            call_id = raw.get("tool_call_id") or raw.get("id")
            if not call_id:
                raise RejectedRow(f"message {position}: tool result without tool_call_id")
            if not isinstance(call_id, str) or not isinstance(raw.get("name") or "", str):
                raise RejectedRow(f"message {position}: tool result's tool_call_id and name must be strings "
                                  f"(got {type(call_id).__name__} and {type(raw.get('name')).__name__})")
            messages.append(ToolMessage(content=text, tool_call_id=call_id, name=raw.get("name"), id=message_id))
        else:
            hint = f" (map or skip it with dataset.roles, e.g. {{{role}: skip}})" if isinstance(role, str) else ""
            raise RejectedRow(f"message {position}: unknown role {role!r}{hint}")
    return system_prompt, messages, positions


def _drop_trailing(messages: list[BaseMessage], profile: Profile, dropped: list[str] | None = None
                   ) -> list[BaseMessage]:
    """Drop a final finish call without reply, and a trailing call group missing results;
    ``dropped`` collects the names of the dropped calls (every call of a dropped group)."""
    answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
    # The last assistant message that carries calls, and the tool results after it.
    last_ai = next(
        (i for i in range(len(messages) - 1, -1, -1) if isinstance(messages[i], AIMessage)), None
    )
    if last_ai is None:
        return messages
    ai = messages[last_ai]
    if not isinstance(ai, AIMessage) or not ai.tool_calls:  # an AIMessage (found so): with calls?
        return messages
    trailing_only_results = all(isinstance(m, ToolMessage) for m in messages[last_ai + 1 :])
    if not trailing_only_results:
        return messages
    missing = [c for c in ai.tool_calls if c["id"] not in answered]
    if not missing:
        return messages
    if dropped is not None:
        dropped.extend(c["name"] for c in ai.tool_calls)
    if len(ai.tool_calls) == 1 and profile.is_finish(ai.tool_calls[0]["name"]):
        # Final finish without reply: drop the call; the message's own text stays.
        kept = messages[:last_ai]
        if ai.content:
            kept.append(AIMessage(content=ai.content, id=ai.id))
        return kept
    # Trailing assistant message with unanswered calls: drop it with its other results.
    return messages[:last_ai]


def _check_pairing(messages: list[BaseMessage], positions: list[int]) -> None:
    """Reject unpaired calls and results; positions name trajectory messages."""
    for kind, _index, ids in unpaired(messages):  # the first break of the step invariant (bench.extract.history)
        call_id, where = next(iter(ids.items()))
        if kind == "result":
            raise RejectedRow(f"tool result for {call_id} (message {positions[where]}) has no call")
        raise RejectedRow(f"tool call {call_id} (message {positions[where]}) has no result")


_TRUE, _FALSE = {"true", "1", "yes", "y", "t"}, {"false", "0", "no", "n", "f"}


def _resolved(value: Any) -> bool | None:
    """``resolved`` as a boolean: a string ``"true"``/``"false"`` (also 1/0, yes/no) is parsed,
    so ``filters.resolved`` compares booleans; empty, null and NaN are None."""
    if isinstance(value, str):
        text = value.strip().lower()
        if text in _TRUE | _FALSE:
            return text in _TRUE
        if text in ("", "null", "none"):
            return None
        raise RejectedRow(f"resolved is {value!r}, not a boolean")
    return None if value is None or value != value else bool(value)


def _tools(value: Any) -> list[Any]:
    """The row's tool schemas: a JSON string is parsed; anything but a list of objects is rejected."""
    tools = value
    if isinstance(tools, str):
        try:
            tools = _loads(tools) if tools.strip() else None
        except json.JSONDecodeError as err:
            raise RejectedRow(f"tools is a string that is not valid JSON ({err.msg} at char {err.pos})") from None
    if tools is not None and not hasattr(tools, "tolist") and not isinstance(tools, (list, tuple)):
        raise RejectedRow(f"tools is a JSON {type(tools).__name__}, not a list of tool schemas")
    tools = strip_nulls(tools)
    if any(not isinstance(t, dict) for t in tools or []):
        raise RejectedRow("tools holds something other than tool schema objects")
    for schema in tools or []:
        function = schema.get("function", schema)
        name = function.get("name") if isinstance(function, dict) else None
        if not isinstance(function, dict) or (name is not None and not isinstance(name, str)):
            raise RejectedRow(f"tools: a tool schema's name must be a string (got {type(name).__name__})")
    return tools or []


def _case_id(instance_id: str, source_row: int) -> str:
    return f"{instance_id}@{source_row}"


def row_to_case(row: dict[str, Any], source_row: int, profile: Profile = OPENHANDS) -> Case | Rejected:
    """Convert one source row; never raises for bad content, returns :class:`Rejected`.

    ``profile`` says what the source's tools mean (its finish tools, its repository root)."""
    instance_id = str(row.get("instance_id") or f"row{source_row}")
    trajectory_id = str(row.get("trajectory_id") or "")
    if row.get(UNREADABLE):
        return Rejected(source_row, instance_id, str(row[UNREADABLE]), trajectory_id)
    try:
        resolved = _resolved(row.get("resolved"))  # values of the wrong kind first
        tools = _tools(row.get("tools"))
        trajectory = strip_nulls(row.get("trajectory"))
        if isinstance(trajectory, str):
            try:
                trajectory = _loads(trajectory)
            except json.JSONDecodeError:
                raise RejectedRow("trajectory is a string that is not valid JSON") from None
        if not trajectory:
            raise RejectedRow("empty trajectory")
        if not all(isinstance(m, dict) for m in trajectory):
            raise RejectedRow("trajectory holds something other than message objects")
        system_prompt, messages, positions = _to_messages(trajectory, profile)
        trailing: list[str] = []
        messages = _drop_trailing(messages, profile, trailing)
        _check_pairing(messages, positions)
        if not any(isinstance(m, HumanMessage) for m in messages):
            raise RejectedRow("no user message")
        first_user = next(m for m in messages if isinstance(m, HumanMessage))
        if trailing:  # the run ended on calls that got no result: they are not in the history
            log.info("case %s: dropped the trailing call(s) without result: %s",
                     _case_id(instance_id, source_row), ", ".join(trailing))
        return Case(
            case_id=_case_id(instance_id, source_row),
            instance_id=instance_id,
            repo=str(row.get("repo") or ""),
            source_row=source_row,
            trajectory_id=trajectory_id,
            system_prompt=system_prompt,
            messages=messages,
            tools=tools,
            model_patch=str(row.get("model_patch") or ""),
            repo_root=profile.repo_root(content_text(first_user.content)),
            resolved=resolved,
            exit_status=row.get("exit_status"),
            profile=profile,
            dropped_trailing=trailing,
        )
    except RejectedRow as err:
        return Rejected(source_row, instance_id, str(err), trajectory_id)
    except RecursionError:  # a nesting no check above caught: still this row's problem only
        return Rejected(source_row, instance_id, f"nested too deeply (more than {MAX_NESTING} levels)",
                        trajectory_id)
    except (TypeError, AttributeError, KeyError, json.JSONDecodeError, ValueError) as err:  # pydantic: ValueError
        return Rejected(source_row, instance_id, f"malformed row: {type(err).__name__}: {err}", trajectory_id)
