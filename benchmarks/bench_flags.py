"""Flag/reader agreement: do a view's evidence flags say what the offline reader gets right?

For every source (the shipped coding and operations samples, the real dev rows) and arm
(full; nlatest 10/20/40; compact with each mechanism preset and each summary prompt), each
question is answered by the offline reader (``model=offline``) and graded by the exact
judge. A question agrees when ``visible`` implies correct and correct implies ``visible``
or ``recoverable`` (issue 17, item 6). Prints one row per source and arm.

    uv run python benchmarks/bench_flags.py [--sources sample,ops,dev] [--prompts sre,generic,hybrid,hybrid_v2]
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

from omegaconf import OmegaConf

from bench.answering.evidence import evidence_flags
from bench.answering.evidence_reader import EvidenceReader
from bench.data.selection import load_cases
from bench.policies import CompactPolicy, FullHistory, NLatest, PolicyContext, load_prompt
from bench.scoring.judge import ExactJudge
from bench.text.tokens import TokenCounter

ROOT = Path(__file__).resolve().parents[1]
DEV = ROOT / "tests" / "data" / "real" / "dev.parquet"
PRESETS = {
    "shipped": {},
    "tail": {"tail": True},
    "stepcut": {"tail": True, "stepcut": True},
    "offload": {"tail": True, "stepcut": True, "offload": True},
    "collapse": {"tail": True, "stepcut": True, "offload": True, "collapse": True},
    "verify": {"tail": True, "stepcut": True, "offload": True, "collapse": True, "verify": True},
}


def source_cases(name: str, counter: TokenCounter) -> list:
    cfg = {"sample": {"source": "sample", "profile": "openhands"},
           "ops": {"source": "ops", "profile": "tau2"},
           "dev": {"source": "local", "path": str(DEV), "profile": "openhands"}}[name]
    return load_cases(OmegaConf.create({**cfg, "filters": {}}), counter).cases


def arms(counter: TokenCounter, prompts: list[str]):
    yield "full", FullHistory(context=PolicyContext(counter=counter))
    for n in (10, 20, 40):
        yield f"nlatest{n}", NLatest(n=n, context=PolicyContext(counter=counter))
    for prompt in prompts:
        text = load_prompt(f"{prompt}.txt")
        for preset, mech in PRESETS.items():
            context = PolicyContext(counter=counter, prompt=text, prompt_name=prompt,
                                    mechanism={"name": preset, **mech})
            yield f"compact/{prompt}/{preset}", CompactPolicy(context=context)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sources", default="sample,ops,dev")
    parser.add_argument("--prompts", default="sre,generic,hybrid,hybrid_v2")
    args = parser.parse_args()
    counter = TokenCounter()
    reader, judge = EvidenceReader(), ExactJudge()
    print("| source | arm | questions | reader correct | visible | recoverable | visible but wrong |"
          " correct, flagged neither | agreement |")
    print("|---|---|---|---|---|---|---|---|---|")
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for source in args.sources.split(","):
        cases = source_cases(source, counter)
        for arm, policy in arms(counter, args.prompts.split(",")):
            n = correct = visible = recoverable = bad_visible = bad_neither = 0
            for case in cases:
                view = policy(case)
                flags = evidence_flags(case, view)
                for question in case.questions:
                    ok = judge.score(question, reader.answer(case, view, question), case.repo_root).verdict == "correct"
                    flag = flags[question.qid]
                    n += 1
                    correct += ok
                    visible += flag["visible"]
                    recoverable += flag["recoverable"]
                    bad_visible += flag["visible"] and not ok
                    bad_neither += ok and not (flag["visible"] or flag["recoverable"])
            agree = n - bad_visible - bad_neither  # a question counts once per kind; both kinds cannot hold at once
            totals[source][0] += agree
            totals[source][1] += n
            print(f"| {source} | {arm} | {n} | {correct} | {visible} | {recoverable} | {bad_visible} |"
                  f" {bad_neither} | {100 * agree / max(n, 1):.1f}% |", flush=True)
    for source, (agree, n) in totals.items():
        print(f"{source}: agreement {agree}/{n} = {100 * agree / max(n, 1):.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
