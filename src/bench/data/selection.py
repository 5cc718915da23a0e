"""Dataset loading (spec 1.1): the pinned Hugging Face source or a local file, streamed.

Rows are read page by page through ``datasets`` (streaming), converted to cases, and the
first rows that pass the configured filters are taken; each case keeps its 0-based
source row index. Rows that cannot become a valid case are rejected with a reason
(including a ``tools`` value that is not a list of tool schemas, and a ``resolved`` that
is not a boolean; ``"true"``/``"false"`` strings are parsed). A source without a single
row is a :class:`DatasetError` ("no rows"), whatever its format. A progress bar counts the
rows read while they load.

    from bench.data.selection import load_cases
    selection = load_cases(Shipped(source="ops", profile="tau2"), TokenCounter())

The source (``bench.sources``) reads the rows; this module makes them cases and selects.
A job builds its source from the config in ``bench.config.job_cases``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from bench.core.errors import DatasetError
from bench.data.cases import row_to_case
from bench.data.manifest import check_manifest, manifest_of
from bench.profiles import Profile
from bench.questions import add_questions, drop_templates
from bench.sources import REQUIRED_COLUMNS, SHIPPED, Source, as_source, sample_path
from bench.store.schema import Case, Rejected, case_set_hash
from bench.text.tokens import TokenCounter

__all__ = ["DatasetError", "Selection", "CaseStream", "count_drops", "load_cases", "sample_path", "REQUIRED_COLUMNS", "SHIPPED"]

log = logging.getLogger(__name__)


@dataclass
class Selection:
    """The cases a job runs on, the rejected rows, and where they came from."""

    cases: list[Case]
    rejected: list[Rejected]
    source: dict[str, Any]
    rows_read: int = 0
    skipped: dict[str, int] = field(default_factory=dict)  # filter name -> rows skipped
    rows: list[dict[str, Any]] = field(default_factory=list, repr=False)  # raw rows of the cases (keep_rows)

    @property
    def case_set_hash(self) -> str:
        return case_set_hash(self.cases)

    @property
    def n_cases(self) -> int:
        return len(self.cases)


def _check_types_apply(types: Any, profile: Profile) -> None:
    """DatasetError when question types were chosen and none applies to the profile (a 0-question job)."""
    if types is None:
        return
    from bench.questions import REGISTRY, select_types

    chosen = select_types(types)
    if chosen and not any(REGISTRY[t].applies(profile) for t in chosen):
        fits = [t for t in REGISTRY if REGISTRY[t].applies(profile)]
        raise DatasetError(f"questions.types={list(chosen)}: none of these applies to the dataset's profile "
                           f"{profile.name!r} (types that apply: {', '.join(fits) or 'none'})")


class CaseStream:
    """A source's selected cases, one at a time, with their questions (before the template rule,
    which needs the whole set: :class:`bench.questions.guess.TemplateCount`).

    Iterating yields ``(case, row)`` until ``source.limit`` cases passed the filters (all rows when
    no limit); afterwards ``rejected``, ``rows_read``, ``skipped`` and :meth:`where` describe the
    reading. Nothing of a yielded case is kept here but its source row index.

    ``types``: the question types to build (None: every type that applies to the profile).
    ``depths``: ``questions.depths`` (None: the earliest eligible target of each type).
    A row that carries a ``source_row`` column (a file written by ``bench.download``) keeps that
    index, so a downloaded selection has the case ids and case-set hash of its source.
    """

    def __init__(self, source: Source | Mapping[str, Any], counter: TokenCounter | None = None, types: Any = None,
                 depths: Any = None) -> None:
        self.counter = counter or TokenCounter()
        self.source = as_source(source)
        self.profile = self.source.profile_of()
        _check_types_apply(types, self.profile)
        self.types, self.depths = types, depths
        self.rejected: list[Rejected] = []
        self.skipped: dict[str, int] = {}
        self.rows_read = 0
        self.source_rows: list[int] = []

    def __iter__(self) -> Iterator[tuple[Case, dict[str, Any]]]:
        source, profile, counter = self.source, self.profile, self.counter
        manifest = manifest_of(source.manifest_file())
        limit, filters = source.limit, source.filters
        repos: set[str] = set()
        seen_ids: dict[str, int] = {}  # case_id -> the row position that took it
        from tqdm import tqdm

        # the bar counts the rows as they are read; closed when reading stops (also on an error)
        # a terminal only (disable=None): a pipe or a log file, and a refusal's one stderr line, get no redraws
        with tqdm(source.rows(), desc="loading rows", unit="row", dynamic_ncols=True, mininterval=0.5,
                  leave=False, disable=None) as bar:
            for position, row in enumerate(bar):
                self.rows_read += 1
                bar.set_postfix(cases=len(self.source_rows), refresh=False)
                if not source.in_shard(row):  # another job's shard (dataset.shard=I/N)
                    self.skipped["shard"] = self.skipped.get("shard", 0) + 1
                    continue
                recorded = row.get("source_row")
                source_row = int(recorded) if isinstance(recorded, int) and not isinstance(recorded, bool) else position
                check_manifest(manifest, row, source_row, position)
                result = row_to_case(row, source_row, profile)
                if isinstance(result, Case) and result.case_id in seen_ids:  # its records would overwrite the first's
                    result = Rejected(source_row, result.instance_id,
                                      f"duplicate of row {seen_ids[result.case_id]} of the file: "
                                      f"same instance_id and source_row, so the same case_id {result.case_id}",
                                      result.trajectory_id)
                if isinstance(result, Rejected):
                    log.warning("rejected row %d (%s): %s", source_row, result.instance_id, result.reason)
                    self.rejected.append(result)
                    continue
                add_questions(result, counter, self.types, self.depths)
                failed = filters.failed(result, counter.count_messages(result.messages), repos)
                if failed:
                    self.skipped[failed] = self.skipped.get(failed, 0) + 1
                    continue
                repos.add(result.repo)
                seen_ids[result.case_id] = position
                self.source_rows.append(source_row)
                yield result, row
                if limit and len(self.source_rows) >= limit:
                    break

    def where(self) -> dict[str, Any]:
        """The selection's provenance (``run.json`` "dataset")."""
        return {"source": self.source.source, "profile": self.profile.name, **self.source.provenance(),
                "source_rows": list(self.source_rows)}

    def log_selected(self, dropped: dict[str, int]) -> None:
        """The one line that says what was selected (``dropped``: question drops by type and reason)."""
        log.info("selected %d cases from %d rows (%d rejected, skipped by filter: %s); dropped questions: %s",
                 len(self.source_rows), self.rows_read, len(self.rejected), self.skipped or "none",
                 dropped or "none")


def count_drops(dropped: dict[str, int], drops: Iterable[tuple[str, str]]) -> None:
    """Add a case's dropped questions, ``(type, reason)``, to the tally by type and reason (the log line's)."""
    for qtype, reason in drops:
        key = f"{qtype}: {reason.split(' (')[0].split(':')[0]}"
        dropped[key] = dropped.get(key, 0) + 1


def load_cases(source: Source | Mapping[str, Any], counter: TokenCounter | None = None, types: Any = None,
               keep_rows: bool = False, depths: Any = None) -> Selection:
    """The cases of ``source`` in memory (:class:`CaseStream`), template answers over the set
    dropped last (``bench.questions.guess``).

    ``source``: a :class:`bench.sources.Source`, or its settings (``bench.sources.as_source``).
    ``keep_rows``: keep each selected case's raw source row in ``Selection.rows`` (bench.download).
    A job streams its cases instead (``bench.runner.caseset``): the same cases, ids and hash."""
    stream = CaseStream(source, counter, types, depths)
    cases: list[Case] = []
    kept_rows: list[dict[str, Any]] = []
    for case, row in stream:
        cases.append(case)
        if keep_rows:
            kept_rows.append(row)
    drop_templates(cases)
    dropped: dict[str, int] = {}
    for case in cases:
        count_drops(dropped, ((d.type, d.reason) for d in case.dropped_questions))
    stream.log_selected(dropped)
    return Selection(cases, stream.rejected, stream.where(), stream.rows_read, stream.skipped, rows=kept_rows)
