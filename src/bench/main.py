"""Entry point: ``python -m bench.main [group=option ...] [key=value ...]``.

Composes the Hydra config (``conf/``), logs what it will instantiate, delegates to
:func:`bench.runner.run` and prints a short summary. Examples::

    uv run python -m bench.main                                   # offline, shipped sample
    uv run python -m bench.main dataset=local dataset.path=FILE arm=full
    uv run python -m bench.main -m arm=nlatest arm.n=10,20,40     # one job per N
    uv run python -m bench.main --help                            # groups, options, examples

Before Hydra writes anything (``.hydra/``, ``main.log``), :func:`cli` refuses a key on the
command line, a ``resume=`` path that is not a job (or is still running) and a
``hydra.run.dir``/``output_dir`` that holds something already; it passes a ``resume=`` path
to Hydra quoted, so paths with ``=`` and ``,`` (sweep job directories) work as written.

Errors are one line on stderr (details in the job's ``main.log``), exit code 2. In a
``-m`` sweep a failing job is recorded as failed (``run.json`` ``status: failed``), the
sweep goes on, the report lists it, and the command exits 1 at the end.
"""

from __future__ import annotations

import gc
import logging
import os
import re
import sys
from pathlib import Path
from typing import Any

import hydra
from omegaconf import DictConfig, OmegaConf

from bench import redact
from bench.argv import UserError, check_added_keys, hydra_error_line, lock_sweep_dir, preflight_args
from bench.config import ConfigError, absolute_paths, plain, validate
from bench.data import DatasetError
from bench.failures import innermost
from bench.jobdir import JobDirError
from bench.policies import load_prompt
from bench.store import JobFileError
from bench.summary_text import format_summary

# re-exported: the entry point's names as tests and scripts import them
__all__ = ["UserError", "cli", "format_summary", "main", "preflight_args"]

log = logging.getLogger("bench")


def _job_name(override_dirname: str, seed: Any) -> str:
    """Readable sweep subdirectory: the overrides, seed last, no path separators."""
    parts = [p for p in override_dirname.split(",") if p] if override_dirname else []
    name = ",".join([*parts, f"seed={seed}"])
    return re.sub(r"[/\\\s]+", "_", name)


def _run_dir(resume: str | None, *rest: str | None) -> str:
    """A resumed job writes into its own directory, one given ``output_dir`` into that (``rest``: the
    output_dir, then Hydra's default, made unique by :class:`bench.callbacks.FreshDirCallback`)."""
    return resume or next((r for r in rest if r), "")


# every resolver the config files use, registered on import: a launcher's worker process
# (joblib, Ray) resolves the job's config before the task function runs
for _name, _resolver in (("bench.job_name", _job_name), ("bench.run_dir", _run_dir), ("bench.prompt", load_prompt)):
    if not OmegaConf.has_resolver(_name):
        OmegaConf.register_new_resolver(_name, _resolver)


def _fail(err: BaseException, unexpected: bool = False, cfg: DictConfig | None = None) -> None:
    """One clear line for the user (the job log keeps the details), exit code 2, no traceback.

    In a ``-m`` sweep the job is recorded as failed and the sweep goes on (exit 1 at its end).
    """
    root = innermost(err)
    text = redact.scrub(str(root).strip())
    message = text.split("\n")[0] if text else type(root).__name__
    if root is not err and (target := re.search(r"target '([\w.]+)'", str(err))):
        message = f"{message} (building {target.group(1)})"
    file_only = {redact.FILE_ONLY: True}  # the console shows the error line below, once
    if unexpected:
        log.error("%s: %s", type(root).__name__, root, exc_info=root, extra=file_only)
        message = f"{type(root).__name__}: {message} (traceback in the job's main.log)"
    else:
        log.error("%s: %s", type(root).__name__, root, extra=file_only)
    if cfg is not None and _in_sweep():
        _record_failure(cfg, err, message)
        print(f"error: job failed: {message}", file=sys.stderr)
        return
    print(f"error: {message}", file=sys.stderr)
    sys.exit(2)


def _in_sweep() -> bool:
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode

    return HydraConfig.initialized() and HydraConfig.get().mode == RunMode.MULTIRUN


def _record_failure(cfg: DictConfig, err: BaseException, message: str) -> None:
    """``run.json`` of a sweep job that failed: ``status: failed`` and the error, for the report.

    Written into the job's own sweep directory; a run.json there that this job did not write
    (the job was refused because its directory holds another job) is left alone.
    """
    from hydra.core.hydra_config import HydraConfig

    from bench.runner import ResumeError
    from bench.store import read_json, write_json

    own = Path(HydraConfig.get().runtime.output_dir)
    path = own / "run.json"
    if path.exists() and isinstance(innermost(err), (JobDirError, ResumeError)):
        return
    try:
        record = read_json(path) if path.exists() else None
    except JobFileError:
        record = None
    if not isinstance(record, dict):
        record = {"started": None, "ended": None, "arm": (cfg.get("arm") or {}).get("name"),
                  "seed": cfg.get("seed"), "config": plain(cfg)}
    record.update(status="failed", error=message)
    try:
        own.mkdir(parents=True, exist_ok=True)
        write_json(path, record)
    except OSError as write_err:
        log.error("cannot record the failure in %s: %s", own, write_err)


def _register_secrets(cfg: DictConfig) -> None:
    """Every key this job may read from the environment is scrubbed from logs, errors and records."""
    for group in ("model", "judge", "summarizer"):
        node = cfg.get(group)
        name = node.get("api_key_env") if node is not None and hasattr(node, "get") else None
        if isinstance(name, str):
            redact.register_env(name)
    redact.register_env("LANGFUSE_SECRET_KEY", "LANGFUSE_PUBLIC_KEY")
    redact.register_basic_auth(os.environ.get("LANGFUSE_PUBLIC_KEY"), os.environ.get("LANGFUSE_SECRET_KEY"))
    redact.register_urls(OmegaConf.to_container(cfg, resolve=False))  # query strings and userinfo of every URL (e.g. base_url=...?key=...)
    _scrub_hydra_files()


def _scrub_hydra_files() -> None:
    """Hydra wrote ``.hydra/*.yaml`` (and a sweep's ``multirun.yaml``) before the job started: scrub them."""
    from hydra.core.hydra_config import HydraConfig

    if not HydraConfig.initialized():
        return
    hc = HydraConfig.get()
    files = []
    if hc.output_subdir:
        files += sorted((Path(hc.runtime.output_dir) / hc.output_subdir).glob("*.yaml"))
    if _in_sweep():
        files.append(Path(hc.sweep.dir) / "multirun.yaml")
    for path in files:
        redact.scrub_file(path)


@hydra.main(version_base="1.3", config_path="../../conf", config_name="config")
def main(cfg: DictConfig) -> float | None:
    from hydra.errors import InstantiationException
    from omegaconf.errors import OmegaConfBaseException

    from bench.llm import ModelSetupError
    from bench.runner import ResumeError, run

    redact.install_logging()
    redact.console_once()
    try:
        _register_secrets(cfg)
        log.info("arm=%s model=%s judge=%s dataset=%s seed=%s", cfg.arm.get("name"), cfg.model.get("_target_"),
                 cfg.judge.get("_target_"), cfg.dataset.get("source"), cfg.get("seed"))
        missing = sorted(OmegaConf.missing_keys(cfg))
        if missing:
            raise UserError(f"missing required config value(s): {', '.join(missing)} "
                            f"(set them on the command line, e.g. {missing[0]}=...)")
        validate(cfg)
        absolute_paths(cfg)  # against the directory the command ran in, wherever the launcher runs the job
        metrics = run(cfg)
    except (DatasetError, UserError, ConfigError, ModelSetupError, ResumeError, OmegaConfBaseException,
            InstantiationException, JobDirError, OSError) as err:  # OSError: disk full, read-only, ...
        _fail(err, cfg=cfg)
        return None
    except Exception as err:  # noqa: BLE001 - a bug or a value no check caught: one line, traceback in main.log
        _fail(err, unexpected=True, cfg=cfg)
        return None
    finally:
        # the jobs of an in-process sweep run one after the other in this process: what a job
        # built (cases, views, cycles among them) goes now, not at the collector's next full pass
        gc.collect()
    print(format_summary(metrics))
    if metrics.get("n_cases") and metrics.get("accuracy") is None and not _in_sweep():
        print(f"error: no question was scored, so there is no accuracy (status incomplete; answer errors in "
              f"{metrics.get('job_dir')}/answers.jsonl, judge reasons in scores.jsonl)", file=sys.stderr)
        sys.exit(1)
    return metrics.get("accuracy")


def _run_hydra() -> None:
    """``main()`` with Hydra's own errors (compose: unknown option or key, bad override) as one line, exit 2.

    HYDRA_FULL_ERROR makes Hydra raise them here instead of printing ten lines and exiting 1; a
    user who set it gets Hydra's full trace as before."""
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    user_full_error = os.environ.get("HYDRA_FULL_ERROR")
    os.environ["HYDRA_FULL_ERROR"] = "1"
    try:
        main()
    except (HydraException, OmegaConfBaseException) as err:
        if user_full_error:
            raise
        print(f"error: {hydra_error_line(err, sys.argv[1:])}", file=sys.stderr)
        sys.exit(2)
    finally:
        if user_full_error is None:
            os.environ.pop("HYDRA_FULL_ERROR", None)


def cli(argv: list[str] | None = None) -> None:
    """``python -m bench.main``: the checks above, then Hydra; exit 1 when jobs of a sweep failed."""
    from bench import callbacks

    args = list(sys.argv[1:] if argv is None else argv)
    try:
        args = preflight_args(args)
        check_added_keys(args)
    except UserError as err:
        print(f"error: {err}", file=sys.stderr)
        sys.exit(2)
    redact.register_urls(args)  # before Hydra logs or writes an override (after the check: it reads registered keys)
    redact.install_logging()
    try:
        sweep_lock = lock_sweep_dir(args)  # held until this process ends
    except UserError as err:
        print(f"error: {err}", file=sys.stderr)
        sys.exit(2)
    sys.argv = [sys.argv[0], *args]
    _run_hydra()
    del sweep_lock
    for line in callbacks.MISSING_JOBS:
        print(f"error: {line}", file=sys.stderr)
    failed = callbacks.FAILED_JOBS
    if failed:
        print(f"error: {len(failed)} job(s) of the sweep failed: {', '.join(failed[:5])}"
              f"{' ...' if len(failed) > 5 else ''} (listed in the report)", file=sys.stderr)
    if failed or callbacks.MISSING_JOBS:
        sys.exit(1)


if __name__ == "__main__":
    cli()
