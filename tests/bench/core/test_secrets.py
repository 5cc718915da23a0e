"""Secrets on every surface that takes a setting: a key on the command line or in a config value, a
password in any form libpq reads it, a key in a URL's query, userinfo or fragment, and the tools beside
the job (``bench.estimate``, ``bench.cache``) hold the same line as ``bench.main``: refused in one line
before anything is written, or scrubbed wherever it would go (records, logs, Hydra's files, the console,
a third-party logger, Langfuse's error replies).

Each test failed before its fix (issues 12, 20 and 32).
"""

from __future__ import annotations

import base64
import io
import json
import logging
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from bench.core import redact

from commands import bench, one_line_error, tool
from fake_openai import FakeOpenAI
from jobs import job_cfg

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


def test_every_log_line_is_scrubbed_of_configured_secrets(monkeypatch):
    from bench.core import redact
    from bench.tracing import langfuse_settings

    secret, public = "sk-lf-" + "9f2c" * 8, "pk-lf-" + "77ab" * 4
    model_key = "sk-proj-" + "Zq81" * 8
    monkeypatch.setenv("TEST_MODEL_KEY", model_key)
    redact.register_env("TEST_MODEL_KEY")
    langfuse_settings({"LANGFUSE_PUBLIC_KEY": public, "LANGFUSE_SECRET_KEY": secret, "LANGFUSE_BASE_URL": "http://x"})
    basic = base64.b64encode(f"{public}:{secret}".encode()).decode()
    redact.install_logging()
    stream = io.StringIO()
    own = logging.getLogger(f"{__name__}.third_party")  # a library logger with a handler of its own
    handler = logging.StreamHandler(stream)
    own.addHandler(handler)
    try:
        own.warning("export failed: 401 %s (Authorization: Basic %s)", secret, basic)
        own.error("model said %s", model_key)
        try:
            raise RuntimeError(f"bad key {model_key} / {secret}")
        except RuntimeError:
            own.exception("failed")
    finally:
        own.removeHandler(handler)
    text = stream.getvalue()
    assert "export failed: 401 ***" in text and "Traceback" in text
    for value in (secret, basic, model_key):
        assert value not in text


class _EchoAuth(BaseHTTPRequestHandler):
    """A careless Langfuse: every request fails with 401, quoting the Authorization header."""

    def log_message(self, *args):
        pass

    def _fail(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = json.dumps({"message": f"invalid credentials: {self.headers.get('Authorization')}"}).encode()
        self.send_response(401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _fail  # noqa: N815


def test_langfuse_errors_reach_no_log_or_output_unscrubbed(tmp_path):
    secret, public = "sk-lf-" + "5e1d" * 8, "pk-lf-" + "0a0b" * 4
    basic = base64.b64encode(f"{public}:{secret}".encode()).decode()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _EchoAuth)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        env = {"LANGFUSE_PUBLIC_KEY": public, "LANGFUSE_SECRET_KEY": secret,
               "LANGFUSE_BASE_URL": f"http://127.0.0.1:{server.server_address[1]}"}
        done = bench(tmp_path, "tracing.langfuse=true", "dataset.limit=1", f"hydra.run.dir={tmp_path / 'job'}",
                     env=env)
    finally:
        server.shutdown()
        server.server_close()
    assert done.returncode == 0, done.stderr
    log_text = (tmp_path / "job" / "main.log").read_text()
    assert "Langfuse" in log_text and "***" in log_text  # the error was logged, scrubbed
    for value in (secret, basic):
        assert value not in done.stdout + done.stderr
        for path in (tmp_path / "job").rglob("*"):
            assert not path.is_file() or value.encode() not in path.read_bytes(), path


KEY = "sk-proj-" + "Ab12Cd34" * 5


@pytest.mark.parametrize("args", [
    ["model=openai", f"+model.api_key={KEY}"],
    ["model=openai", f"model.extra_body={{api_key: {KEY}}}"],
    ["model=openai", f"+model.extra_body.authorization=Bearer {KEY}"],
    ["model=openai", f"model.model_kwargs={{user: {KEY}}}"],
    ["model=openai", "model.base_url=https://me:hunter2secret@api.example.com/v1"],
    ["model=openai", f"model.api_key_env={KEY}"],
    ["model=openai", "judge=llm", f"+judge.password={KEY[:12]}"],
    ["-m", "model=openai", f"+model.api_key={KEY},other"],
])
def test_keys_on_the_command_line_are_refused(args):
    from bench.main import UserError, preflight_args

    with pytest.raises(UserError, match="do not put keys") as refused:
        preflight_args(args)
    assert KEY not in str(refused.value) and "hunter2secret" not in str(refused.value)
    assert preflight_args(["model=openai", "model.api_key_env=OPENAI_API_KEY", "model.max_tokens=5"])


@pytest.mark.parametrize("args", [["model=openai", f"+model.api_key={KEY}"], ["-m", f"model.api_key_env={KEY},X"]])
def test_a_key_on_the_command_line_is_refused_before_anything_is_written(tmp_path, args):
    done = bench(tmp_path, *args)
    one_line_error(done, "environment")
    assert KEY not in done.stdout + done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # no outputs/, multirun/, .hydra, main.log


def test_a_key_pasted_from_the_environment_or_in_a_config_value_is_refused(tmp_path):
    done = bench(tmp_path, "model=openai", f"model.name={KEY}x", env={"MY_SERVICE_TOKEN": f"{KEY}x"})
    one_line_error(done, "model.name", "looks like an API key")
    from bench.config.checks import ConfigError, validate

    with pytest.raises(ConfigError, match="judge.api_key_env must be the NAME of an environment variable"):
        validate(job_cfg("judge=llm", **{"judge.api_key_env": KEY}))


def test_a_key_in_a_base_url_query_reaches_no_record_log_hydra_file_or_console(tmp_path):
    secret = "q7Z9xw2LmN4pR8tV"  # not sk-shaped: only its place in a URL query says it is a key
    job = tmp_path / "job"
    with FakeOpenAI() as server:
        done = bench(tmp_path, "model=openai", f"model.base_url='{server.base_url}?key={secret}&api-version=1'",
                     "model.api_key_env=null", "dataset.limit=2", "cache.enabled=false", f"hydra.run.dir={job}")
        assert server.stats()["requests"] > 0
    assert done.returncode == 0, done.stderr
    files = [p for p in job.rglob("*") if p.is_file()]
    assert {"run.json", "metrics.json", "main.log", "config.yaml", "overrides.yaml", "hydra.yaml"} <= {
        p.name for p in files}
    for path in files:
        assert secret.encode() not in path.read_bytes(), path
    assert secret not in done.stdout + done.stderr
    run_json = json.loads((job / "run.json").read_text())
    assert run_json["config"]["model"]["base_url"].endswith("?***")  # the URL is kept, its query hidden


def test_url_userinfo_and_query_values_are_registered_as_secrets():
    from bench.core import redact

    redact.register_urls(["x=https://alice:pw-0123456789@host/v1?token=abcdefgh12345678&v=2", {"u": "no url"}])
    text = redact.scrub("GET https://alice:pw-0123456789@host/v1?token=abcdefgh12345678&v=2 failed")
    assert "pw-0123456789" not in text and "abcdefgh12345678" not in text and "host/v1" in text


@pytest.mark.parametrize("url, as_json", [("http://127.0.0.1:1/v1?key={}", False),
                                          pytest.param("http://127.0.0.1:1/v1#{}", True, marks=pytest.mark.slow)])
def test_estimate_prints_no_key_of_a_base_url_in_its_job_lines(capsys, url, as_json):
    from bench import estimate

    secret = "q7Z9xw2LmN4pR8tE"  # not sk-shaped: only its place in the URL says it is a key
    args = ["model=openai", f"model.base_url='{url.format(secret)}'", "dataset.limit=1", *(["--json"] * as_json)]
    assert estimate.main(args) == 0
    out = capsys.readouterr()
    assert secret not in out.out + out.err and "127.0.0.1:1/v1" in out.out, out.out


def test_guard_command_line_refuses_a_key_and_registers_a_urls_secrets_otherwise():
    """The one prologue every command runs on its overrides (bench.core.redact.guard_command_line)."""
    from bench.core import redact

    assert "api_key" in (redact.guard_command_line(["+model.api_key=sk-abcdefghijklmnopqrstuvwxyz0123"]) or "")
    assert redact.guard_command_line(["model.base_url=http://127.0.0.1:9/v1?key=guardedsecret42#frag"]) is None
    assert "guardedsecret42" not in redact.scrub("calling http://127.0.0.1:9/v1?key=guardedsecret42#frag")
