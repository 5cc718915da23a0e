"""The command line as a user runs it: default job, a --multirun smoke sweep, clear errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


def bench(cwd: Path, *args: str, timeout: int = 120) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "HYDRA_FULL_ERROR"}
    return subprocess.run([sys.executable, "-m", "bench.main", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)


def test_default_command_prints_a_summary(tmp_path):
    done = bench(tmp_path)
    assert done.returncode == 0, done.stderr
    assert "evidence available (offline reader): 100.0%" in done.stdout and "files_changed" in done.stdout
    (job,) = list((tmp_path / "outputs").glob("*/*_full"))
    assert json.loads((job / "run.json").read_text())["status"] == "complete"
    assert (job / ".hydra" / "config.yaml").exists()


def test_multirun_smoke_writes_one_readable_directory_per_job(tmp_path):
    done = bench(tmp_path, "-m", "dataset.limit=2,3", "seed=0")
    assert done.returncode == 0, done.stderr
    jobs = sorted(p.name for p in (tmp_path / "multirun").glob("*/*/*") if (p / "metrics.json").exists())
    assert jobs == ["dataset.limit=2,seed=0", "dataset.limit=3,seed=0"]


@pytest.mark.one_variant
@pytest.mark.parametrize("args,message", [
    (["arm=nope"], "unknown option arm=nope (options: anthropic_clear, anthropic_compact, compact, condenser, context_edit, custom, full, inspect, lc_summary, mask, nlatest, none, openai_compact"),
    (["dataset=local"], "dataset.path"),
    (["dataset=local", "dataset.path=/nonexistent/rows.parquet"], "dataset file not found"),
    (["nosuchkey=1"], "nosuchkey"),
    (["seed=abc"], "seed: Value 'abc'"),
    (["dataset.limit=ten"], "dataset.limit"),
    (["dataset.source=s3"], "dataset.source"),
])
def test_bad_input_gives_a_clear_message_and_no_traceback(tmp_path, args, message):
    done = bench(tmp_path, *args)
    assert done.returncode != 0
    assert message in done.stderr
    assert "Traceback" not in done.stderr


def test_unreadable_files_fail_with_a_clear_message(tmp_path):
    corrupt = tmp_path / "corrupt.parquet"
    corrupt.write_bytes(b"PAR1 not really parquet")
    columns = tmp_path / "columns.jsonl"
    columns.write_text(json.dumps({"instance_id": "a", "messages": []}) + "\n")
    for path, message in ((corrupt, "cannot read"), (columns, "lacks required column(s) ['trajectory']")):
        done = bench(tmp_path, "dataset=local", f"dataset.path={path}")
        assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr


def test_rows_that_cannot_become_cases_are_reported_and_a_job_left_without_question_exits_2(tmp_path):
    """Every row rejected: each reason is logged as the rows are read, and a job with no question is
    refused (issue 32) in one line naming the first, leaving no job directory."""
    from builders import assistant, bash, call, result, row

    bad_json = row([assistant(call("b", "execute_bash", '{"command": ')), result("b", "execute_bash", "x")])
    unpaired = row(result("ghost", "execute_bash", "x"), bash("1", "ls", "x"))
    path = tmp_path / "bad.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in (bad_json, unpaired)))
    done = bench(tmp_path, "dataset=local", f"dataset.path={path}", "output_dir=job")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines() == [
        "error: no question to ask: 2 row(s) read; 0 case(s) selected; 2 rejected (first: message 2: arguments of "
        "execute_bash call b are not valid JSON (Expecting value at char 12)) (questions.types and the filters in "
        "conf/dataset/ decide what is asked)"]
    assert "not valid JSON" in done.stdout and "has no call" in done.stdout  # each row's reason, as it was read
    assert not (tmp_path / "job").exists()


def test_offline_default_job_imports_nothing_it_does_not_use(tmp_path):
    """Start-up (issue 14): the shipped-sample offline job runs without the model SDKs, tracing,
    the dataset loader or the report's plotting stack; importing them costs seconds per job."""
    unused = ("openai", "langchain_openai", "langgraph", "langfuse", "datasets", "pandas", "matplotlib", "pyarrow")
    script = (
        "import sys, runpy\n"
        f"sys.argv = ['bench.main', 'output_dir={tmp_path / 'job'}']\n"
        "try:\n    runpy.run_module('bench.main', run_name='__main__')\n"
        "except SystemExit as stop:\n    assert not stop.code, stop.code\n"
        f"print(sorted(m for m in {unused!r} if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"
    assert (tmp_path / "job" / "metrics.json").exists()


def test_an_in_process_sweep_keeps_nothing_of_its_finished_jobs(tmp_path):
    """Memory (issue 14): the jobs of a basic-launcher sweep share one process; what a job built
    (cases and their views, held in reference cycles) is collected when the job ends, so a
    long sweep stays flat instead of growing by a job's worth of data per job."""
    script = (
        "import gc, sys, runpy\n"
        f"sys.argv = ['bench.main', '-m', 'seed=0,1', 'hydra.sweep.dir={tmp_path / 'sweep'}',"
        " 'hydra.callbacks.report.enabled=false']\n"
        "gc.disable()  # only the job's own collection may free its cycles\n"
        "try:\n    runpy.run_module('bench.main', run_name='__main__')\n"
        "except SystemExit as stop:\n    assert not stop.code, stop.code\n"
        "from bench.store.schema import Case\n"
        "print(sum(isinstance(o, Case) for o in gc.get_objects()))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert len(list((tmp_path / "sweep").glob("*/metrics.json"))) == 2
    assert done.stdout.strip().splitlines()[-1] == "0"
