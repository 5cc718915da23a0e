"""Noise in references: counts per class on the shipped samples and the real test data.

For every source (the real dev rows, the shipped coding and operations samples, the real chat
logs of ``tests/data/real/chat``) the job's questions are built (types and depths as a job asks
them) and every reference is checked against each class of noise issue 31 names:

- **wrapper**: a text of the reference (any string in it) holds output wrapping a harness adds:
  ``<returncode>``, ``<output>`` (a long output's ``<warning>``, ``<output_head>``, ``<elided_chars>``,
  ``<output_tail>``), ``OBSERVATION:``, OpenHands' ``[Command finished ...]`` /
  ``[Current working directory ...]`` / ``[Python Interpreter ...]`` markers, an exit-code
  line, or (a shell call's output) the echoed command as its first line;
- **uninformative error**: a ``first_tool_error`` message that is a traceback header, a bare
  exit code, markup or a label only, or that is not the exception line the error's output shows;
- **negative count** and **derived count**: a ``test_counts`` count below zero, or a passed
  count the run's summary lines do not show (arithmetic the output does not do);
- **exception field**: a ``latest_value`` field named like an exception class (``...Error``);
- **shared error**: a ``first_tool_error`` message (``first_error``: type and message) that
  answers the question in at least 3 cases of the source (a template a model could guess).

    uv run python benchmarks/bench_references.py [--sources dev,sample,ops,airline,shell] [--examples 3]
"""

from __future__ import annotations

import argparse
import logging
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import compose  # noqa: E402
from bench_monotone import SOURCES  # noqa: E402

from bench.questions import REGISTRY  # noqa: E402

CLASSES = ("wrapper", "uninformative error", "negative count", "derived count", "exception field", "shared error")
_WRAPPER = re.compile(r"</?returncode>|</?output>|</?output_(?:head|tail)>|</?elided_chars>|</?warning>|"
                      r"The output of your last command was too long|^\s*OBSERVATION:|\[Command finished with|\[Command exited with|"
                      r"\[The command completed with exit code|\[Current working directory:|\[Python Interpreter:|"
                      r"^\s*\[?(?:exit(?:ed with)? code|returncode|exit status)\s*[:=]?\s*-?\d+\]?\s*$", re.I | re.M)
_BAD_ERROR = re.compile(r"^\s*(?:Traceback \(most recent call last\):?|(?:<[^<>\n]+>\s*)+-?\d*(?:\s*<[^<>\n]+>)*"
                        r"|\[?(?:exit(?:ed with)? code|returncode|exit status)\s*[:=]?\s*-?\d+\]?|\W*(?:error|exception|"
                        r"failed|failure)\W*)\s*$", re.I)
_EXCEPTION_NAME = re.compile(r"(?:^|\.)[A-Z]\w*(?:Error|Exception|Warning|Exit|Interrupt)$")


def strings(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    return []


def noise(case, question, messages) -> list[str]:
    """The noise classes a question's reference falls in (shared errors are counted over the source)."""
    from bench.extract import parse_first_exception, summary_line
    from bench.text.content import content_text

    found = []
    ref = question.reference
    if any(_WRAPPER.search(s) for s in strings(ref)):
        found.append("wrapper")
    target = question.target or {}
    if question.type == "tool_output" and case.profile.is_shell(str(target.get("tool", ""))):
        command = case.profile.command_of(target.get("arguments") or {}).strip()
        first = str(ref).strip().split("\n", 1)[0].strip()
        if command and first == command and "wrapper" not in found:
            found.append("wrapper")
    if question.type == "first_tool_error":
        message = str(ref.get("message", ""))
        results = [content_text(messages[i].content) for i in question.evidence_messages if messages[i].type == "tool"]
        hit = parse_first_exception(case.profile.clean(results[-1])) if results else None
        if _BAD_ERROR.match(message) or not message.strip() or (hit is not None and hit[1].strip() != message.strip()):
            found.append("uninformative error")
    if question.type == "test_counts":
        if any(isinstance(v, int) and v < 0 for v in ref.values()):
            found.append("negative count")
        outputs = "\n".join(case.profile.clean(content_text(messages[i].content)) for i in question.evidence_messages
                            if messages[i].type == "tool")
        lines = summary_line(outputs)
        result = re.search(r"^(?:OK|FAILED)\b.*$", outputs[outputs.find(lines):], re.M) if lines else None
        shown = lines + "\n" + (result.group(0) if result else "")
        if ref.get("passed", 0) > 0 and not re.search(rf"(?<![\d.]){ref['passed']}(?![\d.])", shown):
            found.append("derived count")
    if question.type == "latest_value" and _EXCEPTION_NAME.search(str(target.get("field", "")).strip()):
        found.append("exception field")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sources", default=",".join(SOURCES))
    parser.add_argument("--examples", type=int, default=3, help="examples shown per class and source")
    args = parser.parse_args(argv)
    logging.disable(logging.WARNING)
    from bench.config.job_cases import load_job_cases
    from bench.questions.matching import squash
    from bench.text.tokens import TokenCounter

    rows = []
    for source in args.sources.split(","):
        cases = load_job_cases(compose(SOURCES[source]), TokenCounter()).cases
        counts: Counter = Counter()
        examples: dict[str, list[str]] = defaultdict(list)
        errors: dict[str, set[str]] = defaultdict(set)
        by_type: Counter = Counter()
        for case in cases:
            for question in case.questions:
                by_type[question.type] += 1
                for kind in noise(case, question, case.messages):
                    counts[kind] += 1
                    examples[kind].append(f"{question.qid}: {str(question.reference)[:110]!r}")
                qtype = REGISTRY.get(question.type)
                if getattr(qtype, "reference_kind", None) == "error" and isinstance(question.reference, dict):
                    errors[squash(qtype.template_text(question.reference))].add(case.case_id)  # as the template rule
        for message, holders in errors.items():
            if len(holders) >= 3 and message:
                counts["shared error"] += len(holders)
                examples["shared error"].append(f"{len(holders)} cases: {message[:110]!r}")
        questions = sum(by_type.values())
        rows.append((source, questions, counts))
        print(f"\n## {source}: {len(cases)} cases, {questions} questions "
              f"({', '.join(f'{t} {n}' for t, n in sorted(by_type.items()))})")
        for kind in CLASSES:
            print(f"  {kind}: {counts[kind]}")
            for example in examples[kind][: args.examples]:
                print(f"      {example}")
    print("\n| source | questions | " + " | ".join(CLASSES) + " |")
    print("|---|---|" + "---|" * len(CLASSES))
    for source, questions, counts in rows:
        print(f"| {source} | {questions} | " + " | ".join(str(counts[k]) for k in CLASSES) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
