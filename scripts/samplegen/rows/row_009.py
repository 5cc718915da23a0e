"""Row 009: rejected, a tool result whose tool_call_id matches no call."""

from __future__ import annotations

from samplegen.expected import Rejected, SampleRow, synthetic_row
from samplegen.openhands import TOOLS_NEW, finish
from samplegen.rows.small import small_python_row
from samplegen.runners import pytest_line
from samplegen.trajectory import Repo, Traj, bash_out

MAILER = '''"""Address helpers for acme-mailer."""

from __future__ import annotations


def normalize_address(address: str) -> str:
    """Lower-case the domain part of an e-mail address."""
    local, _, domain = address.partition("@")
    return f"{local}@{domain.lower()}"


def split_recipients(text: str) -> list[str]:
    return [part.strip() for part in text.split(",")]
'''


def build() -> SampleRow:
    tid = "synthetic-009"
    root = "/workspace/acme__mailer__4.0"
    repo = Repo(root, {"mailer/address.py": MAILER})
    t = Traj(tid)
    repro = (f"cd {root} && python -c \"from mailer.address import split_recipients; "
             "print(split_recipients('a@x.org, b@y.org,'))\"")
    small_python_row(t, repo, """
split_recipients keeps empty entries

`split_recipients("a@x.org, b@y.org,")` returns `['a@x.org', 'b@y.org', '']`. Empty entries
(trailing commas, doubled commas) should be skipped.
""", repro, "['a@x.org', 'b@y.org', '']")
    t.act("", repo.replace(
        "mailer/address.py",
        '    return [part.strip() for part in text.split(",")]',
        '    return [part.strip() for part in text.split(",") if part.strip()]',
    ))
    orphan_idx = t.index()
    # a tool result whose tool_call_id matches no call in the row
    orphan_id = Traj(tid + "-orphan").new_id()
    t.tool_raw("execute_bash", bash_out("['a@x.org', 'b@y.org']", 0, root), orphan_id)
    t.act("", repo.sh(repro, "['a@x.org', 'b@y.org']"))
    t.act("", repo.sh(f"cd {root} && python -m pytest tests -q",
                      pytest_line("....", "[100%]") + "\n4 passed in 0.01s"))
    t.act("", finish("split_recipients now skips empty entries."))
    expected = Rejected(
        reason=f"tool result without a call (message {orphan_idx}, tool_call_id {orphan_id})",
        message=orphan_idx, call_id=orphan_id, says="has no call",
    )
    return synthetic_row(
        tid, "acme__mailer-12", "acme/mailer", True, "submit", repo.diff(), TOOLS_NEW, t.messages,
        "Rejected row: a tool result in the middle whose tool_call_id matches no call.",
        expected,
    )
