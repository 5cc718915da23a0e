"""The summary prompts: ``src/bench/prompts/<name>.txt`` or a file of one's own, and the numbered
sections a prompt asks for. ``load_prompt("sre")`` reads one; the config resolver
``${bench.prompt:sre.txt}`` puts its text into ``cfg.prompt.text``.

The shipped summary prompts (:data:`PROMPT_NAMES`) are the package's ``.txt`` files that ask for
numbered sections (the mechanisms' notes beside them ask for none), the default first: a new one is
its file and its ``conf/prompt/<name>.yaml``, which :func:`prompt_problems` checks when a job is set up."""

from __future__ import annotations

import re
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

from bench.core.errors import ConfigError

__all__ = ["PROMPT_NAMES", "DEFAULT_PROMPT", "PROMPT_KEYS", "load_prompt", "prompt_sections", "prompt_problems"]

DEFAULT_PROMPT = "sre"  # the prompt group's default (conf/config.yaml), first in study tables
PROMPT_KEYS = ("name", "file", "text")  # a prompt option's keys (conf/prompt/<name>.yaml)


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


def _shipped() -> tuple[str, ...]:
    """The package's summary prompts: its ``.txt`` files that ask for numbered sections, the default first."""
    folder = resources.files("bench") / "prompts"
    names = [item.name[:-4] for item in folder.iterdir()
             if item.name.endswith(".txt") and _SECTION.search(item.read_text(encoding="utf-8"))]
    return tuple(sorted(names, key=lambda name: (name != DEFAULT_PROMPT, name)))


PROMPT_NAMES = _shipped()


def prompt_problems(settings: Any) -> list[str]:
    """What a prompt option (``conf/prompt/<name>.yaml``, as plain data) lacks: its ``name`` (its label in
    views and reports) and a text that is not empty (``text``, read from ``file``); a key it does not take."""
    if not isinstance(settings, Mapping):
        return [f"a mapping of {', '.join(PROMPT_KEYS)} (got {type(settings).__name__})"]
    found = []
    missing = [key for key in ("name",) if not settings.get(key)]
    if not settings.get("text") and not settings.get("file"):
        missing.append("text")
    if missing:
        found.append(f"missing {', '.join(missing)}")
    text = settings.get("text")
    if text is not None and not (isinstance(text, str) and text.strip()):
        found.append(f"its text is empty (file {settings.get('file')})" if settings.get("file") else "its text is empty")
    unknown = sorted(set(settings) - set(PROMPT_KEYS))
    if unknown:
        found.append(f"{', '.join(unknown)}: not a key of a prompt (its keys: {', '.join(PROMPT_KEYS)})")
    return found
