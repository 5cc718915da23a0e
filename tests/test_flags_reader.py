"""Flags = reader (issue 17, item 6): a view's ``visible`` / ``recoverable`` flags say what the
offline reader (``model=offline``) answers correctly, on every arm and every source.

Sources: the shipped coding sample, the shipped operations sample (real tau2-bench runs) and
the real OpenHands rows of ``tests/data/real/dev.parquet``. Arms: full, nlatest (10, 20, 40),
compact with every mechanism preset (sre prompt; the generic prompt, free-text summary, on the
shipped preset) and the peer arms (none, mask, trim, condenser, lc_summary). Figures for every prompt: ``benchmarks/bench_flags.py``.
"""

from __future__ import annotations

import pytest
from omegaconf import OmegaConf

from bench.evidence import evidence_flags
from bench.judge import ExactJudge
from bench.policies import CompactPolicy, FullHistory, NLatest, PolicyContext, load_prompt
from bench.policies.condenser import SummarizingCondenser
from bench.policies.lc_summary import LangChainSummarization
from bench.policies.mask import ObservationMask
from bench.policies.none import NoHistory
from bench.policies.summarize import ExtractiveSummarizer
from bench.policies.trim import TrimMessages
from bench.reader import EvidenceReader
from bench.selection import load_cases
from bench.tokens import TokenCounter

from conftest import DEV_PARQUET

COUNTER = TokenCounter()
SOURCES = {
    "sample": {"source": "sample", "profile": "openhands"},
    "ops": {"source": "ops", "profile": "tau2"},
    "dev": {"source": "local", "path": str(DEV_PARQUET), "profile": "openhands"},
}
PRESETS = {
    "shipped": {},
    "tail": {"tail": True},
    "stepcut": {"tail": True, "stepcut": True},
    "offload": {"tail": True, "stepcut": True, "offload": True},
    "collapse": {"tail": True, "stepcut": True, "offload": True, "collapse": True},
    "verify": {"tail": True, "stepcut": True, "offload": True, "collapse": True, "verify": True},
}


def _arms() -> dict[str, object]:
    arms: dict[str, object] = {"full": FullHistory(context=PolicyContext(counter=COUNTER))}
    for n in (10, 20, 40):
        arms[f"nlatest{n}"] = NLatest(n=n, context=PolicyContext(counter=COUNTER))
    for preset, mech in PRESETS.items():
        arms[f"compact/sre/{preset}"] = CompactPolicy(context=PolicyContext(
            counter=COUNTER, mechanism={"name": preset, **mech}))
    # the summary without a budget: every stored output keeps its full label in the summary
    arms["compact/sre/offload/unbounded"] = CompactPolicy(context=PolicyContext(
        counter=COUNTER, mechanism={"name": "offload", **PRESETS["offload"]},
        summarizer=ExtractiveSummarizer(max_fraction=None)))
    arms["compact/generic/shipped"] = CompactPolicy(context=PolicyContext(
        counter=COUNTER, prompt=load_prompt("generic"), prompt_name="generic", mechanism={"name": "shipped"}))
    # the peer arms, with settings that make them cut the shipped samples' short histories too
    arms["none"] = NoHistory(context=PolicyContext(counter=COUNTER))
    arms["mask3"] = ObservationMask(window=3, context=PolicyContext(counter=COUNTER))
    arms["trim1500"] = TrimMessages(max_tokens=1500, context=PolicyContext(counter=COUNTER))
    arms["condenser20"] = SummarizingCondenser(max_size=20, context=PolicyContext(counter=COUNTER))
    arms["lc_summary2000"] = LangChainSummarization(trigger=["tokens", 2000], keep=["messages", 8],
                                                    context=PolicyContext(counter=COUNTER))
    return arms


ARMS = _arms()


@pytest.fixture(scope="module", params=list(SOURCES))
def source(request: pytest.FixtureRequest) -> tuple[str, list]:
    cfg = OmegaConf.create({**SOURCES[request.param], "filters": {}})
    cases = load_cases(cfg, COUNTER).cases
    assert cases and all(case.questions for case in cases), request.param
    return request.param, cases


@pytest.mark.parametrize("arm", list(ARMS))
def test_flags_match_the_offline_reader(source: tuple[str, list], arm: str) -> None:
    name, cases = source
    reader, judge = EvidenceReader(), ExactJudge()
    asked = 0
    for case in cases:
        view = ARMS[arm](case)
        flags = evidence_flags(case, view)
        for question in case.questions:
            verdict = judge.score(question, reader.answer(case, view, question), case.repo_root).verdict
            flag = flags[question.qid]
            where = (name, arm, question.qid, verdict, flag)
            assert not (flag["visible"] and verdict != "correct"), where  # visible: the reader gets it right
            assert verdict != "correct" or flag["visible"] or flag["recoverable"], where  # right: flagged
            assert flag["recoverable"] or not flag["visible"], where  # visible implies recoverable
            asked += 1
    assert asked


def test_full_arm_flags_everything_visible(source: tuple[str, list]) -> None:
    _, cases = source
    for case in cases:
        flags = evidence_flags(case, ARMS["full"](case))
        assert all(f["visible"] and f["recoverable"] for f in flags.values()), case.case_id


def test_flags_tell_visible_from_recoverable_and_lost(source: tuple[str, list]) -> None:
    # on real data the arms reach every state: the property above is not vacuous
    _, cases = source
    states = set()
    for arm in ("nlatest10", "compact/sre/offload", "compact/sre/offload/unbounded"):
        for case in cases:
            for flag in evidence_flags(case, ARMS[arm](case)).values():
                states.add((flag["visible"], flag["recoverable"]))
    assert states == {(False, False), (False, True), (True, True)}
