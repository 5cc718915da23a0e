"""A newcomer's first hour (issue 32): habits from other tools get one line with the fix, a refused
command leaves nothing behind, a sweep checks what all its jobs need once, a job with no question
is refused, the shapes people have are read or named with their fix, log lines do not splice into
the progress bars, and the console scripts' usage lines name the script."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from bench.sources.chatlog import ChatLogError, iter_chat_rows

from cli_batch import JOB_MODULES, MODEL_MODULES, run_commands
from conftest import CONF_DIR, OPS_JSONL, PROJECT
from fake_openai import FakeOpenAI

CHAT = PROJECT / "tests" / "data" / "real" / "chat"
V1_LOG = CHAT / "source" / "mini_swe_agent_v1.traj.json"  # a real mini-swe-agent 1.7 run (PROVENANCE.md)
CONVERTER = PROJECT / "scripts" / "mini_swe_agent_to_chat.py"
ARMS = ", ".join(sorted(p.stem for p in (PROJECT / "conf" / "arm").glob("*.yaml")))
EXPERIMENTS = ", ".join(sorted(p.stem for p in (PROJECT / "conf" / "experiment").glob("*.yaml")))


def job_like(root: Path) -> list[str]:
    """What a job leaves: its directories under outputs/ or multirun/, and Hydra's and the job's files."""
    found = [p for p in root.rglob("*") if p.name in (".hydra", "main.log", ".lock", "run.json", "multirun.yaml")]
    found += [root / d for d in ("outputs", "multirun") if (root / d).exists()]
    return sorted(str(p.relative_to(root)) for p in found)


def plain_chat_log(path: Path) -> Path:
    """Two real-looking conversations without a tool call: nothing any question type asks about."""
    rows = [{"id": f"talk-{i}", "messages": [{"role": "system", "content": "You are a support agent."},
                                             {"role": "user", "content": f"Is the shop open on day {i}?"},
                                             {"role": "assistant", "content": "Yes, from 9 to 5."}]} for i in (1, 2)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


# ------------------------------------------------------------------ habits from other tools

# the options of conf/model/ as the refusal lists them (the group's files, not a copy of them)
MODEL_OPTIONS, JUDGE_OPTIONS = (", ".join(sorted(p.stem for p in (CONF_DIR / group).glob("*.yaml")))
                                for group in ("model", "judge"))
HABITS = [
    (["experiment=smoke"], "error: experiment=smoke: experiment has no default to override, add it with +: write "
                           f"+experiment=smoke (options: {EXPERIMENTS})"),
    (["arm=full,none"], "error: arm=full,none is a sweep (one job per value): add -m to run it (python -m bench.main "
                        "-m arm=full,none); for one job whose value holds a comma, quote it: arm='full,none'"),
    (["model=openai/gpt-4o"], "error: unknown option model=openai/gpt-4o: model is one of "
                              f"{MODEL_OPTIONS} and a model's name goes in model.name: write model=openai model.name=gpt-4o"),
    (["judge=gpt-4o"], "error: unknown option judge=gpt-4o: judge is one of "
                       f"{JUDGE_OPTIONS} and a model's name goes in judge.name: write judge=llm judge.name=gpt-4o"),
    (["judge=claude-sonnet-4-5"], "error: unknown option judge=claude-sonnet-4-5: judge is one of "
                                  f"{JUDGE_OPTIONS} and a model's name goes in judge.name: write judge=anthropic "
                                  "judge.name=claude-sonnet-4-5"),
    (["n=10"], "error: unknown config key 'n': keys are written in full, e.g. arm.n=10 (arm=nlatest)"),
    (["arm=nlatest", "n=10"], "error: unknown config key 'n': keys are written in full, e.g. arm.n=10 (arm=nlatest)"),
    (["--arm", "full"], "error: --arm full: bench takes key=value overrides, not --options: write arm=full "
                        "(--help lists the groups and keys)"),
    (["--dataset.limit=3"], "error: --dataset.limit=3: bench takes key=value overrides, not --options: write "
                            "dataset.limit=3 (--help lists the groups and keys)"),
]


def test_habits_from_other_tools_get_one_line_with_the_fix(tmp_path):
    results = run_commands([(tmp_path, args) for args, _ in HABITS])
    for (args, line), (code, out, err) in zip(HABITS, results, strict=True):
        assert (code, err.strip()) == (2, line), args
        assert out == "", args
    assert job_like(tmp_path) == []


def test_help_says_experiment_is_added_with_a_plus():
    done = subprocess.run([sys.executable, "-m", "bench.main", "--help"], capture_output=True, text=True, timeout=120)
    assert "a named sweep is added with + (-m +experiment=smoke)" in done.stdout


# ------------------------------------------------------------------ a refused command leaves nothing

def mistaken_commands(cwd: Path) -> list[list[str]]:
    """Nineteen-plus commands a newcomer gets wrong: typos, bad values, missing files, keys and endpoints,
    shapes bench does not read, sweeps that cannot run. Each must be refused in one line."""
    (cwd / "given").mkdir()
    return [
        ["arm=nlatset"],
        ["datset.path=x"],
        ["+datset.path=x"],
        ["arm=nlatest", "arm.n=-1"],
        ["arm=nlatest", "arm.n=ten"],
        ["dataset.limit=0"],
        ["seed=abc"],
        ["questions.types=[bogus]"],
        ["dataset=local"],
        ["dataset=chat", "dataset.path=missing.jsonl"],
        ["dataset=chat", f"dataset.path={V1_LOG}"],
        ["dataset=chat", f"dataset.path={plain_chat_log(cwd / 'plain.jsonl')}"],
        ["arm=custom"],
        ["arm=custom", "arm.policy=no_such_module:policy"],
        ["model=openai"],
        ["judge=llm"],
        ["model=openai", "model.api_key_env=null", "model.base_url=http://127.0.0.1:9/v1"],
        ["resume=outputs/no-such-job"],
        ["experiment=smoke"],
        ["arm=full,none"],
        ["model=openai/gpt-4o"],
        ["--arm", "full"],
        ["-m", "dataset=chat", "dataset.path=missing.jsonl", "seed=0,1"],
        ["output_dir=given", "arm=nlatest", "arm.n=-1"],
        ["output_dir=fresh/job", "dataset=chat", "dataset.path=missing.jsonl"],
    ]


def test_a_refused_command_is_one_line_exit_2_and_leaves_nothing(tmp_path):
    commands = mistaken_commands(tmp_path)
    assert len(commands) >= 19
    before = sorted(p.name for p in tmp_path.iterdir())
    results = run_commands([(tmp_path, args) for args in commands], preload=JOB_MODULES + MODEL_MODULES)
    for args, (code, _out, err) in zip(commands, results, strict=True):
        lines = err.strip().splitlines()
        assert code == 2 and len(lines) == 1 and lines[0].startswith("error: "), (args, code, err)
        assert "Traceback" not in err, args
    assert job_like(tmp_path) == []  # no outputs/, multirun/, .hydra/, main.log, .lock, run.json
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != ".cache") == before
    assert not any((tmp_path / "given").iterdir())  # a directory given for the job is left as it was found
    assert not (tmp_path / "fresh").exists()  # and one the job made is gone


def test_a_job_that_fails_after_it_wrote_records_keeps_them(tmp_path):
    """Only a refusal (before any record) goes: a job whose every answer failed keeps its directory
    (its records, main.log) for resume=."""
    with FakeOpenAI(fail_marker="OpenHands", marker_status=500) as server:  # every request (the system prompt) fails
        args = ["model=openai", f"model.base_url={server.base_url}", "model.api_key_env=null", "model.max_retries=0",
                "dataset.limit=1", "cache.enabled=false", "output_dir=job"]
        [(code, _out, err)] = run_commands([(tmp_path, args)], preload=JOB_MODULES + MODEL_MODULES)
    assert code == 1 and "no question was scored" in err, err
    job = tmp_path / "job"
    assert (job / "run.json").exists() and (job / "answers.jsonl").exists() and (job / "main.log").exists()
    assert json.loads((job / "run.json").read_text())["status"] == "incomplete"


# ------------------------------------------------------------------ a sweep's shared prerequisites, once

def test_a_sweep_checks_its_file_and_endpoint_once_before_any_job(tmp_path):
    unreachable = ["model=openai", "model.api_key_env=null", "model.base_url=http://127.0.0.1:9/v1",
                   "model.max_retries=0"]
    commands = [["-m", "dataset=chat", "dataset.path=missing.jsonl", "arm=full,none", "seed=0,1,2"],
                ["-m", "+experiment=smoke", "dataset=local", "dataset.path=../shared/data/real/dev.parquet"],
                ["-m", *unreachable, "arm=full,none"],
                ["-m", "model=openai", "arm=full,none"]]
    results = run_commands([(tmp_path, args) for args in commands], preload=JOB_MODULES + MODEL_MODULES)
    lines = [err.strip() for _code, _out, err in results]
    assert [code for code, _out, _err in results] == [2, 2, 2, 2], lines
    assert lines[0] == (f"error: dataset file not found: {tmp_path / 'missing.jsonl'} (checked once for the 6 jobs "
                        "of the sweep: none started)")
    assert lines[1].startswith("error: dataset file not found: ") and "(checked once for the 3 jobs" in lines[1]
    assert lines[2].startswith("error: model: cannot reach the endpoint http://127.0.0.1:9/v1 ")
    assert lines[2].endswith("(checked once for the 2 jobs of the sweep: none started)")
    assert lines[3].startswith("error: model: the API key variable OPENAI_API_KEY is not set")
    assert all(len(line.splitlines()) == 1 for line in lines)
    assert job_like(tmp_path) == []


def test_a_sweep_whose_endpoint_answers_runs(tmp_path):
    with FakeOpenAI() as server:
        args = ["-m", "model=openai", f"model.base_url={server.base_url}", "model.api_key_env=null",
                "dataset.limit=1", "cache.enabled=false", "arm=full,none"]
        [(code, out, err)] = run_commands([(tmp_path, args)], preload=JOB_MODULES + MODEL_MODULES)
    assert code == 0, err
    assert len(list((tmp_path / "multirun").rglob("run.json"))) == 2


# ------------------------------------------------------------------ a job with no question

def test_a_job_with_no_question_exits_2_saying_why(tmp_path):
    log = plain_chat_log(tmp_path / "plain.jsonl")
    [(code, out, err)] = run_commands([(tmp_path, ["dataset=chat", f"dataset.path={log}"])])
    assert code == 2 and "cases:" not in out, (out, err)
    assert re.fullmatch(r"error: no question to ask: 2 row\(s\) read; 2 case\(s\) selected; questions dropped: "
                        r".*call_count: no tool call x2.* \(questions.types and the filters in conf/dataset/ decide "
                        r"what is asked\)", err.strip()), err
    assert job_like(tmp_path) == []


# ------------------------------------------------------------------ shapes people have

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


# ------------------------------------------------------------------ the console

def terminal_lines(text: str) -> list[str]:
    """The lines a terminal shows for ``text``: a carriage return goes back to the line's start and
    what follows overwrites it (progress bars redraw so); escape sequences dropped."""
    text = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", text)
    shown = []
    for line in text.split("\n"):
        cells: list[str] = []
        column = 0
        for char in line:
            if char == "\r":
                column = 0
                continue
            if column < len(cells):
                cells[column] = char
            else:
                cells.append(char)
            column += 1
        shown.append("".join(cells).rstrip())
    return shown


def in_a_terminal(args: list[str], cwd: Path) -> str:
    """What ``python -m bench.main ARGS`` prints to a terminal (stdout and stderr on one pseudo-terminal
    of 120 columns, as a user sees them: the progress bars draw there)."""
    import fcntl
    import pty
    import struct
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    proc = subprocess.Popen([sys.executable, "-m", "bench.main", *args], cwd=cwd, stdout=slave, stderr=slave,
                            stdin=subprocess.DEVNULL, env={k: v for k, v in os.environ.items() if k != "HYDRA_FULL_ERROR"})
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(120)
    os.close(master)
    assert proc.returncode == 0, b"".join(chunks).decode(errors="replace")
    return b"".join(chunks).decode("utf-8", errors="replace")


def test_log_lines_are_not_spliced_into_the_progress_bars(tmp_path):
    shown = terminal_lines(in_a_terminal(["dataset.limit=3", "output_dir=job"], tmp_path))
    assert any("answer+judge" in line for line in shown)  # the bars were drawn
    logged = [line for line in shown if re.search(r"\]\[(INFO|WARNING|ERROR)\] - ", line)]
    assert len(logged) >= 3  # the job's own lines: what it runs, what it read, what it scored
    for line in logged:
        assert re.match(r"\[\d{4}-\d\d-\d\d [\d:,]+\]\[", line), line  # a log line starts its own line


def test_without_a_terminal_there_are_no_bars_and_a_refusal_is_one_line(tmp_path):
    done = subprocess.run([sys.executable, "-m", "bench.main", "dataset=chat", "dataset.path=missing.jsonl"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr == f"error: dataset file not found: {tmp_path / 'missing.jsonl'}\n"


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


def test_a_sweep_job_with_many_overrides_gets_a_directory_name_the_filesystem_takes():
    """A sweep against a local server names every job by its overrides (three base URLs, keys, ...):
    past 255 bytes the job could not make its directory (a traceback, found running the README's
    sweep against the fake server). The name is cut at 200 bytes, kept unique by a hash, seed last."""
    from bench.config.checks import MAX_JOB_NAME, _job_name

    overrides = ",".join(f"{part}.base_url=http_:_127.0.0.1_:35089_v1,{part}.api_key_env=null"
                         for part in ("model", "judge", "summarizer")) + ",mechanism=shipped"
    names = {_job_name(overrides + suffix, 0) for suffix in ("", ",prompt=sre", ",prompt=generic")}
    assert len(names) == 3 and all(len(n.encode()) <= MAX_JOB_NAME < 255 and n.endswith(",seed=0") for n in names)
    assert _job_name("arm=nlatest,arm.n=10", 2) == "arm=nlatest,arm.n=10,seed=2"  # a short name stays as it is
