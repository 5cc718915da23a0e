"""Dataset loading (spec 1.1): the pinned Hugging Face source or a local file, streamed.

Rows are read page by page through ``datasets`` (streaming), converted to cases, and the
first rows that pass the configured filters are taken; each case keeps its 0-based
source row index. Rows that cannot become a valid case are rejected with a reason
(including a ``tools`` value that is not a list of tool schemas, and a ``resolved`` that
is not a boolean; ``"true"``/``"false"`` strings are parsed). A source without a single
row is a :class:`DatasetError` ("no rows"), whatever its format. A progress bar counts the
rows read while they load.

    from bench.data import load_cases
    selection = load_cases(cfg.dataset, TokenCounter())
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from bench.cases import row_to_case
from bench.chatlog import ChatLogError, iter_chat_rows, iter_jsonl
from bench.errors import DatasetError
from bench.manifest import check_manifest, manifest_of
from bench.profiles import Profile, declared_profile
from bench.questions import add_questions, drop_templates
from bench.schema import Case, Rejected, case_set_hash
from bench.tokens import TokenCounter

__all__ = ["DatasetError", "Selection", "load_cases", "load_job_cases", "iter_rows", "sample_path", "dataset_profile",
           "REQUIRED_COLUMNS", "SHIPPED", "SOURCES"]

log = logging.getLogger(__name__)

REQUIRED_COLUMNS = ("instance_id", "trajectory")
KNOWN_COLUMNS = ("trajectory_id", "instance_id", "repo", "resolved", "exit_status",
                 "model_patch", "tools", "trajectory")


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


# Samples shipped with the package: read line by line (no `datasets` import for them).
SHIPPED = {
    "sample": ("sample.jsonl",),  # synthetic coding trajectories (samples/README.md)
    "ops": ("ops", "dev.jsonl"),  # 12 real tau2-bench telecom runs (samples/ops/README.md, PROVENANCE.md)
}
SOURCES = ("sample", "ops", "local", "chat", "hf")


def sample_path(name: str = "sample") -> Path:
    """A shipped sample: ``sample`` (synthetic coding trajectories) or ``ops`` (real tau2-bench runs)."""
    return Path(str(resources.files("bench").joinpath("samples", *SHIPPED[name])))


def _format_of(path: str, fmt: str) -> str:
    if fmt and fmt != "auto":
        return fmt
    suffix = Path(path).suffix.lower()
    if suffix == ".parquet":
        return "parquet"
    if suffix in (".jsonl", ".json", ".ndjson"):
        return "json"
    raise DatasetError(f"cannot tell the format of {path}: use .parquet or .jsonl, or set dataset.format")


def _check_columns(columns: list[str] | None, where: str) -> None:
    if columns is None:
        return
    missing = [c for c in REQUIRED_COLUMNS if c not in columns]
    if missing:
        raise DatasetError(
            f"{where} lacks required column(s) {missing}; expected the nebius schema "
            f"({', '.join(KNOWN_COLUMNS)}), found {sorted(columns)}"
        )


def _check_hub_reachable(where: str, timeout: float = 5.0) -> None:
    """Fail in seconds, not after the hub client's retries, when the hub cannot be reached."""
    import urllib.error
    import urllib.request

    from huggingface_hub import constants

    if constants.HF_HUB_OFFLINE:
        return  # offline mode reads the local datasets cache
    try:
        urllib.request.urlopen(constants.ENDPOINT, timeout=timeout).close()
    except urllib.error.HTTPError:
        return  # the server answered: reachable
    except (urllib.error.URLError, OSError) as err:
        raise DatasetError(
            f"cannot reach the Hugging Face hub at {constants.ENDPOINT} for {where} ({err}). "
            "Download the parquet files where the hub is reachable and run with "
            "dataset=local dataset.path=FILE"
        ) from None


def iter_rows(cfg: Any) -> Iterator[dict[str, Any]]:
    """Stream the source's rows in order (``datasets`` streaming, page by page)."""
    source = cfg.source
    if source in SHIPPED or source == "chat":
        yield from _plain_rows(cfg)
        return
    import datasets

    datasets.disable_progress_bars()
    if source == "local":
        path = cfg.path
        if not path or path == "???":
            raise DatasetError("dataset=local needs dataset.path=FILE (a .parquet or .jsonl file)")
        if not os.path.isfile(path):
            raise DatasetError(f"dataset file not found: {path}")
        fmt = _format_of(path, cfg.get("format", "auto"))
        where = f"{path} ({fmt})"
        if _empty_file(path, fmt):
            raise DatasetError(f"{where} has no rows")
        try:
            stream = datasets.load_dataset(fmt, data_files=path, split="train", streaming=True)
        except Exception as err:  # noqa: BLE001 - datasets raises many types; report one message
            raise DatasetError(f"cannot read {where}: {type(err).__name__}: {err}") from err
    elif source == "hf":
        where = f"hf://{cfg.hf_name}@{cfg.revision}"
        if not os.path.isdir(str(cfg.hf_name)):  # a local copy laid out like the hub needs no network
            _check_hub_reachable(where)
        try:
            stream = datasets.load_dataset(
                cfg.hf_name, revision=cfg.revision, split=cfg.get("split", "train"), streaming=True
            )
        except Exception as err:  # noqa: BLE001
            raise DatasetError(
                f"cannot open {where}: {type(err).__name__}: {err}. The Hugging Face hub may be "
                "unreachable from this machine: download the parquet files elsewhere and run "
                "with dataset=local dataset.path=FILE"
            ) from err
    else:
        raise DatasetError(f"unknown dataset.source {source!r} ({' | '.join(SOURCES)})")
    _check_columns(list(stream.column_names) if stream.column_names else None, where)
    log.info("reading rows from %s ...", where)
    rows = 0
    try:
        for row in stream:
            _check_columns(list(row), where)
            rows += 1
            yield row
    except DatasetError:
        raise
    except Exception as err:  # noqa: BLE001
        raise DatasetError(f"cannot read {where}: {type(err).__name__}: {err}") from err
    if not rows:
        raise DatasetError(f"{where} has no rows")


def _empty_file(path: str, fmt: str) -> bool:
    """True for a file without a single row (``datasets`` fails on them with StopIteration / ArrowInvalid)."""
    if fmt == "parquet":
        try:
            import pyarrow.parquet as pq

            return pq.ParquetFile(path).metadata.num_rows == 0
        except Exception:  # noqa: BLE001 - not parquet at all: datasets reports it
            return False
    with open(path, "rb") as handle:
        return not any(line.strip() for line in handle)


def _plain_rows(cfg: Any) -> Iterator[dict[str, Any]]:
    """Rows of a shipped sample or of a chat log (``dataset=chat``), read line by line."""
    if cfg.source == "chat":
        path = cfg.get("path")
        if not path or path == "???":
            raise DatasetError("dataset=chat needs dataset.path=FILE (a .jsonl chat log, one conversation a line)")
    else:
        path = str(sample_path(cfg.source))
    if not os.path.isfile(path):
        raise DatasetError(f"dataset file not found: {path}")
    log.info("reading rows from %s ...", path)
    try:
        if cfg.source == "chat":
            yield from iter_chat_rows(path)
            return
        for number, row in iter_jsonl(path):
            _check_columns(list(row), f"{path}, line {number}")
            yield row
    except (ChatLogError, UnicodeDecodeError) as err:
        raise DatasetError(f"cannot read {path}: {err}") from None


def _passes(case: Case, filters: Any, tokens: int, repos: set[str]) -> str | None:
    """Name of the first filter the case fails, or None."""
    if filters.get("resolved") is not None and case.resolved != bool(filters.resolved):
        return "resolved"
    statuses = filters.get("exit_status")
    if statuses and case.exit_status not in list(statuses):
        return "exit_status"
    n = len(case.messages)
    if n < (filters.get("min_messages") or 0) or (filters.get("max_messages") and n > filters.max_messages):
        return "messages"
    if tokens < (filters.get("min_tokens") or 0) or (filters.get("max_tokens") and tokens > filters.max_tokens):
        return "tokens"
    if filters.get("min_questions") and len(case.questions) < filters.min_questions:
        return "questions"
    if filters.get("one_per_repo") and case.repo in repos:
        return "one_per_repo"
    return None


def _names(value: Any) -> tuple[str, ...] | None:
    return None if value is None else tuple(str(v) for v in value)


def dataset_profile(cfg: Any) -> Profile:
    """The profile a dataset config names (``dataset.profile``, default openhands), with the
    tools the config declares replacing the profile's: ``error_pattern``, ``shell_tools``,
    ``editor_tools`` (one), ``finish_tools``, ``write_tools`` and ``roles``
    (:func:`bench.profiles.declared_profile`)."""
    return declared_profile(
        str(cfg.get("profile") or "openhands"), error_result=cfg.get("error_pattern"),
        shell_tools=_names(cfg.get("shell_tools")), editor_tools=_names(cfg.get("editor_tools")),
        finish_tools=_names(cfg.get("finish_tools")), write_tools=cfg.get("write_tools"),
        roles=dict(cfg.get("roles")) if cfg.get("roles") is not None else None)


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


def load_cases(cfg: Any, counter: TokenCounter | None = None, types: Any = None,
               keep_rows: bool = False, depths: Any = None) -> Selection:
    """Read rows until ``cfg.limit`` cases pass the filters (all rows when no limit).

    ``types``: the question types to build (None: every type that applies to the profile).
    ``depths``: ``questions.depths`` (None: the earliest eligible target of each type).
    Template answers over the selected case set are dropped last (``bench.questions.guess``).
    ``keep_rows``: keep each selected case's raw source row in ``Selection.rows`` (bench.download).
    A row that carries a ``source_row`` column (a file written by ``bench.download``) keeps that
    index, so a downloaded selection has the case ids and case-set hash of its source."""
    counter = counter or TokenCounter()
    profile = dataset_profile(cfg)
    _check_types_apply(types, profile)
    manifest = manifest_of(cfg)
    limit = cfg.get("limit")
    filters = cfg.get("filters") or {}
    cases: list[Case] = []
    rejected: list[Rejected] = []
    skipped: dict[str, int] = {}
    repos: set[str] = set()
    rows_read = 0
    kept_rows: list[dict[str, Any]] = []
    seen_ids: dict[str, int] = {}  # case_id -> the row position that took it
    from tqdm import tqdm

    # the bar counts the rows as they are read; closed when reading stops (also on an error)
    with tqdm(iter_rows(cfg), desc="loading rows", unit="row", dynamic_ncols=True, mininterval=0.5,
              leave=False) as bar:
        for position, row in enumerate(bar):
            rows_read += 1
            bar.set_postfix(cases=len(cases), refresh=False)
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
            failed = _passes(result, filters, counter.count_messages(result.messages), repos)
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
    source = {
        "source": cfg.source,
        "profile": profile.name,
        "path": str(sample_path(cfg.source)) if cfg.source in SHIPPED else cfg.get("path"),
        "hf_name": cfg.get("hf_name") if cfg.source == "hf" else None,
        "revision": cfg.get("revision") if cfg.source == "hf" else None,
        "source_rows": [c.source_row for c in cases],
    }
    return Selection(cases, rejected, source, rows_read, skipped, rows=kept_rows)


def load_job_cases(cfg: Any, counter: TokenCounter | None = None, keep_rows: bool = False) -> Selection:
    """The cases of a composed job config: ``cfg.dataset``'s rows with ``cfg.questions``' types and
    depths. The one place a config becomes a selection, so the job, ``bench.download`` and
    ``bench.dataset`` build the same question ids and case-set hash."""
    asked = cfg.get("questions") or {}
    return load_cases(cfg.dataset, counter, asked.get("types"), keep_rows=keep_rows, depths=asked.get("depths"))
