"""A job's case set on disk: ``cases.jsonl`` written from a streamed selection, an index in memory.

Why: a case's history is about 0.6 MB in memory (LangChain messages), so a job that held its
case set grew with it (measured: 1,500 cases 1.6 GB, 5,000 cases 3.1 GB). A job reads its source
once, case by case (:class:`bench.data.selection.CaseStream`): each case is written to a spool as it
is selected while the template rule, which needs the whole set, counts its answers
(:class:`bench.questions.guess.TemplateCount`); then the spool is rewritten into ``cases.jsonl``
with the template drops applied and the case-set hash computed. The lines and the hash are the
ones the in-memory path (:func:`bench.data.selection.load_cases`) gives.

What stays per case is a :class:`CaseEntry`: ids, question ids, the fields of its questions the
metrics read (:func:`bench.scoring.metric_records.metric_case`), and where its line is. A phase loads each case
from its line when its view is built (``os.pread``: any worker thread, no shared file position)
and lets it go when its questions are done.

    cases = CaseSet.write(CaseStream(source, counter, types, depths), store.path("cases"))
    if cases.case_set_hash != expected: cases.discard()  # cases.jsonl as it was
    cases.commit()                                       # cases.jsonl.next -> cases.jsonl
    case = cases.load(cases.entries[0])
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.data.selection import CaseStream, count_drops
from bench.questions.guess import TemplateCount
from bench.scoring.metric_records import metric_case
from bench.store.records import JobFileError, JobStore, iter_lines
from bench.store.schema import Case, CaseSetDigest, Rejected

__all__ = ["CaseEntry", "CaseSet"]


@dataclass(frozen=True, slots=True)
class CaseEntry:
    """What a job keeps of a case while it runs: its ids, its questions' ids, where its line is."""

    case_id: str
    instance_id: str
    qids: tuple[str, ...]
    offset: int  # of its line in cases.jsonl
    length: int  # bytes, without the newline


class CaseSet:
    """The cases of a job: their ``cases.jsonl`` and one :class:`CaseEntry` each, with the
    selection's provenance (``source``, ``rows_read``, ``skipped``, ``rejected``) as
    :class:`bench.data.selection.Selection` has it."""

    def __init__(self, path: Path, entries: list[CaseEntry], metric_cases: list[dict[str, Any]], case_set_hash: str,
                 stream: CaseStream) -> None:
        self.path = path  # where the lines are now (cases.jsonl.next until commit)
        self.entries = entries
        self.metric_cases = metric_cases  # bench.scoring.metric_records.metric_case of each case, in case order
        self.case_set_hash = case_set_hash
        self.source: dict[str, Any] = stream.where()
        self.rows_read = stream.rows_read
        self.skipped = stream.skipped
        self.rejected: list[Rejected] = stream.rejected
        self.dropped: dict[str, int] = {}  # questions dropped, by "type: reason" (the selection's log line)
        self._final: Path | None = None
        self._fd: int | None = None

    # ---- writing
    @classmethod
    def write(cls, stream: CaseStream, path: Path) -> CaseSet:
        """Read ``stream`` once into ``<path>.next`` (via ``<path>.spool``); :meth:`commit` moves it to ``path``."""
        spool, staged = path.with_name(path.name + ".spool"), path.with_name(path.name + ".next")
        templates = TemplateCount()
        try:
            with spool.open("w", encoding="utf-8", newline="\n") as handle:
                for case, _row in stream:
                    templates.add(case)
                    handle.write(JobStore.encode(case.to_dict()))
            entries, metric_cases = [], []
            dropped: dict[str, int] = {}
            digest = CaseSetDigest()
            with staged.open("wb") as out:
                for _, line, _complete in iter_lines(spool):
                    record = json.loads(line)
                    if templates.drop_from_record(record):
                        line = JobStore.encode(record).rstrip("\n").encode("utf-8")
                    count_drops(dropped, ((d["type"], d["reason"]) for d in record["dropped_questions"]))
                    digest.add(record)
                    entries.append(CaseEntry(record["case_id"], record["instance_id"],
                                             tuple(q["qid"] for q in record["questions"]), out.tell(), len(line)))
                    metric_cases.append(metric_case(record))
                    out.write(line + b"\n")
        except OSError as err:
            staged.unlink(missing_ok=True)
            raise JobFileError(err.errno, f"cannot write {path}: {err.strerror or err}") from None
        except BaseException:
            staged.unlink(missing_ok=True)
            raise
        finally:
            spool.unlink(missing_ok=True)
        stream.log_selected(dropped)
        made = cls(staged, entries, metric_cases, digest.hexdigest(), stream)
        made.dropped = dropped
        made._final = path
        return made

    def commit(self) -> None:
        """The written lines become ``cases.jsonl`` (replacing the file a resumed job had)."""
        if self._final is not None:
            os.replace(self.path, self._final)
            self.path, self._final = self._final, None

    def discard(self) -> None:
        """Forget the written lines: ``cases.jsonl`` stays as it was."""
        if self._final is not None:
            self.path.unlink(missing_ok=True)
        self.close()

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    # ---- reading
    @property
    def n_cases(self) -> int:
        return len(self.entries)

    def __len__(self) -> int:
        return len(self.entries)

    def load(self, entry: CaseEntry) -> Case:
        """The case of ``entry``, read from its line (thread-safe)."""
        if self._fd is None:
            self._fd = os.open(self.path, os.O_RDONLY)
        return Case.from_dict(json.loads(os.pread(self._fd, entry.length, entry.offset)))

    def __iter__(self) -> Iterator[Case]:
        """Every case in order, one at a time."""
        for _, line, _complete in iter_lines(self.path):
            yield Case.from_dict(json.loads(line))
