"""Monotonicity of the offline reader and honesty of the evidence flags, on every arm pair.

For every source (the real dev rows, the shipped coding and operations samples, the real chat
logs of ``tests/data/real/chat``) every arm (full, none, nlatest, mask, trim, compact with each
mechanism preset, lc_summary, condenser, custom; default settings and settings that cut the
samples' short histories too) builds its view of every case; the offline reader answers every
question and the exact judge grades it. Three counts of violations, per source:

- **monotone**: (view A, view B, question) where A holds every message of B verbatim (same
  type, content, calls and call ids: a summary or placeholder of B must be in A too), the reader
  answers the question correctly from B and not from A. A view that holds more must never
  answer less.
- **text-but-invisible**: (arm, question) whose reference text is present verbatim in the view's
  text (a message's content, a tool output as the profile cleans it, a call's arguments; as a
  whole token) while the question is flagged not visible. The reference text: the output, the
  value, the error message, the exception's type and message, the inserted code. Types whose
  answer is not a text span (counts, lists: ``test_counts``, ``call_count``, ``files_changed``,
  ``write_actions``), booleans and values under 3 characters are exceptions.
- **visible-without-evidence**: (arm, question) flagged visible although not all of its
  evidence messages are in the view verbatim and its reference text is not in the view.

Then ``full``'s exact-judge score per source (it must be 100%). Containment is decided by
message content, not by ids, so the script measures the code before and after message ids
existed the same way. Prints one table per source and the pairs with violations.

    uv run python benchmarks/bench_monotone.py [--sources dev,sample,ops,airline,shell] [--pairs 20]
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ROOT, compose  # noqa: E402

sys.path.insert(0, str(ROOT / "tests" / "support"))  # custom_policies: the custom arm's function

from arm_grid import ARMS, SOURCES  # noqa: E402  (tests/support: one grid for the test and this)

# Types whose answer is not one text span (a count, a list): no verbatim-text check.
NOT_SPANS = {"test_counts", "call_count", "files_changed", "write_actions"}


def signature(message) -> str:
    """A message as content (type, text, calls with ids and arguments, result's call id, name)."""
    calls = [(c.get("id"), c.get("name"), json.dumps(c.get("args"), sort_keys=True, default=str))
             for c in getattr(message, "tool_calls", None) or []]
    return json.dumps([message.type, message.content, calls, getattr(message, "tool_call_id", None),
                       getattr(message, "name", None)], sort_keys=True, default=str)


def contains(bigger: Counter, smaller: Counter) -> bool:
    return all(bigger[key] >= count for key, count in smaller.items())


def _leaves(value) -> list[str]:
    if isinstance(value, dict):
        return [s for v in value.values() for s in _leaves(v)]
    if isinstance(value, list):
        return [s for v in value for s in _leaves(v)]
    return [value] if isinstance(value, str) else ([] if value is None else [json.dumps(value)])


def view_texts(view, profile) -> list[str]:
    """What a reader sees, per message: content (a tool output also cleaned by the profile), and
    each call's arguments as JSON and each value as it is. A summary is one of the messages."""
    from bench.text.content import content_text

    texts = []
    for m in view.messages:
        content = content_text(m.content)
        texts += [content, profile.clean(content)] if m.type == "tool" else [content]
        for call in getattr(m, "tool_calls", None) or []:
            texts += [json.dumps(call.get("args") or {}, ensure_ascii=False, sort_keys=True), *_leaves(call.get("args"))]
    return texts


def present(span: str, text: str) -> bool:
    """``span`` in ``text`` as a whole token (no letter or digit glued to an end that has one)."""
    start = text.find(span)
    while start >= 0:
        end = start + len(span)
        if not (span[0].isalnum() and start and (text[start - 1].isalnum() or text[start - 1] == "_")) and \
                not (span[-1].isalnum() and end < len(text) and (text[end].isalnum() or text[end] == "_")):
            return True
        start = text.find(span, start + 1)
    return False


def reference_spans(question) -> list[str]:
    """The exact reference text(s) of a question whose answer is a text span (empty: counts, lists,
    booleans, values under 3 characters, which any view holds by chance)."""
    ref = question.reference
    if question.type in NOT_SPANS or isinstance(ref, bool):
        return []
    if question.type == "first_tool_error":
        spans = [ref["message"]]
    elif question.type == "first_error":
        spans = [ref["type"].rsplit(".", 1)[-1]] + ([ref["message"]] if ref["message"] else [])
    elif question.type == "first_edit":
        spans = [ref["code"].strip("\n")]
    elif isinstance(ref, (dict, list)):
        return []
    else:
        spans = [ref if isinstance(ref, str) else json.dumps(ref)]
    spans = [s.strip() if question.type != "first_edit" else s for s in spans]
    return spans if all(len(s.strip()) >= 3 for s in spans) else []


def reference_in(question, texts: list[str]) -> bool:
    spans = reference_spans(question)
    return bool(spans) and all(any(present(s, t) for t in texts) for s in spans)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sources", default=",".join(SOURCES))
    parser.add_argument("--pairs", type=int, default=15, help="arm pairs with violations listed per source")
    args = parser.parse_args(argv)
    logging.disable(logging.WARNING)
    from bench.answering.evidence import evidence_flags
    from bench.answering.evidence_reader import EvidenceReader
    from bench.config.arms import build_policy
    from bench.config.job_cases import load_job_cases
    from bench.scoring.judge import ExactJudge
    from bench.text.tokens import TokenCounter

    reader, judge = EvidenceReader(), ExactJudge()
    totals: dict[str, Counter] = {}
    for source in args.sources.split(","):
        start = time.perf_counter()
        base = SOURCES[source]
        counter = TokenCounter()
        cases = load_job_cases(compose(base), counter).cases  # types and depths as a job asks them
        correct: dict[str, dict[tuple[str, str], bool]] = {}
        held: dict[str, dict[str, Counter]] = {}
        counts: Counter = Counter()
        by_arm: dict[str, Counter] = defaultdict(Counter)
        full_by_type: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for arm, overrides in ARMS.items():
            policy = build_policy(compose(base + overrides), counter)
            correct[arm], held[arm] = {}, {}
            for case in cases:
                view = policy(case)
                held[arm][case.case_id] = Counter(signature(m) for m in view.messages)
                flags = evidence_flags(case, view)
                texts = view_texts(view, case.profile)
                kept = held[arm][case.case_id]
                for question in case.questions:
                    verdict = judge.score(question, reader.answer(case, view, question), case.repo_root).verdict
                    ok = verdict == "correct"
                    correct[arm][case.case_id, question.qid] = ok
                    flag = flags[question.qid]
                    shown = reference_in(question, texts)
                    evidence = all(kept[signature(case.messages[i])] for i in question.evidence_messages)
                    if shown and not flag["visible"]:
                        counts["text-but-invisible"] += 1
                        by_arm[arm]["text-but-invisible"] += 1
                    if flag["visible"] and not evidence and not shown:
                        counts["visible-without-evidence"] += 1
                        by_arm[arm]["visible-without-evidence"] += 1
                    if arm == "full":
                        full_by_type[question.type][0] += ok
                        full_by_type[question.type][1] += 1
        pairs: Counter = Counter()
        comparable = 0
        for a in ARMS:
            for b in ARMS:
                if a == b:
                    continue
                for case in cases:
                    if not contains(held[a][case.case_id], held[b][case.case_id]):
                        continue
                    comparable += 1
                    for question in case.questions:
                        key = (case.case_id, question.qid)
                        if correct[b][key] and not correct[a][key]:
                            pairs[a, b] += 1
        counts["monotone"] = sum(pairs.values())
        totals[source] = counts
        questions = sum(len(c.questions) for c in cases)
        full_ok = sum(v[0] for v in full_by_type.values())
        print(f"\n## {source}: {len(cases)} cases, {questions} questions, {len(ARMS)} arms, "
              f"{comparable} (A holds B) case pairs ({time.perf_counter() - start:.0f}s)")
        print(f"monotone violations {counts['monotone']}; text-but-invisible {counts['text-but-invisible']}; "
              f"visible-without-evidence {counts['visible-without-evidence']}")
        print(f"full: {full_ok}/{questions} = {100 * full_ok / max(questions, 1):.1f}% ("
              + ", ".join(f"{t} {ok}/{n}" for t, (ok, n) in sorted(full_by_type.items())) + ")")
        for (a, b), n in pairs.most_common(args.pairs):
            print(f"  {a} holds {b}: {n} answer(s) lost")
        for arm, c in sorted(by_arm.items()):
            print(f"  {arm}: " + ", ".join(f"{k} {v}" for k, v in sorted(c.items())))
    print("\n| source | monotone | text-but-invisible | visible-without-evidence |")
    print("|---|---|---|---|")
    for source, c in totals.items():
        print(f"| {source} | {c['monotone']} | {c['text-but-invisible']} | {c['visible-without-evidence']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
