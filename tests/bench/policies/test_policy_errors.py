"""A policy's settings and a custom policy's result are checked: a mistake is one line naming the key
or the policy, exit 2, never a job of empty views scored 0 or a silent ``incomplete``.

Each test failed before its fix (issue 32, "Judging and results" and "Crashes and hangs").
"""

from __future__ import annotations

import json

import pytest

from bench.core.errors import ConfigError
from bench.policies.lc_summary import LangChainSummarization
from bench.policies.trim import TrimMessages

from commands import bench, one_line_error


@pytest.mark.parametrize("function, expected", [
    ("exits", "called sys.exit(0)"),
    ("strings", "returned a str at position 0"),
    ("dicts", "returned a dict at position 0"),
])
def test_a_custom_policy_that_exits_or_returns_no_messages_stops_the_job_in_one_line(tmp_path, function, expected):
    job = tmp_path / "job"
    done = bench(tmp_path, "arm=custom", f"arm.policy=custom_policies:{function}", "dataset.limit=1",
                 f"output_dir={job}")
    line = one_line_error(done, f"arm.policy=custom_policies:{function}", expected)
    assert "AttributeError" not in line
    if (job / "run.json").exists():
        assert json.loads((job / "run.json").read_text())["status"] != "complete"


@pytest.mark.one_variant
@pytest.mark.parametrize("override, key", [
    ("arm.start_on=[bogus]", "arm.start_on"),
    ("arm.start_on=[human, robot]", "arm.start_on"),
    ("arm.start_on=[]", "arm.start_on"),
    ("arm.end_on=[nope]", "arm.end_on"),
])
def test_trim_refuses_message_types_langchain_does_not_have(tmp_path, override, key):
    line = one_line_error(bench(tmp_path, "arm=trim", override, "dataset.limit=1", f"output_dir={tmp_path / 'job'}"),
                          key, "human")
    assert "bogus" in line or "robot" in line or "nope" in line or "[]" in line


def test_trim_takes_a_single_message_type_as_a_list_of_one():
    assert TrimMessages(start_on="human").start_on == ["human"]
    assert TrimMessages(start_on=["human", "ai"], end_on=["tool"]).end_on == ["tool"]
    with pytest.raises(ConfigError, match="arm.start_on"):
        TrimMessages(start_on=["Human"])


@pytest.mark.one_variant
@pytest.mark.parametrize("override", ["arm.trigger=[fraction, 0.5]", "arm.keep=[fraction, 0.2]",
                                      "arm.trigger=[[tokens, 3000], [fraction, 0.8]]"])
def test_lc_summary_with_a_fraction_and_no_context_window_names_arm_context_window(tmp_path, override):
    line = one_line_error(bench(tmp_path, "arm=lc_summary", override, "dataset.limit=1",
                                f"output_dir={tmp_path / 'job'}"), "arm.context_window")
    assert "profile" not in line


def test_lc_summary_with_a_fraction_and_a_context_window_is_built():
    arm = LangChainSummarization(trigger=["fraction", 0.5], context_window=128_000)
    assert arm.trigger == ("fraction", 0.5)


def test_a_setting_the_arm_does_not_take_is_one_line_printed_once(tmp_path):
    done = bench(tmp_path, "+arm.n=-3")
    line = one_line_error(done, "arm.n: not a setting of arm=full")
    assert "TypeError" not in line and "FullHistory" not in done.stdout + done.stderr
    assert not list((tmp_path / "outputs").rglob("main.log"))  # a refused job leaves no directory (issue 32)
