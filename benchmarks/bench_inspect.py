"""This runner beside inspect_ai on the same model calls: process wall time, side by side.

Both sides answer the same questions of the same cases (``--cases`` rows of ``dev.parquet``
with distinct ids, ``arm=full``) against the same fake server (``tests/support/fake_openai.py``, a
``finish`` tool call after ``--latency`` seconds), one answering call per question, at most
``--concurrency`` requests in flight, no response cache, no model call to score:

* **bench**: ``python -m bench.main dataset=local ... model=openai judge=exact cache.enabled=false
  model.max_concurrency=C model.warm_prefix=false`` (the job builds its cases, questions and views
  itself and writes its records);
* **inspect**: ``python benchmarks/_inspect_side.py``: ``inspect_ai.eval`` of a task whose samples
  are the requests the runner sends (the same messages and tool schemas, written to a JSON file
  by this script from the runner's own views), one ``Model.generate`` per sample through
  inspect's ``openai`` provider (``model_base_url``), ``max_connections = max_samples = C``,
  ``match()`` scorer, its log written as usual.

Each side runs as a fresh process (``sys.executable``, not ``uv run``), alternately, ``--repeats``
times per latency after one unmeasured warm-up each, reading the bytecode the warm-ups cached
(``PYTHONPYCACHEPREFIX`` in a directory of this run; ``--compile-every-start`` keeps
``PYTHONDONTWRITEBYTECODE``, as set on this project's machines, so every process compiles every
module again); printed: median process wall time
(min-max), process CPU (user+sys), calls, and the ratio bench / inspect of the medians. For bench
also the CPU of its answering phase per answering call (``Pipeline.run_phase``, measured by a
wrapper around ``bench.main`` that imports nothing the job does not).

``--before DIR`` adds a third side, the bench job run from another checkout's ``src`` (the tree
before a change), in the same rotation: before and after measured in one sitting.
inspect_ai is a benchmark-only dependency (``uv sync --group bench``); without it the script
runs itself again under ``uv run --group bench``.

    uv run python benchmarks/bench_inspect.py [--latencies 0.2,1.0] [--repeats 3] [--cases 20]
        [--concurrency 16] [--data dev|sample|FILE] [--before DIR] [--compile-every-start]
"""

from __future__ import annotations

import os

os.environ.setdefault("TQDM_DISABLE", "1")

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ROOT, compose, fake_server, make_cases_file, quiet, resolve_data  # noqa: E402

INSPECT_SIDE = Path(__file__).resolve().parent / "_inspect_side.py"

# `python -m bench.main` with the CPU of the answering phase written to $BENCH_PHASE_CPU at exit
PROBE = """
import atexit, os, runpy, sys, time
from bench.runner.pipeline import Pipeline
run_phase, spent = Pipeline.run_phase, [0.0]
def timed(self, *a, **k):
    start = time.process_time()
    try:
        return run_phase(self, *a, **k)
    finally:
        spent[0] += time.process_time() - start
Pipeline.run_phase = timed
atexit.register(lambda: open(os.environ["BENCH_PHASE_CPU"], "w").write(repr(spent[0])))
sys.argv = ["bench.main", *sys.argv[1:]]
runpy.run_module("bench.main", run_name="__main__")
"""


def requests_of(cases_file: Path) -> list[dict]:
    """The answering requests of the runner's job on ``cases_file``: per question, its messages and tools."""
    from langchain_core.messages import convert_to_openai_messages

    from bench.answering.request import first_messages, tools_for
    from bench.config.job_cases import load_job_cases
    from bench.policies import FullHistory, PolicyContext
    from bench.text.tokens import TokenCounter

    counter = TokenCounter()
    rows = []
    for case in load_job_cases(compose(["dataset=local", f"dataset.path={cases_file}"]), counter).cases:
        view = FullHistory(context=PolicyContext(counter=counter))(case)
        for question in case.questions:
            rows.append({"id": f"{case.case_id}|{question.qid}", "tools": tools_for(case, view),
                         "messages": convert_to_openai_messages(first_messages(case, view, question))})
    return rows


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """(wall s, CPU s of the process and its children, stdout) of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"{cmd[-1]} ... failed ({done.returncode}): {done.stderr[-2000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), done.stdout


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--latencies", default="0.2,1.0", help="comma list of seconds per reply of the fake server")
    parser.add_argument("--repeats", type=int, default=3, help="measured runs of each side per latency (alternating)")
    parser.add_argument("--cases", type=int, default=20, help="cases (dev.parquet rows repeated with distinct ids)")
    parser.add_argument("--concurrency", type=int, default=16, help="requests in flight on both sides")
    parser.add_argument("--data", default="dev", help="rows to repeat: dev, sample or a FILE")
    parser.add_argument("--before", default=None,
                        help="also run the bench job from this checkout's src directory (a third side, 'before')")
    parser.add_argument("--compile-every-start", action="store_true",
                        help="keep PYTHONDONTWRITEBYTECODE if set: every process compiles every module again "
                             "(default: both sides read bytecode the warm-up cached in a directory of this run)")
    args = parser.parse_args(argv)
    quiet()
    with tempfile.TemporaryDirectory(prefix="bench_inspect_") as tmp_name:
        tmp = Path(tmp_name)
        cases_file = make_cases_file(resolve_data(args.data), args.cases, tmp)
        rows = requests_of(cases_file)
        (tmp / "samples.json").write_text(json.dumps(rows), encoding="utf-8")
        (tmp / "warmup.json").write_text(json.dumps(rows[:4]), encoding="utf-8")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "INSPECT_"))}
        env.update(OPENAI_API_KEY="no-key", TQDM_DISABLE="1", BENCH_PHASE_CPU=str(tmp / "phase_cpu"))
        compiling = bool(os.environ.get("PYTHONDONTWRITEBYTECODE")) and args.compile_every_start
        if not args.compile_every_start:  # as most installs run: modules compiled once (here: by the warm-ups)
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            env["PYTHONPYCACHEPREFIX"] = str(tmp / "pycache")
        env_before = {**env, "PYTHONPATH": str(Path(args.before).resolve())} if args.before else env
        print(f"{len(rows)} questions of {args.cases} cases ({args.data}), concurrency {args.concurrency}, "
              f"{args.repeats} alternating runs per side after a warm-up; {os.cpu_count()} CPUs, load average "
              f"{', '.join(f'{x:.1f}' for x in os.getloadavg())}; bytecode "
              f"{'compiled at every start (PYTHONDONTWRITEBYTECODE)' if compiling else 'cached by the warm-ups'}"
              f"{'; before: bench from ' + args.before if args.before else ''}\n")
        summary = []
        for latency in (float(x) for x in args.latencies.split(",") if x):
            with fake_server("--latency", str(latency), "--approx-tokens", "--lifetime", "3600") as (url, _):
                def bench(run: str, *extra: str) -> list[str]:
                    return [sys.executable, "-c", PROBE, "dataset=local", f"dataset.path={cases_file}", "arm=full",
                            "model=openai", f"model.base_url={url}", "model.api_key_env=null", "judge=exact",
                            "cache.enabled=false", f"model.max_concurrency={args.concurrency}",
                            "model.warm_prefix=false", "tracing.langfuse=false", f"output_dir={tmp / run}", *extra]

                def inspect(run: str, samples: str = "samples.json") -> list[str]:
                    return [sys.executable, str(INSPECT_SIDE), str(tmp / samples), url, str(args.concurrency),
                            str(tmp / run)]

                sides = ["bench", "inspect", *(["before"] if args.before else [])]
                for side in sides:  # warm-ups: first connections, bytecode written
                    warm = f"warm-{side}-{latency}"
                    timed(inspect(warm, "warmup.json") if side == "inspect" else bench(warm, "dataset.limit=2"),
                          env_before if side == "before" else env)
                runs: dict[str, list[tuple[float, float, int, float]]] = {side: [] for side in sides}
                for rep in range(args.repeats):
                    for side in sides[rep % len(sides):] + sides[:rep % len(sides)]:  # each side first in turn
                        name = f"{side}-{latency}-{rep}"
                        wall, cpu, out = timed(inspect(name) if side == "inspect" else bench(name),
                                               env_before if side == "before" else env)
                        if side != "inspect":
                            calls = sum(1 for line in (tmp / name / "calls.jsonl").read_text().splitlines()
                                        if json.loads(line).get("kind") == "answer")
                            phase_cpu = float((tmp / "phase_cpu").read_text())
                        else:
                            result = json.loads(out.strip().splitlines()[-1])
                            calls, phase_cpu = result["samples"] - result["errors"], float("nan")
                        runs[side].append((wall, cpu, calls, phase_cpu))
                print(f"latency {1000 * latency:.0f} ms, ideal {len(rows) * latency / args.concurrency:.2f} s "
                      f"({len(rows)} calls on {args.concurrency} slots)")
                print(f"  {'side':<8}{'calls':>6}{'wall s (median)':>17}{'min-max':>14}{'CPU s':>8}{'CPU/call ms':>13}"
                      f"{'phase CPU/answer ms':>21}")
                medians = {}
                for side, values in runs.items():
                    walls = [v[0] for v in values]
                    cpu = statistics.median(v[1] for v in values)
                    calls = values[-1][2]
                    medians[side] = statistics.median(walls)
                    phase = statistics.median(v[3] for v in values) * 1000 / max(1, calls)
                    print(f"  {side:<8}{calls:>6}{medians[side]:>17.2f}{f'{min(walls):.2f}-{max(walls):.2f}':>14}"
                          f"{cpu:>8.2f}{1000 * cpu / max(1, calls):>13.1f}"
                          f"{(f'{phase:.1f}' if side != 'inspect' else '-'):>21}")
                ratio = medians["bench"] / medians["inspect"]
                summary.append((latency, ratio))
                before = f", before {medians['before'] / medians['inspect']:.2f}x" if args.before else ""
                print(f"  bench / inspect process wall: {ratio:.2f}x{before}\n")
        print("bench / inspect: " + ", ".join(f"{r:.2f}x at {1000 * lat:.0f} ms" for lat, r in summary))
    return 0


if __name__ == "__main__":
    try:
        import inspect_ai  # noqa: F401
    except ImportError:  # a fresh clone: inspect_ai is in the bench dependency group only
        if os.environ.get("BENCH_INSPECT_REEXEC"):
            sys.exit("error: inspect_ai is not installed; run `uv sync --group bench` first")
        os.environ["BENCH_INSPECT_REEXEC"] = "1"
        os.execvp("uv", ["uv", "run", "--project", str(ROOT), "--group", "bench", "python", os.path.abspath(sys.argv[0]),
                         *sys.argv[1:]])
    sys.exit(main())
