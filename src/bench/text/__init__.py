"""Text shared by every layer: message content as text, token counting, the text formats compaction
writes into a view (each writer beside its parser), and what a view shows by provenance."""

from typing import Any


def __getattr__(name: str) -> Any:  # what bench/text.py held before issue 33 (bench.core.renames)
    from bench.core.renames import old_attribute

    return old_attribute(__name__, name)
