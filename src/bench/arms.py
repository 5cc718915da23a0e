"""An arm from the job config: the policy class its ``_target_`` names, with the context parts it declares.

The one place a config node becomes a policy (``bench.policies`` reads no config: the runner
calls this). A matched arm (``arm.match``) is composed from the same config directory.

    policy = build_policy(cfg, TokenCounter())
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from hydra.utils import get_class, instantiate
from omegaconf import DictConfig, OmegaConf

from bench.config import CONF_DIR, ConfigError, compose
from bench.policies import CONTEXT_PARTS, Policy, PolicyContext, load_prompt
from bench.tokens import TokenCounter

__all__ = ["build_policy", "arm_config"]


def _conf_dir() -> Path:
    """The primary config directory of the running Hydra app, else the project's ``conf/``."""
    try:
        from hydra.core.hydra_config import HydraConfig

        for source in HydraConfig.get().runtime.config_sources:
            if source.provider == "main" and source.schema == "file":
                return Path(source.path)
    except (ValueError, AttributeError):  # not inside a Hydra app (tests, scripts)
        pass
    return CONF_DIR


def arm_config(cfg: Any, name: str) -> DictConfig:
    """The job config with its arm swapped for arm ``name``, composed with Hydra's compose API
    from the same config directory (other groups kept as the job has them)."""
    from hydra.core.global_hydra import GlobalHydra
    from hydra.errors import MissingConfigException

    conf_dir = _conf_dir()
    if not (conf_dir / "arm" / f"{name}.yaml").is_file():
        known = sorted(p.stem for p in (conf_dir / "arm").glob("*.yaml"))
        raise ConfigError(f"arm.match={name!r}: no such arm (known: {', '.join(known)})")
    outer = GlobalHydra.instance().is_initialized()
    hydra_state = GlobalHydra.instance().hydra if outer else None
    try:
        if outer:  # inside a running Hydra app: compose in a fresh instance, then restore the app's
            GlobalHydra.instance().clear()
        arm = compose([f"arm={name}"], config_dir=conf_dir).arm
    except MissingConfigException as err:
        raise ConfigError(f"arm.match={name!r}: {str(err).splitlines()[0]}") from None
    finally:
        if outer and hydra_state is not None:
            GlobalHydra.instance().clear()
            GlobalHydra.instance().initialize(hydra_state)
    swapped = copy.deepcopy(cfg) if isinstance(cfg, DictConfig) else OmegaConf.create(cfg)
    OmegaConf.set_struct(swapped, False)
    swapped.arm = arm
    return swapped


def build_policy(cfg: Any, counter: TokenCounter) -> Policy:
    """The arm of a composed job config, with the parts of its context its class declares it uses."""
    uses: frozenset[str] = getattr(get_class(cfg.arm._target_), "uses", frozenset())
    unknown = set(uses) - CONTEXT_PARTS
    if unknown:
        raise ConfigError(f"{cfg.arm._target_} uses unknown context parts {sorted(unknown)}")
    parts: dict[str, Any] = {}
    if "mechanism" in uses and cfg.get("mechanism") is not None:
        parts["mechanism"] = OmegaConf.to_container(cfg.mechanism, resolve=True)
    if "prompt" in uses and cfg.get("prompt") is not None:
        prompt = cfg.prompt
        parts["prompt"] = prompt.get("text") or load_prompt(prompt.get("file") or prompt.name)
        parts["prompt_name"] = prompt.get("name", "custom")
    if "summarizer" in uses and cfg.get("summarizer") is not None:
        parts["summarizer"] = instantiate(cfg.summarizer, _convert_="object")
    if "budget_policy" in uses and cfg.arm.get("match"):
        if cfg.arm.match == cfg.arm.get("name"):
            raise ConfigError(f"arm.match={cfg.arm.match!r} cannot match the arm itself")
        parts["budget_policy"] = build_policy(arm_config(cfg, cfg.arm.match), counter)
    # The context is passed to the partial, not through the config: OmegaConf would turn the
    # objects it holds (summarizer, matched policy) into configs and copy them.
    factory = instantiate(cfg.arm, _partial_=True, _convert_="object")
    return factory(context=PolicyContext(counter=counter, **parts))
