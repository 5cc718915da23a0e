"""Writes that fail (a full disk, a read-only file system, an output path that is a file) name the file in one
line, leave no temporary file and no torn line, and leave a job that resume= finishes."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from bench.runner import run
from bench.store.jobdir import JobDirError
from bench.store.records import JobFileError, read_jsonl

from builders import sample_questions
from commands import bench, one_line_error
from jobs import canonical, job_cfg

N_QUESTIONS = sample_questions()  # questions of the shipped sample


class _FailingWrites:
    """A file handle whose writes to ``target`` fail with ``code`` after ``after`` writes (the first one half done)."""

    def __init__(self, handle, state: dict) -> None:
        self._handle, self._state = handle, state

    def write(self, text):
        self._state["writes"] += 1
        if self._state["writes"] > self._state["after"]:
            self._handle.write(text[: len(text) // 2])  # a torn write, as a full disk leaves it
            self._handle.flush()
            raise OSError(self._state["code"], os.strerror(self._state["code"]))
        return self._handle.write(text)

    def __getattr__(self, name):
        return getattr(self._handle, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return self._handle.__exit__(*exc)


def _fail_writes(monkeypatch, name: str, after: int, code: int = errno.ENOSPC) -> None:
    original = Path.open
    state = {"writes": 0, "after": after, "code": code}

    def patched(self, mode="r", *args, **kwargs):
        handle = original(self, mode, *args, **kwargs)
        return _FailingWrites(handle, state) if self.name == name and ("a" in mode or "w" in mode) else handle

    monkeypatch.setattr(Path, "open", patched)


def test_disk_full_mid_job_says_which_file_and_leaves_a_resumable_job(tmp_path, finished, monkeypatch):
    out = tmp_path / "job"
    _fail_writes(monkeypatch, "answers.jsonl", after=10)
    with pytest.raises(JobFileError, match=r"answers\.jsonl: No space left on device") as caught:
        run(job_cfg(output_dir=str(out)))
    assert isinstance(caught.value, OSError)  # bench.main reports it in one line, exit 2
    monkeypatch.undo()
    assert not list(out.glob("*.tmp"))
    assert (out / "answers.jsonl").read_bytes().endswith(b"\n")  # no torn line
    assert len(read_jsonl(out / "answers.jsonl")) == 10
    metrics = run(job_cfg(resume=str(out)))
    assert metrics["n_scored"] == N_QUESTIONS
    assert canonical(out / "scores.jsonl") == canonical(finished / "scores.jsonl")


def test_a_read_only_job_directory_says_which_file_and_leaves_no_tmp(tmp_path, monkeypatch):
    out = tmp_path / "job"
    real = os.replace

    def read_only(src, dst, *args, **kwargs):
        if Path(dst).name == "run.json":
            raise OSError(errno.EROFS, os.strerror(errno.EROFS))
        return real(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "replace", read_only)
    with pytest.raises(JobFileError, match=r"run\.json: Read-only file system"):
        run(job_cfg(output_dir=str(out)))
    assert not list(out.glob("*.tmp")) and not (out / "run.json").exists()


def test_disk_full_through_the_command_line_is_one_line_and_exit_2(tmp_path):
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(
        "import errno, os, pathlib\n"
        "_open = pathlib.Path.open\n"
        "def _full(self, mode='r', *a, **k):\n"
        "    if self.name == 'views.jsonl' and 'a' in mode:\n"
        "        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))\n"
        "    return _open(self, mode, *a, **k)\n"
        "pathlib.Path.open = _full\n")
    done = bench(tmp_path, f"output_dir={tmp_path / 'job'}", env={"PYTHONPATH": str(hook)})
    one_line_error(done, str(tmp_path / "job" / "views.jsonl"), "No space left on device")
    assert not list((tmp_path / "job").glob("*.tmp"))


def test_an_output_dir_that_is_a_file_is_one_line(tmp_path):
    file = tmp_path / "results"
    file.write_text("not a directory\n")
    one_line_error(bench(tmp_path, f"output_dir={file}"), str(file), "is a file")
    one_line_error(bench(tmp_path, f"hydra.run.dir={file}"), str(file), "is a file")
    assert file.read_text() == "not a directory\n" and not (tmp_path / "outputs").exists()
    with pytest.raises(JobDirError, match="is a file"):
        run(job_cfg(output_dir=str(file)))
