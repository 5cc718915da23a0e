"""The hedge rule (bench.scoring.hedges): one test per hedge class, the flat statements, and the metrics split."""

from __future__ import annotations

import pytest

from bench.scoring.hedges import HEDGE_CLASSES, hedge_class, is_hedged
from bench.scoring.metrics import compute_metrics


@pytest.mark.parametrize("answer", ["I think the file was src/app.py", "I believe 3 tests failed",
                                    "I'm fairly sure it was a KeyError", "I suspect the timeout",
                                    "I'd guess 12"])
def test_epistemic(answer):
    assert hedge_class(answer) in ("epistemic", "uncertain") and is_hedged(answer)
    assert hedge_class("I think the file was src/app.py") == "epistemic"


@pytest.mark.parametrize("answer", ["Probably 3 passed", "It was likely a KeyError", "Maybe `config.yaml`",
                                    "Perhaps the second call", "Presumably no_service", "Possibly 42",
                                    "Unlikely to be anything but src/a.py"])
def test_adverb(answer):
    assert hedge_class(answer) == "adverb"


@pytest.mark.parametrize("answer", ["It might be src/app.py", "The value may have been 42",
                                    "It could be a timeout", "That may not be the whole list"])
def test_modal(answer):
    assert hedge_class(answer) == "modal"


@pytest.mark.parametrize("answer", ["It seems the test failed", "It appears 3 were written",
                                    "It looks like a KeyError", "The tool seems to return 7"])
def test_appearance(answer):
    assert hedge_class(answer) == "appearance"


@pytest.mark.parametrize("answer", ["Not sure, but 12", "src/a.py (not 100% certain)", "My best guess: 5",
                                    "If I recall correctly it was 3", "As far as I can tell, none",
                                    "To my knowledge the value is 9", "I can't confirm it, 4 passed"])
def test_uncertain(answer):
    assert hedge_class(answer) == "uncertain"


@pytest.mark.parametrize("answer", [
    "The file was src/app.py", "3 passed, 1 failed", "KeyError: 'id'", '{"count": 4}',
    "The test could not find the fixture",  # a past fact, not a possibility
    "Deployed on May 3",  # the month, not the modal
    "It raised `MaybeError: likely_bad`",  # quoted identifiers carry no hedge
    '{"message": "this might be a bug"}',  # a quoted message is the claim itself
    "", None,
])
def test_flat_statements_are_not_hedged(answer):
    assert hedge_class(answer) is None and not is_hedged(answer)


def test_every_class_is_documented():
    import bench.scoring.hedges as module

    for name in HEDGE_CLASSES:
        assert f"``{name}``" in module.__doc__


def test_metrics_count_hedged_wrong_apart_from_confidently_wrong():
    cases = [{"case_id": "c1", "instance_id": "i1", "questions": [
        {"qid": f"c1:{k}", "type": "t", "in_task_text": False} for k in range(4)]}]
    scores = [{"qid": "c1:0", "verdict": "wrong"}, {"qid": "c1:1", "verdict": "wrong"},
              {"qid": "c1:2", "verdict": "correct"}, {"qid": "c1:3", "verdict": "abstained"}]
    answers = [{"qid": "c1:0", "answer": "src/b.py"}, {"qid": "c1:1", "answer": "Probably src/c.py"},
               {"qid": "c1:2", "answer": "I think src/a.py"}, {"qid": "c1:3", "answer": "I don't know"}]
    metrics = compute_metrics(cases, [], answers, scores)
    assert metrics["confidently_wrong_rate"] == 0.25  # the flat wrong one only
    assert metrics["hedged_wrong_rate"] == 0.25  # a hedged correct answer is not counted
    assert metrics["verdicts"]["wrong"] == 2
