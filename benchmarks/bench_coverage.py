"""Coverage of the 95% intervals of bench.stats on simulated case sets, BEFORE and AFTER.

    uv run python benchmarks/bench_coverage.py [--reps 1000] [--ks 10,20,40,80] [--resamples 200]

Each replication draws K instances (clusters) of 2-8 questions; each question has one of 8
templates. Accuracy p in {0.5, 0.8, 0.95}; within-case correlation rho in {0, 0.3, 0.6} (a
question reuses its instance's draw with probability sqrt(rho)); "recurring" templates make a
template's accuracy vary (Beta with mean p, concentration 10; the truth is the population mean,
over templates not seen). Three statistics: accuracy; relative to full (arm-and-full correct
over full correct, truth s = p, both arms random); paired difference B - A (B = A flipped on
discordant questions, discordance rate 0.2 or rare 0.03, truth r(1 - 2p)).

BEFORE: the previous method (percentile bootstrap over instance clusters, seeded, so one set of
resample weights for every replication). AFTER: bench.stats (score interval at the two-way
design-effect-adjusted effective n). Target: >= 93% with K >= 20, >= 90% at K = 10. The lowest
coverage is printed last.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from bench.stats import paired_batch, proportion_batch, ratio_batch

LEVELS = (0.5, 0.8, 0.95)
RHOS = (0.0, 0.3, 0.6)
TEMPLATES = 8
KAPPA = 10.0  # concentration of a template's accuracy around the mean (recurring templates)
MAX_SIZE = 8


def _design(rng: np.random.Generator, reps: int, k: int):
    sizes = rng.integers(2, MAX_SIZE + 1, size=(reps, k))
    mask = (np.arange(MAX_SIZE)[None, None, :] < sizes[:, :, None]).reshape(reps, k * MAX_SIZE).astype(float)
    inst = np.broadcast_to(np.repeat(np.arange(k), MAX_SIZE)[None, :], mask.shape)
    tmpl = rng.integers(0, TEMPLATES, size=mask.shape)
    return mask, inst, tmpl


def _rate(rng, reps, mean, recurring, tmpl):
    """Per question: its template's rate (mean, or Beta around it over a template population)."""
    if not recurring:
        return np.full(tmpl.shape, mean)
    per = rng.beta(mean * KAPPA, (1 - mean) * KAPPA, size=(reps, TEMPLATES))
    return np.take_along_axis(per, tmpl, axis=1)


def _bernoulli(rng, rate, rho, k):
    """0/1 draws at ``rate``, correlated rho within an instance (shared uniform w.p. sqrt(rho))."""
    reps, n = rate.shape
    shared = np.repeat(rng.random((reps, k)), MAX_SIZE, axis=1)
    own = rng.random((reps, n))
    use = rng.random((reps, n)) < np.sqrt(rho)
    return (np.where(use, shared, own) < rate).astype(float)


def _bootstrap(parts: list[np.ndarray], mask, k, stat, weights):
    """The previous method: percentile interval of stat(cluster sums) over cluster resamples."""
    reps = mask.shape[0]
    sums = np.stack([(p * mask).reshape(reps, k, MAX_SIZE).sum(axis=2) for p in parts], axis=2)
    resampled = np.einsum("bk,rkw->rbw", weights, sums)
    with np.errstate(invalid="ignore", divide="ignore"):
        values = stat(resampled)
    lo = np.nanpercentile(values, 2.5, axis=1, method="inverted_cdf")
    hi = np.nanpercentile(values, 97.5, axis=1, method="inverted_cdf")
    return lo, hi


def _simulate(stat: str, k: int, p: float, rho: float, recurring: bool, disc: float | None,
              reps: int, resamples: int, seed: int):
    rng = np.random.default_rng(seed)
    mask, inst, tmpl = _design(rng, reps, k)
    weights = np.random.default_rng(0).multinomial(k, np.full(k, 1 / k), size=resamples).astype(float)
    y = _bernoulli(rng, _rate(rng, reps, p, recurring, tmpl), rho, k)
    if stat == "accuracy":
        truth = p
        before = _bootstrap([y, np.ones_like(y)], mask, k, lambda s: s[..., 0] / s[..., 1], weights)
        after = proportion_batch(y, mask, inst, tmpl)[1:]
    elif stat == "relative":
        truth = p
        keep = _bernoulli(rng, _rate(rng, reps, p, recurring, tmpl), rho, k)
        num = y * keep
        before = _bootstrap([num, y], mask, k, lambda s: s[..., 0] / s[..., 1], weights)
        after = ratio_batch(num, y, mask, inst, tmpl)[1:]
    else:
        truth = disc * (1 - 2 * p)
        flip = _bernoulli(rng, _rate(rng, reps, disc, recurring, tmpl), rho, k)
        b = np.abs(y - flip)
        before = _bootstrap([y, b, np.ones_like(y)], mask, k, lambda s: (s[..., 1] - s[..., 0]) / s[..., 2],
                            weights)
        after = paired_batch(y, b, mask, inst, tmpl)[1:]
    out = []
    for lo, hi in (before, after):
        defined = ~np.isnan(lo)
        covered = defined & (lo <= truth + 1e-9) & (truth - 1e-9 <= hi)
        zero = defined & (hi - lo < 1e-9)
        out.append((covered.mean(), zero.mean(), float(np.nanmean(hi - lo))))
    return out


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=1000, help="replications per setting")
    parser.add_argument("--ks", default="10,20,40,80", help="numbers of instances (clusters), comma-separated")
    parser.add_argument("--resamples", type=int, default=200, help="bootstrap resamples of the BEFORE method")
    args = parser.parse_args(argv)
    ks = [int(x) for x in args.ks.split(",")]
    settings = [(stat, k, p, rho, rec, disc)
                for stat, discs in (("accuracy", (None,)), ("relative", (None,)), ("paired", (0.2, 0.03)))
                for disc in discs for rec in (False, True) for k in ks for p in LEVELS for rho in RHOS]
    started = time.perf_counter()
    print(f"{'statistic':<9} {'K':>3} {'acc':>5} {'rho':>4} {'templates':<9} {'discord':>7}"
          f" | {'BEFORE cov':>10} {'zero-w':>6} {'width':>5} | {'AFTER cov':>9} {'zero-w':>6} {'width':>5}")
    rows = []
    for i, (stat, k, p, rho, rec, disc) in enumerate(settings):
        (cb, zb, wb), (ca, za, wa) = _simulate(stat, k, p, rho, rec, disc, args.reps, args.resamples, seed=1000 + i)
        target = 0.93 if k >= 20 else 0.90
        rows.append({"statistic": stat, "k": k, "accuracy": p, "rho": rho, "recurring": rec, "discordance": disc,
                     "before": cb, "before_zero": zb, "before_width": wb, "after": ca, "after_zero": za,
                     "after_width": wa, "target": target})
        flag = "  < target" if ca < target else ""
        print(f"{stat:<9} {k:>3} {p:>5} {rho:>4} {'recurring' if rec else 'fixed':<9} "
              f"{'' if disc is None else disc:>7} | {cb:>10.1%} {zb:>6.1%} {wb:>5.3f} | {ca:>9.1%} {za:>6.1%} {wa:>5.3f}{flag}")
    elapsed = time.perf_counter() - started
    for label, key in (("BEFORE", "before"), ("AFTER", "after")):
        below = [r for r in rows if r[key] < r["target"]]
        zero = float(np.mean([r[f"{key}_zero"] for r in rows]))
        worst_zero = max(r[f"{key}_zero"] for r in rows)
        width = float(np.mean([r[f"{key}_width"] for r in rows]))
        print(f"{label}: {len(below)}/{len(rows)} settings below target; zero-width share {zero:.1%} "
              f"(worst setting {worst_zero:.1%}); mean width {width:.3f}")
    print(f"{len(rows)} settings x {args.reps} replications in {elapsed:.0f}s")
    for label, key in (("BEFORE", "before"), ("AFTER", "after")):
        worst = min(rows, key=lambda r: r[key])
        print(f"lowest coverage {label}: {worst[key]:.1%} ({worst['statistic']}, K={worst['k']}, "
              f"acc={worst['accuracy']}, rho={worst['rho']}, "
              f"{'recurring' if worst['recurring'] else 'fixed'} templates"
              + (f", discordance {worst['discordance']}" if worst["discordance"] is not None else "") + ")")
    return rows


if __name__ == "__main__":
    main()
