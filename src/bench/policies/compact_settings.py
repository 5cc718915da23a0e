"""The settings of ``arm=compact``: micro_compact, auto_compact, and the mechanism switches.

    Mechanisms(tail=True, tail_fraction=0.2)      # the mechanism group (presets in conf/mechanism/)
    typed(Mechanisms, {"tail": True})            # a config dict as its dataclass; unknown keys fail
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any, ClassVar, Protocol, TypeVar

from bench.core.errors import ConfigError
from bench.prompts import load_prompt

__all__ = ["MicroCompact", "AutoCompact", "Mechanisms", "typed", "DEFAULT_GUIDANCE", "DEFAULT_OFFLOAD_NOTE"]


class _Dataclass(Protocol):
    __dataclass_fields__: ClassVar[dict[str, Any]]  # what makes a class a dataclass, to the type checker


_Settings = TypeVar("_Settings", bound=_Dataclass)  # the settings dataclass typed() builds

# the texts live in src/bench/prompts/ (conf/mechanism/shipped.yaml reads the same files)
DEFAULT_GUIDANCE = load_prompt("verify_guidance.txt")
DEFAULT_OFFLOAD_NOTE = load_prompt("offload_note.txt")


@dataclass
class MicroCompact:
    enabled: bool = True
    min_chars: int = 500  # a result longer than this (characters) may be cleared
    keep_recent: int = 5  # newest results kept: max(keep_recent, results of the current turn)


@dataclass
class AutoCompact:
    enabled: bool = True
    force: bool = True  # compact at the question even below the threshold (the benchmark's case)
    threshold: float = 0.8  # fraction of the context window that triggers a compaction
    context_window: int = 131_072  # tokens of the agent model's window

    @property
    def threshold_tokens(self) -> int:
        return int(self.threshold * self.context_window)


@dataclass
class Mechanisms:
    """The ``mechanism`` config group: switches on top of the shipped behaviour."""

    name: str = "shipped"
    tail: bool = False
    tail_fraction: float = 0.2
    stepcut: bool = False
    offload: bool = False
    offload_min_chars: int = 500
    offload_note: str = DEFAULT_OFFLOAD_NOTE
    collapse: bool = False
    verify: bool = False
    guidance: str = DEFAULT_GUIDANCE

    @property
    def keeps_tail(self) -> bool:
        return self.tail or self.stepcut  # stepcut is a way of cutting the tail

    def switches(self) -> dict[str, bool]:
        return {k: getattr(self, k) for k in MECHANISM_SWITCHES}


# the switches in the order the presets add them (conf/mechanism: each preset adds the next one):
# the fields of Mechanisms that are yes/no, read once from the class
MECHANISM_SWITCHES = tuple(f.name for f in fields(Mechanisms) if f.type in ("bool", bool))
MECHANISM_NAMES = ("shipped", *MECHANISM_SWITCHES)


def typed(kind: type[_Settings], value: _Settings | Mapping[str, Any] | None) -> _Settings:
    """A sub-config given as a dict (from YAML) or None, as its dataclass; unknown keys fail."""
    if value is None:
        return kind()
    if isinstance(value, kind):
        return value
    if not isinstance(value, Mapping):
        raise ConfigError(f"{kind.__name__}: a mapping of its keys, got {value!r}")
    data = dict(value)
    unknown = sorted(set(data) - {f.name for f in fields(kind)})
    if unknown:
        raise ConfigError(f"unknown {kind.__name__} key(s) {unknown}")
    return kind(**data)
