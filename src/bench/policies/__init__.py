"""History policies (arms): each turns a case's history into the view a model answers from.

    policy = build_policy(cfg, counter)
    view = policy(case)

Arms: ``full`` (the whole history), ``nlatest`` (the N latest messages, spec 2.2) and
``compact`` (the sre-agent compaction with its mechanisms, spec 2.3). ``build_policy``
hands each arm what it declares from the job config: ``compact`` gets ``cfg.prompt``,
``cfg.mechanism`` and the summarizer of ``cfg.summarizer``; ``nlatest`` with
``arm.match=NAME`` gets the policy of arm NAME, composed from ``conf/arm/NAME.yaml`` with
the same prompt, mechanism and summarizer groups as this job.

Importing this package registers the config resolver ``${bench.prompt:FILE}`` that
reads a summary prompt (``conf/prompt/*.yaml`` use it for ``prompt.text``).
"""

from __future__ import annotations

import copy
import inspect
from pathlib import Path
from typing import Any

from hydra.utils import get_class, instantiate
from omegaconf import DictConfig, OmegaConf

from bench.config import ConfigError
from bench.policies.base import Policy, clean_start, make_view, steps, view_problems
from bench.policies.compact import AutoCompact, CompactPolicy, Mechanisms, MicroCompact
from bench.policies.full import FullHistory
from bench.policies.nlatest import NLatest
from bench.policies.summarize import ExtractiveSummarizer, Summarizer, load_prompt
from bench.tokens import TokenCounter

__all__ = [
    "Policy",
    "make_view",
    "view_problems",
    "steps",
    "clean_start",
    "FullHistory",
    "NLatest",
    "CompactPolicy",
    "MicroCompact",
    "AutoCompact",
    "Mechanisms",
    "Summarizer",
    "ExtractiveSummarizer",
    "load_prompt",
    "build_policy",
    "arm_config",
    "CONF_DIR",
]

if not OmegaConf.has_resolver("bench.prompt"):
    OmegaConf.register_new_resolver("bench.prompt", load_prompt)

# The project's config directory (what bench.main composes from).
CONF_DIR = Path(__file__).resolve().parents[3] / "conf"


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
    """The job config with its arm swapped for ``conf/arm/<name>.yaml`` (other groups kept)."""
    path = _conf_dir() / "arm" / f"{name}.yaml"
    if not path.is_file():
        known = sorted(p.stem for p in path.parent.glob("*.yaml"))
        raise ConfigError(f"arm.match={name!r}: no such arm (known: {', '.join(known)})")
    swapped = copy.deepcopy(cfg) if isinstance(cfg, DictConfig) else OmegaConf.create(cfg)
    OmegaConf.set_struct(swapped, False)
    swapped.arm = OmegaConf.load(path)
    return swapped


def _accepts(cfg_arm: Any) -> set[str]:
    target = get_class(cfg_arm._target_)
    return set(inspect.signature(target).parameters)


def build_policy(cfg: Any, counter: TokenCounter) -> Policy:
    """The arm of a composed job config, with what the arm needs from the other groups."""
    accepts = _accepts(cfg.arm)
    extra: dict[str, Any] = {}
    if "mechanism" in accepts and cfg.get("mechanism") is not None:
        extra["mechanism"] = OmegaConf.to_container(cfg.mechanism, resolve=True)
    if "prompt" in accepts and cfg.get("prompt") is not None:
        prompt = cfg.prompt
        extra["prompt"] = prompt.get("text") or load_prompt(prompt.get("file") or prompt.name)
        extra["prompt_name"] = prompt.get("name", "custom")
    if "summarizer" in accepts and cfg.get("summarizer") is not None:
        extra["summarizer"] = instantiate(cfg.summarizer, _convert_="object")
    if "budget_policy" in accepts and cfg.arm.get("match"):
        if cfg.arm.match == cfg.arm.get("name"):
            raise ConfigError(f"arm.match={cfg.arm.match!r} cannot match the arm itself")
        extra["budget_policy"] = build_policy(arm_config(cfg, cfg.arm.match), counter)
    # Objects (summarizer, matched policy) are passed to the partial, not through the
    # config: OmegaConf would turn dataclass instances into configs and copy them.
    factory = instantiate(cfg.arm, _partial_=True, _convert_="object")
    return factory(counter=counter, **extra)
