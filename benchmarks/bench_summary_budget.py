"""The extractive (offline) summary's size against what it replaces, without and with its budget.

For every source (the shipped coding and operations samples, the real dev rows) and summary
prompt, ``arm=compact`` (shipped mechanisms) builds each case's view; each summary the
extractive summarizer writes is measured against the tokens of the messages it replaces.
"unbounded" is the summarizer as it was before the budget (``max_fraction: null``, the same
rendering), "budget" the default (``max_fraction: 0.2``). Prints median and quartiles of the
ratio and the share of summaries at or above 1x, and the offline reader's evidence-available
rate under each.

    uv run python benchmarks/bench_summary_budget.py [--sources sample,ops,dev] [--prompts sre,generic,hybrid,hybrid_v2]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from dataclasses import dataclass, field
from pathlib import Path

from omegaconf import OmegaConf

from bench.answering.evidence_reader import EvidenceReader
from bench.data.selection import load_cases
from bench.policies import CompactPolicy, ExtractiveSummarizer, PolicyContext, load_prompt
from bench.scoring.judge import ExactJudge
from bench.text.tokens import TokenCounter

DEV = Path(__file__).resolve().parents[1] / "tests" / "data" / "real" / "dev.parquet"
SOURCES = {"sample": {"source": "sample", "profile": "openhands"},
           "ops": {"source": "ops", "profile": "tau2"},
           "dev": {"source": "local", "path": str(DEV), "profile": "openhands"}}


@dataclass
class Recording:
    """The extractive summarizer, recording (tokens replaced, summary tokens) of each summary."""

    inner: ExtractiveSummarizer
    counter: TokenCounter
    sizes: list[tuple[int, int]] = field(default_factory=list)
    name: str = "extractive"
    calls_model: bool = False

    def summarize(self, messages, prompt, profile=None):
        text, usage = self.inner.summarize(messages, prompt, profile=profile)
        self.sizes.append((self.counter.count_messages(messages), self.counter.count_text(text)))
        return text, usage


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sources", default="sample,ops,dev")
    parser.add_argument("--prompts", default="sre,generic,hybrid,hybrid_v2")
    args = parser.parse_args()
    counter = TokenCounter()
    reader, judge = EvidenceReader(), ExactJudge()
    print("| source | prompt | summarizer | summaries | median ratio | quartiles | >= 1x | evidence available |")
    print("|---|---|---|---|---|---|---|---|")
    for source in args.sources.split(","):
        cfg = OmegaConf.create({**SOURCES[source], "filters": {}})
        cases = load_cases(cfg, counter).cases
        for prompt in args.prompts.split(","):
            for label, fraction in (("unbounded", None), ("budget 0.2", 0.2)):
                rec = Recording(ExtractiveSummarizer(max_fraction=fraction), counter)
                policy = CompactPolicy(context=PolicyContext(counter=counter, prompt=load_prompt(prompt),
                                                             prompt_name=prompt, summarizer=rec))
                correct = n = 0
                for case in cases:
                    view = policy(case)
                    for question in case.questions:
                        answer = reader.answer(case, view, question)
                        correct += judge.score(question, answer, case.repo_root).verdict == "correct"
                        n += 1
                ratios = sorted(s / r for r, s in rec.sizes if r)
                q1, med, q3 = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else (ratios * 3)
                over = sum(r >= 1 for r in ratios) / len(ratios)
                print(f"| {source} | {prompt} | {label} | {len(ratios)} | {med:.2f}x | {q1:.2f}-{q3:.2f}x |"
                      f" {100 * over:.0f}% | {100 * correct / n:.1f}% |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
