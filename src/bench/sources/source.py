"""The keys every source shares (:class:`Source`), the case filters, and a source from its settings."""

from __future__ import annotations

import hashlib
import importlib
import logging
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields
from importlib import resources
from pathlib import Path
from typing import Any, ClassVar, Protocol

from bench.core.contracts import check
from bench.core.errors import ConfigError
from bench.core.typecheck import check_types
from bench.profiles import PROFILES, Profile, declared_profile

__all__ = ["Source", "Filters", "as_source", "source_problems", "KEY_HINTS", "sample_path", "SHIPPED"]

log = logging.getLogger("bench.data.selection")  # reported as the data loading it belongs to

# Samples shipped with the package: read line by line (no `datasets` import for them).
SHIPPED = {
    "sample": ("sample.jsonl",),  # synthetic coding trajectories (samples/README.md)
    "ops": ("ops", "dev.jsonl"),  # 12 real tau2-bench telecom runs (samples/ops/README.md, PROVENANCE.md)
}
# Where a key the chosen source does not take is read instead: the fix the error line names.
KEY_HINTS = {"path": " (use dataset=local dataset.path=FILE to read a file, dataset=chat for a chat log)",
             "format": " (use dataset=local dataset.path=FILE to read a file, dataset=chat for a chat log)",
             "hf_name": " (use dataset=hf for the Hugging Face source)",
             "revision": " (use dataset=hf for the Hugging Face source)",
             "split": " (use dataset=hf for the Hugging Face source)"}
_ROLE_TARGETS = ("system", "user", "assistant", "tool", "skip")


def sample_path(name: str = "sample") -> Path:
    """A shipped sample: ``sample`` (synthetic coding trajectories) or ``ops`` (real tau2-bench runs)."""
    return Path(str(resources.files("bench").joinpath("samples", *SHIPPED[name])))


class _Filtered(Protocol):
    """What the filters read of a case (a ``bench.store.schema.Case``: the records are a layer above)."""

    @property
    def resolved(self) -> bool | None: ...
    @property
    def exit_status(self) -> str | None: ...
    @property
    def repo(self) -> str: ...
    @property
    def messages(self) -> Sequence[object]: ...
    @property
    def questions(self) -> Sequence[object]: ...


@dataclass(frozen=True, kw_only=True)
class Filters:
    """Which cases a job keeps, checked in this order (the first that fails names the skip)."""

    resolved: bool | None = None          # keep only (un)resolved runs; None keeps all
    exit_status: tuple[str, ...] | None = None  # accepted exit statuses; None keeps all
    one_per_repo: bool = False            # the first case of each repository only
    min_messages: int = 0                 # history length bounds (messages, system prompt excluded)
    max_messages: int | None = None
    min_tokens: int = 0                   # estimated history token bounds
    max_tokens: int | None = None
    min_questions: int = 0                # questions a case must yield

    @classmethod
    def of(cls, value: Filters | dict[str, Any] | None) -> Filters:
        if isinstance(value, Filters):
            return value
        data = dict(value or {})
        _refuse_unknown(cls, data, "dataset.filters")
        if data.get("exit_status") is not None:
            if isinstance(data["exit_status"], str):
                raise ConfigError(f"dataset.filters.exit_status: a list of statuses, got {data['exit_status']!r}")
            data["exit_status"] = tuple(str(s) for s in data["exit_status"])
        filters = cls(**data)
        check_types(filters, "dataset.filters")
        return filters

    def failed(self, case: _Filtered, tokens: int, repos: set[str]) -> str | None:
        """Name of the first filter ``case`` fails, or None."""
        if self.resolved is not None and case.resolved != self.resolved:
            return "resolved"
        if self.exit_status and case.exit_status not in self.exit_status:
            return "exit_status"
        n = len(case.messages)
        if n < self.min_messages or (self.max_messages and n > self.max_messages):
            return "messages"
        if tokens < self.min_tokens or (self.max_tokens and tokens > self.max_tokens):
            return "tokens"
        if self.min_questions and len(case.questions) < self.min_questions:
            return "questions"
        if self.one_per_repo and case.repo in repos:
            return "one_per_repo"
        return None


def _refuse_unknown(cls: type, data: dict[str, Any], prefix: str) -> None:
    known = [f.name for f in fields(cls)]
    for key, value in data.items():
        if key not in known:
            raise ConfigError(f"{prefix}.{key}={value} is not a setting of {prefix} (its keys: {', '.join(known)})")


@dataclass(kw_only=True)
class Source:
    """The keys every source has; a subclass adds its own and reads rows in ``rows()``."""

    source: str                            # the name recorded with the cases (dataset.source)
    profile: str = "openhands"             # what the tools mean (bench.profiles)
    error_pattern: str | None = None       # regex at the start of a tool result that reports an error
    shell_tools: tuple[str, ...] | None = None   # tools that run a shell command
    editor_tools: tuple[str, ...] | None = None  # the file editor tool (one)
    finish_tools: tuple[str, ...] | None = None  # tools that end the episode
    write_tools: str | None = None         # regex matched in full by state-changing tools
    roles: dict[str, str] | None = None    # other roles mapped to a chat role or skipped
    limit: int | None = None               # at most this many cases (the first that pass the filters)
    filters: Filters = field(default_factory=Filters)
    shard: str | None = None               # "I/N": only the rows of the I-th of N shards (0-based), by instance
    _shard: tuple[int, int] = field(default=(0, 1), init=False, repr=False)

    names: ClassVar[tuple[str, ...]] = ()  # the values of ``source`` this class reads

    def __post_init__(self) -> None:
        for key in ("shell_tools", "editor_tools", "finish_tools"):
            value = getattr(self, key)
            if value is not None:
                if isinstance(value, str):
                    raise ConfigError(f"dataset.{key}: a list of tool names, got {value!r}")
                setattr(self, key, tuple(str(v) for v in value))
        if self.roles is not None:
            if not isinstance(self.roles, dict):
                raise ConfigError(f"dataset.roles: a mapping of role to target, got {self.roles!r}")
            self.roles = {str(k): str(v) for k, v in self.roles.items()}
        self.filters = Filters.of(self.filters)  # the config gives a mapping
        check_types(self, "dataset")
        if self.names and self.source not in self.names:
            raise ConfigError(f"dataset.source: {self.source!r} is not read by {type(self).__name__} "
                              f"(one of {', '.join(self.names)})")
        if self.profile not in PROFILES:
            raise ConfigError(f"dataset.profile: {self.profile!r} is not one of {tuple(PROFILES)}")
        for key in ("error_pattern", "write_tools"):
            pattern = getattr(self, key)
            if pattern is not None:
                try:
                    re.compile(pattern)
                except re.error as err:
                    raise ConfigError(f"dataset.{key}: not a regular expression ({err})") from None
        for key in ("shell_tools", "editor_tools", "finish_tools"):
            if any(not n.strip() for n in getattr(self, key) or ()):
                raise ConfigError(f"dataset.{key}: tool names must not be empty")
        if self.editor_tools is not None and len(self.editor_tools) > 1:
            raise ConfigError(f"dataset.editor_tools: one editor tool per source, got {list(self.editor_tools)}")
        for role, target in (self.roles or {}).items():
            if role in _ROLE_TARGETS[:4]:
                raise ConfigError(f"dataset.roles: {role!r} is a chat role already; map only other roles")
            if target not in _ROLE_TARGETS:
                raise ConfigError(f"dataset.roles.{role}: {target!r} is not one of {_ROLE_TARGETS}")
        if self.limit is not None and self.limit < 1:
            raise ConfigError(f"dataset.limit: must be at least 1 (or null for all rows), got {self.limit}")
        if self.shard is not None:
            found = re.fullmatch(r"(\d+)/(\d+)", str(self.shard).strip())
            if not found or not int(found.group(1)) < int(found.group(2)):
                raise ConfigError(f"dataset.shard: I/N with 0 <= I < N (the I-th of N shards), got {self.shard!r}")
            self._shard = (int(found.group(1)), int(found.group(2)))

    def in_shard(self, row: dict[str, Any]) -> bool:
        """Whether the row belongs to this job's shard: a stable hash of its instance, so every case of
        one instance (its cluster in the intervals) lands in the same shard, whatever the file order."""
        if self.shard is None:
            return True
        index, count = self._shard
        digest = hashlib.sha256(str(row.get("instance_id") or row.get("id") or "").encode("utf-8")).digest()
        return int.from_bytes(digest[:8], "big") % count == index

    @classmethod
    def build(cls, settings: dict[str, Any]) -> Source:
        """The source from plain settings: a key the class does not take is one ConfigError line, naming
        the source that reads it (``KEY_HINTS``)."""
        data = dict(settings)
        known = [f.name for f in fields(cls)]
        name = data.get("source", next(f.default for f in fields(cls) if f.name == "source"))
        for key, value in data.items():
            if key not in known:
                raise ConfigError(f"dataset.{key}={value} is not used by dataset.source={name} "
                                  f"({cls.__name__} takes: {', '.join(known)}){KEY_HINTS.get(key, '')}")
        try:
            return cls(**data)
        except TypeError as err:  # a required key left out
            raise ConfigError(f"dataset: {err}") from None

    def profile_of(self) -> Profile:
        """The named profile with the tools this source declares replacing the profile's."""
        return declared_profile(self.profile, error_result=self.error_pattern, shell_tools=self.shell_tools,
                                editor_tools=self.editor_tools, finish_tools=self.finish_tools,
                                write_tools=self.write_tools, roles=self.roles)

    def rows(self) -> Iterator[dict[str, Any]]:
        """The rows of the column schema, in source order."""
        raise NotImplementedError

    def check(self) -> None:
        """What :meth:`rows` needs before its first row (the file is there, the hub is reachable), without
        reading any: DatasetError as ``rows()`` would raise it. A sweep checks it once for all its jobs."""

    def provenance(self) -> dict[str, Any]:
        """Where the rows came from, as the job records it (``path``, ``hf_name``, ``revision``)."""
        return {"path": None, "hf_name": None, "revision": None}

    def manifest_file(self) -> str | None:
        """The data file whose ``bench.download`` manifest is checked row by row (local files only)."""
        return None

    def label(self) -> str:
        """A short name for the rows (Langfuse dataset names)."""
        return self.source


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, Sequence) and not isinstance(value, str | bytes):
        return [_plain(v) for v in value]
    return value


def _subclasses(cls: type[Source]) -> Iterator[type[Source]]:
    for sub in cls.__subclasses__():
        yield sub
        yield from _subclasses(sub)


def source_classes() -> list[type[Source]]:
    """Every source class (the subclasses of :class:`Source` that name a source)."""
    return [c for c in _subclasses(Source) if c.names]


def source_problems(cls: type[Source]) -> list[str]:
    """What a source class lacks, checked when a job names it (before any row is read): its own
    ``names`` and ``rows()``, and its keys as dataclass fields (an undecorated class's keys would be
    refused as settings no source takes)."""
    missing = [member for member, absent in (("names", not cls.names), ("rows", cls.rows is Source.rows)) if absent]
    found = [f"missing {', '.join(missing)}"] if missing else []
    if "__dataclass_fields__" not in cls.__dict__:
        found.append("not a dataclass (@dataclass(kw_only=True) on the class: its keys are its fields)")
    return found


def as_source(settings: Source | Mapping[str, Any]) -> Source:
    """``settings`` as a source: a :class:`Source` as is; a mapping (a config node or a dict) by its
    ``_target_``, or else by its ``source`` name among the classes' ``names`` (for Python callers)."""
    if isinstance(settings, Source):
        return settings
    data = _plain(settings)
    target = data.pop("_target_", None)
    if target:
        module, _, name = str(target).rpartition(".")
        try:
            cls = getattr(importlib.import_module(module), name)
        except (ImportError, AttributeError, ValueError) as err:
            raise ConfigError(f"dataset._target_: cannot import {target} ({err})") from None
        if not (isinstance(cls, type) and issubclass(cls, Source)):
            raise ConfigError(f"dataset._target_: {target} is not a source (a bench.sources.Source subclass)")
    else:
        name = data.get("source", "sample")
        found = [c for c in _subclasses(Source) if name in c.names]
        if not found:
            known = sorted({n for c in _subclasses(Source) for n in c.names})
            raise ConfigError(f"dataset.source: {name!r} is not one of {tuple(known)}")
        cls = found[0]
    check(cls, None, "source", rules=source_problems)
    return cls.build(data)


