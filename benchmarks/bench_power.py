"""How many cases do I need? Instances needed to detect 5, 10 and 20 points between two arms.

    uv run python benchmarks/bench_power.py

Offline, no arguments (about a minute). For each shipped design (the coding sample, the
operations sample, tests/data/real/dev.parquet) it runs arm=nlatest at N=10 and N=20 through
``bench.runner.run`` (into a temporary directory) and measures, on the headline questions:

- the questions per instance: mean m and the size-weighted mean m_w = sum m^2 / sum m;
- the within-instance correlation rho of the answers, types as strata: the one-way ANOVA
  intraclass correlation of each answer minus its type's accuracy (the larger of the two arms',
  at least 0);
- the design effect deff = 1 + (m_w - 1) rho.

The table gives the instances K needed for a two-sided test at the 5% level to have 80% power
against a difference of 5, 10 and 20 points between two arms at 50% accuracy (the worst case),
each arm's variance p (1 - p) deff / (K m), the t quantile at K - 1 degrees of freedom: the
smallest K with (t(K - 1) + z(0.8)) sqrt(2 x 0.25 deff / (K m)) <= delta. Two arms on the same
questions (a paired comparison) need fewer when they agree on most questions: this is the
upper bound (``bench.compare`` prints the pair's own detectable difference).
"""

from __future__ import annotations

import json
import logging
import math
import os
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import ROOT, compose  # noqa: E402

os.environ.setdefault("TQDM_DISABLE", "1")

SOURCES = {
    "coding sample (dataset=sample)": ["dataset=sample"],
    "operations sample (dataset=ops)": ["dataset=ops"],
    "dev.parquet": ["dataset=local", f"dataset.path={ROOT / 'tests' / 'data' / 'real' / 'dev.parquet'}"],
}
ARMS = {"nlatest N=10": ["arm=nlatest", "arm.n=10"], "nlatest N=20": ["arm=nlatest", "arm.n=20"]}
DELTAS = (0.05, 0.10, 0.20)
Z_POWER = 0.8416212335729143  # the normal 80% quantile


def _read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def answers(out: Path, overrides: list[str]) -> list[tuple[str, str, float]]:
    """(instance, type, correct) of every headline question of one offline job."""
    from bench.runner import run
    from bench.scoring.question_groups import headline_questions

    run(compose([f"output_dir={out}", "cache.enabled=false", *overrides]))
    questions = headline_questions(_read(out / "cases.jsonl"))
    verdict = {s["qid"]: s["verdict"] for s in _read(out / "scores.jsonl")}
    return [(q["_instance"], q["type"], float(verdict.get(qid) == "correct")) for qid, q in questions.items()]


def icc(rows: list[tuple[str, str, float]]) -> float:
    """One-way ANOVA intraclass correlation of the answers within instances, types as strata
    (each answer minus its type's accuracy); at least 0."""
    by_type: dict[str, list[float]] = defaultdict(list)
    for _, qtype, y in rows:
        by_type[qtype].append(y)
    mean = {t: sum(v) / len(v) for t, v in by_type.items()}
    groups: dict[str, list[float]] = defaultdict(list)
    for instance, qtype, y in rows:
        groups[instance].append(y - mean[qtype])
    n, k = len(rows), len(groups)
    if k < 2 or n <= k:
        return 0.0
    grand = sum(sum(g) for g in groups.values()) / n
    between = sum(len(g) * (sum(g) / len(g) - grand) ** 2 for g in groups.values()) / (k - 1)
    within = sum((y - sum(g) / len(g)) ** 2 for g in groups.values() for y in g) / (n - k)
    m0 = (n - sum(len(g) ** 2 for g in groups.values()) / n) / (k - 1)
    denominator = between + (m0 - 1) * within
    return max(0.0, (between - within) / denominator) if denominator > 0 else 0.0


def instances_needed(delta: float, m: float, deff: float) -> int:
    """The smallest K detecting delta at 80% power, 5% level, two arms at 50%."""
    from bench.stats import t_quantile

    for k in range(2, 100_000):
        if (float(t_quantile(0.95, k - 1)) + Z_POWER) * math.sqrt(2 * 0.25 * deff / (k * m)) <= delta:
            return k
    raise ValueError(f"no K below 100,000 detects {delta}")


def main() -> list[dict]:
    logging.disable(logging.WARNING)
    designs = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, source in SOURCES.items():
            rhos, sizes, k = [], [], 0
            for i, overrides in enumerate(ARMS.values()):
                rows = answers(Path(tmp) / f"{len(designs)}-{i}", [*source, *overrides])
                rhos.append(icc(rows))
                per: dict[str, int] = defaultdict(int)
                for instance, _, _ in rows:
                    per[instance] += 1
                sizes, k = list(per.values()), len(per)
            m = sum(sizes) / len(sizes)
            m_w = sum(s * s for s in sizes) / sum(sizes)
            rho = max(rhos)
            deff = 1 + (m_w - 1) * rho
            designs.append({"design": name, "instances": k, "m": m, "m_w": m_w, "rho": rho,
                            "rhos": rhos, "deff": deff,
                            "needed": {d: instances_needed(d, m, deff) for d in DELTAS}})
    print("| design | instances now | questions / instance (m, m_w) | rho (N=10, N=20) | deff | "
          + " | ".join(f"K for {round(100 * d)} points" for d in DELTAS) + " |")
    print("|---|---|---|---|---|" + "---|" * len(DELTAS))
    for d in designs:
        print(f"| {d['design']} | {d['instances']} | {d['m']:.1f}, {d['m_w']:.1f} | {d['rho']:.2f} "
              f"({', '.join(f'{r:.2f}' for r in d['rhos'])}) | {d['deff']:.2f} | "
              + " | ".join(str(d["needed"][x]) for x in DELTAS) + " |")
    print("\nK: instances for a two-sided 5%-level test with 80% power, two arms at 50% accuracy (the worst "
          "case), each arm's variance 0.25 deff / (K m), t at K - 1 df; paired arms that agree on most "
          "questions need fewer.")
    return designs


if __name__ == "__main__":
    main()
