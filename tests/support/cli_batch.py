"""Many ``python -m bench.main`` commands for the price of one start-up (tests).

A test that checks what each of a list of commands does (its exit code, its stderr, what it leaves
on disk) would start an interpreter and import Hydra and the package once per command. Here one
process imports ``bench.main`` once and forks a child per command: each child is a fresh process
with the imports done, runs ``bench.main.cli(args)`` in its own directory with its own stdout,
stderr and environment, and exits as the command would. Fork is the point (the child shares
nothing with its siblings), so this runs on POSIX only::

    results = run_commands([(cwd, ["arm=nlatset"]), ...], env={...})  # [(exit code, stdout, stderr), ...]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from paths import pythonpath

_DRIVER = r'''
import json, os, sys
import importlib
commands, preload = json.load(open(sys.argv[1]))
import bench.main  # once: every child has it
for module in preload:  # what the jobs import later (the runner, the model stack): once, not per child
    importlib.import_module(module)
for index, (cwd, args, out, err) in enumerate(commands):
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            os.chdir(cwd)
            with open(out, "wb") as o, open(err, "wb") as e:
                os.dup2(o.fileno(), 1)
                os.dup2(e.fileno(), 2)
            sys.argv = [bench.main.__file__, *args]  # as python -m bench.main has it
            try:
                bench.main.cli(args)
            except SystemExit as stop:
                code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    print(json.dumps([index, os.waitstatus_to_exitcode(status)]), flush=True)
'''


# what a job imports after Hydra composed its config (bench.cli.callbacks.JOB_IMPORTS), and the model stack
JOB_MODULES = ("bench.config.checks", "bench.runner", "bench.data.selection")
MODEL_MODULES = ("bench.answering.agent", "bench.scoring.judge", "bench.llm.client", "openai", "langchain_openai", "langgraph.graph")


def run_commands(commands: list[tuple[Path, list[str]]], env: dict[str, str] | None = None,
                 timeout: int = 600, preload: tuple[str, ...] = JOB_MODULES) -> list[tuple[int, str, str]]:
    """``(exit code, stdout, stderr)`` of ``bench.main`` run with each ``(cwd, args)``, in order; the
    ``preload`` modules imported once before the first command (``MODEL_MODULES`` for model jobs)."""
    with tempfile.TemporaryDirectory() as scratch:
        plan: list[list[Any]] = []
        for index, (cwd, args) in enumerate(commands):
            plan.append([str(cwd), list(args), f"{scratch}/{index}.out", f"{scratch}/{index}.err"])
        Path(scratch, "plan.json").write_text(json.dumps([plan, list(preload)]), encoding="utf-8")
        base = {k: v for k, v in os.environ.items() if k not in ("HYDRA_FULL_ERROR", "OPENAI_API_KEY")}
        done = subprocess.run([sys.executable, "-c", _DRIVER, f"{scratch}/plan.json"], capture_output=True, text=True,
                              env={**base, "PYTHONPATH": pythonpath(), **(env or {})}, timeout=timeout)
        assert done.returncode == 0, done.stderr
        codes = dict(json.loads(line) for line in done.stdout.splitlines() if line.startswith("["))
        return [(codes[index], Path(out).read_text(encoding="utf-8", errors="replace"),
                 Path(err).read_text(encoding="utf-8", errors="replace"))
                for index, (_cwd, _args, out, err) in enumerate(plan)]
