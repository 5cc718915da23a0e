"""Start-up of the offline default job beside ``import hydra``, and what the job imports.

    uv run python benchmarks/bench_startup.py [--runs 7] [--sweep-runs 3]

Runs ``uv run python -m bench.main`` (the offline default job on the shipped sample, each into
a fresh directory) and ``uv run python -c "import hydra"`` alternately, ``--runs`` times each,
as a user types them, and prints the median wall times and their ratio, then the largest
imports of the job (``python -X importtime``) and whether it imports any of the packages it
does not use. Then a 4-job ``model=openai`` sweep on the joblib launcher (2 workers) with the
workers forked from a process that imported the job's modules once (``hydra.callbacks.shared_imports``)
and without: median wall time, and under ``-X importtime`` the seconds of imports summed over every
process and how many processes imported the runner, openai, LangGraph and ``datasets``. With
``PYTHONDONTWRITEBYTECODE`` set (as on this project's machines) Python
compiles every module again at every start; the script says which way it ran.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

# an @hydra.main app on this project's config that does nothing: what any Hydra app pays
# (Hydra composes the config twice per run, once to read hydra.mode)
HYDRA_FLOOR = """
import hydra, sys
sys.argv = [sys.argv[0], "hydra.run.dir=" + sys.argv[1], "hydra.output_subdir=null"]
@hydra.main(version_base="1.3", config_path=%r, config_name="config")
def app(cfg):
    pass
app()
"""

UNUSED = ("openai", "langchain_openai", "langgraph", "langfuse", "datasets", "pandas", "matplotlib", "pyarrow")
HEAVY = ("bench.runner", "openai", "langgraph", "datasets")  # what a model job imports: counted per sweep


ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))


def _wall(cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True, cwd=ROOT)  # uv run finds the project from any directory
    return time.perf_counter() - start


def _imports(stderr: str) -> Iterator[tuple[float, str]]:
    """``(cumulative seconds, module name as printed, indented by nesting)`` of each ``-X importtime`` line."""
    for line in stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        _, cumulative, name = line[len("import time:"):].split("|")
        yield int(cumulative) / 1e6, name


def _importtime(out: Path) -> list[tuple[float, str]]:
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "bench.main", f"output_dir={out}"],
                          capture_output=True, text=True, check=True, cwd=ROOT)
    roots: dict[str, float] = {}
    for seconds, name in _imports(done.stderr):
        package = name.strip().split(".")[0]
        roots[package] = max(roots.get(package, 0.0), seconds)
    return sorted(((s, p) for p, s in roots.items()), reverse=True)


def _sweep(url: str, out: Path, shared: bool, importtime: bool) -> tuple[float, dict[str, int], float]:
    """A 4-job sweep on the joblib launcher (2 workers), each job ``model=openai`` on 2 cases of
    dev.parquet: (wall s, processes that imported each of HEAVY, seconds of imports summed over processes)."""
    from _common import DEV

    env = {**os.environ, "TQDM_DISABLE": "1", **({"PYTHONPROFILEIMPORTTIME": "1"} if importtime else {})}
    command = [sys.executable, "-m", "bench.main", "-m", "hydra/launcher=joblib", "hydra.launcher.n_jobs=2",
               "dataset=local", f"dataset.path={DEV}", "dataset.limit=2", "model=openai", f"model.base_url={url}",
               "model.api_key_env=null", "cache.enabled=false", "hydra.callbacks.report.enabled=false",
               f"hydra.callbacks.shared_imports.enabled={str(shared).lower()}", "seed=0,1,2,3",
               f"hydra.sweep.dir={out}"]
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, env=env)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"the sweep failed: {done.stderr[-2000:]}")
    counts = dict.fromkeys(HEAVY, 0)
    seconds = 0.0
    for cumulative, name in _imports(done.stderr):
        if name.strip() in counts:
            counts[name.strip()] += 1
        if not name.startswith("  "):  # a top-level import: its cumulative time counts once
            seconds += cumulative
    return wall, counts, seconds


def sweep_imports(tmp: Path, runs: int) -> None:
    """The same sweep with the joblib workers forked from a process that imported the job's modules
    (``hydra.callbacks.shared_imports``, the default) and without (each worker imports them)."""
    from _common import fake_server

    with fake_server("--latency", "0.05", "--approx-tokens", "--lifetime", "1200") as (url, _):
        walls: dict[bool, list[float]] = {True: [], False: []}
        for i in range(runs):
            for shared in ((True, False) if i % 2 == 0 else (False, True)):
                walls[shared].append(_sweep(url, tmp / f"sweep{i}-{shared}", shared, importtime=False)[0])
        traced = {shared: _sweep(url, tmp / f"traced-{shared}", shared, importtime=True) for shared in (False, True)}
    print("\na 4-job model=openai sweep on the joblib launcher (2 workers), 2 cases of dev.parquet per job:")
    print(f"  {'workers':<34}{'wall s (median)':>16}{'import s (all processes)':>26}  processes importing "
          + ", ".join(HEAVY))
    for shared, label in ((False, "each import the job's modules"), (True, "forked after importing them once")):
        _, counts, seconds = traced[shared]
        print(f"  {label:<34}{statistics.median(walls[shared]):>16.2f}{seconds:>26.2f}  "
              + ", ".join(str(counts[m]) for m in HEAVY))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--sweep-runs", type=int, default=3,
                        help="runs of each side of the joblib sweep (0: no sweep)")
    args = parser.parse_args(argv)
    job, hydra, floor = [], [], []
    conf = str(Path(__file__).resolve().parents[1] / "conf")
    python = ["uv", "run", "python"] if shutil.which("uv") else [sys.executable]
    with tempfile.TemporaryDirectory(prefix="bench_startup_") as tmp:
        _wall([*python, "-m", "bench.main", f"output_dir={tmp}/warmup"])  # bytecode written, if allowed
        for i in range(args.runs):
            job.append(_wall([*python, "-m", "bench.main", f"output_dir={tmp}/job{i}"]))
            hydra.append(_wall([*python, "-c", "import hydra"]))
            floor.append(_wall([*python, "-c", HYDRA_FLOOR % conf, f"{tmp}/floor{i}"]))
        imports = _importtime(Path(tmp) / "importtime")
    job_s, hydra_s = statistics.median(job), statistics.median(hydra)
    print(f"{' '.join(python)}; PYTHONDONTWRITEBYTECODE={os.environ.get('PYTHONDONTWRITEBYTECODE') or 'unset'}")
    print(f"offline default job: median {job_s:.2f}s over {args.runs} runs (min {min(job):.2f}, max {max(job):.2f})")
    print(f"import hydra:        median {hydra_s:.2f}s (min {min(hydra):.2f}, max {max(hydra):.2f})")
    floor_s = statistics.median(floor)
    print(f"empty Hydra app on conf/ (its callbacks import bench.cli.callbacks): median {floor_s:.2f}s (min {min(floor):.2f}, max {max(floor):.2f})")
    print(f"ratio job / import hydra: {job_s / hydra_s:.2f}; empty Hydra app / import hydra: {floor_s / hydra_s:.2f}\n")
    print("largest imports of the job (cumulative, by top-level package):")
    for seconds, package in imports[:12]:
        print(f"  {seconds:6.2f}s  {package}")
    found = [p for p in UNUSED if any(name == p for _, name in imports)]
    print(f"\nimported though unused: {', '.join(found) if found else 'none'} (checked: {', '.join(UNUSED)})")
    if args.sweep_runs > 0:
        with tempfile.TemporaryDirectory(prefix="bench_startup_sweep_") as tmp:
            sweep_imports(Path(tmp), args.sweep_runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
