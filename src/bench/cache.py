"""Persistent, content-addressed response cache for model calls (answers, summaries, judging).

A key is the SHA-256 of everything that changes a reply: model name, endpoint, sampling
parameters, seed, messages and tools (see :func:`request_key`). Arm names, job names and
API keys are never part of it, so the full-history arm's replies are shared by every
config of the same seed, and a repeated job makes zero model calls.

One SQLite file (``cache.path``) is shared by every job and process: WAL journal, a busy
timeout, and ``INSERT OR IGNORE`` make concurrent readers and writers safe (Hydra's
joblib launcher runs jobs in parallel processes). Each thread uses its own connection.

    cache = ResponseCache(".cache/responses.sqlite")
    key = request_key({"model": "gpt-4o-mini", "messages": [...]})
    hit = cache.get(key)            # dict or None
    cache.put(key, {"message": {...}, "usage": {...}}, kind="answer", model="gpt-4o-mini")
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

__all__ = ["CACHE_VERSION", "KEY_JSON", "ResponseCache", "open_cache", "request_key"]

CACHE_VERSION = 1  # bump when the stored reply format or the key recipe changes
# The key's canonical JSON (bench.wire splices keys from per-message pieces with the same settings).
KEY_JSON: dict[str, Any] = {"sort_keys": True, "ensure_ascii": False, "separators": (",", ":"), "default": str}

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key      TEXT PRIMARY KEY,
    kind     TEXT NOT NULL,
    model    TEXT NOT NULL,
    created  REAL NOT NULL,
    response TEXT NOT NULL
)
"""


def request_key(request: dict[str, Any]) -> str:
    """SHA-256 hex digest of a request in canonical JSON (sorted keys, no whitespace)."""
    canonical = json.dumps({"v": CACHE_VERSION, **request}, **KEY_JSON)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class ResponseCache:
    """SQLite key -> JSON reply store, safe across threads and processes."""

    def __init__(self, path: str | Path, busy_timeout_s: float = 60.0) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.busy_timeout_s = busy_timeout_s
        self._local = threading.local()
        conn = self._conn()
        with conn:
            conn.execute(_SCHEMA)

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=self.busy_timeout_s, isolation_level=None)
            conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout_s * 1000)}")
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            self._local.conn = conn
        return conn

    def get(self, key: str) -> dict[str, Any] | None:
        row = self._retry(lambda c: c.execute("SELECT response FROM responses WHERE key = ?",
                                              (key,)).fetchone())
        return json.loads(row[0]) if row else None

    def put(self, key: str, response: dict[str, Any], *, kind: str, model: str) -> None:
        text = json.dumps(response, ensure_ascii=False, default=str)
        self._retry(lambda c: c.execute(
            "INSERT OR IGNORE INTO responses (key, kind, model, created, response) VALUES (?, ?, ?, ?, ?)",
            (key, kind, model, time.time(), text)))

    def __len__(self) -> int:
        return self._retry(lambda c: c.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def _retry(self, action):
        """Run one statement; a lock held past the busy timeout is retried a few times."""
        for attempt in range(5):
            try:
                return action(self._conn())
            except sqlite3.OperationalError as err:
                if "locked" not in str(err) and "busy" not in str(err) or attempt == 4:
                    raise
                time.sleep(0.2 * (attempt + 1))
        return None  # unreachable

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None


_OPEN: dict[str, ResponseCache] = {}
_OPEN_LOCK = threading.Lock()


def open_cache(path: str | Path | None, enabled: bool = True) -> ResponseCache | None:
    """The process-wide cache object for a path (None when disabled or no path)."""
    if not enabled or not path:
        return None
    resolved = str(Path(path).expanduser().resolve())
    with _OPEN_LOCK:
        if resolved not in _OPEN:
            _OPEN[resolved] = ResponseCache(resolved)
        return _OPEN[resolved]
