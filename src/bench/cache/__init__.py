"""Persistent, content-addressed response cache for model calls (answers, summaries, judging).

A key is the SHA-256 of everything that changes a reply: model name, endpoint, sampling
parameters, seed, messages and tools (see :func:`request_key`). Arm names, job names and
API keys are never part of it, so the full-history arm's replies are shared by every
config of the same seed, and a repeated job makes zero model calls.

One SQLite file (``cache.path``) is shared by every job and process: WAL journal, a busy
timeout, and ``INSERT OR IGNORE`` make concurrent readers and writers safe (Hydra's
joblib launcher runs jobs in parallel processes). Each thread uses its own connection.
Jobs on several machines share one PostgreSQL server instead (``cache.url``,
:class:`PostgresCache`: the same keys, stored text and checksums, in table ``bench_responses``).

Integrity: each entry carries the SHA-256 of its stored text (``checksum``), checked on
every read. An entry whose bytes changed, or that is not a JSON object, counts as missing
(a warning names the cache file and the key; the entry is deleted, so the fresh reply
replaces it). A file that is not a readable SQLite database (or fails mid-run) is used as
no cache at all: one warning naming the path, the job goes on and calls the endpoint, the
file is left untouched for ``verify``. An entry without a checksum (written before checksums
existed, or one whose checksum was cleared) is not trusted: read as missing and replaced like a
damaged one (``verify`` counts it apart, ``prune`` removes it). Keys never changed.

    cache = ResponseCache(".cache/responses.sqlite")
    key = request_key({"model": "gpt-4o-mini", "messages": [...]})
    hit = cache.get(key)            # dict or None
    cache.put(key, {"message": {...}, "usage": {...}}, kind="answer", model="gpt-4o-mini")

The file from the command line::

    uv run python -m bench.cache stats  [--path .cache/responses.sqlite]   # entries per kind and model, size
    uv run python -m bench.cache verify [--path ...]                        # integrity, bad and unverified entries
    uv run python -m bench.cache prune  [--path ...] [--older-than DAYS] [--kind K] [--model M] [--dry-run]
                                        # removes bad and unchecksummed entries, and those matching every
                                        # filter given; says what and how many first (--dry-run: only that)
    uv run python -m bench.cache verify --url postgresql://user@host:port/db    # the same on a PostgreSQL cache
"""

from __future__ import annotations

import threading
from pathlib import Path

from bench.cache.admin import main
from bench.cache.postgres import CacheUnavailable, PostgresCache, shown_url
from bench.cache.sqlite import (
    CACHE_VERSION,
    DEFAULT_PATH,
    KEY_JSON,
    ReplyStore,
    ResponseCache,
    checksum,
    decode_reply,
    encode_reply,
    request_key,
)

__all__ = ["CACHE_VERSION", "KEY_JSON", "CacheUnavailable", "PostgresCache", "ReplyStore", "ResponseCache", "open_cache",
           "request_key", "checksum", "decode_reply", "encode_reply", "shown_url", "main", "DEFAULT_PATH"]


_OPEN: dict[str, ReplyStore] = {}
_OPEN_LOCK = threading.Lock()


def open_cache(path: str | Path | None, enabled: bool = True, url: str | None = None) -> ReplyStore | None:
    """The process-wide cache object for a URL (PostgreSQL) or else a path (SQLite); None when disabled."""
    if not enabled:
        return None
    if url:
        resolved = url.strip()
    elif path:
        resolved = str(Path(path).expanduser().resolve())
    else:
        return None
    with _OPEN_LOCK:
        if resolved not in _OPEN:
            _OPEN[resolved] = PostgresCache(resolved) if url else ResponseCache(resolved)
        return _OPEN[resolved]
