"""Judges: the exact-match judge per question type (offline) and the verdict vocabulary.

Verdicts: ``correct``, ``wrong`` (a specific, incorrect claim), ``abstained`` (says it does
not know), ``unscored`` (the judge's reply could not be parsed). A reason is always kept.
The exact judge reads a JSON answer (what the offline reader writes) and falls back to a
tolerant reading of free text (what LLMs write).

    verdict = ExactJudge().score(question, answer)
"""

from __future__ import annotations

import json
import re
from typing import Any

from bench.schema import Answer, Question, Score

__all__ = ["ExactJudge", "LLMJudge", "is_abstention", "parse_verdict", "ABSTAIN_PATTERNS", "JUDGE_PROMPT",
           "JUDGE_SYSTEM"]

ABSTAIN_PATTERNS = re.compile(
    r"\b(i (?:do not|don't|cannot|can't|no longer) (?:know|recall|remember|see|tell|determine)"
    r"|not (?:available|visible|in my context|able to (?:recall|determine|tell))"
    r"|cannot (?:be )?determine|unable to (?:determine|recall|tell)|no (?:longer )?(?:access|record))",
    re.I,
)


def is_abstention(text: str) -> bool:
    return not text.strip() or bool(ABSTAIN_PATTERNS.search(text))


def _json(text: str) -> Any:
    text = text.strip()
    fenced = re.search(r"```(?:json)?\s*(.*?)```", text, re.S)
    if fenced:
        text = fenced.group(1).strip()
    try:
        return json.loads(text)
    except (json.JSONDecodeError, ValueError):
        return None


def _norm_path(path: str, root: str | None) -> str:
    path = path.strip().strip("`'\",")
    if root and path.startswith(root.rstrip("/") + "/"):
        path = path[len(root.rstrip("/")) + 1 :]
    return path[2:] if path.startswith("./") else path


def _norm_code(code: str) -> str:
    return "\n".join(line.rstrip() for line in code.strip("\n").splitlines())


def _squash(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


_PATH_TOKEN = re.compile(r"[\w./-]*\w\.\w+|[\w.-]+/[\w./-]+")


def _files_changed(ref: list[str], answer: Any, text: str, root: str | None) -> tuple[bool, str]:
    if isinstance(answer, list):
        got = {_norm_path(str(p), root) for p in answer}
    else:
        got = {_norm_path(p, root) for p in _PATH_TOKEN.findall(text)}
        got = {p for p in got if "/" in p or "." in p}
    want = set(ref)
    if got == want:
        return True, "same set of files"
    return False, f"missing {sorted(want - got)}, extra {sorted(got - want)}"


def _first_edit(ref: dict, answer: Any, text: str, root: str | None) -> tuple[bool, str]:
    if isinstance(answer, dict) and "code" in answer:
        path_ok = _norm_path(str(answer.get("path", "")), root) == ref["path"]
        code_ok = _norm_code(str(answer["code"])) == _norm_code(ref["code"])
    else:
        path_ok = ref["path"] in text or ref["path"].rsplit("/", 1)[-1] in text
        code_ok = _squash(ref["code"]) in _squash(text)
    if path_ok and code_ok:
        return True, "same file and code"
    return False, f"path {'matches' if path_ok else 'differs'}, code {'matches' if code_ok else 'differs'}"


_COUNT_WORDS = {"passed": r"pass(?:ed|es|ing)?", "failed": r"fail(?:ed|ures?|ing|s)?", "errors": r"errors?"}


def _text_counts(text: str) -> dict[str, int]:
    counts = {}
    for key, word in _COUNT_WORDS.items():
        match = re.search(rf"(\d+)\s+(?:tests?\s+)?{word}\b|{word}\s*[:=]\s*(\d+)", text, re.I)
        if match:
            counts[key] = int(match.group(1) or match.group(2))
    return counts


def _test_counts(ref: dict, answer: Any, text: str, root: str | None) -> tuple[bool, str]:
    got = answer if isinstance(answer, dict) else _text_counts(text)
    keys = ["passed", "failed"] + (["errors"] if "errors" in ref else [])
    diffs = [f"{k}: expected {ref.get(k, 0)}, got {got.get(k)}" for k in keys
             if _as_int(got.get(k, 0 if k == "errors" else None)) != ref.get(k, 0)]
    return (not diffs), ("same counts" if not diffs else "; ".join(diffs))


def _as_int(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _same_type(got: str, want: str) -> bool:
    got, want = got.strip(), want.strip()
    return got == want or got.endswith("." + want) or want.endswith("." + got)


def _first_error(ref: dict, answer: Any, text: str, root: str | None) -> tuple[bool, str]:
    if isinstance(answer, dict) and "type" in answer:
        type_ok = _same_type(str(answer["type"]), ref["type"])
        message_ok = _squash(str(answer.get("message", ""))) == _squash(ref["message"])
    else:
        short = ref["type"].rsplit(".", 1)[-1]
        type_ok = short in text
        message_ok = _squash(ref["message"]) in _squash(text)
    if type_ok and message_ok:
        return True, "same exception type and message"
    return False, f"type {'matches' if type_ok else 'differs'}, message {'matches' if message_ok else 'differs'}"


_CHECKS = {
    "files_changed": _files_changed,
    "first_edit": _first_edit,
    "test_counts": _test_counts,
    "first_error": _first_error,
}


class ExactJudge:
    """Exact match against the code-extracted reference (``judge=exact``)."""

    name = "exact"

    def __init__(self, repo_roots: dict[str, str | None] | None = None) -> None:
        self.repo_roots = repo_roots or {}

    def score(self, question: Question, answer: Answer, repo_root: str | None = None) -> Score:
        base = {"case_id": answer.case_id, "qid": answer.qid, "type": question.type, "judge": self.name}
        if answer.outcome != "answered":
            return Score(**base, verdict="unscored", reason=f"no answer: {answer.outcome}")
        parsed = _json(answer.answer)
        if parsed is None and is_abstention(answer.answer):
            return Score(**base, verdict="abstained", reason="the answer says the evidence is not known")
        ok, why = _CHECKS[question.type](question.reference, parsed, answer.answer, repo_root)
        return Score(**base, verdict="correct" if ok else "wrong", reason=why)


# --------------------------------------------------------------------------- LLM judge

JUDGE_SYSTEM = "You grade answers strictly and reply with one JSON object only."

# One rubric for every arm and question type. Filled with str.format: {qtype}, {question},
# {reference} (JSON), {answer}.
JUDGE_PROMPT = """A coding agent worked on a task in a repository. Later it was asked a question about its own \
earlier work. The reference answer below was extracted exactly from the recorded run, so it is correct.

Question type: {qtype}
Question: {question}

Reference answer (JSON):
{reference}

Agent's answer:
<<<
{answer}
>>>

Grade the agent's answer against the reference with this rubric:
- "correct": the answer states what the reference states. Wording, formatting, order of items and extra \
explanation do not matter. Files: the same set of files (a path relative to the repository root and an absolute \
path to the same file are the same). Code: the same code, ignoring indentation and whitespace differences. \
Test counts: the same number for every category in the reference. Errors: the same exception type and message.
- "wrong": the answer makes a specific claim that differs from the reference, or gives only part of it \
(missing or extra files, different code, different numbers, a different exception).
- "abstained": the answer says it does not know, cannot recall or cannot see the information, and makes no \
specific claim. If it hedges but still makes a specific claim, grade that claim instead.

Reply with exactly one JSON object and nothing else:
{{"verdict": "correct" | "wrong" | "abstained", "reason": "<one short sentence>"}}"""

JUDGE_VERDICTS = ("correct", "wrong", "abstained")
_VERDICT_FIELD = re.compile(r"[\"']?verdict[\"']?\s*[:=]\s*[\"']?\s*(correct|wrong|abstained)\b", re.I)
_REASON_FIELD = re.compile(r"[\"']?reason[\"']?\s*[:=]\s*[\"']?(.+?)[\"']?\s*(?:[,}]|$)", re.I | re.S)
_OBJECT = re.compile(r"\{.*?\}", re.S)


def parse_verdict(raw: str) -> tuple[str, str] | None:
    """``(verdict, reason)`` from a judge reply, or None when it cannot be read."""
    text = (raw or "").strip()
    candidates = []
    whole = _json(text)
    if whole is not None:
        candidates.append(whole)
    for match in _OBJECT.finditer(text):
        try:
            candidates.append(json.loads(match.group(0)))
        except (json.JSONDecodeError, ValueError):
            continue
    for data in candidates:
        if isinstance(data, dict):
            verdict = str(data.get("verdict", "")).strip().lower()
            if verdict in JUDGE_VERDICTS:
                reason = str(data.get("reason") or "").strip()
                return verdict, reason or "(the judge gave no reason)"
    match = _VERDICT_FIELD.search(text)
    if match:
        reason = _REASON_FIELD.search(text)
        return match.group(1).lower(), (reason.group(1).strip() if reason else "") or "(the judge gave no reason)"
    return None


class LLMJudge:
    """A separate model grades every answer with one rubric (``judge=llm``).

    Verdicts ``correct``/``wrong``/``abstained`` with the judge's reason; a reply that
    cannot be parsed is ``unscored`` with the prompt and the raw reply kept. Judge calls go
    through the response cache like every model call (a rescore spends nothing twice).
    """

    def __init__(self, *, client: Any = None, json_mode: bool = True, **settings: Any) -> None:
        from bench.models import openai_client

        if client is None:
            if json_mode:  # in the body, not model_kwargs: a truncated reply stays a reply (unscored)
                settings["extra_body"] = {**(settings.get("extra_body") or {}),
                                          "response_format": {"type": "json_object"}}
            client = openai_client("judge", kind="judge", **settings)
        self.client = client
        self.name = f"llm:{client.model}"

    def preflight(self, seen: set | None = None) -> None:
        self.client.preflight(seen)

    def prompt(self, question: Question, answer: Answer) -> str:
        return JUDGE_PROMPT.format(
            qtype=question.type,
            question=question.question,
            reference=json.dumps(question.reference, ensure_ascii=False, indent=1),
            answer=answer.answer.strip(),
        )

    def score(self, question: Question, answer: Answer, repo_root: str | None = None) -> Score:
        from langchain_core.messages import HumanMessage, SystemMessage

        from bench.models import ContextOverflow
        from bench.text import content_text

        base = {"case_id": answer.case_id, "qid": answer.qid, "type": question.type, "judge": self.name}
        if answer.outcome != "answered":
            return Score(**base, verdict="unscored", reason=f"no answer: {answer.outcome}")
        if not answer.answer.strip():
            return Score(**base, verdict="abstained", reason="empty answer")
        prompt = self.prompt(question, answer)
        try:  # a call that keeps failing raises: the score stays missing and resume retries it
            reply, _ = self.client.chat([SystemMessage(JUDGE_SYSTEM), HumanMessage(prompt)],
                                        tags={"case_id": answer.case_id, "qid": answer.qid})
        except ContextOverflow as err:
            return Score(**base, verdict="unscored", reason=f"judge request too long: {err}", prompt=prompt)
        raw = content_text(reply.content)
        parsed = parse_verdict(raw)
        if parsed is None:
            return Score(**base, verdict="unscored", reason="the judge's reply could not be parsed",
                         raw=raw, prompt=prompt)
        verdict, reason = parsed
        return Score(**base, verdict=verdict, reason=reason, raw=raw)
