"""scripts/mini_swe_agent_to_chat.py: a mini-swe-agent text-action log becomes a chat log whose calls the
benchmark asks about; what it does not read is refused in one line."""

from __future__ import annotations

import json
import subprocess
import sys

from cli_batch import run_commands
from paths import DATA, OPS_JSONL, PROJECT

CHAT = DATA / "real" / "chat"
V1_LOG = CHAT / "source" / "mini_swe_agent_v1.traj.json"  # a real mini-swe-agent 1.7 run (PROVENANCE.md)
CONVERTER = PROJECT / "scripts" / "mini_swe_agent_to_chat.py"


def test_the_converter_turns_text_actions_into_calls_the_benchmark_asks_about(tmp_path):
    out = tmp_path / "runs.jsonl"
    done = subprocess.run([sys.executable, str(CONVERTER), str(V1_LOG), "-o", str(out)], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    [record] = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    source = json.loads(V1_LOG.read_text(encoding="utf-8"))
    calls = [m for m in record["messages"] if m.get("tool_calls")]
    results = [m for m in record["messages"] if m["role"] == "tool"]
    assert len(calls) == len(results) == sum(m["role"] == "assistant" for m in source) == 10
    first = calls[0]["tool_calls"][0]
    assert first["function"]["name"] == "bash"
    assert json.loads(first["function"]["arguments"]) == {
        "command": "cat /Users/fuchur/Documents/24/git_sync/swe-agent-test-repo/tests/./missing_colon.py"}
    assert calls[0]["content"].startswith("I'll help you solve this issue.") and "```" not in calls[0]["content"]
    assert results[0]["content"] == source[3]["content"] and results[0]["tool_call_id"] == first["id"]
    [(code, stdout, err)] = run_commands([(tmp_path, ["dataset=chat", f"dataset.path={out}",
                                                      "dataset.shell_tools=[bash]",
                                                      "dataset.error_pattern='<returncode>[1-9]'",
                                                      "output_dir=job"])])
    assert code == 0, err
    types = {json.loads(line)["type"] for line in (tmp_path / "job" / "scores.jsonl").read_text().splitlines()}
    assert {"first_error", "first_tool_error", "call_count", "tool_output"} <= types


def test_the_converter_refuses_what_it_does_not_read_in_one_line(tmp_path):
    with_calls = CHAT / "source" / "mini-swe-agent_astropy__astropy-12907_excerpt.traj.json"
    for path, reason in ((with_calls, "the run has tool calls already"), (OPS_JSONL, "cannot read it as JSON")):
        done = subprocess.run([sys.executable, str(CONVERTER), str(path), "-o", str(tmp_path / "x.jsonl")],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 2 and done.stderr.count("\n") == 1 and reason in done.stderr, done.stderr
        assert not (tmp_path / "x.jsonl").exists()
