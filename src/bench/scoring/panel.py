"""A judge panel (``judge=panel``): several judges grade every answer; the majority decides.

One judge is a single point of failure for every number the benchmark reports: the exact
judge misreads free text in classes of ways, an LLM judge in others. A panel grades each
answer with every member (by default the exact judge and one LLM judge, the judges of
``conf/judge/``), keeps each member's verdict on the score (``Score.panel``), and records how
far the members agree, so a researcher sees where the grade itself is in doubt.

* **Majority**: the verdict more than half of the members that scored the answer gave. With
  no majority (a tie, e.g. the two members of the default panel disagree) the first member
  listed decides (the exact judge by default: the rule that a reviewer can read), and the
  score's reason says it was a tie. Members that return ``unscored`` do not vote; when none
  scores, the panel's verdict is ``unscored``.
* **A member that fails** (its endpoint keeps answering 500, ...) abstains: its verdict is
  ``unscored``, the others decide, and the score's ``error`` names the member and its error (the
  job is then incomplete and ``resume=`` judges that answer again). When every member fails, the
  panel fails with every member's error.
* **Agreement** (:func:`panel_metrics`, ``metrics.json`` ``panel``): over the questions every
  member scored, the share where all members agree, each pair's agreement and Cohen's kappa,
  each member's agreement with the majority, and the disagreements listed for review (qid,
  type, every member's verdict, the majority).

    judge = PanelJudge(members={"exact": ExactJudge(), "llm": LLMJudge(...)})
    score = judge.score(question, answer, repo_root)   # score.panel == {"exact": ..., "llm:...": ...}
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from itertools import combinations
from typing import Any

from bench.core.components import ModelClient, clients_of
from bench.scoring.judge import check_judge
from bench.stats import cohen_kappa
from bench.store.schema import Answer, Question, Score

__all__ = ["PanelJudge", "PanelFailed", "majority_verdict", "panel_metrics"]

UNSCORED = "unscored"


class PanelFailed(RuntimeError):
    """Every member of a panel failed on an answer (the message holds each member's error)."""


def majority_verdict(verdicts: Sequence[str]) -> tuple[str, bool]:
    """``(verdict, tie)``: the majority of the scored verdicts; on a tie the first scored one."""
    scored = [v for v in verdicts if v != UNSCORED]
    if not scored:
        return UNSCORED, False
    verdict, count = Counter(scored).most_common(1)[0]
    if count * 2 > len(scored):
        return verdict, False
    return scored[0], True


class PanelJudge:
    """Every member grades every answer; the majority is the verdict (module docstring)."""

    def __init__(self, members: Mapping[str, Any] | Sequence[Any]) -> None:
        listed = list(members.values()) if isinstance(members, Mapping) else list(members)
        for member in listed:  # each a judge (its protocol's members), refused here in one line, not mid-job
            check_judge(member)
        if len(listed) < 2:
            raise ValueError(f"judge=panel needs at least two members, got {len(listed)}")
        names = [str(getattr(m, "name", type(m).__name__)) for m in listed]
        if len(set(names)) != len(names):
            raise ValueError(f"judge=panel members must be different judges, got {names}")
        self.members = listed
        self.member_names = names
        self.name = "panel(" + "+".join(names) + ")"

    def clients(self) -> list[ModelClient]:
        """The model clients of the members (preflight and the limiters find them here)."""
        return clients_of(*self.members)

    def _member_score(self, name: str, member: Any, question: Question, answer: Answer,
                      repo_root: str | None) -> tuple[Score, str | None]:
        """A member's score, or (it failed) an abstention and its error naming it."""
        try:
            return member.score(question, answer, repo_root), None
        except Exception as err:  # noqa: BLE001 - one failing member must not take the others' verdicts with it
            error = f"panel member {name} failed: {type(err).__name__}: {err}"
            return Score(case_id=answer.case_id, qid=answer.qid, type=question.type, verdict=UNSCORED,
                         reason=error, judge=name), error

    def score(self, question: Question, answer: Answer, repo_root: str | None = None) -> Score:
        graded = [self._member_score(name, member, question, answer, repo_root)
                  for name, member in zip(self.member_names, self.members, strict=True)]
        scores = [score for score, _ in graded]
        errors = [error for _, error in graded if error]
        if len(errors) == len(graded):
            raise PanelFailed(f"every member of {self.name} failed: " + "; ".join(errors))
        verdicts = {name: s.verdict for name, s in zip(self.member_names, scores, strict=True)}
        verdict, tie = majority_verdict([s.verdict for s in scores])
        votes = sum(s.verdict == verdict for s in scores)
        head = (f"panel tie, {self.member_names[0]} decides" if tie
                else f"panel {votes}/{len(scores)}")
        reasons = "; ".join(f"{name}: {s.verdict} ({s.reason})" for name, s in
                            zip(self.member_names, scores, strict=True))
        # the first member giving the panel's verdict lends its reason's lead (stale counts read it)
        lead = next((s.reason for s in scores if s.verdict == verdict), "")
        kept = next((s for s in scores if s.verdict == verdict and (s.raw or s.prompt)), None)
        return Score(case_id=answer.case_id, qid=answer.qid, type=question.type, verdict=verdict,
                     reason=f"{lead} [{head}; {reasons}]" if lead else f"[{head}; {reasons}]",
                     judge=self.name, raw=kept.raw if kept else None, prompt=kept.prompt if kept else None,
                     panel=verdicts, error="; ".join(errors) or None)


def panel_metrics(scores: Iterable[Mapping[str, Any]]) -> dict[str, Any] | None:
    """``metrics.json`` ``panel`` from score records carrying ``panel``; None when none does."""
    rows = [s for s in scores if isinstance(s.get("panel"), Mapping)]
    if not rows:
        return None
    names = list(dict.fromkeys(name for s in rows for name in s["panel"]))
    full = [s for s in rows if all(s["panel"].get(n, UNSCORED) != UNSCORED for n in names)]

    def labels(name: str) -> list[str]:
        return [s["panel"][name] for s in full]

    n = len(full)
    unanimous = sum(len({s["panel"][name] for name in names}) == 1 for s in full)
    pairs = []
    for a, b in combinations(names, 2):
        agree = sum(x == y for x, y in zip(labels(a), labels(b), strict=True))
        pairs.append({"members": [a, b], "agreement": round(agree / n, 4) if n else None,
                      "kappa": _round(cohen_kappa(labels(a), labels(b)))})
    majority = [s["verdict"] for s in full]
    with_majority = {}
    for name in names:
        agree = sum(x == y for x, y in zip(labels(name), majority, strict=True))
        with_majority[name] = {"agreement": round(agree / n, 4) if n else None,
                               "kappa": _round(cohen_kappa(labels(name), majority))}
    disagreements = [{"qid": s["qid"], "type": s.get("type"), "verdicts": dict(s["panel"]),
                      "majority": s["verdict"]}
                     for s in rows if len(set(s["panel"].values())) > 1]
    return {"members": names, "n": n, "n_incomplete": len(rows) - n,
            "agreement": round(unanimous / n, 4) if n else None,
            "kappa": pairs[0]["kappa"] if len(pairs) == 1 else None,
            "pairs": pairs, "with_majority": with_majority,
            "n_disagreements": len(disagreements), "disagreements": disagreements}


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)
