"""Issue 12, the defect classes: damaged state and hostile input lose nothing, mislabel nothing, say one line.

One section per class: records and Unicode, job directories, damaged job files, the
response cache, failed writes, rows and replies, secrets, CSV exports. Jobs run offline on
the shipped sample (in-process, a second or two each) or against ``tests/support/fake_openai.py``.
"""

from __future__ import annotations

import base64
import errno
import io
import json
import logging
import os
import random
import re
import sqlite3
import subprocess
import sys
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, HumanMessage, messages_to_dict
from omegaconf import OmegaConf

from bench.answering.evidence_reader import EvidenceReader
from bench.cache import ResponseCache, request_key
from bench.cache import main as cache_main
from bench.data.selection import DatasetError, load_cases, sample_path
from bench.runner import ResumeError, run
from bench.store.jobdir import JobDirError, JobLock, claim_dir
from bench.store.records import JobFileError, JobStore, read_jsonl
from bench.store.schema import Answer
from bench.study.assemble import write_report
from bench.study.tables import csv_safe

from builders import bash, row, sample_questions
from commands import bench, one_line_error
from fake_openai import FakeOpenAI
from jobs import canonical, job_cfg
from paths import PROJECT

N_QUESTIONS = sample_questions()  # questions of the shipped sample
FAILING_MARKER = "acme__ledger__2.3"  # appears in the history of one sample case only


class CountingReader(EvidenceReader):
    """The offline reader, counting the questions it answers."""

    calls: Counter = Counter()

    def answer(self, case, view, question) -> Answer:
        type(self).calls[(case.case_id, question.qid)] += 1
        return super().answer(case, view, question)


COUNTING = {"_target_": f"{__name__}.CountingReader"}


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> Path:
    """An uninterrupted offline job on the shipped sample (the reference of every comparison)."""
    out = tmp_path_factory.mktemp("finished") / "job"
    run(job_cfg(output_dir=str(out)))
    return out


# =========================================================================== 1. records and Unicode

_SPECIAL = ["\u2028", "\u2029", "\x85", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x00", "\r", "\n", "\r\n",
            "\ud800", "\udfff", "\udbff", "\udc00", "\ud83d", "\ude00", '"', "\\", "é", "😀", "\ufeff", "\t"]


def _random_text(rng: random.Random) -> str:
    parts = []
    for _ in range(rng.randint(0, 12)):
        pick = rng.random()
        if pick < 0.5:
            parts.append(rng.choice(_SPECIAL))
        elif pick < 0.8:
            parts.append("".join(chr(rng.randint(32, 126)) for _ in range(rng.randint(1, 8))))
        else:
            parts.append(chr(rng.randint(0xA0, 0x10FFFF)))
    return "".join(parts)


def _as_read(text: str) -> str:
    """What a record holding ``text`` reads back as: a high+low pair of lone surrogates is the character they encode."""
    return re.sub("[\ud800-\udbff][\udc00-\udfff]",
                  lambda m: m.group().encode("utf-16-le", "surrogatepass").decode("utf-16-le"), text)


def test_records_round_trip_any_text(tmp_path):
    rng = random.Random(12)
    store = JobStore(tmp_path)
    texts = [_random_text(rng) for _ in range(400)] + ["".join(_SPECIAL), "\ud800\u2028\x85"]
    for i, text in enumerate(texts):
        store.append("answers", {"case_id": f"c{i}", "qid": "q", "answer": text})
        store.append("views", {"case_id": f"c{i}", "messages": messages_to_dict([HumanMessage(text), AIMessage(text)])})
    answers = store.read("answers")
    views = store.read("views")
    assert [a["answer"] for a in answers] == [_as_read(t) for t in texts]
    assert [[m["data"]["content"] for m in v["messages"]] for v in views] == [[_as_read(t)] * 2 for t in texts]
    for name in ("answers.jsonl", "views.jsonl"):
        data = store.path(name).read_bytes()
        text = data.decode("utf-8")  # every byte is valid UTF-8 (lone surrogates are JSON escapes)
        assert len(text.splitlines()) == len(texts)  # no raw line separator: any line-splitting tool keeps records whole


class OddReplies(EvidenceReader):
    """Replies with line separators and lone surrogates (a model can send them)."""

    def answer(self, case, view, question) -> Answer:
        answer = super().answer(case, view, question)
        answer.answer = f"{answer.answer}\u2028\x85\ud800 \udfff"
        return answer


def test_a_job_with_line_separators_in_rows_and_replies_completes_resumes_and_reports(tmp_path):
    rows = [json.loads(line) for line in sample_path().read_text(encoding="utf-8").splitlines()]
    for item in rows:  # a line separator and NEL in the task text of every trajectory
        user = next(m for m in item["trajectory"] if m["role"] == "user")
        user["content"] = (user["content"] if isinstance(user["content"], str) else json.dumps(user["content"])) + \
            "\u2028see also\x85\u2029 \x1c"
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "job"
    model = {"_target_": f"{__name__}.OddReplies"}
    metrics = run(job_cfg("dataset=local", f"dataset.path={data}", "arm=nlatest", "arm.n=20", model=model,
                          output_dir=str(out)))
    assert metrics["n_questions"] > 0 and json.loads((out / "run.json").read_text())["status"] == "complete"
    assert all("\u2028\x85\ud800 \udfff" in a["answer"] for a in read_jsonl(out / "answers.jsonl"))
    before = {n: (out / n).read_bytes() for n in ("answers.jsonl", "scores.jsonl", "views.jsonl")}
    again = run(job_cfg("dataset=local", f"dataset.path={data}", "arm=nlatest", "arm.n=20", model=model,
                        resume=str(out)))
    assert again["accuracy"] == metrics["accuracy"]
    assert before == {n: (out / n).read_bytes() for n in before}  # the resume read every record back whole
    report = write_report([out], tmp_path / "report")
    assert (tmp_path / "report" / "report.html").exists() and report["jobs"][0].complete


def test_model_replies_with_lone_surrogates_and_separators_go_through_the_cache_and_the_records(tmp_path):
    cache = tmp_path / "cache.sqlite"
    reply = "The file is a.py \ud800\u2028\x85 and \udfff\ud83d\ude00 done"
    with FakeOpenAI(reply=reply) as server:
        args = _openai_args(server.base_url, "cache.enabled=true", f"cache.path={cache}", "judge=llm")
        first = run(job_cfg(*args, output_dir=str(tmp_path / "a")))
        made = server.stats()["requests"]
        second = run(job_cfg(*args, output_dir=str(tmp_path / "b")))  # every reply from the cache
        assert server.stats()["requests"] == made
    assert first["n_errors"] == 0 and first["n_questions"] > 0 and second["accuracy"] == first["accuracy"]
    for job in ("a", "b"):
        answers = read_jsonl(tmp_path / job / "answers.jsonl")
        assert answers and all(_as_read(reply) in a["answer"] for a in answers)
    assert canonical(tmp_path / "b" / "answers.jsonl", ("usage",)) == canonical(tmp_path / "a" / "answers.jsonl",
                                                                                ("usage",))


# =========================================================================== 2. job directories


def test_a_new_job_in_a_used_directory_is_refused_and_the_job_there_is_untouched(tmp_path):
    out = tmp_path / "D"
    run(job_cfg("arm=nlatest", "arm.n=10", output_dir=str(out)))
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    with pytest.raises(JobDirError, match="not empty"):
        run(job_cfg("arm=full", output_dir=str(out)))
    done = bench(tmp_path, "arm=full", f"output_dir={out}")
    one_line_error(done, str(out), "not empty", f"resume={out}")
    assert before == {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    assert json.loads((out / "run.json").read_text())["arm"] == "nlatest"


def test_default_directories_of_jobs_started_in_the_same_second_never_collide(tmp_path):
    assert [Path(claim_dir(tmp_path, "12-00-00_full")).name for _ in range(3)] == [
        "12-00-00_full", "12-00-00_full-2", "12-00-00_full-3"]
    env = {k: v for k, v in os.environ.items() if k != "HYDRA_FULL_ERROR"}
    procs = [subprocess.Popen([sys.executable, "-m", "bench.main", "dataset.limit=2", *args], cwd=tmp_path,
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
             for args in (["arm=full"], ["arm=full", "seed=1"])]
    assert [p.wait(120) for p in procs] == [0, 0], [p.stderr.read() for p in procs]
    jobs = sorted(p for p in (tmp_path / "outputs").glob("*/*") if p.is_dir())
    assert len(jobs) == 2  # one directory each, whatever second they started in
    assert sorted(json.loads((job / "run.json").read_text())["seed"] for job in jobs) == [0, 1]
    for job in jobs:
        run_json = json.loads((job / "run.json").read_text())
        assert run_json["status"] == "complete" and job.name.split("_", 1)[1].startswith("full")
        assert len(read_jsonl(job / "answers.jsonl")) == len({(a["case_id"], a["qid"])
                                                              for a in read_jsonl(job / "answers.jsonl")})


def test_a_running_job_holds_its_directory_so_resume_is_refused(tmp_path, finished):
    out = tmp_path / "job"
    run(job_cfg(output_dir=str(out)))
    hydra_files = {}
    with JobLock(out):  # a job running in the directory (another process or this one)
        with pytest.raises(ResumeError, match="still running"):
            run(job_cfg(resume=str(out)))
        with pytest.raises(JobDirError, match="in use by a running job"):
            with JobLock(out):
                pass
        done = bench(tmp_path, f"resume={out}")
        one_line_error(done, str(out), "still running")
        hydra_files = sorted(p.name for p in out.iterdir())
    assert ".hydra" not in hydra_files and "main.log" not in hydra_files  # Hydra wrote nothing there
    again = run(job_cfg(resume=str(out)))  # the lock is gone with its job
    assert again["n_scored"] == N_QUESTIONS and len(read_jsonl(out / "answers.jsonl")) == N_QUESTIONS


def test_resume_takes_a_sweep_job_path_as_written_and_writes_nothing_for_a_non_job(tmp_path):
    out = tmp_path / "multirun" / "arm.n=10,arm=nlatest,seed=0"
    run(job_cfg("arm=nlatest", "arm.n=10", output_dir=str(out)))
    answers = (out / "answers.jsonl").read_bytes()
    done = bench(tmp_path, f"resume={out.relative_to(tmp_path)}", "arm=nlatest", "arm.n=10")
    assert done.returncode == 0, done.stderr
    assert "accuracy" in done.stdout and (out / "answers.jsonl").read_bytes() == answers
    assert (out / ".hydra" / "config.yaml").exists()  # Hydra's files of the resumed run are in the job
    one_line_error(bench(tmp_path, "resume=/nonexistent/job"), "no such job directory")
    assert not Path("/nonexistent").exists()
    from bench.main import UserError, preflight_args

    plain = tmp_path / "plain"
    plain.mkdir()
    file = tmp_path / "answers.jsonl"
    file.write_text("{}\n")
    for path, message in ((plain, "not a job directory"), (file, "is a file")):
        with pytest.raises(UserError, match=message):
            preflight_args([f"resume={path}"])
    assert list(plain.iterdir()) == [] and not (tmp_path / "outputs").exists()
    assert preflight_args([f"resume={out}", "seed=0"]) == [f"resume='{out}'", "seed=0"]  # quoted for Hydra


# =========================================================================== 3. damaged job files


def test_damaged_lines_are_moved_aside_and_their_questions_asked_again(tmp_path, finished, monkeypatch, caplog):
    monkeypatch.setattr(CountingReader, "calls", Counter())
    out = tmp_path / "job"
    run(job_cfg(output_dir=str(out), model=COUNTING))
    lines = (out / "answers.jsonl").read_bytes().split(b"\n")[:-1]
    garbage_key = tuple(json.loads(lines[1])[k] for k in ("case_id", "qid"))
    no_case = json.loads(lines[4])
    no_case_key = (no_case.pop("case_id"), no_case["qid"])
    lines[1] = b"\x00\xff garbage \xe2\x80"  # not UTF-8, not JSON, mid-file
    lines[4] = json.dumps(no_case).encode()  # a line without case_id
    lines.insert(7, b'{"case_id": "acme__x@0", "qid": ')  # unparseable, ends with a newline
    (out / "answers.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    scores = (out / "scores.jsonl").read_bytes().split(b"\n")[:-1]
    score_key = tuple(json.loads(scores[2])[k] for k in ("case_id", "qid"))
    scores[2] = b"[1, 2, 3]"  # JSON, but not a record
    (out / "scores.jsonl").write_bytes(b"\n".join(scores) + b"\n")
    CountingReader.calls.clear()

    with caplog.at_level(logging.WARNING):
        metrics = run(job_cfg(resume=str(out), model=COUNTING))
    assert set(CountingReader.calls) == {garbage_key, no_case_key}  # only the damaged answers are asked again
    assert score_key not in CountingReader.calls  # its answer was intact: only judged again
    assert metrics["n_scored"] == N_QUESTIONS and json.loads((out / "run.json").read_text())["status"] == "complete"
    assert len((out / "answers.jsonl.bad").read_bytes().split(b"\n")[:-1]) == 3
    assert (out / "scores.jsonl.bad").read_bytes() == b"[1, 2, 3]\n"
    warned = " ".join(r.getMessage() for r in caplog.records)
    assert "answers.jsonl: 3 damaged line(s) (line 2, 5, 8)" in warned and "scores.jsonl" in warned
    assert canonical(out / "scores.jsonl") == canonical(finished / "scores.jsonl")
    assert len(read_jsonl(out / "answers.jsonl")) == N_QUESTIONS  # nothing lost, nothing duplicated


def test_json_errors_name_the_file(tmp_path):
    out = tmp_path / "job"
    run(job_cfg(output_dir=str(out)))
    (out / "run.json").write_text('{"status": "complete", "config": ')
    one_line_error(bench(tmp_path, f"resume={out}"), f"{out / 'run.json'}: not valid JSON")
    report = write_report([out], tmp_path / "report")  # the report says what it could not read and goes on
    assert report["jobs"] and not report["jobs"][0].complete


# =========================================================================== 4. the response cache


def test_a_changed_cache_entry_counts_as_missing_with_a_warning_and_is_replaced(tmp_path, caplog):
    path = tmp_path / "responses.sqlite"
    cache = ResponseCache(path)
    key = request_key({"model": "m", "messages": [{"type": "human", "content": "hi"}]})
    cache.put(key, {"message": {"content": "The answer is 42"}, "usage": {}}, kind="answer", model="m")
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE responses SET response = replace(response, '42', '43')")
    with caplog.at_level(logging.WARNING):
        assert cache.get(key) is None
    assert str(path) in caplog.text and key[:16] in caplog.text and "checksum" in caplog.text
    cache.put(key, {"message": {"content": "The answer is 42"}, "usage": {}}, kind="answer", model="m")
    assert cache.get(key) == {"message": {"content": "The answer is 42"}, "usage": {}}


def _openai_args(url: str, *extra: str) -> list[str]:
    return ["model=openai", f"model.base_url={url}", "model.api_key_env=null", "model.backoff_base=0.01",
            "model.backoff_max=0.05", "model.max_retries=1", "dataset.limit=2", *extra]


def test_changed_bytes_in_the_cache_cannot_change_an_answer(tmp_path, caplog):
    cache = tmp_path / "cache.sqlite"
    with FakeOpenAI() as server:
        args = _openai_args(server.base_url, "cache.enabled=true", f"cache.path={cache}")
        first = run(job_cfg(*args, output_dir=str(tmp_path / "a")))
        made = server.stats()["requests"]
        with sqlite3.connect(cache) as conn:  # flip bytes inside one stored reply (its checksum stays)
            key, text = conn.execute("SELECT key, response FROM responses WHERE kind = 'answer' LIMIT 1").fetchone()
            changed = text.replace('"content": "', '"content": "NOT ', 1)
            assert changed != text
            conn.execute("UPDATE responses SET response = ? WHERE key = ?", (changed, key))
        with caplog.at_level(logging.WARNING):
            second = run(job_cfg(*args, output_dir=str(tmp_path / "b")))
        asked_again = server.stats()["requests"] - made
    assert made > 0 and asked_again == 1  # only the damaged entry went back to the endpoint
    assert f"response cache {cache}" in caplog.text and "damaged" in caplog.text
    assert second["accuracy"] == first["accuracy"]
    assert canonical(tmp_path / "b" / "answers.jsonl", ("usage",)) == canonical(tmp_path / "a" / "answers.jsonl",
                                                                                ("usage",))


def test_a_corrupted_cache_database_is_not_used_and_the_job_completes(tmp_path, caplog):
    cache = tmp_path / "cache.sqlite"
    cache.write_bytes(b"SQLite format 3\x00" + os.urandom(4096))  # torn or overwritten file
    with FakeOpenAI() as server, caplog.at_level(logging.WARNING):
        metrics = run(job_cfg(*_openai_args(server.base_url, "cache.enabled=true", f"cache.path={cache}"),
                              output_dir=str(tmp_path / "job")))
    assert metrics["n_errors"] == 0 and metrics["n_scored"] == metrics["n_questions"] > 0
    assert json.loads((tmp_path / "job" / "run.json").read_text())["status"] == "complete"
    assert f"response cache {cache} cannot be used" in caplog.text


def test_cache_command_stats_verify_prune(tmp_path, capsys):
    path = tmp_path / "c.sqlite"
    with sqlite3.connect(path) as conn:  # a cache written before checksums existed: one entry
        conn.execute("CREATE TABLE responses (key TEXT PRIMARY KEY, kind TEXT NOT NULL, model TEXT NOT NULL, "
                     "created REAL NOT NULL, response TEXT NOT NULL)")
        conn.execute("INSERT INTO responses VALUES ('old', 'judge', 'm', 0, '{\"message\": {}}')")
    cache = ResponseCache(path)
    assert cache.get("old") is None  # no checksum: not trusted, read as missing (issue 20)
    with sqlite3.connect(path) as conn:
        conn.execute("INSERT INTO responses VALUES ('old', 'judge', 'm', 0, '{\"message\": {}}', NULL)")
    for i in range(3):
        cache.put(f"k{i}", {"message": {"content": f"reply {i}"}}, kind="answer", model="m")
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE responses SET response = 'garbage' WHERE key = 'k1'")
    cache.close()
    assert cache_main(["stats", "--path", str(path)]) == 0
    assert "4 entries" in capsys.readouterr().out
    assert cache_main(["verify", "--path", str(path)]) == 1
    assert "2 ok, 1 without checksum (not trusted: jobs read them as missing), 1 bad" in capsys.readouterr().out
    assert cache_main(["prune", "--path", str(path)]) == 0
    assert "removed 2 entries, 2 left" in capsys.readouterr().out
    assert cache_main(["verify", "--path", str(path)]) == 0
    assert cache_main(["prune", "--path", str(path), "--kind", "answer", "--older-than", "0"]) == 0
    assert "removed 2 entries, 0 left" in capsys.readouterr().out
    for leftover in tmp_path.glob("c.sqlite-*"):  # the WAL files of the healthy cache
        leftover.unlink()
    path.write_bytes(b"not a database at all" * 100)
    assert cache_main(["verify", "--path", str(path)]) == 2
    assert "not a readable SQLite database" in capsys.readouterr().err
    done = subprocess.run([sys.executable, "-m", "bench.cache", "stats", "--path", str(tmp_path / "none.sqlite")],
                          capture_output=True, text=True)
    assert done.returncode != 0 and "no cache file" in done.stderr


# =========================================================================== 5. disk full, read-only, a file


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


# =========================================================================== 6. rows and replies


def _load(path: Path, **filters):
    cfg = OmegaConf.create({"source": "local", "path": str(path), "limit": None,
                            "filters": {"resolved": None, **filters}})
    return load_cases(cfg)


def test_rows_with_a_non_list_tools_value_are_rejected_and_resolved_strings_are_parsed(tmp_path):
    steps = [bash("1", "ls", "a.py")]
    schemas = row()["tools"]
    tools_rows = [  # one file per column type (older pyarrow JSON readers refuse a column of mixed types)
        row(*steps, instance_id="tools-object", tools=json.dumps({"type": "function", "function": {"name": "x"}})),
        row(*steps, instance_id="tools-text", tools="not json"),
        row(*steps, instance_id="tools-string-list", tools=json.dumps(schemas)),
    ]
    resolved_rows = [row(*steps, instance_id=f"resolved-{value}", resolved=value)
                     for value in ("false", "True", "maybe", "0")]
    (tmp_path / "tools.jsonl").write_text("".join(json.dumps(r) + "\n" for r in tools_rows))
    (tmp_path / "resolved.jsonl").write_text("".join(json.dumps(r) + "\n" for r in resolved_rows))
    tools = _load(tmp_path / "tools.jsonl")
    assert [c.instance_id for c in tools.cases] == ["tools-string-list"]
    assert tools.cases[0].tools == schemas
    reasons = {r.instance_id: r.reason for r in tools.rejected}
    assert reasons["tools-object"] == "tools is a JSON dict, not a list of tool schemas"
    assert reasons["tools-text"].startswith("tools is a string that is not valid JSON")
    resolved = _load(tmp_path / "resolved.jsonl", resolved=True)
    assert [c.instance_id for c in resolved.cases] == ["resolved-True"]
    assert resolved.skipped == {"resolved": 2}  # "false" and "0" are false
    assert [(r.instance_id, r.reason) for r in resolved.rejected] == [("resolved-maybe",
                                                                      "resolved is 'maybe', not a boolean")]


def test_a_source_without_rows_says_no_rows(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    (tmp_path / "empty.jsonl").write_text("")
    (tmp_path / "blank.jsonl").write_text("\n\n")
    pq.write_table(pa.table({"instance_id": pa.array([], pa.string()), "trajectory": pa.array([], pa.string())}),
                   tmp_path / "empty.parquet")
    for name in ("empty.jsonl", "blank.jsonl", "empty.parquet"):
        with pytest.raises(DatasetError, match=rf"{re.escape(name)} \(\w+\) has no rows"):
            _load(tmp_path / name)
    one_line_error(bench(tmp_path, "dataset=local", "dataset.path=empty.parquet"), "empty.parquet", "has no rows")


def test_a_summary_over_the_context_limit_is_context_overflow_and_not_asked_again(tmp_path):
    out = tmp_path / "job"
    prompt = (PROJECT / "src" / "bench" / "prompts" / "sre.txt").read_text()[:60]
    with FakeOpenAI(overflow_marker=prompt) as server:
        args = _openai_args(server.base_url, "arm=compact", "summarizer=openai", "summarizer.max_retries=1")
        metrics = run(job_cfg(*args, output_dir=str(out)))
        overflowed = server.stats()["outcome_overflow"]
        answers = read_jsonl(out / "answers.jsonl")
        assert answers and all(a["outcome"] == "context_overflow" for a in answers)
        assert all("summary request" in a["error"] and "maximum context length" in a["error"] for a in answers)
        assert metrics["n_errors"] == 0 and overflowed == 2  # one summary request per case, not retried
        before = server.stats()["requests"]
        run(job_cfg(*args, resume=str(out)))
        assert server.stats()["requests"] == before  # resume does not ask again


def test_a_200_reply_without_choices_says_what_came_back(tmp_path):
    out = tmp_path / "job"
    with FakeOpenAI(empty_marker=FAILING_MARKER) as server:
        metrics = run(job_cfg(*_openai_args(server.base_url, "dataset.limit=null"), output_dir=str(out)))
        n_bad = sum(len(c["questions"]) for c in read_jsonl(out / "cases.jsonl") if FAILING_MARKER in json.dumps(c))
        assert server.stats()["outcome_empty"] == n_bad * 2  # each of its questions tried twice (one retry)
    failed = [a for a in read_jsonl(out / "answers.jsonl") if a["outcome"] == "error"]
    assert len(failed) == n_bad and metrics["n_errors"] == n_bad
    for answer in failed:
        assert "answered 200 with no choices" in answer["error"] and "upstream provider returned nothing" in \
            answer["error"] and "IndexError" not in answer["error"]


# =========================================================================== 7. secrets


def test_every_log_line_is_scrubbed_of_configured_secrets(monkeypatch):
    from bench.core import redact
    from bench.tracing import langfuse_settings

    secret, public = "sk-lf-" + "9f2c" * 8, "pk-lf-" + "77ab" * 4
    model_key = "sk-proj-" + "Zq81" * 8
    monkeypatch.setenv("TEST_MODEL_KEY", model_key)
    redact.register_env("TEST_MODEL_KEY")
    langfuse_settings({"LANGFUSE_PUBLIC_KEY": public, "LANGFUSE_SECRET_KEY": secret, "LANGFUSE_BASE_URL": "http://x"})
    basic = base64.b64encode(f"{public}:{secret}".encode()).decode()
    redact.install_logging()
    stream = io.StringIO()
    own = logging.getLogger(f"{__name__}.third_party")  # a library logger with a handler of its own
    handler = logging.StreamHandler(stream)
    own.addHandler(handler)
    try:
        own.warning("export failed: 401 %s (Authorization: Basic %s)", secret, basic)
        own.error("model said %s", model_key)
        try:
            raise RuntimeError(f"bad key {model_key} / {secret}")
        except RuntimeError:
            own.exception("failed")
    finally:
        own.removeHandler(handler)
    text = stream.getvalue()
    assert "export failed: 401 ***" in text and "Traceback" in text
    for value in (secret, basic, model_key):
        assert value not in text


class _EchoAuth(BaseHTTPRequestHandler):
    """A careless Langfuse: every request fails with 401, quoting the Authorization header."""

    def log_message(self, *args):
        pass

    def _fail(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = json.dumps({"message": f"invalid credentials: {self.headers.get('Authorization')}"}).encode()
        self.send_response(401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _fail  # noqa: N815


def test_langfuse_errors_reach_no_log_or_output_unscrubbed(tmp_path):
    secret, public = "sk-lf-" + "5e1d" * 8, "pk-lf-" + "0a0b" * 4
    basic = base64.b64encode(f"{public}:{secret}".encode()).decode()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _EchoAuth)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        env = {"LANGFUSE_PUBLIC_KEY": public, "LANGFUSE_SECRET_KEY": secret,
               "LANGFUSE_BASE_URL": f"http://127.0.0.1:{server.server_address[1]}"}
        done = bench(tmp_path, "tracing.langfuse=true", "dataset.limit=1", f"hydra.run.dir={tmp_path / 'job'}",
                     env=env)
    finally:
        server.shutdown()
        server.server_close()
    assert done.returncode == 0, done.stderr
    log_text = (tmp_path / "job" / "main.log").read_text()
    assert "Langfuse" in log_text and "***" in log_text  # the error was logged, scrubbed
    for value in (secret, basic):
        assert value not in done.stdout + done.stderr
        for path in (tmp_path / "job").rglob("*"):
            assert not path.is_file() or value.encode() not in path.read_bytes(), path


KEY = "sk-proj-" + "Ab12Cd34" * 5


@pytest.mark.parametrize("args", [
    ["model=openai", f"+model.api_key={KEY}"],
    ["model=openai", f"model.extra_body={{api_key: {KEY}}}"],
    ["model=openai", f"+model.extra_body.authorization=Bearer {KEY}"],
    ["model=openai", f"model.model_kwargs={{user: {KEY}}}"],
    ["model=openai", "model.base_url=https://me:hunter2secret@api.example.com/v1"],
    ["model=openai", f"model.api_key_env={KEY}"],
    ["model=openai", "judge=llm", f"+judge.password={KEY[:12]}"],
    ["-m", "model=openai", f"+model.api_key={KEY},other"],
])
def test_keys_on_the_command_line_are_refused(args):
    from bench.main import UserError, preflight_args

    with pytest.raises(UserError, match="do not put keys") as refused:
        preflight_args(args)
    assert KEY not in str(refused.value) and "hunter2secret" not in str(refused.value)
    assert preflight_args(["model=openai", "model.api_key_env=OPENAI_API_KEY", "model.max_tokens=5"])


@pytest.mark.parametrize("args", [["model=openai", f"+model.api_key={KEY}"], ["-m", f"model.api_key_env={KEY},X"]])
def test_a_key_on_the_command_line_is_refused_before_anything_is_written(tmp_path, args):
    done = bench(tmp_path, *args)
    one_line_error(done, "environment")
    assert KEY not in done.stdout + done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # no outputs/, multirun/, .hydra, main.log


def test_a_key_pasted_from_the_environment_or_in_a_config_value_is_refused(tmp_path):
    done = bench(tmp_path, "model=openai", f"model.name={KEY}x", env={"MY_SERVICE_TOKEN": f"{KEY}x"})
    one_line_error(done, "model.name", "looks like an API key")
    from bench.config.checks import ConfigError, validate

    with pytest.raises(ConfigError, match="judge.api_key_env must be the NAME of an environment variable"):
        validate(job_cfg("judge=llm", **{"judge.api_key_env": KEY}))


# =========================================================================== 8. CSV exports


def test_csv_cells_that_start_like_formulas_are_escaped(tmp_path, finished):
    import csv

    import pandas as pd

    frame = pd.DataFrame({"a": ["=HYPERLINK(\"http://x\")", "+1", "-2", "@SUM(A1)", "\tx", "\rx", "safe", None],
                          "n": [1, -2, 3, 4, 5, 6, 7, 8]})
    safe = csv_safe(frame)
    assert safe["a"].tolist()[:7] == ["'=HYPERLINK(\"http://x\")", "'+1", "'-2", "'@SUM(A1)", "'\tx", "'\rx", "safe"]
    assert safe["n"].tolist() == frame["n"].tolist()  # numbers stay numbers
    job = tmp_path / "job"
    run(job_cfg(output_dir=str(job)))
    answers = read_jsonl(job / "answers.jsonl")
    answers[0]["answer"] = '=HYPERLINK("http://evil.example","click")'
    (job / "answers.jsonl").write_text("".join(json.dumps(a) + "\n" for a in answers))
    from bench.rescore import main as rescore_main

    assert rescore_main([str(job), "--output", str(tmp_path / "rescored.csv")]) == 0
    with (tmp_path / "rescored.csv").open(newline="", encoding="utf-8") as handle:
        cells = [cell for line in csv.reader(handle) for cell in line]
    assert "'=HYPERLINK(\"http://evil.example\",\"click\")" in cells
    assert not any(cell.startswith(("=", "+", "@")) for cell in cells)
    write_report([job], tmp_path / "report")
    with (tmp_path / "report" / "questions.csv").open(newline="", encoding="utf-8") as handle:
        assert not any(cell.startswith(("=", "+", "-", "@")) for line in csv.reader(handle) for cell in line)
