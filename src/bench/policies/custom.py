"""The ``custom`` arm: your own history policy, ``arm.policy=package.module:function``.

The function receives the :class:`~bench.store.schema.Case` (``case.messages`` is the recorded
history as LangChain messages, ``case.questions`` what will be asked) and returns the
messages to show before the question, or a finished :class:`~bench.store.schema.View`. The
view is checked valid for the chat API like every other arm's: a view that splits a tool
exchange stops the job with one line naming the first bad message, before anything is
written as if it were valid.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from langchain_core.messages import BaseMessage

from bench.core.errors import ConfigError
from bench.policies.policy import PolicyContext, make_view, view_problems
from bench.store.schema import Case, View

__all__ = ["CustomPolicy", "load_function"]


def load_function(spec: str) -> Callable[[Case], Any]:
    """``package.module:function`` -> the function (one clear line when it cannot be loaded)."""
    if not isinstance(spec, str) or spec.count(":") != 1 or not all(spec.split(":")):
        raise ConfigError(f"arm.policy must be 'package.module:function', got {spec!r}")
    module_name, attr = spec.split(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as err:
        raise ConfigError(f"arm.policy={spec}: cannot import {module_name!r} ({err})") from None
    function = getattr(module, attr, None)
    if not callable(function):
        raise ConfigError(f"arm.policy={spec}: {module_name} has no function {attr!r}")
    return function


class InvalidCustomView(ConfigError):
    """A custom policy returned a view the chat API would refuse: the job stops (exit 2)."""

    stops_job: ClassVar[bool] = True


@dataclass
class CustomPolicy:
    policy: str = "???"  # package.module:function
    name: str = "custom"
    calls_model: bool = False  # set true when your function calls a model (views are then built concurrently)
    uses: ClassVar[frozenset[str]] = frozenset()
    order: ClassVar[int] = 60
    context: PolicyContext = field(default_factory=PolicyContext, repr=False)

    def __post_init__(self) -> None:
        self.function = load_function(self.policy)

    def __call__(self, case: Case) -> View:
        try:
            result = self.function(case)
        except SystemExit as err:  # sys.exit() in a policy would end the job silently, exit 0, incomplete
            raise InvalidCustomView(f"arm.policy={self.policy} called sys.exit({err.code!r}) for case {case.case_id}: "
                                    "a policy returns its view (or raises an exception for a case it cannot "
                                    "shrink)") from None
        if isinstance(result, View):
            messages, extra = list(result.messages), {"summary": result.summary, "store": result.store,
                                                     "stored": result.stored,
                                                     "summarizer_calls": result.summarizer_calls,
                                                     "info": result.info}
        elif isinstance(result, list | tuple):
            messages, extra = list(result), {}
        else:
            raise InvalidCustomView(f"arm.policy={self.policy} returned {type(result).__name__} for case "
                                    f"{case.case_id}; expected a list of messages or a View")
        odd = next(((i, m) for i, m in enumerate(messages) if not isinstance(m, BaseMessage)), None)
        if odd is not None:
            raise InvalidCustomView(f"arm.policy={self.policy} returned a {type(odd[1]).__name__} at position {odd[0]} "
                                    f"for case {case.case_id}: a view holds LangChain messages (e.g. the items of "
                                    f"case.messages), not {type(odd[1]).__name__}s")
        problems = view_problems(messages)
        if problems:
            raise InvalidCustomView(f"arm.policy={self.policy} built an invalid view for case {case.case_id}: "
                                    f"{problems[0]}")
        return make_view(case, self.name, messages, self.context.counter, **extra)
