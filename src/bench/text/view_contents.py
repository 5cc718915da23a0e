"""What a view shows, by provenance: the recorded messages it keeps verbatim, and its text.

A case's messages carry stable ids (``bench.data.cases``: ``m<position>`` in the source row); a
question names the messages holding its evidence by those ids (``Question.evidence_ids``:
the call, its result, the user message; for counts and lists all of them). A view shows a
recorded message *verbatim* when it holds the message of that id with the recorded content
(a masked, cleared, cut or annotated copy is not verbatim). Its *text* is what a reader of
the view sees: each message's content (tool outputs also as the profile cleans them) and
each call's arguments (as JSON and each value as it is)::

    shown = Shown.of(messages, case.messages, case.profile)   # ids kept verbatim, texts
    shown.shows(evidence_ids, spans)            # all evidence verbatim, or every span in the text

Evidence is shown when every evidence message is kept verbatim, or when every *span* of the
answer (the texts a question type names for its reference, ``QuestionType.spans``) is
present verbatim in one text of the view (as a whole token: not inside a longer word or
number), in a kept message, a summary or a placeholder alike. A type whose answer is not a
text span (a count, a list) names no span: only its messages show it. Both parts only grow
with what a view holds: a view that holds every message of another shows all it shows.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from bench.profiles import OPENHANDS, Profile
from bench.text.content import content_text

__all__ = ["Shown", "same_message", "verbatim_ids", "message_texts", "span_present"]


def same_message(message: BaseMessage, recorded: BaseMessage) -> bool:
    """``message`` is ``recorded`` as it was recorded: same kind, content, calls and call id."""
    if message is recorded:
        return True
    if message.type != recorded.type or message.content != recorded.content:
        return False
    if isinstance(recorded, AIMessage):
        return isinstance(message, AIMessage) and _calls(message) == _calls(recorded)
    if isinstance(recorded, ToolMessage):
        return isinstance(message, ToolMessage) and message.tool_call_id == recorded.tool_call_id
    return True


def _calls(message: AIMessage) -> list[tuple[Any, Any, str]]:
    return [(c.get("id"), c.get("name"), json.dumps(c.get("args"), sort_keys=True, default=str))
            for c in message.tool_calls]


def verbatim_ids(messages: Iterable[BaseMessage], recorded: Sequence[BaseMessage]) -> list[str]:
    """Ids of the recorded messages that ``messages`` hold verbatim, in the order they are held."""
    by_id = {m.id: m for m in recorded if m.id}
    kept = []
    for message in messages:
        original = by_id.get(message.id) if message.id else None
        if original is not None and same_message(message, original):
            kept.append(str(message.id))
    return kept


def _leaves(value: Any) -> Iterable[str]:
    if isinstance(value, dict):
        for item in value.values():
            yield from _leaves(item)
    elif isinstance(value, list):
        for item in value:
            yield from _leaves(item)
    elif isinstance(value, str):
        yield value
    elif value is not None:
        yield json.dumps(value)


def message_texts(message: BaseMessage, profile: Profile = OPENHANDS) -> list[str]:
    """The texts a reader sees of one message: its content (a tool output also as the profile
    cleans it), and of each call its arguments as one JSON line and each value as it is."""
    content = content_text(message.content)
    texts = [content]
    if isinstance(message, ToolMessage):
        cleaned = profile.clean(content)
        if cleaned != content:
            texts.append(cleaned)
    if isinstance(message, AIMessage):
        for call in message.tool_calls:
            args = call.get("args") or {}
            texts.append(json.dumps(args, ensure_ascii=False, sort_keys=True))
            texts.extend(_leaves(args))
    return [t for t in texts if t]


def span_present(span: str, text: str) -> bool:
    """``span`` is in ``text`` as a whole token: where it begins (ends) with a letter or digit,
    the text has none right before (after) it, so ``42`` is not present in ``1423``."""
    if not span:
        return False
    start = text.find(span)
    while start >= 0:
        end = start + len(span)
        before_ok = not (span[0].isalnum() and start > 0 and (text[start - 1].isalnum() or text[start - 1] == "_"))
        after_ok = not (span[-1].isalnum() and end < len(text) and (text[end].isalnum() or text[end] == "_"))
        if before_ok and after_ok:
            return True
        start = text.find(span, start + 1)
    return False


@dataclass
class Shown:
    """What a list of messages shows: the recorded messages held verbatim (``ids``) and the
    texts a reader sees (one per message part, ``message_texts``)."""

    ids: set[str] = field(default_factory=set)
    texts: list[str] = field(default_factory=list)

    @classmethod
    def of(cls, messages: Sequence[BaseMessage], recorded: Sequence[BaseMessage], profile: Profile = OPENHANDS) -> Shown:
        return cls(set(verbatim_ids(messages, recorded)),
                   [text for message in messages for text in message_texts(message, profile)])

    def with_texts(self, texts: Iterable[str], ids: Iterable[str] = ()) -> Shown:
        """This, plus more texts (outputs opened through handles) and the ids they restore."""
        return Shown(self.ids | set(ids), [*self.texts, *texts])

    def holds(self, evidence_ids: Sequence[str]) -> bool:
        """Every evidence message is shown verbatim (a question without evidence messages: never)."""
        return bool(evidence_ids) and all(i in self.ids for i in evidence_ids)

    def has_spans(self, spans: Sequence[str] | None) -> bool:
        """Every span is present verbatim in one of the texts (no span: never)."""
        if not spans:
            return False
        return all(any(span_present(span, text) for text in self.texts) for span in spans)

    def shows(self, evidence_ids: Sequence[str], spans: Sequence[str] | None) -> bool:
        return self.holds(evidence_ids) or self.has_spans(spans)
