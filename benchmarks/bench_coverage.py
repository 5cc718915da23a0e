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
import math
import time
from functools import lru_cache
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
# a check, not a tuning target: discordance between rare and common, where a rule fitted to
# 0.03 and 0.2 could fall short; counted apart from the 315 settings
CHECK = (("swap", 0.08), ("loss", 0.08))
ACHIEVABLE_KS = (6, 10, 20)  # the achievable width is computed where it can bind (small case sets)
SHARE_ACHIEVABLE_KS = (6, 10)  # shares: where their width target is missed (6 instances at 95%)


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


@lru_cache(maxsize=1024)
def _log_choose(n: int) -> np.ndarray:
    """log C(n, x) for x = 0..n."""
    return np.array([math.lgamma(n + 1) - math.lgamma(x + 1) - math.lgamma(n - x + 1) for x in range(n + 1)])


def _pratt_side(n: int, rate: float, up: bool, alpha: float = 0.05, grid: int = 300) -> float:
    """Pratt (1961): the expected length, on one side of the true ``rate`` of a binomial count of
    n, of the shortest any level-(1 - alpha) confidence set can have there: for every rate' on
    that side, the most powerful (randomized, exact size alpha) test of rate' against ``rate``
    accepts rate' with some probability under ``rate``; a valid set must accept rate' at least
    that often, and its expected length is the integral of those probabilities."""
    xs = np.arange(n + 1)
    log_choose = _log_choose(n)
    reach = 9 * math.sqrt(max(rate * (1 - rate), 1e-4) / n) + 12 / n
    grid_rates = np.linspace(rate, min(1.0, rate + reach), grid) if up else np.linspace(max(0.0, rate - reach), rate, grid)
    if grid_rates[-1] <= grid_rates[0]:
        return 0.0

    def pmf(p: np.ndarray) -> np.ndarray:
        p = np.clip(p, 1e-300, 1 - 1e-15)
        return np.exp(log_choose[None, :] + np.log(p)[:, None] * xs + np.log1p(-p)[:, None] * (n - xs))

    order = xs if up else xs[::-1]  # a rate above the truth is rejected on small counts first
    f, f0 = pmf(grid_rates)[:, order], pmf(np.array([rate]))[0][order]
    cum = np.cumsum(f, axis=1)
    whole = (cum <= alpha).sum(axis=1)  # counts rejected outright
    before = np.where(whole > 0, np.take_along_axis(cum, np.maximum(whole - 1, 0)[:, None], 1)[:, 0], 0.0)
    edge = np.minimum(whole, n)
    f_edge = np.take_along_axis(f, edge[:, None], 1)[:, 0]
    randomized = np.where(f_edge > 0, np.clip((alpha - before) / np.where(f_edge > 0, f_edge, 1), 0, 1), 0.0)
    cum0 = np.cumsum(f0)
    rejected = np.where(whole > 0, cum0[np.maximum(whole - 1, 0)], 0.0) + randomized * f0[edge]
    accepted = 1 - rejected
    return float(((accepted[1:] + accepted[:-1]) / 2 * np.diff(grid_rates)).sum())


@lru_cache(maxsize=256)
def achievable_width(model: str, disc: float | None, k: int, level: float, draws: int = 24) -> float:
    """The smallest expected width any 95% interval of B - A can have in this setting while
    valid at every pair of discordance rates (B only: beta, A only: gamma; d = beta - gamma),
    questions independent (rho = 0, the most informative case): Pratt's bound, per side the
    larger of the two one-rate families through the truth (a valid procedure is valid in each),
    averaged over the design's numbers of questions. A floor, not a method: reaching it takes a
    procedure tuned to these very rates."""
    rates = type_rates(level)
    if model == "swap":
        beta, gamma = float(np.mean(disc * (1 - rates))), float(np.mean(disc * rates))
    elif model == "loss":
        beta, gamma = 0.0, float(disc)
    else:  # null: B an independent copy at rho = 0
        beta = gamma = float(np.mean(rates * (1 - rates)))
    sizes = np.random.default_rng(29).integers(2, MAX_SIZE + 1, size=(draws, k)).sum(axis=1)
    widths = []
    for n in sizes.tolist():
        up = max(_pratt_side(n, beta, True), _pratt_side(n, gamma, False))
        down = max(_pratt_side(n, gamma, True), _pratt_side(n, beta, False))
        widths.append(up + down)
    return float(np.mean(widths))


@lru_cache(maxsize=256)
def achievable_share_width(stat: str, k: int, level: float, draws: int = 24) -> float:
    """The same floor for a share: Pratt's bound for a binomial share at the setting's rate,
    questions independent (rho = 0). Accuracy: the n questions at the types' mean accuracy;
    relative to full: the full-correct questions (n x that accuracy, rounded) at the kept rate
    (sum p_t^2 / sum p_t). Types as one rate: strata only narrow the oracle a little (the
    floor's ratio to the oracle moves by about 0.02 at these rates)."""
    rates = type_rates(level)
    mean = float(np.mean(rates))
    rate = mean if stat == "accuracy" else float(np.mean(rates**2) / mean)
    sizes = np.random.default_rng(29).integers(2, MAX_SIZE + 1, size=(draws, k)).sum(axis=1)
    counts = sizes if stat == "accuracy" else np.maximum(np.rint(sizes * mean), 1).astype(int)
    return float(np.mean([_pratt_side(n, rate, True) + _pratt_side(n, rate, False) for n in counts.tolist()]))


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
    row = {"oracle_cover": float(np.mean(np.abs(est - truth)[defined] <= Z * sd + 1e-12)), "oracle": oracle}
    for key in ("before", "after"):
        _, lo, hi = result[key]
        ok = ~np.isnan(lo)
        covered = (lo[ok] <= truth[ok] + 1e-9) & (truth[ok] - 1e-9 <= hi[ok])
        width = hi[ok] - lo[ok]
        row[key] = float(covered.mean())
        row[f"{key}_ratio"] = float(np.median(width) / oracle) if oracle > 0 else float("inf")
        row[f"{key}_mean_ratio"] = float(np.mean(width) / oracle) if oracle > 0 else float("inf")
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
    main_count = len(settings)  # the check settings come after, so the main ones keep their seeds
    settings += [("paired", m, d, k, p, rho) for m, d in CHECK for k in ks for p in LEVELS for rho in RHOS]
    started = time.perf_counter()
    print(f"{'statistic':<9} {'model':<11} {'K':>3} {'acc':>5} {'rho':>4} | {'oracle':>6} |"
          f" {'BEFORE cov':>10} {'width/or':>8} | {'AFTER cov':>9} {'width/or':>8} {'zero-w':>6} {'p<=.05':>6}"
          f" | {'achv/or':>7}")
    rows = []
    for i, (stat, model, disc, k, p, rho) in enumerate(settings):
        row = summarize(simulate(stat, k, p, rho, model, disc, args.reps, args.draws, seed=2900 + i))
        label = "" if model is None else model + ("" if disc is None else f" {disc}")
        target = 0.93 if k >= 20 else 0.90
        row.update(statistic=stat, model=label, k=k, accuracy=p, rho=rho, target=target, check=i >= main_count)
        if stat == "paired" and k in ACHIEVABLE_KS and model is not None and row["oracle"] > 0:
            row["achievable"] = achievable_width(model, disc, k, p) / row["oracle"]
        elif stat != "paired" and k in SHARE_ACHIEVABLE_KS and row["oracle"] > 0:
            row["achievable"] = achievable_share_width(stat, k, p) / row["oracle"]
        rows.append(row)
        flags = ("  < target" if row["after"] < target else "") + ("  > 99%" if row["after"] > 0.99 else "") + (
            "  wide" if row["after_ratio"] > 1.3 else "") + ("  (check)" if row["check"] else "")
        reject = f"{row['reject']:>6.1%}" if "reject" in row else f"{'':>6}"
        achievable = f"{row['achievable']:>7.2f}" if "achievable" in row else f"{'':>7}"
        print(f"{stat:<9} {label:<11} {k:>3} {p:>5} {rho:>4} | {row['oracle_cover']:>6.1%} | {row['before']:>10.1%} "
              f"{row['before_ratio']:>8.2f} | {row['after']:>9.1%} {row['after_ratio']:>8.2f} "
              f"{row['after_zero']:>6.1%} {reject} | {achievable}{flags}", flush=True)
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
    bound = [r for r in rows if "achievable" in r and r["rho"] == 0 and not r["check"]]
    if bound:
        print("achievable / oracle (achv/or): the smallest expected width any interval valid at every pair of "
              "discordance rates (shares: every rate) can have, questions independent (Pratt's bound; a floor, "
              "rho = 0 rows); AFTER mean width / oracle beside it:")
        for stat in dict.fromkeys((r["statistic"], r["model"]) for r in bound):
            cells = []
            for k in ACHIEVABLE_KS:
                group = [r for r in bound if (r["statistic"], r["model"]) == stat and r["k"] == k]
                if group:
                    cells.append(f"K={k}: {min(r['achievable'] for r in group):.2f}-{max(r['achievable'] for r in group):.2f}"
                                 f" (AFTER {min(r['after_mean_ratio'] for r in group):.2f}-"
                                 f"{max(r['after_mean_ratio'] for r in group):.2f})")
            print(f"  {' '.join(x for x in stat if x):<17} " + "; ".join(cells))
    checks = [r for r in rows if r["check"]]
    if checks:
        print(f"check settings (discordance {', '.join(str(d) for _, d in CHECK)}, not a tuning target): "
              f"{sum(r['after'] < r['target'] for r in checks)}/{len(checks)} below target, "
              f"{sum(r['after'] > 0.99 for r in checks)} above 99%, {sum(r['after_ratio'] > 1.3 for r in checks)} wider "
              f"than 1.3 x the oracle; coverage {min(r['after'] for r in checks):.1%}-{max(r['after'] for r in checks):.1%}")
    rows_all, rows = rows, [r for r in rows if not r["check"]]
    for label, key in (("BEFORE", "before"), ("AFTER", "after")):
        below = [r for r in rows if r[key] < r["target"]]
        over = [r for r in rows if r[key] > 0.99]
        wide = [r for r in rows if r[f"{key}_ratio"] > 1.3]
        print(f"{label}: {len(below)}/{len(rows)} settings below target, {len(over)} above 99%, "
              f"{len(wide)} wider than 1.3 x the oracle; median width ratio "
              f"{np.median([r[f'{key}_ratio'] for r in rows]):.2f}")
    print(f"{len(rows)} settings (+ {len(rows_all) - len(rows)} check settings) x {args.reps} replications in {elapsed:.0f}s")

    def where(r: dict) -> str:
        return (f"{r['statistic']}{' ' + r['model'] if r['model'] else ''}, K={r['k']}, acc={r['accuracy']}, "
                f"rho={r['rho']}")

    for label, key in (("BEFORE", "before"), ("AFTER", "after")):
        worst = min(rows, key=lambda r: r[key])
        widest = max(rows, key=lambda r: r[f"{key}_ratio"])
        print(f"lowest coverage {label}: {worst[key]:.1%} ({where(worst)}); largest width ratio {label}: "
              f"{widest[f'{key}_ratio']:.2f} ({where(widest)})")
    return rows_all


if __name__ == "__main__":
    main()
