"""What a part a user adds must have, checked where it is registered: one line naming the part and what
is missing or wrong, never an AttributeError in the middle of a job.

A kind's contract is its Protocol (the one list of its members: ``bench.questions.question_type.QuestionType``,
``bench.policies.policy.Policy``, ``bench.answering.answerer.Answerer`` and ``bench.scoring.judge.Judge``);
docs/extending.md lists the same members, and a test compares the two. :func:`problems` reads a part against
it: every attribute the protocol declares is there and of its declared type, every method is callable and
takes the protocol's arguments. A kind's own rules (a question type's name, a policy's ``uses``) come as ``rules``.

    check(part, QuestionType, "question type")   # ContractError("question type 'mine': missing grade")
"""

from __future__ import annotations

import collections.abc
import functools
import inspect
import types
import typing
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from bench.core.errors import BenchError

__all__ = ["ContractError", "Member", "members", "problems", "check", "label_of"]


class ContractError(BenchError, TypeError):
    """A part lacks a member its kind needs, or has one of the wrong kind: one line naming both."""


@dataclass(frozen=True)
class Member:
    """One member of a protocol: an attribute (``kind`` its declared type) or a method (its arguments)."""

    name: str
    method: bool
    annotation: Any = None  # an attribute's declared type (None: a method)
    params: tuple[str, ...] = ()  # a method's arguments after ``self``


@functools.cache
def members(protocol: type) -> tuple[Member, ...]:
    """The members ``protocol`` declares (its protocol bases' first), attributes then methods."""
    hints = typing.get_type_hints(protocol)
    attributes: dict[str, Member] = {}
    methods: dict[str, Member] = {}
    for cls in reversed(protocol.__mro__):
        if not _is_protocol(cls):
            continue
        for name in cls.__dict__.get("__annotations__", {}):
            attributes[name] = Member(name, False, hints.get(name))
        for name, value in cls.__dict__.items():
            if isinstance(value, property) and not name.startswith("_"):  # an attribute, read-only in the protocol
                attributes[name] = Member(name, False, typing.get_type_hints(value.fget).get("return"))
                continue
            if inspect.isfunction(value) and (name == "__call__" or not name.startswith("_")):
                params = tuple(inspect.signature(value).parameters)[1:]
                methods[name] = Member(name, True, params=params)
    return (*attributes.values(), *methods.values())


def _is_protocol(cls: Any) -> bool:
    """A protocol class: one that lists ``Protocol`` among its bases (PEP 544: only those are protocols)."""
    return typing.Protocol in getattr(cls, "__bases__", ())


def _expected(annotation: Any) -> tuple[type, ...] | None:
    """The runtime types an attribute's annotation allows (None: not checked, e.g. ``Any``)."""
    if typing.get_origin(annotation) is typing.ClassVar:
        annotation = typing.get_args(annotation)[0]
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        allowed = [_expected(arg) for arg in typing.get_args(annotation)]
        return None if any(a is None for a in allowed) else tuple(t for a in allowed if a for t in a)
    if origin is not None:
        annotation = origin
    if annotation is type(None):
        return (type(None),)
    if annotation in (frozenset, set, collections.abc.Set):
        return (collections.abc.Set,)  # ``uses = {"prompt"}`` works as well as a frozenset
    if isinstance(annotation, type) and not _is_protocol(annotation) and annotation is not object:
        return (annotation,)
    return None


def _type_name(allowed: tuple[type, ...]) -> str:
    names = {collections.abc.Set: "set", type(None): "None"}
    return " or ".join(names.get(t, t.__name__) for t in allowed)


def _takes(function: Any, params: tuple[str, ...]) -> bool:
    """Whether ``function`` can be called with the protocol's arguments, given by position."""
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):  # a builtin without a signature: not ours to doubt
        return True
    try:
        signature.bind(*params)
    except TypeError:
        return False
    return True


def problems(part: Any, protocol: type, optional: bool = False) -> list[str]:
    """What ``part`` lacks or has wrong against ``protocol``: ``["missing a, b", "c must be a dict (got str)"]``.
    ``optional``: the protocol lists members a part may leave out; those it has are checked."""
    missing: list[str] = []
    wrong: list[str] = []
    for member in members(protocol):
        try:
            value = getattr(part, member.name)
        except AttributeError:
            if not optional:
                missing.append(member.name)
            continue
        if member.method:
            shown = "__call__" if member.name == "__call__" else f"{member.name}()"
            if not callable(value):
                wrong.append(f"{member.name} must be a method (got {type(value).__name__})")
            elif not _takes(value, member.params):
                wrong.append(f"{shown} does not take ({', '.join(member.params)})")
            continue
        allowed = _expected(member.annotation)
        if allowed is not None and not isinstance(value, allowed):
            wrong.append(f"{member.name} must be a {_type_name(allowed)} (got {type(value).__name__})")
    return ([f"missing {', '.join(missing)}"] if missing else []) + wrong


def label_of(part: Any) -> str:
    """How a part is named in its error line: its ``name`` when it has one, else its class's path."""
    name = getattr(part, "name", None)
    if isinstance(name, str) and name:
        return name
    cls = part if isinstance(part, type) else type(part)
    return f"{cls.__module__}.{cls.__qualname__}"


def check(part: Any, protocol: type | None, kind: str, label: str | None = None,
          rules: Callable[[Any], Iterable[str]] | None = None) -> Any:
    """``part`` when it has every member of ``protocol`` and the kind's own ``rules`` (read once the members
    are there) find no problem; else ContractError, one line:
    ``<kind> '<label>': missing a, b; c must be a dict (got str)``."""
    found = problems(part, protocol) if protocol is not None else []
    if not found and rules is not None:
        found = [p for p in rules(part) if p]
    if found:
        raise ContractError(f"{kind} {label or label_of(part)!r}: {'; '.join(found)}")
    return part
