"""The judge panel in the report: agreement columns per job and the disagreements to review.

A job judged by ``judge=panel`` has ``metrics.json`` ``panel`` (:func:`bench.scoring.panel.panel_metrics`):
its columns in ``jobs.csv`` are the members' agreement, kappa (two members) and the number of
disagreements; ``report.md`` lists each such job's figures and its disagreements, so a reviewer
reads the answers the judges split on before trusting a difference that rests on them.
"""

from __future__ import annotations

from typing import Any

from bench.study.jobs import Job

__all__ = ["panel_columns", "panel_section"]

SHOWN = 20  # disagreements listed per job in report.md (all of them are in metrics.json)


def panel_columns(metrics: dict[str, Any]) -> dict[str, Any]:
    panel = metrics.get("panel")
    if not panel:
        return {}
    return {"panel_members": " + ".join(panel["members"]), "panel_agreement": panel["agreement"],
            "panel_kappa": panel["kappa"], "panel_disagreements": panel["n_disagreements"]}


def _percent(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}%"


def panel_section(jobs: list[Job]) -> list[str]:
    """``report.md`` lines for the jobs judged by a panel (none without one)."""
    judged = [j for j in jobs if (j.metrics or {}).get("panel")]
    if not judged:
        return []
    lines = ["", "Judge panel (every member graded every answer; the majority is the verdict, a tie goes to "
             "the first member):", ""]
    for job in judged:
        panel = job.metrics["panel"]
        pairs = "; ".join(f"{' vs '.join(p['members'])}: {_percent(p['agreement'])}, kappa "
                          f"{'–' if p['kappa'] is None else format(p['kappa'], '.3f')}" for p in panel["pairs"])
        lines.append(f"- `{job.label}` seed {job.seed}: members agree on {_percent(panel['agreement'])} of "
                     f"{panel['n']} questions ({pairs}); {panel['n_disagreements']} disagreement(s)")
        for row in panel["disagreements"][:SHOWN]:
            verdicts = ", ".join(f"{name} {verdict}" for name, verdict in row["verdicts"].items())
            lines.append(f"  - `{row['qid']}`: {verdicts} -> {row['majority']}")
        if panel["n_disagreements"] > SHOWN:
            lines.append(f"  - ... {panel['n_disagreements'] - SHOWN} more in `{job.path}/metrics.json` (panel)")
    return lines
