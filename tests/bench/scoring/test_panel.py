"""judge=panel: every member grades, the majority decides, the members' agreement is recorded.

Unit tests for the majority rule and the agreement figures; the panel through a job (metrics.json,
scores.jsonl, the report), through bench.calibrate and its limiter discovery, with an LLM member on a
fake OpenAI-compatible server on loopback.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir

from bench.calibrate import main as calibrate_main
from bench.core.components import preflight
from bench.llm.limiter import find_limiters
from bench.runner import run
from bench.scoring.judge import ExactJudge
from bench.scoring.panel import PanelJudge, majority_verdict, panel_metrics
from bench.store.records import read_jsonl
from bench.store.schema import STALE_REASON, Answer, Question, Score
from bench.study.assemble import write_report

from fake_openai import FakeOpenAI
from paths import CONF_DIR
from scripted import scripted_verdict, write_jsonl

CONF = str(CONF_DIR)
QUESTION = Question(qid="c@0:call_count", type="call_count", question="How many calls?", reference=3,
                    evidence_keys=[], evidence_messages=[])


class Fixed:
    """A member that always gives one verdict."""

    def __init__(self, name: str, verdict: str, reason: str = "fixed") -> None:
        self.name, self.verdict, self.reason = name, verdict, reason

    def clients(self) -> list:
        return []  # no model

    def score(self, question: Question, answer: Answer, repo_root: str | None = None) -> Score:
        return Score(case_id=answer.case_id, qid=answer.qid, type=question.type, verdict=self.verdict,
                     reason=self.reason, judge=self.name)


def answer(text: str = "3") -> Answer:
    return Answer(case_id="c@0", qid=QUESTION.qid, type=QUESTION.type, answer=text, outcome="answered")


@pytest.mark.parametrize("verdicts,expected", [
    (["correct", "correct", "wrong"], ("correct", False)),
    (["wrong", "correct", "correct"], ("correct", False)),
    (["correct", "wrong"], ("correct", True)),            # a tie: the first member decides
    (["wrong", "correct"], ("wrong", True)),
    (["unscored", "wrong", "correct"], ("wrong", True)),  # unscored does not vote; the first scored decides
    (["unscored", "abstained", "abstained"], ("abstained", False)),
    (["unscored", "unscored"], ("unscored", False)),
    (["correct", "wrong", "abstained"], ("correct", True)),
])
def test_majority_verdict(verdicts, expected):
    assert majority_verdict(verdicts) == expected


def test_the_panel_score_keeps_every_members_verdict_and_says_how_it_was_decided():
    panel = PanelJudge(members={"a": Fixed("a", "wrong", "a's reason"), "b": Fixed("b", "correct"),
                                "c": Fixed("c", "correct", "c's reason")})
    score = panel.score(QUESTION, answer())
    assert score.verdict == "correct" and score.panel == {"a": "wrong", "b": "correct", "c": "correct"}
    assert score.judge == "panel(a+b+c)"
    assert score.reason.startswith("fixed [panel 2/3; a: wrong (a's reason); b: correct (fixed)")
    tie = PanelJudge(members=[Fixed("x", "wrong", f"{STALE_REASON}: an earlier call's"), Fixed("y", "correct")])
    score = tie.score(QUESTION, answer())
    assert score.verdict == "wrong" and "panel tie, x decides" in score.reason
    assert score.reason.startswith(STALE_REASON)  # the stale count reads the reason's lead, as for one judge


def test_a_single_judges_score_record_has_no_panel_field():
    score = ExactJudge().score(QUESTION, answer())
    assert "panel" not in score.to_dict() and score.to_dict()["verdict"] == "correct"


def test_a_panel_needs_two_different_members():
    with pytest.raises(ValueError, match="at least two"):
        PanelJudge(members=[ExactJudge()])
    with pytest.raises(ValueError, match="different judges"):
        PanelJudge(members=[ExactJudge(), ExactJudge()])


def test_panel_metrics_agreement_kappa_and_disagreements():
    rows = [{"qid": f"q{i}", "type": "call_count", "verdict": a, "panel": {"exact": a, "llm": b}}
            for i, (a, b) in enumerate([("correct", "correct"), ("wrong", "wrong"), ("correct", "wrong"),
                                        ("abstained", "abstained")])]
    rows.append({"qid": "q9", "type": "call_count", "verdict": "wrong", "panel": {"exact": "wrong", "llm": "unscored"}})
    m = panel_metrics(rows)
    assert m["members"] == ["exact", "llm"] and m["n"] == 4 and m["n_incomplete"] == 1
    assert m["agreement"] == 0.75
    # exact c2 w1 a1, llm c1 w2 a1: p_e = (2 + 2 + 1) / 16, kappa = (0.75 - 5/16) / (1 - 5/16)
    assert m["kappa"] == pytest.approx((0.75 - 5 / 16) / (1 - 5 / 16), abs=1e-4)
    assert m["with_majority"]["exact"]["agreement"] == 1.0
    assert [d["qid"] for d in m["disagreements"]] == ["q2", "q9"]  # an unscored member is listed too
    assert panel_metrics([{"qid": "q", "verdict": "correct"}]) is None


def test_panel_composes_with_each_members_keys_and_a_third_member():
    with initialize_config_dir(config_dir=CONF, version_base="1.3"):
        cfg = compose("config", overrides=["judge=panel", "judge.members.llm.name=judge-a",
                                           "+judge@judge.members.llm2=llm", "judge.members.llm2.name=judge-b"])
    members = cfg.judge.members
    assert list(members) == ["exact", "llm", "llm2"]
    assert members.exact._target_ == "bench.scoring.judge.ExactJudge"
    assert (members.llm.name, members.llm2.name) == ("judge-a", "judge-b")
    assert cfg.judge._target_ == "bench.scoring.panel.PanelJudge"


def panel_args(server: FakeOpenAI, tmp: Path) -> list[str]:
    return ["judge=panel", f"judge.members.llm.base_url={server.base_url}", "judge.members.llm.name=fake-judge",
            "judge.members.llm.api_key_env=null", "judge.members.llm.max_concurrency=4",
            f"cache.path={tmp / 'cache.sqlite'}"]


def test_a_job_judged_by_a_panel_records_verdicts_agreement_and_the_report_shows_them(tmp_path):
    out = tmp_path / "job"

    def disagreeing(body: dict) -> str:  # the LLM member calls every call_count answer wrong
        text = json.dumps(body)
        verdict = "wrong" if "call_count" in text else "correct" if "MARK" not in text else "abstained"
        return json.dumps({"verdict": verdict, "reason": f"fake {verdict}"})

    with FakeOpenAI(reply=disagreeing) as server:
        with initialize_config_dir(config_dir=CONF, version_base="1.3"):
            cfg = compose("config", overrides=[f"output_dir='{out}'", "dataset=ops", "dataset.limit=3",
                                               *panel_args(server, tmp_path), "cache.enabled=false"])
        metrics = run(cfg)
        calls = server.stats()["requests"]
    scores = read_jsonl(out / "scores.jsonl")
    assert scores and all(set(s["panel"]) == {"exact", "llm:fake-judge"} for s in scores)
    assert calls >= len(scores)  # the LLM member judged every answer (plus preflight)
    panel = metrics["panel"]
    assert panel["members"] == ["exact", "llm:fake-judge"] and panel["n"] == len(scores)
    split = [s for s in scores if s["panel"]["exact"] != s["panel"]["llm:fake-judge"]]
    assert panel["n_disagreements"] == len(split) > 0
    assert all(s["verdict"] == s["panel"]["exact"] for s in split)  # two members: the exact judge breaks ties
    assert panel["agreement"] == pytest.approx(1 - len(split) / len(scores), abs=1e-4)
    stored = json.loads((out / "metrics.json").read_text())
    assert stored["panel"] == panel
    report = write_report([out], tmp_path / "report")
    assert "Judge panel" in report["markdown"] and split[0]["qid"] in report["markdown"]
    assert report["jobs_df"]["panel_disagreements"].iloc[0] == len(split)


def test_calibrate_accepts_a_panel_and_reports_each_member(tmp_path, capsys):
    error = {"type": "ValueError", "message": "bad value"}
    rows = [
        {"id": "r1", "type": "first_error", "question": "q?", "reference": error,
         "answer": "ValueError: bad value MARK-OK", "verdict": "correct"},
        {"id": "r2", "type": "first_error", "question": "q?", "reference": error, "answer": "KeyError: x MARK-WRONG",
         "verdict": "wrong"},
        {"id": "r3", "type": "call_count", "question": "q?", "reference": 3, "answer": "4 MARK-OK", "verdict": "wrong"},
    ]
    path = write_jsonl(tmp_path / "rows.jsonl", rows)
    with FakeOpenAI(reply=scripted_verdict) as server:
        assert calibrate_main([str(path), *panel_args(server, tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "panel(exact+llm:fake-judge)" in out.splitlines()[0]
    assert "  exact: 3/3 (100.0%)" in out and "  llm:fake-judge: 2/3 (66.7%)" in out
    assert "members agree on 66.7% of 3" in out and "1 disagreements" in out
    assert out.rstrip().splitlines()[-1].startswith("agreement 3/3 (100.0%)")  # the tie went to the exact judge


def test_the_panels_llm_client_is_found_for_the_limiters_and_preflight(tmp_path):
    with FakeOpenAI(reply=scripted_verdict) as server:
        with initialize_config_dir(config_dir=CONF, version_base="1.3"):
            cfg = compose("config", overrides=panel_args(server, tmp_path))
        from hydra.utils import instantiate

        judge = instantiate(cfg.judge, _convert_="object")
        preflight(judge)  # reaches the fake server's /models
        limiters = find_limiters(judge)
    assert [kinds for _, kinds in limiters] == [["judge"]]
    assert [c.model for c in judge.clients()] == ["fake-judge"]


def test_the_llm_judge_reads_a_typed_abstention_without_a_call():
    from bench.scoring.judge import LLMJudge

    from scripted import scripted_client

    client = scripted_client(ValueError("no call expected"), kind="judge")
    score = LLMJudge(client=client).score(QUESTION, answer('{"unknown": true}'))
    assert score.verdict == "abstained" and client.llm.requests == []
