"""The offline evidence reader: answers by applying each question's extractor to the view.

No LLM, no network, deterministic. It reads exactly what the view shows (a summary is
text it does not parse), opens exposed handles of cleared tool outputs when the view
alone does not answer (or always first, under ``verify`` guidance), and abstains when
the evidence is gone. On the full arm it reproduces every reference by construction.

    reader = EvidenceReader()
    answer = reader.answer(case, view, question)
"""

from __future__ import annotations

import json
from typing import Any

from langchain_core.messages import BaseMessage, ToolMessage

from bench.extract import (
    command_runs,
    edited_files,
    parse_first_exception,
    parse_test_counts,
    relative_to_repo,
    repo_edits,
    tool_events,
)
from bench.schema import Answer, Case, Question, View
from bench.text import content_text, placeholder_handle

__all__ = ["EvidenceReader", "extract_answer", "ABSTENTION"]

ABSTENTION = "I don't know: that evidence is not in my context any more."


def extract_answer(question: Question, messages: list[BaseMessage], repo_root: str | None) -> Any:
    """The question's answer as the given messages show it, or None."""
    events = tool_events(messages)
    if question.type == "files_changed":
        return edited_files(repo_edits(events, repo_root), repo_root) or None
    if question.type == "first_edit":
        first = next((e for e in repo_edits(events, repo_root) if e.kind != "delete"), None)
        if first is None or first.kind != "editor" or first.code is None:
            return None
        return {"path": relative_to_repo(first.path, repo_root), "code": first.code}
    command, wanted = question.params.get("command"), question.params.get("ordinal")
    run = next((r for r in command_runs(events) if r.command == command and r.ordinal == wanted), None)
    if run is None:
        return None
    if question.type == "test_counts":
        return parse_test_counts(run.output)
    if question.type == "first_error":
        hit = parse_first_exception(run.output)
        return hit[0] if hit else None
    raise ValueError(f"unknown question type {question.type!r}")


def _open_handles(messages: list[BaseMessage], store: dict[str, str]) -> tuple[list[BaseMessage], list[str]]:
    """Messages with every exposed handle's stored output put back, and the handles opened."""
    opened: list[str] = []
    restored: list[BaseMessage] = []
    for message in messages:
        handle = placeholder_handle(content_text(message.content)) if isinstance(message, ToolMessage) else None
        if handle and handle in store:
            opened.append(handle)
            message = message.model_copy(update={"content": store[handle]})
        restored.append(message)
    return restored, opened


class EvidenceReader:
    """Offline answering model (``model=offline``)."""

    name = "offline-evidence-reader"

    def answer(self, case: Case, view: View, question: Question) -> Answer:
        messages, opened = list(view.messages), []
        verify_first = bool(view.guidance) and bool(view.store)
        if verify_first:
            messages, opened = _open_handles(messages, view.store)
        value = extract_answer(question, messages, case.repo_root)
        if value is None and view.store and not verify_first:
            messages, opened = _open_handles(messages, view.store)
            value = extract_answer(question, messages, case.repo_root) if opened else None
        text = ABSTENTION if value is None else json.dumps(value, ensure_ascii=False, sort_keys=True)
        return Answer(
            case_id=case.case_id,
            qid=question.qid,
            type=question.type,
            answer=text,
            usage={"model": self.name, "calls": 0, "input_tokens": 0, "output_tokens": 0},
            retrievals=opened,
        )
