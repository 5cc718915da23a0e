"""Reading rows: the column check, streams of ``datasets``, formats and the hub's reachability."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench.core.errors import DatasetError

__all__ = ["PARQUET_BATCH_ROWS", "local_parquet_options", "REQUIRED_COLUMNS", "KNOWN_COLUMNS", "check_columns", "stream_rows", "format_of", "empty_file",
           "check_hub_reachable", "required_path"]

log = logging.getLogger("bench.data.selection")  # reported as the data loading it belongs to

REQUIRED_COLUMNS = ("instance_id", "trajectory")
KNOWN_COLUMNS = ("trajectory_id", "instance_id", "repo", "resolved", "exit_status",
                 "model_patch", "tools", "trajectory")


def required_path(path: str | None, how: str) -> str:
    if not path or path == "???":
        raise DatasetError(how)
    if not os.path.isfile(path):
        raise DatasetError(f"dataset file not found: {path}")
    return path


def check_columns(columns: list[str] | None, where: str) -> None:
    """DatasetError when a row or file lacks a required column of the nebius schema."""
    if columns is None:
        return
    missing = [c for c in REQUIRED_COLUMNS if c not in columns]
    if missing:
        raise DatasetError(
            f"{where} lacks required column(s) {missing}; expected the nebius schema "
            f"({', '.join(KNOWN_COLUMNS)}), found {sorted(columns)}"
        )


# Rows per batch a parquet stream converts to Python at once. ``datasets`` defaults to a whole row
# group (hundreds or thousands of rows, several MB each as Python objects): measured on a 5,000-row
# file in groups of 100 rows, 925 MB held while cases were made from its rows, 355 MB with 8.
PARQUET_BATCH_ROWS = 8


def local_parquet_options() -> dict[str, Any]:
    """``datasets``' parquet options for a local file: small batches (:data:`PARQUET_BATCH_ROWS`) and
    column chunks read when needed, not pre-buffered. Pre-buffering coalesces reads into 32 MiB ranges
    (made for remote files) that stayed held while the file was read: reading 3,000 rows of a
    5,000-row file held 125 MB of them (peak RSS 516 MB), 2 MB without (306 MB)."""
    import pyarrow.dataset as pads

    return {"batch_size": PARQUET_BATCH_ROWS,
            "fragment_scan_options": pads.ParquetFragmentScanOptions(pre_buffer=False)}


def arrow_returns_freed_memory() -> None:
    """Arrow's allocator gives freed pages back to the system at once.

    Why: reading rows through ``datasets`` allocates each row group's buffers in Arrow's memory
    pool, and the default pool (mimalloc) keeps freed pages for later: measured, 723 MB held after
    300 rows of a 5,000-row parquet file of which Arrow had at most 123 MB allocated. jemalloc
    with no purge delay holds what is allocated (230 MB for the whole job's reading, flat in the
    number of rows). Public pyarrow calls; left as it is where pyarrow has no jemalloc."""
    import pyarrow as pa

    try:
        pool = pa.jemalloc_memory_pool()
        pa.jemalloc_set_decay_ms(0)
    except NotImplementedError:  # a pyarrow built without jemalloc (ArrowNotImplementedError)
        return
    pa.set_memory_pool(pool)


def stream_rows(stream: Any, where: str) -> Iterator[dict[str, Any]]:
    arrow_returns_freed_memory()
    check_columns(list(stream.column_names) if stream.column_names else None, where)
    log.info("reading rows from %s ...", where)
    rows = 0
    try:
        for row in stream:
            check_columns(list(row), where)
            rows += 1
            yield row
    except DatasetError:
        raise
    except Exception as err:  # noqa: BLE001
        raise DatasetError(f"cannot read {where}: {type(err).__name__}: {err}") from err
    if not rows:
        raise DatasetError(f"{where} has no rows")


def format_of(path: str, fmt: str) -> str:
    if fmt and fmt != "auto":
        return fmt
    suffix = Path(path).suffix.lower()
    if suffix == ".parquet":
        return "parquet"
    if suffix in (".jsonl", ".json", ".ndjson"):
        return "json"
    raise DatasetError(f"cannot tell the format of {path}: use .parquet or .jsonl, or set dataset.format")


def empty_file(path: str, fmt: str) -> bool:
    """True for a file without a single row (``datasets`` fails on them with StopIteration / ArrowInvalid)."""
    if fmt == "parquet":
        try:
            import pyarrow.parquet as pq

            return pq.ParquetFile(path).metadata.num_rows == 0
        except Exception:  # noqa: BLE001 - not parquet at all: datasets reports it
            return False
    with open(path, "rb") as handle:
        return not any(line.strip() for line in handle)


def check_hub_reachable(where: str, timeout: float = 5.0) -> None:
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
