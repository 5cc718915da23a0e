"""The rows a ``bench.download`` manifest lists: how a row is hashed, reading a local file's manifest,
and refusing a downloaded row that changed since (the file's case-set hash would silently change)."""

from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path
from typing import Any

from bench.core.errors import DatasetError

__all__ = ["ROW_HASH", "check_manifest", "manifest_of", "row_sha256"]

log = logging.getLogger("bench.data.selection")  # reported as the data loading it belongs to


ROW_HASH = "sha256 of the row's canonical JSON, nulls dropped"  # manifest "row_hash": how rows are hashed


def row_sha256(row: dict[str, Any], drop_nulls: bool = True) -> str:
    """The sha256 of a row's canonical JSON (sorted keys; ``source_row`` excluded): bench.download's manifest.

    ``drop_nulls``: null-valued keys left out at every level, so a row hashes the same after a parquet
    round trip (which pads structs with nulls); False: the hash of manifests written before that."""
    data = {k: v for k, v in row.items() if k != "source_row"}
    if drop_nulls:
        from bench.data.cases import strip_nulls

        data = strip_nulls(data)
    text = json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=_plain)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _plain(value: Any) -> Any:
    if hasattr(value, "tolist"):  # numpy values from parquet
        return value.tolist()
    return str(value)


def manifest_of(path: str | None) -> tuple[Path, dict[int, str], bool] | None:
    """A local file's bench.download manifest (``<stem>.manifest.json`` beside it): source_row -> row sha256."""
    if not path:
        return None
    name = Path(path).name
    manifest = Path(path).with_name(name.rsplit(".", 1)[0] + ".manifest.json")
    if not manifest.is_file():
        return None
    try:
        data = json.loads(manifest.read_text(encoding="utf-8"))
        rows = {int(r["source_row"]): str(r["sha256"]) for r in data["rows"]}
        strict = data.get("row_hash") == ROW_HASH  # older manifests hash raw rows: a mismatch is only flagged
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise DatasetError(f"{manifest}: cannot read this manifest of {name} ({type(err).__name__}: {err}); "
                           "download again or move the manifest aside") from None
    if data.get("file") not in (None, name):
        return None  # the manifest of another file of that stem
    return manifest, rows, strict


def check_manifest(manifest: tuple[Path, dict[int, str], bool] | None, row: dict[str, Any], source_row: int,
                    position: int) -> None:
    """DatasetError when a downloaded row is not the one its manifest lists (the file changed since)."""
    if manifest is None:
        return
    where, hashes, strict = manifest
    expected = hashes.get(source_row)
    if expected in (row_sha256(row), row_sha256(row, drop_nulls=False)):
        return
    what = "is not listed in" if expected is None else "does not match"
    problem = f"row {position} (source_row {source_row}) of the file {what} its manifest {where}"
    if not strict:
        log.warning("%s (a manifest from before null-free row hashes: flagged, not refused)", problem)
        return
    raise DatasetError(f"{problem}: the rows changed after bench.download; download again, or move the manifest "
                       "aside to run on the changed file (a new case-set hash)")
