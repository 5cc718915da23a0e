"""A job streams its cases (issue 22 item 4): the same records as the in-memory selection, a few
cases in memory at a time, nothing lost when a resumed job's selection differs."""

from __future__ import annotations

import gc
import json
import shutil

import pytest

from bench.config.checks import compose
from bench.data.selection import CaseStream, load_cases
from bench.questions.guess import TemplateCount, drop_templates, template_key
from bench.runner.caseset import CaseSet
from bench.scoring.metric_records import metric_case
from bench.sources import LocalFile, Shipped
from bench.store.records import JobStore, iter_lines, read_jsonl
from bench.store.schema import Case, case_set_hash
from bench.text.tokens import TokenCounter

DEPTHS = ["<2k", "2-8k", "8-32k", ">32k"]


def _sources(dev_parquet):
    return {"dev": LocalFile(path=str(dev_parquet)), "ops": Shipped(source="ops", profile="tau2")}


@pytest.mark.parametrize("name", ["dev", "ops"])
def test_the_streamed_case_set_writes_what_the_in_memory_selection_holds(name, dev_parquet, tmp_path):
    """cases.jsonl, the case-set hash, the drops (template answers among them) and each entry's case
    equal the in-memory path's, on real coding runs and real operations runs."""
    source = _sources(dev_parquet)[name]
    expected = load_cases(source, TokenCounter(), depths=DEPTHS)
    assert any(d.reason.startswith("template answer") for c in expected.cases for d in c.dropped_questions) \
        or name == "dev", "the operations sample has template answers: the rule must have something to do"
    cases = CaseSet.write(CaseStream(source, TokenCounter(), depths=DEPTHS), tmp_path / "cases.jsonl")
    assert not (tmp_path / "cases.jsonl").exists() and not (tmp_path / "cases.jsonl.spool").exists()
    cases.commit()
    assert not (tmp_path / "cases.jsonl.next").exists()
    lines = (tmp_path / "cases.jsonl").read_text(encoding="utf-8")
    assert lines == "".join(JobStore.encode(c.to_dict()) for c in expected.cases)
    assert cases.case_set_hash == expected.case_set_hash == case_set_hash(read_jsonl(tmp_path / "cases.jsonl"))
    assert cases.metric_cases == [metric_case(c.to_dict()) for c in expected.cases]
    assert [e.qids for e in cases.entries] == [tuple(q.qid for q in c.questions) for c in expected.cases]
    assert (cases.rows_read, cases.skipped, cases.source) == (expected.rows_read, expected.skipped, expected.source)
    assert [r.reason for r in cases.rejected] == [r.reason for r in expected.rejected]
    loaded = [cases.load(e) for e in reversed(cases.entries)][::-1]  # any order: each line on its own
    assert [c.to_dict() for c in loaded] == [c.to_dict() for c in expected.cases] == [c.to_dict() for c in cases]
    cases.close()


def test_the_template_rule_on_records_drops_what_it_drops_on_cases(ops_jsonl):
    cases = [case for case, _ in CaseStream(Shipped(source="ops", profile="tau2"), TokenCounter(), depths=DEPTHS)]
    records = [c.to_dict() for c in cases]
    assert any(template_key(q) for c in cases for q in c.questions)
    count = TemplateCount()
    for case in cases:
        count.add(case)
    dropped_records = sum(count.drop_from_record(r) for r in records)
    dropped_cases = drop_templates(cases)
    assert dropped_records == dropped_cases > 0
    assert records == [c.to_dict() for c in cases]


def test_a_case_holding_one_answer_twice_counts_once():
    """The rule counts cases, not questions: two questions of one case with the same answer are one holder."""
    from bench.store.schema import Question

    def case(case_id: str, n: int) -> Case:
        questions = [Question(f"{case_id}:tool_output@{i}", "tool_output", "q", "Transfer successful", [], [],
                              target={"tool": "transfer"}) for i in range(n)]
        return Case(case_id, case_id, "r", 0, "", "", [], [], "", None, questions=questions)

    key = template_key(case("x", 1).questions[0])
    count = TemplateCount(min_cases=3, share=0.2)
    for c in (case("a", 2), case("b", 0)):
        count.add(c)
    assert count.holders(key) == 1 and not count.is_template(key)  # one case: never a template
    count = TemplateCount(min_cases=3, share=0.2)
    for c in (case("a", 2), case("b", 1), case("c", 0)):
        count.add(c)
    assert count.holders(key) == 2 and count.is_template(key)  # 2 of 3 cases >= 20%


def _many_cases_file(tmp_path, copies: int):
    """The shipped sample's valid rows, ``copies`` times with distinct instance ids (a jsonl source)."""
    from bench.data.cases import row_to_case
    from bench.sources import sample_path

    rows = [json.loads(line) for line in sample_path().read_text().splitlines() if line.strip()]
    rows = [r for i, r in enumerate(rows) if isinstance(row_to_case(dict(r), i), Case)]
    path = tmp_path / "many.jsonl"
    with path.open("w") as handle:
        for copy in range(copies):
            for row in rows:
                handle.write(json.dumps({**row, "instance_id": f"{row['instance_id']}-{copy}",
                                         "trajectory_id": f"{row['trajectory_id']}-{copy}"}) + "\n")
    return path, len(rows) * copies


def test_a_job_holds_a_few_cases_at_a_time_not_its_case_set(tmp_path, monkeypatch):
    """While the arm's views are built, at most the pipeline's window of cases is alive (the offline
    model: 1 worker, 4 cases), whatever the number of cases."""
    from bench.policies.full import FullHistory
    from bench.runner.job import run

    path, n_cases = _many_cases_file(tmp_path, 5)
    assert n_cases >= 30
    alive: list[int] = []
    original = FullHistory.__call__

    def counting(self, case):
        gc.collect()
        alive.append(sum(1 for o in gc.get_objects() if type(o) is Case))
        return original(self, case)

    monkeypatch.setattr(FullHistory, "__call__", counting)
    metrics = run(compose(["dataset=local", f"dataset.path={path}", "dataset.filters.one_per_repo=false",
                           f"output_dir={tmp_path / 'job'}", "cache.enabled=false"]))
    assert metrics["n_cases"] == n_cases == len(alive)
    assert max(alive) <= 4, alive


def test_a_resumed_job_whose_selection_differs_keeps_its_cases(tmp_path):
    """The resumed selection is written beside cases.jsonl and dropped when its hash differs: the job's
    cases.jsonl stays as it was, no staging file is left."""
    from bench.runner.job import run
    from bench.runner.resume import ResumeError
    from bench.sources import sample_path

    data, job = tmp_path / "rows.jsonl", tmp_path / "job"
    lines = sample_path().read_text().splitlines()
    data.write_text("\n".join(lines) + "\n")
    overrides = ["dataset=local", f"dataset.path={data}", "dataset.limit=3"]
    run(compose([*overrides, f"output_dir={job}"]))
    before = (job / "cases.jsonl").read_bytes()
    data.write_text("\n".join(lines[1:] + lines[:1]) + "\n")  # the file changed under the job
    with pytest.raises(ResumeError, match="case-set hash"):
        run(compose([*overrides, f"resume={job}"]))
    assert (job / "cases.jsonl").read_bytes() == before
    assert sorted(p.name for p in job.iterdir() if p.name.startswith("cases")) == ["cases.jsonl"]


def test_jsonl_lines_are_read_one_at_a_time(tmp_path):
    """iter_lines splits at \\n only, marks a torn last line, and does not read the file whole."""
    path = tmp_path / "f.jsonl"
    path.write_bytes(b'{"a": "x\xe2\x80\xa8y"}\n\n{"b": 1}\n{"c"')
    assert list(iter_lines(path)) == [(1, b'{"a": "x\xe2\x80\xa8y"}', True), (2, b"", True), (3, b'{"b": 1}', True),
                                      (4, b'{"c"', False)]
    path.write_bytes((b"x" * 99 + b"\n") * 20_000)
    lines = iter_lines(path)
    next(lines)
    path.write_bytes(b"")  # a reader that held the whole 2 MB file would still yield all the rest
    assert len(list(lines)) < 1_000


def test_the_token_memo_is_bounded_and_its_counts_exact():
    counter, fresh = TokenCounter(memo_chars=200), TokenCounter()
    texts = [f"text number {i} " * (i % 7 + 1) for i in range(300)]
    assert [counter.count_text(t) for t in texts + texts] == [fresh.count_text(t) for t in texts + texts]
    assert counter._held <= 200 + max(map(len, texts))


def test_a_hub_dataset_that_is_not_parquet_still_streams(tmp_path):
    """The hub source asks for small parquet batches; a builder without a batch size (json) reads as it does."""
    from bench.sources import Hub, sample_path

    root = tmp_path / "hub" / "data"
    root.mkdir(parents=True)
    shutil.copy(sample_path(), root / "train-00000-of-00001.jsonl")
    rows = list(Hub(hf_name=str(tmp_path / "hub")).rows())
    assert len(rows) == len(sample_path().read_text().splitlines())
