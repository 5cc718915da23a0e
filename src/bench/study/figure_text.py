"""A figure as the report writes it: numbers, shares, mean [min–max] ranges, intervals and paired
differences in points, budgets, the detectable difference, and the configs' short labels (one text for
report.md, report.html, bench.compare and bench.rescore alike).

    fmt(1483.3)                      # "1,483"
    interval_text(0.61, 0.79)        # "61.0–79.0%"
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from bench.stats import METHOD_TYPES

__all__ = ["fmt", "value_range", "is_missing", "pct_text", "budget_text", "interval_text", "difference_interval_text",
           "detectable_text", "interval_scope", "is_lower_bound", "short_labels"]


def is_missing(value: Any) -> bool:
    """None or NaN: a value a job did not give (a missing cell of a frame)."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def fmt(value: Any, pct: bool = False) -> str:
    """A number as a cell: thousands separated, three significant digits below 100, ``–`` when missing."""
    if is_missing(value):
        return "–"
    if pct:
        return f"{100 * value:.1f}%"
    if isinstance(value, float):
        if value == int(value):
            return f"{int(value):,}"
        return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"  # 1,483, not 1,483.3
    return str(value)


def value_range(row: pd.Series | dict, metric: str, pct: bool = False) -> str:
    """A config's metric over its seeds: ``mean [min–max]`` (the mean alone when they agree)."""
    mean, low, high = (row.get(f"{metric}.{s}") for s in ("mean", "min", "max"))
    if is_missing(mean):
        return "–"
    text = fmt(mean, pct)
    if low is not None and high is not None and low != high:
        text += f" [{fmt(low, pct)}–{fmt(high, pct)}]"
    return text


def pct_text(value: Any) -> str:
    """A share in percent with one decimal (``–`` when there is none)."""
    return "–" if is_missing(value) else f"{100 * float(value):.1f}%"


def budget_text(value: Any) -> str:
    """``arm.budget`` as the report shows it: ``10%`` (of each case's history tokens) or ``4,000 tokens``."""
    if is_missing(value):
        return "–"
    value = float(value)
    return f"{100 * value:g}%" if value <= 1 else f"{int(value):,} tokens"


def interval_text(low: Any, high: Any, method: Any = None) -> str:
    """A 95% interval of a share, in percent (``–`` when there is none; ``‡``: two-way, types random)."""
    if is_missing(low) or is_missing(high):
        return "–"
    return f"{100 * float(low):.1f}–{100 * float(high):.1f}%" + _two_way_mark(method)


def difference_interval_text(interval: Any, p_value: Any, method: Any = None) -> str:
    """The 95% interval of a paired difference in points, with the sign-flip test's p-value."""
    if not interval or is_missing(interval[0]) or is_missing(interval[1]):
        return "–"
    low, high = (100 * float(x) for x in interval)
    p = "" if is_missing(p_value) else f" (p {'< 0.001' if float(p_value) < 0.001 else f'= {float(p_value):.3g}'})"
    return f"{low:+.1f} to {high:+.1f} pp{p}{_two_way_mark(method)}"


def detectable_text(value: Any, instances: Any) -> str:
    """The detectable difference in points; none up to 100 points: "not detectable with N instances"."""
    if not is_missing(value):
        return f"±{100 * float(value):.1f} pp"
    if is_missing(instances) or not int(instances):
        return "–"
    return f"not detectable with {int(instances)} instance{'s' if int(instances) != 1 else ''}"


def _two_way_mark(method: Any) -> str:
    return " ‡" if method == METHOD_TYPES else ""


def interval_scope(methods: Any) -> str:
    """What the intervals drawn from ``methods`` (each a row's interval method) are over, for a plot's
    title: "over instances", or with the two-way method on any of them its mark and option."""
    if any(method == METHOD_TYPES for method in methods):
        return "over instances and question types ‡ (stats.generalize_types=true)"
    return "over instances"


def is_lower_bound(row: pd.Series | dict) -> bool:
    """A config whose views hold the extractive stand-in's summaries (metrics "lower_bound")."""
    value = row.get("lower_bound")
    return not is_missing(value) and bool(value)


def short_labels(configs: pd.DataFrame) -> list[str]:
    """Config labels without the overrides every config shares, keys shortened (arm.n=10 -> n=10)."""
    parts = [str(c).split(": ", 1)[-1].split(",") for c in configs["config"]]
    common = set.intersection(*map(set, parts)) if len(parts) > 1 else set()
    out = []
    for items, arm in zip(parts, configs["arm"], strict=True):
        kept = [p for p in items if p not in common]
        kept = [f"{k.rsplit('.', 1)[-1]}={v}" if "=" in p else p
                for p in kept for k, _, v in [p.partition("=")]]
        out.append(",".join(kept) or str(arm))
    return out
