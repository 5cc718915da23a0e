"""What a job keeps: the records it passes around (schema), its append-only JSONL store with resume
bookkeeping, and job directories (fresh names, one job per directory, the lock)."""

from typing import Any


def __getattr__(name: str) -> Any:  # what bench/store.py held before issue 33 (bench.core.renames)
    from bench.core.renames import old_attribute

    return old_attribute(__name__, name)
