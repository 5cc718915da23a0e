"""Simple-type checks of a dataclass's fields, for components built from config values.

Kept free of hydra and omegaconf: the domain modules (policies, sources) check what they were
given without importing the config machinery.

    check_types(policy, "arm")   # ConfigError("arm.n: expected int or null, got 'x'")
"""

from __future__ import annotations

import dataclasses
import sys
import types
import typing
from typing import Any

from bench.core.errors import ConfigError

__all__ = ["ConfigError", "check_types"]

_SIMPLE = {int: "int", float: "float", bool: "bool", str: "str"}


def check_types(obj: Any, prefix: str) -> None:
    """Raise ConfigError when a dataclass field holds a value of the wrong simple type."""
    if not dataclasses.is_dataclass(obj):
        return
    hints = _field_types(type(obj))
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


def _field_types(cls: type) -> dict[str, Any]:
    """The annotations of the class's dataclass fields, each evaluated in the module that wrote it. Only
    the fields': another annotation of the class or a base (``client: ChatClient``, its name imported
    for the type checker only) is no field, and evaluating it would raise NameError."""
    names = {item.name for item in dataclasses.fields(cls)}
    hints: dict[str, Any] = {}
    for klass in reversed(cls.__mro__):
        own = {name: note for name, note in vars(klass).get("__annotations__", {}).items() if name in names}
        if own:
            fields_only = type("_Fields", (), {"__annotations__": own})
            hints.update(typing.get_type_hints(fields_only, globalns=vars(sys.modules[klass.__module__])))
    return hints


def _allowed(annotation: Any) -> tuple[type, ...] | None:
    if annotation in _SIMPLE:
        return (annotation,)
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        args = typing.get_args(annotation)
        if all(a in _SIMPLE or a is type(None) for a in args):
            return args
    return None
