"""The summary prompts: ``src/bench/prompts/<name>.txt`` or a file of one's own, and the numbered
sections a prompt asks for. ``load_prompt("sre")`` reads one; the config resolver
``${bench.prompt:sre.txt}`` puts its text into ``cfg.prompt.text``."""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path

from bench.core.errors import ConfigError

__all__ = ["PROMPT_NAMES", "load_prompt", "prompt_sections"]

PROMPT_NAMES = ("sre", "generic", "hybrid", "hybrid_v2")


def load_prompt(name_or_path: str) -> str:
    """A prompt's text: a name from ``PROMPT_NAMES`` (or ``name.txt``) or a file path."""
    if "/" in name_or_path:  # a path: prompts of one's own, outside the package
        path = Path(name_or_path)
        if not path.is_file():
            raise ConfigError(f"summary prompt file not found: {name_or_path}")
        return path.read_text(encoding="utf-8")
    file_name = name_or_path if name_or_path.endswith(".txt") else f"{name_or_path}.txt"
    resource = resources.files("bench") / "prompts" / file_name
    if not resource.is_file():
        raise ConfigError(f"unknown summary prompt {name_or_path!r}: choose one of {', '.join(PROMPT_NAMES)} "
                         "or give a file path")
    return resource.read_text(encoding="utf-8")


# "1. Primary Request and Intent: ..." — the numbered section headings of a prompt.
_SECTION = re.compile(r"^\s*\d{1,2}[.)]\s+([A-Z][^:\n]{1,80}?)\s*:", re.M)
_DEFAULT_SECTIONS = ["User requests", "Files touched", "Commands run", "Errors", "Current work"]


def prompt_sections(prompt: str) -> list[str]:
    """Section titles a prompt asks for, in order (a default set when it names none)."""
    titles = _SECTION.findall(prompt or "")
    return titles or list(_DEFAULT_SECTIONS)
