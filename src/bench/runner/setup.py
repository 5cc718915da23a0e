"""Building a job's components from its config (their fail-fast check: ``bench.core.components.preflight``),
and what a job needs before it starts, checked once for a whole sweep.

    answerer = build(cfg.model, "model")       # Hydra instantiate; errors in one clear line
    workers = worker_threads(cfg.model)
    check_sweep_prerequisites(args)            # a -m command line: its data and endpoints, once
"""

from __future__ import annotations

import itertools
import json
import math
import re
from collections.abc import Callable
from typing import Any

from hydra.errors import InstantiationException
from hydra.utils import instantiate
from omegaconf import OmegaConf

from bench.answering.answerer import check_answerer
from bench.config.checks import ConfigError, is_sweep, mapping
from bench.config.launchers import BASIC_SWEEPER, JOBLIB_LAUNCHER, LOCAL_LAUNCHERS
from bench.core.errors import BenchError
from bench.llm import ModelSetupError
from bench.llm.limiter import group_workers
from bench.scoring.judge import check_judge

__all__ = ["surfaced", "build", "worker_threads", "check_prerequisites", "check_sweep_prerequisites",
           "BASIC_SWEEPER", "JOBLIB_LAUNCHER"]


def surfaced(make: Callable[..., Any], *args: Any, groups: Any = None, **kwargs: Any) -> Any:
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
    """The part a config group names (``model``: an answerer, ``judge``), checked against its protocol
    (``check_answerer``, ``check_judge``): a missing member is one line now, not an error mid-job."""
    part = surfaced(instantiate, node, _convert_="object", groups={group: node})
    return check_judge(part) if group == "judge" else check_answerer(part)


def worker_threads(model: Any) -> int:
    """Worker threads: ``model.max_concurrency``, the cap for ``auto``, 1 without a limit (offline)."""
    try:
        return group_workers(model)
    except ValueError as err:
        raise ModelSetupError(str(err)) from None


# The group choices and keys that decide what a job needs before it starts (its data file or hub, its
# endpoints and keys). A sweep's other dimensions (seed, prompt, mechanism, arm.n, ...) never change it:
# they are left out when a sweep's prerequisites are checked, so a large sweep costs one check.
PREREQUISITE_GROUPS = ("dataset", "model", "judge", "summarizer", "arm")


def _sweep_variants(args: list[str]) -> tuple[int, list[list[str]]] | None:
    """``(jobs, variants)`` of a ``-m`` sweep run on this machine (the basic sweeper; the basic or joblib
    launcher): the overrides of one job per combination of the values the sweep gives the prerequisite
    groups (:data:`PREREQUISITE_GROUPS`). None when that cannot be told here (another sweeper, a cluster)."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    from bench.config.checks import compose

    parser = OverridesParser.create()
    given = [a for a in args if not a.startswith("-")]
    try:
        parsed = parser.parse_overrides(given)
        fixed = [text for text, o in zip(given, parsed, strict=True) if not o.is_sweep_override()]
        primary = compose(fixed, return_hydra_config=True)
    except Exception:  # noqa: BLE001 - a bad override or config: Hydra reports it
        return None
    if (OmegaConf.select(primary, "hydra.sweeper._target_") != BASIC_SWEEPER
            or OmegaConf.select(primary, "hydra.launcher._target_") not in LOCAL_LAUNCHERS):
        return None
    node = OmegaConf.select(primary, "hydra.sweeper.params")
    params = mapping(node, "hydra.sweeper.params", resolve=False) if node is not None else {}
    dimensions: dict[str, list[str]] = {}
    try:
        for override in [*parser.parse_overrides([f"{k}={v}" for k, v in params.items()]), *parsed]:
            key = override.get_key_element()
            if not override.is_sweep_override():
                dimensions.pop(key, None)  # a fixed value given later replaces the sweep of the key
                continue
            if not override.is_discrete_sweep():
                return None  # range(), interval(): a sweeper's own expansion
            dimensions[key] = [f"{key}={v}" for v in override.sweep_string_iterator()]
    except Exception:  # noqa: BLE001 - a sweep this parser cannot expand: no check
        return None
    relevant = [values for key, values in dimensions.items()
                if key.lstrip("+~").split(".")[0] in PREREQUISITE_GROUPS[:4] or key.lstrip("+~") in PREREQUISITE_GROUPS]
    return math.prod(len(v) for v in dimensions.values()), [[*fixed, *c] for c in itertools.product(*relevant)]


def check_sweep_prerequisites(args: list[str]) -> str | None:
    """What every job of a ``-m`` sweep needs before it starts, checked once before any job, exactly as a
    single job checks it (:func:`check_prerequisites`, its stack: ``bench.config.arms.mixed_stack``, and a
    provider arm's provider: ``provider_refusal``): the one-line reason it cannot run, or None.
    Sweeps whose jobs run elsewhere (a cluster launcher) or that another sweeper expands are left to
    their jobs."""
    from bench.config.arms import mixed_stack, provider_refusal
    from bench.config.checks import compose
    from bench.core import redact

    found = _sweep_variants(args) if is_sweep(args) else None
    if found is None:
        return None
    jobs, variants = found
    seen: set[str] = set()
    for overrides in variants:
        try:
            cfg = compose(overrides)
        except Exception:  # noqa: BLE001 - a job config that does not compose: its job reports it
            continue
        signature = json.dumps({g: OmegaConf.to_container(cfg[g], resolve=False) for g in PREREQUISITE_GROUPS
                                if g in cfg}, sort_keys=True, default=str)
        if signature in seen:
            continue
        seen.add(signature)
        if _needs_a_run(cfg):
            continue  # ${hydra:runtime...} in a value: only the job can resolve it
        try:
            refusal = mixed_stack(cfg, overrides) or provider_refusal(cfg)  # a job would refuse it: once, here
            if refusal:
                raise ConfigError(refusal)
            check_prerequisites(cfg)
        except BenchError as err:
            return f"{redact.scrub(str(err).splitlines()[0])} (checked once for the {jobs} jobs of the sweep: none started)"
    return None


def _needs_a_run(cfg: Any) -> bool:
    """True when a value interpolates what only a running job has (``${hydra:runtime.cwd}``)."""
    try:
        OmegaConf.to_container(cfg, resolve=True)
    except Exception as err:  # noqa: BLE001 - any other problem is the check's to report
        return "HydraConfig was not set" in str(err)
    return False


def check_prerequisites(cfg: Any) -> None:
    """What a job needs before it starts, without starting it: valid settings, its data (the file is
    there, the hub reachable) and, when a part calls a model, that part built and its endpoint and key
    checked (``preflight``). BenchError (one line) when one is missing."""
    from omegaconf.errors import OmegaConfBaseException

    from bench.config.checks import absolute_paths, dataset_source, validate
    from bench.core.failures import innermost

    try:
        validate(cfg)
        absolute_paths(cfg)
        dataset_source(cfg.dataset).check()
        nodes = {g: OmegaConf.to_container(cfg[g], resolve=False) for g in PREREQUISITE_GROUPS if g in cfg}
        if "api_key_env" in json.dumps(nodes, default=str):  # a part calls a model
            from bench.config.arms import build_policy
            from bench.core.components import preflight
            from bench.text.tokens import TokenCounter

            answerer, judge = build(cfg.model, "model"), build(cfg.judge, "judge")
            policy = surfaced(build_policy, cfg, TokenCounter(cfg.tokenizer.encoding),
                              groups={"arm": cfg.arm, "summarizer": cfg.get("summarizer"),
                                      "mechanism": cfg.get("mechanism")})
            preflight(answerer, judge, policy)
    except (InstantiationException, OmegaConfBaseException) as err:
        root = innermost(err)
        if isinstance(root, BenchError):
            raise root from None
        raise ConfigError(str(root).strip() or type(root).__name__) from None
