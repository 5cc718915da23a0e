"""A damaged response cache never changes an answer: a changed entry fails its checksum and is asked again,
a corrupted database is set aside with a warning and the job completes."""

from __future__ import annotations

import json
import logging
import os
import sqlite3

from bench.cache import ResponseCache, request_key
from bench.runner import run

from fake_openai import FakeOpenAI
from jobs import canonical, job_cfg, openai_args


def test_a_changed_cache_entry_counts_as_missing_with_a_warning_and_is_replaced(tmp_path, caplog):
    path = tmp_path / "responses.sqlite"
    cache = ResponseCache(path)
    key = request_key({"model": "m", "messages": [{"type": "human", "content": "hi"}]})
    cache.put(key, {"message": {"content": "The answer is 42"}, "usage": {}}, kind="answer", model="m")
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE responses SET response = replace(response, '42', '43')")
    with caplog.at_level(logging.WARNING):
        assert cache.get(key) is None
    assert str(path) in caplog.text and key[:16] in caplog.text and "checksum" in caplog.text
    cache.put(key, {"message": {"content": "The answer is 42"}, "usage": {}}, kind="answer", model="m")
    assert cache.get(key) == {"message": {"content": "The answer is 42"}, "usage": {}}


def test_changed_bytes_in_the_cache_cannot_change_an_answer(tmp_path, caplog):
    cache = tmp_path / "cache.sqlite"
    with FakeOpenAI() as server:
        args = openai_args(server.base_url, "cache.enabled=true", f"cache.path={cache}")
        first = run(job_cfg(*args, output_dir=str(tmp_path / "a")))
        made = server.stats()["requests"]
        with sqlite3.connect(cache) as conn:  # flip bytes inside one stored reply (its checksum stays)
            key, text = conn.execute("SELECT key, response FROM responses WHERE kind = 'answer' LIMIT 1").fetchone()
            changed = text.replace('"content": "', '"content": "NOT ', 1)
            assert changed != text
            conn.execute("UPDATE responses SET response = ? WHERE key = ?", (changed, key))
        with caplog.at_level(logging.WARNING):
            second = run(job_cfg(*args, output_dir=str(tmp_path / "b")))
        asked_again = server.stats()["requests"] - made
    assert made > 0 and asked_again == 1  # only the damaged entry went back to the endpoint
    assert f"response cache {cache}" in caplog.text and "damaged" in caplog.text
    assert second["accuracy"] == first["accuracy"]
    assert canonical(tmp_path / "b" / "answers.jsonl", ("usage",)) == canonical(tmp_path / "a" / "answers.jsonl",
                                                                                ("usage",))


def test_a_corrupted_cache_database_is_not_used_and_the_job_completes(tmp_path, caplog):
    cache = tmp_path / "cache.sqlite"
    cache.write_bytes(b"SQLite format 3\x00" + os.urandom(4096))  # torn or overwritten file
    with FakeOpenAI() as server, caplog.at_level(logging.WARNING):
        metrics = run(job_cfg(*openai_args(server.base_url, "cache.enabled=true", f"cache.path={cache}"),
                              output_dir=str(tmp_path / "job")))
    assert metrics["n_errors"] == 0 and metrics["n_scored"] == metrics["n_questions"] > 0
    assert json.loads((tmp_path / "job" / "run.json").read_text())["status"] == "complete"
    assert f"response cache {cache} cannot be used" in caplog.text
