"""``python scripts/make_sample.py``: write the sample and its README, then check them;
``--check``: only check that the files on disk are what the rows build, and what bench reads."""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path

from samplegen.check import check_sample
from samplegen.expected import Accepted, SampleRow
from samplegen.readme import readme
from samplegen.rows import build_rows

__all__ = ["main", "render", "stale", "OUT_JSONL", "OUT_README"]

PROJECT = Path(__file__).resolve().parents[2]
OUT_DIR = PROJECT / "src" / "bench" / "samples"
OUT_JSONL = OUT_DIR / "sample.jsonl"
OUT_README = OUT_DIR / "README.md"
COMMAND = "scripts/make_sample.py"


def render(rows: list[SampleRow]) -> tuple[str, str]:
    """The text of ``sample.jsonl`` and of its README."""
    jsonl = "".join(json.dumps(s.row, ensure_ascii=False) + "\n" for s in rows)
    return jsonl, readme(rows) + "\n"


def stale(jsonl: str, md: str) -> list[str]:
    """The files on disk that are not what the rows build."""
    return [p.name for p, want in ((OUT_JSONL, jsonl), (OUT_README, md))
            if not p.exists() or p.read_text(encoding="utf-8") != want]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog=COMMAND, description="Generate the shipped synthetic sample and its README.")
    ap.add_argument("--check", action="store_true",
                    help="only check that the files on disk are up to date and read as the rows expect")
    ap.add_argument("--no-datasets", action="store_true",
                    help="skip reading the file a second time through `datasets` (the local source)")
    args = ap.parse_args(argv)
    rows = build_rows()
    jsonl, md = render(rows)
    if args.check:
        if out_of_date := stale(jsonl, md):
            print(f"out of date: {', '.join(out_of_date)} (run {COMMAND})")
            return 1
    else:
        OUT_DIR.mkdir(parents=True, exist_ok=True)
        OUT_JSONL.write_text(jsonl, encoding="utf-8")
        OUT_README.write_text(md, encoding="utf-8")
        print(f"wrote {OUT_JSONL.relative_to(PROJECT)} ({len(jsonl.encode())} bytes, "
              f"{jsonl.count(chr(10))} rows) and {OUT_README.relative_to(PROJECT)}")
    logging.getLogger("bench").setLevel(logging.ERROR)  # the rejected rows' warnings are expected here
    problems = check_sample(rows, OUT_JSONL, datasets=not args.no_datasets)
    for problem in problems:
        print("PROBLEM:", problem)
    if not problems:
        accepted = sum(1 for s in rows if isinstance(s.expected, Accepted))
        routes = "the shipped and the local (datasets) source" if not args.no_datasets else "the shipped source"
        print(f"checked {len(rows)} rows read through {routes}: {accepted} cases, "
              f"{len(rows) - accepted} rejected, each as expected")
    return 1 if problems else 0
