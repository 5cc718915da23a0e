"""Config validation before any work: wrong types and unknown values fail with one clear line.

Hydra already rejects unknown groups, options and keys at compose time. This module
checks value types of the composed config against typed schemas (OmegaConf structured
configs) and the typed fields of the instantiated dataclasses (policies, models).

    validate(cfg)              # raises ConfigError("dataset.limit: Value 'abc' ...")
    check_types(policy, "arm")
"""

from __future__ import annotations

import dataclasses
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from omegaconf import OmegaConf
from omegaconf.errors import ValidationError

from bench.errors import ConfigError

__all__ = ["ConfigError", "validate", "check_types", "CONF_DIR", "compose", "PATH_KEYS", "absolute_paths",
           "quote_override", "plain", "flat_keys"]

# The project's config directory: what bench.main composes from (the one definition).
CONF_DIR = Path(__file__).resolve().parents[2] / "conf"


def compose(overrides: list[str] | tuple[str, ...] = (), config_dir: Path | str | None = None) -> Any:
    """The job config for ``overrides`` through Hydra's compose API (as ``bench.main`` would build it,
    without a Hydra run): for the command-line tools and for tests."""
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir

    with initialize_config_dir(config_dir=str(config_dir or CONF_DIR), version_base="1.3"):
        return hydra_compose("config", overrides=list(overrides))


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


def quote_override(value: str) -> str:
    """A Hydra override value holding ``value`` as written (``=``, ``,``, quotes and spaces included)."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


@dataclass
class FiltersSchema:
    resolved: bool | None = None
    exit_status: list[str] | None = None
    one_per_repo: bool = False
    min_messages: int = 0
    max_messages: int | None = None
    min_tokens: int = 0
    max_tokens: int | None = None
    min_questions: int = 0


@dataclass
class DatasetSchema:
    source: str = "sample"
    path: str | None = None
    profile: str = "openhands"
    error_pattern: str | None = None
    shell_tools: list[str] | None = None
    editor_tools: list[str] | None = None
    finish_tools: list[str] | None = None
    write_tools: str | None = None
    roles: dict[str, str] | None = None
    format: str = "auto"
    limit: int | None = None
    hf_name: str | None = None
    revision: str | None = None
    split: str = "train"
    filters: FiltersSchema = field(default_factory=FiltersSchema)


@dataclass
class TopSchema:
    seed: int = 0
    resume: str | None = None
    output_dir: str | None = None


_SOURCES = ("sample", "ops", "local", "chat", "hf")
_FORMATS = ("auto", "parquet", "json")


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
    dataset = OmegaConf.masked_copy(cfg.dataset, [k for k in cfg.dataset if k in DatasetSchema.__annotations__])
    merged = _merge(DatasetSchema, dataset, "dataset")
    if merged.source not in _SOURCES:
        raise ConfigError(f"dataset.source: {merged.source!r} is not one of {_SOURCES}")
    if merged.format not in _FORMATS:
        raise ConfigError(f"dataset.format: {merged.format!r} is not one of {_FORMATS}")
    from bench.profiles import PROFILES

    if merged.profile not in PROFILES:
        raise ConfigError(f"dataset.profile: {merged.profile!r} is not one of {tuple(PROFILES)}")
    if merged.error_pattern is not None:
        import re

        try:
            re.compile(merged.error_pattern)
        except re.error as err:
            raise ConfigError(f"dataset.error_pattern: not a regular expression ({err})") from None
    _check_tool_declarations(merged)
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
    if merged.limit is not None and merged.limit < 1:
        raise ConfigError(f"dataset.limit: must be at least 1 (or null for all rows), got {merged.limit}")
    _check_unused_dataset_keys(merged)
    _check_secrets(cfg)


_ROLE_TARGETS = ("system", "user", "assistant", "tool", "skip")


def _check_tool_declarations(dataset: Any) -> None:
    """``dataset.shell_tools`` ... ``dataset.roles``: names, one editor, a pattern, known role targets."""
    import re

    for key in ("shell_tools", "editor_tools", "finish_tools"):
        names = dataset.get(key)
        if names is not None and any(not str(n).strip() for n in names):
            raise ConfigError(f"dataset.{key}: tool names must not be empty")
    if dataset.get("editor_tools") is not None and len(dataset.editor_tools) > 1:
        raise ConfigError(f"dataset.editor_tools: one editor tool per source, got {list(dataset.editor_tools)}")
    if dataset.get("write_tools") is not None:
        try:
            re.compile(dataset.write_tools)
        except re.error as err:
            raise ConfigError(f"dataset.write_tools: not a regular expression ({err})") from None
    for role, target in (dataset.get("roles") or {}).items():
        if role in _ROLE_TARGETS[:4]:
            raise ConfigError(f"dataset.roles: {role!r} is a chat role already; map only other roles")
        if target not in _ROLE_TARGETS:
            raise ConfigError(f"dataset.roles.{role}: {target!r} is not one of {_ROLE_TARGETS}")


# dataset keys each source reads; a value set for another source would be silently ignored
_SOURCE_KEYS = {"sample": set(), "ops": set(), "local": {"path", "format"}, "chat": {"path"},
                "hf": {"hf_name", "revision", "split"}}
_UNUSED_DEFAULTS = {"path": None, "format": "auto", "hf_name": None, "revision": None, "split": "train"}


def _check_unused_dataset_keys(dataset: Any) -> None:
    """An override the chosen dataset does not use is an error (``dataset.path=F`` on the sample)."""
    used = _SOURCE_KEYS[dataset.source]
    for key, default in _UNUSED_DEFAULTS.items():
        value = dataset.get(key)
        if key not in used and value != default:
            hint = (" (use dataset=local dataset.path=FILE to read a file, dataset=chat for a chat log)"
                    if key in ("path", "format") else " (use dataset=hf for the Hugging Face source)")
            raise ConfigError(f"dataset.{key}={value} is not used by dataset.source={dataset.source}{hint}")


def _check_secrets(cfg: Any) -> None:
    """No key in the config itself: every ``api_key_env`` names a variable, no key-like value anywhere."""
    from bench.redact import check_key_env, secret_in_setting

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


_SIMPLE = {int: "int", float: "float", bool: "bool", str: "str"}


def check_types(obj: Any, prefix: str) -> None:
    """Raise ConfigError when a dataclass field holds a value of the wrong simple type."""
    if not dataclasses.is_dataclass(obj):
        return
    hints = typing.get_type_hints(type(obj))
    for item in dataclasses.fields(obj):
        expected = hints.get(item.name)
        value = getattr(obj, item.name)
        allowed = _allowed(expected)
        if allowed is None or (value is None and type(None) in allowed):
            continue
        ok = any(isinstance(value, t) and not (t is int and isinstance(value, bool)) for t in allowed)
        if float in allowed and isinstance(value, int) and not isinstance(value, bool):
            ok = True
        if not ok:
            names = " or ".join(_SIMPLE.get(t, "null") for t in allowed)
            raise ConfigError(f"{prefix}.{item.name}: expected {names}, got {value!r}")


def _allowed(annotation: Any) -> tuple[type, ...] | None:
    if annotation in _SIMPLE:
        return (annotation,)
    if typing.get_origin(annotation) in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        args = typing.get_args(annotation)
        if all(a in _SIMPLE or a is type(None) for a in args):
            return args
    return None
