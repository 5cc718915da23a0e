"""Source profiles: what a source's tools mean. The one place that names tools.

    profile = get_profile("openhands")                     # openhands | tau2 | generic
    profile = get_profile("generic", error_result=r"FAIL") # with fields replaced (dataset config)

A new source: write ``bench/profiles/<name>.py`` with a :class:`Profile` and register it in
``PROFILES`` below (:func:`registry` checks it: a wrong one is refused at import in one line).
"""

from __future__ import annotations

from typing import Any

from bench.core.contracts import ContractError, check
from bench.core.errors import BenchError
from bench.profiles.generic import GENERIC
from bench.profiles.openhands import OPENHANDS
from bench.profiles.profile import Profile, profile_problems
from bench.profiles.tau2 import TAU2

__all__ = ["Profile", "PROFILES", "registry", "get_profile", "declared_profile", "OPENHANDS", "TAU2", "GENERIC",
           "ProfileError"]


def registry(*profiles: Profile) -> dict[str, Profile]:
    """The profiles by name, in order, each checked as it is registered (ContractError: one line naming
    the profile and what is wrong, :func:`bench.profiles.profile.profile_problems`)."""
    registered: dict[str, Profile] = {}
    for profile in profiles:
        check(profile, None, "profile", label=str(getattr(profile, "name", profile)), rules=profile_problems)
        if profile.name in registered:
            raise ContractError(f"profile {profile.name!r}: registered twice")
        registered[profile.name] = profile
    return registered


PROFILES: dict[str, Profile] = registry(OPENHANDS, TAU2, GENERIC)


class ProfileError(BenchError, ValueError):
    """An unknown profile name or a bad override."""


def get_profile(name: str, **overrides: Any) -> Profile:
    """The registered profile ``name``, with ``overrides`` (non-null fields) replaced."""
    if name not in PROFILES:
        raise ProfileError(f"unknown profile {name!r}: choose one of {', '.join(PROFILES)}")
    try:
        return PROFILES[name].with_overrides(**overrides)
    except TypeError as err:
        raise ProfileError(f"bad override of profile {name!r}: {err}") from None


# A declared editor tool reads as a str_replace_editor (OpenHands, SWE-agent, Anthropic's text
# editor): create / str_replace / insert with path, file_text, old_str, new_str; undo_edit.
_EDITOR_CONVENTIONS = ("editor_command_arg", "editor_path_arg", "editor_commands", "editor_old_arg",
                       "editor_undo", "editor_failures")


def declared_profile(name: str, *, editor_tools: tuple[str, ...] | None = None, **overrides: Any) -> Profile:
    """``get_profile(name, **overrides)`` with the tools a dataset config declares (``dataset.shell_tools``
    ... ``dataset.roles``): ``editor_tools`` names at most one editor, which gets the
    str_replace_editor conventions when the profile has none."""
    if editor_tools:
        if len(editor_tools) > 1:
            raise ProfileError(f"one editor tool per source, got {list(editor_tools)}")
        overrides["editor_tool"] = editor_tools[0]
        if not get_profile(name).editor_commands:
            overrides.update({k: getattr(OPENHANDS, k) for k in _EDITOR_CONVENTIONS})
    return get_profile(name, **overrides)
