"""Row 008: rejected, a tool call whose arguments are truncated JSON."""

from __future__ import annotations

import json

from samplegen.expected import Rejected, SampleRow, synthetic_row
from samplegen.openhands import TOOLS_NEW, finish
from samplegen.rows.small import small_python_row
from samplegen.runners import pytest_line
from samplegen.trajectory import Repo, Traj

SHAPES = '''"""Polygon helpers."""

from __future__ import annotations

Point = tuple[float, float]


def area(points: list[Point]) -> float:
    """Area of a simple polygon (shoelace formula)."""
    total = 0.0
    for (x1, y1), (x2, y2) in zip(points, points[1:] + points[:1]):
        total += x1 * y2 - x2 * y1
    return total / 2


def perimeter(points: list[Point]) -> float:
    return sum(
        ((x2 - x1) ** 2 + (y2 - y1) ** 2) ** 0.5
        for (x1, y1), (x2, y2) in zip(points, points[1:] + points[:1])
    )
'''


def build() -> SampleRow:
    tid = "synthetic-008"
    root = "/workspace/acme__shapes__0.2"
    repo = Repo(root, {"shapes/poly.py": SHAPES})
    t = Traj(tid)
    repro = (f"cd {root} && python -c \"from shapes.poly import area; "
             "print(area([(0, 0), (0, 1), (1, 1), (1, 0)]))\"")
    small_python_row(t, repo, """
area() is negative for clockwise polygons

`area([(0, 0), (0, 1), (1, 1), (1, 0)])` returns `-1.0`. The area should not depend on
the orientation of the points.
""", repro, "-1.0")
    # valid call, then a call whose arguments are truncated (invalid JSON) but has a reply
    call = repo.replace("shapes/poly.py", "    return total / 2", "    return abs(total) / 2")
    good_args = json.dumps(call.args, ensure_ascii=False)
    call.args = good_args[:-1]  # missing closing brace: not valid JSON
    bad_idx = t.index()
    bad_id = t.act("Use the absolute value.", call)[0]
    t.act("", repo.sh(repro, "1.0"))
    t.act("", repo.sh(f"cd {root} && python -m pytest tests -q",
                      pytest_line("......", "[100%]") + "\n6 passed in 0.02s"))
    t.act("", repo.sh(f"cd {root} && git diff --stat",
                      " shapes/poly.py | 2 +-\n 1 file changed, 1 insertion(+), 1 deletion(-)"))
    t.act("", finish("area() now returns the absolute area."))
    expected = Rejected(
        reason=(f"tool-call arguments are not valid JSON (message {bad_idx}, call "
                f"{bad_id}: truncated, missing closing brace)"),
        message=bad_idx, call_id=bad_id, says="not valid JSON",
    )
    return synthetic_row(
        tid, "acme__shapes-7", "acme/shapes", True, "submit", repo.diff(), TOOLS_NEW, t.messages,
        "Rejected row: one str_replace_editor call has truncated arguments that are not valid "
        "JSON, so the case is rejected with a reason (not repaired, no crash).",
        expected,
    )
