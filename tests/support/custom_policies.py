"""Functions for ``arm=custom`` in the tests (importable: tests/support/ is on sys.path)."""

from __future__ import annotations

from langchain_core.messages import ToolMessage

from bench.policies import clean_start


def last_ten(case):
    """The ten latest messages, moved past orphaned tool results (a valid view)."""
    return case.messages[clean_start(case.messages, len(case.messages) - 10):]


def split_exchange(case):
    """The latest messages from a tool result on: its call is cut off (an invalid view)."""
    first = next(i for i in range(len(case.messages) - 1, -1, -1) if isinstance(case.messages[i], ToolMessage))
    return case.messages[first:]


def not_messages(case):
    return "a string is not a view"


def exits(case):
    """A policy that ends the process instead of returning a view."""
    import sys

    sys.exit(0)


def strings(case):
    return ["a"]


def dicts(case):
    return [{"role": "user", "content": "what happened?"}]
