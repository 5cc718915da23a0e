"""The newcomer's path (issue 20): a typo in a group option or key is one line naming the fix, exit 2,
and nothing runs; ``+`` cannot add an unknown top-level key; rescore's judge errors are one line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from paths import CONF_DIR
from readme_examples import readme_chat_example


def run(cwd: Path, module: str, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if k not in ("HYDRA_FULL_ERROR", "OPENAI_API_KEY")}
    return subprocess.run([sys.executable, "-m", module, *args], cwd=cwd, env={**base, **(env or {})},
                          capture_output=True, text=True, timeout=120)


# The arm options the error lists: every YAML in conf/arm, so a new arm needs no edit here.
ARMS = ", ".join(sorted(p.stem for p in (CONF_DIR / "arm").glob("*.yaml")))


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
    done = run(tmp_path, "bench.main", *args)
    assert done.returncode == 2
    assert done.stderr.strip() == line
    assert done.stdout == ""
    assert not list(tmp_path.rglob("run.json")) and not list(tmp_path.rglob("main.log"))  # no job started


def test_a_bad_override_is_one_line_and_hydra_full_error_still_gives_the_trace(tmp_path):
    done = run(tmp_path, "bench.main", "seed=[1")
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1
    assert done.stderr.startswith("error: ") and "Traceback" not in done.stderr
    full = run(tmp_path, "bench.main", "arm=nlatset", env={"HYDRA_FULL_ERROR": "1"})
    assert full.returncode == 1 and "Traceback" in full.stderr  # a user who asked for the trace gets it


def test_rescore_with_the_llm_judge_and_no_key_is_one_line(tmp_path):
    job = tmp_path / "job"
    assert run(tmp_path, "bench.main", f"output_dir={job}", "dataset.limit=1").returncode == 0
    done = run(tmp_path, "bench.rescore", str(job), "--judge", "llm", "-o", str(tmp_path / "r.csv"))
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "error: cannot build judge 'llm': judge: the API key variable OPENAI_API_KEY is not set; export it "
        "(the key is read from the environment only), or set judge.api_key_env to the variable that holds it "
        "(null for a local server without keys)"]
    assert not (tmp_path / "r.csv").exists()


# ------------------------------------------------------------------ chat logs as the README shows them

def test_the_readme_chat_example_pasted_as_shown_runs(tmp_path):
    example = readme_chat_example()
    assert len(example.strip().splitlines()) > 1  # pretty-printed: not valid JSONL
    log = tmp_path / "my_runs.jsonl"
    log.write_text(example + example.replace('"run-17"', '"run-18"'), encoding="utf-8")
    done = run(tmp_path, "bench.main", "dataset=chat", f"dataset.path={log}", f"output_dir={tmp_path / 'job'}")
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
