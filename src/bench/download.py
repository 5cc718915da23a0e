"""Download the selected raw rows with a manifest, to run later without the hub.

    uv run python -m bench.download dataset=hf dataset.limit=20 out=rows.parquet
    uv run python -m bench.main dataset=local dataset.path=rows.parquet      # same cases, same hash

Takes the same Hydra overrides as ``bench.main`` (``dataset``, its filters and limit, the
tokenizer, ``questions.types``) and selects exactly the rows a job with those overrides
would run on: the first rows that pass the filters. Writes them unchanged (plus their
``source_row`` index in the source) to ``out`` (parquet, or jsonl by its extension), and
``<out>.manifest.json``: the source, revision, filters and, per row, ``source_row``,
``instance_id`` and the sha256 of the row. ``dataset=local dataset.path=<out>`` then yields
the same case ids, ``source_row`` values and case-set hash as the source with those filters.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

__all__ = ["main", "row_sha256", "download"]

from bench.core.errors import console_script, program
from bench.data.manifest import ROW_HASH, _plain, row_sha256  # the manifest's row hash, checked when the file is read

log = logging.getLogger(__name__)


def download(cfg: Any, out: Path) -> dict[str, Any]:
    """Select the rows of ``cfg.dataset`` and write them and the manifest; return the manifest."""
    from bench.config.checks import mapping
    from bench.config.job_cases import load_job_cases
    from bench.data.selection import DatasetError
    from bench.text.tokens import TokenCounter

    selection = load_job_cases(cfg, TokenCounter(cfg.tokenizer.encoding), keep_rows=True)
    rows = [{**row, "source_row": case.source_row} for row, case in zip(selection.rows, selection.cases, strict=True)]
    out.parent.mkdir(parents=True, exist_ok=True)
    try:
        _write_rows(rows, out)
    except OSError as err:  # disk full, read-only: no partial file is left to pass for a download
        raise DatasetError(_removed(out, err)) from None
    dataset = mapping(cfg.dataset, "dataset")
    manifest = {
        "written": datetime.now(UTC).isoformat(timespec="seconds"),
        "file": out.name,
        "source": {k: dataset.get(k) for k in ("source", "hf_name", "revision", "split", "path", "profile")},
        "filters": dataset.get("filters"),
        "limit": dataset.get("limit"),
        "question_types": (cfg.get("questions") or {}).get("types"),
        "rows_read": selection.rows_read,
        "case_set_hash": selection.case_set_hash,
        "row_hash": ROW_HASH,
        "rows": [{"source_row": case.source_row, "instance_id": case.instance_id, "sha256": row_sha256(row)}
                 for row, case in zip(selection.rows, selection.cases, strict=True)],
    }
    manifest_path = out.with_name(out.name.rsplit(".", 1)[0] + ".manifest.json")
    try:
        manifest_path.write_text(json.dumps(manifest, indent=1, ensure_ascii=False, default=str) + "\n",
                                 encoding="utf-8")
    except OSError as err:
        out.unlink(missing_ok=True)  # rows without their manifest are not a download
        raise DatasetError(_removed(manifest_path, err) + f" (and {out})") from None
    return manifest


def _write_rows(rows: list[dict[str, Any]], out: Path) -> None:
    if out.suffix.lower() == ".parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.Table.from_pylist(rows), out)
    else:
        with out.open("w", encoding="utf-8") as handle:
            for row in rows:
                handle.write(json.dumps(row, ensure_ascii=False, default=_plain) + "\n")


def _removed(path: Path, err: OSError) -> str:
    """Remove a partly written file; the one-line reason, naming it."""
    try:
        path.unlink(missing_ok=True)
        gone = f"the partial file {path} was removed"
    except OSError:
        gone = f"remove the partial file {path}"
    return f"cannot write {path} ({err.strerror or err}): {gone}"


@console_script
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=program("bench.download"), description=__doc__.split("\n\n")[0])
    parser.add_argument("overrides", nargs="*", help="out=FILE (.parquet or .jsonl) and Hydra overrides as for "
                                                     "bench.main (dataset=hf dataset.limit=20 ...)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    outs = [o for o in args.overrides if o.startswith("out=")]
    overrides = [o for o in args.overrides if not o.startswith("out=")]
    if len(outs) != 1 or not outs[0][4:]:
        print("error: give the output file once: out=FILE.parquet (or .jsonl)", file=sys.stderr)
        return 2
    out = Path(outs[0][4:])
    if out.suffix.lower() not in (".parquet", ".jsonl"):
        print(f"error: out={out}: use a .parquet or .jsonl file name", file=sys.stderr)
        return 2

    from bench.config.checks import CONF_DIR, compose
    from bench.core import redact
    from bench.data.selection import DatasetError

    refusal = redact.guard_command_line(overrides)  # a key on the command line refused; URLs' secrets never printed
    if refusal:
        print(f"error: {refusal}", file=sys.stderr)
        return 2

    try:
        cfg = compose(overrides)
        manifest = download(cfg, out)
    except DatasetError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except Exception as err:  # noqa: BLE001 - a bad override: one line, no traceback, as bench.main says it
        from bench.cli.argv import config_error_line

        print(f"error: {redact.scrub(config_error_line(err, overrides))}", file=sys.stderr)
        return 2
    print(f"wrote {len(manifest['rows'])} row(s) to {out} and its manifest (case-set hash "
          f"{manifest['case_set_hash']}; configs from {CONF_DIR})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
