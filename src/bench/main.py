"""Entry point: ``python -m bench.main [group=option ...] [key=value ...]``.

Composes the Hydra config (``conf/``), logs what it will instantiate, delegates to
:func:`bench.runner.run` and prints a short summary. Examples::

    uv run python -m bench.main                                   # offline, shipped sample
    uv run python -m bench.main dataset=local dataset.path=FILE arm=full
    uv run python -m bench.main -m arm=nlatest arm.n=10,20,40     # one job per N
"""

from __future__ import annotations

import logging
import re
import sys
from typing import Any

import hydra
from omegaconf import DictConfig, OmegaConf

from bench.config import ConfigError, validate
from bench.data import DatasetError

log = logging.getLogger("bench")


def _job_name(override_dirname: str, seed: Any) -> str:
    """Readable sweep subdirectory: the overrides, seed last, no path separators."""
    parts = [p for p in override_dirname.split(",") if p] if override_dirname else []
    name = ",".join([*parts, f"seed={seed}"])
    return re.sub(r"[/\\\s]+", "_", name)


def _run_dir(resume: str | None, default: str) -> str:
    """A resumed job writes into its own directory; a new one into Hydra's default."""
    return resume or default


for _name, _resolver in (("bench.job_name", _job_name), ("bench.run_dir", _run_dir)):
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
        f"  accuracy: {_pct(metrics['accuracy'])} {_ci(metrics.get('accuracy_ci'))}"
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


def _fail(err: BaseException, unexpected: bool = False) -> None:
    """One clear line for the user (the job log keeps the details), exit code 2, no traceback."""
    root = _innermost(err)
    text = str(root).strip()
    message = text.splitlines()[0] if text else type(root).__name__
    if root is not err and (target := re.search(r"target '([\w.]+)'", str(err))):
        message = f"{message} (building {target.group(1)})"
    if unexpected:
        log.exception("%s: %s", type(root).__name__, root)
        message = f"{type(root).__name__}: {message} (traceback in the job's main.log)"
    else:
        log.error("%s: %s", type(root).__name__, root)
    print(f"error: {message}", file=sys.stderr)
    sys.exit(2)


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def _ci(interval: list[float] | tuple[float, float] | None) -> str:
    return "" if not interval else f"[95% CI {100 * interval[0]:.1f}-{100 * interval[1]:.1f}]"


@hydra.main(version_base="1.3", config_path="../../conf", config_name="config")
def main(cfg: DictConfig) -> float | None:
    from hydra.errors import InstantiationException
    from omegaconf.errors import OmegaConfBaseException

    from bench.models import ModelSetupError
    from bench.runner import ResumeError, run

    log.info("arm=%s model=%s judge=%s dataset=%s seed=%s", cfg.arm.get("name"), cfg.model.get("_target_"),
             cfg.judge.get("_target_"), cfg.dataset.get("source"), cfg.get("seed"))
    try:
        missing = sorted(OmegaConf.missing_keys(cfg))
        if missing:
            raise UserError(f"missing required config value(s): {', '.join(missing)} "
                            f"(set them on the command line, e.g. {missing[0]}=...)")
        validate(cfg)
        metrics = run(cfg)
    except (DatasetError, UserError, ConfigError, ModelSetupError, ResumeError, OmegaConfBaseException,
            InstantiationException) as err:
        _fail(err)
    except (ValueError, TypeError) as err:  # a bad value that reached code before validation caught it
        _fail(err, unexpected=True)
    print(format_summary(metrics))
    return metrics.get("accuracy")


if __name__ == "__main__":
    main()
