"""The console scripts (``[project.scripts]``) and ``bench.main`` never end in a traceback: output to a
reader that stopped early (``| head -1``) is no error, output that cannot be written (``> /dev/full``)
is one line, exit 2; an output directory that cannot be made (a dangling symlink, a file, a file
system that refuses it) is refused before anything is written; a required config group left out
(``arm=null``, ``~arm``) is one line; ``HYDRA_FULL_ERROR=0`` means off; a script's usage line names
the script.

Each test failed before its fix (issues 20 and 32).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench.config.checks import compose
from bench.runner import run

from commands import bench, one_line, one_line_error, tool
from paths import DATA, pythonpath

CALIBRATION = str(DATA / "judge_calibration.jsonl")


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("HYDRA_FULL_ERROR", "OPENAI_API_KEY")}
    env["PYTHONPATH"] = pythonpath()
    return env


def _shell(command: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", command], cwd=cwd, env=_env(), capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def job(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("scripts") / "job"
    run(compose([f"output_dir={out}", "dataset.limit=2", "cache.enabled=false"]))
    return out


def _commands(job: Path, tmp: Path) -> dict[str, str]:
    """Each console script with arguments that print several lines to stdout."""
    py = sys.executable
    return {
        "bench": f"{py} -m bench.main dataset.limit=1 cache.enabled=false output_dir={tmp / 'new'}",
        "bench-estimate": f"{py} -m bench.estimate -m 'seed=range(0,3)' dataset.limit=1",
        "bench-calibrate": f"{py} -m bench.calibrate {CALIBRATION}",
        "bench-dataset": f"{py} -m bench.dataset dataset.limit=2",
        "bench-report": f"{py} -m bench.report {job} --output {tmp / 'report'}",
        "bench-compare": f"{py} -m bench.compare {job} {job}",
    }


def _into_a_closed_pipe(command: str, cwd: Path) -> subprocess.CompletedProcess:
    """``command`` with stdout a pipe whose reader has gone (as ``| head -1`` once head has its line):
    the read end is closed before the command starts, so its first write fails, every time."""
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run(["bash", "-c", command], cwd=cwd, env=_env(), stdout=write, stderr=subprocess.PIPE,
                              text=True, timeout=300)
    finally:
        os.close(write)
    return done


@pytest.mark.one_variant
@pytest.mark.parametrize("script", ["bench", "bench-estimate", "bench-calibrate", "bench-dataset", "bench-report",
                                    "bench-compare"])
def test_a_console_script_whose_reader_stopped_ends_without_a_traceback(tmp_path, job, script):
    done = _into_a_closed_pipe(_commands(job, tmp_path)[script], tmp_path)
    assert "Traceback" not in done.stderr and "BrokenPipeError" not in done.stderr, done.stderr[-2000:]
    assert "Exception ignored" not in done.stderr and "Logging error" not in done.stderr, done.stderr[-2000:]
    assert done.returncode == 0, done.stderr[-2000:]
    if script == "bench":  # the job itself is done and recorded: only its console went away
        assert '"status": "complete"' in (tmp_path / "new" / "run.json").read_text()


@pytest.mark.one_variant
@pytest.mark.parametrize("script", ["bench", pytest.param("bench-estimate", marks=pytest.mark.slow),
                                    pytest.param("bench-report", marks=pytest.mark.slow)])
def test_a_console_script_piped_into_head_prints_its_first_line_without_a_traceback(tmp_path, job, script):
    done = _shell(f"set -o pipefail; {_commands(job, tmp_path)[script]} | head -1", tmp_path)
    assert "Traceback" not in done.stderr and "BrokenPipeError" not in done.stderr, done.stderr[-2000:]
    assert done.returncode == 0 and len(done.stdout.splitlines()) == 1, done.stderr[-2000:]


@pytest.mark.one_variant
@pytest.mark.parametrize("script", ["bench", "bench-estimate", "bench-calibrate", "bench-dataset", "bench-report",
                                    "bench-compare"])
def test_a_console_script_writing_to_a_full_disk_says_so_in_one_line(tmp_path, job, script):
    done = _shell(f"{_commands(job, tmp_path)[script]} > /dev/full", tmp_path)
    assert done.returncode == 2, done.stderr[-2000:]
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr, done.stderr[-2000:]
    last = done.stderr.strip().splitlines()[-1]
    assert last == "error: cannot write the output: No space left on device", done.stderr[-2000:]


# =========================================================================== where the output goes


def test_report_output_on_a_file_or_a_directory_that_cannot_be_made_is_one_line(tmp_path, job):
    existing = tmp_path / "taken.md"
    existing.write_text("mine")
    for target, expected in ((existing, "is a file"), (Path("/sys/bench-report"), "cannot create"),
                             (Path("/proc/bench-report/x"), "cannot create"), (existing / "sub", "is a file")):
        done = _shell(f"{sys.executable} -m bench.report {job} --output {target}", tmp_path)
        assert done.returncode == 2, done.stderr
        assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1, done.stderr
        assert done.stderr.startswith("error: ") and expected in done.stderr, done.stderr
        assert done.stdout == ""
    assert existing.read_text() == "mine"


@pytest.mark.parametrize("kind", ["dangling", "file", "sys", "proc"])
@pytest.mark.parametrize("key", ["output_dir", pytest.param("hydra.run.dir", marks=pytest.mark.slow)])
def test_an_output_directory_that_cannot_be_made_is_refused_before_anything_is_written(tmp_path, kind, key):
    target = {"dangling": tmp_path / "link", "file": tmp_path / "afile" / "job", "sys": Path("/sys/bench-job"),
              "proc": Path("/proc/bench-job/x")}[kind]
    if kind == "dangling":
        target.symlink_to(tmp_path / "missing" / "job")
    if kind == "file":
        (tmp_path / "afile").write_text("a file")
    before = sorted(p.name for p in tmp_path.iterdir())
    done = bench(tmp_path, f"{key}={target}", "dataset.limit=1")
    one_line_error(done, str(target))
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # nothing written (no outputs/ either)
    assert not (tmp_path / "missing").exists()


def test_a_read_only_file_system_is_refused_in_one_line(tmp_path, monkeypatch):
    import errno
    import tempfile

    from bench.store.jobdir import JobDirError, check_new

    def read_only(*args, **kwargs):  # noqa: ANN002, ANN003
        raise OSError(errno.EROFS, os.strerror(errno.EROFS))

    monkeypatch.setattr(tempfile, "mkdtemp", read_only)
    with pytest.raises(JobDirError, match="cannot create the output directory .*Read-only file system"):
        check_new(tmp_path / "job")
    assert not (tmp_path / "job").exists()


# =========================================================================== groups left out, HYDRA_FULL_ERROR


@pytest.mark.parametrize("override", ["arm=null", "~arm", "model=null", "~judge", "dataset=null"])
def test_a_required_group_left_out_is_one_line_naming_its_options(tmp_path, override):
    group = override.lstrip("~").partition("=")[0]
    line = one_line_error(bench(tmp_path, override, f"output_dir={tmp_path / 'job'}"), override, f"{group}=OPTION")
    assert "NoneType" not in line and not (tmp_path / "job").exists()


def test_an_optional_group_set_to_null_says_how_to_leave_it_out(tmp_path):
    one_line_error(bench(tmp_path, "summarizer=null", f"output_dir={tmp_path / 'job'}"), "~summarizer")


@pytest.mark.parametrize("value", ["0", "", "false"])
def test_hydra_full_error_other_than_1_is_off(tmp_path, value):
    done = bench(tmp_path, "arm=bogus", env={"HYDRA_FULL_ERROR": value})
    one_line_error(done, "unknown option arm=bogus")


def test_hydra_full_error_1_still_gives_hydras_full_trace(tmp_path):
    done = bench(tmp_path, "arm=bogus", env={"HYDRA_FULL_ERROR": "1"})
    assert done.returncode == 1 and "Traceback" in done.stderr


@pytest.mark.one_variant
@pytest.mark.parametrize("module", ["bench.compare", "bench.rescore"])
def test_output_to_a_directory_or_an_unwritable_path_is_one_line_and_exit_2(tmp_path, two_jobs, module):
    a, b = two_jobs
    inputs = [str(a), str(b)] if module == "bench.compare" else [str(a)]
    for target in (tmp_path, Path("/proc/bench-out.md"), tmp_path / "file" / "out.md"):
        (tmp_path / "file").write_text("a file, not a directory")
        done = tool(module, *inputs, "--output", str(target))
        one_line(done, "--output", str(target))
        assert "## bench.compare" not in done.stdout  # nothing half done


@pytest.mark.one_variant
@pytest.mark.parametrize("script,module", [("bench-report", "bench.report"), ("bench-estimate", "bench.estimate"),
                                           ("bench-cache", "bench.cache"), ("bench-compare", "bench.compare")])
def test_a_console_scripts_usage_names_the_script(script, module):
    path = Path(sys.executable).with_name(script)
    if not path.exists():
        pytest.skip("the project is not installed with its scripts in this environment")
    done = subprocess.run([str(path), "--help"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.startswith(f"usage: {script} "), done.stdout[:80]
    as_module = subprocess.run([sys.executable, "-m", module, "--help"], capture_output=True, text=True, timeout=120)
    assert as_module.stdout.startswith(f"usage: python -m {module} ")
