"""What each sample row is expected to become: accepted with its references and drops, or rejected.

A row module returns a :class:`SampleRow`: the row and its expectation. The README's table is
written from the expectations (``samplegen.readme``) and ``samplegen.check`` compares them with
what bench's own code makes of the row (``bench.data.selection.load_cases``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from samplegen.trajectory import Message, nebius_row

__all__ = ["QUESTIONS", "FirstEdit", "Counts", "FirstError", "Accepted", "Rejected", "SampleRow", "synthetic_row"]

# The question types a coding row is expected to keep or drop (the README's order; the check
# compares them with bench.questions.CODING_TYPES, so a new coding type needs expectations here).
QUESTIONS = ("files_changed", "first_edit", "test_counts", "first_error")


@dataclass(frozen=True)
class FirstEdit:
    path: str
    code: str  # the whole inserted text (bench's reference "context")
    message_index: int  # the editor call's position in the trajectory
    note: str | None = None


@dataclass(frozen=True)
class Counts:
    """test_counts: run k of the command printed these counts."""

    command: str
    k: int
    passed: int
    failed: int
    errors: int
    message_index: int  # the run's result
    note: str | None = None


@dataclass(frozen=True)
class FirstError:
    command: str
    k: int
    exception: str  # "<type>: <message>" as printed
    message_index: int | None = None  # the run's result, where the README names it
    note: str | None = None


@dataclass(frozen=True)
class Accepted:
    conversion: str  # what the conversion drops, in the README's words
    trailing: tuple[str, ...]  # the names of those dropped trailing calls (Case.dropped_trailing)
    files_changed: list[str] | None
    first_edit: FirstEdit | None
    test_counts: Counts | None
    first_error: FirstError | None
    dropped: list[tuple[str, str]]  # (question type, why): the types not kept
    retry_chains: list[str] = field(default_factory=list)

    def kept(self) -> list[str]:
        return [q for q in QUESTIONS if getattr(self, q) is not None]


@dataclass(frozen=True)
class Rejected:
    reason: str  # in the README's words
    message: int  # the trajectory position bench's reason names
    call_id: str  # the call id it names
    says: str  # what bench's reason says about it ("not valid JSON", "has no call", ...)


@dataclass(frozen=True)
class SampleRow:
    row: dict[str, Any]
    expected: Accepted | Rejected

    @property
    def tid(self) -> str:
        return str(self.row["trajectory_id"])


def synthetic_row(tid: str, instance_id: str, repo: str, resolved: bool | None, exit_status: str, patch: str,
                  tools: list[dict[str, Any]], messages: list[Message], notes: str,
                  expected: Accepted | Rejected) -> SampleRow:
    """A sample row (marked ``synthetic``, with its one-sentence ``notes``) and its expectation."""
    row = nebius_row(tid, instance_id, repo, resolved, exit_status, patch, tools, messages,
                     synthetic=True, notes=notes)
    return SampleRow(row, expected)
