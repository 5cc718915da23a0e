"""Damaged job files lose nothing: unreadable lines are moved aside and only their questions asked again on
resume; a JSON file that does not parse is named in the one error line, and the report goes on without it."""

from __future__ import annotations

import json
import logging
from collections import Counter

from bench.answering.evidence_reader import EvidenceReader
from bench.runner import run
from bench.store.records import read_jsonl
from bench.store.schema import Answer
from bench.study.assemble import write_report

from builders import sample_questions
from commands import bench, one_line_error
from jobs import canonical, job_cfg

N_QUESTIONS = sample_questions()  # questions of the shipped sample


class CountingReader(EvidenceReader):
    """The offline reader, counting the questions it answers."""

    calls: Counter = Counter()

    def answer(self, case, view, question) -> Answer:
        type(self).calls[(case.case_id, question.qid)] += 1
        return super().answer(case, view, question)


COUNTING = {"_target_": f"{__name__}.CountingReader"}


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
