"""The command-line entry points (issue 21 item 4): `[project.scripts]` beside `python -m bench.<tool>`,
and one error base the entry point catches."""

from __future__ import annotations

import importlib
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from bench.core.errors import BenchError

from paths import PROJECT

ROOT = PROJECT
SCRIPTS = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_every_script_names_a_callable_and_its_module_runs_with_python_m(name):
    module, _, function = SCRIPTS[name].partition(":")
    assert callable(getattr(importlib.import_module(module), function))
    runnable = module if module != "bench.cache.admin" else "bench.cache"  # python -m bench.cache
    assert importlib.util.find_spec(runnable + ".__main__" if runnable == "bench.cache" else runnable)


def test_the_bench_script_is_the_main_entry_point():
    script = Path(sys.executable).with_name("bench")
    if not script.exists():
        pytest.skip("the project is not installed with its scripts in this environment")
    done = subprocess.run([str(script), "--help"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "python -m bench.main -m arm=nlatest" in done.stdout
    done = subprocess.run([str(script), "arm=nlatset"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stderr.strip().startswith("error: unknown option arm=nlatset")


def test_every_user_facing_error_is_a_bench_error():
    from bench.calibrate import CalibrationError
    from bench.cli.argv import UserError
    from bench.core.errors import ConfigError, DatasetError
    from bench.llm import ModelSetupError
    from bench.profiles import ProfileError
    from bench.questions import QuestionTypeError
    from bench.runner import ResumeError
    from bench.sources.chatlog import ChatLogError
    from bench.store.jobdir import JobDirError

    for error in (UserError, CalibrationError, ChatLogError, ConfigError, DatasetError, JobDirError, ModelSetupError,
                  ProfileError, QuestionTypeError, ResumeError):
        assert issubclass(error, BenchError), error
    assert issubclass(ConfigError, ValueError) and issubclass(DatasetError, RuntimeError)  # old bases kept
