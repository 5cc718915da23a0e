"""Questions that tell policies apart (issue 17): what is asked, at which depth, what is dropped.

    uv run python benchmarks/bench_questions.py

Offline, no arguments. For the shipped coding sample, the shipped operations sample and
tests/data/real/dev.parquet: the per-type table (asked, dropped by reason), the depth
distribution (tokens back to the earliest evidence), the share of would-be questions
dropped as guessable, and the offline reader's accuracy of arm=full and arm=nlatest at
N=10/20/40 per depth bucket. Each job runs through ``bench.runner.run`` into a temporary
directory; figures are read from its cases.jsonl and scores.jsonl, so the same script
measures a checkout that predates ``depth`` (the bucket then comes from ``evidence_back``).
"""

from __future__ import annotations

import json
import logging
import os
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ROOT, compose  # noqa: E402

os.environ.setdefault("TQDM_DISABLE", "1")
BUCKETS = ("<2k", "2-8k", "8-32k", ">32k")
SOURCES = {
    "coding sample": ["dataset=sample"],
    "operations sample": ["dataset=ops"],
    "dev.parquet": ["dataset=local", f"dataset.path={ROOT / 'tests' / 'data' / 'real' / 'dev.parquet'}"],
}
ARMS = {"full": ["arm=full"], "nlatest N=10": ["arm=nlatest", "arm.n=10"],
        "nlatest N=20": ["arm=nlatest", "arm.n=20"], "nlatest N=40": ["arm=nlatest", "arm.n=40"]}
GUESS = ("template answer", "readable in the question", "header-only")


def _bucket(q: dict) -> str:
    if q.get("depth"):
        return q["depth"]
    tokens = (q.get("evidence_back") or {}).get("tokens", 0)
    return next(b for b, hi in zip(BUCKETS, (2_000, 8_000, 32_000, None), strict=True) if hi is None or tokens < hi)


def _read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _run(out: Path, overrides: list[str]) -> tuple[list[dict], dict[str, str]]:
    from bench.runner import run

    run(compose([f"output_dir={out}", "cache.enabled=false", *overrides]))
    cases = _read(out / "cases.jsonl")
    verdicts = {s["qid"]: s["verdict"] for s in _read(out / "scores.jsonl")}
    return cases, verdicts


def _questions_table(cases: list[dict]) -> None:
    asked = Counter(q["type"] for c in cases for q in c["questions"])
    dropped: dict[str, Counter] = defaultdict(Counter)
    for c in cases:
        for d in c.get("dropped_questions") or []:
            dropped[d["type"]][d["reason"].split(" (")[0]] += 1
    print(f"  {'type':<18} {'asked':>5}  dropped by reason")
    for qtype in sorted(set(asked) | set(dropped)):
        reasons = "; ".join(f"{r[:70]}: {n}" for r, n in dropped[qtype].most_common())
        print(f"  {qtype:<18} {asked[qtype]:>5}  {reasons or '-'}")
    depth = Counter((q["type"], _bucket(q)) for c in cases for q in c["questions"])
    print(f"  depth distribution  {'type':<18}" + "".join(f"{b:>7}" for b in BUCKETS))
    for qtype in sorted(asked):
        print(f"  {'':<19} {qtype:<18}" + "".join(f"{depth[(qtype, b)]:>7}" for b in BUCKETS))
    guessed = sum(n for t in dropped.values() for r, n in t.items() if r.startswith(GUESS))
    total = sum(asked.values()) + guessed
    print(f"  guessable dropped: {guessed} of {total} would-be questions"
          f" ({100 * guessed / total:.0f}%)" if total else "  guessable dropped: 0")


def _accuracy_table(results: dict[str, tuple[list[dict], dict[str, str]]]) -> None:
    print(f"  offline accuracy    {'arm':<14}" + "".join(f"{b:>13}" for b in BUCKETS) + f"{'all':>13}")
    for arm, (cases, verdicts) in results.items():
        hits: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for c in cases:
            for q in c["questions"]:
                if q.get("in_task_text"):
                    continue
                for key in (_bucket(q), "all"):
                    hits[key][0] += verdicts.get(q["qid"]) == "correct"
                    hits[key][1] += 1
        cells = [f"{100 * hits[b][0] / hits[b][1]:5.0f}% n={hits[b][1]:<3}" if hits[b][1] else f"{'-':>12}"
                 for b in (*BUCKETS, "all")]
        print(f"  {'':<19} {arm:<14}" + "".join(f"{c:>13}" for c in cells))


def main() -> int:
    logging.disable(logging.WARNING)
    with tempfile.TemporaryDirectory() as tmp:
        for source, overrides in SOURCES.items():
            print(f"== {source}")
            results = {arm: _run(Path(tmp) / f"{source}-{arm}".replace(" ", "_").replace("=", ""), overrides + extra)
                       for arm, extra in ARMS.items()}
            _questions_table(results["full"][0])
            _accuracy_table(results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
