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

import difflib
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
from bench.config import ConfigError, absolute_paths, flat_keys, plain, quote_override, validate
from bench.data import DatasetError
from bench.jobdir import JobDirError, check_new, check_resume_path
from bench.policies import load_prompt
from bench.store import JobFileError

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


class UserError(RuntimeError):
    """A problem with the user's input or environment: reported in one line, no traceback."""


def format_summary(metrics: dict[str, Any]) -> str:
    if not metrics["n_cases"]:
        return (f"job: {metrics.get('job_dir')}\nno case to run: every row was rejected or filtered out "
                f"(reasons in {metrics.get('job_dir')}/rejected.jsonl)")
    flagged = metrics.get("in_task_text") or {}
    lines = [
        f"job: {metrics.get('job_dir')}",
        f"cases: {metrics['n_cases']} ({metrics.get('n_clusters', '?')} instances)  questions: "
        f"{metrics['n_questions']}, headline {metrics.get('n_headline_questions', metrics['n_questions'])}"
        f"  {metrics.get('measures', 'accuracy')}: {_pct(metrics['accuracy'])} {_ci(metrics.get('accuracy_ci'))}"
        + (f"  relative to full: {_pct(metrics['accuracy_relative_to_full'])} "
           f"{_ci(metrics.get('accuracy_relative_to_full_ci'))}"
           if metrics.get("accuracy_relative_to_full") is not None else ""),
    ]
    if flagged.get("n"):
        lines.append(f"answerable from the task text (not in the headline): {flagged['n']} questions, "
                     f"accuracy {_pct(flagged['accuracy'])}")
    if "mean_kept_tokens" in metrics:
        lines.append(f"tokens kept: {metrics['mean_kept_tokens']:.0f} of {metrics['mean_full_tokens']:.0f} "
                     f"per case ({_pct(metrics['tokens_kept_ratio'])})")
    calls = (metrics.get("model_calls") or {}).get("total")
    if calls and calls.get("requests"):
        lines.append(f"model calls: {calls['calls']} made, {calls['cache_hits']} from cache; tokens in "
                     f"{calls['input_tokens']} (cached {calls['cached_tokens']}), out {calls['output_tokens']}")
    if metrics.get("n_errors"):
        lines.append(f"answer errors: {metrics['n_errors']} (status incomplete; rerun with resume=DIR to retry)")
    lines.append(f"{'type':<17}{'n':>4}{'correct':>9}{'wrong':>7}{'abstain':>9}{'unscored':>10}{'accuracy':>10}"
                 f"{'in task':>9}")
    for qtype, row in metrics["by_type"].items():
        lines.append(f"{qtype:<17}{row['n']:>4}{row['correct']:>9}{row['wrong']:>7}{row['abstained']:>9}"
                     f"{row['unscored']:>10}{_pct(row['accuracy']):>10}{row.get('n_in_task_text', 0):>9}")
    if metrics.get("stale"):
        lines.append(f"stale: {metrics['stale']} wrong answers gave a value an earlier call returned (latest_value)")
    if metrics.get("by_distance"):
        lines.append("by distance (tokens back to the latest evidence): " + "  ".join(
            f"{label} {_pct(row['accuracy'])} (n={row['n']}, visible {_pct(row['evidence_visible'])})"
            for label, row in metrics["by_distance"].items()))
    return "\n".join(lines)


def _innermost(err: BaseException) -> BaseException:
    """The real error: Hydra wraps a bad value's error in 'Error in call to target ...'."""
    from hydra.errors import InstantiationException

    while isinstance(err, InstantiationException) and err.__cause__ is not None:
        err = err.__cause__
    return err


def _fail(err: BaseException, unexpected: bool = False, cfg: DictConfig | None = None) -> None:
    """One clear line for the user (the job log keeps the details), exit code 2, no traceback.

    In a ``-m`` sweep the job is recorded as failed and the sweep goes on (exit 1 at its end).
    """
    root = _innermost(err)
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
    if path.exists() and isinstance(_innermost(err), (JobDirError, ResumeError)):
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


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def _ci(interval: list[float] | tuple[float, float] | None) -> str:
    return "" if not interval else f"[95% CI {100 * interval[0]:.1f}-{100 * interval[1]:.1f}]"


def _register_secrets(cfg: DictConfig) -> None:
    """Every key this job may read from the environment is scrubbed from logs, errors and records."""
    for group in ("model", "judge", "summarizer"):
        node = cfg.get(group)
        name = node.get("api_key_env") if node is not None and hasattr(node, "get") else None
        if isinstance(name, str):
            redact.register_env(name)
    redact.register_env("LANGFUSE_SECRET_KEY", "LANGFUSE_PUBLIC_KEY")
    redact.register_basic_auth(os.environ.get("LANGFUSE_PUBLIC_KEY"), os.environ.get("LANGFUSE_SECRET_KEY"))
    redact.register_urls(cfg)  # query strings and userinfo of every URL (e.g. base_url=...?key=...)
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


# --------------------------------------------------------------------------- before Hydra

def _key(item: str) -> str | None:
    """The config key an override sets (``+a.b=1`` -> ``a.b``); None for a flag or a bare word."""
    return item.partition("=")[0].lstrip("+~") if "=" in item and not item.startswith("-") else None


def _value(item: str) -> str:
    value = item.partition("=")[2]
    return value[1:-1] if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"" else value


def preflight_args(args: list[str]) -> list[str]:
    """Check the command line before Hydra writes anything; return it with ``resume=`` quoted for Hydra.

    Raises UserError (one line) for a key on the command line, a ``resume`` path that is not a
    job or is running, and a new job's ``hydra.run.dir`` / ``output_dir`` that is not empty.
    """
    if any(a in ("--help", "-h", "--hydra-help", "--info", "-i", "--cfg", "-c", "--shell-completion", "-sc")
           for a in args):
        return args
    refusal = redact.literal_secret(args)
    if refusal:
        raise UserError(refusal)
    sweep = any(a in ("-m", "--multirun") for a in args)
    out: list[str] = []
    resume = None
    for item in args:
        if _key(item) == "resume":
            resume = _value(item)
            if resume in ("", "null"):
                out.append(item)
                continue
            try:
                check_resume_path(resume)
            except JobDirError as err:
                raise UserError(str(err)) from None
            item = f"{item.partition('=')[0]}={quote_override(resume)}"
        out.append(item)
    for item in args:
        if sweep and _key(item) == "hydra.sweep.dir" and Path(_value(item)).is_dir():
            if any(Path(_value(item)).rglob("run.json")):
                raise UserError(f"hydra.sweep.dir={_value(item)} already holds jobs: a sweep needs a directory "
                                "of its own (resume its jobs one by one with resume=JOB_DIR)")
    if not resume and not sweep:
        for item in args:
            if _key(item) in ("hydra.run.dir", "output_dir") and _value(item) not in ("", "null"):
                try:
                    check_new(_value(item))
                except JobDirError as err:
                    raise UserError(str(err)) from None
    return out


def lock_sweep_dir(args: list[str]) -> Any:
    """A sweep into a given ``hydra.sweep.dir`` locks it: a second sweep started there at the same time
    is refused (their jobs and reports would mix). Returns the held lock (None: nothing to lock)."""
    from bench.jobdir import JobLock

    if not any(a in ("-m", "--multirun") for a in args):
        return None
    given = [_value(a) for a in args if _key(a) == "hydra.sweep.dir"]
    if not given or given[-1] in ("", "null"):
        return None  # a default sweep directory is made unique (bench.callbacks.FreshDirCallback)
    path = Path(given[-1])
    try:
        path.mkdir(parents=True, exist_ok=True)
        return JobLock(path).__enter__()
    except (OSError, JobDirError) as err:
        busy = "in use" in str(err)
        raise UserError(f"hydra.sweep.dir={path} is in use by another sweep running now: give this sweep a "
                        "directory of its own" if busy else f"hydra.sweep.dir={path}: {err}") from None


def _known_top_level() -> set[str]:
    """Top-level names an override may add with ``+``: the primary config's keys, its groups, ``hydra``."""
    from bench.config import CONF_DIR

    keys = {k for k in OmegaConf.load(CONF_DIR / "config.yaml") if k != "defaults"}
    return keys | {p.name for p in CONF_DIR.iterdir() if p.is_dir()} | {"hydra"}


def check_added_keys(args: list[str]) -> None:
    """``+KEY=V`` adds a key: one whose top-level name the config does not know is a typo
    (``+datset.path=x``, Hydra's own hint for ``datset.path=x``), not a new setting to ignore."""
    known = None
    for item in args:
        if not item.startswith("+") or "=" not in item:
            continue
        key = item.partition("=")[0].lstrip("+")
        top = re.split(r"[./]", key, maxsplit=1)[0]
        known = known if known is not None else _known_top_level()
        if top not in known:
            close = difflib.get_close_matches(top, sorted(known), n=1)
            hint = f" (did you mean {close[0]}{key[len(top):]}?)" if close else ""
            raise UserError(f"unknown config key '{key}': '{top}' is not a key or group of the config{hint}")


def _config_keys(args: list[str]) -> list[str]:
    """Every key (and key prefix) of the config the group choices in ``args`` select; [] if it cannot be built."""
    from bench.config import compose

    groups = [a for a in args if "=" in a and not a.startswith(("+", "~", "-"))
              and "." not in a.partition("=")[0] and a.partition("=")[0] in _known_top_level()]
    for overrides in (groups, []):
        try:
            data = OmegaConf.to_container(compose(overrides), resolve=False)
        except Exception:  # noqa: BLE001 - a hint only: no hint rather than a second error
            continue
        keys: set[str] = set()
        for leaf in flat_keys(data):
            parts = leaf.split(".")
            keys.update(".".join(parts[: i + 1]) for i in range(len(parts)))
        return sorted(keys)
    return []


def hydra_error_line(err: BaseException, args: list[str]) -> str:
    """Hydra's multi-line message for a bad group option, key or override as one line with the fix."""
    from hydra.errors import MissingConfigException

    text = str(err).strip()
    if isinstance(err, MissingConfigException) and (found := re.search(r"Could not find '([^']+)'", text)):
        group, _, option = found.group(1).rpartition("/")
        options = [o for o in (err.options or []) if "/" not in o]
        close = difflib.get_close_matches(option, options, n=1)
        if group and options:
            return (f"unknown option {group}={option} (options: {', '.join(options)}"
                    + (f"; did you mean {group}={close[0]}?)" if close else ")"))
    if found := re.search(r"Could not override '([^']+)'", text):
        key = found.group(1)
        close = difflib.get_close_matches(key, _config_keys(args), n=1, cutoff=0.6)
        return f"unknown config key '{key}'" + (f" (did you mean {close[0]}?)" if close else "")
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    cause = err.__cause__
    message = lines[0] if lines else type(err).__name__
    if cause is not None and str(cause).strip():
        message = f"{message} ({str(cause).strip().splitlines()[0]})"
    return redact.scrub(message)


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
