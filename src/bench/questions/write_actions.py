"""``write_actions``: which changes did the agent make, in order?

The state-changing calls (the profile's ``write_tools``; ``generic``: ``dataset.write_tools``)
whose result is known and is not an error (a refused call changed nothing), in call order.
Reference: a list of ``{"tool", "arguments"}`` with the key arguments of each call: the
profile's ``write_key_args``, else its identifier arguments (``id``, ``*_id``), else every
scalar argument; the call's other scalar arguments under ``other`` (when it has any): an answer need
not give them, but a value it states for one must be the call's. Dropped when the source names no write tool, when no write call succeeded,
when a write call's result is unknown (it may or may not have applied), or when there are
more than ``MAX_CHANGES`` (a list that long is a test of transcription, not of memory).
"""

from __future__ import annotations

import re
from typing import Any

from bench.extract.history import ToolEvent
from bench.profiles import Profile
from bench.questions.matching import has_values, is_abstention
from bench.questions.question_type import CaseFacts, QuestionType, make_question
from bench.questions.tool_value import value_text
from bench.questions.values import numbers, same_number
from bench.store.schema import DroppedQuestion, Question

__all__ = ["WRITE_ACTIONS", "key_arguments"]

NAME = "write_actions"
QUESTION = "Which changes did you make, in order? Name each state-changing tool call and its key arguments."
MAX_CHANGES = 12
_ID = re.compile(r"(?:^|_)id$", re.I)


def _scalar(value: Any) -> bool:
    return isinstance(value, (str, int, float, bool)) and value is not None


def key_arguments(profile: Profile, args: dict[str, Any]) -> dict[str, Any]:
    """The arguments an answer must give for a change (see the module doc)."""
    if profile.write_key_args:
        return {k: args[k] for k in profile.write_key_args if k in args}
    ids = {k: v for k, v in args.items() if _ID.search(k) and _scalar(v)}
    return ids or {k: v for k, v in args.items() if _scalar(v)}


def _change(profile: Profile, event: ToolEvent) -> dict[str, Any]:
    keys = key_arguments(profile, event.args)
    other = {k: v for k, v in event.args.items() if k not in keys and _scalar(v)}
    return {"tool": event.name, "arguments": keys, **({"other": other} if other else {})}


class WriteActions:
    name = NAME
    answer_format = {"actions": "list of {\"tool\": name, \"arguments\": {...}}, in the order made"}  # the typed answer's keys (bench.questions.answers)
    answer_tokens = 80  # a typical typed answer's output tokens (bench.estimate)
    rubric = ("Changes: the state-changing calls the answer lists are the reference's, in the same order "
              "(a missing, extra or reordered change is wrong), each with every key argument value of the "
              "reference (ids character for character, numbers numerically; a value several changes share may be "
              "said once). Changes may be told in prose (\"sent a payment request for bill B1\" = "
              "send_payment_request) or as JSON with the arguments beside the tool; one change made for several "
              "ids may be named once with each id, in order (\"grant_app_permission: storage, then sms\"). A call "
              "listed as a change that is none of the reference's (a read-only call, a transfer, a call that "
              "failed) is an extra change; calls mentioned only as context, or said to have failed, do not count. "
              "The values of a change's other arguments (`other`) need not be stated, but a value the answer states "
              "for one (\"gb_amount: 4\", \"4 GB\" for gb_amount 2, \"business-class\" for cabin economy) must be "
              "the call's. Prose may name a change by its verb and a value of its own (\"refueled 2 GB on L1002\" = "
              "refuel_data, \"set 4g_5g_preferred\" = set_network_mode_preference), by its words without the verb, "
              "with a value of its own (\"payment request for bill B1\"), or object first (\"SIM reseated\", \"APN "
              "reset\"); one verb for two objects joined by \"and\" tells both (\"turned roaming off and airplane mode "
              "off\"); \"downgraded R1 (card_1) and R2 (gift_2)\" = update_X for each; \"switched/changed X to V\" is "
              "set_X; an item listed with a verb of looking up and no subject (\"got the bills\") lists a read call, an "
              "extra change, as is a further call told in the sequence (\"Later I transferred the customer.\"), but not a "
              "payment told by its means after a change (\"booked ..., paid $250 by certificate\": its payment); \"booked two "
              "reservations\" is two changes; \"X twice with Y in between\" is X, Y, X; the order is the one the answer states "
              "(\"resumed L1, after first sending a payment request\" tells the payment request first). An aside after "
              "the changes (\"(Afterwards I transferred the customer, "
              "which changed nothing.)\") is no change; \"no insurance\" states insurance no, \"with travel insurance\" yes.")

    def text(self, target: dict[str, Any]) -> str:
        return QUESTION

    def applies(self, profile: Profile) -> bool:
        return bool(profile.write_tools)

    def build(self, facts: CaseFacts) -> Question | DroppedQuestion:
        profile = facts.profile
        writes = [e for e in facts.events if profile.is_write(e.name)]
        if not writes:
            return DroppedQuestion(NAME, "no call of a write tool")
        unknown = [e for e in writes if e.output is None]
        if unknown:
            return DroppedQuestion(NAME, f"the result of a {unknown[0].name} call is unknown")
        applied = [e for e in writes if not profile.is_error(e.raw)]
        if not applied:
            return DroppedQuestion(NAME, "every write call returned an error")
        if len(applied) > MAX_CHANGES:
            return DroppedQuestion(NAME, f"more than {MAX_CHANGES} changes ({len(applied)})")
        changes = [_change(profile, e) for e in applied]
        keys = [k for c in changes for k in (c["tool"], *(value_text(v) for v in c["arguments"].values()))]
        indices = [i for e in applied for i in (e.call_index, e.result_index)]
        return make_question(facts.case, NAME, QUESTION, changes, keys, indices,
                             target={"tools": sorted({c["tool"] for c in changes})})

    def spans(self, reference: list[dict[str, Any]]) -> None:
        return None  # a list: only every change's call and result show it

    def claim(self, parsed: Any, text: str, repo_root: str | None) -> dict[str, Any] | None:
        if isinstance(parsed, dict):
            parsed = parsed.get("changes") or parsed.get("actions") or parsed
        if isinstance(parsed, dict) and _tool_of(parsed):
            parsed = [parsed]
        if isinstance(parsed, list) and parsed and all(isinstance(c, dict) and _tool_of(c) for c in parsed):
            return {"changes": [{"tool": _tool_of(c), "arguments": {**(c["other"] if isinstance(c.get("other"), dict)
                                                                         else {}), **_arguments_of(c)}}
                                for c in parsed]}
        if not text.strip() or (is_abstention(text) and not has_values(text)):
            return None
        return {"text": text}

    def grade(self, reference: list[dict[str, Any]], claim: dict[str, Any], repo_root: str | None
              ) -> tuple[bool, str]:
        want = [c["tool"] for c in reference]
        if "changes" in claim:
            got = claim["changes"]
            tools = [c["tool"].strip("` ") for c in got]
            if tools != want:
                return False, f"changes {tools}, expected {want}"
            for ref, item in zip(reference, got, strict=True):
                for key, value in ref["arguments"].items():
                    if not _same(value, (item.get("arguments") or {}).get(key)):
                        return False, f"{ref['tool']}: {key} differs from {value_text(value)!r}"
                for key, value in (ref.get("other") or {}).items():  # not asked for, but if stated, stated right
                    stated = (item.get("arguments") or {}).get(key)
                    if stated is not None and not _same(value, stated):
                        return False, f"{ref['tool']}: {key} stated as {value_text(stated)!r}, the call had " \
                                      f"{value_text(value)!r}"
            return True, "same changes in order"
        return _grade_text(reference, claim["text"])

    def answer_keys(self, reference: list[dict[str, Any]]) -> list[str]:
        return []  # a list of changes is never readable in the task text


def _tool_of(item: dict[str, Any]) -> str | None:
    """The tool a JSON change names (``tool``, or ``name`` / ``function`` as models also write it)."""
    for key in ("tool", "name", "function"):
        if isinstance(item.get(key), str) and item[key].strip():
            return item[key].strip("` ")
    return None


def _arguments_of(item: dict[str, Any]) -> dict[str, Any]:
    """A JSON change's arguments: nested (``arguments`` / ``args``), or flat beside the tool
    (``{"tool": "x", "customer_id": "C1"}``)."""
    for key in ("arguments", "args", "parameters"):
        if isinstance(item.get(key), dict):
            return item[key]
    return {k: v for k, v in item.items() if k not in ("tool", "name", "function", "arguments", "args", "parameters")}


# --- changes in free text ------------------------------------------------------------------------------------

# A tool named in an answer: a snake_case identifier (possibly backticked)
_TOOL_LIKE = re.compile(r"(?<![\w.-])`?([a-z][a-z0-9]*(?:_[a-z0-9]+)+)`?(?![\w-])")
# A list item that says its call changed nothing ("resume_line (failed: line not suspended)")
_NO_CHANGE = re.compile(r"\b(?:fail\w*|errors?|errored|refused|rejected|denied|no effect|did not|didn't|not applied|"
                        r"changed nothing|nothing changed|read-only|only (?:read|looked|checked))\b", re.I)
# "book_reservation for mia_1 twice - the first attempt and then ...": one change told as made two times
# (the change's arguments in parentheses before it: "book_reservation (mia_1) twice")
_TWICE = re.compile(r"(?:[^.;\n\u2014\u2013(]|\([^()]*\))*?\btwice\b", re.I)
# "twice: the first failed, ...": the failure of one of the attempts, told with the change
_ONE_FAILED = re.compile(r"\b(?:first|second|earlier|initial|one|other)\b(?:\s+(?:attempt|try|call|time|one))?\s+"
                         r"(?:was\s+)?(?:fail\w*|errored|refused|rejected|denied)\b", re.I)
# "booked two reservations": a number word before the change's object, in the plural, tells that many changes
_MANY = {"two": 2, "three": 3, "four": 4, "five": 5}
_MANY_OBJECTS = re.compile(r"(?<![\w-])(" + "|".join(_MANY) + r")[ \t]+(?:[\w-]+[ \t]+)?[^\W_]+s$", re.I)
# "X twice with Y and Z in between": X, Y, Z, X (group 1: where the second X is told)
_IN_BETWEEN = re.compile(r"[ \t]+twice,?[ \t]+with\b[^.;,\n]*?\b(in[ \t]+between)\b", re.I)
_BULLET = re.compile(r"^\s*(?:[-*\u2022]|\d+[.)]|\(?[a-z]\))?\s*")
# An item that tells a change in prose without naming it: it starts with a verb of doing ("enabled roaming on
# that line"); verbs of looking (checked, verified) tell no change
_DID = re.compile(r"^(?:(?:first|then|next|finally|also|and|after that|afterwards|later|lastly|i|we)\b[\s,]*)*"
                  r"(?!(?:checked|looked|verified|confirmed|viewed|searched|fetched|retrieved|listed|asked|explained|"
                  r"told|tested|tried|attempted|noticed|needed|wanted|used|called|ran|found|saw|read)\b)"
                  r"([a-z]+ed|sent|set|reset|made|paid|put|gave|took|rebooked|upgraded|downgraded)\b", re.I)


# "paid $250 by certificate and $55 by card", "paid with the gift card": a payment told by its means (its amount
# optional); "paid $20 toward the bill" tells no means: a payment of its own
_PAID = re.compile(r"^(?:and\s+)?paid\s+(?:\$?\d[\d.,]*\s+)?(?:with|by|using|via)\b", re.I)


# An item that lists a read call as one of the changes: it opens with a verb of looking up, no subject or sequence
# word before it ("got the bills", "checked the APN settings"): a call listed, not a step told ("First I looked up
# the user with get_user_details, then I booked ..." narrates, and `_DID` reads a verb of looking as no change)
_LISTED_READ = re.compile(r"^(?:got|fetched|retrieved|looked\s+up|pulled\s+up|queried|checked|viewed|listed|"
                          r"searched(?:\s+for)?)\s+(?:the\s+|a\s+|an\s+|his\s+|her\s+|their\s+)?[\w-]+", re.I)
# a label before the list ("For C1001: ..."): the customer or account the changes are for, not an item's words
_LABEL = re.compile(r"^[^:\n]{1,40}:\s+(?=\S)")


def _items(text: str) -> list[tuple[int, int]]:
    """Spans of the items an answer lists: lines, sentences, and parts separated by ``;``, arrows, "then" or commas
    outside parentheses (the arguments of a call written ``tool(a, b)`` stay in its item; an aside in parentheses
    after a sentence, "(Afterwards I transferred ..., which changed nothing.)", is an item of its own)."""
    spans, depth, start, i = [], 0, 0, 0
    separator = re.compile(r"\n|;|->|\u2192|=>|,?\s+(?:and\s+)?then\s+|,|\.(?=\s+\(?[A-Z])")
    while i < len(text):
        char = text[i]
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth = max(0, depth - 1)
        elif depth == 0 and (cut := separator.match(text, i)) and \
                (char != "." or re.search(r"[^\W\d]", _BULLET.sub("", text[start:i]))):  # "1." is a bullet
            spans.append((start, i))
            start = i = cut.end()
            continue
        i += 1
    spans.append((start, len(text)))
    return [(a, b) for a, b in spans if text[a:b].strip()]


def _stem(word: str) -> str:
    return word if len(word) <= 3 else word[: max(3, len(word) - 2)]


# "turned airplane mode off", "switched Wi-Fi calling on": a toggle told by what it did
_TOGGLE = r"(?:toggl|turn|switch|flipp?)"
# "switched the network mode to X", "changed the plan to Y": a set_ tool told by what it did
_SET = r"(?:set|switch|chang)"
# after a tool's words with its last one left out ("rebooted", "re-seated the SIM", "set network mode to X"): the
# item ends, or a word that names nothing follows
_ENDS = r"(?=\s*(?:$|[;,.:()\n]|->|\u2192|\b(?:to|for|on|off|of|in|at|with|and|then|again|back|once|twice)\b))"


def _word(word: str) -> str:
    """A tool's word in prose: any inflection (its stem), a hyphen anywhere in it ("re-seated", "Wi-Fi")."""
    stem = _stem(word)
    pattern = _TOGGLE if word == "toggle" else _SET if word == "set" else "-?".join(re.escape(ch) for ch in stem)
    return rf"(?<![\w-]){pattern}[^\W_]*(?![\w])"


# up to four words within one item between a change's words and its value, not across "and"/"then" (the next change)
_WITHIN_FOUR = r"(?:[ \t]+(?!(?:and|then)\b)[\w$./%-]+){0,4}?[ \t]+"
_PARTICIPLE = re.compile(r"(?:ed|set)$", re.I)  # a mention told object first ends in the verb's participle


def _tool_words(reference: list[dict[str, Any]]) -> list[tuple[str, list[str]]]:
    """Each tool of the reference's changes once, with its words (``send_payment_request``: send, payment, request)."""
    return [(tool, [w for w in re.split(r"[_\W]+", tool) if w]) for tool in {c["tool"] for c in reference}]


def _mentions(reference: list[dict[str, Any]], text: str) -> list[tuple[str, int, int]]:
    """Where the answer names each of the reference's tools, in order: by its identifier, or in prose by its
    words in order, any inflection, hyphens ignored, up to three words between ("sent a payment request" =
    send_payment_request; "turned airplane mode off" = toggle_airplane_mode), the last word optional where the
    item ends ("rebooted" = reboot_device). Overlapping mentions keep the longest (``toggle_data_saver_mode``
    over ``toggle_data``)."""
    found = []
    between = r"(?:[ \t]+[\w$./%-]+){0,3}?[ \t]+"  # within a line: a tool's words are read inside one item
    for tool, words in _tool_words(reference):
        found += [(tool, m.start(), m.end()) for m in re.finditer(rf"(?<![\w]){re.escape(tool)}(?![\w])", text)]
        if len(words) >= 2:  # one word in prose ("search") would be any use of the word
            forms = [between.join(_word(w) for w in words)]
            if words[:-1] != ["toggle"]:  # "turned on" alone names no toggle
                forms.append(between.join(_word(w) for w in words[:-1]) + _ENDS)
            for prose in forms:
                found += [(tool, m.start(), m.end()) for m in re.finditer(prose, text, re.I)]
            # object first, the verb's participle after ("SIM reseated", "roaming toggled", "APN reset"), the last
            # word optional; not across "then" ("data then toggled airplane mode" is the next change's verb)
            after = r"(?:[ \t]+(?!then\b)[\w$./%-]+){0,3}?[ \t]+"
            objects = [words[1:]] + ([words[1:-1]] if len(words) >= 3 else [])
            for passive in (after.join(_word(w) for w in names) + after + _word(words[0]) for names in objects):
                found += [(tool, m.start(), m.end()) for m in re.finditer(passive, text, re.I)
                          if _PARTICIPLE.search(m.group(0))]
    # one verb for two changes joined by "and" ("turned roaming off and airplane mode off", "airplane mode and data
    # toggled"): where a shorter mention of another tool starts at the same verb (or ends at the same participle) and
    # the "and" lies between, both are told, parted at the "and"
    for i, (tool, start, end) in enumerate(found):
        for other, at, stop in found:
            if other == tool:
                continue
            if at == start and stop < end and (joined := re.search(r"\band\b", text[stop:end])):
                found[i] = (tool, stop + joined.start(), end)
                break
            if stop == end and at > start and (joined := re.search(r"\band\b", text[start:at])):
                found[i] = (tool, start, start + joined.start())
                break
    kept: list[tuple[str, int, int]] = []
    for tool, start, end in sorted(found, key=lambda f: (f[1], f[1] - f[2])):
        if not kept or start >= kept[-1][2]:
            kept.append((tool, start, end))
    # where its words are not found: a change told by its verb and a value of its own ("refueled 2 GB on L1",
    # "set 4g_5g_preferred", "granted messaging the sms permission"), in one item
    for tool, start, end in sorted(_verb_and_value(reference, text) + _object_and_value(reference, text),
                                   key=lambda f: (f[1], f[1] - f[2])):
        if not any(start < b and a < end for _, a, b in kept):
            kept.append((tool, start, end))
    return sorted(kept, key=lambda f: f[1])


# an update_ tool told by a verb of updating ("downgraded R1 (card_1) and R2 (gift_2) to economy" =
# update_reservation_flights), with a value of its own after it
_UPDATING = r"(?<![\w-])(?:updat|chang|modif|upgrad|downgrad)[^\W_]*(?![\w])"


def _value_patterns(reference: list[dict[str, Any]], tool: str) -> set[str]:
    """The patterns of every non-boolean argument value (and ``other`` value) of the tool's changes."""
    return {_value_pattern(v) for c in reference if c["tool"] == tool
            for v in (*c["arguments"].values(), *(c.get("other") or {}).values()) if not isinstance(v, bool)}


def _verb_and_value(reference: list[dict[str, Any]], text: str) -> list[tuple[str, int, int]]:
    """Mentions of a reference tool by its first word (a verb, any inflection; for ``update_`` any verb of updating)
    followed, within four words of the same item, by an argument value of one of its changes (key or other)."""
    found = []
    for tool, words in _tool_words(reference):
        if len(words) < 2 or words[0] == "toggle":
            continue
        values = _value_patterns(reference, tool)
        keys = {_value_pattern(v) for c in reference if c["tool"] == tool
                for k, v in c["arguments"].items() if _ID.search(k) and not isinstance(v, bool)}
        forms = [(_word(words[0]), value) for value in values]
        if words[0] == "update":  # a verb of updating names the change only with its ids ("downgraded to economy" no)
            forms += [(_UPDATING, value) for value in keys]
        for verb, value in forms:
            form = verb + _WITHIN_FOUR + value
            found += [(tool, m.start(), m.end()) for m in re.finditer(form, text, re.I)]
        for value in values:  # the value first, the participle right after ("4g_5g_preferred set")
            found += [(tool, m.start(), m.end()) for m in re.finditer(value + r"[ \t]+" + _word(words[0]), text, re.I)
                      if _PARTICIPLE.search(m.group(0))]
    return found


def _object_and_value(reference: list[dict[str, Any]], text: str) -> list[tuple[str, int, int]]:
    """Mentions of a reference tool by its words without its verb, opening an item (after a bullet and a label
    such as "For C1001:"), followed within four words of that item by an argument value of one of its changes: a
    change told as a noun phrase ("payment request for bill B1" = send_payment_request). At least two words must
    remain without the verb ("line L1" alone, of resume_line, names no change), and the item must open with them:
    "checked the payment request for B1" tells a look, not the change."""
    found = []
    for tool, words in _tool_words(reference):
        if len(words) < 3 or words[0] == "toggle":
            continue
        values = _value_patterns(reference, tool)
        noun = r"(?:(?:an?|the)[ \t]+)?" + r"[ \t]+".join(_word(w) for w in words[1:])
        for a, b in _items(text):
            item = text[a:b]
            start = len(item) - len(_LABEL.sub("", _BULLET.sub("", item, count=1), count=1))
            for value in values:
                form = noun + _WITHIN_FOUR + value
                if m := re.compile(form, re.I).match(item, start):
                    found.append((tool, a + m.start(), a + m.end()))
    return found


def _value_pattern(value: Any) -> str:
    """A value as prose states it: a number in any form (2 = 2.0), else its text whole."""
    if isinstance(value, (int, float)):
        number = f"{float(value):g}"
        return rf"(?<![\w.]){re.escape(number)}(?:\.0+)?(?![\w.])"
    return rf"(?<![\w-]){re.escape(value_text(value).strip())}(?![\w-])"


def _value_in(value: Any, text: str) -> bool:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return any(same_number(value, n) for n in numbers(text, words=False))
    shown = value_text(value).strip()
    return re.search(rf"(?<![\w-]){re.escape(shown)}(?![\w-])", text, re.I) is not None


def _grade_text(reference: list[dict[str, Any]], text: str) -> tuple[bool, str]:
    """Changes written as text (a list, arrows, prose): the changes it names must be the reference's, in order,
    each with its key argument values. A call listed as an item of its own that is none of the reference's tools
    (a read call, a failed call, a transfer) is an extra change; an item that says its call failed or changed
    nothing is no change. A change made for several ids may be named once with each id ("grant_app_permission
    (messaging: storage, then sms)"): it counts once per id. Values only one change has must be said with it;
    values several changes share, anywhere."""
    want = [c["tool"] for c in reference]
    keys = {k.lower() for c in reference for k in c["arguments"]}
    values = {value_text(v).lower() for c in reference for v in c["arguments"].values()}
    items = _items(text)
    everything = _mentions(reference, text)
    # an item that says its call failed is no change, unless the failure is one attempt's of a change made twice
    # ("book_reservation twice: the first failed on the total, ..."), which counts once (below)
    inert = [(a, b) for a, b in items if _NO_CHANGE.search(text[a:b]) and not (
        _ONE_FAILED.search(text[a:b]) and any(a <= m[1] < b and _TWICE.match(text[m[2]:b]) for m in everything))]
    found = [m for m in everything if not any(a <= m[1] < b for a, b in inert)]
    # "roaming toggled twice with airplane mode and data toggled in between": the second time after those between
    for tool, _start, end in list(found):
        if between := _IN_BETWEEN.match(text, end):
            found.append((tool, between.start(1), between.end(1)))
    found.sort(key=lambda f: f[1])
    mentions: list[tuple[str, int, int]] = []
    for tool, start, end in found:  # "sent a payment request with send_payment_request": one change, named twice
        item = next(((a, b) for a, b in items if a <= start < b), None)
        if mentions and mentions[-1][0] == tool and item and item[0] <= mentions[-1][1] < item[1]:
            mentions[-1] = (tool, mentions[-1][1], end)
        else:
            mentions.append((tool, start, end))
    for a, b in items:
        if (a, b) in inert or any(a <= m[1] < b for m in mentions):
            continue
        words = " ".join(_BULLET.sub("", text[a:b]).split()[:3])
        head = _TOOL_LIKE.search(words)
        if head and head.group(1) not in want and head.group(1).lower() not in keys | values \
                and not re.search(r"(?:^|_)id$", head.group(1)) and not re.match(r"\s*=", words[head.end():]):
            return False, f"an extra change: {head.group(1)}"
        if not head and _PAID.match(_BULLET.sub("", text[a:b]).strip()) and any(
                m[1] < a and not re.search(r"[.!?\n]", text[m[2]:a]) for m in mentions):
            continue  # "book_x for u1, ..., paid $250 by certificate": how that change was paid, its argument
        if not head and (did := _DID.match(_BULLET.sub("", text[a:b]).strip())):
            return False, f"an extra change: {did.group(0).strip()!r} names none of the changes"
        if not head and (read := _LISTED_READ.match(_LABEL.sub("", _BULLET.sub("", text[a:b]).strip()))):
            return False, f"an extra change: {read.group(0).strip()!r} lists a call that changed nothing"
    own = [{value_text(v) for v in c["arguments"].values()} - {
        value_text(w) for other in reference if other is not c for w in other["arguments"].values()}
        for c in reference]
    per_mention: list[list[tuple[str, int, int]]] = []  # (tool, where its values are said: last mention to next)
    for i, (tool, _, _) in enumerate(mentions):
        region = (mentions[i - 1][2] if i else 0, mentions[i + 1][1] if i + 1 < len(mentions) else len(text))
        times = 1
        if sum(1 for m in mentions if m[0] == tool) < want.count(tool):  # named once for several changes
            said = text[region[0]: region[1]]
            times = max(1, sum(1 for c, mine in zip(reference, own, strict=True)
                               if c["tool"] == tool and mine and all(_value_in(v, said) for v in mine)))
            if (extra := _extra_id(reference, tool, text[mentions[i][1]:region[1]])) is not None:
                return False, f"an extra change: {tool} for {extra!r}"
        item = next(((a, b) for a, b in items if a <= mentions[i][1] < b), None)
        sentence = re.split(r"(?<=[.!?])\s", text[mentions[i][2]:], maxsplit=1)[0]
        if item and _TWICE.match(text[mentions[i][2]: item[1]]) and not _NO_CHANGE.search(sentence) \
                and not _IN_BETWEEN.match(text, mentions[i][2]):
            # "book_reservation for u1 twice": the same change made two times (unless one is said to have failed:
            # "twice, really: the first attempt failed" is one change)
            times = max(times, 2)
        if (many := _MANY_OBJECTS.search(text[mentions[i][1]:mentions[i][2]])) and not _NO_CHANGE.search(sentence):
            times = max(times, _MANY[many.group(1).lower()])  # "booked two reservations": two bookings
        per_mention.append([(tool, *region)] * times)
    order = _stated_order(mentions, text)  # "I resumed L1, after first sending a payment request": that one first
    named = [entry for i in order for entry in per_mention[i]]
    told = [(rank, k) for rank, i in enumerate(order) for k in range(len(per_mention[i]))]
    textual = [(order[rank], k) for rank, k in told]  # where each change is told: its mention's place in the text
    tools = [tool for tool, _, _ in named]
    if tools != want:
        return False, f"changes named {tools}, expected {want}"
    missing = [value_text(v) for c in reference for v in c["arguments"].values() if not _value_in(v, text)]
    if missing:
        return False, f"key arguments missing: {missing}"
    firsts = []  # each change's own values are said with it, in the order its mentions are told
    for change, mine, (_, a, b), place in zip(reference, own, named, textual, strict=True):
        where = [_position(v, text, a, b) for v in mine]
        if any(w is None for w in where):
            return False, f"{change['tool']}: {', '.join(sorted(mine))} not said with it"
        if where:
            firsts.append((place, min(w for w in where if w is not None)))
    positions = [w for _, w in sorted(firsts)]
    if positions != sorted(positions):
        return False, "changes named in another order"
    for change, (_, a, b) in zip(reference, named, strict=True):
        for key, value in (change.get("other") or {}).items():
            if (misstated := _misstated(key, value, text[a:b])) is not None:
                return False, f"{change['tool']}: {key} stated as {misstated!r}, the call had {value_text(value)!r}"
    return True, "same changes in order"


def _shape(value: str) -> tuple[int, frozenset[str]]:
    """An id's form: its length and kinds of character ("JG7FMM" and "LQ940Q": six capitals and digits)."""
    return len(value), frozenset("A" if c.isupper() else "a" if c.islower() else "9" if c.isdigit() else c
                                 for c in value)


def _extra_id(reference: list[dict[str, Any]], tool: str, sentence: str) -> str | None:
    """In the sentence of a change named once for several ids ("Downgraded R1 (card_1), R3 and R2 (gift_2)"), an id
    of the same form as the change's ids that is none of the reference's values: a change for it is an extra one."""
    sentence = re.split(r"(?<=[.!?])\s", sentence, maxsplit=1)[0]
    ids = {value_text(v) for c in reference if c["tool"] == tool for k, v in c["arguments"].items() if _ID.search(k)}
    every = {value_text(v).lower() for c in reference for v in (*c["arguments"].values(), *(c.get("other") or {}).values())}
    shapes = {_shape(v) for v in ids if re.search(r"\d", v)}  # an id with a digit: a word is not an id
    return next((token for token in re.findall(r"(?<![\w-])[\w-]+(?![\w-])", sentence)
                 if token.lower() not in every and re.search(r"\d", token) and _shape(token) in shapes), None)


# a change told after another that it preceded: "..., after first sending a payment request", "before that, I ..."
_AFTER = re.compile(r"\bafter\s+(?:first\s+|having\s+|(?:i|we)\s+(?:had\s+)?(?:first\s+)?)?$", re.I)
_BEFORE = re.compile(r"(?:^|[.;,\n]\s*)before\s+$", re.I)


def _stated_order(mentions: list[tuple[str, int, int]], text: str) -> list[int]:
    """The mentions in the order the answer says the changes were made: the text's order, but a mention right after
    "after (first)" ("resumed L1, after first sending a payment request") or one opening with "Before" ("Before
    resuming L1, I sent ...") changes places with the mention before, or after, it."""
    order = list(range(len(mentions)))
    for i in range(1, len(mentions)):
        if _AFTER.search(text[mentions[i - 1][2]: mentions[i][1]]):
            order[i - 1], order[i] = order[i], order[i - 1]
    for i in range(len(mentions) - 1):
        if _BEFORE.search(text[(mentions[i - 1][2] if i else 0): mentions[i][1]]) and order[i] == i \
                and order[i + 1] == i + 1:
            order[i], order[i + 1] = order[i + 1], order[i]
    return order


# words of an argument's name that say nothing of which value it is ("amount" of gb_amount could be a price)
_GENERIC = {"amount", "number", "count", "total", "id", "value", "new", "old", "type"}


def _misstated(name: str, value: Any, text: str) -> str | None:
    """A value the text states for argument ``name`` that is not the call's: under its name ("gb_amount=4",
    "gb_amount: 4", "gb amount of 4") or, a number, beside a specific word of its name ("4 GB" for gb_amount)."""
    words = [w for w in re.split(r"[_\s]+", name) if w]
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    name_pattern = r"[\s_]+".join(map(re.escape, words))
    # a value is a token with a word character in it ("no insurance." states no value after the name)
    said = [m.group(1) for m in re.finditer(r"(?<![\w])" + name_pattern + r"[\"'`]?\s*(?:[:=]|\bis\b|\bwas\b|\bof\b)?"
                                           r"\s*[\"'`]?([\w.@/-]*\w[\w.@/-]*)", text, re.I)]
    if value_text(value).strip().lower() in ("yes", "no", "true", "false"):  # "no insurance", "with insurance"
        no, yes = ("false", "true") if isinstance(value, bool) else ("no", "yes")
        said += [no if m.group(1).lower() in ("no", "without") else yes
                 # a word of its kind may come between ("with travel insurance"), not a negation ("with no insurance")
                 for m in re.finditer(rf"\b(no|without|with)\s+(?:(?!(?:no|any|out)\b)[a-z-]+\s+)?{name_pattern}\b",
                                      text, re.I)]
    if number:
        said = [s for s in said if numbers(s, words=False)]
        for word in (w for w in words if w.lower() not in _GENERIC):
            said += re.findall(rf"(?<![\w.])(-?\d+(?:\.\d+)?)\s*{re.escape(word)}\b", text, re.I)
    return next((s for s in said if not _same(value, s)), None)


def _position(value: str, text: str, start: int, end: int) -> int | None:
    """Where a value is first said between ``start`` and ``end`` (a number numerically), None when it is not."""
    if re.fullmatch(r"-?\d+(?:\.\d+)?", value):
        return next((m.start() + start for m in re.finditer(r"-?\d+(?:\.\d+)?", text[start:end])
                     if same_number(m.group(0), value)), None)
    found = re.compile(rf"(?<![\w-]){re.escape(value)}(?![\w-])", re.I).search(text, start, end)
    return found.start() if found else None


def _same(want: Any, got: Any) -> bool:
    if isinstance(want, (int, float)) and not isinstance(want, bool):
        try:
            return same_number(want, float(got))
        except (TypeError, ValueError):
            return False
    return got is not None and value_text(got).strip().lower() == value_text(want).strip().lower()


WRITE_ACTIONS: QuestionType[list[dict[str, Any]], dict[str, Any]] = WriteActions()  # its reference, its claim
