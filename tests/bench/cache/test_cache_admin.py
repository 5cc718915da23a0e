"""python -m bench.cache stats|verify|prune on a SQLite cache: what each says, entries without a checksum are
not trusted, prune refuses absurd ages, says what it removes (--dry-run removes nothing) and waits for a lock."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from bench.cache import ResponseCache
from bench.cache import main as cache_main


def test_cache_command_stats_verify_prune(tmp_path, capsys):
    path = tmp_path / "c.sqlite"
    with sqlite3.connect(path) as conn:  # a cache written before checksums existed: one entry
        conn.execute("CREATE TABLE responses (key TEXT PRIMARY KEY, kind TEXT NOT NULL, model TEXT NOT NULL, "
                     "created REAL NOT NULL, response TEXT NOT NULL)")
        conn.execute("INSERT INTO responses VALUES ('old', 'judge', 'm', 0, '{\"message\": {}}')")
    cache = ResponseCache(path)
    assert cache.get("old") is None  # no checksum: not trusted, read as missing (issue 20)
    with sqlite3.connect(path) as conn:
        conn.execute("INSERT INTO responses VALUES ('old', 'judge', 'm', 0, '{\"message\": {}}', NULL)")
    for i in range(3):
        cache.put(f"k{i}", {"message": {"content": f"reply {i}"}}, kind="answer", model="m")
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE responses SET response = 'garbage' WHERE key = 'k1'")
    cache.close()
    assert cache_main(["stats", "--path", str(path)]) == 0
    assert "4 entries" in capsys.readouterr().out
    assert cache_main(["verify", "--path", str(path)]) == 1
    assert "2 ok, 1 without checksum (not trusted: jobs read them as missing), 1 bad" in capsys.readouterr().out
    assert cache_main(["prune", "--path", str(path)]) == 0
    assert "removed 2 entries, 2 left" in capsys.readouterr().out
    assert cache_main(["verify", "--path", str(path)]) == 0
    assert cache_main(["prune", "--path", str(path), "--kind", "answer", "--older-than", "0"]) == 0
    assert "removed 2 entries, 0 left" in capsys.readouterr().out
    for leftover in tmp_path.glob("c.sqlite-*"):  # the WAL files of the healthy cache
        leftover.unlink()
    path.write_bytes(b"not a database at all" * 100)
    assert cache_main(["verify", "--path", str(path)]) == 2
    assert "not a readable SQLite database" in capsys.readouterr().err
    done = subprocess.run([sys.executable, "-m", "bench.cache", "stats", "--path", str(tmp_path / "none.sqlite")],
                          capture_output=True, text=True)
    assert done.returncode != 0 and "no cache file" in done.stderr


def _cache_with(path: Path, n: int = 3) -> None:
    cache = ResponseCache(path)
    for i in range(n):
        cache.put(f"k{i}", {"message": {"content": f"reply {i}"}}, kind="answer", model="m")
    cache.close()


@pytest.mark.parametrize("age", ["-1", "-0.5", "1e9", "nan", "inf"])
def test_prune_refuses_negative_or_absurd_ages_and_deletes_nothing(tmp_path, capsys, age):
    path = tmp_path / "c.sqlite"
    _cache_with(path)
    assert cache_main(["prune", "--path", str(path), f"--older-than={age}"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --older-than") and err.count("\n") == 1
    assert len(ResponseCache(path)) == 3


def test_prune_says_what_and_how_many_and_dry_run_removes_nothing(tmp_path, capsys):
    path = tmp_path / "c.sqlite"
    _cache_with(path)
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE responses SET response = 'garbage' WHERE key = 'k1'")
    assert cache_main(["prune", "--path", str(path), "--kind", "answer", "--older-than", "0", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "would remove 3 of 3 entries: 1 bad, 2 selected (older than 0 days, kind answer)" in out
    assert "removed" not in out
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 3
    assert cache_main(["prune", "--path", str(path)]) == 0
    out = capsys.readouterr().out
    assert "removing 1 of 3 entries: 1 bad" in out and "removed 1 entries, 2 left" in out


def test_a_cache_entry_whose_checksum_was_cleared_is_not_trusted_and_verify_says_so(tmp_path, capsys):
    path = tmp_path / "c.sqlite"
    _cache_with(path)
    with sqlite3.connect(path) as conn:  # tamper: new bytes, checksum cleared
        conn.execute("UPDATE responses SET response = '{\"message\": {\"content\": \"forged\"}}', checksum = NULL "
                     "WHERE key = 'k0'")
    assert cache_main(["verify", "--path", str(path)]) == 1
    out = capsys.readouterr().out
    assert "1 without checksum (not trusted" in out and "written before checksums" not in out
    assert ResponseCache(path).get("k0") is None  # read as missing: the forged reply is never used


def test_prune_on_a_locked_cache_says_it_is_locked_and_does_not_advise_deleting_it(tmp_path, capsys):
    path = tmp_path / "c.sqlite"
    _cache_with(path)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        assert cache_main(["prune", "--path", str(path), "--wait", "0.2"]) == 2
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    err = capsys.readouterr().err
    assert "locked by another process" in err and "retry" in err
    assert "delete" not in err and "not a readable" not in err
    assert len(ResponseCache(path)) == 3
