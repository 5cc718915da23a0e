"""The ``compact`` arm (spec 2.3): the sre-agent's compaction, replayed, with its variants.

Shipped behaviour, replayed over the recorded trajectory:

- **micro_compact** runs before every recorded model call (each assistant message is one
  call) on the stored history, so what it clears stays cleared: a tool result from an
  earlier turn that is longer than ``min_chars`` and lies outside the newest
  ``max(keep_recent, results of the current turn)`` results becomes the fixed placeholder.
  It runs once more when the question opens a new turn.
- **auto_compact**: when the history exceeds ``threshold x context_window`` tokens (or
  always at the question when ``force``), everything before the last user message is
  replaced by one summary; the last user message stays verbatim. At the question the
  question is that message, so the whole recorded history is summarized.
- **natural trigger** (``force=false``): auto_compact fires before any recorded model call
  whose history is over the threshold, as often as the history refills. When the current
  turn alone filled the window (nothing but a summary before its user message), the turn's
  work is summarized with the previous summary, and its user message stays verbatim after
  the new summary. A later summary therefore summarizes the previous one plus what came
  after it. ``info.compactions`` records each (``at_message``, ``tokens_before``,
  ``tokens_after``, summarizer call), ``info.evidence_generation`` the generation (0: before
  the first compaction, k: after the k-th) each question's evidence was last seen in.

Mechanisms (``cfg.mechanism``; each a switch, presets cumulative):
``tail`` keeps the newest ``tail_fraction`` of the history's tokens verbatim after the
summary, cut at a message boundary, leading orphan results removed (lost: they are
neither summarized nor kept); ``stepcut`` cuts that tail between whole steps only (and
implies a tail); ``offload`` stores large outputs and everything removed, placeholders
carry handles (``read_tool_output(handle=...)``), the summary prompt asks to cite them;
``collapse`` folds settled retry chains inside a turn into the final attempt plus a note;
``verify`` adds guidance to open stored outputs before stating exact details.

Budget (``arm.budget``, :mod:`bench.policies.budget`): a compaction makes a view of the case's
target size, whatever the mechanism: the summary is capped at ``SUMMARY_SHARE`` of the target
(the summarizer is given the cap, and its reply is cut there), and the most recent part of the
history is kept verbatim after it, filling the rest of the target (cut between whole steps
with ``stepcut``, else at a message boundary as ``tail`` cuts; ``tail_fraction`` is not read).
micro_compact runs as configured before every recorded model call, but not at the question:
there the sized compaction decides what stays (micro_compact would clear the newest results
the budget pays for, leaving the view far below its target). With the forced compaction (``force=true``, the default) the
replay is unchanged and only the question's compaction is sized; with the natural trigger
(``force=false``) the trigger is the target too (the smaller of it and ``threshold x
context_window``), so the history never grows past the budget before a model call.

Run::

    uv run python -m bench.main arm=compact prompt=hybrid mechanism=stepcut
    uv run python -m bench.main -m arm=compact mechanism=shipped,tail,stepcut,offload,collapse,verify
    uv run python -m bench.main arm=compact mechanism=shipped mechanism.offload=true
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from bench.core.errors import ConfigError
from bench.core.typecheck import check_types
from bench.extract.history import args_text, calls_of
from bench.policies.budget import SUMMARY_SHARE, Budget, summarize_within
from bench.policies.compact_settings import (
    DEFAULT_GUIDANCE,
    DEFAULT_OFFLOAD_NOTE,
    AutoCompact,
    Mechanisms,
    MicroCompact,
    typed,
)
from bench.policies.policy import PolicyContext, SummarizingArm, make_view, steps
from bench.policies.retries import call_key, command_key, result_failed
from bench.policies.summarize import ExtractiveSummarizer, Summarizer, load_prompt
from bench.questions import evidence_shown
from bench.store.schema import Case, View
from bench.text.content import content_text, message_text
from bench.text.formats import (
    Attempt,
    find_handles,
    format_retry_note,
    is_placeholder,
    note_detail,
    placeholder,
    stored_note,
)
from bench.text.tokens import TokenCounter
from bench.text.view_contents import Shown

__all__ = [
    "CompactPolicy",
    "MicroCompact",
    "AutoCompact",
    "Mechanisms",
    "DEFAULT_GUIDANCE",
    "DEFAULT_OFFLOAD_NOTE",
    "SUMMARY_HEADER",
    "command_key",
    "result_failed",
    "micro_compact_targets",
]

SUMMARY_HEADER = (
    "This session continues an earlier conversation that ran out of context. "
    "The history before this point was replaced by the summary below."
)
TAIL_NOTE = "The most recent messages follow verbatim."
# A compaction inside one turn: the summary also covers the work after the turn's request.
IN_TURN_NOTE = "The current request follows verbatim; the summary also covers the work done on it so far."

# --- micro_compact ---------------------------------------------------------------------


def micro_compact_targets(
    messages: list[BaseMessage], *, new_turn: bool, min_chars: int = 500, keep_recent: int = 5
) -> list[int]:
    """Indices of the tool results micro_compact clears before the next model call.

    A result is cleared when it is from an earlier turn (before the last user message;
    with ``new_turn`` every result is), longer than ``min_chars`` characters, not already
    a placeholder, and outside the newest ``max(keep_recent, results of the current
    turn)`` results.
    """
    results = [i for i, m in enumerate(messages) if isinstance(m, ToolMessage)]
    if new_turn:
        turn_start, current = len(messages), 0
    else:
        humans = [i for i, m in enumerate(messages) if isinstance(m, HumanMessage)]
        turn_start = humans[-1] if humans else -1
        current = sum(1 for i in results if i > turn_start)
    keep = max(keep_recent, current)
    protected = set(results[-keep:]) if keep > 0 else set()
    return [
        i for i in results
        if i < turn_start and i not in protected
        and not is_placeholder(_text(messages[i])) and len(_text(messages[i])) > min_chars
    ]


# --- the replay ----------------------------------------------------------------------


@dataclass
class _Entry:
    """A message of the stored history, with its index in the recorded one (-1: summary)."""

    orig: int
    message: BaseMessage


def _text(message: BaseMessage) -> str:
    return content_text(message.content)


@dataclass
class CompactPolicy(SummarizingArm):
    """``arm=compact``: micro_compact + auto_compact replayed, plus the chosen mechanisms."""

    name: str = "compact"
    micro_compact: MicroCompact | dict | None = None
    auto_compact: AutoCompact | dict | None = None
    budget: float | int | None = None  # share of each case's history tokens, or tokens (None: as configured)
    # prompt, prompt_name, mechanism (cfg.mechanism) and summarizer (None: extractive), from build_policy
    context: PolicyContext = field(default_factory=PolicyContext, repr=False)
    uses: ClassVar[frozenset[str]] = frozenset({"prompt", "mechanism", "summarizer"})
    order: ClassVar[int] = 30  # reports: after the N-latest arms

    def __post_init__(self) -> None:
        self.micro_compact = typed(MicroCompact, self.micro_compact)
        self.auto_compact = typed(AutoCompact, self.auto_compact)
        self.mechanism: Mechanisms = typed(Mechanisms, self.context.mechanism)
        self.prompt: str | None = self.context.prompt
        self.prompt_name: str = self.context.prompt_name
        given = self.context.summarizer
        self.summarizer: Summarizer = given if given is not None else ExtractiveSummarizer()
        self.counter: TokenCounter = self.context.counter
        # Wrong value types (mechanism.tail=yes) fail here, before any model call.
        check_types(self, "arm")
        check_types(self.micro_compact, "arm.micro_compact")
        check_types(self.auto_compact, "arm.auto_compact")
        check_types(self.mechanism, "mechanism")
        self.limit = Budget.parse(self.budget)
        if self.prompt is None:
            self.prompt = load_prompt(self.prompt_name)
        if not 0 <= self.mechanism.tail_fraction <= 1:
            raise ConfigError(f"mechanism.tail_fraction must be in [0, 1], got {self.mechanism.tail_fraction}")
        if not 0 < self.auto_compact.threshold <= 1:
            raise ConfigError(f"arm.auto_compact.threshold must be in (0, 1], got {self.auto_compact.threshold}")
        if self.auto_compact.context_window <= 0:
            raise ConfigError(f"arm.auto_compact.context_window must be a positive number of tokens, "
                              f"got {self.auto_compact.context_window}")
        config = {
            "name": self.name,
            "micro_compact": asdict(self.micro_compact),
            "auto_compact": asdict(self.auto_compact),
            "mechanism": asdict(self.mechanism),
            "prompt": hashlib.sha256(self.prompt.encode()).hexdigest(),
            "summarizer": getattr(self.summarizer, "name", type(self.summarizer).__name__),
            **({"budget": self.budget} if self.budget is not None else {}),  # unset: the handles stay as they were
        }
        # Handles depend on the whole arm config, so two configs never share one.
        self.fingerprint = hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest()[:16]

    def __call__(self, case: Case) -> View:
        return _Replay(self, case).run()


class _Replay:
    """One case through the compaction: replay call by call, then the question."""

    def __init__(self, policy: CompactPolicy, case: Case) -> None:
        self.p = policy
        self.mech: Mechanisms = policy.mechanism
        self.micro = typed(MicroCompact, policy.micro_compact)  # typed by the policy already: the same object
        self.auto = typed(AutoCompact, policy.auto_compact)
        self.case = case
        self.state: list[_Entry] = []
        self.store: dict[str, str] = {}  # handle -> stored output (offload)
        self.handle_of: dict[int, str] = {}  # recorded index of a result -> its handle
        self.failed: dict[int, bool | None] = {}  # recorded index of a result -> reports a failure
        self.summary: str | None = None
        self.usage: list[dict[str, Any]] = []
        self.stats: dict[str, Any] = {
            "micro_compact": {"replaced_during_replay": 0, "replaced_at_question": 0},
            "auto_compact": {"fired_during_replay": 0, "fired_at_question": False},
            "collapse": {"chains": 0, "attempts_removed": 0, "messages_removed": 0},
            "tail": None,
        }
        # The natural trigger's accounting (force=false): every compaction, and the evidence
        # seen per generation; a forced run's records stay as they were.
        self.compactions: list[dict[str, Any]] = []
        self.seen: dict[str, set[int]] = {q.qid: set() for q in case.questions}
        # arm.budget: the case's target; the natural trigger fires at it (force=false)
        self.target = policy.limit.target(policy.counter.count_messages(case.messages)) if policy.limit else None
        self.threshold = self.auto.threshold_tokens
        if self.target is not None and not self.auto.force:
            self.threshold = min(self.threshold, self.target)
        self.plan: dict[str, Any] | None = None  # the last compaction's sizes under the budget

    # --- driver ----------------------------------------------------------------------

    def run(self) -> View:
        calls = 0
        for orig, message in enumerate(self.case.messages):
            if isinstance(message, AIMessage):
                calls += 1
                self._before_call(at_question=False, at_message=orig)
            self.state.append(_Entry(orig, message))
            if (self.mech.offload and isinstance(message, ToolMessage)
                    and len(_text(message)) > self.mech.offload_min_chars):
                self._stash(orig)  # large outputs are stored as they arrive
        self._note_generation()  # the stored history as the replay leaves it
        tokens_before = self._tokens()
        self._before_call(at_question=True, at_message=len(self.case.messages))  # the question opens a new turn
        return self._view(calls, tokens_before)

    def _before_call(self, at_question: bool, at_message: int) -> None:
        if self.mech.collapse:
            self._collapse()
        if self.micro.enabled and not (at_question and self.target is not None):
            self._micro_compact(at_question)  # under a budget the question's compaction sizes the view
        if self.auto.enabled:
            self._auto_compact(at_question, at_message)

    def _tokens(self, entries: list[_Entry] | None = None) -> int:
        return self.p.counter.count_messages([e.message for e in (self.state if entries is None else entries)])

    # --- offload ---------------------------------------------------------------------

    def _stash(self, orig: int) -> str:
        """Store the recorded output of result ``orig``; its opaque handle."""
        if orig in self.handle_of:
            return self.handle_of[orig]
        message = self.case.messages[orig]
        seed = f"{self.p.fingerprint}\0{self.case.case_id}\0{orig}\0{getattr(message, 'tool_call_id', '')}"
        handle = "out_" + hashlib.sha256(seed.encode()).hexdigest()[:20]
        self.store[handle] = _text(message)
        self.handle_of[orig] = handle
        return handle

    # --- micro_compact ---------------------------------------------------------------

    def _micro_compact(self, at_question: bool) -> None:
        targets = micro_compact_targets(
            [e.message for e in self.state], new_turn=at_question,
            min_chars=self.micro.min_chars, keep_recent=self.micro.keep_recent,
        )
        if targets:
            self._note_generation()  # what is cleared now was seen until now
        for i in targets:
            entry = self.state[i]
            handle = self._stash(entry.orig) if self.mech.offload else None
            entry.message = entry.message.model_copy(update={"content": placeholder(handle)})
        key = "replaced_at_question" if at_question else "replaced_during_replay"
        self.stats["micro_compact"][key] += len(targets)

    # --- collapse --------------------------------------------------------------------

    def _step_key(self, begin: int) -> tuple | None:
        keys = [call_key(self.case.profile, c) for c in calls_of(self.state[begin].message)]
        return None if any(k is None for k in keys) else tuple(keys)

    def _step_failed(self, begin: int, end: int) -> bool | None:
        verdicts = []
        for entry in self.state[begin + 1 : end]:
            if entry.orig not in self.failed:  # judged by the recorded output, even if cleared since
                recorded = self.case.messages[entry.orig]
                self.failed[entry.orig] = result_failed(self.case.profile, _text(recorded))
            verdicts.append(self.failed[entry.orig])
        if any(v is None for v in verdicts) or not verdicts:
            return None
        return any(verdicts)

    def _collapse(self) -> None:
        """Fold settled retry chains: consecutive failed attempts at the same action inside a
        turn, followed by a successful attempt. A chain without its success stays intact."""
        settled: list[tuple[list[tuple[int, int]], tuple[int, int]]] = []
        chain: list[tuple[int, int]] = []
        chain_key: tuple | None = None
        for begin, end in steps([e.message for e in self.state]):
            message = self.state[begin].message
            key = self._step_key(begin) if isinstance(message, AIMessage) and message.tool_calls else None
            failed = self._step_failed(begin, end) if key is not None else None
            if key is None or failed is None:  # a user message, a reply, or an unknown outcome
                chain, chain_key = [], None
            elif failed:
                if chain and key == chain_key:
                    chain.append((begin, end))
                else:
                    chain, chain_key = [(begin, end)], key
            else:
                if chain and key == chain_key:
                    settled.append((chain, (begin, end)))
                chain, chain_key = [], None
        if settled:
            self._note_generation()  # what the folded attempts showed was seen until now
        for attempts, (final, _) in reversed(settled):  # from the end, so indices stay valid
            note = format_retry_note([self._attempt(b, e) for b, e in attempts])
            head = self.state[final].message
            body = _text(head)
            self.state[final].message = head.model_copy(update={"content": f"{note}\n\n{body}" if body else note})
            for begin, end in reversed(attempts):
                self.stats["collapse"]["messages_removed"] += end - begin
                del self.state[begin:end]
            self.stats["collapse"]["chains"] += 1
            self.stats["collapse"]["attempts_removed"] += len(attempts)

    def _attempt(self, begin: int, end: int) -> Attempt:
        """A failed attempt as its note describes it: each call's action, each result's last line."""
        actions = [self._action(c["name"], c.get("args") or {}) for c in calls_of(self.state[begin].message)]
        details = []
        for entry in self.state[begin + 1 : end]:
            lines = [ln for ln in self.case.profile.clean(_text(self.case.messages[entry.orig])).splitlines()
                     if ln.strip()]
            handle = self._stash(entry.orig) if self.mech.offload else None
            details.append(note_detail(lines[-1] if lines else None, handle))
        return Attempt(actions, details)

    def _action(self, name: str, args: dict[str, Any]) -> str:
        """An attempt's action as a note shows it: a shell command, an edit, or a call with its arguments."""
        profile = self.case.profile
        if profile.is_shell(name):
            return profile.command_of(args)
        if profile.is_editor(name):
            return f"{name} {args.get(profile.editor_command_arg, '')} {args.get(profile.editor_path_arg, '')}".strip()
        return f"{name} {args_text(args)}"

    # --- auto_compact ----------------------------------------------------------------

    def _auto_compact(self, at_question: bool, at_message: int) -> None:
        tokens = self._tokens()
        over = tokens > self.threshold
        if at_question:
            if not (over or self.auto.force):
                return
            self._compact(len(self.state), tokens, at_question, at_message)  # the question is the last user message
            return
        if not over:
            return
        humans = [i for i, e in enumerate(self.state) if isinstance(e.message, HumanMessage)]
        if not humans:
            return  # no user message to keep: nothing the shipped rule can do
        boundary = humans[-1]
        if boundary == 0 or (boundary == 1 and self.state[0].orig == -1):
            # Nothing before the last user message but a summary: the current turn itself
            # filled the window, so its work is what the summary must take in.
            self._compact_turn(boundary, tokens, at_message)
        else:
            self._compact(boundary, tokens, at_question, at_message)

    def _compact(self, boundary: int, tokens: int, at_question: bool, at_message: int) -> None:
        """The shipped rule: everything before ``boundary`` (the last user message) becomes one summary."""
        before, after = self.state[:boundary], self.state[boundary:]
        head, tail, tail_stats = self._split_tail(before, tokens, self._tail_budget(after))
        if not head:
            self.stats["tail"] = tail_stats
            return
        summary_input = self._summary_input(head)
        header = f"{SUMMARY_HEADER} {TAIL_NOTE}" if tail else SUMMARY_HEADER
        text = self._summarize(summary_input, tokens, at_message)
        self.state = [_Entry(-1, HumanMessage(content=f"{header}\n\n{text}")), *tail, *after]
        self._compacted(tokens, at_question, summary_input, in_turn=False)
        if at_question:
            self.stats["auto_compact"]["fired_at_question"] = True
            self.stats["tail"] = tail_stats

    def _compact_turn(self, user: int, tokens: int, at_message: int) -> None:
        """A compaction inside the current turn: the previous summary (if any), the turn's user
        message and its work so far are summarized; the user message stays verbatim after the
        new summary, followed by the tail (when a mechanism keeps one)."""
        work, tail, _ = self._split_tail(self.state[user + 1:], tokens, self._tail_budget([self.state[user]]))
        if not work:
            return  # the tail would keep all of the turn's work: nothing to summarize
        summary_input = self._summary_input([*self.state[: user + 1], *work])
        header = " ".join([SUMMARY_HEADER, IN_TURN_NOTE, *([TAIL_NOTE] if tail else [])])
        text = self._summarize(summary_input, tokens, at_message)
        self.state = [_Entry(-1, HumanMessage(content=f"{header}\n\n{text}")), self.state[user], *tail]
        self._compacted(tokens, False, summary_input, in_turn=True)

    def _summarize(self, summary_input: list[BaseMessage], tokens: int, at_message: int) -> str:
        """One summarizer call; the generation it ends is noted first (what the agent last saw of it)."""
        self._note_generation()
        text, usage = summarize_within(self.p.summarizer, summary_input, self._summary_prompt(), self.case.profile,
                                       self._summary_cap(), self.p.counter)
        self.usage.append(usage)
        self.summary = text
        self.compactions.append({"at_message": at_message, "tokens_before": tokens})
        return text

    def _compacted(self, tokens: int, at_question: bool, summary_input: list[BaseMessage], in_turn: bool) -> None:
        """The record of the compaction just made; the new generation's first view is noted."""
        self.compactions[-1].update({
            "at_question": at_question,
            "in_turn": in_turn,
            "tokens_after": self._tokens(),
            "summarized_messages": len(summary_input),
            "summary_tokens": self.p.counter.count_text(self.summary or ""),
            "summarizer_call": len(self.usage) - 1,  # its index in info.summarizer_usage
            "summarizer_usage": self.usage[-1],
        })
        if not at_question:
            self.stats["auto_compact"]["fired_during_replay"] += 1
        self._note_generation()

    def _note_generation(self) -> None:
        """Mark the questions whose evidence the stored history shows now, in the current generation."""
        if self.auto.force:  # forced runs record no generations (their records stay as they were)
            return
        shown = Shown.of([e.message for e in self.state], self.case.messages, self.case.profile)
        for question in self.case.questions:
            if evidence_shown(question, shown):
                self.seen[question.qid].add(len(self.compactions))

    def _summary_cap(self) -> int | None:
        """Under a budget, the most tokens a summary may take: ``SUMMARY_SHARE`` of the target."""
        return None if self.target is None else max(1, int(SUMMARY_SHARE * self.target))

    def _tail_budget(self, after: list[_Entry]) -> int | None:
        """Under a budget, the tokens the verbatim tail may take: the target less the summary's
        message (its header and cap) and what stays after the tail (``after``); None: no budget."""
        if self.target is None:
            return None
        cap = self._summary_cap() or 0
        header = self.p.counter.count_message(HumanMessage(content=f"{SUMMARY_HEADER} {TAIL_NOTE}\n\n"))
        tail = max(0, self.target - header - cap - self._tokens(after))
        self.plan = {"summary_max_tokens": cap, "tail_max_tokens": tail,
                     "threshold_tokens": self.threshold if not self.auto.force else None}
        return tail

    def _split_tail(self, before: list[_Entry], history_tokens: int, budget_tokens: int | None = None
                    ) -> tuple[list[_Entry], list[_Entry], dict[str, Any] | None]:
        """(head to summarize, tail kept verbatim, accounting) of the part before the last user message.

        ``budget_tokens`` (arm.budget): the tail's size in tokens, kept whatever the mechanism."""
        if budget_tokens is None and not self.mech.keeps_tail:
            return before, [], None
        budget = int(self.mech.tail_fraction * history_tokens) if budget_tokens is None else budget_tokens
        sizes = [self.p.counter.count_message(e.message) for e in before]
        used, cut = 0, len(before)
        if self.mech.stepcut:  # whole steps only: never splits a tool exchange or a turn
            for begin, end in reversed(steps([e.message for e in before])):
                size = sum(sizes[begin:end])
                if used + size > budget:
                    break
                used, cut = used + size, begin
            start = cut
        else:  # a message boundary; results cut off from their call are removed
            while cut > 0 and used + sizes[cut - 1] <= budget:
                cut -= 1
                used += sizes[cut]
            start = cut
            while start < len(before) and isinstance(before[start].message, ToolMessage):
                start += 1
        tail = before[start:]
        stats = {
            "cut": "step" if self.mech.stepcut else "message",
            "budget_tokens": budget,
            "tokens": sum(sizes[start:]),
            "messages": len(tail),
            "orphans_removed": start - cut,  # neither summarized nor kept
        }
        return before[:cut], tail, stats

    def _summary_input(self, head: list[_Entry]) -> list[BaseMessage]:
        """The head as a valid chat history; stored outputs carry their handle (offload)."""
        answered = {e.message.tool_call_id for e in head if isinstance(e.message, ToolMessage)}
        messages: list[BaseMessage] = []
        for entry in head:
            message = entry.message
            if isinstance(message, AIMessage) and any(c["id"] not in answered for c in message.tool_calls):
                # A message cut keeps a call whose results went to the tail: summarize it without them.
                message = message.model_copy(
                    update={"tool_calls": [c for c in message.tool_calls if c["id"] in answered]})
            elif isinstance(message, ToolMessage) and entry.orig in self.handle_of and not is_placeholder(
                    _text(message)):
                note = stored_note(self.handle_of[entry.orig])
                message = message.model_copy(update={"content": f"{_text(message)}\n{note}"})
            messages.append(message)
        return messages

    def _summary_prompt(self) -> str:
        prompt = self.p.prompt or ""
        return f"{prompt.rstrip()}\n\n{self.mech.offload_note}" if self.mech.offload else prompt

    # --- the view --------------------------------------------------------------------

    def _view(self, calls: int, tokens_before: int) -> View:
        messages = [e.message for e in self.state]
        text = "\n".join(message_text(m) for m in messages)
        if self.summary:
            text += "\n" + self.summary
        exposed = {h: self.store[h] for h in find_handles(text) if h in self.store}
        evidence_handles = {}
        for question in self.case.questions:
            outputs = [i for i in question.evidence_messages
                       if isinstance(self.case.messages[i], ToolMessage)]
            evidence_handles[question.qid] = {
                "stored": bool(outputs) and all(i in self.handle_of for i in outputs),
                "exposed": bool(outputs) and all(self.handle_of.get(i) in exposed for i in outputs),
            }
        info = {
            "prompt": self.p.prompt_name,
            "mechanism": {"name": self.mech.name, **self.mech.switches()},
            "model_calls_replayed": calls,
            "history_tokens_at_question": tokens_before,
            "threshold_tokens": self.threshold,
            "forced": self.auto.force,
            **self.stats,
            "placeholders_in_view": sum(1 for m in messages if isinstance(m, ToolMessage)
                                        and is_placeholder(_text(m))),
            "offload": {"stored": len(self.store), "exposed": len(exposed)},
            "evidence_handles": evidence_handles,
            "summary_tokens": self.p.counter.count_text(self.summary) if self.summary else 0,
            "summarizer": getattr(self.p.summarizer, "name", None),
            "summarizer_usage": self.usage,
        }
        if not self.auto.force:
            self._note_generation()  # the view the question is asked from
            info["compactions"] = self.compactions
            # per question: the latest generation whose history showed its evidence (None: never)
            info["evidence_generation"] = {qid: max(seen) if seen else None for qid, seen in self.seen.items()}
        view = make_view(
            self.case, self.p.name, messages, self.p.counter,
            summary=self.summary,
            store=exposed,
            stored={h: str(self.case.messages[orig].id) for orig, h in self.handle_of.items() if h in exposed},
            summarizer_calls=len(self.usage),
            guidance=self.mech.guidance if self.mech.verify else None,
            info=info,
        )
        if self.p.limit is None or self.target is None:
            return view
        return self.p.limit.record(view, self.target, self.plan or {"compacted": False})
