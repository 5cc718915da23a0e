"""One component protocol (issue 21 item 3): every part lists its model clients; preflight, limiters and
whether a view calls a model are derived from that list, for any part, including one added here."""

from __future__ import annotations

from dataclasses import dataclass

from bench.answering.evidence_reader import EvidenceReader
from bench.core.components import calls_model, clients_of, preflight
from bench.llm.limiter import FixedLimiter, find_limiters
from bench.policies import CompactPolicy, ExtractiveSummarizer, FullHistory, NLatest, PolicyContext
from bench.scoring.judge import ExactJudge
from bench.scoring.panel import PanelJudge
from bench.text.tokens import TokenCounter


class _Client:
    """A model client as the runner sees it: a kind, a limiter and a fail-fast check."""

    def __init__(self, kind: str, limiter: FixedLimiter) -> None:
        self.kind, self.limiter, self.checked = kind, limiter, 0

    def preflight(self, seen: set | None = None) -> None:
        self.checked += 1


@dataclass
class _Judge:
    """A throwaway judge with one model client."""

    client: _Client
    name: str = "mine"

    def clients(self):
        return [self.client]

    def score(self, question, answer, repo_root=None):
        raise NotImplementedError


@dataclass
class _Summarizer:
    client: _Client
    name: str = "mine"

    def clients(self):
        return [self.client]


def test_offline_parts_list_no_client_and_build_views_one_at_a_time():
    counter = TokenCounter()
    for part in (ExactJudge(), EvidenceReader(), ExtractiveSummarizer(), FullHistory(context=PolicyContext(counter))):
        assert clients_of(part) == [] and not calls_model(part)
    assert not calls_model(CompactPolicy(context=PolicyContext(counter)))


def test_clients_found_once_through_panels_arms_and_matched_arms():
    shared = FixedLimiter(4, "http://a")
    judge_client, summary_client = _Client("judge", shared), _Client("summarizer", FixedLimiter(2, "http://b"))
    panel = PanelJudge(members=[ExactJudge(), _Judge(judge_client)])
    arm = CompactPolicy(context=PolicyContext(TokenCounter(), summarizer=_Summarizer(summary_client)))
    matched = NLatest(n=None, match="compact", context=PolicyContext(TokenCounter(), budget_policy=arm))
    assert clients_of(EvidenceReader(), panel, matched, arm) == [judge_client, summary_client]
    assert calls_model(arm) and calls_model(matched) and calls_model(panel)
    preflight(EvidenceReader(), panel, matched, arm)
    assert judge_client.checked == 1 and summary_client.checked == 1  # each client once
    assert [(limiter.endpoint, kinds) for limiter, kinds in find_limiters(panel, matched)] == \
        [("http://a", ["judge"]), ("http://b", ["summarizer"])]


def test_a_part_of_ones_own_without_clients_says_so_or_is_assumed_to_call_a_model():
    class Quiet:
        calls_model = False

    class Unknown:
        pass

    assert not calls_model(Quiet()) and calls_model(Unknown()) and clients_of(Quiet(), Unknown()) == []
