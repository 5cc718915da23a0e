"""The extractive summarizer keeps to its budget (issue 17, item 7): ``summarizer.max_fraction``
(default 0.2 of the tokens the summary replaces) and ``summarizer.max_tokens`` (absolute cap).
Figures on every source and prompt: ``benchmarks/bench_summary_budget.py``."""

from __future__ import annotations

import pytest
from hydra.utils import instantiate
from omegaconf import OmegaConf

from bench.config.arms import build_policy
from bench.config.checks import ConfigError
from bench.data.selection import load_cases
from bench.policies import CompactPolicy, ExtractiveSummarizer, PolicyContext
from bench.text.formats import parse_omitted
from bench.text.tokens import TokenCounter

from commands import bench
from jobs import compose_with
from paths import DEV_PARQUET

COUNTER = TokenCounter()


def test_budget_keys_compose_with_their_defaults() -> None:
    cfg = compose_with("arm=compact")
    assert cfg.summarizer.max_fraction == 0.2 and cfg.summarizer.max_tokens is None
    summarizer = instantiate(cfg.summarizer, _convert_="object")
    assert summarizer.budget(1000) == 200
    cfg = compose_with("arm=compact", "summarizer.max_tokens=150", "summarizer.max_fraction=null")
    summarizer = instantiate(cfg.summarizer, _convert_="object")
    assert summarizer.budget(1000) == 150 and summarizer.budget(10) == 150
    policy = build_policy(compose_with("arm=compact", "summarizer.max_tokens=150"), COUNTER)
    assert policy.context.summarizer.budget(10_000) == 150  # both given: the smaller


@pytest.mark.parametrize("key,value", [("max_fraction", 0), ("max_fraction", 1.5), ("max_tokens", 0)])
def test_bad_budget_is_one_clear_error(key: str, value: float) -> None:
    with pytest.raises(ConfigError, match=f"summarizer.{key}"):
        ExtractiveSummarizer(**{key: value})


def test_bad_budget_on_the_command_line_exits_2(tmp_path) -> None:
    done = bench(tmp_path, "arm=compact", "summarizer.max_fraction=2")
    assert done.returncode == 2 and "summarizer.max_fraction must be in (0, 1]" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.fixture(scope="module")
def dev_cases():
    cfg = OmegaConf.create({"source": "local", "path": str(DEV_PARQUET), "filters": {}})
    return load_cases(cfg, COUNTER).cases


class Sizes:
    """The extractive summarizer, recording (tokens replaced, summary tokens)."""

    name, calls_model = "extractive", False

    def __init__(self, inner: ExtractiveSummarizer) -> None:
        self.inner, self.sizes = inner, []

    def summarize(self, messages, prompt, profile=None):
        text, usage = self.inner.summarize(messages, prompt, profile=profile)
        self.sizes.append((COUNTER.count_messages(messages), COUNTER.count_text(text)))
        return text, usage


def _summaries(cases, inner: ExtractiveSummarizer) -> tuple[Sizes, list]:
    sizes = Sizes(inner)
    policy = CompactPolicy(context=PolicyContext(counter=COUNTER, summarizer=sizes))
    return sizes, [policy(case) for case in cases]


def test_real_summaries_keep_to_the_budget(dev_cases) -> None:
    unbounded, _ = _summaries(dev_cases, ExtractiveSummarizer(max_fraction=None))
    bounded, views = _summaries(dev_cases, ExtractiveSummarizer())
    assert len(bounded.sizes) == len(dev_cases)
    # every dev summary can fit: the smallest rendering is far below 20% of these histories
    assert all(summary <= 0.2 * replaced for replaced, summary in bounded.sizes)
    assert any(summary > 0.2 * replaced for replaced, summary in unbounded.sizes)  # the budget did cut
    for view in views:  # a cut summary still lists items (a timeline, with its omitted count when cut)
        items = [line for line in view.summary.splitlines() if line.lstrip().startswith("- ")]
        assert items, view.case_id
        assert all(parse_omitted(line.strip()[2:]) is not None or line.strip()[2:] for line in items)


def test_an_absolute_cap_and_a_summary_already_in_budget(dev_cases) -> None:
    capped, _ = _summaries(dev_cases[:3], ExtractiveSummarizer(max_tokens=600, max_fraction=None))
    assert all(summary <= 600 for _, summary in capped.sizes)
    # below what the prompt's sections take (about 350 tokens for sre): the smallest rendering
    floor, _ = _summaries(dev_cases[:3], ExtractiveSummarizer(max_tokens=1, max_fraction=None))
    assert all(f < c < 600 for (_, f), (_, c) in zip(floor.sizes, capped.sizes, strict=True))
    roomy, _ = _summaries(dev_cases[:3], ExtractiveSummarizer(max_fraction=1.0))
    same, _ = _summaries(dev_cases[:3], ExtractiveSummarizer(max_fraction=None))
    assert roomy.sizes == same.sizes  # within budget: the summary is not touched
