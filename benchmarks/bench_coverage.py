"""Coverage and width of bench.stats' 95% intervals on simulated case sets, BEFORE and AFTER.

    uv run python benchmarks/bench_coverage.py [--reps 1000] [--ks 6,10,20,40,80] [--draws 2000]

**The estimand** (docs/uncertainty.md): a figure over the case set's fixed mix of question types,
generalising over instances (runs) like these. Each replication draws K instances of 2-8
questions; a question's type is one of 6, each type with its own accuracy (probit offsets
-0.5..+0.5 around the level's probit, so the types differ by up to ~35 points at 50%). An
instance has a random effect: a question is correct when ``sqrt(rho) u + sqrt(1 - rho) e`` (u the
instance's normal draw, e the question's) falls below its type's threshold, so every question
has exactly its type's accuracy and questions of one instance correlate (latent correlation
rho). The truth of a replication is the figure at its own mix of types: accuracy
``sum_t w_t p_t``; relative to full ``sum_t w_t p_t s_t / sum_t w_t p_t`` (full arm rate p_t, the
arm keeps a full-correct answer at rate s_t = p_t, its own instance effects); paired B - A:
"swap" (B is A changed on discordant questions, discordance D independent of A: truth
``sum_t w_t D (1 - 2 p_t)``, both directions) and "loss" (B loses a correct answer of A at rate
D / p_t: truth -D, every discordant question one way), D = 0.2 (common) or 0.03 (rare), the
discordance with its own instance effects. "null": B an exchangeable copy of A (same instance
effect, own noise): truth 0, the rejection rate is the test's size.

The ORACLE knows the true variance: estimate +- 1.96 x the standard deviation of (estimate -
truth) over the setting's replications; widths are reported as the median of width / the
oracle's width. BEFORE: the previous method (two-way by instance and type, kept behind
``stats.generalize_types=true``); AFTER: the default (one-way by instance, types as strata;
paired: sign flips over instances, exact up to 12 instances, else ``--draws`` patterns with a
fixed seed, joined with the question-level score floor). Targets: coverage >= 93% at K >= 20
and >= 90% at K <= 10 in every setting, median width <= 1.3 x the oracle; coverage above 99% is
over-coverage (a defect). The lowest coverage and the largest width ratio are printed last.
"""

from __future__ import annotations

import argparse
import time
from statistics import NormalDist

import numpy as np

from bench.stats import accuracy_batch, paired_batch, ratio_batch

LEVELS = (0.5, 0.8, 0.95)
RHOS = (0.0, 0.3, 0.6)
KS = (6, 10, 20, 40, 80)
OFFSETS = np.linspace(-0.5, 0.5, 6)  # the types' probit offsets from the level
MAX_SIZE = 8
Z = NormalDist().inv_cdf(0.975)
PAIRED = (("swap", 0.2), ("swap", 0.03), ("loss", 0.2), ("loss", 0.03), ("null", None))


def type_rates(level: float) -> np.ndarray:
    """Each type's accuracy at this level."""
    base = NormalDist().inv_cdf(level)
    return np.array([NormalDist().cdf(base + o) for o in OFFSETS])


def design(rng: np.random.Generator, reps: int, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(mask, instance, type) of reps case sets of k instances with 2-8 questions each."""
    sizes = rng.integers(2, MAX_SIZE + 1, size=(reps, k))
    mask = (np.arange(MAX_SIZE)[None, None, :] < sizes[:, :, None]).reshape(reps, k * MAX_SIZE).astype(float)
    inst = np.broadcast_to(np.repeat(np.arange(k), MAX_SIZE)[None, :], mask.shape).copy()
    types = rng.integers(0, len(OFFSETS), size=mask.shape)
    return mask, inst, types


def correlated(rng: np.random.Generator, rate: np.ndarray, rho: float, k: int, shared: np.ndarray | None = None
               ) -> np.ndarray:
    """0/1 draws, each at its own rate, latent correlation rho within an instance (Gaussian copula;
    ``shared``: the instances' normal effects, else drawn here)."""
    reps, n = rate.shape
    u = rng.standard_normal((reps, k)) if shared is None else shared
    latent = np.sqrt(rho) * np.repeat(u, MAX_SIZE, axis=1) + np.sqrt(1 - rho) * rng.standard_normal((reps, n))
    values, index = np.unique(rate, return_inverse=True)  # a handful of distinct rates
    threshold = np.array([NormalDist().inv_cdf(min(max(p, 1e-12), 1 - 1e-12)) for p in values])[index]
    threshold = threshold.reshape(rate.shape)
    return (latent < threshold).astype(float)


def _mix_mean(values: np.ndarray, mask: np.ndarray) -> np.ndarray:
    return (values * mask).sum(axis=1) / np.maximum(mask.sum(axis=1), 1)


def simulate(stat: str, k: int, level: float, rho: float, model: str | None, disc: float | None, reps: int,
             draws: int, seed: int) -> dict:
    """One setting: (estimate, low, high) of BEFORE and AFTER per replication, and the truths."""
    rng = np.random.default_rng(seed)
    mask, inst, types = design(rng, reps, k)
    rate = type_rates(level)[types]
    u = rng.standard_normal((reps, k))
    y = correlated(rng, rate, rho, k, u)
    p_value = None
    if stat == "accuracy":
        truth = _mix_mean(rate, mask)
        before = accuracy_batch(y, mask, inst, types, generalize_types=True)
        after = accuracy_batch(y, mask, inst, types)
    elif stat == "relative":
        keep = correlated(rng, rate, rho, k)
        truth = _mix_mean(rate * rate, mask) / _mix_mean(rate, mask)
        before = ratio_batch(y * keep, y, mask, inst, types, generalize_types=True)
        after = ratio_batch(y * keep, y, mask, inst, types)
    else:
        if model == "swap":
            flip = correlated(rng, np.full(rate.shape, disc), rho, k)
            b = np.abs(y - flip)
            truth = _mix_mean(disc * (1 - 2 * rate), mask)
        elif model == "loss":
            flip = correlated(rng, disc / rate, rho, k)
            b = y * (1 - flip)
            truth = np.full(reps, -disc)
        else:  # null: an exchangeable copy
            b = correlated(rng, rate, rho, k, u)
            truth = np.zeros(reps)
        before = paired_batch(y, b, mask, inst, types, generalize_types=True)[:3]
        *after, p_value = paired_batch(y, b, mask, inst, types, draws=draws)
    return {"truth": truth, "before": before, "after": tuple(after), "p": p_value}


def summarize(result: dict) -> dict:
    truth = result["truth"]
    est = result["after"][0]
    defined = ~np.isnan(est)
    sd = float(np.std((est - truth)[defined]))
    oracle = 2 * Z * sd
    row = {"oracle_cover": float(np.mean(np.abs(est - truth)[defined] <= Z * sd + 1e-12))}
    for key in ("before", "after"):
        _, lo, hi = result[key]
        ok = ~np.isnan(lo)
        covered = (lo[ok] <= truth[ok] + 1e-9) & (truth[ok] - 1e-9 <= hi[ok])
        width = hi[ok] - lo[ok]
        row[key] = float(covered.mean())
        row[f"{key}_ratio"] = float(np.median(width) / oracle) if oracle > 0 else float("inf")
        row[f"{key}_zero"] = float(np.mean(width < 1e-9))
    if result["p"] is not None:
        row["reject"] = float(np.mean(result["p"][defined] <= 0.05))
    return row


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=1000, help="replications per setting")
    parser.add_argument("--ks", default=",".join(map(str, KS)), help="numbers of instances, comma-separated")
    parser.add_argument("--draws", type=int, default=1000,
                        help="sign patterns drawn beyond 12 instances (the library's default: 10,000)")
    args = parser.parse_args(argv)
    ks = [int(x) for x in args.ks.split(",")]
    settings = [(stat, model, disc, k, p, rho)
                for stat, model, disc in (("accuracy", None, None), ("relative", None, None),
                                          *(("paired", m, d) for m, d in PAIRED))
                for k in ks for p in LEVELS for rho in RHOS]
    started = time.perf_counter()
    print(f"{'statistic':<9} {'model':<11} {'K':>3} {'acc':>5} {'rho':>4} | {'oracle':>6} |"
          f" {'BEFORE cov':>10} {'width/or':>8} | {'AFTER cov':>9} {'width/or':>8} {'zero-w':>6} {'p<=.05':>6}")
    rows = []
    for i, (stat, model, disc, k, p, rho) in enumerate(settings):
        row = summarize(simulate(stat, k, p, rho, model, disc, args.reps, args.draws, seed=2900 + i))
        label = "" if model is None else model + ("" if disc is None else f" {disc}")
        target = 0.93 if k >= 20 else 0.90
        row.update(statistic=stat, model=label, k=k, accuracy=p, rho=rho, target=target)
        rows.append(row)
        flags = ("  < target" if row["after"] < target else "") + ("  > 99%" if row["after"] > 0.99 else "") + (
            "  wide" if row["after_ratio"] > 1.3 else "")
        reject = f"{row['reject']:>6.1%}" if "reject" in row else f"{'':>6}"
        print(f"{stat:<9} {label:<11} {k:>3} {p:>5} {rho:>4} | {row['oracle_cover']:>6.1%} | {row['before']:>10.1%} "
              f"{row['before_ratio']:>8.2f} | {row['after']:>9.1%} {row['after_ratio']:>8.2f} "
              f"{row['after_zero']:>6.1%} {reject}{flags}", flush=True)
    elapsed = time.perf_counter() - started
    print("\nper statistic and K, over accuracies and correlations: coverage lowest-highest, width / oracle median"
          " (largest)")
    print(f"{'statistic':<20} {'K':>3} | {'BEFORE coverage':>15} {'width':>12} | {'AFTER coverage':>15} {'width':>12}")
    for stat in dict.fromkeys((r["statistic"], r["model"]) for r in rows):
        for k in ks:
            group = [r for r in rows if (r["statistic"], r["model"]) == stat and r["k"] == k]
            cells = []
            for key in ("before", "after"):
                cover = [r[key] for r in group]
                ratio = [r[f"{key}_ratio"] for r in group]
                cells.append(f"{min(cover):>7.1%}-{max(cover):>6.1%} {np.median(ratio):>5.2f} ({max(ratio):.2f})")
            print(f"{' '.join(x for x in stat if x):<20} {k:>3} | {cells[0]:>28} | {cells[1]:>28}")
    nulls = [r for r in rows if r["model"] == "null"]
    if nulls:
        print(f"sign-flip test size (null: B an exchangeable copy of A): "
              f"{max(r['reject'] for r in nulls):.1%} at most, {np.mean([r['reject'] for r in nulls]):.1%} on average")
    for label, key in (("BEFORE", "before"), ("AFTER", "after")):
        below = [r for r in rows if r[key] < r["target"]]
        over = [r for r in rows if r[key] > 0.99]
        wide = [r for r in rows if r[f"{key}_ratio"] > 1.3]
        print(f"{label}: {len(below)}/{len(rows)} settings below target, {len(over)} above 99%, "
              f"{len(wide)} wider than 1.3 x the oracle; median width ratio "
              f"{np.median([r[f'{key}_ratio'] for r in rows]):.2f}")
    print(f"{len(rows)} settings x {args.reps} replications in {elapsed:.0f}s")

    def where(r: dict) -> str:
        return (f"{r['statistic']}{' ' + r['model'] if r['model'] else ''}, K={r['k']}, acc={r['accuracy']}, "
                f"rho={r['rho']}")

    for label, key in (("BEFORE", "before"), ("AFTER", "after")):
        worst = min(rows, key=lambda r: r[key])
        widest = max(rows, key=lambda r: r[f"{key}_ratio"])
        print(f"lowest coverage {label}: {worst[key]:.1%} ({where(worst)}); largest width ratio {label}: "
              f"{widest[f'{key}_ratio']:.2f} ({where(widest)})")
    return rows


if __name__ == "__main__":
    main()
