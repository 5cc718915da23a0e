"""bench: the context-compaction benchmark runner.

Replays recorded OpenHands trajectories, shrinks each history with a history policy
(arm), asks recall questions with code-extracted references, and scores the answers.
Run ``python -m bench.main`` (see README.md); the public building blocks are below.
"""

from bench.cases import row_to_case
from bench.data import DatasetError, Selection, load_cases
from bench.judge import ExactJudge, LLMJudge
from bench.policies import (
    CompactPolicy,
    ExtractiveSummarizer,
    FullHistory,
    NLatest,
    Policy,
    Summarizer,
    build_policy,
)
from bench.questions import QUESTION_TYPES, add_questions
from bench.reader import EvidenceReader
from bench.runner import run
from bench.schema import Answer, Case, DroppedQuestion, Question, Rejected, Score, View
from bench.tokens import TokenCounter

__all__ = [
    "Answer",
    "Case",
    "CompactPolicy",
    "ExtractiveSummarizer",
    "LLMJudge",
    "NLatest",
    "Summarizer",
    "DatasetError",
    "DroppedQuestion",
    "EvidenceReader",
    "ExactJudge",
    "FullHistory",
    "Policy",
    "QUESTION_TYPES",
    "Question",
    "Rejected",
    "Score",
    "Selection",
    "TokenCounter",
    "View",
    "add_questions",
    "build_policy",
    "load_cases",
    "row_to_case",
    "run",
]
