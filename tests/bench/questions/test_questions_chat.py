"""user_fact, write_actions, latest_value; chat logs that declare their tools (dataset.shell_tools ...
dataset.roles); the real airline and shell-only chat sets (tests/data/real/chat, PROVENANCE.md)."""

from __future__ import annotations

import copy
import json
import logging
import subprocess
import sys

import pytest
from hydra import compose, initialize_config_dir

from bench.answering.evidence_reader import EvidenceReader
from bench.config.checks import ConfigError, dataset_source, validate
from bench.data.cases import row_to_case
from bench.data.selection import DatasetError, load_cases
from bench.main import format_summary
from bench.policies import FullHistory
from bench.profiles import TAU2
from bench.questions import add_questions
from bench.questions.latest_value import LATEST_VALUE, flat_fields
from bench.questions.user_fact import USER_FACT
from bench.questions.write_actions import MAX_CHANGES, WRITE_ACTIONS, key_arguments
from bench.scoring.judge import ExactJudge
from bench.scoring.metrics import compute_metrics
from bench.sources.chatlog import iter_chat_rows
from bench.store.schema import STALE_REASON, Answer, Case
from bench.text.formats import placeholder
from bench.text.tokens import TokenCounter

from paths import CONF_DIR, DATA, DEV_PARQUET, PROJECT

CHAT = DATA / "real" / "chat"
AIRLINE, SHELL = CHAT / "airline.jsonl", CHAT / "shell.jsonl"
SHELL_DECLARED = ("dataset.shell_tools=[bash]", "dataset.roles={exit: skip}",
                  "dataset.error_pattern='<returncode>[1-9]'")
NEW_TYPES = ("user_fact", "write_actions", "latest_value")


def config(*overrides: str):
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose("config", overrides=list(overrides))
    validate(cfg)
    return cfg


def load(*overrides: str, types=None):
    cfg = config(*overrides)
    return load_cases(cfg.dataset, TokenCounter(), types)


def airline(*extra: str, types=None):
    return load("dataset=chat", f"dataset.path={AIRLINE}", "dataset.profile=tau2", *extra, types=types)


def shell(*extra: str, types=None):
    return load("dataset=chat", f"dataset.path={SHELL}", *extra, types=types)


def by_type(case):
    return {q.type: q for q in case.questions}, {d.type: d.reason for d in case.dropped_questions}


def airline_rows() -> list[dict]:
    return list(iter_chat_rows(AIRLINE))


def build(row: dict, profile=TAU2, types=NEW_TYPES):
    case = row_to_case(row, 0, profile)
    assert isinstance(case, Case), case
    add_questions(case, TokenCounter(), types)
    return by_type(case)


def grade(question, answer_text: str):
    answer = Answer(case_id="c", qid=question.qid, type=question.type, answer=answer_text)
    return ExactJudge().score(question, answer)


# --- the real chat sets, as shipped ----------------------------------------------------------

def test_convert_reproduces_the_shipped_jsonl(tmp_path):
    before = {p.name: p.read_bytes() for p in (AIRLINE, SHELL)}
    done = subprocess.run([sys.executable, str(CHAT / "convert.py")], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert {p.name: p.read_bytes() for p in (AIRLINE, SHELL)} == before
    assert "sierra-research/tau-bench" in (CHAT / "PROVENANCE.md").read_text()


def test_the_new_types_fire_on_the_airline_set():
    cases = airline().cases
    assert len(cases) == 2
    task0, task2 = (by_type(c)[0] for c in cases)
    assert task0["user_fact"].reference == "mia_li_3668"
    assert task0["user_fact"].question == "What `user_id` did the user give you for `get_user_details`?"
    assert task2["user_fact"].reference == "omar_davis_3817"
    # the refused booking ("Error: payment amount does not add up ...") changed nothing
    # the key arguments, and the other scalar ones under "other" (a value an answer states for one must be right)
    assert task0["write_actions"].reference == [{"tool": "book_reservation", "arguments": {"user_id": "mia_li_3668"},
                                                 "other": {"origin": "JFK", "destination": "SEA",
                                                           "flight_type": "one_way", "cabin": "economy",
                                                           "total_baggages": 3, "nonfree_baggages": 1,
                                                           "insurance": "no"}}]
    assert task2["write_actions"].reference == [
        {"tool": "update_reservation_flights", "arguments": {"reservation_id": "JG7FMM", "payment_id": "credit_card_2929732"},
         "other": {"cabin": "economy"}},
        {"tool": "update_reservation_flights", "arguments": {"reservation_id": "2FBBAH", "payment_id": "gift_card_3481935"},
         "other": {"cabin": "economy"}},
    ]
    # these real runs never repeat a call with the same arguments (latest_value fires on ops and dev rows)
    assert {by_type(c)[1]["latest_value"] for c in cases} == {"no tool called twice with the same arguments"}


def test_user_fact_evidence_is_the_later_user_message_and_the_call():
    case = airline().cases[0]
    question = by_type(case)[0]["user_fact"]
    user, call = question.evidence_messages
    assert case.messages[user].type == "human" and "mia_li_3668" in case.messages[user].content
    assert case.messages[user] is not next(m for m in case.messages if m.type == "human")  # not the first
    assert case.messages[call].tool_calls[0]["name"] == "get_user_details"


# --- user_fact ------------------------------------------------------------------------------

def test_user_fact_is_not_asked_when_the_value_is_in_the_first_user_message():
    row = copy.deepcopy(airline_rows()[0])
    first = next(m for m in row["trajectory"] if m["role"] == "user")
    first["content"] += " My user id is mia_li_3668."
    asked, dropped = build(row)
    assert "user_fact" not in asked or asked["user_fact"].reference != "mia_li_3668"
    row2 = copy.deepcopy(airline_rows()[1])
    next(m for m in row2["trajectory"] if m["role"] == "user")["content"] += " I am omar_davis_3817."
    asked, dropped = build(row2)
    assert "user_fact" not in asked
    assert "readable in the first user message or the system prompt" in dropped["user_fact"]


def test_user_fact_is_not_asked_when_the_tool_got_other_values():
    row = copy.deepcopy(airline_rows()[1])
    trajectory = row["trajectory"]
    at = next(i for i, m in enumerate(trajectory) if m.get("role") == "tool")  # after get_user_details' result
    other = copy.deepcopy(trajectory[at - 1: at + 1])
    other[0]["tool_calls"][0]["function"]["arguments"] = '{"user_id": "omar_davis_0000"}'
    other[0]["tool_calls"][0]["id"] = other[1]["tool_call_id"] = "call_other"
    trajectory[at + 1: at + 1] = other
    asked, dropped = build(row)
    assert "user_fact" not in asked
    assert "the tool got other values for that argument" in dropped["user_fact"]


def test_user_fact_drop_reasons_on_real_rows():
    (case,) = shell(*SHELL_DECLARED).cases
    assert by_type(case)[1]["user_fact"] == "no user message after the first"
    dev = load("dataset=local", f"dataset.path={DEV_PARQUET}", types=["user_fact"]).cases
    reasons = {d.reason for c in dev for d in c.dropped_questions}
    assert "no value stated in a later user message is a call's argument" in reasons


def test_user_fact_grading():
    question = by_type(airline().cases[0])[0]["user_fact"]
    assert grade(question, '"mia_li_3668"').verdict == "correct"
    assert grade(question, "The user said their user ID is mia_li_3668.").verdict == "correct"
    assert grade(question, "mia_li_3669").verdict == "wrong"
    assert grade(question, "I don't remember.").verdict == "abstained"


# --- write_actions --------------------------------------------------------------------------

def test_write_actions_drop_reasons():
    rows = airline_rows()
    # every write refused: the run cut right after the refused booking (its first write)
    refused = copy.deepcopy(rows[0])
    at = next(i for i, m in enumerate(refused["trajectory"]) if str(m.get("content")).startswith("Error: payment"))
    refused["trajectory"] = refused["trajectory"][: at + 1]
    assert build(refused)[1]["write_actions"] == "every write call returned an error"
    # a write whose result was cleared: applied or not is unknown
    cleared = copy.deepcopy(rows[0])
    booked = next(m for m in cleared["trajectory"] if str(m.get("content")).startswith('{"reservation_id"'))
    booked["content"] = placeholder()
    assert build(cleared)[1]["write_actions"] == "the result of a book_reservation call is unknown"
    # too many changes to list
    many = copy.deepcopy(rows[1])
    trajectory = many["trajectory"]
    at = next(i for i, m in enumerate(trajectory) if m.get("tool_calls")
              and m["tool_calls"][0]["function"]["name"] == "update_reservation_flights")
    pairs = []
    for k in range(MAX_CHANGES):
        pair = copy.deepcopy(trajectory[at: at + 2])
        pair[0]["tool_calls"][0]["id"] = pair[1]["tool_call_id"] = f"call_repeat_{k}"
        pairs += pair
    trajectory[at: at] = pairs
    assert build(many)[1]["write_actions"] == f"more than {MAX_CHANGES} changes ({MAX_CHANGES + 2})"
    # no write tool called (real telecom runs)
    ops = load("dataset=ops", types=["write_actions"]).cases
    assert sum(by_type(c)[1].get("write_actions") == "no call of a write tool" for c in ops) == 2


def test_write_actions_applies_only_where_write_tools_are_named():
    with pytest.raises(DatasetError, match="none of these applies to the dataset's profile 'generic'"):
        airline("dataset.profile=generic", types=["write_actions"])  # no write tool known: one clear error
    declared = airline("dataset.profile=generic", "dataset.write_tools='(book|update|cancel)_\\w+'",
                       types=["write_actions"]).cases
    assert [by_type(c)[0]["write_actions"].reference[0]["tool"] for c in declared] == [
        "book_reservation", "update_reservation_flights"]


def test_key_arguments_are_the_profiles_else_the_identifiers_else_the_scalars():
    args = {"reservation_id": "JG7FMM", "cabin": "economy", "flights": [{"flight_number": "HAT028"}]}
    assert key_arguments(TAU2, args) == {"reservation_id": "JG7FMM"}
    assert key_arguments(TAU2, {"mode": "4g_5g_preferred", "flags": ["a"]}) == {"mode": "4g_5g_preferred"}
    named = TAU2.with_overrides(write_key_args=["cabin"])
    assert key_arguments(named, args) == {"cabin": "economy"}


def test_write_actions_grading():
    question = by_type(airline().cases[1])[0]["write_actions"]
    right = ("First update_reservation_flights on JG7FMM (refund to credit_card_2929732), then "
             "update_reservation_flights on 2FBBAH (refund to gift_card_3481935).")
    assert grade(question, right).verdict == "correct"
    assert grade(question, json.dumps(question.reference)).verdict == "correct"
    swapped = [question.reference[1], question.reference[0]]
    assert grade(question, json.dumps(swapped)).verdict == "wrong"
    one = "I called update_reservation_flights on JG7FMM with credit_card_2929732."
    assert grade(question, one).verdict == "wrong"
    no_ids = "update_reservation_flights, then update_reservation_flights again."
    assert "key arguments missing" in grade(question, no_ids).reason


# --- latest_value ---------------------------------------------------------------------------

def test_latest_value_references_on_real_rows():
    ops = load("dataset=ops", types=["latest_value"]).cases
    asked = [by_type(c)[0]["latest_value"] for c in ops if "latest_value" in by_type(c)[0]]
    assert len(asked) == 2
    for question in asked:
        assert question.target["tool"] == "toggle_roaming" and question.target["field"] == "Status Bar"
        assert question.reference == "📵 No Signal | 📵 Data Disabled | 🔋 80%"
        assert question.params["stale"] == "✈️ Airplane Mode | 🔋 80%"
    dev = load("dataset=local", f"dataset.path={DEV_PARQUET}", types=["latest_value"]).cases
    (make,) = [by_type(c)[0]["latest_value"] for c in dev if "latest_value" in by_type(c)[0]]
    assert make.reference == "*** [Makefile:192: build] Error 1"
    assert make.params["stale"] == "*** [Makefile:192: build] Error 2"


def test_latest_value_drop_reasons_on_real_rows():
    reasons = set()
    for overrides in (("dataset=ops",), ("dataset=sample",), ("dataset=local", f"dataset.path={DEV_PARQUET}")):
        reasons |= {d.reason for c in load(*overrides, types=["latest_value"]).cases for d in c.dropped_questions}
    assert {"no tool called twice with the same arguments",
            "the repeated calls' results have no fields (JSON object or Label: value)",
            "no field changed between repeated calls with the same arguments"} <= reasons


def test_latest_value_asks_the_last_call_even_when_only_earlier_results_show_fields():
    ops = load("dataset=ops", types=["latest_value"])
    row = next(json.loads(line) for n, line in enumerate((PROJECT / "src/bench/samples/ops/dev.jsonl").open())
               if n == ops.cases[6].source_row)
    trajectory = row["trajectory"]
    calls = [m for m in trajectory if m.get("tool_calls") and m["tool_calls"][0]["function"]["name"] == "toggle_roaming"]
    last_id = calls[-1]["tool_calls"][0]["id"]
    next(m for m in trajectory if m.get("tool_call_id") == last_id)["content"] = "Data Roaming is now ON."
    asked, dropped = build(row, types=["latest_value"])
    assert "latest_value" not in asked or asked["latest_value"].target["tool"] != "toggle_roaming"


def test_flat_fields_reads_json_objects_and_readouts():
    assert flat_fields('{"a": 1, "b": {"c": "x", "d": [1]}, "e": null}') == {"a": 1, "b.c": "x"}
    assert flat_fields("[1, 2]") is None
    readout = "Current APN Name: internet\nMMSC URL (for picture messages): Not Set\nnote: a\nnote: b"
    assert flat_fields(readout) == {"Current APN Name": "internet", "MMSC URL (for picture messages)": "Not Set"}
    assert flat_fields("Data Roaming is now ON.") is None


def test_a_stale_answer_is_wrong_and_counted_apart():
    cases = load("dataset=ops", types=["latest_value"]).cases
    question = next(by_type(c)[0]["latest_value"] for c in cases if "latest_value" in by_type(c)[0])
    stale = grade(question, json.dumps(question.params["stale"]))
    assert stale.verdict == "wrong" and stale.reason.startswith(STALE_REASON)
    assert grade(question, json.dumps(question.reference)).verdict == "correct"
    other = grade(question, '"Excellent | 5G"')
    assert other.verdict == "wrong" and not other.reason.startswith(STALE_REASON)
    asked = [c for c in cases if c.questions]
    records = [c.to_dict() for c in asked]
    scores = [{"qid": asked[0].questions[0].qid, "verdict": stale.verdict, "reason": stale.reason},
              {"qid": asked[1].questions[0].qid, "verdict": "wrong", "reason": other.reason}]
    metrics = compute_metrics(records, [], [], scores)
    assert metrics["stale"] == 1 and metrics["verdicts"]["wrong"] == 2
    assert metrics["by_type"]["latest_value"]["stale"] == 1
    assert "stale: 1 wrong answers" in format_summary(metrics)


# --- dataset.* declarations -------------------------------------------------------------------

def test_roles_skip_or_map_extra_roles():
    rejected = shell().rejected
    assert len(rejected) == 1 and "unknown role 'exit'" in rejected[0].reason
    assert "dataset.roles" in rejected[0].reason
    (case,) = shell("dataset.roles={exit: skip}").cases
    assert all(m.type != "exit" for m in case.messages)
    mapped = shell("dataset.roles={exit: user}")  # the exit message becomes a user turn after the unanswered call
    assert not mapped.cases and "has no result" in mapped.rejected[0].reason


def test_shell_tools_make_the_coding_types_apply_to_a_shell_only_log():
    (plain,) = shell("dataset.roles={exit: skip}").cases
    assert not {"first_error", "files_changed"} & {q.type for q in plain.questions}
    assert not {"first_error", "files_changed"} & {d.type for d in plain.dropped_questions}
    (declared,) = shell(*SHELL_DECLARED).cases
    asked, dropped = by_type(declared)
    assert asked["first_error"].reference == {"type": "ModuleNotFoundError", "message": "No module named 'erfa'"}
    assert "files_changed" in dropped  # the excerpt leaves out the run's edit (PROVENANCE.md)


def test_error_pattern_and_the_message_is_the_informative_line():
    (plain,) = shell("dataset.shell_tools=[bash]", "dataset.roles={exit: skip}").cases
    assert by_type(plain)[1]["first_tool_error"] == "no tool result is an error"  # <returncode>1 is not "Error..."
    (declared,) = shell(*SHELL_DECLARED).cases
    # the exception line, not the envelope or the traceback header (issue 31)
    assert by_type(declared)[0]["first_tool_error"].reference == {
        "tool": "bash", "message": "ModuleNotFoundError: No module named 'erfa'"}


def test_finish_tools_are_not_asked_about():
    plain = airline("dataset.profile=generic", types=["call_count"]).cases
    assert by_type(plain[0])[0]["call_count"].target["tool"] == "book_reservation"  # 2 calls, ties calculate
    declared = airline("dataset.profile=generic", "dataset.finish_tools=[book_reservation]",
                       types=["call_count"]).cases
    assert by_type(declared[0])[0]["call_count"].target["tool"] == "calculate"


def test_editor_tools_declare_the_file_editor(dev_parquet, tmp_path):
    """The real OpenHands rows with the editor renamed: declared, it is read as the editor again."""
    from bench.sources.chatlog import write_chat_jsonl

    rows = []
    for row in dataset_source(config("dataset=local", f"dataset.path={dev_parquet}").dataset).rows():
        text = json.dumps(row["trajectory"] if not isinstance(row["trajectory"], str) else json.loads(row["trajectory"]),
                          default=lambda v: v.tolist())
        rows.append({**row, "trajectory": json.loads(text.replace('"str_replace_editor"', '"edit_file"')),
                     "tools": []})
    renamed = write_chat_jsonl(rows, tmp_path / "renamed.jsonl")
    native = load("dataset=local", f"dataset.path={dev_parquet}", types=["files_changed"]).cases
    plain = load("dataset=chat", f"dataset.path={renamed}", "dataset.profile=openhands",
                 types=["files_changed"]).cases
    declared = load("dataset=chat", f"dataset.path={renamed}", "dataset.profile=openhands",
                    "dataset.editor_tools=[edit_file]", types=["files_changed"]).cases
    refs = lambda cases: [[q.reference for q in c.questions] for c in cases]  # noqa: E731
    assert refs(declared) == refs(native) and sum(map(len, refs(native))) >= 10
    assert refs(plain) != refs(native)  # undeclared, the renamed editor's edits are not seen
    profile = dataset_source(config("dataset=chat", "dataset.path=x.jsonl", "dataset.editor_tools=[edit]").dataset).profile_of()
    assert profile.is_editor("edit") and profile.edit_argument("create") == "file_text"  # generic gets conventions


@pytest.mark.parametrize("override, message", [
    ("dataset.editor_tools=[a,b]", "dataset.editor_tools: one editor tool per source"),
    ("dataset.write_tools='book_('", "dataset.write_tools: not a regular expression"),
    ("dataset.roles={user: skip}", "dataset.roles: 'user' is a chat role already"),
    ("dataset.roles={exit: nowhere}", "dataset.roles.exit: 'nowhere' is not one of"),
    ("dataset.shell_tools=['']", "dataset.shell_tools: tool names must not be empty"),
])
def test_bad_declarations_are_refused(override, message):
    with pytest.raises(ConfigError, match=message):
        config("dataset=chat", "dataset.path=x.jsonl", override)


def test_a_bad_declaration_exits_2_with_one_line(tmp_path):
    done = subprocess.run([sys.executable, "-m", "bench.main", "dataset=chat", f"dataset.path={SHELL}",
                           "dataset.roles={exit: nowhere}"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 2 and "dataset.roles.exit" in done.stderr and "Traceback" not in done.stderr


def test_questions_types_selects_the_new_types():
    cfg = config("dataset=ops", "questions.types=[user_fact,write_actions,latest_value]")
    cases = load_cases(cfg.dataset, TokenCounter(), cfg.questions.types).cases
    assert {q.type for c in cases for q in c.questions} == set(NEW_TYPES)


# --- a trailing call without result ---------------------------------------------------------

def test_a_dropped_trailing_call_is_logged_per_case_and_call_count_says_so(caplog):
    with caplog.at_level(logging.INFO, logger="bench.data.cases"):
        (case,) = shell(*SHELL_DECLARED).cases
    assert f"case {case.case_id}: dropped the trailing call(s) without result: bash" in caplog.text
    assert case.dropped_trailing == ["bash"]
    count = by_type(case)[0]["call_count"]
    assert count.reference == 7 and count.target == {"tool": "bash", "uncounted": 1}
    assert count.question.endswith("Do not count the last call(s) of it you made, which got no result.")
    record = case.to_dict()
    assert Case.from_dict(record).dropped_trailing == ["bash"]
    plain = airline().cases[0]
    assert "dropped_trailing" not in plain.to_dict()  # records of other cases are unchanged
    assert by_type(plain)[0]["call_count"].question == "How many times did you call `book_reservation`?"


# --- the offline full arm ----------------------------------------------------------------------

SOURCES = {
    "sample": ("dataset=sample",),
    "ops": ("dataset=ops",),
    "dev": ("dataset=local", f"dataset.path={DEV_PARQUET}"),
    "airline": ("dataset=chat", f"dataset.path={AIRLINE}", "dataset.profile=tau2"),
    "shell": ("dataset=chat", f"dataset.path={SHELL}", *SHELL_DECLARED),
}


@pytest.mark.parametrize("source", SOURCES)
def test_the_offline_full_arm_answers_every_question(source):
    cases = load(*SOURCES[source]).cases
    reader, judge, full = EvidenceReader(), ExactJudge(), FullHistory()
    asked = 0
    for case in cases:
        view = full(case)
        for question in case.questions:
            score = judge.score(question, reader.answer(case, view, question), case.repo_root)
            assert score.verdict == "correct", (question.qid, score.reason)
            asked += 1
    assert asked


def test_the_new_types_are_asked_across_the_sources():
    types = {q.type for overrides in SOURCES.values() for c in load(*overrides).cases for q in c.questions}
    assert set(NEW_TYPES) <= types


def test_the_reader_answers_new_types_only_from_what_the_view_shows():
    case = airline().cases[1]
    questions = by_type(case)[0]
    tail = case.messages[-4:]  # the last user turns: no call of get_user_details, no write
    from bench.store.schema import View

    view = View(case_id=case.case_id, arm="nlatest", messages=tail, kept_tokens=0, full_messages=0, full_tokens=0)
    for name in ("user_fact", "write_actions"):
        answer = EvidenceReader().answer(case, view, questions[name])
        assert ExactJudge().score(questions[name], answer).verdict == "abstained", name
    assert USER_FACT.applies(TAU2) and WRITE_ACTIONS.applies(TAU2) and LATEST_VALUE.applies(TAU2)



def test_the_llm_judge_marks_a_wrong_stale_answer_too():
    from langchain_core.messages import AIMessage

    from bench.scoring.judge import LLMJudge

    from scripted import scripted_client

    cases = load("dataset=ops", types=["latest_value"]).cases
    question = next(by_type(c)[0]["latest_value"] for c in cases if "latest_value" in by_type(c)[0])
    stale_text = f"It showed {question.params['stale']}."
    reply = AIMessage('{"verdict": "wrong", "reason": "an earlier status"}')
    score = LLMJudge(client=scripted_client(reply)).score(
        question, Answer(case_id="c", qid=question.qid, type=question.type, answer=stale_text))
    assert score.verdict == "wrong" and score.reason == f"{STALE_REASON}: an earlier status"
    other = LLMJudge(client=scripted_client(reply)).score(
        question, Answer(case_id="c", qid=question.qid, type=question.type, answer="It showed 5G."))
    assert other.reason == "an earlier status"
