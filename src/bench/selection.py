"""Dataset loading (spec 1.1): the pinned Hugging Face source or a local file, streamed.

Rows are read page by page through ``datasets`` (streaming), converted to cases, and the
first rows that pass the configured filters are taken; each case keeps its 0-based
source row index. Rows that cannot become a valid case are rejected with a reason
(including a ``tools`` value that is not a list of tool schemas, and a ``resolved`` that
is not a boolean; ``"true"``/``"false"`` strings are parsed). A source without a single
row is a :class:`DatasetError` ("no rows"), whatever its format. A progress bar counts the
rows read while they load.

    from bench.selection import load_cases
    selection = load_cases(Shipped(source="ops", profile="tau2"), TokenCounter())

The source (``bench.sources``) reads the rows; this module makes them cases and selects.
A job builds its source from the config in ``bench.jobcases``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from bench.cases import row_to_case
from bench.errors import DatasetError
from bench.manifest import check_manifest, manifest_of
from bench.profiles import Profile
from bench.questions import add_questions, drop_templates
from bench.schema import Case, Rejected, case_set_hash
from bench.sources import REQUIRED_COLUMNS, SHIPPED, Source, as_source, sample_path
from bench.tokens import TokenCounter

__all__ = ["DatasetError", "Selection", "load_cases", "sample_path", "REQUIRED_COLUMNS", "SHIPPED"]

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


def load_cases(source: Source | Mapping[str, Any], counter: TokenCounter | None = None, types: Any = None,
               keep_rows: bool = False, depths: Any = None) -> Selection:
    """Read ``source``'s rows until ``source.limit`` cases pass its filters (all rows when no limit).

    ``source``: a :class:`bench.sources.Source`, or its settings (``bench.sources.as_source``).

    ``types``: the question types to build (None: every type that applies to the profile).
    ``depths``: ``questions.depths`` (None: the earliest eligible target of each type).
    Template answers over the selected case set are dropped last (``bench.questions.guess``).
    ``keep_rows``: keep each selected case's raw source row in ``Selection.rows`` (bench.download).
    A row that carries a ``source_row`` column (a file written by ``bench.download``) keeps that
    index, so a downloaded selection has the case ids and case-set hash of its source."""
    counter = counter or TokenCounter()
    source = as_source(source)
    profile = source.profile_of()
    _check_types_apply(types, profile)
    manifest = manifest_of(source.manifest_file())
    limit = source.limit
    filters = source.filters
    cases: list[Case] = []
    rejected: list[Rejected] = []
    skipped: dict[str, int] = {}
    repos: set[str] = set()
    rows_read = 0
    kept_rows: list[dict[str, Any]] = []
    seen_ids: dict[str, int] = {}  # case_id -> the row position that took it
    from tqdm import tqdm

    # the bar counts the rows as they are read; closed when reading stops (also on an error)
    with tqdm(source.rows(), desc="loading rows", unit="row", dynamic_ncols=True, mininterval=0.5,
              leave=False) as bar:
        for position, row in enumerate(bar):
            rows_read += 1
            bar.set_postfix(cases=len(cases), refresh=False)
            if not source.in_shard(row):  # another job's shard (dataset.shard=I/N)
                skipped["shard"] = skipped.get("shard", 0) + 1
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
                rejected.append(result)
                continue
            add_questions(result, counter, types, depths)
            failed = filters.failed(result, counter.count_messages(result.messages), repos)
            if failed:
                skipped[failed] = skipped.get(failed, 0) + 1
                continue
            repos.add(result.repo)
            seen_ids[result.case_id] = position
            cases.append(result)
            if keep_rows:
                kept_rows.append(row)
            if limit and len(cases) >= limit:
                break
    drop_templates(cases)
    dropped: dict[str, int] = {}
    for case in cases:
        for drop in case.dropped_questions:
            key = f"{drop.type}: {drop.reason.split(' (')[0].split(':')[0]}"
            dropped[key] = dropped.get(key, 0) + 1
    log.info("selected %d cases from %d rows (%d rejected, skipped by filter: %s); dropped questions: %s",
             len(cases), rows_read, len(rejected), skipped or "none", dropped or "none")
    where = {"source": source.source, "profile": profile.name, **source.provenance(),
             "source_rows": [c.source_row for c in cases]}
    return Selection(cases, rejected, where, rows_read, skipped, rows=kept_rows)
