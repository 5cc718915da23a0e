"""Compaction as lived: the natural trigger (``arm.auto_compact.force=false``) per context window.

For the shipped coding sample, the shipped operations sample and ``tests/data/real/dev.parquet``,
each context window runs one offline job (``bench.runner.run``: the evidence reader, the
extractive summarizer, the exact judge, no cache) of ``arm=compact arm.auto_compact.force=false
arm.auto_compact.context_window=W`` and reads its ``views.jsonl`` and ``metrics.json``:

* ``compactions/case``: mean, the distribution (cases with 0, 1, 2, ... compactions), max;
* ``tokens kept``: mean tokens of the view the question is asked from (of the full history's);
* ``evidence last seen in generation``: per headline question, the generation (0: before the
  first compaction, k: after the k-th) whose stored history last showed its evidence;
  ``never``: no single generation showed all of it (e.g. a count over the whole run);
  ``seen after last``: seen after its case's last compaction (in its final generation);
* ``visible at question``: evidence visible in the view the question is asked from (after the
  question's own micro_compact, which can clear what the last generation still showed);
* a ``forced`` row: the default single compaction at the question, for comparison;
* ``accuracy`` (equal to relative to full offline: the full arm scores 100% by construction),
  and by the number of compactions the question's case went through.

The windows are 16k, 24k and 32k tokens (``experiment=windows``); the shipped samples' histories
are 1-5k tokens, so they also run at 2k, 3k and 4k, which compact them as 16-32k compacts the
real 20-60k histories.

    uv run python benchmarks/bench_windows.py
"""

from __future__ import annotations

import os

os.environ.setdefault("TQDM_DISABLE", "1")

import contextlib
import io
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ROOT, compose, quiet  # noqa: E402

DEV = ROOT / "tests" / "data" / "real" / "dev.parquet"
WINDOWS = (16384, 24576, 32768)
SAMPLE_WINDOWS = (2048, 3072, 4096)  # the shipped samples' histories are 1-5k tokens
DATASETS = (  # (label, overrides, windows)
    ("coding sample", ["dataset=sample"], WINDOWS + SAMPLE_WINDOWS),
    ("operations sample", ["dataset=ops"], WINDOWS + SAMPLE_WINDOWS),
    ("dev.parquet", ["dataset=local", f"dataset.path={DEV}"], WINDOWS),
)


def job(overrides: list[str], window: int | None, out: Path) -> dict:
    """One offline job; ``window=None``: the default forced single compaction, for comparison."""
    from bench.runner import run

    arm = ["arm=compact"] if window is None else [
        "arm=compact", "arm.auto_compact.force=false", f"arm.auto_compact.context_window={window}"]
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):  # job summaries, bars
        run(compose([*overrides, *arm, f"output_dir={out}", "cache.enabled=false"]))
    views = [json.loads(line) for line in (out / "views.jsonl").read_text().splitlines()]
    metrics = json.loads((out / "metrics.json").read_text())
    counts = Counter(len(v["info"].get("compactions") or []) for v in views)
    return {"views": views, "metrics": metrics, "counts": counts}


def pct(value) -> str:
    return "–" if value is None else f"{100 * value:.0f}%"


def row(window: int | None, result: dict) -> list[str]:
    m, counts, views = result["metrics"], result["counts"], result["views"]
    kept = sum(v["kept_tokens"] for v in views) / len(views)
    full = sum(v["full_tokens"] for v in views) / len(views)
    if window is None:  # the forced compaction records no generations
        return ["forced", "1 (at the question)", "", "1", f"{kept:,.0f} / {full:,.0f}", str(m["summarizer_calls"]),
                "", "", pct(m.get("evidence_visible_rate")), pct(m["accuracy"]), ""]
    top = max(counts)
    spread = " ".join(f"{n}:{counts.get(n, 0)}" for n in range(top + 1))
    seen = m["evidence_last_seen_generation"]
    gens = sorted((g for g in seen if g != "never"), key=int)
    by = " ".join(f"{n}:{pct(b['accuracy'])}" for n, b in m["by_compactions"].items())
    return [f"{window // 1024}k", f"{m['compactions_per_case']:.2f}", spread, str(top),
            f"{kept:,.0f} / {full:,.0f}", str(m["summarizer_calls"]),
            " ".join(f"g{g}:{seen[g]}" for g in gens) + (f" never:{seen['never']}" if "never" in seen else ""),
            pct(m["evidence_survived_compactions"]), pct(m.get("evidence_visible_rate")), pct(m["accuracy"]), by]


HEADER = ["window", "compactions/case", "cases by compactions", "max", "tokens kept / full", "summ. calls",
          "evidence last seen in generation (questions)", "seen after last", "visible at question", "accuracy",
          "accuracy by compactions"]


def table(rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in [HEADER, *rows]) for i in range(len(HEADER))]
    lines = ["  ".join(h.ljust(w) for h, w in zip(HEADER, widths, strict=True))]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    return "\n".join(lines)


def main() -> int:
    quiet()
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        for label, overrides, windows in DATASETS:
            rows, n_cases, n_questions = [], 0, 0
            for window in (None, *windows):
                result = job(overrides, window, Path(tmp) / f"{label}-{window}".replace(" ", "_"))
                rows.append(row(window, result))
                n_cases, n_questions = result["metrics"]["n_cases"], result["metrics"]["n_headline_questions"]
            print(f"\n{label}: {n_cases} cases, {n_questions} headline questions "
                  "(arm=compact arm.auto_compact.force=false, threshold 0.8, offline)")
            print(table(rows))
    print(f"\n{time.perf_counter() - start:.0f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
