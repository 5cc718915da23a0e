"""Memory as the case set grows: peak RSS and wall time of one job at 15 ... 10,000 cases.

    uv run python benchmarks/bench_memory.py [--cases 15,150,1500,5000,10000] [--arm full] [--override arm.n=20 ...]
        [--data dev] [--before DIR]
    uv run python benchmarks/bench_memory.py --sweep [--cases 30] [--experiment mechanisms]

Each size is one offline job (``python -m bench.main dataset=local ...``, response cache off) on a
parquet file of that many cases: the real rows of ``--data`` (dev.parquet's 15 OpenHands runs)
repeated with distinct ids, in row groups of 100 rows (hub parquet files come in groups; a
reader holds one at a time). Peak RSS is the job process's own (``wait4``), so sizes do not
mix. Flat means the last sizes sit where the first ones do: what a job keeps per case is an index.
``--before DIR`` runs each size with another checkout's ``src`` too (the tree before a change), right
after this one's, on the same file: before and after in one sitting, with the ratios.

``--sweep`` measures the other axis: an in-process ``--multirun`` (Hydra's basic launcher runs the
jobs one after the other in one process), RSS when each job's ``run.json`` turns complete; a
process that kept something of every job would grow by about that much per job.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ROOT, make_cases_file, resolve_data  # noqa: E402

ENV = {**os.environ, "TQDM_DISABLE": "1"}


def _job(data: Path, out: Path, arm: list[str], tree: Path = ROOT) -> tuple[float, float, dict]:
    """(wall s, peak RSS MB, metrics) of one job in its own process, with the ``bench`` of ``tree``;
    ``arm``: the arm's overrides."""
    command = [sys.executable, "-m", "bench.main", "dataset=local", f"dataset.path={data}", *arm,
               f"output_dir={out}", "cache.enabled=false"]
    env = {**ENV, "PYTHONPATH": str(tree / "src")}
    start = time.perf_counter()
    proc = subprocess.Popen(command, cwd=tree, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    stderr = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"job failed ({' '.join(command)}):\n{stderr[-2000:]}")
    return wall, usage.ru_maxrss / 1024, json.loads((out / "metrics.json").read_text())


def _make_file(data: str, size: int, folder: Path) -> Path:
    """The cases file, written by another process: a child's peak RSS counts the memory of the
    process it was forked from (Linux records the old image's high-water mark at exec), so this one
    must stay small while the table is built."""
    code = ("import sys; from pathlib import Path; sys.path.insert(0, sys.argv[1]); from _common import "
            "make_cases_file, resolve_data; print(make_cases_file(resolve_data(sys.argv[2]), int(sys.argv[3]), "
            "Path(sys.argv[4]), row_group_size=100))")
    done = subprocess.run([sys.executable, "-c", code, str(Path(__file__).resolve().parent), data, str(size),
                           str(folder)], capture_output=True, text=True, check=True, env=ENV)
    return Path(done.stdout.strip())


def scaling(sizes: list[int], arm: list[str], data: str, before: Path | None = None) -> int:
    print(f"one offline job per size, {' '.join(arm)}, rows of {data} repeated (row groups of 100), cache off"
          + (f"; before: bench from {before}" if before else ""))
    head = f"{'cases':>7}  {'questions':>9}  {'wall s':>7}  {'ms/case':>7}  {'peak RSS MB':>11}"
    print(head + (f"  {'before wall s':>13}  {'before RSS MB':>13}  {'wall ratio':>10}  {'RSS ratio':>9}"
                  if before else ""))
    with tempfile.TemporaryDirectory(prefix="bench_memory_") as tmp:
        for size in sizes:
            folder = Path(tmp) / str(size)
            folder.mkdir()
            path = _make_file(data, size, folder)
            wall, peak, metrics = _job(path, folder / "job", arm)
            row = (f"{metrics['n_cases']:>7}  {metrics['n_questions']:>9}  {wall:7.1f}  {1000 * wall / size:7.1f}  "
                   f"{peak:11.0f}")
            if before:
                old_wall, old_peak, old = _job(path, folder / "before", arm, before)
                if (old["n_cases"], old["n_questions"]) != (metrics["n_cases"], metrics["n_questions"]):
                    row += "  (before ran other cases or questions)"
                row += f"  {old_wall:13.1f}  {old_peak:13.0f}  {wall / old_wall:10.2f}  {peak / old_peak:9.2f}"
            print(row, flush=True)
            shutil.rmtree(folder)  # the next size's room on disk
    return 0


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


def sweep(n_cases: int, experiment: str, data: str) -> int:
    with tempfile.TemporaryDirectory(prefix="bench_memory_") as tmp:
        path = make_cases_file(resolve_data(data), n_cases, Path(tmp))
        sweep_dir = Path(tmp) / "sweep"
        command = [sys.executable, "-m", "bench.main", "-m", f"+experiment={experiment}", "dataset=local",
                   f"dataset.path={path}", f"hydra.sweep.dir={sweep_dir}", f"cache.path={tmp}/cache.sqlite",
                   "hydra.callbacks.report.enabled=false"]
        start = time.perf_counter()
        proc = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                env=ENV)
        seen: set[Path] = set()
        rows: list[tuple[int, float, str]] = []
        peak = 0.0
        while proc.poll() is None:
            rss = _rss_mb(proc.pid)
            if rss is not None:
                peak = max(peak, rss)
                for done in _completed(sweep_dir, seen):
                    seen.add(done)
                    rows.append((len(rows) + 1, rss, done.parent.name))
            time.sleep(0.1)
        stderr = proc.stderr.read() if proc.stderr else ""
        wall = time.perf_counter() - start
        if proc.returncode != 0:
            print(stderr[-2000:], file=sys.stderr)
            return proc.returncode
    maxrss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # kB on Linux
    print(f"+experiment={experiment}, {n_cases} cases ({data}), basic launcher, {len(rows)} jobs in {wall:.0f}s")
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", default=None, help="sizes, comma-separated (--sweep: one size, default 30)")
    parser.add_argument("--arm", default="full", help="the arm of each job (nlatest, compact ... add the reference)")
    parser.add_argument("--override", action="append", default=[], help="another override of every job (arm.n=20)")
    parser.add_argument("--data", default="dev", help="dev | sample | FILE")
    parser.add_argument("--sweep", action="store_true", help="RSS per job of an in-process sweep instead")
    parser.add_argument("--experiment", default="mechanisms")
    parser.add_argument("--before", type=Path, default=None, help="also run each size with this checkout's src")
    args = parser.parse_args(argv)
    if args.sweep:
        return sweep(int(args.cases or 30), args.experiment, args.data)
    sizes = [int(s) for s in (args.cases or "15,150,1500,5000,10000").split(",")]
    return scaling(sizes, [f"arm={args.arm}", *args.override], args.data,
                   args.before.resolve() if args.before else None)


if __name__ == "__main__":
    sys.exit(main())
