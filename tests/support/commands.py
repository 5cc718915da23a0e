"""The project's commands as a user runs them, in a subprocess, and what a refusal must look like."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from paths import pythonpath


def bench(cwd: Path, *args: str, env: dict[str, str] | None = None, timeout: int = 120) -> subprocess.CompletedProcess:
    """``python -m bench.main args`` in ``cwd`` (no key in the environment; ``env`` added)."""
    full = {k: v for k, v in os.environ.items() if k not in ("HYDRA_FULL_ERROR", "OPENAI_API_KEY")}
    full["PYTHONPATH"] = pythonpath()
    full.update(env or {})
    return subprocess.run([sys.executable, "-m", "bench.main", *args], cwd=cwd, env=full, capture_output=True,
                          text=True, timeout=timeout)


def tool(module: str, *args: str, cwd: Path | None = None, stdin: str | None = None,
         timeout: int = 120) -> subprocess.CompletedProcess:
    """``python -m <module> args`` in a subprocess (no key in the environment)."""
    env = {k: v for k, v in os.environ.items() if k not in ("HYDRA_FULL_ERROR", "OPENAI_API_KEY")}
    env["PYTHONPATH"] = pythonpath()
    return subprocess.run([sys.executable, "-m", module, *args], cwd=cwd, env=env, capture_output=True, text=True,
                          input=stdin, timeout=timeout)


def one_line_error(done: subprocess.CompletedProcess, *expected: str) -> str:
    """The run failed with exit 2 and one ``error:`` line holding ``expected``, printed once, no traceback."""
    assert done.returncode == 2, (done.stdout, done.stderr)
    output = done.stdout + done.stderr
    assert "Traceback" not in output, done.stderr
    last = done.stderr.strip().split("\n")[-1]
    assert last.startswith("error: "), done.stderr
    for text in expected:
        assert text in last, last
    assert output.count(last.removeprefix("error: ")) == 1, output  # printed once, not also as a log line
    return last


def one_line(done: subprocess.CompletedProcess, *expected: str) -> str:
    """Exit 2, no traceback, and a last stderr line ``error: ...`` holding ``expected``."""
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "Traceback" not in done.stdout + done.stderr, done.stderr
    last = done.stderr.strip().split("\n")[-1]
    assert last.startswith("error: "), done.stderr
    for text in expected:
        assert text in last, last
    return last


def job_like(root: Path) -> list[str]:
    """What a job leaves: its directories under outputs/ or multirun/, and Hydra's and the job's files."""
    found = [p for p in root.rglob("*") if p.name in (".hydra", "main.log", ".lock", "run.json", "multirun.yaml")]
    found += [root / d for d in ("outputs", "multirun") if (root / d).exists()]
    return sorted(str(p.relative_to(root)) for p in found)
