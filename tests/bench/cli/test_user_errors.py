"""Mistakes a user makes on the command line: a typo in an option or key, habits from other tools, a bad
override, a value a setting cannot take, a job with no question. Each is refused in one line that names
the fix, exit 2, and leaves nothing behind (no job directory, no Hydra files)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from cli_batch import JOB_MODULES, MODEL_MODULES, run_commands
from commands import bench, job_like
from paths import CONF_DIR, DATA

# The arm options the error lists: every YAML in conf/arm, so a new arm needs no edit here.
ARMS = ", ".join(sorted(p.stem for p in (CONF_DIR / "arm").glob("*.yaml")))
EXPERIMENTS = ", ".join(sorted(p.stem for p in (CONF_DIR / "experiment").glob("*.yaml")))
V1_LOG = DATA / "real" / "chat" / "source" / "mini_swe_agent_v1.traj.json"  # a real mini-swe-agent 1.7 run (PROVENANCE.md)


@pytest.mark.one_variant
@pytest.mark.parametrize("args,line", [
    (["arm=nlatset"], "error: unknown option arm=nlatset (options: " + ARMS + "; did you mean arm=nlatest?)"),
    (["datset.path=x"], "error: unknown config key 'datset.path' (did you mean dataset.path?)"),
    (["arm=nlatest", "arm.nn=3"], "error: unknown config key 'arm.nn' (did you mean arm.n?)"),
    (["+datset.path=x"], "error: unknown config key 'datset.path': 'datset' is not a key or group of the config "
                         "(did you mean dataset.path?)"),
    (["-m", "arm=full,nlatset"], "error: unknown option arm=nlatset (options: " + ARMS + "; "
                                 "did you mean arm=nlatest?)"),
])
def test_a_typo_in_an_option_or_key_is_one_line_exit_2_and_runs_nothing(tmp_path, args, line):
    done = bench(tmp_path, *args)
    assert done.returncode == 2
    assert done.stderr.strip() == line
    assert done.stdout == ""
    assert not list(tmp_path.rglob("run.json")) and not list(tmp_path.rglob("main.log"))  # no job started


def test_a_bad_override_is_one_line_and_hydra_full_error_still_gives_the_trace(tmp_path):
    done = bench(tmp_path, "seed=[1")
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1
    assert done.stderr.startswith("error: ") and "Traceback" not in done.stderr
    full = bench(tmp_path, "arm=nlatset", env={"HYDRA_FULL_ERROR": "1"})
    assert full.returncode == 1 and "Traceback" in full.stderr  # a user who asked for the trace gets it


def plain_chat_log(path: Path) -> Path:
    """Two real-looking conversations without a tool call: nothing any question type asks about."""
    rows = [{"id": f"talk-{i}", "messages": [{"role": "system", "content": "You are a support agent."},
                                             {"role": "user", "content": f"Is the shop open on day {i}?"},
                                             {"role": "assistant", "content": "Yes, from 9 to 5."}]} for i in (1, 2)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


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


@pytest.mark.slow
def test_a_sweep_hydra_refuses_before_any_job_leaves_nothing(tmp_path):
    """One job's option does not exist: Hydra's sweeper composes every job first, after it wrote the sweep's
    ``multirun.yaml``; the refusal leaves no directory (a given one that existed stays, emptied)."""
    (tmp_path / "given_sweep").mkdir()
    commands = [["-m", "arm=full,bogus"], ["-m", "arm=full,bogus", "hydra.sweep.dir=given_sweep"],
                ["-m", "arm=full,bogus", "hydra.sweep.dir=fresh_sweep/x"]]
    for args, (code, out, err) in zip(commands, run_commands([(tmp_path, args) for args in commands]), strict=True):
        lines = err.strip().splitlines()
        assert code == 2 and len(lines) == 1 and lines[0].startswith("error: unknown option arm=bogus"), (args, err)
        assert out == "", args
    assert job_like(tmp_path) == [] and sorted(p.name for p in tmp_path.iterdir()) == ["given_sweep"]
    assert not any((tmp_path / "given_sweep").iterdir())


def test_a_job_with_no_question_exits_2_saying_why(tmp_path):
    log = plain_chat_log(tmp_path / "plain.jsonl")
    [(code, out, err)] = run_commands([(tmp_path, ["dataset=chat", f"dataset.path={log}"])])
    assert code == 2 and "cases:" not in out, (out, err)
    assert re.fullmatch(r"error: no question to ask: 2 row\(s\) read; 2 case\(s\) selected; questions dropped: "
                        r".*call_count: no tool call x2.* \(questions.types and the filters in conf/dataset/ decide "
                        r"what is asked\)", err.strip()), err
    assert job_like(tmp_path) == []
