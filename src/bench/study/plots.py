"""The study's plots, as inline SVG (matplotlib, imported only when a report is drawn).

    svg = plot_tradeoff(configs)    # accuracy relative to full vs tokens kept, one point per config
    svg = plot_types(configs); svg = plot_n_curve(configs)
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

import pandas as pd

from bench.study.figure_text import interval_scope, is_missing

if TYPE_CHECKING:  # matplotlib is imported when a plot is drawn
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["plot_frontier", "plot_tradeoff", "plot_types", "plot_n_curve", "plot_label", "has_full", "arm_style"]

# ---------------------------------------------------------------- plots


def _svg(fig: Figure) -> str:
    import matplotlib.pyplot as plt

    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", bbox_inches="tight")
    plt.close(fig)
    text = buffer.getvalue()
    return text[text.find("<svg"):]


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({"svg.fonttype": "none", "font.size": 9})
    return plt


# Markers by role (the reference, the baseline); candidate arms take the next of a fixed cycle
# in their declared order, so a new arm gets its own marker without being named here.
_ROLE_MARKERS = {"reference": ("s", "#333333"), "baseline": ("x", "#7f7f7f")}
_CANDIDATE_MARKERS = [("o", "#1f77b4"), ("D", "#d62728"), ("^", "#2ca02c"), ("v", "#9467bd"), ("P", "#ff7f0e"),
                      ("*", "#8c564b"), ("h", "#e377c2"), ("<", "#17becf")]


def _markers(data: pd.DataFrame, groups: pd.Series) -> dict[str, tuple[str, str]]:
    """A marker per plotted group: its role's, else the candidates' cycle in arm order."""
    roles = data["role"] if "role" in data else pd.Series("candidate", index=data.index)
    out: dict[str, tuple[str, str]] = {}
    next_candidate = 0
    for group, role in zip(groups, roles, strict=True):
        if group in out:
            continue
        if role in _ROLE_MARKERS:
            out[group] = _ROLE_MARKERS[role]
        else:
            out[group] = _CANDIDATE_MARKERS[next_candidate % len(_CANDIDATE_MARKERS)]
            next_candidate += 1
    return out


def arm_style(frame: pd.DataFrame) -> dict[str, tuple[str, str]]:
    """A marker and a colour per arm (the reference's and the baseline's by role, the candidates' in
    their declared order): each arm is told apart by both, in print and for colour-blind readers."""
    ordered = frame.sort_values("arm_order", kind="stable") if "arm_order" in frame else frame
    return _markers(ordered, ordered["arm"])


def plot_frontier(frontier: pd.DataFrame, measure: str = "accuracy") -> str | None:
    """The frontier: realized share of history tokens kept (x) against answers kept relative to full
    (y, 95% intervals), one colour and marker per arm, a line through each arm's budgets; hollow
    markers for stand-in summaries (a lower bound); dotted verticals at the budgets' targets."""
    data = frontier.dropna(subset=["realized_share", "answers_kept"]) if not frontier.empty else frontier
    if data.empty:
        return None
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    styles = arm_style(data)
    for share in sorted({float(b) for b in data["budget"].dropna() if float(b) <= 1}):
        ax.axvline(share, color="#bbbbbb", linestyle=":", linewidth=0.8, zorder=0)
    hollow_any = False
    for arm, group in data.groupby("arm", sort=False):
        group = group.sort_values("realized_share")
        marker, colour = styles[arm]
        hollow = bool(group["lower_bound"].any())
        hollow_any = hollow_any or hollow
        xs = group["realized_share"].astype(float).tolist()
        ys = group["answers_kept"].astype(float).tolist()
        lows = [y - float(lo) if not is_missing(lo) else 0.0 for y, lo in zip(ys, group["answers_kept_low"], strict=True)]
        highs = [float(hi) - y if not is_missing(hi) else 0.0 for y, hi in zip(ys, group["answers_kept_high"],
                                                                                strict=True)]
        ax.errorbar(xs, ys, yerr=[[max(v, 0.0) for v in lows], [max(v, 0.0) for v in highs]], fmt=f"{marker}-",
                    color=colour, label=f"{arm} (lower bound)" if hollow else str(arm), capsize=3, markersize=7,
                    linewidth=1.2, markerfacecolor="none" if hollow else colour, markeredgewidth=1.4, alpha=0.9,
                    gid=f"arm-{arm}")
    ax.set_xlabel("realized share of history tokens kept (mean over cases; dotted: the budgets)")
    what = "answers kept" if measure == "accuracy" else measure
    ax.set_ylabel(f"{what}, relative to full")
    ax.set_xlim(-0.02, 1.05)
    ax.set_ylim(-0.03, 1.05)
    ax.grid(alpha=0.3)
    ax.legend(title="arm", loc="lower right", fontsize=8)
    title = f"Quality-size frontier (bars: 95% CI {interval_scope(data.get('interval_method', ()))})"
    if hollow_any:
        title += "\nhollow: summaries by the offline extractive stand-in, a lower bound"
    ax.set_title(title)
    return _svg(fig)


def _reference(configs: pd.DataFrame) -> pd.DataFrame:
    """The reference arm's configs (the whole history)."""
    if "role" in configs:
        return configs[configs["role"] == "reference"]
    return configs[:0]


def _ci_err(row: pd.Series, metric: str) -> tuple[float, float]:
    """Error bar of a config's value from its pooled 95% interval (else its min–max over seeds)."""
    mean, low, high = row.get(f"{metric}.mean"), row.get(f"{metric}.ci_low"), row.get(f"{metric}.ci_high")
    if is_missing(low) or is_missing(high) or is_missing(mean):
        return _err(row, metric)
    return max(mean - low, 0.0), max(high - mean, 0.0)


def _err(row: pd.Series, metric: str) -> tuple[float, float]:
    mean, low, high = (row.get(f"{metric}.{s}") for s in ("mean", "min", "max"))
    if mean is None or low is None or high is None or any(map(is_missing, (mean, low, high))):
        return 0.0, 0.0
    return max(mean - low, 0.0), max(high - mean, 0.0)


def plot_tradeoff(configs: pd.DataFrame) -> str | None:
    """Accuracy relative to full (y) vs share of the history's tokens kept (x), per config."""
    data = configs.dropna(subset=["tokens_kept_ratio.mean"]) if "tokens_kept_ratio.mean" in configs else configs[:0]
    y_metric = "accuracy_relative_to_full"
    if data.empty or f"{y_metric}.mean" not in data or data[f"{y_metric}.mean"].isna().all():
        y_metric = "accuracy"
        if data.empty or data.get(f"{y_metric}.mean") is None:
            return None
    data = data.dropna(subset=[f"{y_metric}.mean"])
    if data.empty:
        return None
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    points: list[tuple[float, float, str]] = []
    groups = data["arm"].where(data["match"].isna(), data["arm"] + " matched to " + data["match"].astype(str))
    markers = _markers(data, groups)
    for arm, group in data.groupby(groups, sort=False):
        marker, colour = markers[arm]
        xs = group["tokens_kept_ratio.mean"].astype(float)
        ys = group[f"{y_metric}.mean"].astype(float)
        xerr = list(zip(*[_err(r, "tokens_kept_ratio") for _, r in group.iterrows()], strict=True))
        yerr = list(zip(*[_ci_err(r, y_metric) for _, r in group.iterrows()], strict=True))
        ax.errorbar(xs, ys, xerr=xerr, yerr=yerr, fmt=marker, color=colour, label=arm, capsize=3,
                    markersize=7, alpha=0.9)
        points.extend((x, y, plot_label(row)) for (_, row), x, y in zip(group.iterrows(), xs, ys, strict=True))
    _annotate(ax, points)
    ax.set_xlabel("tokens kept (share of the full history, mean over cases)")
    ax.set_ylabel("accuracy relative to full" if y_metric != "accuracy" else "accuracy")
    ax.set_xlim(0, 1.05)
    ax.set_ylim(-0.03, 1.05)
    ax.grid(alpha=0.3)
    ax.legend(title="arm", loc="lower right")
    ax.set_title("What each config keeps vs what it still answers\n(y bars: 95% CI "
                 f"{interval_scope(data.get('interval_method', ()))}; x bars: min–max over seeds)")
    return _svg(fig)


def plot_label(row: pd.Series) -> str:
    label = str(row.get("short") or row["config"])
    label = label.split(": ", 1)[-1]
    return label if len(label) <= 40 else label[:37] + "..."


def _annotate(ax: Axes, points: list[tuple[float, float, str]], step: float = 0.035) -> None:
    """Labels right of their points, moved up (with a leader line) until no two overlap."""
    placed: list[tuple[float, float]] = []
    for x, y, text in sorted(points, key=lambda p: (p[1], p[0])):
        lx, ly = x + 0.012, y + 0.012
        while any(abs(px - lx) < 0.16 and abs(py - ly) < step for px, py in placed):
            ly += step
        placed.append((lx, ly))
        moved = ly - y > 0.02
        ax.annotate(text, (x, y), xytext=(lx, ly), textcoords="data", fontsize=7, va="bottom",
                    arrowprops={"arrowstyle": "-", "color": "#999", "lw": 0.5} if moved else None)


def plot_types(configs: pd.DataFrame) -> str | None:
    """Grouped bars: accuracy per question type for each config, min–max whiskers."""
    types = sorted({c.split(".")[1] for c in configs.columns if c.startswith("acc.") and c.endswith(".mean")})
    if configs.empty or not types:
        return None
    plt = _plt()
    n_cfg = len(configs)
    width = 0.8 / max(n_cfg, 1)
    fig, ax = plt.subplots(figsize=(max(7.5, 1.6 * len(types) + 0.25 * n_cfg), 4.5))
    cmap = plt.get_cmap("tab20" if n_cfg > 10 else "tab10")
    for i, (_, row) in enumerate(configs.iterrows()):
        means = [row.get(f"acc.{t}.mean") for t in types]
        heights = [0.0 if is_missing(m) else float(m) for m in means]
        errs = list(zip(*[_err(row, f"acc.{t}") for t in types], strict=True))
        xs = [k + (i - (n_cfg - 1) / 2) * width for k in range(len(types))]
        colour = cmap(i % cmap.N)
        ax.bar(xs, heights, width=width, yerr=errs, capsize=2, color=colour,
               label=plot_label(row), edgecolor="white", linewidth=0.5)
        # a measured 0 is a flat mark in the config's colour; no data at all is "n/a" (no bar)
        for x, mean in zip(xs, means, strict=True):
            if is_missing(mean):
                ax.text(x, 0.01, "n/a", ha="center", va="bottom", fontsize=6, rotation=90, color="#777777",
                        gid="no-data")
            elif float(mean) == 0.0:
                ax.plot([x - width * 0.45, x + width * 0.45], [0.004, 0.004], color=colour, linewidth=3,
                        solid_capstyle="butt", gid="zero-bar")
    ax.set_xticks(range(len(types)))
    ax.set_xticklabels(types)
    ax.set_ylabel("accuracy")
    ax.set_ylim(0, 1.08)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=7, ncol=2 if n_cfg > 6 else 1, bbox_to_anchor=(1.01, 1), loc="upper left")
    ax.set_title("Accuracy per question type (mean over seeds, whiskers: min–max; flat mark: 0, n/a: no data)")
    return _svg(fig)


def plot_n_curve(configs: pd.DataFrame) -> str | None:
    """The N-latest curve: accuracy and accuracy relative to full against N."""
    data = configs[configs["n"].notna()]  # arms swept over a message count N
    if "match" in data:
        data = data[data["match"].isna()]
    if len(data) < 2:
        return None
    data = data.assign(_n=pd.to_numeric(data["n"], errors="coerce").astype(float)).sort_values("_n")
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for metric, colour, label in (("accuracy", "#1f77b4", "accuracy"),
                                  ("accuracy_relative_to_full", "#d62728", "relative to full"),
                                  ("evidence_visible_rate", "#7f7f7f", "evidence visible")):
        if f"{metric}.mean" not in data or data[f"{metric}.mean"].isna().all():
            continue
        ax.plot(data["_n"], data[f"{metric}.mean"].astype(float), marker="o", color=colour, label=label,
                linestyle="--" if metric == "evidence_visible_rate" else "-")
        ax.fill_between(data["_n"], data[f"{metric}.min"].astype(float), data[f"{metric}.max"].astype(float),
                        color=colour, alpha=0.15)
    full = _reference(configs)
    if has_full(configs):
        ax.axhline(float(full.iloc[0]["accuracy.mean"]), color="#333333", linestyle=":", label="full arm accuracy")
    ax.set_xscale("log", base=2)
    ax.set_xticks(data["_n"].tolist())
    ax.set_xticklabels([str(int(n)) for n in data["_n"]])
    ax.set_xlabel("N (latest messages kept)")
    ax.set_ylim(-0.03, 1.05)
    ax.grid(alpha=0.3)
    ax.legend()
    ax.set_title("N latest: accuracy against N (band: min–max over seeds)")
    return _svg(fig)


def has_full(configs: pd.DataFrame) -> bool:
    """A full-arm config with a measured accuracy is in the report (only then is it drawn and named)."""
    if configs.empty or "arm" not in configs:
        return False
    full = _reference(configs)
    return not full.empty and "accuracy.mean" in full and not is_missing(full.iloc[0].get("accuracy.mean"))
