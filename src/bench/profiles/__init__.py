"""Source profiles: what a source's tools mean. The one place that names tools.

    profile = get_profile("openhands")                     # openhands | tau2 | generic
    profile = get_profile("generic", error_result=r"FAIL") # with fields replaced (dataset config)

A new source: write ``bench/profiles/<name>.py`` with a :class:`Profile` and register it in
``PROFILES`` below.
"""

from __future__ import annotations

from typing import Any

from bench.profiles.base import Profile
from bench.profiles.generic import GENERIC
from bench.profiles.openhands import OPENHANDS
from bench.profiles.tau2 import TAU2

__all__ = ["Profile", "PROFILES", "get_profile", "OPENHANDS", "TAU2", "GENERIC", "ProfileError"]

PROFILES: dict[str, Profile] = {p.name: p for p in (OPENHANDS, TAU2, GENERIC)}


class ProfileError(ValueError):
    """An unknown profile name or a bad override."""


def get_profile(name: str, **overrides: Any) -> Profile:
    """The registered profile ``name``, with ``overrides`` (non-null fields) replaced."""
    if name not in PROFILES:
        raise ProfileError(f"unknown profile {name!r}: choose one of {', '.join(PROFILES)}")
    try:
        return PROFILES[name].with_overrides(**overrides)
    except TypeError as err:
        raise ProfileError(f"bad override of profile {name!r}: {err}") from None
