"""Chat logs as people have them: the README's example pasted as shown, a JSON array, pretty-printed records,
tau2-bench's own message shape; hostile lines (deep nesting, ids that are not strings, bad UTF-8) reject
only their conversation or name their line; a mini-swe-agent text-action log is named with its converter."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.sources.chatlog import ChatLogError, iter_chat_rows

from cli_batch import run_commands
from commands import bench, one_line
from jobs import job_cfg
from paths import DATA, OPS_JSONL
from readme_examples import readme_chat_example

CHAT = DATA / "real" / "chat"
V1_LOG = CHAT / "source" / "mini_swe_agent_v1.traj.json"  # a real mini-swe-agent 1.7 run (PROVENANCE.md)


def _sample_conversations(n: int = 2) -> list[dict]:
    from bench.data.selection import sample_path
    from bench.sources.chatlog import chat_record

    lines = sample_path().read_text(encoding="utf-8").splitlines()[:n]
    return [chat_record(json.loads(line)) for line in lines]


def _deep(depth: int) -> str:
    return "[" * depth + "]" * depth


def _hostile_chat_log(path: Path) -> dict[str, str]:
    """Good conversations around hostile ones; returns id -> the words its rejection must hold."""
    good = _sample_conversations()
    base = good[0]
    expected: dict[str, str] = {}
    lines = [json.dumps(c) for c in good]

    def variant(new_id: str, change, words: str) -> None:
        record = json.loads(json.dumps(base))
        record["id"] = new_id
        change(record)
        lines.append(json.dumps(record))
        expected[new_id] = words

    def first_call(record: dict) -> dict:
        return next(m for m in record["messages"] if m.get("tool_calls"))["tool_calls"][0]

    lines.append('{"id": "deep-line", "messages": [{"role": "user", "content": ' + _deep(100_000) + "}]}")
    expected["line3"] = "nested too deeply"
    variant("deep-args", lambda r: first_call(r)["function"].update(arguments='{"a": ' + _deep(100_000) + "}"),
            "nested")
    variant("deep-but-readable", lambda r: first_call(r)["function"].update(arguments='{"a": ' + _deep(500) + "}"),
            "nested more than")
    variant("int-call-id", lambda r: first_call(r).update(id=12345), "must be strings")
    variant("list-function-name", lambda r: first_call(r)["function"].update(name=["execute_bash"]),
            "must be strings")
    variant("int-tool-name", lambda r: r.update(tools=[{"type": "function", "function": {"name": 7}}]),
            "name must be a string")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return expected


def test_deep_nesting_and_non_string_ids_reject_only_their_conversation(tmp_path):
    from bench.runner import run
    from bench.store.records import read_jsonl

    log = tmp_path / "chat.jsonl"
    expected = _hostile_chat_log(log)
    out = tmp_path / "job"
    metrics = run(job_cfg("dataset=chat", f"dataset.path={log}", output_dir=str(out)))
    assert metrics["n_cases"] == 2 and json.loads((out / "run.json").read_text())["status"] == "complete"
    rejected = {r["instance_id"]: r["reason"] for r in read_jsonl(out / "rejected.jsonl")}
    assert set(rejected) == set(expected), rejected
    for conversation, words in expected.items():
        assert words in rejected[conversation], (conversation, rejected[conversation])
        assert "RecursionError" not in rejected[conversation] and "validation error" not in rejected[conversation]


def test_bad_utf8_in_a_chat_log_names_the_line(tmp_path):
    log = tmp_path / "chat.jsonl"
    lines = [json.dumps(c).encode() for c in _sample_conversations(2)]
    lines.insert(1, b'{"id": "x", "messages": [{"role": "user", "content": "caf\xe9"}]}')
    log.write_bytes(b"\n".join(lines) + b"\n")
    last = one_line(bench(tmp_path, "dataset=chat", f"dataset.path={log}", f"hydra.run.dir={tmp_path / 'job'}"))
    assert f"{log}, line 2: not UTF-8" in last, last


def test_the_readme_chat_example_pasted_as_shown_runs(tmp_path):
    example = readme_chat_example()
    assert len(example.strip().splitlines()) > 1  # pretty-printed: not valid JSONL
    log = tmp_path / "my_runs.jsonl"
    log.write_text(example + example.replace('"run-17"', '"run-18"'), encoding="utf-8")
    done = bench(tmp_path, "dataset=chat", f"dataset.path={log}", f"output_dir={tmp_path / 'job'}")
    assert done.returncode == 0, done.stderr
    assert "cases: 2" in done.stdout and "Traceback" not in done.stderr


def test_a_json_array_chat_log_reads_like_its_jsonl(tmp_path):
    import json

    from bench.sources.chatlog import iter_chat_rows

    records = [json.loads(readme_chat_example()), {**json.loads(readme_chat_example()), "id": "run-18"}]
    jsonl, array, pretty = tmp_path / "a.jsonl", tmp_path / "b.json", tmp_path / "c.jsonl"
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in records))
    array.write_text(json.dumps(records, indent=2))
    pretty.write_text("\n".join(json.dumps(r, indent=2) for r in records))
    expected = list(iter_chat_rows(jsonl))
    assert [r["instance_id"] for r in expected] == ["run-17", "run-18"]
    assert list(iter_chat_rows(array)) == expected == list(iter_chat_rows(pretty))


def test_a_bad_record_in_a_pretty_printed_log_names_its_line(tmp_path):
    from bench.sources.chatlog import ChatLogError, iter_chat_rows

    log = tmp_path / "bad.jsonl"
    log.write_text(readme_chat_example() + '{\n  "id": "x",\n  "messages": [\n}\n')
    with pytest.raises(ChatLogError, match=r"bad.jsonl, line 1[0-9]: not valid JSON"):
        list(iter_chat_rows(log))
    log.write_text('[\n  {"id": "a", "messages": []},\n  3\n]\n')
    with pytest.raises(ChatLogError, match="not a JSON object"):
        list(iter_chat_rows(log))


def test_a_json_array_given_as_jsonl_rows_gets_a_hint(tmp_path):
    from bench.sources.chatlog import ChatLogError, iter_jsonl

    rows = tmp_path / "rows.jsonl"
    rows.write_text('[{"instance_id": "a"}, {"instance_id": "b"}]\n')
    with pytest.raises(ChatLogError, match=r"line 1: a JSON array where JSONL holds one object a line .*jq -c"):
        list(iter_jsonl(rows))


def as_tau2(trajectory: list[dict]) -> list[dict]:
    """A trajectory of the shipped ops sample (OpenAI shape, converted from tau2-bench's runs) back in
    tau2-bench's own message shape: calls ``{id, name, arguments: {...}, requestor}``, results
    ``{role: tool, id, content, requestor, error}`` (tau2's ``ToolCall`` and ``ToolMessage``)."""
    out = []
    for message in trajectory:
        message = {k: v for k, v in message.items() if v is not None}
        if message.get("tool_calls"):
            message["tool_calls"] = [{"id": c["id"], "name": c["function"]["name"], "requestor": "assistant",
                                      "arguments": json.loads(c["function"]["arguments"])}
                                     for c in message["tool_calls"]]
        if message.get("role") == "tool":
            message = {"role": "tool", "id": message["tool_call_id"], "content": message.get("content"),
                       "requestor": "assistant", "error": str(message.get("content", "")).startswith("Error")}
        out.append({**message, "turn_idx": len(out), "timestamp": "2025-08-01T00:00:00"})
    return out


def test_tau2s_own_message_shape_reads_as_its_openai_shape(tmp_path):
    from bench.config.checks import compose, dataset_source
    from bench.data.selection import load_cases

    rows = [json.loads(line) for line in OPS_JSONL.read_text(encoding="utf-8").splitlines()[:4]]
    openai_log, tau2_log = tmp_path / "openai.jsonl", tmp_path / "tau2.jsonl"
    for path, shape in ((openai_log, lambda t: t), (tau2_log, as_tau2)):
        with path.open("w", encoding="utf-8") as handle:
            for row in rows:
                handle.write(json.dumps({"id": row["instance_id"], "messages": shape(row["trajectory"]),
                                         "tools": row["tools"]}) + "\n")
    # the simulated customer's own phone calls (requestor user): the agent never saw them
    first = json.loads(tau2_log.read_text().splitlines()[0])
    first["messages"][2:2] = [{"role": "user", "content": None, "tool_calls": [
        {"id": "u1", "name": "toggle_airplane_mode", "arguments": {}, "requestor": "user"}]},
        {"role": "tool", "id": "u1", "content": "Airplane mode: OFF", "requestor": "user", "error": False}]
    tau2_log.write_text("\n".join([json.dumps(first), *tau2_log.read_text().splitlines()[1:]]) + "\n")

    def cases(path):
        selection = load_cases(dataset_source(compose(["dataset=chat", f"dataset.path={path}",
                                                       "dataset.profile=tau2"]).dataset))
        return selection.cases, selection.rejected

    expected, none = cases(openai_log)
    got, rejected = cases(tau2_log)
    assert none == [] and rejected == [] and len(got) == len(expected) == 4
    for a, b in zip(got, expected, strict=True):
        assert [(q.qid, q.question, q.reference) for q in a.questions] == \
               [(q.qid, q.question, q.reference) for q in b.questions]
    assert sum(len(case.questions) for case in got) >= 8  # questions about the agent's tools, as for the OpenAI shape


def test_tau2_shaped_log_runs_end_to_end(tmp_path):
    row = json.loads(OPS_JSONL.read_text(encoding="utf-8").splitlines()[0])
    log = tmp_path / "tau2.jsonl"
    log.write_text(json.dumps({"id": row["instance_id"], "messages": as_tau2(row["trajectory"]),
                               "tools": row["tools"]}) + "\n", encoding="utf-8")
    [(code, out, err)] = run_commands([(tmp_path, ["dataset=chat", f"dataset.path={log}", "dataset.profile=tau2",
                                                   "output_dir=job"])])
    assert code == 0, err
    assert "questions: 0" not in out and "cases: 1" in out


def test_a_mini_swe_agent_v1_log_is_refused_naming_the_converter(tmp_path):
    messages = json.loads(V1_LOG.read_text(encoding="utf-8"))
    traj = tmp_path / "run.traj.json"
    traj.write_text(json.dumps({"info": {"exit_status": "Submitted", "mini_version": "1.7.0"}, "messages": messages,
                                "trajectory_format": "mini-swe-agent-1"}, indent=2), encoding="utf-8")
    with pytest.raises(ChatLogError, match=r"a mini-swe-agent text-action log .* convert it with python "
                                           r"scripts/mini_swe_agent_to_chat.py"):
        list(iter_chat_rows(traj))
    with pytest.raises(ChatLogError, match=r"a chat message where a conversation is expected .* "
                                           r"scripts/mini_swe_agent_to_chat.py"):
        list(iter_chat_rows(V1_LOG))  # the bare list of messages mini-swe-agent's own test data holds
    keyed = tmp_path / "keyed.jsonl"  # the messages as they are under an id: still text actions
    keyed.write_text(json.dumps({"id": "x", "messages": messages}) + "\n", encoding="utf-8")
    with pytest.raises(ChatLogError, match="text-action log"):
        list(iter_chat_rows(keyed))
