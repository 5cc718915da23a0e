"""``first_error``: what exception did the k-th run of a command print?

Reference ``{"type", "message"}`` of the first exception line in a command's output: a
Python traceback's last line, a Python syntax error printed without a traceback header, or
a Java ``pkg.SomeException: message`` line (also ``Exception in thread "main" ...``).
"""

from __future__ import annotations

import re
from typing import Any

from bench.extract import parse_first_exception
from bench.profiles import Profile
from bench.questions.matching import has_values, is_abstention, said_outside_decline
from bench.questions.messages import exception_types, in_substance, same_type
from bench.questions.question_type import CaseFacts, QuestionType, make_question
from bench.questions.suite_counts import run_question_text
from bench.store.schema import DroppedQuestion, Question

__all__ = ["FIRST_ERROR"]

NAME = "first_error"
# "no exception was printed" is a claim (that the run printed none), in its common forms: the run
# "ran without raising anything", "finished cleanly", "I didn't see an exception; it just printed ..."
_NONE = re.compile(
    r"\bno (?:exception|error|traceback)s? (?:was |were )?(?:printed|raised|thrown|shown)"
    r"|\b(?:didn't|did not|never) (?:raise|print|throw) (?:an?y? )?(?:exception|error|anything)"
    r"|\bwithout (?:raising|printing|throwing) (?:an?y?(?:thing)?|exceptions?|errors?)\b"
    r"|\b(?:ran|finished|completed|exited|succeeded) (?:fine|cleanly|successfully|without (?:an?y? )?"
    r"(?:errors?|exceptions?|problems?|issues?))"
    r"|\bthere (?:was|were) no (?:exception|error|traceback)s?\b"
    r"|\b(?:didn't|did not) see an?y? (?:exception|error|traceback)s?\b[^.\n]*?[;,.:]\s*it (?:just|only|simply) "
    r"(?:printed|ran|showed|output)"
    # "None - it just printed `Result: null`": the answer opens by saying there was none
    r"|^\W*(?:none|nothing|no exception|no error)\W*(?:$|[.;:,!\u2013\u2014-])", re.I)
# what a correction of the message opens with ("... no wait - it was X"): not the message
_CORRECTED_OPENING = re.compile(r"^\W*(?:it was|it's|it said|the message was|that was)\s+", re.I)
_EITHER = re.compile(r"\beither\b|\bor\b", re.I)
# An error described without its type ("some botocore error about missing credentials", "mypy crashed with an
# INTERNAL ERROR at x.py:19"): a claim about the exception (wrong: it names no type), not an abstention. It
# describes: it says what the error was about, or names something specific (a value, a path, an all-caps word).
_ERROR_WORD = re.compile(r"\b(?:errors?|exceptions?|crash\w*|traceback|raised|threw|thrown|panic\w*)\b", re.I)
# "it failed with `No module named x`": an error told by a quoted message alone
_FAILED_WITH = re.compile(r"\b(?:failed|died|crashed|errored|aborted|stopped)\s+(?:with|on)\s+[`'\"]\S", re.I)
_DESCRIBES = re.compile(r"\b(?:about|regarding|related to|saying|complaining|because|due to|caused by|"
                        r"something like|some kind of|to do with)\b|\b[A-Z]{3,}\b")


# what failed, told without the error ("importing astropy failed", "the build failed to compile"): a vague claim
_VAGUE_FAILURE = re.compile(r"\b(?:import(?:ing)?|install(?:ing)?|load(?:ing)?|build(?:ing)?|compil(?:ing|ation)|"
                            r"the (?:import|install\w*|build|compilation) of)\s+[\w.`'-]+\s+(?:had\s+|just\s+)?"
                            r"(?:failed|crashed|broke)\b|\bfailed to (?:import|load|install|build|compile)\b", re.I)


# a "Type:" field of an answer, and Java's thread header (no type: the class follows it)
_TYPE_FIELD = re.compile(r"^\W*type\W*:\s*(.+)$", re.I | re.M)
_THREAD_HEADER = re.compile(r"Exception in thread\s+[\"'][^\"']*[\"']")


class FirstError:
    name = NAME
    template = "What exception (type and message) did the {nth} run of `{command}` print?"
    answer_format = {"type": "the exception type", "message": "its message"}  # the typed answer's keys (bench.questions.answers)
    reference_kind = "error"  # an error message (bench.questions.guess)
    answer_tokens = 60  # a typical typed answer's output tokens (bench.estimate)
    rubric = ("Errors: the same exception type (qualified or not: java.lang.NullPointerException = "
              "NullPointerException) and the message in substance: a paraphrase is fine if it keeps the key "
              "identifiers (names, numbers, quoted strings, paths). When the reference message is empty, the "
              "type decides. An answer that names another type (\"a KeyError, not an AssertionError\") is wrong, "
              "so is a class of the same name from another package (requests.exceptions.ConnectionError is not the "
              "built-in ConnectionError) and an error described without its type (\"some botocore error about "
              "credentials\", \"I only remember that importing x failed\"). `Exception in thread \"main\"` is Java's header, not the type; a class printed as "
              "`Name: message` (`InvalidOperation: [...]`), named after \"raised\"/\"threw\" or \"it was a\", qualified by its "
              "package (`decimal.ConversionSyntax`) or heading the answer (\"InvalidOperation, with ConversionSyntax "
              "in the message\", \"An `InvalidOperation` from the decimal module; ...\") is the claimed type. A class in the message may be named "
              "unqualified (`ConversionSyntax` for `<class 'decimal.ConversionSyntax'>`). Numbers of the message are "
              "compared as numbers (286 = 286.0), but one replaced by words (\"step argument\" for \"arg 3\") is "
              "not stated. A quoted value is stated whole (\"12.5 kg\" is not \"12.5\"); a path under the "
              "repository root may be given relative to it; a location in the message (a trailing `(x.py, line 3)`, "
              "make's `[Makefile:9: all]`) may be left out, but one given must be the reference's (the same path "
              "under another root, `/workspace/x/pkg/a.py` for `/testbed/pkg/a.py`, is another location). \"None - it just "
              "printed `Result: null`\" claims no exception (wrong when there was one).")

    def text(self, target: dict[str, Any]) -> str:
        return run_question_text(self.template, target)

    def applies(self, profile: Profile) -> bool:
        return bool(profile.shell_tools)

    def build(self, facts: CaseFacts) -> Question | DroppedQuestion:
        for run in facts.runs:
            hit = parse_first_exception(run.output)
            if hit is not None:
                error, line = hit
                params = {"command": run.command, "ordinal": run.ordinal}
                return make_question(facts.case, NAME, run_question_text(self.template, params), error,
                                     [run.command, line], [run.call_index, *run.result_indices],
                                     params=params, target={"tool": facts.profile.shell_tools[0], **params})
        return DroppedQuestion(NAME, "no exception in any command output")

    def spans(self, reference: dict[str, str]) -> list[str] | None:
        return self.answer_keys(reference)  # the type's name and the message

    def claim(self, parsed: Any, text: str, repo_root: str | None) -> dict[str, Any] | None:
        if isinstance(parsed, dict) and isinstance(parsed.get("type"), str):
            return {"types": [parsed["type"]], "message": str(parsed.get("message") or ""), "text": None}
        types = exception_types(text, printed=True)
        field = _TYPE_FIELD.search(text)
        if field and _THREAD_HEADER.fullmatch(field.group(1).strip(" `*")):
            # "Type: Exception in thread "main"": the field claims Java's header as the type, whatever the message
            return {"types": [field.group(1).strip(" `*")], "message": None, "text": text}
        if not types:
            # "no exception was printed" is a claim too (that the run printed none)
            if _NONE.search(text):
                return {"types": ["(none)"], "message": "", "text": text}
            if (_ERROR_WORD.search(text) and not is_abstention(text) and (_DESCRIBES.search(text) or has_values(text))) \
                    or (_FAILED_WITH.search(text) and not is_abstention(text)):
                return {"types": [], "message": None, "text": text}  # a vague claim
            return None
        return {"types": types, "message": None, "text": text}

    def vague(self, text: str) -> str | None:
        """An answer that names no exception but says what failed, vaguely ("I can't see it any more - I only remember
        that importing astropy failed"): a claim about the error, wrong (a clause that declines is no claim)."""
        said = said_outside_decline(text, _VAGUE_FAILURE)
        return f"a vague claim about the error ({said!r}), no exception named" if said else None

    def corrects(self, head: str, tail: str) -> str:
        """The claim after a self-correction: the corrected text, or, when the correction names no exception type
        ("AssertionError: a failed... no wait - it was b failed"), the type the answer gave with the corrected
        message (the correction replaces the message only)."""
        if exception_types(tail, printed=True) or not (types := exception_types(head, printed=True)):
            return tail
        return f"{types[0]}: {_CORRECTED_OPENING.sub('', tail)}"

    def grade(self, reference: dict[str, str], claim: dict[str, Any], repo_root: str | None) -> tuple[bool, str]:
        types = claim["types"]
        if not types:
            return False, "an error described without its exception type"
        claimed = types[0]
        # several distinct types offered as alternatives ("either X or Y") do not state the reference
        distinct = {t.rsplit(".", 1)[-1] for t in types}
        if len(distinct) > 1 and claim["text"] and _EITHER.search(claim["text"]):
            return False, f"conflicting candidates: {sorted(distinct)}"
        if not same_type(claimed, reference["type"]):
            return False, f"type {claimed} differs from {reference['type']}"
        message = claim["message"] if claim["message"] is not None else claim["text"]
        wanted = reference["message"]
        if repo_root and repo_root.rstrip("/") + "/" in wanted:  # its path may be stated relative to the root
            wanted, message = (t.replace(repo_root.rstrip("/") + "/", "") for t in (wanted, message))
        if wanted and not in_substance(wanted, message):
            return False, "type matches, message differs"
        return True, "same exception type and message"

    def answer_keys(self, reference: dict[str, str]) -> list[str]:
        return [reference["type"].rsplit(".", 1)[-1]] + ([reference["message"]] if reference["message"] else [])

    def template_text(self, reference: dict[str, str]) -> str:
        """The error as the template rule compares it across cases (bench.questions.guess)."""
        return f"{reference['type']}: {reference.get('message') or ''}"


FIRST_ERROR: QuestionType[dict[str, str], dict[str, Any]] = FirstError()  # its reference, its claim
