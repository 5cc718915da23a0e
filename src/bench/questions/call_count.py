"""``call_count``: how many times did the agent call its most-used tool?

The tool with the most calls in the case's history, finish and think tools excluded (ties:
alphabetical); reference: the number of its calls. Calls the run ended on without a result
are not in the history (:mod:`bench.data.cases` drops them): when the asked tool had such a call,
the question says it is not counted (``target["uncounted"]``: how many).
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from bench.profiles import Profile
from bench.questions.matching import has_identifier, is_abstention
from bench.questions.question_type import CaseFacts, QuestionType, make_question
from bench.questions.values import ORDINAL, numbers, ordinal_number, same_number
from bench.store.schema import DroppedQuestion, Question

__all__ = ["CALL_COUNT", "call_key"]

NAME = "call_count"
# a tool named in the answer (backticked, or snake_case); not a file (x_y.py) or a part of a path
_TOOL_NAME = re.compile(r"`[A-Za-z_][\w-]*`|(?<![\w/.])[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b(?![./]\w)")
_TIMES = re.compile(r"(\d+|[a-z]+(?:-[a-z]+)?)\s+(?:times?|calls?)\b|\b(once|twice|thrice)\b", re.I)
_NUMBER = r"(\d+|[a-z]+(?:-[a-z]+)?)"
# A count the answer concludes with ("23 calls in total, but the last got no result, so 22"; "12... recounting, it was
# 14"): the concluding number is the claim. It ends its clause (in "so 3 of them failed" the 3 is no count).
_CONCLUSION = re.compile(r"\b(?:so|thus|therefore|hence|making(?: it)?|(?:that|which) (?:makes|is|gives)|that's|i\.e\.?,?"
                         r"|for a total of|a total of|total(?: of)?:?|in total|it was|it's|i make it"
                         # "I count 32, minus the last one that never returned: 31": the count after what it takes away
                         r"|(?:minus|less|not counting|excluding)\b[^.;:\n]*:)\s+" + _NUMBER +
                         r"(?:\s+(?:times?|calls?))?(?:\s+(?:in total|total|altogether|in all))?\s*(?=[.!;,)]|$)",
                         re.I)
# An answer that opens with its number ("4 - I also checked once after ...", "24: mostly edits"): that number
_LEADING = re.compile(r"^\W*" + _NUMBER + r"(?:\s+(?:times?|calls?))?\s*(?:[-\u2013\u2014:;,(]|\.?\s*$)", re.I)
# A tool named as what the count is compared with ("the same number as my edit calls") is not counted
_COMPARED = re.compile(r"\b(?:(?:the )?same(?: (?:number|count|amount)(?: of \w+)?)? as|as (?:many|often) as|equal to|"
                       r"(?:more|fewer|less) than|compared (?:to|with)|just like|like)\b[^.;\n]*", re.I)
# "four times before it succeeded on the fifth": the last call's ordinal is the count
_BEFORE_NTH = re.compile(r"\b(?:times?|calls?|attempts?|tries)\s+before\b[^.;\n]*?\b(?:on|at|with) the (" + ORDINAL +
                         r")\b", re.I)


# a count of a named tool: "7 run_shell calls", "7 more `grep` calls", "one run_shell at the end" (a tool's own
# name needs no "calls"), "ran run_shell 7 times" (the name before its count)
_SNAKE = r"[a-z][a-z0-9]*(?:_[a-z0-9]+)+"
_OTHER_COUNTS = (
    re.compile(r"\b" + _NUMBER + r"\s+(?:more\s+|other\s+)?`?(" + _SNAKE + r"|[a-z][\w-]*)`?"
               r"\s+(?:calls?|times?|runs?|invocations?)\b", re.I),
    re.compile(r"\b" + _NUMBER + r"\s+(?:more\s+|other\s+)?`?(" + _SNAKE + r")`?(?![\w./])", re.I),
    re.compile(r"`?\b(" + _SNAKE + r")`?\s+(?:\w+\s+)?" + _NUMBER + r"\s+(?:times?|calls?)\b", re.I),
)


# a count told after its tool's name, as in a per-tool list ("- `run_shell`: 5 calls", "apply_patch - 4"), emphasis
# stripped ("**13**")
_NAMED_COUNT = re.compile(r"(?:^|[\s(])`?([A-Za-z_][\w-]*)`?\s*[:=\u2013\u2014-]\s*" + _NUMBER + r"\b", re.I | re.M)
_EMPHASIS = re.compile(r"(\*{1,2}|_{1,2})(\d+)\1")


def _unemphasised(text: str) -> str:
    """Markdown emphasis around a number dropped ("**13** calls" is "13 calls")."""
    return _EMPHASIS.sub(r"\2", text)


def told_for(tool: str, text: str) -> list[float]:
    """The counts the answer tells beside the asked tool's own name ("- `edit`: 13 calls", "13 edit calls")."""
    text = _unemphasised(text)
    found = [n[0] for m in _NAMED_COUNT.finditer(text) if m.group(1) == tool and (n := numbers(m.group(2)))]
    return found + [count for count, name in _other_counts(text) if name.strip("`") == tool]


def _other_counts(text: str) -> list[tuple[float, str]]:
    """(count, tool) of each count told of a named tool (a count that is a number: "ran x_y" has none)."""
    found = []
    for index, pattern in enumerate(_OTHER_COUNTS):
        for m in pattern.finditer(text):
            count, name = (m.group(2), m.group(1)) if index == 2 else (m.group(1), m.group(2))
            if n := numbers(count):
                found.append((n[0], name))
    return found


# A count told vaguely ("many times", "I kept retrying"): it says something of the count, so it is a claim (wrong: it
# states no number), not an abstention
_VAGUE_COUNT = re.compile(r"\b(?:(?:many|several|multiple|numerous|countless|a (?:few|lot of|bunch of|number of|handful of)|"
                          r"lots of|dozens of)\s+(?:times|calls|attempts|tries)|(?:about|around|roughly|nearly|almost|over|under|some|maybe|approximately) (?:a|half a) dozen|a dozen or so|repeatedly|over and over|again and again|"
                          r"kept (?:calling|retrying|trying|running|re-?running))\b", re.I)


def call_key(tool: str) -> str:
    """How a call of ``tool`` shows in a view's text (``bench.text.content.message_text``): one per call."""
    return f"[{tool}]\n"


class CallCount:
    name = NAME
    template = "How many times did you call `{tool}`?"
    uncounted = " Do not count the last call(s) of it you made, which got no result."
    answer_format = {"count": "number of calls"}  # the typed answer's keys (bench.questions.answers)
    answer_tokens = 15  # a typical typed answer's output tokens (bench.estimate)
    rubric = ("Count: the stated number of calls equals the reference (digits or words, e.g. \"three times\"). "
              "A count the answer concludes with is its claim (\"23 in total, but the last got no result, so 22\" "
              "is 22; \"I count 32, minus the last one that never returned: 31\" is 31; \"four times before it worked on "
              "the fifth\" is 5). A count of another tool is wrong; a "
              "command of the asked tool (`file_view` of `file_view_editor`) is no other tool, nor is a tool the count "
              "is compared with (\"24, the same number as my edit calls\"). The number the answer opens with is its "
              "count (\"4 - I also checked once more\" is 4); another tool's count told beside it (\"10 - plus 7 "
              "run_shell calls\", \"then I ran run_shell 7 times\") is that tool's, not the answer's; in a list of counts per "
              "tool (\"- `edit`: **13** calls - `run`: 5 calls\") the count beside the asked tool's name is the answer's. A range "
              "(\"6-8 times\") offers candidates: wrong. A vague count (\"many times\", \"about a dozen\") is a claim: wrong; beside a decline of the count (\"several times, but I can't say how many\", \"a few times; I cannot give an exact count\") "
              "it abstains.")

    def text(self, target: dict[str, Any]) -> str:
        return self.template.format(tool=target["tool"]) + (self.uncounted if target.get("uncounted") else "")

    def applies(self, profile: Profile) -> bool:
        return True

    def build(self, facts: CaseFacts) -> Question | DroppedQuestion:
        counts = Counter(e.name for e in facts.asked_events())
        if not counts:
            return DroppedQuestion(NAME, "no tool call (other than finish and think tools)")
        tool, count = min(counts.items(), key=lambda item: (-item[1], item[0]))
        calls = [e.call_index for e in facts.events if e.name == tool]
        target: dict[str, Any] = {"tool": tool}
        uncounted = facts.case.dropped_trailing.count(tool)
        if uncounted:
            target["uncounted"] = uncounted
        return make_question(facts.case, NAME, self.text(target), count, [call_key(tool)], calls, target=target)

    def spans(self, reference: int) -> None:
        return None  # a count: only every call of the tool shows it

    def claim(self, parsed: Any, text: str, repo_root: str | None) -> float | None:
        if isinstance(parsed, (int, float)) and not isinstance(parsed, bool):
            return float(parsed)
        if isinstance(parsed, dict):
            for value in parsed.values():
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    return float(value)
        text = _unemphasised(text)
        concluded = [n for m in _CONCLUSION.finditer(text) for n in numbers(m.group(1))[:1]]
        if concluded:
            return concluded[-1]
        nth = _BEFORE_NTH.search(text)
        if nth and (last := ordinal_number(nth.group(1))) is not None:
            return float(last)
        if (lead := _LEADING.match(text)) and (first := numbers(lead.group(1))):
            return first[0]  # "4 - I also checked once more": the number the answer opens with, then why
        times = _TIMES.search(text)
        counted = numbers(times.group(0)) if times else []
        if counted:
            return counted[0]
        if is_abstention(text):
            return None  # a number beside an abstention ("70-odd steps, can't say") is not the count
        found = numbers(text)
        return found[0] if found else None

    def vague(self, text: str) -> str | None:
        """An answer that states no number but answers how often, vaguely ("many times - I kept retrying"), claims
        something of the count: wrong. Beside a decline of the count ("several times, but I can't say exactly how
        many") the vague word only restates that it does not know: an abstention."""
        said = _VAGUE_COUNT.search(text)
        return f"a vague count ({said.group(0)!r}), not a number" if said and not is_abstention(text) else None

    def off_target(self, question: Question, text: str) -> str | None:
        """A count of another tool: the answer names tools, none of them the question's."""
        asked = re.search(r"`([^`]+)`", question.question)
        tool = (question.target or {}).get("tool") or (asked.group(1) if asked else "")
        # a part of the asked tool's name (`file_view` of `file_view_editor`: its command) is no other tool
        # another tool's count told beside the answer's own ("10 - plus 7 run_shell calls") is that tool's
        claimed = self.claim(None, text, None)
        beside = [name for count, name in _other_counts(text) if claimed is not None and not same_number(count, claimed)]
        named = [t.strip("`") for t in _TOOL_NAME.findall(_COMPARED.sub(" ", text))
                 if not re.search(rf"(?:^|_){re.escape(t.strip('`'))}(?:_|$)", tool or "") and t.strip("`") not in beside]
        if tool and named and not has_identifier(tool, text):
            return f"the count of another tool ({named[0]}), not of {tool}"
        return None

    def claim_question(self, question: Question, parsed: Any, text: str, repo_root: str | None) -> float | None:
        """The claim, where the answer tells counts per tool (a list "- `edit`: **13** calls - `run`: 5 calls"): the
        count told beside the asked tool's name, wherever the list puts it."""
        asked = re.search(r"`([^`]+)`", question.question)
        tool = (question.target or {}).get("tool") or (asked.group(1) if asked else "")
        if parsed is None and tool and (told := told_for(tool, text)):
            # "I count 23 edit calls, but the last got no result, so 22": the count worked down to its conclusion
            # (not in a list of counts per tool, where a total is no count of the asked tool)
            concluded = [n for m in _CONCLUSION.finditer(_unemphasised(text)) for n in numbers(m.group(1))[:1]]
            names = [m.group(1) for m in _NAMED_COUNT.finditer(text)] + [name for _, name in _other_counts(text)]
            if concluded and len(set(told)) == 1 and all(name.strip("`") == tool for name in names):
                return concluded[-1]
            return told[0]
        return self.claim(parsed, text, repo_root)

    def grade(self, reference: int, claim: float, repo_root: str | None) -> tuple[bool, str]:
        if same_number(claim, reference):
            return True, "same number of calls"
        return False, f"expected {reference}, the answer says {claim:g}"

    def answer_keys(self, reference: int) -> list[str]:
        return []  # a count is never readable in the task text


CALL_COUNT: QuestionType[int, float] = CallCount()  # its reference, its claim
