"""Where modules went when the package root became a map (issue 33), so that what was written before
the move keeps working: ``_target_`` paths in users' YAMLs and in the ``run.json`` of existing jobs
(``resume=DIR`` of a job started before the move), and imports in users' own code.

    RENAMED["bench.judge"]                          # "bench.scoring.judge"
    current_target("bench.judge.LLMJudge")          # "bench.scoring.judge.LLMJudge"
    current_targets(run_json["config"])             # every ``_target_`` of a config tree, current
    install_aliases()                               # ``import bench.judge`` resolves to bench.scoring.judge

This is the one place the map lives; the aliases are installed by ``bench/__init__`` (an import of an
old name returns the module under its new name, the same object, so ``isinstance`` and patches agree).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
from types import ModuleType
from typing import Any

__all__ = ["RENAMED", "PACKAGE_WAS_MODULE", "current_target", "current_targets", "install_aliases", "old_attribute"]

# old module -> its module now
RENAMED: dict[str, str] = {
 "bench.argv": "bench.cli.argv", "bench.summary_text": "bench.cli.job_summary", "bench.job_failure": "bench.cli.job_failure",
 "bench.job_secrets": "bench.cli.job_secrets", "bench.callbacks": "bench.cli.callbacks",
 "bench.config": "bench.config.checks", "bench.arms": "bench.config.arms", "bench.jobcases": "bench.config.job_cases",
 "bench.agent": "bench.answering.agent", "bench.reader": "bench.answering.evidence_reader",
 "bench.read_tool": "bench.answering.request", "bench.evidence": "bench.answering.evidence",
 "bench.judge": "bench.scoring.judge", "bench.panel": "bench.scoring.panel", "bench.hedges": "bench.scoring.hedges",
 "bench.metrics": "bench.scoring.metrics",
 "bench.selection": "bench.data.selection", "bench.cases": "bench.data.cases", "bench.manifest": "bench.data.manifest",
 "bench.chatlog": "bench.sources.chatlog",
 "bench.store": "bench.store.records", "bench.schema": "bench.store.schema", "bench.jobdir": "bench.store.jobdir",
 "bench.history": "bench.extract.history",
 "bench.text": "bench.text.content", "bench.tokens": "bench.text.tokens", "bench.formats": "bench.text.formats",
 "bench.reading": "bench.text.view_contents",
 "bench.errors": "bench.core.errors", "bench.failures": "bench.core.failures", "bench.redact": "bench.core.redact",
 "bench.typecheck": "bench.core.typecheck", "bench.components": "bench.core.components",
 "bench.prompt_files": "bench.prompts",
 "bench.llm.errors": "bench.llm.call_errors",
 "bench.study.report": "bench.study.assemble", "bench.study.panel": "bench.study.panel_review", "bench.study.text": "bench.study.markdown",
 "bench.profiles.base": "bench.profiles.profile", "bench.policies.base": "bench.policies.policy",
 "bench.sources.base": "bench.sources.source", "bench.questions.base": "bench.questions.question_type",
}

# packages that took an old module's name: their old attributes are now in this module
PACKAGE_WAS_MODULE = {"bench.config": "bench.config.checks", "bench.store": "bench.store.records",
                      "bench.text": "bench.text.content"}


def current_target(path: str) -> str:
    """A dotted path (module or module.attribute) as it is named now."""
    for old in sorted(RENAMED, key=len, reverse=True):
        if path == old or path.startswith(old + "."):
            new = RENAMED[old]
            if old in PACKAGE_WAS_MODULE and path != old:
                rest = path[len(old) + 1:]
                if rest.split(".", 1)[0] in _SUBMODULES.get(old, ()):  # already a module of the new package
                    return path
            return new + path[len(old):]
    return path


# the modules of the packages that took an old module's name (bench.store.schema is not bench.store's attribute)
_SUBMODULES = {"bench.config": ("checks", "arms", "job_cases", "launchers"),
               "bench.store": ("records", "schema", "jobdir"),
               "bench.text": ("content", "tokens", "formats", "view_contents")}


def current_targets(tree: Any) -> Any:
    """A config tree (dicts and lists) with every ``_target_`` value named as it is now."""
    if isinstance(tree, dict):
        return {key: current_target(value) if key == "_target_" and isinstance(value, str) else current_targets(value)
                for key, value in tree.items()}
    if isinstance(tree, list):
        return [current_targets(item) for item in tree]
    return tree


class _Aliases(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """``import bench.<old>``: the module under its new name (no second copy of it)."""

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname not in RENAMED or fullname in PACKAGE_WAS_MODULE:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec: Any) -> ModuleType:
        return importlib.import_module(RENAMED[spec.name])

    def exec_module(self, module: ModuleType) -> None:  # already executed under its new name
        return None


def install_aliases() -> None:
    if not any(isinstance(finder, _Aliases) for finder in sys.meta_path):
        sys.meta_path.append(_Aliases())


def old_attribute(package: str, name: str) -> Any:
    """``bench.config.flat_keys`` (the module bench/config.py before the move): the attribute of the module the
    package replaced. Called by the package's ``__getattr__``; AttributeError lets a submodule import go on."""
    if name.startswith("__"):
        raise AttributeError(name)
    module = importlib.import_module(PACKAGE_WAS_MODULE[package])
    try:
        return getattr(module, name)
    except AttributeError:
        raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
