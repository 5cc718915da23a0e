"""Issue 20, the second hostile pass: the defect classes on the surfaces added since the first.

One section per class: leaks, lost data, mislabelled results, crashes, unclear messages.
Each test failed before its fix. Jobs run offline on the shipped sample (in-process) or
against ``tests/support/fake_openai.py``; command-line tools run in subprocesses where the exit
code or the console matters.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from bench.cache import ResponseCache
from bench.cache import main as cache_main

from commands import bench, tool
from fake_openai import FakeOpenAI
from jobs import job_cfg
from paths import PROJECT

# =========================================================================== helpers


def one_line(done: subprocess.CompletedProcess, *expected: str) -> str:
    """Exit 2, no traceback, and a last stderr line ``error: ...`` holding ``expected``."""
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "Traceback" not in done.stdout + done.stderr, done.stderr
    last = done.stderr.strip().split("\n")[-1]
    assert last.startswith("error: "), done.stderr
    for text in expected:
        assert text in last, last
    return last


def _cache_with(path: Path, n: int = 3) -> None:
    cache = ResponseCache(path)
    for i in range(n):
        cache.put(f"k{i}", {"message": {"content": f"reply {i}"}}, kind="answer", model="m")
    cache.close()


# =========================================================================== 2. data lost: cache prune


@pytest.mark.parametrize("age", ["-1", "-0.5", "1e9", "nan", "inf"])
def test_prune_refuses_negative_or_absurd_ages_and_deletes_nothing(tmp_path, capsys, age):
    path = tmp_path / "c.sqlite"
    _cache_with(path)
    assert cache_main(["prune", "--path", str(path), f"--older-than={age}"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --older-than") and err.count("\n") == 1
    assert len(ResponseCache(path)) == 3


def test_prune_says_what_and_how_many_and_dry_run_removes_nothing(tmp_path, capsys):
    path = tmp_path / "c.sqlite"
    _cache_with(path)
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE responses SET response = 'garbage' WHERE key = 'k1'")
    assert cache_main(["prune", "--path", str(path), "--kind", "answer", "--older-than", "0", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "would remove 3 of 3 entries: 1 bad, 2 selected (older than 0 days, kind answer)" in out
    assert "removed" not in out
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 3
    assert cache_main(["prune", "--path", str(path)]) == 0
    out = capsys.readouterr().out
    assert "removing 1 of 3 entries: 1 bad" in out and "removed 1 entries, 2 left" in out


# =========================================================================== 3. mislabelled: unchecksummed cache entries


def test_a_cache_entry_whose_checksum_was_cleared_is_not_trusted_and_verify_says_so(tmp_path, capsys):
    path = tmp_path / "c.sqlite"
    _cache_with(path)
    with sqlite3.connect(path) as conn:  # tamper: new bytes, checksum cleared
        conn.execute("UPDATE responses SET response = '{\"message\": {\"content\": \"forged\"}}', checksum = NULL "
                     "WHERE key = 'k0'")
    assert cache_main(["verify", "--path", str(path)]) == 1
    out = capsys.readouterr().out
    assert "1 without checksum (not trusted" in out and "written before checksums" not in out
    assert ResponseCache(path).get("k0") is None  # read as missing: the forged reply is never used


# =========================================================================== 5. unclear: a locked cache


def test_prune_on_a_locked_cache_says_it_is_locked_and_does_not_advise_deleting_it(tmp_path, capsys):
    path = tmp_path / "c.sqlite"
    _cache_with(path)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        assert cache_main(["prune", "--path", str(path), "--wait", "0.2"]) == 2
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    err = capsys.readouterr().err
    assert "locked by another process" in err and "retry" in err
    assert "delete" not in err and "not a readable" not in err
    assert len(ResponseCache(path)) == 3


# =========================================================================== 1. leak: URL query parameters and userinfo


def test_a_key_in_a_base_url_query_reaches_no_record_log_hydra_file_or_console(tmp_path):
    secret = "q7Z9xw2LmN4pR8tV"  # not sk-shaped: only its place in a URL query says it is a key
    job = tmp_path / "job"
    with FakeOpenAI() as server:
        done = bench(tmp_path, "model=openai", f"model.base_url='{server.base_url}?key={secret}&api-version=1'",
                     "model.api_key_env=null", "dataset.limit=2", "cache.enabled=false", f"hydra.run.dir={job}")
        assert server.stats()["requests"] > 0
    assert done.returncode == 0, done.stderr
    files = [p for p in job.rglob("*") if p.is_file()]
    assert {"run.json", "metrics.json", "main.log", "config.yaml", "overrides.yaml", "hydra.yaml"} <= {
        p.name for p in files}
    for path in files:
        assert secret.encode() not in path.read_bytes(), path
    assert secret not in done.stdout + done.stderr
    run_json = json.loads((job / "run.json").read_text())
    assert run_json["config"]["model"]["base_url"].endswith("?***")  # the URL is kept, its query hidden


def test_url_userinfo_and_query_values_are_registered_as_secrets():
    from bench.core import redact

    redact.register_urls(["x=https://alice:pw-0123456789@host/v1?token=abcdefgh12345678&v=2", {"u": "no url"}])
    text = redact.scrub("GET https://alice:pw-0123456789@host/v1?token=abcdefgh12345678&v=2 failed")
    assert "pw-0123456789" not in text and "abcdefgh12345678" not in text and "host/v1" in text


# =========================================================================== 4. crashes: compare and rescore outputs


@pytest.fixture(scope="module")
def two_jobs(tmp_path_factory) -> tuple[Path, Path]:
    """Two finished offline jobs on the shipped sample (full and nlatest)."""
    from bench.runner import run

    root = tmp_path_factory.mktemp("jobs")
    run(job_cfg(output_dir=str(root / "a")))
    run(job_cfg("arm=nlatest", "arm.n=2", output_dir=str(root / "b")))
    return root / "a", root / "b"


@pytest.mark.parametrize("module", ["bench.compare", "bench.rescore"])
def test_output_to_a_directory_or_an_unwritable_path_is_one_line_and_exit_2(tmp_path, two_jobs, module):
    a, b = two_jobs
    inputs = [str(a), str(b)] if module == "bench.compare" else [str(a)]
    for target in (tmp_path, Path("/proc/bench-out.md"), tmp_path / "file" / "out.md"):
        (tmp_path / "file").write_text("a file, not a directory")
        done = tool(module, *inputs, "--output", str(target))
        one_line(done, "--output", str(target))
        assert "## bench.compare" not in done.stdout  # nothing half done


def test_compare_with_a_run_json_that_is_a_list_is_one_line(tmp_path, two_jobs):
    import shutil

    a, _ = two_jobs
    bad = tmp_path / "bad"
    shutil.copytree(a, bad)
    (bad / "run.json").write_text("[1, 2]")
    one_line(tool("bench.compare", str(a), str(bad)), "run.json", "list")


def test_compare_piped_into_head_has_no_broken_pipe_traceback(two_jobs):
    a, b = two_jobs
    env = {k: v for k, v in os.environ.items() if k != "HYDRA_FULL_ERROR"}
    done = subprocess.run(f"{sys.executable} -m bench.compare {a} {b} | head -1", shell=True, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "## bench.compare"
    assert "BrokenPipeError" not in done.stderr and "Traceback" not in done.stderr, done.stderr


# =========================================================================== 5. unclear: rescoring an incomplete job


def test_rescoring_an_incomplete_job_does_not_count_unanswered_questions_as_changed(tmp_path, two_jobs):
    import shutil

    from bench.rescore import build_judge, rescore_jobs

    a, _ = two_jobs
    job = tmp_path / "incomplete"
    shutil.copytree(a, job)
    for name in ("answers.jsonl", "scores.jsonl"):  # the job stopped half-way: half its questions never answered
        lines = (job / name).read_text().splitlines(keepends=True)
        (job / name).write_text("".join(lines[: len(lines) // 2]))
    judge, _ = build_judge("exact")
    rows = rescore_jobs([job], judge)
    unanswered = [r for r in rows if r["answer"] is None]
    assert unanswered and len(unanswered) < len(rows)
    assert not any(r["changed"] for r in rows)  # same judge, same verdicts; no answer is no changed verdict


# =========================================================================== 4. crashes: hostile chat logs


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


def test_calibrate_on_a_deeply_nested_line_is_one_line_naming_it(tmp_path):
    path = tmp_path / "labels.jsonl"
    good = {"id": "a", "type": "call_count", "question": "q", "reference": 1, "answer": "1", "verdict": "correct"}
    path.write_text(json.dumps(good) + "\n" + '{"id": "b", "reference": ' + _deep(100_000) + "}\n")
    one_line(tool("bench.calibrate", str(path)), f"{path}:2", "nested too deeply")
    path.write_text(json.dumps(good) + "\n" + json.dumps({**good, "id": "b", "reference": json.loads(_deep(300))})
                    + "\n")
    one_line(tool("bench.calibrate", str(path)), f"{path}:2", "nested more than")


# =========================================================================== 5. unclear: bad UTF-8 in a chat log


def test_bad_utf8_in_a_chat_log_names_the_line(tmp_path):
    log = tmp_path / "chat.jsonl"
    lines = [json.dumps(c).encode() for c in _sample_conversations(2)]
    lines.insert(1, b'{"id": "x", "messages": [{"role": "user", "content": "caf\xe9"}]}')
    log.write_bytes(b"\n".join(lines) + b"\n")
    last = one_line(bench(tmp_path, "dataset=chat", f"dataset.path={log}", f"hydra.run.dir={tmp_path / 'job'}"))
    assert f"{log}, line 2: not UTF-8" in last, last


# =========================================================================== 4. crashes: odd endpoint replies


class _OddReplies:
    """An OpenAI-compatible endpoint whose 200 replies carry odd ``usage`` or a choice without message."""

    def __init__(self, kind: str) -> None:
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        outer = self
        self.kind, self.requests = kind, 0

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # noqa: ANN002
                pass

            def do_GET(self):  # noqa: N802 - /models for the endpoint check
                self._send({"object": "list", "data": [{"id": "m", "object": "model"}]})

            def do_POST(self):  # noqa: N802
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                outer.requests += 1
                choice = {"index": 0, "finish_reason": "stop",
                          "message": {"role": "assistant", "content": "I cannot tell."}}
                body = {"id": "x", "object": "chat.completion", "created": 0, "model": "m", "choices": [choice]}
                if outer.kind == "usage_strings":
                    body["usage"] = {"prompt_tokens": "ten", "completion_tokens": "5", "total_tokens": None}
                elif outer.kind == "usage_negative":
                    body["usage"] = {"prompt_tokens": -10, "completion_tokens": -5, "total_tokens": -15}
                else:
                    del choice["message"]
                self._send(body)

            def _send(self, payload):
                data = json.dumps(payload).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _odd_args(url: str) -> list[str]:
    return ["model=openai", f"model.base_url={url}", "model.name=m", "model.api_key_env=null", "model.max_retries=1",
            "model.backoff_base=0.01", "model.backoff_max=0.02", "dataset.limit=1"]


@pytest.mark.parametrize("kind", ["usage_strings", "usage_negative"])
def test_a_reply_with_strings_or_negatives_in_usage_keeps_its_answer(tmp_path, kind):
    from bench.runner import run
    from bench.store.records import read_jsonl

    server = _OddReplies(kind)
    try:
        run(job_cfg(*_odd_args(server.base_url), output_dir=str(tmp_path / "job")))
    finally:
        server.close()
    answers = read_jsonl(tmp_path / "job" / "answers.jsonl")
    assert answers and all(a["outcome"] != "error" for a in answers), answers[0].get("error")
    assert all(a["answer"] == "I cannot tell." for a in answers)
    assert all(a["usage"]["input_tokens"] >= 0 and a["usage"]["output_tokens"] >= 0 for a in answers)


def test_a_200_reply_whose_choice_has_no_message_is_a_clear_malformed_reply_error(tmp_path):
    from bench.runner import run
    from bench.store.records import read_jsonl

    server = _OddReplies("no_message")
    try:
        run(job_cfg(*_odd_args(server.base_url), output_dir=str(tmp_path / "job")))
    finally:
        server.close()
    failed = [a for a in read_jsonl(tmp_path / "job" / "answers.jsonl") if a["outcome"] == "error"]
    assert failed
    for answer in failed:
        assert "malformed reply" in answer["error"] and "no message" in answer["error"], answer["error"]
        assert "AttributeError" not in answer["error"] and "KeyError" not in answer["error"]


# =========================================================================== 3. mislabelled: nothing scored, duplicate ids


def test_a_job_where_every_call_is_refused_has_no_accuracy_is_incomplete_and_exits_non_zero(tmp_path):
    job = tmp_path / "job"
    with FakeOpenAI(api_key="right-key-0123456789") as server:  # no key sent: 401 on every call
        done = bench(tmp_path, "model=openai", f"model.base_url={server.base_url}", "model.api_key_env=null",
                     "model.check_endpoint=false", "model.max_retries=0", "dataset.limit=2", "cache.enabled=false",
                     f"hydra.run.dir={job}")
    assert done.returncode != 0, done.stdout
    assert "accuracy: 0.0%" not in done.stdout and "accuracy: n/a" in done.stdout
    assert "no question was scored" in done.stderr and "Traceback" not in done.stderr
    metrics = json.loads((job / "metrics.json").read_text())
    assert metrics["accuracy"] is None and metrics["accuracy_ci"] is None
    assert all(row["accuracy"] is None for row in metrics["by_type"].values())
    assert json.loads((job / "run.json").read_text())["status"] == "incomplete"


def test_a_judge_that_always_fails_gives_null_accuracy_and_an_incomplete_job(tmp_path, monkeypatch):
    from bench.runner import run
    from bench.scoring.judge import ExactJudge
    from bench.store.schema import Score

    def failing(self, question, answer, repo_root=None):  # noqa: ANN001, ARG001
        return Score(case_id=answer.case_id, qid=question.qid, type=question.type, verdict="unscored",
                     reason="judge failed: always", judge="exact")

    monkeypatch.setattr(ExactJudge, "score", failing)
    out = tmp_path / "job"
    metrics = run(job_cfg(output_dir=str(out)))
    assert metrics["n_questions"] > 0 and metrics["accuracy"] is None
    assert json.loads((out / "run.json").read_text())["status"] == "incomplete"


def test_two_rows_with_the_same_instance_id_and_source_row_do_not_share_a_case_id(tmp_path):
    from bench.runner import run
    from bench.store.records import read_jsonl

    rows = [json.loads(line) for line in (PROJECT / "src/bench/samples/sample.jsonl")
            .read_text().splitlines()[:2]]
    twin = {**rows[1], "instance_id": rows[0]["instance_id"]}
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps({**r, "source_row": 5}) + "\n" for r in (rows[0], twin)))
    out = tmp_path / "job"
    run(job_cfg("dataset=local", f"dataset.path={path}", output_dir=str(out)))
    cases = read_jsonl(out / "cases.jsonl")
    assert len(cases) == len({c["case_id"] for c in cases}) == 1
    rejected = read_jsonl(out / "rejected.jsonl")
    assert len(rejected) == 1 and "duplicate" in rejected[0]["reason"] and "same case_id" in rejected[0]["reason"]


# =========================================================================== 5. unclear: question types that do not apply


def test_question_types_that_do_not_apply_to_the_dataset_are_one_line_not_a_0_question_job(tmp_path):
    done = bench(tmp_path, "dataset=ops", "questions.types=[files_changed]", f"hydra.run.dir={tmp_path / 'job'}")
    one_line(done, "questions.types", "files_changed", "none of these applies", "types that apply")


# =========================================================================== 3. mislabelled: a download's manifest


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_a_downloaded_file_is_checked_against_its_manifest_and_a_changed_row_refused(tmp_path, suffix):
    from bench.data.selection import DatasetError
    from bench.download import main as download_main
    from bench.runner import run

    out = tmp_path / f"rows{suffix}"
    assert download_main(["dataset.limit=3", f"out={out}"]) == 0
    metrics = run(job_cfg("dataset=local", f"dataset.path={out}", output_dir=str(tmp_path / "ok")))
    assert metrics["n_cases"] == 3  # the untouched download reads as it was written
    if suffix == ".jsonl":
        lines = out.read_text(encoding="utf-8").splitlines()
        lines[1] = json.dumps({**json.loads(lines[1]), "model_patch": "tampered"})
        out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    else:
        import pyarrow.parquet as pq

        table = pq.read_table(out).to_pylist()
        table[1]["model_patch"] = "tampered"
        import pyarrow as pa

        pq.write_table(pa.Table.from_pylist(table), out)
    with pytest.raises(DatasetError, match=r"row 1 \(source_row 1\) of the file does not match its manifest"):
        run(job_cfg("dataset=local", f"dataset.path={out}", output_dir=str(tmp_path / "bad")))
    assert not (tmp_path / "bad" / "answers.jsonl").exists()


# =========================================================================== 5. unclear: download on a full disk


def test_download_on_a_full_disk_removes_the_partial_file_and_names_it(tmp_path, monkeypatch, capsys):
    import errno

    from bench import download

    def full_disk(rows, out):  # noqa: ANN001
        out.write_text('{"half": ')
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(download, "_write_rows", full_disk)
    out = tmp_path / "rows.jsonl"
    assert download.main(["dataset.limit=2", f"out={out}"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and str(out) in err and "No space left" in err and "removed" in err
    assert not out.exists() and not (tmp_path / "rows.manifest.json").exists()


# =========================================================================== 3. mislabelled: two sweeps into one directory


def test_a_second_sweep_into_a_sweep_directory_in_use_is_refused_in_one_line(tmp_path):
    """A running sweep holds its directory's lock (here: this process holds it, as the first sweep would)."""
    from bench.store.jobdir import JobLock

    sweep = tmp_path / "sweep"
    sweep.mkdir()
    with JobLock(sweep):
        done = bench(tmp_path, "-m", "arm=full", "seed=0,1", f"hydra.sweep.dir={sweep}")
        one_line(done, f"hydra.sweep.dir={sweep}", "in use by another sweep")
    assert not list(sweep.rglob("run.json")) and not (sweep / "multirun.yaml").exists()
    done = bench(tmp_path, "-m", "arm=full", "seed=0,1", "dataset.limit=1",
                 f"hydra.sweep.dir={sweep}", "hydra.callbacks.report.enabled=false")
    assert done.returncode == 0, done.stderr  # once the first sweep is over, the directory is free
    assert len(list(sweep.rglob("run.json"))) == 2


# =========================================================================== 5. unclear: output_dir=D


def test_output_dir_holds_the_hydra_files_and_main_log_and_nothing_goes_to_outputs(tmp_path):
    out = tmp_path / "D"
    done = bench(tmp_path, f"output_dir={out}", "dataset.limit=1")
    assert done.returncode == 0, done.stderr
    assert (out / "run.json").is_file() and (out / "main.log").is_file()
    assert {p.name for p in (out / ".hydra").iterdir()} >= {"config.yaml", "overrides.yaml", "hydra.yaml"}
    assert "selected 1 cases" in (out / "main.log").read_text()
    assert not (tmp_path / "outputs").exists()
