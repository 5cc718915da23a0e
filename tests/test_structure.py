"""The structure stays as drawn: a layered, acyclic import graph (import-linter contracts in
pyproject.toml), dependencies through their public APIs only, modules of one concept each."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "bench"
MAX_LINES = 350
# Modules above MAX_LINES, each one concept (README, "Layout"):
ONE_CONCEPT = {
    "policies/compact.py": "the compaction replay: micro_compact, collapse, auto_compact and the view, call by call",
    "llm/client.py": "the model client: cache, retries, limiter, accounting of one call, and its construction",
    "llm/limiter.py": "the concurrency limiters (fixed, adaptive AIMD with pacing) and their accounting",
    "llm/batch.py": "the Batch API round: gathering, submission, polling, the ledger, each request retried",
    "runner/pipeline.py": "a job's phases on worker threads: views, answers, judgements and their records",
    "study/jobs.py": "reading job directories: records, config, status, label, the metrics recomputed from them",
    "metrics.py": "a job's figures from its records (issue 33 splits it when the modules move into packages)",
    "study/text.py": "the report's text: cells, tables and the markdown report (issue 33 splits it)",
    "stats.py": "the uncertainty of the figures: intervals of shares and paired differences (the estimand's "
                "one-way method, the two-way one behind stats.generalize_types), the sign-flip test, t quantiles",
}


def test_the_import_graph_keeps_its_contracts():
    linter = Path(sys.executable).parent / "lint-imports"
    done = subprocess.run([str(linter)], capture_output=True, text=True, cwd=SRC.parents[1], timeout=120)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout


def _private_uses(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    third_party: set[str] = set()
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if not alias.name.startswith("bench"):
                    third_party.add(alias.asname or alias.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom) and node.module and not node.module.startswith("bench") and node.level == 0:
            if node.module != "__future__" and any(part.startswith("_") for part in node.module.split(".")):
                found.append(f"from {node.module} import ...")
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.startswith("__"):
                    found.append(f"from {node.module} import {alias.name}")
                else:
                    third_party.add(alias.asname or alias.name)
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")
                and isinstance(node.value, ast.Name) and node.value.id in third_party):
            found.append(f"{node.value.id}.{node.attr}")
    text = path.read_text(encoding="utf-8")
    found += [m.group(0) for m in re.finditer(r"getattr\([^,()]+, \"_[a-z]\w*\"", text)]
    return found


def test_no_private_name_of_a_dependency_is_used():
    offenders = {str(p.relative_to(SRC)): uses for p in SRC.rglob("*.py") if (uses := _private_uses(p))}
    assert not offenders, offenders


def test_modules_hold_one_concept():
    long = {str(p.relative_to(SRC)): len(p.read_text(encoding="utf-8").splitlines()) for p in SRC.rglob("*.py")}
    too_long = {name: n for name, n in long.items() if n > MAX_LINES and name not in ONE_CONCEPT}
    assert not too_long, f"split these by concept, or name their one concept in ONE_CONCEPT: {too_long}"
    assert all(long.get(name, 0) > MAX_LINES for name in ONE_CONCEPT), "an allowed module shrank: drop it"


def test_every_vendor_contract_lists_every_other_top_level_module():
    """A forbidden contract only covers the modules it lists: a new top-level module must be in each."""
    import tomllib

    config = tomllib.loads((SRC.parents[1] / "pyproject.toml").read_text(encoding="utf-8"))
    top = {f"bench.{p.stem}" for p in SRC.iterdir()
           if (p.suffix == ".py" and p.stem != "__init__") or (p.is_dir() and (p / "__init__.py").exists())}
    vendor = [c for c in config["tool"]["importlinter"]["contracts"]
              if c["type"] == "forbidden" and c["name"].startswith("only bench.")]
    assert len(vendor) >= 5
    for contract in vendor:
        allowed = set(re.findall(r"bench\.\w+", contract["name"].split(" import")[0]))
        assert top - allowed - set(contract["source_modules"]) == set(), contract["name"]
