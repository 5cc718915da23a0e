"""The opening the small rejected rows (008-010) share: task, a look around, a view, a repro."""

from __future__ import annotations

from samplegen.openhands import SYSTEM_PROMPT, user_prompt
from samplegen.trajectory import Repo, Traj

__all__ = ["small_python_row"]


def small_python_row(t: Traj, repo: Repo, issue: str, repro: str, repro_out: str) -> None:
    t.system(SYSTEM_PROMPT)
    t.user(user_prompt(repo.root, issue))
    rel = next(iter(repo.files))
    t.act("", repo.sh(f"cd {repo.root} && git status --short && ls", "README.md\n"
                      + rel.split("/")[0] + "\npyproject.toml\ntests"))
    t.act("", repo.view(rel))
    t.act("", repo.sh(repro, repro_out))
