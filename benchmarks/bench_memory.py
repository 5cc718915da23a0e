"""Memory of an in-process sweep: resident set size after each job and the sweep's peak.

    uv run python benchmarks/bench_memory.py [--cases 30] [--experiment mechanisms] [--data dev]

Runs ``python -m bench.main -m +experiment=<experiment>`` on a ``--cases``-case file (the
rows of ``--data`` repeated with distinct ids; 30 real OpenHands cases from dev.parquet by
default) with Hydra's basic launcher, so every job of the sweep runs one after the other in
one process, offline, without the end-of-sweep report (its plotting is not a job's memory).
The process's RSS is sampled every 0.1 s; each job's row is the RSS when its ``run.json``
turns ``complete``. Flat means the last jobs sit where the first ones do: a process that
keeps something of every job grows by about that much per job.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ROOT, make_cases_file, resolve_data  # noqa: E402


def _rss_mb(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def _completed(sweep: Path, seen: set[Path]) -> list[Path]:
    new = []
    for path in sweep.rglob("run.json"):
        if path in seen:
            continue
        try:
            if json.loads(path.read_text()).get("status") == "complete":
                new.append(path)
        except (OSError, json.JSONDecodeError):
            continue  # being written
    return sorted(new)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=30)
    parser.add_argument("--experiment", default="mechanisms")
    parser.add_argument("--data", default="dev", help="dev | sample | FILE")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench_memory_") as tmp:
        data = make_cases_file(resolve_data(args.data), args.cases, Path(tmp))
        sweep = Path(tmp) / "sweep"
        command = [sys.executable, "-m", "bench.main", "-m", f"+experiment={args.experiment}", "dataset=local",
                   f"dataset.path={data}", f"hydra.sweep.dir={sweep}", f"cache.path={tmp}/cache.sqlite",
                   "hydra.callbacks.report.enabled=false"]
        start = time.perf_counter()
        proc = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                env={**__import__("os").environ, "TQDM_DISABLE": "1"})
        seen: set[Path] = set()
        rows: list[tuple[int, float, str]] = []
        peak = 0.0
        while proc.poll() is None:
            rss = _rss_mb(proc.pid)
            if rss is not None:
                peak = max(peak, rss)
                for path in _completed(sweep, seen):
                    seen.add(path)
                    rows.append((len(rows) + 1, rss, path.parent.name))
            time.sleep(0.1)
        stderr = proc.stderr.read()
        wall = time.perf_counter() - start
        if proc.returncode != 0:
            print(stderr[-2000:], file=sys.stderr)
            return proc.returncode
    maxrss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # kB on Linux
    print(f"+experiment={args.experiment}, {args.cases} cases ({args.data}), basic launcher, "
          f"{len(rows)} jobs in {wall:.0f}s")
    print(f"{'job':>4}  {'RSS MB':>7}  directory")
    for index, rss, name in rows:
        print(f"{index:>4}  {rss:7.0f}  {name}")
    if len(rows) >= 4:
        first = sum(r for _, r, _ in rows[:3]) / 3
        last = sum(r for _, r, _ in rows[-3:]) / 3
        print(f"\nmean RSS of the first three jobs {first:.0f} MB, of the last three {last:.0f} MB "
              f"({(last - first) / max(len(rows) - 3, 1):+.1f} MB per job)")
    print(f"peak RSS: {maxrss:.0f} MB (sampled: {peak:.0f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
