"""From a composed Hydra config to typed objects: the config checks (one clear line per bad value), the
arm builder and the job's case selection. Nothing below this package reads a config node."""

from typing import Any


def __getattr__(name: str) -> Any:  # what bench/config.py held before issue 33 (bench.core.renames)
    from bench.core.renames import old_attribute

    return old_attribute(__name__, name)
