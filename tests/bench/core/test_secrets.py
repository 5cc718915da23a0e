"""Secrets on every surface that takes a setting: a password in any form libpq reads it, a key in a
URL's fragment, and the tools beside the job (``bench.estimate``, ``bench.cache``) hold the same line
as ``bench.main``: refused in one line before anything is written, or scrubbed wherever it would go.

Each test failed before its fix (issue 32, "Secrets").
"""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from bench.core import redact

from commands import bench, one_line_error, tool
from fake_openai import FakeOpenAI

PASSWORD = "Pw7kQ2zXr9"  # not key-shaped: only where it stands says it is a password


def _nothing_written(root: Path, *allowed: str) -> None:
    """No job-like directory (nor anything else) was left in ``root``."""
    left = sorted(p.name for p in root.iterdir() if p.name not in allowed)
    assert left == [], left


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# =========================================================================== libpq's keyword form


@pytest.mark.parametrize("url", [
    f"host=db user=bench password={PASSWORD} dbname=bench",
    f"password={PASSWORD} host=db",
    f"host=db dbname=bench password = {PASSWORD}",
    f"host=db sslpassword={PASSWORD} dbname=bench",
])
@pytest.mark.parametrize("model", ["offline", pytest.param("openai", marks=pytest.mark.slow)])  # the same check
def test_a_password_in_a_keyword_form_cache_url_is_refused_before_anything_is_written(tmp_path, url, model):
    done = bench(tmp_path, f"model={model}", "model.api_key_env=null", f"cache.url='{url}'", "dataset.limit=1",
                 f"output_dir={tmp_path / 'job'}")
    line = one_line_error(done, "cache.url", "PGPASSWORD")
    assert PASSWORD not in done.stdout + done.stderr, line
    _nothing_written(tmp_path)


def test_a_keyword_form_password_is_refused_as_a_setting_too():
    refusal = redact.secret_in_setting("cache.url", f"host=db password={PASSWORD}", command_line=False)
    assert refusal and "password" in refusal and PASSWORD not in refusal
    assert redact.secret_in_setting("cache.url", "host=db user=bench dbname=bench", command_line=False) is None


# =========================================================================== a key in a URL's fragment


def test_a_key_in_a_base_url_fragment_reaches_no_hydra_file_log_or_console(tmp_path):
    secret = "fr4gK3yZq8"
    job = tmp_path / "job"
    with FakeOpenAI() as server:
        done = bench(tmp_path, "model=openai", f"model.base_url='{server.base_url}#{secret}'", "model.api_key_env=null",
                     "dataset.limit=1", "cache.enabled=false", f"hydra.run.dir={job}")
    assert done.returncode in (0, 2), done.stderr
    assert secret not in done.stdout + done.stderr
    files = [p for p in job.rglob("*") if p.is_file()]
    assert {"main.log", "config.yaml", "overrides.yaml", "hydra.yaml"} <= {p.name for p in files}
    for path in files:
        assert secret.encode() not in path.read_bytes(), path


def test_a_key_in_the_fragment_of_an_unreachable_endpoint_is_not_in_the_error_line(tmp_path):
    secret = "fr4gK3yZq8"
    job = tmp_path / "job"
    done = bench(tmp_path, "model=openai", f"model.base_url='http://127.0.0.1:{_free_port()}/v1#{secret}'",
                 "model.api_key_env=null", "model.timeout=2",
                 "dataset.limit=1", "cache.enabled=false", f"hydra.run.dir={job}")
    line = one_line_error(done, "cannot reach")
    assert secret not in done.stdout + done.stderr, line
    for path in (p for p in job.rglob("*") if p.is_file()):
        assert secret.encode() not in path.read_bytes(), path


def test_url_fragments_are_registered_and_masked():
    redact.register_urls("http://host:1/v1#fragKEY123456")
    assert "fragKEY123456" not in redact.scrub("GET http://host:1/v1#fragKEY123456 failed")
    assert redact.mask_urls("a=http://h/v1#secretfrag,b=2") == "a=http://h/v1#***,b=2"
    assert redact.mask_urls("a=http://h/v1?k=v#f") == "a=http://h/v1?***"


# =========================================================================== the tools beside the job


@pytest.mark.parametrize("override", [
    "+model.api_key=sk-abcdefghijklmnopqrstuvwx",
    f"cache.url=postgresql://bench:{PASSWORD}@db/bench",
    f"cache.url='host=db password={PASSWORD}'",
])
def test_estimate_refuses_a_key_or_a_password_on_its_command_line(tmp_path, override):
    done = tool("bench.estimate", override, cwd=tmp_path)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stdout == "" and done.stderr.count("\n") == 1 and done.stderr.startswith("error: ")
    assert PASSWORD not in done.stderr and "sk-abcdefghijklmnop" not in done.stderr
    _nothing_written(tmp_path)


@pytest.mark.parametrize("url", [f"postgresql://bench:{PASSWORD}@127.0.0.1:1/bench",
                                 f"postgresql://bench@127.0.0.1:1/bench?password={PASSWORD}",
                                 f"host=127.0.0.1 port=1 password={PASSWORD}"])
def test_cache_admin_refuses_a_password_in_its_url_as_jobs_do(tmp_path, url):
    done = tool("bench.cache", "stats", "--url", url, "--wait", "1", cwd=tmp_path)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stderr.count("\n") == 1 and "PGPASSWORD" in done.stderr, done.stderr
    assert PASSWORD not in done.stdout + done.stderr
    assert done.stderr.startswith("error: --url")
    assert "refused" not in done.stderr and "connection failed" not in done.stderr  # refused before connecting
