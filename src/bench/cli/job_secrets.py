"""What a job must keep out of its logs, records and Hydra's files: every key it may read from the
environment, Langfuse's keys, and the userinfo and query strings of every URL in its config."""

from __future__ import annotations

import os
from pathlib import Path

from omegaconf import DictConfig, OmegaConf

from bench.cli.job_failure import in_sweep
from bench.core import redact

__all__ = ["register_secrets", "scrub_hydra_files"]


def register_secrets(cfg: DictConfig) -> None:
    """Every key this job may read from the environment is scrubbed from logs, errors and records."""
    for group in ("model", "judge", "summarizer"):
        node = cfg.get(group)
        name = node.get("api_key_env") if node is not None and hasattr(node, "get") else None
        if isinstance(name, str):
            redact.register_env(name)
    # the providers' own variables too, whatever the groups name (a panel member, a provider arm's model ...)
    redact.register_env("LANGFUSE_SECRET_KEY", "LANGFUSE_PUBLIC_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY")
    redact.register_basic_auth(os.environ.get("LANGFUSE_PUBLIC_KEY"), os.environ.get("LANGFUSE_SECRET_KEY"))
    redact.register_urls(OmegaConf.to_container(cfg, resolve=False))  # query strings and userinfo of every URL (e.g. base_url=...?key=...)
    scrub_hydra_files()


def scrub_hydra_files() -> None:
    """Hydra wrote ``.hydra/*.yaml`` (and a sweep's ``multirun.yaml``) before the job started: scrub them."""
    from hydra.core.hydra_config import HydraConfig

    if not HydraConfig.initialized():
        return
    hc = HydraConfig.get()
    files = []
    if hc.output_subdir:
        files += sorted((Path(hc.runtime.output_dir) / hc.output_subdir).glob("*.yaml"))
    if in_sweep():
        files.append(Path(hc.sweep.dir) / "multirun.yaml")
    for path in files:
        redact.scrub_file(path)
