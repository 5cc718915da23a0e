"""History policies (arms): each turns a case's history into the view a model answers from.

    policy = build_policy(cfg, counter)
    view = policy(case)
"""

from typing import Any

from hydra.utils import instantiate

from bench.policies.base import Policy, make_view, view_problems
from bench.policies.full import FullHistory
from bench.tokens import TokenCounter

__all__ = ["Policy", "make_view", "view_problems", "FullHistory", "build_policy"]


def build_policy(cfg: Any, counter: TokenCounter) -> Policy:
    """The arm of a composed job config (``cfg.arm``, with ``prompt``/``mechanism`` when used)."""
    return instantiate(cfg.arm, counter=counter, _convert_="object")
