"""Evidence depth (issue 17): which distance bucket a question's evidence sits in, and, for a
type with several eligible targets, which targets to ask so each bucket present is probed.

A question's depth is the bucket of the tokens from the end of the history back to its
*earliest* evidence message (``evidence_back``): a ``call_count`` question, which needs
every call, is as deep as its first call. A bucket is present in a case when the history
reaches back that far (its lower bound is below the history's tokens).

    depth_of(1_999) == "<2k"; depth_of(2_000) == "2-8k"
    pick_depths(candidates, DEPTHS, total_tokens)   # one candidate per bucket present
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from bench.store.schema import Question

__all__ = ["DEPTHS", "DEPTH_BOUNDS", "depth_of", "question_depth", "present_depths", "pick_depths",
           "check_depths", "depth_qid"]

# label, lowest tokens back (inclusive), highest (exclusive; None: no bound): the report's distance buckets
DEPTH_BOUNDS: tuple[tuple[str, int, int | None], ...] = (
    ("<2k", 0, 2_000), ("2-8k", 2_000, 8_000), ("8-32k", 8_000, 32_000), (">32k", 32_000, None))
DEPTHS = tuple(label for label, _, _ in DEPTH_BOUNDS)


def check_depths(depths: Iterable[Any] | None) -> list[str] | None:
    """``questions.depths`` as labels in bucket order (None: earliest target only); ValueError
    naming the first unknown label."""
    if depths is None:
        return None
    wanted = [str(d) for d in ([depths] if isinstance(depths, str) else depths)]
    for label in wanted:
        if label not in DEPTHS:
            raise ValueError(f"unknown depth {label!r}: choose from {', '.join(DEPTHS)} (or null)")
    return [label for label in DEPTHS if label in wanted]


def depth_of(tokens: int) -> str:
    for label, low, high in DEPTH_BOUNDS:
        if tokens >= low and (high is None or tokens < high):
            return label
    return DEPTHS[0]  # negative counts do not occur; the nearest bucket


def question_depth(question: Question | dict[str, Any]) -> str | None:
    """The bucket of a question's earliest evidence (None without distances)."""
    back = question.get("evidence_back") if isinstance(question, dict) else question.evidence_back
    return depth_of(int(back["tokens"])) if back else None


def present_depths(total_tokens: int, depths: Sequence[str]) -> list[str]:
    """The wanted buckets the history reaches into (the first always)."""
    bounds = {label: low for label, low, _ in DEPTH_BOUNDS}
    return [label for label in depths if bounds[label] == 0 or total_tokens > bounds[label]]


def _gap(tokens: int, label: str) -> int:
    """Tokens between a depth and a bucket (0 inside it)."""
    _, low, high = next(b for b in DEPTH_BOUNDS if b[0] == label)
    if tokens < low:
        return low - tokens
    if high is not None and tokens >= high:
        return tokens - high + 1
    return 0


def pick_depths(candidates: Sequence[Question], depths: Sequence[str], total_tokens: int
                ) -> tuple[list[Question], list[str]]:
    """For each bucket present, the candidate whose earliest evidence lies nearest it: inside
    it, the earliest in history order; for a bucket no candidate lies in, the nearest one
    outside unless its own bucket already has a question (one question per type and depth).
    Returns (the chosen questions in history order, each with ``depth`` set; the present
    buckets no candidate lies in)."""
    placed: list[tuple[int, int, str]] = []  # (candidate, tokens back to its earliest evidence, its bucket)
    for i, q in enumerate(candidates):
        if q.evidence_back:
            tokens = int(q.evidence_back["tokens"])
            placed.append((i, tokens, depth_of(tokens)))
    chosen: dict[str, int] = {}
    empty: list[str] = []
    for label in present_depths(total_tokens, depths):
        inside = [i for i, _, d in placed if d == label]
        if inside:
            chosen[label] = inside[0]
        else:
            empty.append(label)
    for label in empty:
        if not placed:
            break
        _, index, own = min((_gap(tokens, label), i, d) for i, tokens, d in placed)
        if own not in chosen and index not in chosen.values():
            chosen[own] = index
    picked = sorted(chosen.values())
    for i in picked:
        candidates[i].depth = placed[[p[0] for p in placed].index(i)][2]
    return [candidates[i] for i in picked], empty


def depth_qid(question: Question, case_id: str) -> str:
    """``<case>:<type>@<depth>``: unique per depth (one question per type and bucket)."""
    return f"{case_id}:{question.type}@{question.depth}"
