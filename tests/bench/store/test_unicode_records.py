"""Records hold any text: Unicode line separators, NEL, lone surrogates and control characters in rows and
replies go through a job, its resume, the response cache and the report, and read back as written."""

from __future__ import annotations

import json
import random
import re

from langchain_core.messages import AIMessage, HumanMessage, messages_to_dict

from bench.answering.evidence_reader import EvidenceReader
from bench.data.selection import sample_path
from bench.runner import run
from bench.store.records import JobStore, read_jsonl
from bench.store.schema import Answer
from bench.study.assemble import write_report

from fake_openai import FakeOpenAI
from jobs import canonical, job_cfg, openai_args

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
        args = openai_args(server.base_url, "cache.enabled=true", f"cache.path={cache}", "judge=llm")
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
