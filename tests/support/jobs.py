"""Configs and offline jobs on the shipped sample, composed as ``python -m bench.main`` composes them,
and what the tests compare of their records."""

from __future__ import annotations

import json
from pathlib import Path

from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf, open_dict

from bench.runner import run
from bench.store.records import read_jsonl

from paths import CONF_DIR


def compose_with(*overrides: str):
    """The job config ``overrides`` give, as Hydra composes it (nothing else set)."""
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return compose("config", overrides=list(overrides))


def job_cfg(*overrides: str, model: dict | None = None, **values):
    """A job config without the response cache: ``overrides``, then ``model`` and ``values`` (dotted keys) set as given."""
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose("config", overrides=["cache.enabled=false", *overrides])
    with open_dict(cfg):
        if model is not None:
            cfg.model = model
        for key, value in values.items():
            OmegaConf.update(cfg, key, value, merge=False)
    return cfg


def openai_args(url: str, *extra: str) -> list[str]:
    """Overrides of a two-case job whose model is the fake OpenAI server at ``url`` (fast retries, no key)."""
    return ["model=openai", f"model.base_url={url}", "model.api_key_env=null", "model.backoff_base=0.01",
            "model.backoff_max=0.05", "model.max_retries=1", "dataset.limit=2", *extra]


def canonical(path: Path, drop: tuple[str, ...] = ()) -> list[str]:
    """The records of a JSONL file in a stable order, without the fields ``drop`` names (to compare two jobs)."""
    return sorted(json.dumps({k: v for k, v in r.items() if k not in drop}, sort_keys=True) for r in read_jsonl(path))


def run_job(out: Path, *overrides: str) -> Path:
    """One offline job on the shipped sample, written to ``out`` (with a .hydra/overrides.yaml)."""
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose("config", overrides=[f"output_dir='{out}'", "cache.enabled=false", *overrides])
    run(cfg)
    (out / ".hydra").mkdir(exist_ok=True)
    (out / ".hydra" / "overrides.yaml").write_text("".join(f"- {o}\n" for o in overrides), encoding="utf-8")
    return out


def flip_first_correct(job: Path) -> str:
    """Make one correct verdict of a headline question wrong (as a different seed of a real model might)."""
    scores = read_jsonl(job / "scores.jsonl")
    in_task = {q["qid"] for c in read_jsonl(job / "cases.jsonl") for q in c["questions"] if q["in_task_text"]}
    target = next(s for s in scores if s["verdict"] == "correct" and s["qid"] not in in_task)
    target["verdict"], target["reason"] = "wrong", "edited by the test"
    (job / "scores.jsonl").write_text("".join(json.dumps(s) + "\n" for s in scores), encoding="utf-8")
    return target["qid"]
