"""Reading job directories for the study: each job's records, config, status and label.

    jobs = load_jobs(["multirun/2026-11-29/19-30-00_nlatest"])   # every job under the paths
    job = load_job("outputs/2026-11-29/19-30-00_full")
    job.metrics, job.label, job.config_id, job.status

Every number is recomputed from the job's records (``cases``, ``views``, ``answers``,
``scores``, ``reference_scores``) with :func:`bench.scoring.metrics.compute_metrics`, so a report
over a killed job shows what it holds and agrees with ``metrics.json`` of a finished one.
Jobs are ordered by config (arm, N, mechanism chain, prompt, then the sweep's own order),
seeds together.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.config.checks import generalize_types
from bench.core.renames import current_targets
from bench.policies.compact_settings import MECHANISM_NAMES
from bench.policies.policy import declaration_of
from bench.prompts import PROMPT_NAMES
from bench.scoring.metric_records import CASE_OMITTED, VIEW_OMITTED
from bench.scoring.metrics import compute_metrics
from bench.store.records import read_jsonl

__all__ = ["Job", "find_job_dirs", "load_job", "load_jobs", "flatten", "job_config",
           "MECHANISM_ORDER", "PROMPT_ORDER"]

log = logging.getLogger(__name__)

MECHANISM_ORDER = {m: i for i, m in enumerate(MECHANISM_NAMES)}  # study order: as the presets build up
PROMPT_ORDER = {p: i for i, p in enumerate(PROMPT_NAMES)}
# keys that never make two jobs different configs (seed is what a config averages over)
_NOT_IDENTITY = re.compile(r"^(seed|resume|output_dir|cache\..*|tracing\..*|stats\..*)$|(^|\.)seed$")
# overrides that are not part of a config's readable label
_NOT_LABEL = re.compile(r"^(seed|resume|output_dir|dataset\.path|cache\.[\w.]+|tracing\.[\w.]+|stats\.[\w.]+|hydra\.[\w.]+"
                        r"|hydra/[\w/]+)$")
# answer usage keys that hold latency in seconds
# ---------------------------------------------------------------- loading jobs


@dataclass
class Job:
    """One job directory and what the report derives from it."""

    path: Path
    run: dict[str, Any]
    config: dict[str, Any]
    overrides: list[str]
    metrics: dict[str, Any]
    stored_metrics: dict[str, Any] | None
    cases: list[dict[str, Any]]
    views: list[dict[str, Any]]
    answers: list[dict[str, Any]]
    scores: list[dict[str, Any]]
    status: str = "incomplete"
    problems: list[str] = field(default_factory=list)
    full_correct: set[str] | None = None  # qids the full arm answered correctly (relative to full)
    label: str = ""
    shared: list[str] = field(default_factory=list)  # overrides of every job in the report, not in label
    shard_paths: list[Path] = field(default_factory=list)  # the shards merged into this job (dataset.shard)

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def arm(self) -> str:
        return str(self.run.get("arm") or (self.config.get("arm") or {}).get("name") or "?")

    @property
    def policy(self) -> dict[str, Any]:
        """The arm's declaration (``run.json`` "policy"): its role, order and what it depends on."""
        return declaration_of(self.run, self.config.get("arm") or {})

    @property
    def is_reference(self) -> bool:
        return self.policy["role"] == "reference"

    @property
    def seed(self) -> Any:
        return self.run.get("seed", self.config.get("seed"))

    @property
    def case_set(self) -> str:
        """The case set the job ran on (jobs of different case sets are never compared)."""
        return str(self.run.get("case_set_hash") or "unknown")

    @property
    def source(self) -> str:
        """A readable name of the job's data: the dataset source, and the file for a local one."""
        dataset = self.run.get("dataset") or {}
        name = str(dataset.get("source") or (self.config.get("dataset") or {}).get("source") or "?")
        path = dataset.get("path") if name in ("local", "chat") else None
        return f"{name}:{Path(str(path)).name}" if path else name

    @property
    def complete(self) -> bool:
        return self.status == "complete"

    @property
    def generalize_types(self) -> bool:  # stats.generalize_types: intervals over other question types too
        return generalize_types(self.config)

    @property
    def identity(self) -> dict[str, Any]:
        """Flattened config without the seed and bookkeeping keys: equal for seeds of a config."""
        return {k: v for k, v in flatten(self.config).items() if not _NOT_IDENTITY.search(k)}

    @property
    def config_id(self) -> str:
        text = json.dumps(self.identity, sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).hexdigest()[:10]

    @property
    def experiment(self) -> str | None:
        for item in self.overrides:
            key, _, value = item.lstrip("+~").partition("=")
            if key == "experiment":
                return value
        return None

    def label_overrides(self) -> list[str]:
        out = []
        for item in self.overrides:
            key = item.lstrip("+~").partition("=")[0]
            if key == "experiment" or _NOT_LABEL.match(key):
                continue
            text = re.sub(r"\\(.)", r"\1", item.lstrip("+"))  # Hydra's escapes: http\://h -> http://h
            out.append(text.removeprefix("experiment/"))  # +experiment/arm=nlatest -> arm=nlatest
        return out


def flatten(data: Any, prefix: str = "") -> dict[str, Any]:
    """Nested dicts as dotted keys; lists stay values (compared as a whole)."""
    if not isinstance(data, dict):
        return {prefix: data} if prefix else {}
    out: dict[str, Any] = {}
    for key, value in data.items():
        dotted = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(value, dict) and value:
            out.update(flatten(value, dotted))
        else:
            out[dotted] = value
    return out


def _yaml(path: Path) -> Any:
    from omegaconf import OmegaConf

    try:
        return OmegaConf.to_container(OmegaConf.load(path), resolve=False)
    except Exception:  # noqa: BLE001 - a broken file only costs the labels
        return None


def job_config(path: Path) -> dict[str, Any]:
    """The job's resolved config: ``run.json`` ``config``, else ``.hydra/config.yaml``."""
    run = _json(path / "run.json") or {}
    # _target_ paths as named now (bench.core.renames): a job from before a move compares equal
    if isinstance(run.get("config"), dict):
        return current_targets(run["config"])
    loaded = _yaml(path / ".hydra" / "config.yaml")
    return current_targets(loaded) if isinstance(loaded, dict) else {}


def _json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_bytes().decode("utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as err:  # ValueError: JSON and UTF-8 errors
        log.warning("%s: cannot read it (%s)", path, err)
        return None
    if not isinstance(data, dict):  # a job's JSON files are objects: anything else is damaged
        log.warning("%s: cannot read it (a JSON %s, not an object)", path, type(data).__name__)
        return None
    return data


def find_job_dirs(paths: Iterable[Path | str]) -> list[Path]:
    """Job directories (holding ``run.json``) given as such or found under sweep directories."""
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if (path / "run.json").exists():
            found.append(path)
        elif path.is_dir():
            found.extend(p.parent for p in sorted(path.rglob("run.json")))
        else:
            log.warning("not a job or sweep directory: %s", path)
    unique: dict[Path, None] = {}
    for path in found:
        unique.setdefault(path.resolve(), None)
    return list(unique)


def load_job(path: Path | str) -> Job:
    """Read a job directory and recompute its metrics from the records."""
    path = Path(path)
    run = _json(path / "run.json") or {}
    config = job_config(path)
    overrides = _yaml(path / ".hydra" / "overrides.yaml")
    overrides = [str(o) for o in overrides] if isinstance(overrides, list) else []
    cases = read_jsonl(path / "cases.jsonl", omit=CASE_OMITTED)
    views = read_jsonl(path / "views.jsonl", omit=VIEW_OMITTED)
    answers = read_jsonl(path / "answers.jsonl")
    scores = read_jsonl(path / "scores.jsonl")
    reference = read_jsonl(path / "reference_scores.jsonl")
    is_reference = declaration_of(run, config.get("arm") or {})["role"] == "reference"
    if is_reference:
        full_correct = {s["qid"] for s in scores if s.get("verdict") == "correct"}
    elif reference:
        latest = {s["qid"]: s for s in reference}  # a resumed job's later line wins
        full_correct = {qid for qid, s in latest.items() if s.get("verdict") == "correct"}
    else:
        full_correct = None
    metrics = compute_metrics(cases, views, answers, scores, full_correct, declaration_of(run, config.get("arm") or {}),
                              reference=is_reference, generalize_types=generalize_types(config))
    stored = _json(path / "metrics.json")
    problems = []
    if run.get("status") == "failed":
        problems.append(f"failed: {run.get('error') or 'no error recorded'}")
    elif run.get("status") != "complete":
        problems.append(f"run.json status {run.get('status', 'missing')!r}")
    if stored is None and run.get("status") != "failed":
        problems.append("no metrics.json")
    if metrics["n_scored"] < metrics["n_questions"]:
        problems.append(f"{metrics['n_questions'] - metrics['n_scored']} of "
                        f"{metrics['n_questions']} questions unscored")
    status = "incomplete" if problems else "complete"
    if status == "complete" and stored and stored.get("accuracy") != metrics["accuracy"]:
        log.warning("%s: metrics.json accuracy %s differs from the records' %s (using the records)",
                    path, stored.get("accuracy"), metrics["accuracy"])
    return Job(path=path, run=run, config=config, overrides=overrides, metrics=metrics,
               stored_metrics=stored, cases=cases, views=views, answers=answers, scores=scores,
               status=status, problems=problems, full_correct=full_correct)


def load_jobs(paths: Iterable[Path | str]) -> list[Job]:
    """Jobs ordered by config (see :func:`_config_order`), seeds together, each with a readable config label."""
    jobs = merge_shards([load_job(p) for p in find_job_dirs(paths)])
    shared = _assign_labels(jobs)
    for job in jobs:
        job.shared = shared
    first: dict[str, tuple] = {}  # a config's place: where its first job stands in its sweep
    for position, job in sorted(((_sweep_position(j), j) for j in jobs), key=lambda pair: pair[0]):
        first.setdefault(job.config_id, position)
    jobs.sort(key=lambda j: (*_config_order(j), first[j.config_id], j.label, _seed_key(j.seed), str(j.path)))
    return jobs


def _config_order(job: Job) -> tuple:
    """Arm (its declared order: reference, baseline, then candidates), N, the mechanism chain, the
    prompt list: the study's reading order."""
    arm_cfg = job.config.get("arm") or {}
    try:
        given = arm_cfg.get("n")
        n = float(given) if given is not None else math.inf
    except (TypeError, ValueError):
        n = math.inf
    policy = job.policy
    mechanism = (job.config.get("mechanism") or {}).get("name") if policy["mechanisms"] else None
    prompt = (job.config.get("prompt") or {}).get("name") if policy["summary_prompt"] else None
    return (policy["order"], job.arm, arm_cfg.get("match") is not None, n,
            MECHANISM_ORDER.get(mechanism or "", len(MECHANISM_ORDER)), PROMPT_ORDER.get(prompt or "", len(PROMPT_ORDER)))


def _sweep_position(job: Job) -> tuple:
    """Where the job stands in its sweep (sweep directory, Hydra's job number): the grid's own order."""
    hydra = _yaml(job.path / ".hydra" / "hydra.yaml") if (job.path / ".hydra" / "hydra.yaml").exists() else None
    num = ((hydra or {}).get("hydra") or {}).get("job", {}).get("num") if isinstance(hydra, dict) else None
    return (str(job.path.parent), num if isinstance(num, int) else math.inf, str(job.path))


def _seed_key(seed: Any) -> tuple:
    return (0, float(seed), "") if isinstance(seed, (int, float)) else (1, 0.0, str(seed))


def _assign_labels(jobs: list[Job]) -> list[str]:
    """Label = the job's overrides without the seed; else the config keys that differ."""
    identities = [j.identity for j in jobs]
    keys = sorted({k for ident in identities for k in ident})
    varying = [k for k in keys if len({json.dumps(i.get(k), sort_keys=True, default=str)
                                         for i in identities}) > 1]
    named = {k.rsplit(".", 1)[0] for k in varying if k.endswith(".name")}
    # a key of a named group (arm.budget) tells configs apart only between jobs of one name (arm=mask at
    # two budgets): it is in the label of the jobs of those names only
    within: dict[str, tuple[str, set[str]]] = {}
    for key in varying:
        group = next((g for g in named if key.startswith(g + ".") and not key.endswith(".name")), None)
        if group is not None:
            within[key] = (group, _names_it_differs_in(identities, key, group))
    varying = [k for k in varying if k not in within or within[k][1]]
    own = [job.label_overrides() for job in jobs]
    # overrides every job shares (model=..., dataset=...) do not tell configs apart: dropped,
    # unless all jobs are one config
    common = set.intersection(*map(set, own)) if len({tuple(o) for o in own}) > 1 else set()
    for job, mine in zip(jobs, own, strict=True):
        parts = [p for p in mine if p not in common]
        if not mine:
            ident = job.identity
            parts = [f"{k.removesuffix('.name')}={_short(ident.get(k))}" for k in varying[:5]
                     if k not in ("arm.name", "arm._target_")
                     and (k not in within or _name_in(ident, within[k][0]) in within[k][1])]
            parts = [f"arm={job.arm}"] + parts
        prefix = f"{job.experiment}: " if job.experiment else ""
        job.label = prefix + (",".join(parts) if parts else f"arm={job.arm}")
    return sorted(common)


def _name_in(identity: dict[str, Any], group: str) -> str:
    return json.dumps(identity.get(group + ".name"), default=str)


def _names_it_differs_in(identities: list[dict[str, Any]], key: str, group: str) -> set[str]:
    """The names of ``group`` among whose jobs ``key`` takes more than one value."""
    values: dict[str, set[str]] = defaultdict(set)
    for ident in identities:
        values[_name_in(ident, group)].add(json.dumps(ident.get(key), sort_keys=True, default=str))
    return {name for name, seen in values.items() if len(seen) > 1}


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return text if len(text) <= 24 else text[:21] + "..."


def merge_shards(jobs: list[Job]) -> list[Job]:
    """The shards of one case set (jobs equal but for ``dataset.shard``) as one job: their records
    together, so its metrics, and its intervals, are the whole case set's (one set, one interval)."""
    groups: dict[str, list[Job]] = {}
    for job in jobs:
        if (job.config.get("dataset") or {}).get("shard"):
            key = {k: v for k, v in _without_shard(job.config).items() if k not in ("output_dir", "resume")}
            groups.setdefault(json.dumps(key, sort_keys=True, default=str), []).append(job)
    merged: dict[int, Job] = {}
    for group in (g for g in groups.values() if len(g) > 1):
        merged.update(dict.fromkeys((id(j) for j in group), _merged(group)))
    out: list[Job] = []
    for job in jobs:
        whole = merged.get(id(job), job)
        if whole not in out:
            out.append(whole)
    return out


def _without_shard(config: dict[str, Any]) -> dict[str, Any]:
    dataset = {k: v for k, v in (config.get("dataset") or {}).items() if k != "shard"}
    return {**config, "dataset": dataset}


def _merged(shards: list[Job]) -> Job:
    first = shards[0]
    cases = [c for j in shards for c in j.cases]
    views = [v for j in shards for v in j.views]
    answers = [a for j in shards for a in j.answers]
    scores = [s for j in shards for s in j.scores]
    full_correct = (set().union(*(j.full_correct for j in shards if j.full_correct is not None))
                    if all(j.full_correct is not None for j in shards) else None)
    digest = hashlib.sha256("\n".join(sorted(str(j.run.get("case_set_hash")) for j in shards)).encode()).hexdigest()
    run = {**first.run, "case_set_hash": digest[:16], "shards": [str(j.path) for j in shards],
           "status": "complete" if all(j.status == "complete" for j in shards) else "incomplete"}
    stored = {"missing_traces": [t for j in shards for t in ((j.stored_metrics or {}).get("missing_traces") or [])]}
    metrics = compute_metrics(cases, views, answers, scores, full_correct, first.policy, reference=first.is_reference,
                              generalize_types=first.generalize_types)
    return Job(path=first.path, run=run, config=_without_shard(first.config),
               overrides=[o for o in first.overrides if not o.startswith("dataset.shard=")],
               metrics=metrics, stored_metrics=stored,
               cases=cases, views=views, answers=answers, scores=scores,
               status=run["status"], problems=[f"{j.name}: {p}" for j in shards for p in j.problems],
               full_correct=full_correct, shard_paths=[j.path for j in shards])
