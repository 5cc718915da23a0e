"""``first_tool_error``: what error did the agent's first failed tool call return?

The earliest result the profile marks as an error (tau2: ``Error: ...``; OpenHands: editor
and tool replies starting with ``ERROR``; a shell log: ``dataset.error_pattern``). Reference
``{"tool", "message"}``: the tool and the error's informative line: the exception line when the
output shows an exception, else the first line that is not markup, a traceback header or
frame, an exit code or a bare label such as ``ERROR:``. Dropped when no line is informative.
"""

from __future__ import annotations

import re
from typing import Any

from bench.extract import parse_first_exception
from bench.profiles import Profile
from bench.questions.matching import has_identifier, has_values, is_abstention, squash
from bench.questions.messages import exception_types, in_substance, key_tokens, same_type
from bench.questions.question_type import CaseFacts, QuestionType, make_question, value_spans
from bench.store.schema import DroppedQuestion, Question

__all__ = ["FIRST_TOOL_ERROR", "error_message"]

NAME = "first_tool_error"
_TOOL_NAME = re.compile(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b")
# quoted code or text (not a name alone in backticks, `run_shell`, which names a tool)
_QUOTED = re.compile(r"`(?![a-z][a-z0-9_]*`)[^`]*`|\"(?![a-z][a-z0-9_]*\")[^\"\n]*\"")
# names in backticks the message uses as its parameters, not tools: "Invalid `new_str` parameter", "`new_str` and
# `old_str` must be different"
_PARAMETERS = re.compile(r"`[a-z][a-z0-9_]*`(?:\s*(?:,|\band\b|\bor\b)\s*`[a-z][a-z0-9_]*`)*(?=\s+(?:parameters?|arguments?|"
                         r"fields?|options?|must|should|is|are|was|were|cannot|can't|may)\b)")
_LABEL_ONLY = re.compile(r"^\W*(?:error|exception|failed|failure)\W*$", re.I)
# Lines that say an error happened but not which: markup only (``<returncode>1</returncode>``, ``<output>``),
# a traceback's header or one of its frames, an exit code, a label alone (``ERROR:``).
_MARKER_LINE = re.compile(r"^(?:<[^<>\n]+>[^<>\n]{0,40})*<[^<>\n]+>$")
_UNINFORMATIVE = re.compile(
    r"^(?:Traceback \(most recent call last\):?|File \"[^\"]*\", line \d+.*|\^+|~+"
    r"|\[?(?:exit(?:ed with)?[ _]code|exit[ _]status|return[ _]?code|(?:command )?exit(?:ed)?)\s*[:=]?\s*-?\d+\]?\.?"
    r"|\W*(?:error|exception|failed|failure)\W*)$", re.I)


def error_message(output: str) -> str | None:
    """The informative line of an error result: the exception line when the output shows an
    exception (a Python traceback's last line, a Java ``...Exception: msg``), else its first line
    that is not markup, a traceback header or frame, an exit code or a bare label. None when
    no line says what the error was."""
    hit = parse_first_exception(output)
    if hit is not None:
        return hit[1]
    for line in output.strip().splitlines():
        line = line.strip()
        if line and not _MARKER_LINE.match(line) and not _UNINFORMATIVE.match(line):
            return line
    return None


class FirstToolError:
    name = NAME
    values_only = True  # its claim is a value: an answer that says it does not know and names only the question's values abstains
    template = "What error did the first failed tool call return?"
    answer_format = {"tool": "the tool's name", "message": "the error message"}  # the typed answer's keys (bench.questions.answers)
    reference_kind = "error"  # an error message (bench.questions.guess)
    answer_tokens = 50  # a typical typed answer's output tokens (bench.estimate)
    rubric = ("Tool error: the error message in substance (a paraphrase keeping the key identifiers, numbers "
              "and quoted strings is fine). If the answer names the tool, it must be the reference tool. A word "
              "changed (\"must be active\" for \"must be suspended\") or the opposite cause (not found for "
              "multiple occurrences, or the reverse; the state a requirement asks for, \"already suspended\" for "
              "\"must be suspended\") is another message. The value a message echoes (the old_str, new_str or path of the "
              "failed call) is part of it (a reference cut inside that value, \"old_str `import re\", needs an answer whose "
              "value opens with it); a path under the repository root may be given relative to it. A message "
              "of several sentences may be stated by its key values and the sentence that says what went wrong "
              "(\"... failed because that path does not exist\"). The value a parameter had, in parentheses after the "
              "parameter's name (\"the path (pkg/sub) is a directory\"), is an aside, no changed word. Words inside the code a message quotes name no "
              "tool, nor do names in backticks the message uses as its parameters (\"`new_str` and `old_str` must be "
              "different\"); the tool's own name states no word of the message. A message cut before its cause "
              "states it by its opening: \"No replacement was performed, old_str `x`\" opens the not-found message, so "
              "\"Multiple occurrences of old_str `x`\" is the opposite cause.")

    def text(self, target: dict[str, Any]) -> str:
        return self.template

    def applies(self, profile: Profile) -> bool:
        return True

    def build(self, facts: CaseFacts) -> Question | DroppedQuestion:
        for event in facts.events:
            if event.output is None or not facts.profile.is_error(event.raw):
                continue
            message = error_message(event.output)
            if message is None:  # never a later error instead: the first one is what is asked
                return DroppedQuestion(NAME, "the first error result has no informative line (only markup, a "
                                             "traceback header, an exit code or a label)")
            target = {"tool": event.name, "arguments": event.args, "ordinal": facts.ordinal(event)}
            return make_question(facts.case, NAME, self.template, {"tool": event.name, "message": message},
                                 [message], [event.call_index, event.result_index], target=target)
        return DroppedQuestion(NAME, "no tool result is an error")

    def spans(self, reference: dict[str, str]) -> list[str] | None:
        return value_spans(reference["message"])  # the error's line, as the output shows it

    def claim(self, parsed: Any, text: str, repo_root: str | None) -> dict[str, Any] | None:
        if isinstance(parsed, dict) and isinstance(parsed.get("message"), str):
            return {"tool": parsed.get("tool"), "text": parsed["message"]}
        if not text.strip() or (is_abstention(text) and not has_values(text)):
            return None
        return {"tool": None, "text": text}

    def grade(self, reference: dict[str, str], claim: dict[str, Any], repo_root: str | None) -> tuple[bool, str]:
        if claim["tool"] and str(claim["tool"]).strip("` ") != reference["tool"]:
            return False, f"tool {claim['tool']} differs from {reference['tool']}"
        if claim["tool"] is None:  # a tool named in prose: snake_case names that are not part of the message
            # (nor of the code or strings the message quotes: `pattern_type` in an old_str names no tool)
            unquoted = _QUOTED.sub(" ", _PARAMETERS.sub(" ", claim["text"]))
            named = set(_TOOL_NAME.findall(unquoted)) - set(_TOOL_NAME.findall(reference["message"]))
            if named and not any(n == reference["tool"] or reference["tool"].startswith(n) for n in named):
                return False, f"names another tool ({', '.join(sorted(named))}), not {reference['tool']}"
        message, said = _strip_label(reference["message"]), claim["text"]
        if not has_identifier(reference["tool"], message) and not key_tokens(message):
            # a message without identifiers is stated by its words; the tool's name states none of them
            said = re.sub(rf"(?<![\w]){re.escape(reference['tool'])}(?![\w])", " ", said)
        if repo_root and repo_root.rstrip("/") + "/" in message:  # its path may be stated relative to the root
            message, said = (t.replace(repo_root.rstrip("/") + "/", "") for t in (message, said))
        if message.count("`") % 2 == 1 and (cut := message.rsplit("`", 1)[1].strip()) \
                and ("`" + squash(cut)) not in squash(said):
            # a reference cut inside the value it echoes ("old_str `import re"): the answer's value must open with it
            return False, f"the echoed value does not open with {cut!r}"
        if in_substance(message, said):
            return True, "same error message"
        # an exception line's message told whole without its type ("No module named 'x'" for "ModuleNotFoundError:
        # No module named 'x'"): the error stated, unless the answer names another exception type
        typed = _TYPED.match(message.strip())
        if typed and len(typed.group(2).split()) >= 3 and squash(typed.group(2)).lower() in squash(said).lower() \
                and not [t for t in exception_types(said) if not same_type(t, typed.group(1))]:
            return True, "same error message, its exception type left out"
        return False, "error message differs"

    def answer_keys(self, reference: dict[str, str]) -> list[str]:
        return [_strip_label(reference["message"])]

    def template_text(self, reference: dict[str, str]) -> str:
        """The error as the template rule compares it across cases, whatever tool returned it (bench.questions.guess)."""
        return reference.get("message") or ""


_TYPED = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception)):\s+(\S.*)$", re.S)


def _strip_label(message: str) -> str:
    """The message without its ``Error:`` label (an answer need not repeat the label)."""
    return re.sub(r"^\s*(?:error|exception)\s*:?\s*", "", message, flags=re.I) or message


FIRST_TOOL_ERROR: QuestionType[dict[str, str], dict[str, Any]] = FirstToolError()  # its reference, its claim
