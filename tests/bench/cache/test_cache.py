"""The persistent response cache: content addressing, persistence, safety across processes."""

from __future__ import annotations

import multiprocessing
import sqlite3

from bench.cache import ResponseCache, open_cache, request_key


def test_put_get_roundtrip_and_persistence(tmp_path):
    path = tmp_path / "sub" / "responses.sqlite"
    cache = ResponseCache(path)
    key = request_key({"model": "m", "messages": [{"type": "human", "content": "hi"}]})
    assert cache.get(key) is None
    cache.put(key, {"message": {"content": "hello"}, "usage": {"input_tokens": 3}}, kind="answer", model="m")
    cache.put(key, {"message": {"content": "ignored second write"}}, kind="answer", model="m")
    cache.close()
    reopened = ResponseCache(path)
    assert reopened.get(key) == {"message": {"content": "hello"}, "usage": {"input_tokens": 3}}
    assert len(reopened) == 1


def test_keys_are_canonical_and_content_addressed():
    a = request_key({"model": "m", "params": {"seed": 0, "temperature": 0}})
    b = request_key({"params": {"temperature": 0, "seed": 0}, "model": "m"})
    assert a == b and len(a) == 64
    assert a != request_key({"model": "m", "params": {"seed": 1, "temperature": 0}})


def test_wal_mode_and_busy_timeout(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    conn = cache._conn()
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA busy_timeout").fetchone()[0] >= 10_000


def test_open_cache_is_shared_per_path_and_can_be_disabled(tmp_path):
    assert open_cache(tmp_path / "x.sqlite") is open_cache(str(tmp_path / "x.sqlite"))
    assert open_cache(tmp_path / "x.sqlite", enabled=False) is None
    assert open_cache(None) is None


def _writer(path: str, worker: int, n: int) -> None:
    cache = ResponseCache(path)
    for i in range(n):
        shared = request_key({"i": i})  # every process writes the same keys too
        cache.put(shared, {"i": i}, kind="answer", model="m")
        own = request_key({"worker": worker, "i": i})
        cache.put(own, {"worker": worker, "i": i}, kind="judge", model="m")
        assert cache.get(shared) == {"i": i}


def test_many_processes_write_the_same_file_safely(tmp_path):
    path = str(tmp_path / "shared.sqlite")
    ResponseCache(path)
    context = multiprocessing.get_context("spawn")
    procs = [context.Process(target=_writer, args=(path, w, 60)) for w in range(4)]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(120)
    assert [p.exitcode for p in procs] == [0, 0, 0, 0]
    count = sqlite3.connect(path).execute("SELECT COUNT(*) FROM responses").fetchone()[0]
    assert count == 60 + 4 * 60


def test_threads_share_one_cache_object(tmp_path):
    import threading

    cache = ResponseCache(tmp_path / "t.sqlite")
    errors = []

    def work(worker: int) -> None:
        try:
            for i in range(50):
                key = request_key({"w": worker, "i": i})
                cache.put(key, {"v": i}, kind="answer", model="m")
                assert cache.get(key) == {"v": i}
        except Exception as err:  # noqa: BLE001
            errors.append(err)

    threads = [threading.Thread(target=work, args=(w,)) for w in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors and len(cache) == 300
