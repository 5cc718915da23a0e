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
import sys

import hydra
from omegaconf import DictConfig, OmegaConf

from bench.cli.argv import (
    UserError,
    check_added_keys,
    check_habits,
    check_stack,
    hydra_error_line,
    lock_sweep_dir,
    preflight_args,
)
from bench.cli.job_failure import fail, in_sweep
from bench.cli.job_secrets import register_secrets
from bench.cli.job_summary import format_summary
from bench.config.checks import CONF_DIR, absolute_paths, is_sweep, validate
from bench.core import redact
from bench.core.errors import BenchError, console_script, quiet_stdout

# re-exported: the entry point's names as tests and scripts import them
__all__ = ["UserError", "cli", "format_summary", "main", "preflight_args"]

log = logging.getLogger("bench")


@hydra.main(version_base="1.3", config_path=str(CONF_DIR), config_name="config")  # absolute: the console script too
def main(cfg: DictConfig) -> float | None:
    from hydra.errors import InstantiationException
    from omegaconf.errors import OmegaConfBaseException

    from bench.config.arms import mixed_stack, provider_refusal, stack, stack_line

    redact.install_logging()
    redact.console_once()
    try:
        register_secrets(cfg)
        log.info("arm=%s %s dataset=%s seed=%s", cfg.arm.get("name"), stack_line(stack(cfg)),
                 cfg.dataset.get("source"), cfg.get("seed"))
        refusal = mixed_stack(cfg, _task_overrides()) or provider_refusal(cfg)
        if refusal:  # a sweep's job (a single run was refused before Hydra wrote anything: cli)
            raise UserError(refusal)
        missing = sorted(OmegaConf.missing_keys(cfg))
        if missing:
            raise UserError(f"missing required config value(s): {', '.join(missing)} "
                            f"(set them on the command line, e.g. {missing[0]}=...)")
        validate(cfg)
        absolute_paths(cfg)  # against the directory the command ran in, wherever the launcher runs the job
        from tqdm.contrib.logging import logging_redirect_tqdm

        from bench.runner import run  # after the checks: a refused job does not load the runner

        with logging_redirect_tqdm():  # the job's log lines print above its progress bars, not into them
            metrics = run(cfg)
    except (BenchError, OmegaConfBaseException, InstantiationException, OSError) as err:  # OSError: disk full, ...
        fail(err, cfg=cfg)
        return None
    except Exception as err:  # noqa: BLE001 - a bug or a value no check caught: one line, traceback in main.log
        fail(err, unexpected=True, cfg=cfg)
        return None
    finally:
        # the jobs of an in-process sweep run one after the other in this process: what a job
        # built (cases, views, cycles among them) goes now, not at the collector's next full pass
        gc.collect()
    try:
        print(format_summary(metrics), flush=True)
    except BrokenPipeError:  # the reader stopped early (| head): the job is done and recorded all the same
        quiet_stdout()
    if metrics.get("n_cases") and metrics.get("accuracy") is None and not in_sweep():
        job = metrics.get("job_dir")
        if metrics.get("n_judge_errors"):  # the judge, not the answers: name it and its error
            why = (f"the judge failed on {metrics['n_judge_errors']} question(s): "
                   f"{redact.scrub(str(metrics.get('judge_error') or ''))[:300]}")
        else:
            why = f"answer errors in {job}/answers.jsonl, judge reasons in scores.jsonl"
        print(f"error: no question was scored, so there is no accuracy (status incomplete; {why}; "
              f"rerun with resume={job})", file=sys.stderr)
        sys.exit(1)
    return metrics.get("accuracy")


def _task_overrides() -> list[str]:
    """The job's own overrides (Hydra's ``overrides.task``): what the user chose."""
    from hydra.core.hydra_config import HydraConfig

    return [str(o) for o in HydraConfig.get().overrides.task] if HydraConfig.initialized() else []


def _run_hydra() -> None:
    """``main()`` with Hydra's own errors (compose: unknown option or key, bad override) as one line, exit 2.

    HYDRA_FULL_ERROR makes Hydra raise them here instead of printing ten lines and exiting 1; a
    user who set it to 1 gets Hydra's full trace as before (any other value is off, as Hydra reads it).
    Hydra's own ValueError for an override it cannot take (``arm=null``) is one line too."""
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    user_full_error = os.environ.get("HYDRA_FULL_ERROR")
    os.environ["HYDRA_FULL_ERROR"] = "1"
    try:
        main()
    except (HydraException, OmegaConfBaseException, ValueError) as err:
        if user_full_error == "1":
            raise
        from bench.cli.callbacks import discard_refused_sweeps

        discard_refused_sweeps()  # a sweep refused before any job leaves nothing (its multirun.yaml)
        print(f"error: {hydra_error_line(err, sys.argv[1:])}", file=sys.stderr)
        sys.exit(2)
    finally:
        if user_full_error is None:
            os.environ.pop("HYDRA_FULL_ERROR", None)
        else:
            os.environ["HYDRA_FULL_ERROR"] = user_full_error


@console_script
def cli(argv: list[str] | None = None) -> None:
    """``python -m bench.main``: the checks above, then Hydra; exit 1 when jobs of a sweep failed."""
    from bench.cli import callbacks

    args = list(sys.argv[1:] if argv is None else argv)
    try:
        check_habits(args)
        args = preflight_args(args)
        check_added_keys(args)
        check_stack(args)
    except UserError as err:
        print(f"error: {err}", file=sys.stderr)
        sys.exit(2)
    redact.register_urls(args)  # before Hydra logs or writes an override (after the check: it reads registered keys)
    redact.install_logging()
    try:
        # the registries check their parts as they register them: a broken question type or profile is
        # one line here, before Hydra writes anything (the runner itself loads only for a job that runs)
        import bench.profiles  # noqa: F401
        import bench.questions  # noqa: F401

        if is_sweep(args):  # a single job checks its own (the runner loads only then)
            from bench.runner.setup import check_sweep_prerequisites

            refusal = check_sweep_prerequisites(args)  # once for every job of a sweep, before any job directory exists
            if refusal:
                raise UserError(refusal)
        sweep_lock = lock_sweep_dir(args)  # held until this process ends
    except (UserError, BenchError) as err:  # BenchError: a part's contract (ContractError), a sweep's prerequisite
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
    sys.exit(cli())
