"""No silent mixed stack (issue 30 item 5): a real model never summarizes with the offline stand-in
unless chosen, an LLM judge that is the answering model is said so, and the start line and
``run.json`` name the model, the summarizer and the judge."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench.cli.argv import UserError, check_stack
from bench.config.arms import mixed_stack, stack, stack_line
from bench.config.checks import compose
from bench.runner import run

from fake_openai import FakeOpenAI
from paths import PROJECT, pythonpath


def _bench(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    env["PYTHONPATH"] = pythonpath()
    return subprocess.run([sys.executable, "-m", "bench.main", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=180)


@pytest.mark.parametrize("args", [["model=openai", "arm=compact"], ["model=openai", "arm=lc_summary"],
                                  ["model=openai", "arm=condenser", "arm.budget=0.25"],
                                  ["model=openai", "arm=nlatest", "arm.n=null", "arm.match=compact"]])
def test_a_real_model_with_the_offline_summarizer_is_refused_in_one_line_and_nothing_is_written(tmp_path, args):
    done = _bench(tmp_path, *args)
    assert done.returncode == 2
    lines = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and lines[0].startswith("error: summarizer:") and "summarizer=openai" in lines[0]
    assert list(tmp_path.iterdir()) == []  # no job directory, no .hydra, no main.log


def test_choosing_the_offline_summarizer_explicitly_is_allowed():
    args = ["model=openai", "arm=compact", "summarizer=offline"]
    check_stack(args)  # no refusal
    assert mixed_stack(compose(args), args) is None
    assert mixed_stack(compose(["model=openai", "arm=compact", "summarizer=openai"]), []) is None
    for offline in (["arm=compact"], ["model=openai", "arm=mask"], ["model=openai", "arm=context_edit"]):
        assert mixed_stack(compose(offline), offline) is None  # offline model, or an arm that does not summarize
    with pytest.raises(UserError, match="^summarizer: arm=compact summarizes"):
        check_stack(["model=openai", "arm=compact"])


@pytest.mark.parametrize("model, option", [("openai", "summarizer=openai"), ("anthropic", "summarizer=anthropic")])
def test_the_refusal_names_the_summarizer_of_the_answering_models_provider(model, option):
    """model=anthropic is told to set summarizer=anthropic (its own key), not summarizer=openai."""
    args = [f"model={model}", "arm=compact"]
    line = mixed_stack(compose(args), args)
    assert line is not None and f"set {option} (a model writes the summaries)" in line
    with pytest.raises(UserError, match=f"^summarizer: .*set {option} "):
        check_stack(args)


def test_the_start_line_names_model_summarizer_and_judge(tmp_path):
    done = _bench(tmp_path, "arm=compact", f"output_dir={tmp_path / 'job'}", "cache.enabled=false")
    assert done.returncode == 0, done.stderr[-2000:]
    log = (tmp_path / "job" / "main.log").read_text()
    assert ("arm=compact model=offline-evidence-reader (offline) summarizer=extractive (offline stand-in) "
            "judge=exact dataset=sample") in log
    record = json.loads((tmp_path / "job" / "run.json").read_text())["stack"]
    assert record == {"model": "offline-evidence-reader", "real_model": False, "summarizer": "extractive",
                      "summarizer_offline": True, "judge": "exact", "judge_is_answering_model": False}
    assert "summarizer=none" in stack_line(stack(compose(["arm=mask"])))


def test_an_llm_judge_that_defaults_to_the_answering_model_says_so():
    own = stack(compose(["model=openai", "judge=llm"]))
    assert own["judge_is_answering_model"] and own["judge"] == own["model"] == "gpt-4o-mini"
    assert own["judge_note"].startswith("judge.name not set: the answering model gpt-4o-mini grades its own")
    assert "judge=gpt-4o-mini (= the answering model: judge.name not set)" in stack_line(own)
    chosen = stack(compose(["model=openai", "judge=llm", "judge.name=gpt-4o"]))
    assert not chosen["judge_is_answering_model"] and "judge_note" not in chosen
    panel = stack(compose(["model=openai", "judge=panel"]))
    assert panel["judge_is_answering_model"] and panel["judge_note"].startswith("judge.members.llm.name not set")


def test_run_json_says_the_judge_is_the_answering_model_on_a_real_server(tmp_path):
    with FakeOpenAI() as server:
        run(compose([f"output_dir={tmp_path / 'job'}", "model=openai", f"model.base_url={server.base_url}",
                     "model.api_key_env=null", "judge=llm", "dataset.limit=1", "cache.enabled=false"]))
    record = json.loads((tmp_path / "job" / "run.json").read_text())["stack"]
    assert record["real_model"] and record["judge_is_answering_model"] and record["judge"] == "gpt-4o-mini"
    assert "grades its own answers" in record["judge_note"]


@pytest.mark.slow  # a sweep of two jobs in subprocesses
def test_a_sweep_with_a_mixed_stack_job_is_refused_once_before_any_job(tmp_path):
    """Issue 32: a sweep's prerequisites (the stack among them) are checked once, before any job: one line
    naming the job's problem, exit 2, no job started."""
    with FakeOpenAI() as server:
        done = _bench(PROJECT, "-m", "model=openai", f"model.base_url={server.base_url}", "model.api_key_env=null",
                      "arm=full,compact", "dataset.limit=1", f"hydra.sweep.dir={tmp_path / 'sweep'}",
                      "cache.enabled=false", "hydra.callbacks.report.enabled=false")
    assert done.returncode == 2, done.stderr
    line = done.stderr.strip().splitlines()[-1]
    assert line.startswith("error: summarizer: arm=compact summarizes") and "none started" in line, line
    assert not list((tmp_path / "sweep").rglob("run.json"))
