"""Row 010: rejected, a call in the middle of the history without a result."""

from __future__ import annotations

from samplegen.expected import Rejected, SampleRow, synthetic_row
from samplegen.openhands import TOOLS_NEW, finish
from samplegen.rows.small import small_python_row
from samplegen.runners import pytest_line
from samplegen.trajectory import Call, Repo, Traj

CACHE = '''"""A tiny TTL cache."""

from __future__ import annotations

import time


class TTLCache:
    def __init__(self, ttl: float, clock=time.monotonic):
        self.ttl = ttl
        self.clock = clock
        self._data: dict[str, tuple[float, object]] = {}

    def set(self, key: str, value: object) -> None:
        self._data[key] = (self.clock(), value)

    def get(self, key: str, default: object = None) -> object:
        item = self._data.get(key)
        if item is None:
            return default
        stored, value = item
        if self.clock() - stored > self.ttl:
            return default
        return value
'''


def build() -> SampleRow:
    tid = "synthetic-010"
    root = "/workspace/acme__cache__1.1"
    repo = Repo(root, {"cache/ttl.py": CACHE})
    t = Traj(tid)
    repro = (f"cd {root} && python -c \"from cache.ttl import TTLCache; "
             "c = TTLCache(0); c.set('a', 1); print(len(c._data), c.get('a'))\"")
    small_python_row(t, repo, """
Expired entries are never evicted

`TTLCache.get` returns the default for expired keys but leaves them in the cache, so
memory grows forever. Expired entries should be removed when they are read.
""", repro, "1 None")
    t.act("", repo.replace(
        "cache/ttl.py",
        "        if self.clock() - stored > self.ttl:\n            return default",
        "        if self.clock() - stored > self.ttl:\n"
        "            del self._data[key]\n"
        "            return default",
    ))
    missing_idx = t.index()
    # a call in the middle that never got a result
    ids = t.act("", Call("execute_bash", {"command": repro}, None))
    t.act("", repo.sh(repro, "0 None"))
    t.act("", repo.sh(f"cd {root} && python -m pytest tests -q",
                      pytest_line(".....", "[100%]") + "\n5 passed in 0.02s"))
    t.act("", finish("Expired entries are now removed when read."))
    expected = Rejected(
        reason=f"tool call without a result in the middle (message {missing_idx}, call {ids[0]})",
        message=missing_idx, call_id=ids[0], says="has no result",
    )
    return synthetic_row(
        tid, "acme__cache-5", "acme/cache", True, "submit", repo.diff(), TOOLS_NEW, t.messages,
        "Rejected row: an execute_bash call in the middle of the history has no result (not "
        "trailing, so it is not dropped).",
        expected,
    )
