"""Continuing a job in its own directory (``resume=DIR``): what may change, what is kept.

A resumed job must use the job's config; only operational keys (concurrency, timeouts,
retries, the cache, tracing) may change. Finished answers and scores are kept, answers with
``outcome=error`` are dropped (and asked again), nothing is duplicated.

    check_resume(cfg, out, previous_run_json)     # ResumeError when it cannot continue
    kept = prune(store, "answers", keep)          # the records by (case_id, qid), last one wins
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from omegaconf import OmegaConf

from bench.config.checks import flat_keys
from bench.core.errors import BenchError
from bench.core.renames import current_targets
from bench.store.records import JobStore

__all__ = ["ResumeError", "check_resume", "prune", "OPERATIONAL_TOP", "OPERATIONAL_LEAVES"]

# Config keys that may change between a job and its resumption (they do not change replies).
OPERATIONAL_TOP = {"resume", "output_dir", "cache", "tracing", "hydra"}
OPERATIONAL_LEAVES = {"max_concurrency", "max_concurrency_cap", "timeout", "max_retries", "backoff_base",
                      "backoff_max", "check_endpoint", "cache_path", "cache_enabled", "cache_url"}


class ResumeError(BenchError, ValueError):
    """``resume=DIR`` does not point at a job this config can continue."""


def check_resume(cfg: Any, out: Path, previous: dict[str, Any] | None) -> None:
    if previous is None:  # run.json holds null or went away (bench.store.jobdir.check_resume_path refused the rest)
        raise ResumeError(f"resume={out}: not a job directory (no run.json)")
    if not isinstance(previous, dict):
        raise ResumeError(f"resume={out}: {out / 'run.json'} is not a job's run.json (not a JSON object)")
    # a job started before a module moved names its old _target_ paths: compared as named now
    before = flat_keys(current_targets(previous.get("config") or {}))
    now = flat_keys(OmegaConf.to_container(cfg, resolve=True))

    def relevant(key: str) -> bool:
        parts = key.split(".")
        return parts[0] not in OPERATIONAL_TOP and parts[-1] not in OPERATIONAL_LEAVES

    changed = sorted(k for k in set(before) | set(now)
                     if relevant(k) and before.get(k, "<absent>") != now.get(k, "<absent>"))
    if changed:
        shown = ", ".join(f"{k}: {before.get(k, '<absent>')!r} -> {now.get(k, '<absent>')!r}" for k in changed[:4])
        more = f" (+{len(changed) - 4} more)" if len(changed) > 4 else ""
        raise ResumeError(f"resume={out}: the config differs from the job's ({shown}{more}); "
                          "pass the same overrides as the interrupted run")


def _latest(records: list[dict[str, Any]]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(r["case_id"], r["qid"]): r for r in records}


def prune(store: JobStore, name: str, keep: Callable[[dict[str, Any]], bool]) -> dict[tuple[str, str], dict[str, Any]]:
    """Records of ``name`` by key (last wins); rewrite the file when lines are dropped or repeated."""
    records = store.read(name)
    latest = _latest(records)
    kept = {k: r for k, r in latest.items() if keep(r)}
    if len(kept) != len(records):
        order = [r for r in records if kept.get((r["case_id"], r["qid"])) is r]
        store.write_all(name, order)
    return kept
