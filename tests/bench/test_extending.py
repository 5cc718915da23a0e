"""docs/extending.md kept true: a judge and a prompt added with only the files the docs list run in a job
(the throwaway policy, source and question-type proofs live beside their parts' tests)."""

from __future__ import annotations

import json
import shutil

from bench.config.checks import CONF_DIR, compose
from bench.runner import run
from bench.store.schema import Score


class AlwaysWrong:
    """A throwaway judge: every answer is wrong (its protocol: bench.scoring.judge.Judge)."""

    name = "always-wrong"

    def clients(self):
        return []

    def score(self, question, answer, repo_root=None):
        return Score(case_id=answer.case_id, qid=answer.qid, type=question.type, judge=self.name, verdict="wrong",
                     reason="throwaway judge")


def test_a_throwaway_judge_is_its_class_and_its_yaml(tmp_path):
    conf = tmp_path / "conf"
    shutil.copytree(CONF_DIR, conf)
    (conf / "judge" / "wrong.yaml").write_text(f"_target_: {__name__}.AlwaysWrong  # the class\n", encoding="utf-8")
    metrics = run(compose(["judge=wrong", "dataset.limit=2", f"output_dir={tmp_path / 'job'}", "cache.enabled=false"],
                          config_dir=conf))
    assert metrics["n_scored"] > 0 and metrics["accuracy"] == 0.0
    scores = [json.loads(line) for line in (tmp_path / "job" / "scores.jsonl").read_text().splitlines()]
    assert {s["judge"] for s in scores} == {"always-wrong"}


def test_a_throwaway_prompt_is_its_text_file_and_its_yaml(tmp_path):
    conf = tmp_path / "conf"
    shutil.copytree(CONF_DIR, conf)
    text = tmp_path / "mine.txt"
    text.write_text("Summarize.\n1. Files touched: every path.\n2. Errors: each error.\n", encoding="utf-8")
    (conf / "prompt" / "mine.yaml").write_text(
        f"name: mine  # its name in reports\nfile: {text}  # the prompt file (a path of one's own)\n"
        "text: ${bench.prompt:${.file}}  # the text, read from the file\n", encoding="utf-8")
    cfg = compose(["arm=compact", "prompt=mine", "dataset.limit=2", f"output_dir={tmp_path / 'job'}",
                   "cache.enabled=false"], config_dir=conf)
    assert cfg.prompt.text.startswith("Summarize.")
    run(cfg)
    record = json.loads((tmp_path / "job" / "run.json").read_text())
    from bench.runner.provenance import text_hash

    assert record["prompt_hash"] == text_hash(text.read_text(encoding="utf-8"))  # the job summarised with it
