"""Building a job's components from its config (their fail-fast check: ``bench.components.preflight``).

    answerer = build(cfg.model, "model")       # Hydra instantiate; errors in one clear line
    workers = worker_threads(cfg.model)
"""

from __future__ import annotations

import re
from typing import Any

from hydra.errors import InstantiationException
from hydra.utils import instantiate

from bench.config import ConfigError
from bench.llm import ModelSetupError
from bench.llm.limiter import group_workers

__all__ = ["surfaced", "build", "worker_threads"]


def surfaced(make, *args: Any, groups: Any = None, **kwargs: Any) -> Any:
    """Call ``make``; a ModelSetupError (missing key ...) wrapped by Hydra's instantiate surfaces as itself,
    and a setting the target does not take (``+arm.n=3`` on arm=full) is a ConfigError naming it.

    ``groups``: ``{group name: its config node}`` where such a setting is looked up.
    """
    try:
        return make(*args, **kwargs)
    except (InstantiationException, TypeError) as err:
        cause: BaseException | None = err
        while cause is not None:
            if isinstance(cause, ModelSetupError):
                raise cause from None
            unknown = _unknown_setting(cause, groups or {})
            if unknown:
                raise ConfigError(unknown) from None
            cause = cause.__cause__
        raise


def _unknown_setting(err: BaseException, groups: dict[str, Any]) -> str | None:
    match = re.search(r"unexpected keyword argument '(\w+)'", str(err)) if isinstance(err, TypeError) else None
    if match is None:
        return None
    key = match.group(1)
    for group, node in groups.items():
        if node is not None and key in node:
            option = node.get("name") or str(node.get("_target_", "")).rsplit(".", 1)[-1]
            return (f"{group}.{key}: not a setting of {group}={option} (remove it, or choose the "
                    f"{group} option that takes it)")
    return None


def build(node: Any, group: str) -> Any:
    return surfaced(instantiate, node, _convert_="object", groups={group: node})


def worker_threads(model: Any) -> int:
    """Worker threads: ``model.max_concurrency``, the cap for ``auto``, 1 without a limit (offline)."""
    try:
        return group_workers(model)
    except ValueError as err:
        raise ModelSetupError(str(err)) from None
