"""Replies that are not what a reply should be: a summary over the context limit, a 200 without choices or
with a choice without message, usage given as strings or negatives. Each is recorded as what it is (an
outcome or one clear error), never a crash or a lost answer."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from bench.runner import run
from bench.store.records import read_jsonl

from fake_openai import FakeOpenAI
from jobs import job_cfg, openai_args
from paths import PROJECT

FAILING_MARKER = "acme__ledger__2.3"  # appears in the history of one sample case only


def test_a_summary_over_the_context_limit_is_context_overflow_and_not_asked_again(tmp_path):
    out = tmp_path / "job"
    prompt = (PROJECT / "src" / "bench" / "prompts" / "sre.txt").read_text()[:60]
    with FakeOpenAI(overflow_marker=prompt) as server:
        args = openai_args(server.base_url, "arm=compact", "summarizer=openai", "summarizer.max_retries=1")
        metrics = run(job_cfg(*args, output_dir=str(out)))
        overflowed = server.stats()["outcome_overflow"]
        answers = read_jsonl(out / "answers.jsonl")
        assert answers and all(a["outcome"] == "context_overflow" for a in answers)
        assert all("summary request" in a["error"] and "maximum context length" in a["error"] for a in answers)
        assert metrics["n_errors"] == 0 and overflowed == 2  # one summary request per case, not retried
        before = server.stats()["requests"]
        run(job_cfg(*args, resume=str(out)))
        assert server.stats()["requests"] == before  # resume does not ask again


def test_a_200_reply_without_choices_says_what_came_back(tmp_path):
    out = tmp_path / "job"
    with FakeOpenAI(empty_marker=FAILING_MARKER) as server:
        metrics = run(job_cfg(*openai_args(server.base_url, "dataset.limit=null"), output_dir=str(out)))
        n_bad = sum(len(c["questions"]) for c in read_jsonl(out / "cases.jsonl") if FAILING_MARKER in json.dumps(c))
        assert server.stats()["outcome_empty"] == n_bad * 2  # each of its questions tried twice (one retry)
    failed = [a for a in read_jsonl(out / "answers.jsonl") if a["outcome"] == "error"]
    assert len(failed) == n_bad and metrics["n_errors"] == n_bad
    for answer in failed:
        assert "answered 200 with no choices" in answer["error"] and "upstream provider returned nothing" in \
            answer["error"] and "IndexError" not in answer["error"]


class _OddReplies:
    """An OpenAI-compatible endpoint whose 200 replies carry odd ``usage`` or a choice without message."""

    def __init__(self, kind: str) -> None:

        outer = self
        self.kind, self.requests = kind, 0

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # noqa: ANN002
                pass

            def do_GET(self):  # noqa: N802 - /models for the endpoint check
                self._send({"object": "list", "data": [{"id": "m", "object": "model"}]})

            def do_POST(self):  # noqa: N802
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                outer.requests += 1
                choice = {"index": 0, "finish_reason": "stop",
                          "message": {"role": "assistant", "content": "I cannot tell."}}
                body = {"id": "x", "object": "chat.completion", "created": 0, "model": "m", "choices": [choice]}
                if outer.kind == "usage_strings":
                    body["usage"] = {"prompt_tokens": "ten", "completion_tokens": "5", "total_tokens": None}
                elif outer.kind == "usage_negative":
                    body["usage"] = {"prompt_tokens": -10, "completion_tokens": -5, "total_tokens": -15}
                else:
                    del choice["message"]
                self._send(body)

            def _send(self, payload):
                data = json.dumps(payload).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _odd_args(url: str) -> list[str]:
    return ["model=openai", f"model.base_url={url}", "model.name=m", "model.api_key_env=null", "model.max_retries=1",
            "model.backoff_base=0.01", "model.backoff_max=0.02", "dataset.limit=1"]


@pytest.mark.parametrize("kind", ["usage_strings", "usage_negative"])
def test_a_reply_with_strings_or_negatives_in_usage_keeps_its_answer(tmp_path, kind):
    from bench.runner import run
    from bench.store.records import read_jsonl

    server = _OddReplies(kind)
    try:
        run(job_cfg(*_odd_args(server.base_url), output_dir=str(tmp_path / "job")))
    finally:
        server.close()
    answers = read_jsonl(tmp_path / "job" / "answers.jsonl")
    assert answers and all(a["outcome"] != "error" for a in answers), answers[0].get("error")
    assert all(a["answer"] == "I cannot tell." for a in answers)
    assert all(a["usage"]["input_tokens"] >= 0 and a["usage"]["output_tokens"] >= 0 for a in answers)


def test_a_200_reply_whose_choice_has_no_message_is_a_clear_malformed_reply_error(tmp_path):
    from bench.runner import run
    from bench.store.records import read_jsonl

    server = _OddReplies("no_message")
    try:
        run(job_cfg(*_odd_args(server.base_url), output_dir=str(tmp_path / "job")))
    finally:
        server.close()
    failed = [a for a in read_jsonl(tmp_path / "job" / "answers.jsonl") if a["outcome"] == "error"]
    assert failed
    for answer in failed:
        assert "malformed reply" in answer["error"] and "no message" in answer["error"], answer["error"]
        assert "AttributeError" not in answer["error"] and "KeyError" not in answer["error"]
