"""The records the benchmark passes around: cases, questions, views, answers, scores.

Every record serializes to plain JSON (messages in LangChain ``messages_to_dict`` form)
and back without loss, so ``cases.jsonl`` and ``views.jsonl`` can be reloaded exactly.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from langchain_core.messages import BaseMessage, messages_from_dict, messages_to_dict

from bench.profiles import OPENHANDS, Profile

__all__ = [
    "ANSWER_CAP",
    "case_set_hash",
    "CaseSetDigest",
    "Question",
    "DroppedQuestion",
    "Case",
    "Rejected",
    "View",
    "Answer",
    "Score",
    "VERDICTS",
    "STALE_REASON",
]

VERDICTS = ("correct", "wrong", "abstained", "unscored")
# A ``wrong`` verdict whose reason starts with this gave a value that was true earlier in the run
# (``latest_value``): metrics count these apart as ``stale``.
STALE_REASON = "stale value"


@dataclass
class Question:
    """One recall question with its code-extracted reference."""

    qid: str  # unique across the run: "<case_id>:<type>"
    type: str  # a registered question type (bench.questions.QUESTION_TYPES)
    question: str
    reference: Any
    evidence_keys: list[str]  # strings that must be visible to answer
    evidence_messages: list[int]  # indices in Case.messages holding the evidence
    params: dict[str, Any] = field(default_factory=dict)  # coding types: command and run ordinal
    target: dict[str, Any] = field(default_factory=dict)  # what is asked about: tool, arguments, ordinal ...
    in_task_text: bool = False  # the answer is readable in the first user message (kept out of the headline)
    evidence_back: dict[str, int] | None = None  # {messages, tokens} from the end to the earliest evidence
    nearest_back: dict[str, int] | None = None  # {messages, tokens} from the end to the latest showing of it
    depth: str | None = None  # distance bucket of the earliest evidence (bench.questions.depth), "<2k" ...
    answer_format: dict[str, str] | None = None  # the typed answer's keys (bench.questions.answers); None: free text
    # The stable ids (``Case.messages[i].id``) of the messages holding the evidence: the call, its
    # result, the user message; for counts and lists all of them (bench.answering.evidence).
    evidence_ids: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class DroppedQuestion:
    type: str
    reason: str


@dataclass
class Case:
    """A recorded trajectory turned into a chat history plus questions."""

    case_id: str
    instance_id: str
    repo: str
    source_row: int
    trajectory_id: str
    system_prompt: str
    messages: list[BaseMessage]  # history without the system message
    tools: list[dict[str, Any]]  # OpenAI tool schemas, null padding stripped
    model_patch: str
    repo_root: str | None
    questions: list[Question] = field(default_factory=list)
    dropped_questions: list[DroppedQuestion] = field(default_factory=list)
    resolved: bool | None = None
    exit_status: str | None = None
    profile: Profile = OPENHANDS  # what the source's tools mean (bench.profiles)
    # Tool calls at the very end that got no result, dropped from ``messages`` (bench.data.cases).
    dropped_trailing: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        assign_message_ids(self.messages)

    @property
    def task_text(self) -> str:
        """The first user message: the task as given (an answer readable here proves no memory)."""
        from bench.text.content import content_text

        first = next((m for m in self.messages if m.type == "human"), None)
        return content_text(first.content) if first is not None else ""

    def to_dict(self) -> dict[str, Any]:
        """The ``cases.jsonl`` record."""
        return {
            "case_id": self.case_id,
            "instance_id": self.instance_id,
            "repo": self.repo,
            "source_row": self.source_row,
            "trajectory_id": self.trajectory_id,
            "resolved": self.resolved,
            "exit_status": self.exit_status,
            "profile": self.profile.to_dict(),
            "repo_root": self.repo_root,
            "system_prompt": self.system_prompt,
            "tools": self.tools,
            "model_patch": self.model_patch,
            "messages": messages_to_dict(self.messages),
            "questions": [q.to_dict() for q in self.questions],
            "dropped_questions": [asdict(d) for d in self.dropped_questions],
            # written only when set, so records of cases without such calls stay as they were
            **({"dropped_trailing": list(self.dropped_trailing)} if self.dropped_trailing else {}),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Case:
        case = cls(
            case_id=data["case_id"],
            instance_id=data["instance_id"],
            repo=data["repo"],
            source_row=data["source_row"],
            trajectory_id=data.get("trajectory_id", ""),
            resolved=data.get("resolved"),
            exit_status=data.get("exit_status"),
            profile=Profile.from_dict(data["profile"]) if data.get("profile") else OPENHANDS,
            repo_root=data.get("repo_root"),
            system_prompt=data["system_prompt"],
            tools=data.get("tools", []),
            model_patch=data.get("model_patch", ""),
            messages=messages_from_dict(data["messages"]),
            questions=[Question(**q) for q in data.get("questions", [])],
            dropped_questions=[DroppedQuestion(**d) for d in data.get("dropped_questions", [])],
            dropped_trailing=list(data.get("dropped_trailing") or []),
        )
        for question in case.questions:  # a record from before evidence ids: named from the indices
            if not question.evidence_ids and question.evidence_messages:
                question.evidence_ids = [str(case.messages[i].id) for i in question.evidence_messages
                                         if 0 <= i < len(case.messages)]
        return case


def assign_message_ids(messages: list[BaseMessage]) -> None:
    """Give every message without an id a stable one, ``m<index>`` (``m<index>.<k>`` when taken).

    ``bench.data.cases`` names a row's messages by their position in the source trajectory; records
    written before message ids existed, and cases built in code, get theirs here, from their
    position in the history, so the same history always gets the same ids. A view keeps a
    message verbatim when it holds the message of that id with the recorded content
    (``View.verbatim``); questions name their evidence by these ids (``Question.evidence_ids``).
    """
    taken = {m.id for m in messages if m.id}
    for index, message in enumerate(messages):
        if message.id:
            continue
        candidate, k = f"m{index}", 0
        while candidate in taken:
            k += 1
            candidate = f"m{index}.{k}"
        message.id = candidate
        taken.add(candidate)


@dataclass
class Rejected:
    """A source row that could not become a valid case, and why."""

    source_row: int
    instance_id: str
    reason: str
    trajectory_id: str = ""


@dataclass
class View:
    """What the answering model sees of a case's history under one arm.

    ``messages`` is the shrunk history (a summary, if any, is one of its messages);
    ``store`` maps the handles this arm exposed to the stored tool output they open.
    Provenance (``bench.answering.evidence``): ``verbatim`` holds the ids of the case's messages the view
    keeps verbatim (the message of that id with its recorded content; ``make_view`` fills it),
    ``stored`` maps a handle of ``store`` to the id of the recorded message whose output it holds.
    """

    case_id: str
    arm: str
    messages: list[BaseMessage]
    kept_tokens: int
    full_messages: int
    full_tokens: int
    summary: str | None = None
    store: dict[str, str] = field(default_factory=dict)  # handle -> stored output
    summarizer_calls: int = 0
    guidance: str | None = None  # extra system text for the answering agent (verify)
    info: dict[str, Any] = field(default_factory=dict)  # arm-specific accounting
    verbatim: list[str] = field(default_factory=list)  # ids of the case's messages kept verbatim, in view order
    stored: dict[str, str] = field(default_factory=dict)  # handle -> id of the message whose output it stores
    budget: dict[str, Any] | None = None  # arm.budget: target and realized tokens (bench.policies.budget)
    # A provider arm's answering requests (bench.policies.provider): {"provider": openai|anthropic, "params":
    # request parameters they carry (betas, context_management ...), "send": "view" | "history"}; "history":
    # the case's recorded history is sent, for the provider to edit on its server, and ``messages`` holds that
    # edit as the provider reported it. None: a plain request of ``messages``.
    request: dict[str, Any] | None = None

    @property
    def kept_messages(self) -> int:
        return len(self.messages)

    @property
    def handles(self) -> list[str]:
        return sorted(self.store)

    def to_dict(self) -> dict[str, Any]:
        """The ``views.jsonl`` record (without ``evidence``); ``budget`` and ``request`` only when the arm has them."""
        return {
            "case_id": self.case_id,
            "arm": self.arm,
            "kept_messages": self.kept_messages,
            "kept_tokens": self.kept_tokens,
            "full_messages": self.full_messages,
            "full_tokens": self.full_tokens,
            "summary": self.summary,
            "summarizer_calls": self.summarizer_calls,
            "handles": self.handles,
            "guidance": self.guidance,
            "info": self.info,
            "verbatim": list(self.verbatim),
            "stored": dict(self.stored),
            **({"budget": self.budget} if self.budget is not None else {}),
            **({"request": self.request} if self.request is not None else {}),
            "messages": messages_to_dict(self.messages),
        }


@dataclass
class Answer:
    case_id: str
    qid: str
    type: str
    answer: str
    usage: dict[str, Any] = field(default_factory=dict)
    retrievals: list[str] = field(default_factory=list)  # handles the agent opened
    outcome: str = "answered"  # answered | context_overflow | error
    error: str | None = None
    answer_chars: int | None = None  # the answer's whole length when it was cut to ANSWER_CAP (else absent)

    def to_dict(self) -> dict[str, Any]:
        record = asdict(self)
        if record["answer_chars"] is None:  # an answer kept whole: the record stays as it was
            del record["answer_chars"]
        return record

    def capped(self, cap: int | None = None) -> Answer:
        """This answer, or (longer than ``cap`` characters) its first ``cap`` characters with its whole
        length in ``answer_chars``: a runaway reply (megabytes) would fill answers.jsonl and make the
        judges crawl, and no answer to a question needs that much."""
        cap = ANSWER_CAP if cap is None else cap
        if not isinstance(self.answer, str) or len(self.answer) <= cap:
            return self
        return replace(self, answer=self.answer[:cap], answer_chars=len(self.answer))


# The longest answer text kept (characters): answers are a value, a list of files or a few
# sentences; a reply longer than this is a runaway, kept cut with its length (Answer.answer_chars).
ANSWER_CAP = 20_000


@dataclass
class Score:
    case_id: str
    qid: str
    type: str
    verdict: str  # correct | wrong | abstained | unscored
    reason: str
    judge: str = ""
    raw: str | None = None  # judge's raw reply (kept when unscored)
    prompt: str | None = None  # judge prompt (kept when unscored)
    panel: dict[str, str] | None = None  # judge=panel: each member's verdict (the record omits it otherwise)
    error: str | None = None  # a judge (or panel member) that failed, named, with its error: resume judges it again

    def to_dict(self) -> dict[str, Any]:
        record = asdict(self)
        for optional in ("panel", "error"):  # a single judge's record that went well stays as it was
            if record[optional] is None:
                del record[optional]
        return record


class CaseSetDigest:
    """The case-set hash built one case at a time (a job reads its cases as a stream); the one
    definition :func:`case_set_hash` uses too."""

    def __init__(self) -> None:
        import hashlib

        self._digest = hashlib.sha256()

    def add(self, case: Case | dict[str, Any]) -> None:
        """Add a case, or its ``cases.jsonl`` record."""
        import json

        self._digest.update(json.dumps(case if isinstance(case, dict) else case.to_dict(), sort_keys=True,
                                       default=str).encode())

    def hexdigest(self) -> str:
        return self._digest.hexdigest()[:16]


def case_set_hash(cases: Iterable[Case] | Iterable[dict[str, Any]]) -> str:
    """The digest of a case set (cases or their ``cases.jsonl`` records): same cases, same hash."""
    digest = CaseSetDigest()
    for case in cases:
        digest.add(case)
    return digest.hexdigest()
