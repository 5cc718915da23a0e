"""The policies people ship, side by side (issue 19's study, ``+experiment=peers``), offline.

For the shipped coding sample, the shipped operations sample and ``tests/data/real/dev.parquet``,
every arm of ``conf/experiment/peers.yaml`` runs one offline job (``bench.runner.run``: the
evidence reader, the extractive summarizer, the exact judge, no cache) with its shipped
settings, and the table shows per arm:

* ``accuracy``: offline, the share of headline questions whose evidence the offline reader
  finds in the view (an availability figure, not a model's accuracy);
* ``rel. full``: accuracy / the full arm's (the reference); ``above none``: accuracy minus the
  no-history arm's (what the history adds over guessing);
* ``tokens kept``: mean view tokens / mean full-history tokens; ``summ. calls``: summarizer
  calls of the job (LLM cost with a real summarizer); ``s``: wall seconds of the job.

    uv run python benchmarks/bench_peers.py [--datasets sample,ops,dev] [--limit N]
"""

from __future__ import annotations

import os

os.environ.setdefault("TQDM_DISABLE", "1")

import argparse
import contextlib
import io
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import DEV, ROOT, compose, quiet  # noqa: E402

DATASETS = {"sample": ("coding sample", ["dataset=sample"]),
            "ops": ("operations sample", ["dataset=ops"]),
            "dev": ("dev.parquet", ["dataset=local", f"dataset.path={DEV}"])}


def peer_arms() -> list[str]:
    """The arms of ``+experiment=peers``, in its order (the experiment is the one list)."""
    import yaml

    spec = yaml.safe_load((ROOT / "conf" / "experiment" / "peers.yaml").read_text())
    return [a.strip() for a in str(spec["hydra"]["sweeper"]["params"]["+experiment/arm"]).split(",")]


def job(overrides: list[str], arm: str, out: Path) -> tuple[dict, float]:
    from bench.runner import run

    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):  # job summaries
        run(compose([*overrides, f"+experiment/arm={arm}", f"output_dir={out}", "cache.enabled=false"]))
    return json.loads((out / "metrics.json").read_text()), time.perf_counter() - start


def pct(value) -> str:
    return "–" if value is None else f"{100 * value:.0f}%"


HEADER = ["arm", "accuracy", "rel. full", "above none", "tokens kept", "summ. calls", "s"]


def table(rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in [HEADER, *rows]) for i in range(len(HEADER))]
    lines = ["  ".join(h.ljust(w) for h, w in zip(HEADER, widths, strict=True))]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default="sample,ops,dev", help="comma list of sample, ops, dev")
    parser.add_argument("--limit", type=int, default=None, help="cases per dataset (default: all)")
    args = parser.parse_args(argv)
    quiet()
    arms = peer_arms()
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        for key in args.datasets.split(","):
            label, overrides = DATASETS[key]
            if args.limit:
                overrides = [*overrides, f"dataset.limit={args.limit}"]
            results = {arm: job(overrides, arm, Path(tmp) / f"{key}-{arm}") for arm in arms}
            full, none = results["full"][0]["accuracy"], results["none"][0]["accuracy"]
            rows = []
            for arm, (m, seconds) in results.items():
                acc = m["accuracy"]
                rel = None if acc is None or not full else acc / full
                above = None if acc is None or none is None else acc - none
                rows.append([arm, pct(acc), pct(rel), "–" if above is None else f"{100 * above:+.0f} pts",
                             pct(m["tokens_kept_ratio"]), str(m["summarizer_calls"]), f"{seconds:.1f}"])
            m = results["full"][0]
            print(f"\n{label}: {m['n_cases']} cases, {m['n_headline_questions']} headline questions "
                  "(offline: accuracy = evidence the offline reader finds in the view)")
            print(table(rows))
    print(f"\n{time.perf_counter() - start:.0f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
