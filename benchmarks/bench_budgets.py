"""One budget for every shrinking arm (issue 30): does each arm land within its budget?

For ``tests/data/real/dev.parquet`` and the shipped operations sample, every shrinking arm
(nlatest, mask, trim, context_edit, compact, lc_summary, condenser) builds its views at
``arm.budget`` 10%, 25% and 50% of each case's history tokens (offline: the extractive
summarizer), and the table shows per arm and budget:

* ``median r/t``: the median over cases of realized / target tokens (the issue's measure:
  within 20% of the budget on the median case, i.e. 0.8 to 1.2);
* ``min``, ``max`` of that ratio, and ``over``: the views more than 20% over their target;
* ``realized``: the mean share of the history's tokens the views kept;
* ``summ. calls``: summarizer calls per case (a model's cost with ``summarizer=openai``);
* ``ms/case``: view building time per case.

    uv run python benchmarks/bench_budgets.py [--datasets dev,ops] [--budgets 0.1,0.25,0.5] [--limit N]
"""

from __future__ import annotations

import os

os.environ.setdefault("TQDM_DISABLE", "1")

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import DEV, compose, quiet  # noqa: E402

ARMS = ("nlatest", "mask", "trim", "context_edit", "compact", "lc_summary", "condenser")
DATASETS = {"dev": ("dev.parquet", ["dataset=local", f"dataset.path={DEV}"]),
            "ops": ("operations sample", ["dataset=ops"]),
            "sample": ("coding sample", ["dataset=sample"])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", default="dev,ops", help="dev, ops, sample (comma-separated)")
    parser.add_argument("--budgets", default="0.1,0.25,0.5", help="arm.budget values (comma-separated)")
    parser.add_argument("--limit", type=int, default=0, help="first N cases of each dataset (0: all)")
    args = parser.parse_args()
    from bench.config.arms import build_policy
    from bench.data.selection import load_cases
    from bench.text.tokens import TokenCounter

    quiet()
    counter = TokenCounter()
    for key in args.datasets.split(","):
        label, overrides = DATASETS[key]
        cases = load_cases(compose(overrides).dataset, counter).cases
        cases = cases[: args.limit] if args.limit else cases
        print(f"\n{label}: {len(cases)} cases")
        print(f"{'arm':<13}{'budget':>7}{'median r/t':>12}{'min':>7}{'max':>7}{'over':>6}{'realized':>10}"
              f"{'summ. calls':>13}{'ms/case':>9}")
        for arm in ARMS:
            for budget in (float(b) for b in args.budgets.split(",")):
                extra = ["arm.n=null"] if arm == "nlatest" else []
                policy = build_policy(compose([f"arm={arm}", *extra, f"arm.budget={budget}"]), counter)
                start = time.perf_counter()
                views = [policy(case) for case in cases]
                seconds = time.perf_counter() - start
                ratios = [v.budget["realized_over_target"] for v in views]
                realized = statistics.mean(v.kept_tokens / v.full_tokens for v in views)
                calls = sum(v.summarizer_calls for v in views) / len(views)
                print(f"{arm:<13}{budget:>7.0%}{statistics.median(ratios):>12.2f}{min(ratios):>7.2f}"
                      f"{max(ratios):>7.2f}{sum(v.budget['over'] for v in views):>6}{realized:>10.1%}"
                      f"{calls:>13.1f}{1000 * seconds / len(views):>9.0f}")


if __name__ == "__main__":
    main()
