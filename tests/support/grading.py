"""One answer graded by the exact judge, and the references the grading tests share."""

from __future__ import annotations

from bench.scoring.judge import ExactJudge
from bench.store.schema import Answer, Question

ROOT = "/workspace/acme__widgets__1.0"


def grade(qtype: str, reference, text: str) -> str:
    """The exact judge's verdict on ``text`` for a question of ``qtype`` whose reference is ``reference``."""
    question = Question(qid=f"c@0:{qtype}", type=qtype, question="?", reference=reference, evidence_keys=[],
                        evidence_messages=[])
    return ExactJudge().score(question, Answer(case_id="c@0", qid=question.qid, type=qtype, answer=text), ROOT).verdict


FILES = ["src/widgets/core.py", "tests/test_core.py"]
EDIT = {"path": "src/widgets/core.py", "code": "    width = cfg.get('width', 80)\n    return width",
        "context": "def size(cfg):\n    width = cfg.get('width', 80)\n    return width",
        "changed": ["    width = cfg.get('width', 80)"]}
