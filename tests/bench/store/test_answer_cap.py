"""A runaway reply (megabytes of text) is kept cut to ``bench.store.schema.ANSWER_CAP`` characters with its
whole length (``answer_chars``): answers.jsonl stays small and the judges do not crawl, and the record
says it was cut. Direct calls and batch mode alike (issue 32, "Batch mode": 25 MB replies made
answers.jsonl 200 MB)."""

from __future__ import annotations

import pytest

from bench.config.checks import compose
from bench.llm.batch import reset_rounds
from bench.runner import run
from bench.store.records import read_jsonl
from bench.store.schema import ANSWER_CAP, Answer

from fake_openai import FakeOpenAI

HUGE = 400_000  # characters of one reply (20x the cap)


@pytest.fixture(autouse=True)
def _fresh_rounds():
    reset_rounds()
    yield
    reset_rounds()


@pytest.mark.parametrize("batch", [False, True])
def test_a_huge_reply_is_kept_cut_with_its_length_and_the_job_completes(tmp_path, batch):
    job = tmp_path / "job"
    overrides = [f"output_dir={job}", "model=openai", "model.api_key_env=null", "judge=exact", "cache.enabled=false",
                 "dataset.limit=1", "questions.types=[tool_output]", "arm=full",
                 *(["model.batch=true", "model.batch_quiet_s=0.2", "model.batch_poll_s=0.02"] if batch else [])]
    with FakeOpenAI(reply=lambda body: "x" * HUGE, exact_tokens=False) as server:
        metrics = run(compose([*overrides, f"model.base_url={server.base_url}"]))
    answers = read_jsonl(job / "answers.jsonl")
    assert answers and metrics["n_errors"] == 0
    assert all(len(a["answer"]) == ANSWER_CAP and a["answer_chars"] == HUGE for a in answers)
    assert (job / "answers.jsonl").stat().st_size < 2 * ANSWER_CAP * len(answers) + 10_000
    assert metrics["n_scored"] == metrics["n_questions"]


def test_an_answer_within_the_cap_is_recorded_as_it_was():
    answer = Answer(case_id="c", qid="q", type="t", answer="short")
    assert answer.capped() is answer and "answer_chars" not in answer.to_dict()
    cut = Answer(case_id="c", qid="q", type="t", answer="y" * 50).capped(10)
    assert cut.answer == "y" * 10 and cut.to_dict()["answer_chars"] == 50
