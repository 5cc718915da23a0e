"""Summarizers for ``arm=compact`` and the summary prompts they follow.

A summarizer turns a history into one summary text under a prompt::

    text, usage = summarizer.summarize(messages, prompt)

``ExtractiveSummarizer`` (``summarizer=offline``) needs no LLM: it fills the prompt's
own numbered sections with excerpts copied from the history by fixed, general rules
(user requests, files touched, commands with short output excerpts, errors, current
work) and labels its output as extractive. An LLM summarizer (``summarizer=openai``)
has the same interface.

The prompts, and the sections a summary follows, are read by :mod:`bench.prompts`.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, ClassVar, Protocol

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from bench.core.components import Component, ModelClient
from bench.core.errors import ConfigError
from bench.extract.history import args_text, pair_results
from bench.profiles import OPENHANDS, Profile
from bench.prompts import PROMPT_NAMES, load_prompt, prompt_sections
from bench.text.content import content_text
from bench.text.formats import (
    cut,
    find_handles,
    format_excerpt,
    format_file_item,
    format_omitted,
    handle_ref,
    is_placeholder,
    strip_stored_note,
)
from bench.text.tokens import TokenCounter

__all__ = [
    "Summarizer",
    "ExtractiveSummarizer",
    "EXTRACTIVE_LABEL",
    "PROMPT_NAMES",
    "load_prompt",
    "prompt_sections",
]

class Summarizer(Component, Protocol):
    """Turns a history into one summary text following ``prompt``: ``messages`` is a valid chat history
    (every call has its results) that may hold placeholders of cleared outputs and
    ``read_tool_output(handle="...")`` references to stored ones; ``profile`` says what its tools mean.
    Returns the text and a usage dict (model, tokens, cost...); ``clients()``: its model clients (``[]``
    offline). It may also take ``within_tokens`` (``bench.policies.budget.summarize_within``)."""

    name: str

    @property
    def calls_model(self) -> bool: ...  # summarize() calls a model (the runner then builds views concurrently)

    def summarize(self, messages: list[BaseMessage], prompt: str,
                  profile: Profile = OPENHANDS) -> tuple[str, dict[str, Any]]: ...


EXTRACTIVE_LABEL = (
    "[EXTRACTIVE SUMMARY: produced offline by rules, not written by a language model. "
    "Each section holds excerpts copied from the earlier history.]"
)

# A line that reports a problem: exception names, tracebacks, failure words.
_ERROR_LINE = re.compile(
    r"\b(?:[A-Z]\w*(?:Error|Exception)\b|Traceback\b|FAILED\b|FAILURE\b|ERROR\b|[Ee]rror:|fatal:|"
    r"No replacement was performed)"
)


@dataclass
class _Call:
    """One tool call of the history as the summarizer reads it."""

    index: int
    name: str
    args: dict[str, Any]
    raw: str | None  # result as recorded in the history (None: no result)
    profile: Profile = OPENHANDS

    @property
    def output(self) -> str:
        if self.raw is None or is_placeholder(self.raw):
            return ""
        return self.profile.clean_result(strip_stored_note(self.raw), self.name, self.args)

    @property
    def handle(self) -> str | None:
        found = find_handles(self.raw)
        return found[-1] if found else None

    @property
    def exit_code(self) -> int | None:
        found = self.profile.exit_codes(self.raw)
        return found[-1] if found else None


_one_line = cut  # text on one line, cut to a length (bench.text.formats)


@functools.lru_cache(maxsize=1)
def _counter() -> TokenCounter:
    """The token counter the budget is measured with (the job's default encoding)."""
    return TokenCounter()


@dataclass
class ExtractiveSummarizer:
    """Offline, deterministic summarizer that copies excerpts into the prompt's sections."""

    name: str = "extractive"
    calls_model: ClassVar[bool] = False  # offline rules, no model
    max_items: int = 40  # items per section; the newest are kept when there are more
    excerpt_chars: int = 200  # length of one excerpt (output line, command, message)
    request_chars: int = 1500  # length kept of the first user request
    # The summary's budget (issue 17, item 7): at most max_fraction of the tokens of the messages
    # it replaces, and at most max_tokens (None: no absolute cap). Over budget, fewer items per
    # section (the newest kept), then shorter excerpts, until it fits or nothing is left to cut.
    max_tokens: int | None = None
    max_fraction: float | None = 0.2

    def clients(self) -> list[ModelClient]:
        return []  # no model

    def __post_init__(self) -> None:
        if self.max_tokens is not None and (isinstance(self.max_tokens, bool) or int(self.max_tokens) < 1):
            raise ConfigError(f"summarizer.max_tokens must be a positive integer or null, got {self.max_tokens!r}")
        if self.max_fraction is not None and not 0 < float(self.max_fraction) <= 1:
            raise ConfigError(f"summarizer.max_fraction must be in (0, 1] or null, got {self.max_fraction!r}")

    def budget(self, replaced_tokens: int) -> int | None:
        """The most tokens a summary of ``replaced_tokens`` tokens may take (None: unbounded)."""
        caps = [int(self.max_tokens)] if self.max_tokens is not None else []
        if self.max_fraction is not None:
            caps.append(int(float(self.max_fraction) * replaced_tokens))
        return min(caps) if caps else None

    def summarize(self, messages: list[BaseMessage], prompt: str,
                  profile: Profile = OPENHANDS, within_tokens: int | None = None) -> tuple[str, dict[str, Any]]:
        """``within_tokens``: the most tokens the caller allows (an arm's budget), besides this
        summarizer's own ``max_tokens`` / ``max_fraction``."""
        counter = _counter()
        budget = self.budget(counter.count_messages(messages))
        if within_tokens is not None:
            budget = within_tokens if budget is None else min(budget, within_tokens)
        calls = self._calls(messages, profile)  # read once: every shrunk rendering reads the same calls
        text = self._render(messages, prompt, calls)
        if budget is not None and counter.count_text(text) > budget:
            for smaller in self._smaller():
                text = smaller._render(messages, prompt, calls)
                if counter.count_text(text) <= budget:
                    break
            text += self._lost_handles(text, calls)
        return text, {"model": self.name, "calls": 1, "input_tokens": 0, "output_tokens": 0}

    def _lost_handles(self, text: str, calls: list[_Call]) -> str:
        """Stored outputs the shrunk summary no longer names, one short line each: a handle is what
        lets the reader open the output again, so shrinking drops the excerpts, never the handles."""
        lost = [c for c in calls if c.handle and c.handle not in text]
        if not lost:
            return ""
        short = replace(self, max_items=len(lost), excerpt_chars=400)  # labels up to 200 chars: the reader matches them
        return "\n\nStored outputs (open with read_tool_output):\n" + "\n".join(
            f"- {item}" for item in short._stored(lost))

    def _smaller(self):
        """Ever smaller versions of this summarizer: items per section halved down to one, then
        excerpts (and the kept request) halved down to 25 characters."""
        items = self.max_items
        while items > 1:
            items //= 2
            yield replace(self, max_items=items)
        chars, request = self.excerpt_chars, self.request_chars
        while chars > 25 or request > 25:
            chars, request = max(25, chars // 2), max(25, request // 2)
            yield replace(self, max_items=1, excerpt_chars=chars, request_chars=request)

    def _render(self, messages: list[BaseMessage], prompt: str, calls: list[_Call]) -> str:
        parts = [EXTRACTIVE_LABEL]
        for number, title in enumerate(prompt_sections(prompt), start=1):
            items = self._section(title, messages, calls)
            body = "\n".join(f"- {item}" for item in items) if items else "- (nothing found by the rules)"
            parts.append(f"{number}. {title}:\n{body}")
        return "\n\n".join(parts)

    # --- reading the history ---------------------------------------------------------------

    @staticmethod
    def _calls(messages: list[BaseMessage], profile: Profile) -> list[_Call]:
        pairs = pair_results(messages)
        return [
            _Call(index, call["name"], call.get("args") or {},
                  content_text(messages[pairs[(index, position)]].content) if (index, position) in pairs else None,
                  profile)
            for index, message in enumerate(messages) if isinstance(message, AIMessage)
            for position, call in enumerate(message.tool_calls)
        ]

    def _cap(self, items: list[str]) -> list[str]:
        if len(items) <= self.max_items:
            return items
        return [format_omitted(len(items) - self.max_items), *items[-self.max_items :]]

    def _section(self, title: str, messages: list[BaseMessage], calls: list[_Call]) -> list[str]:
        key = title.lower()
        # Order matters: "All user messages" is not "requests", "Current work and next
        # step" is current work, "Errors and fixes" is errors.
        if "user message" in key:
            return self._user_messages(messages)
        if any(w in key for w in ("current", "state", "recent")):
            return self._current(messages, calls)
        if any(w in key for w in ("pending", "open", "next", "remaining", "todo")):
            return self._pending(messages)
        if any(w in key for w in ("error", "fail", "incident", "fix", "issue")):
            return self._errors(calls)
        if any(w in key for w in ("request", "intent", "goal", "task", "objective")):
            return self._requests(messages)
        if any(w in key for w in ("file", "code", "artefact", "artifact", "change")):
            return self._files(calls)
        if any(w in key for w in ("command", "action", "timeline", "log", "observation", "tool", "step")):
            return self._commands(calls)
        if any(w in key for w in ("evidence", "index", "stored", "reference", "where to find")):
            return self._stored(calls)
        if any(w in key for w in ("concept", "technical", "environment", "context", "system", "setup")):
            return self._environment(calls)
        if any(w in key for w in ("solv", "decision", "finding", "approach", "progress", "reasoning")):
            return self._notes(messages)
        if any(w in key for w in ("detail", "fact", "important")):
            return self._environment(calls) + self._files(calls)
        return []

    def _user_texts(self, messages: list[BaseMessage]) -> list[str]:
        return [content_text(m.content) for m in messages if isinstance(m, HumanMessage)]

    def _requests(self, messages: list[BaseMessage]) -> list[str]:
        texts = self._user_texts(messages)
        if not texts:
            return []
        items = [f"Initial request: {_one_line(texts[0], self.request_chars)}"]
        items += [f"Later request: {_one_line(t, self.excerpt_chars)}" for t in texts[1:]]
        return self._cap(items)

    def _user_messages(self, messages: list[BaseMessage]) -> list[str]:
        return self._cap([_one_line(t, self.excerpt_chars) for t in self._user_texts(messages)])

    def _files(self, calls: list[_Call]) -> list[str]:
        ops: dict[str, list[str]] = {}
        for call in calls:
            path = call.args.get("path")
            if isinstance(path, str) and path:
                ops.setdefault(path, []).append(str(call.args.get("command") or call.name))
        items = []
        for path, used in ops.items():
            items.append(format_file_item(path, {op: used.count(op) for op in dict.fromkeys(used)}))
        return self._cap(items)

    def _action(self, call: _Call) -> str:
        """A call as a timeline item names it: `command`, an edit with its path, or name {arguments}."""
        profile = call.profile
        if profile.is_shell(call.name):
            return f"`{_one_line(profile.command_of(call.args), self.excerpt_chars)}`"
        if profile.is_editor(call.name) or "path" in call.args:
            path_arg = profile.editor_path_arg if profile.is_editor(call.name) else "path"
            command = call.args.get(profile.editor_command_arg, "")
            return f"{call.name} {command} {call.args.get(path_arg)}".replace("  ", " ")
        return f"{call.name} {_one_line(args_text(call.args), self.excerpt_chars)}"

    def _describe(self, call: _Call) -> str:
        what = self._action(call)
        output = None if call.raw is None else call.output
        return f"{what} -> " + format_excerpt(output, cleared=call.raw is not None and is_placeholder(call.raw),
                                              limit=self.excerpt_chars, exit_code=call.exit_code,
                                              handle=call.handle)

    def _commands(self, calls: list[_Call]) -> list[str]:
        return self._cap([self._describe(c) for c in calls
                          if not c.profile.is_think(c.name) and not c.profile.is_finish(c.name)])

    def _errors(self, calls: list[_Call]) -> list[str]:
        items = []
        for call in calls:
            line = next((ln for ln in call.output.splitlines() if _ERROR_LINE.search(ln)), None)
            code = call.exit_code
            if line is None and code in (None, 0):
                continue
            what = (_one_line(call.profile.command_of(call.args), self.excerpt_chars // 2)
                    if call.profile.is_shell(call.name) else f"{call.name} {call.args.get('path', '')}".strip())
            detail = _one_line(line, self.excerpt_chars) if line else f"exit code {code}"
            stored = f" (stored: {handle_ref(call.handle)})" if call.handle else ""
            items.append(f"{what}: {detail}{stored}")
        return self._cap(items)

    def _stored(self, calls: list[_Call]) -> list[str]:
        items = []
        for call in calls:
            if call.handle:
                label = (call.profile.command_of(call.args) if call.profile.is_shell(call.name)
                         else call.args.get("path"))
                items.append(f"{handle_ref(call.handle)}: {call.name} "
                             f"{_one_line(str(label or ''), self.excerpt_chars // 2)}")
        return self._cap(items)

    def _environment(self, calls: list[_Call]) -> list[str]:
        tools = sorted({c.name for c in calls})
        dirs = list(dict.fromkeys(
            d for c in calls for d in c.profile.working_dirs(c.raw)
        ))
        suffixes = sorted({Path(str(c.args["path"])).suffix for c in calls
                           if isinstance(c.args.get("path"), str)
                           and re.fullmatch(r"\.[A-Za-z][A-Za-z0-9]{0,7}", Path(str(c.args["path"])).suffix)})
        items = [f"Tools used: {', '.join(tools)}"] if tools else []
        if dirs:
            items.append(f"Working directories: {', '.join(dirs[-5:])}")
        if suffixes:
            items.append(f"File types touched: {', '.join(suffixes)}")
        return items

    def _assistant_texts(self, messages: list[BaseMessage]) -> list[str]:
        return [content_text(m.content) for m in messages
                if isinstance(m, AIMessage) and content_text(m.content).strip()]

    def _notes(self, messages: list[BaseMessage]) -> list[str]:
        return self._cap([_one_line(t, self.excerpt_chars) for t in self._assistant_texts(messages)])

    def _current(self, messages: list[BaseMessage], calls: list[_Call]) -> list[str]:
        items = []
        texts = self._assistant_texts(messages)
        if texts:
            items.append(f"Last assistant message: {_one_line(texts[-1], self.excerpt_chars * 2)}")
        items += [f"Recent action: {self._describe(c)}" for c in calls[-3:]]
        return items

    def _pending(self, messages: list[BaseMessage]) -> list[str]:
        texts = self._user_texts(messages)
        if not texts:
            return []
        return [f"Most recent user request: {_one_line(texts[-1], self.excerpt_chars * 2)}",
                "Pending work is not inferred by the extractive rules."]

