"""Config validation before any work: wrong types and unknown values fail with one clear line.

Hydra already rejects unknown groups, options and keys at compose time. This module
checks value types of the composed config against typed schemas (OmegaConf structured
configs) and the typed fields of the instantiated dataclasses (policies, models).

    validate(cfg)              # raises ConfigError("dataset.limit: Value 'abc' ...")
    check_types(policy, "arm")
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from omegaconf import OmegaConf
from omegaconf.errors import ValidationError

from bench.core.contracts import check
from bench.core.errors import ConfigError
from bench.core.typecheck import check_types
from bench.prompts import load_prompt, prompt_problems
from bench.sources import KEY_HINTS, Source, as_source, source_classes

__all__ = ["ConfigError", "validate", "check_prompt", "check_types", "CONF_DIR", "compose", "PATH_KEYS", "absolute_paths",
           "quote_override", "plain", "mapping", "flat_keys", "dataset_source", "generalize_types"]

MAX_JOB_NAME = 200  # bytes of a sweep job's directory name (many overrides, long URLs: the rest is a hash)


def _job_name(override_dirname: str, seed: Any) -> str:
    """Readable sweep subdirectory: the overrides, seed last, no path separators, no URL's userinfo or
    query (an experiment whose ``exclude_keys`` lacks ``cache.url`` or a ``base_url`` with ``?key=``)."""
    from bench.core.redact import mask_urls

    parts = [p for p in override_dirname.split(",") if p] if override_dirname else []
    name = re.sub(r"[/\\\s]+", "_", mask_urls(",".join([*parts, f"seed={seed}"])))
    if len(name.encode("utf-8")) > MAX_JOB_NAME:  # a filesystem takes 255 bytes a name: cut, kept unique by a hash
        tail = f"~{hashlib.sha256(name.encode('utf-8')).hexdigest()[:10]},seed={seed}"
        head = name.encode("utf-8")[:MAX_JOB_NAME - len(tail.encode("utf-8"))].decode("utf-8", errors="ignore")
        name = head + tail
    return name


def _run_dir(resume: str | None, *rest: str | None) -> str:
    """A resumed job writes into its own directory, one given ``output_dir`` into that (``rest``: the
    output_dir, then Hydra's default, made unique by :class:`bench.cli.callbacks.FreshDirCallback`)."""
    return resume or next((r for r in rest if r), "")


# every resolver the config files use, registered on import: a launcher's worker process
# (joblib, Ray) resolves the job's config before the task function runs
for _name, _resolver in (("bench.job_name", _job_name), ("bench.run_dir", _run_dir), ("bench.prompt", load_prompt)):
    if not OmegaConf.has_resolver(_name):
        OmegaConf.register_new_resolver(_name, _resolver)


# The project's config directory: what bench.main composes from (the one definition).
CONF_DIR = Path(__file__).resolve().parents[3] / "conf"


def compose(overrides: list[str] | tuple[str, ...] = (), config_dir: Path | str | None = None,
            return_hydra_config: bool = False) -> Any:
    """The job config for ``overrides`` through Hydra's compose API (as ``bench.main`` would build it,
    without a Hydra run): for the command-line tools and for tests (``return_hydra_config``: with
    the ``hydra`` node, e.g. an experiment's ``hydra.sweeper.params``)."""
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir

    with initialize_config_dir(config_dir=str(config_dir or CONF_DIR), version_base="1.3"):
        return hydra_compose("config", overrides=list(overrides), return_hydra_config=return_hydra_config)


# Config keys that name a file or directory. A job resolves them against the directory the
# command was run in (Hydra's hydra.runtime.cwd, set where the sweep was launched), never
# against its own working directory: a launcher may run jobs elsewhere (Ray runs them in a
# packaged copy of the project), and their results must land where the user asked.
PATH_KEYS = ("output_dir", "resume", "cache.path", "dataset.path")


def absolute_paths(cfg: Any) -> None:
    """Make the relative paths of :data:`PATH_KEYS` in ``cfg`` absolute (in place), relative to
    the directory the command was run in (``hydra.utils.to_absolute_path``)."""
    from hydra.utils import to_absolute_path

    for key in PATH_KEYS:
        parent, _, leaf = key.rpartition(".")
        node = OmegaConf.select(cfg, parent) if parent else cfg
        if node is None or leaf not in node or OmegaConf.is_missing(node, leaf):
            continue
        value = node[leaf]
        if isinstance(value, str) and value:
            node[leaf] = to_absolute_path(value)


SWEEP_FLAGS = ("-m", "--multirun")
# flags after which Hydra prints something and runs no job (help, the composed config, shell completion)
INFO_FLAGS = ("--help", "-h", "--hydra-help", "--info", "-i", "--cfg", "-c", "--shell-completion", "-sc")


def is_sweep(args: list[str] | tuple[str, ...]) -> bool:
    """Whether a command line runs a ``-m`` sweep (one home: the command line, the sweep's prerequisite
    check and the entry point must agree on it)."""
    return any(a in SWEEP_FLAGS for a in args)


def is_info(args: list[str] | tuple[str, ...]) -> bool:
    """Whether a command line only asks Hydra for information (no job runs, nothing is written)."""
    return any(a in INFO_FLAGS for a in args)


def quote_override(value: str) -> str:
    """A Hydra override value holding ``value`` as written (``=``, ``,``, quotes and spaces included)."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


@dataclass
class StatsSchema:
    generalize_types: bool = False


@dataclass
class TopSchema:
    seed: int = 0
    resume: str | None = None
    output_dir: str | None = None


def _merge(schema: type, section: Any, name: str) -> Any:
    try:
        return OmegaConf.merge(OmegaConf.structured(schema), section)
    except ValidationError as err:
        key = f"{name}.{err.full_key}" if name and err.full_key else (err.full_key or name)
        raise ConfigError(f"{key}: {str(err).splitlines()[0]}") from None


def validate(cfg: Any) -> None:
    """Check the composed job config's types and enumerations; raise ConfigError."""
    top = {k: cfg.get(k) for k in ("seed", "resume", "output_dir")}
    _merge(TopSchema, top, "")
    _merge(StatsSchema, cfg.get("stats") or {}, "stats")
    dataset_source(cfg.dataset)
    if cfg.get("prompt") is not None:
        check_prompt(cfg.prompt)
    types = (cfg.get("questions") or {}).get("types")
    if types is not None:
        from bench.questions import QuestionTypeError, select_types

        try:
            select_types(list(types) if not isinstance(types, str) else [types])
        except QuestionTypeError as err:
            raise ConfigError(f"questions.types: {err}") from None
    depths = (cfg.get("questions") or {}).get("depths")
    if depths is not None:
        from bench.questions.depth import check_depths

        try:
            check_depths(list(depths) if not isinstance(depths, str) else [depths])
        except ValueError as err:
            raise ConfigError(f"questions.depths: {err}") from None
    _check_secrets(cfg)
    _check_booleans(cfg)


@functools.cache
def boolean_keys() -> frozenset[str]:
    """Every config key whose value is a boolean wherever a shipped config file sets it (``model.batch``,
    ``model.warm_prefix``, ``cache.enabled`` ...): the files are the contract of a key's type. A key that
    is a boolean in one option and something else in another is left out."""
    import yaml

    kinds: dict[str, set[bool]] = {}

    def note(data: Any, prefix: str) -> None:
        for key, value in flat_keys(data, prefix).items():
            if key.rpartition(".")[2] != "defaults" and not key.startswith("hydra."):
                kinds.setdefault(key, set()).add(isinstance(value, bool))

    note({k: v for k, v in (yaml.safe_load((CONF_DIR / "config.yaml").read_text()) or {}).items()
          if k not in ("defaults", "hydra")}, "")
    for group in sorted(p for p in CONF_DIR.iterdir() if p.is_dir() and p.name not in ("hydra", "experiment")):
        for path in sorted(group.glob("*.yaml")):
            text = path.read_text()
            if "@package" in text.split("\n", 1)[0]:
                continue  # placed elsewhere than its group: its keys are read where they land
            data = yaml.safe_load(text)
            if isinstance(data, dict):
                note({k: v for k, v in data.items() if k != "defaults"}, f"{group.name}.")
    return frozenset(key for key, seen in kinds.items() if seen == {True})


def _check_booleans(cfg: Any) -> None:
    """A boolean setting takes true or false: ``model.batch=maybe`` is refused, not read as true."""
    values = flat_keys(plain(cfg))
    booleans = boolean_keys()
    for key, value in sorted(values.items()):
        # a panel's members are judge options placed under judge.members.<name> (conf/judge/panel.yaml)
        member = re.match(r"^judge\.members\.[^.]+\.(.+)$", key)
        if (f"judge.{member.group(1)}" if member else key) not in booleans:
            continue
        if not isinstance(value, bool) and not (isinstance(value, str) and value.startswith("${")):
            raise ConfigError(f"{key}: expected true or false, got {value!r}")


def generalize_types(cfg: Any) -> bool:
    """``stats.generalize_types`` of a job config (composed, or a run's recorded dict; absent: false):
    intervals also over other question types (the two-way method)."""
    return bool((cfg.get("stats") or {}).get("generalize_types", False))


def source_keys() -> set[str]:
    """Every key some source class takes (``dataset.<key>``), derived from the classes."""
    return {f.name for cls in source_classes() for f in dataclasses.fields(cls)}


def unused_source_key(key: str, value: str, chosen: str) -> str | None:
    """The error line for ``dataset.<key>=<value>`` when another source takes that key but ``dataset=<chosen>``
    does not (Hydra refuses it at compose time; this names the source that reads it)."""
    if key not in source_keys():
        return None
    return f"dataset.{key}={value} is not used by dataset={chosen}{KEY_HINTS.get(key, '')}"


def dataset_source(node: Any) -> Source:
    """The source a ``dataset`` config names through ``_target_`` (a :class:`bench.sources.Source`
    subclass), built from its keys; a key the class does not take, a wrong type or value is one
    ConfigError line."""
    settings = plain(node)
    if not isinstance(settings, dict):
        raise ConfigError(f"dataset: a mapping of settings, got {settings!r}")
    if not settings.get("_target_"):
        raise ConfigError("dataset._target_: missing (the source class, e.g. bench.sources.LocalFile)")
    return as_source(settings)


def check_prompt(node: Any) -> None:
    """A prompt option (``conf/prompt/<name>.yaml``) with what a summarizing arm reads of it, else one
    ContractError line: ``summary prompt 'mine': missing name`` (``bench.prompts.prompt_problems``)."""
    settings = plain(node)
    label = str(settings.get("name") or settings.get("file") or "?") if isinstance(settings, dict) else "?"
    check(settings, None, "summary prompt", label, rules=prompt_problems)


def _check_secrets(cfg: Any) -> None:
    """No key in the config itself: every ``api_key_env`` names a variable, no key-like value anywhere."""
    from bench.core.redact import check_key_env, secret_in_setting

    for key, value in flat_keys(plain(cfg), split_lists=True).items():
        if isinstance(value, str) and value.startswith("${"):
            continue
        if key.endswith("api_key_env"):
            refusal = check_key_env(key, value)
        elif isinstance(value, str):
            refusal = secret_in_setting(key, value, command_line=False)
        else:
            refusal = None
        if refusal:
            raise ConfigError(refusal)


def plain(cfg: Any) -> Any:
    """``cfg`` as plain data, interpolations resolved; as written when one does not resolve
    (an interpolation that fails is reported where it is used)."""
    try:
        return OmegaConf.to_container(cfg, resolve=True)
    except Exception:  # noqa: BLE001 - any resolver's error
        return OmegaConf.to_container(cfg, resolve=False)


def mapping(node: Any, where: str, resolve: bool = True) -> dict[str, Any]:
    """A mapping node of the config (``where``: its key) as a plain dict with string keys; anything else is
    one error line."""
    data = OmegaConf.to_container(node, resolve=resolve)
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: a mapping of keys to values, got {data!r}")
    return {str(key): value for key, value in data.items()}


def flat_keys(data: Any, prefix: str = "", split_lists: bool = False) -> dict[str, Any]:
    """Nested dicts as ``{"a.b.c": value}``; with ``split_lists`` a non-empty list's items too
    (``a.0``, ``a.1``: each checked on its own), else a list is one value."""
    if isinstance(data, dict):
        out: dict[str, Any] = {}
        for key, value in data.items():
            out.update(flat_keys(value, f"{prefix}{key}.", split_lists))
        return out
    if split_lists and isinstance(data, list) and data:
        return {f"{prefix}{i}": v for i, v in enumerate(data)}
    return {prefix[:-1]: data}
