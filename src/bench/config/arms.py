"""An arm from the job config: the policy class its ``_target_`` names, with the context parts it declares.

The one place a config node becomes a policy (``bench.policies`` reads no config: the runner
calls this). A matched arm (``arm.match``) is composed from the same config directory.

    policy = build_policy(cfg, TokenCounter())

It also tells, from the config alone (nothing built, no key read), what stack a job runs: the
answering model, the summarizer (when the arm summarizes) and the judge, by name
(:func:`stack`, the start line and ``run.json`` ``stack``), and refuses a silently mixed one
(:func:`mixed_stack`): a real answering model with an arm whose summaries would come from the
offline extractive stand-in, unless ``summarizer=offline`` was chosen on the command line. An LLM
judge that defaults to the answering model (``judge.name`` not set) is said so, never silent. An arm
whose views come from a provider's server (its config names the ``provider``) with an answering model
that cannot reach it is refused too (:func:`provider_refusal`).
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from hydra.utils import get_class, instantiate
from omegaconf import DictConfig, OmegaConf

from bench.config.checks import CONF_DIR, ConfigError, check_prompt, compose
from bench.core.contracts import check
from bench.policies import Policy, PolicyContext, load_prompt
from bench.policies.policy import check_policy, policy_class_problems
from bench.text.tokens import TokenCounter

__all__ = ["build_policy", "arm_config", "summarizes", "real_model", "stack", "stack_line", "mixed_stack",
           "provider_refusal"]


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
    cls = get_class(cfg.arm._target_)
    label = str(cfg.arm.get("name") or cfg.arm._target_)
    check(cls, None, "arm", label, rules=policy_class_problems)  # before anything is built for it
    uses: frozenset[str] = getattr(cls, "uses", frozenset())
    parts: dict[str, Any] = {}
    if "mechanism" in uses and cfg.get("mechanism") is not None:
        parts["mechanism"] = OmegaConf.to_container(cfg.mechanism, resolve=True)
    if "prompt" in uses and cfg.get("prompt") is not None:
        prompt = cfg.prompt
        check_prompt(prompt)
        parts["prompt"] = prompt.get("text") or load_prompt(prompt.get("file") or prompt.name)
        parts["prompt_name"] = prompt.get("name", "custom")
    if "summarizer" in uses and cfg.get("summarizer") is not None:
        parts["summarizer"] = instantiate(cfg.summarizer, _convert_="object")
    if "model" in uses and cfg.get("model") is not None:  # a provider arm builds its views with the answering model
        parts["model"] = instantiate(cfg.model, _convert_="object")
    if "budget_policy" in uses and cfg.arm.get("match"):
        if cfg.arm.match == cfg.arm.get("name"):
            raise ConfigError(f"arm.match={cfg.arm.match!r} cannot match the arm itself")
        parts["budget_policy"] = build_policy(arm_config(cfg, cfg.arm.match), counter)
    # The context is passed to the partial, not through the config: OmegaConf would turn the
    # objects it holds (summarizer, matched policy) into configs and copy them.
    factory = instantiate(cfg.arm, _partial_=True, _convert_="object")
    return check_policy(factory(context=PolicyContext(counter=counter, **parts)), label)


def _class_of(node: Any) -> Any:
    try:
        return get_class(str(node.get("_target_")))
    except Exception:  # noqa: BLE001 - an unknown target fails where it is built, with its own line
        return None


def summarizes(cfg: Any) -> bool:
    """Whether the job's arm writes summaries (its class uses a summarizer, or says so of this config with
    ``summarizes_with(arm)``: ``arm=inspect`` only with ``strategy=summary``; or it is budget-matched to an
    arm that does: ``arm.match``)."""
    decide = getattr(_class_of(cfg.arm), "summarizes_with", None)
    if callable(decide):
        return bool(decide(cfg.arm))
    uses: frozenset[str] = getattr(_class_of(cfg.arm), "uses", frozenset())
    if "summarizer" in uses:
        return True
    match = cfg.arm.get("match")
    path = _conf_dir() / "arm" / f"{match}.yaml"
    if match and path.is_file():
        matched = OmegaConf.load(path)
        return "summarizer" in getattr(_class_of(matched), "uses", frozenset())
    return False


def real_model(node: Any) -> bool:
    """Whether a model node calls a model: its class says so (``calls_model``), else it names an
    endpoint (``base_url``: an OpenAI-compatible server); the offline reader does neither."""
    declared = getattr(_class_of(node), "calls_model", None)
    if isinstance(declared, bool):
        return declared
    return node is not None and "base_url" in node


def _name(node: Any) -> str:
    """A component's name as the start line shows it: its ``name`` setting, else its class's name."""
    if node is None:
        return "none"
    name = node.get("name") if "name" in node else None
    if name:
        return str(name)
    cls = _class_of(node)
    own = getattr(cls, "name", None)
    return str(own) if isinstance(own, str) else str(node.get("_target_", "?")).rsplit(".", 1)[-1]


def _defaulted(node: Any, key: str) -> bool:
    """The key is still the config file's interpolation (``${oc.select:model.name,...}``): not chosen."""
    try:
        return key in node and OmegaConf.is_interpolation(node, key)
    except Exception:  # noqa: BLE001 - a plain dict (an older run's config): chosen
        return False


def stack(cfg: Any) -> dict[str, Any]:
    """What the job answers, summarizes and judges with, by name (``run.json`` ``stack``)."""
    model, judge = cfg.get("model"), cfg.get("judge")
    summary = summarizes(cfg)
    summarizer = cfg.get("summarizer") if summary else None
    record: dict[str, Any] = {
        "model": _name(model), "real_model": real_model(model),
        "summarizer": _name(summarizer) if summary else None,
        "summarizer_offline": (summary and not bool(getattr(_class_of(summarizer), "calls_model", True))),
        "judge": _name(judge),
    }
    members = judge.get("members") if judge is not None and "members" in judge else None
    llm_judges = [("judge", judge)] if judge is not None and "base_url" in judge else []
    llm_judges += [(f"judge.members.{k}", m) for k, m in (members.items() if members else [])
                   if m is not None and "base_url" in m]
    if members:
        record["judge"] = "panel(" + "+".join(_name(m) for m in members.values()) + ")"
    self_graded = [key for key, j in llm_judges if _defaulted(j, "name") and record["real_model"]
                   and str(j.get("name")) == record["model"]]
    record["judge_is_answering_model"] = bool(self_graded)
    if self_graded:
        record["judge_note"] = (f"{self_graded[0]}.name not set: the answering model {record['model']} grades its "
                                f"own answers (set {self_graded[0]}.name to another model)")
    return record


def stack_line(record: dict[str, Any]) -> str:
    """The start line's part that names the stack: ``model=... summarizer=... judge=...``."""
    if record["summarizer"] is None:
        summarizer = "none"
    else:
        summarizer = record["summarizer"] + (" (offline stand-in)" if record["summarizer_offline"] else "")
    judge = record["judge"]
    if record.get("judge_is_answering_model"):
        judge += f" (= the answering model: {record['judge_note'].split(' not set')[0]} not set)"
    model = record["model"] + ("" if record["real_model"] else " (offline)")
    return f"model={model} summarizer={summarizer} judge={judge}"


def mixed_stack(cfg: Any, overrides: list[str]) -> str | None:
    """One line refusing a silently mixed stack, or None: a real answering model and an arm that
    summarizes with the offline stand-in, when the command line did not choose ``summarizer=offline``."""
    if not real_model(cfg.get("model")) or not summarizes(cfg):
        return None
    summarizer = cfg.get("summarizer")
    if summarizer is None or getattr(_class_of(summarizer), "calls_model", True):
        return None
    chosen = any(o.lstrip("+~").partition("=")[0] == "summarizer" and o.partition("=")[2] == "offline"
                 for o in overrides)
    if chosen:
        return None
    # the summarizer of the answering model's provider, when it has one (conf/summarizer/<provider>.yaml): a
    # model=anthropic job is not told to get an OpenAI key
    provider = model_provider(cfg.model)
    option = provider if provider and (_conf_dir() / "summarizer" / f"{provider}.yaml").is_file() else "openai"
    return (f"summarizer: arm={cfg.arm.get('name')} summarizes, and model={_name(cfg.model)} is a real model, but "
            f"summarizer={_name(summarizer)} is the offline extractive stand-in: set summarizer={option} (a model "
            "writes the summaries) or summarizer=offline to choose the stand-in (its figures are a lower bound)")


def model_provider(node: Any) -> str | None:
    """The provider a model node calls (``provider``; a node with an endpoint and none: openai), None offline."""
    if node is None or not real_model(node):
        return None
    return str(node.get("provider") or "openai") if "base_url" in node or "provider" in node else None


def provider_refusal(cfg: Any) -> str | None:
    """One line refusing an arm whose views come from a provider's server (``arm.provider``) when the
    answering model is not of that provider (or on another of its APIs: ``arm.model_api``), or None."""
    arm = cfg.get("arm")
    provider = arm.get("provider") if arm is not None and "provider" in arm else None
    if not provider:
        return None
    from bench.policies.provider import requirement

    model = cfg.get("model")
    feature = getattr(_class_of(arm), "FEATURE", "context management")
    return requirement(str(arm.get("name")), str(provider), arm.get("model_api"), feature, _name(model),
                       model_provider(model), str(model.get("api") or "chat") if model is not None and "api" in model
                       else None)
