"""History policies (arms): each turns a case's history into the view a model answers from.

    policy = build_policy(cfg, counter)
    view = policy(case)

Arms: ``full`` (the whole history), ``nlatest`` (the N latest messages, spec 2.2) and
``compact`` (the sre-agent compaction with its mechanisms, spec 2.3). ``build_policy``
hands each arm what it declares from the job config: ``compact`` gets ``cfg.prompt``,
``cfg.mechanism`` and the summarizer of ``cfg.summarizer``; ``nlatest`` with
``arm.match=NAME`` gets the policy of arm NAME, composed (Hydra's compose API) with the
same prompt, mechanism and summarizer groups as this job. Each arrives in one
:class:`PolicyContext`, filled with the parts the policy's class declares in ``uses``.

Importing this package registers the config resolver ``${bench.prompt:FILE}`` that
reads a summary prompt (``conf/prompt/*.yaml`` use it for ``prompt.text``).
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from hydra.utils import get_class, instantiate
from omegaconf import DictConfig, OmegaConf

from bench.config import CONF_DIR, ConfigError, compose
from bench.policies.base import (
    CONTEXT_PARTS,
    Declaration,
    Policy,
    PolicyContext,
    clean_start,
    declaration_of,
    declare,
    make_view,
    steps,
    view_problems,
)
from bench.policies.compact import AutoCompact, CompactPolicy, Mechanisms, MicroCompact
from bench.policies.full import FullHistory
from bench.policies.nlatest import NLatest
from bench.policies.summarize import ExtractiveSummarizer, Summarizer, load_prompt
from bench.tokens import TokenCounter

__all__ = [
    "Policy",
    "PolicyContext",
    "Declaration",
    "declare",
    "declaration_of",
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
    "LLMSummarizer",
    "load_prompt",
    "build_policy",
    "arm_config",
    "CONF_DIR",
]

if not OmegaConf.has_resolver("bench.prompt"):
    OmegaConf.register_new_resolver("bench.prompt", load_prompt)


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
        if outer:
            GlobalHydra.instance().clear()
            GlobalHydra.instance().initialize(hydra_state)
    swapped = copy.deepcopy(cfg) if isinstance(cfg, DictConfig) else OmegaConf.create(cfg)
    OmegaConf.set_struct(swapped, False)
    swapped.arm = arm
    return swapped


def build_policy(cfg: Any, counter: TokenCounter) -> Policy:
    """The arm of a composed job config, with the parts of its context its class declares it uses."""
    uses = getattr(get_class(cfg.arm._target_), "uses", frozenset())
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


def __getattr__(name: str) -> Any:
    if name in ("LLMSummarizer", "SUMMARY_SYSTEM"):  # the model client is imported on first use
        from bench.policies import llm_summarizer

        return getattr(llm_summarizer, name)
    raise AttributeError(f"module 'bench.policies' has no attribute {name!r}")
