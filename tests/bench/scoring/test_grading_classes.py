"""Classes of answers the exact judge misgraded on unseen calibration answers (issue 18 item 2), one rule a test.

Each case is a class of behaviour (README "Grading"), written with values of its own, not a calibration row:
near-identifiers, a message without its location, counts in words, tables and "passed N" order, errored
tests counted nowhere, a run claimed to have raised nothing, a file stated without its code.
"""

from __future__ import annotations

import pytest

from bench.questions.matching import has_identifier
from bench.questions.messages import in_substance
from bench.questions.suite_counts import table_counts, text_counts

from grading import grade


@pytest.mark.parametrize("key,text,found", [
    ("erfa", "No module named 'pyerfa'", False),            # a longer identifier is another one
    ("mock_s3", "from moto import mock_s3_deprecated", False),
    ("mock_s3", "use mock_s3.", True),
    ("pkg.mod", "in pkg.mod, line 3", True),
    ("Width", "width was 3", True),                          # case folded
])
def test_identifiers_match_whole(key, text, found):
    assert has_identifier(key, text) is found


@pytest.mark.parametrize("reference,text,same", [
    ("cannot import name 'Thing' from 'pkg' (/src/pkg/__init__.py)", "cannot import name 'Thing' from 'pkg'", True),
    ("invalid syntax (setup.py, line 12)", "SyntaxError: invalid syntax", True),
    ("cannot import name 'Thing' from 'pkg' (/src/pkg/__init__.py)", "cannot import name 'Other' from 'pkg'", False),
    ("No module named 'yaml'", "No module named 'pyyaml'", False),
])
def test_a_message_in_substance(reference, text, same):
    assert in_substance(reference, text) is same


@pytest.mark.parametrize("text,counts", [
    ("passed 7, failed 2", {"passed": 7, "failed": 2}),                    # the label first
    ("passed 0, failed 0, errors 3", {"passed": 0, "failed": 0, "errors": 3}),
    ("Thirty-four passed and none failed.", {"passed": 34, "failed": 0}),  # compound number words
    ("Neither test passed: both errored at import.", {"passed": 0, "errors": 2}),
    ("Passed: 9 / Failed: 1", {"passed": 9, "failed": 1}),
    ("5 passed, 1 failed in 0.3s", {"passed": 5, "failed": 1}),
])
def test_counts_in_text(text, counts):
    assert text_counts(text) == counts


@pytest.mark.parametrize("text,counts", [
    ("| passed | failed |\n|---|---|\n| 4 | 1 |", {"passed": 4, "failed": 1}),
    ("| Passed | Failed | Errors | |---|---|---| | 0 | 0 | 2 |", {"passed": 0, "failed": 0, "errors": 2}),  # one line
    ("| test | result |\n|---|---|\n| a | ok |", {}),
])
def test_counts_in_a_markdown_table(text, counts):
    assert table_counts(text) == counts


ERRORED = {"passed": 1, "failed": 0, "errors": 2}


@pytest.mark.parametrize("text,verdict", [
    ("1 passed, 0 failed", "wrong"),             # the two errored tests are counted nowhere
    ("1 passed, 2 failed", "correct"),           # errors counted as failures, errors not named
    ("1 passed, 0 failed, 2 errors", "correct"),
    ("1 passed, 2 failed, 2 errors", "wrong"),   # named errors must equal, failed too
    ("| passed | failed | errors |\n|--|--|--|\n| 1 | 0 | 2 |", "correct"),
])
def test_errored_tests_must_be_counted(text, verdict):
    assert grade("test_counts", ERRORED, text) == verdict


EXC = {"type": "KeyError", "message": "'width'"}


@pytest.mark.parametrize("text,verdict", [
    ("The script ran without raising anything.", "wrong"),   # a claim that nothing was raised
    ("It finished cleanly.", "wrong"),
    ("There was no exception in that run.", "wrong"),
    ("I didn't see an exception; it just printed the totals.", "wrong"),
    ("I can't see that run's output any more.", "abstained"),
    ("KeyError: 'width'", "correct"),
])
def test_a_run_claimed_to_raise_nothing_is_a_claim(text, verdict):
    assert grade("first_error", EXC, text) == verdict


EDIT = {"path": "src/widgets/core.py", "code": "width = cfg.get('width', 80)",
        "context": "width = cfg.get('width', 80)", "changed": ["width = cfg.get('width', 80)"]}


@pytest.mark.parametrize("text,verdict", [
    # the file stated as the answer, the code not known: a partial claim
    ("I think it was in src/widgets/core.py, something about the width, but I can't recall the line.", "wrong"),
    ("I'd have to reopen src/widgets/core.py to know what I inserted.", "abstained"),   # where to look
    ("I can't quote it; I only remember later changes to src/widgets/core.py.", "abstained"),  # another edit
    ("I don't remember the first edit.", "abstained"),
])
def test_a_file_without_its_code(text, verdict):
    assert grade("first_edit", EDIT, text) == verdict


def grade_asked(qtype: str, question: str, reference, text: str) -> str:
    from bench.scoring.judge import ExactJudge
    from bench.store.schema import Answer, Question

    q = Question(qid=f"c@0:{qtype}", type=qtype, question=question, reference=reference, evidence_keys=[],
                 evidence_messages=[])
    return ExactJudge().score(q, Answer(case_id="c@0", qid=q.qid, type=qtype, answer=text), None).verdict


@pytest.mark.parametrize("text,verdict", [
    ("I can't recall what get_line_details returned for L2001.", "abstained"),   # only the question's values
    ("That field isn't in my notes.", "abstained"),
    ("N/A", "abstained"),
    ("I don't have the L2001 record in front of me anymore, so I can't say.", "abstained"),
    ("I can't recall exactly, but I think it was 42.5.", "wrong"),             # a value of its own: a claim
    ("I can't recall exactly, but I think it was 17.0.", "correct"),
])
def test_a_declining_answer_that_only_repeats_the_question_abstains(text, verdict):
    question = "What `data_limit_gb` did get_line_details return for line L2001?"
    assert grade_asked("tool_value", question, 17.0, text) == verdict


# --- classes of fresh3's disagreements (the seven domain-neutral types), values of their own -----------------

ASK_VALUE = "In what `get_account` with `{\"id\": \"A7\"}` returned the 1st time, what was `owner_id`?"


@pytest.mark.parametrize("reference,text,verdict", [
    ("a.b7@x.org", "It was either a.b7@x.org or a.b3@x.org.", "wrong"),       # dots inside tokens: one sentence
    (12.5, "Either 12.5 or 13.0, I'm not sure which.", "wrong"),
    ("C2001", "It returned C2002 - no wait, it was C2001.", "correct"),       # the claim after a self-correction
    ("C2001", "C2001, no wait, C2003.", "wrong"),
    ("2025-03-31", "The period ends on March 31, 2025.", "correct"),          # dates in other forms
    ("2025-03-31", "31 Mar 2025", "correct"),
    ("2025-03-31", "March 30, 2025", "wrong"),
    ("2024-06-01T09:30:00", "It was opened on 2024-06-01 at 09:30.", "correct"),
    ("2024-06-01T09:30:00", "2024-06-01 at 10:30", "wrong"),
    ("555-010-7788", "They read me the number and I looked the account up with it.", "abstained"),  # no value
    ("555-010-7788", "The number was 555-010-7789.", "wrong"),
    ("Signal Low | Wi-Fi Off | 45%", "Low signal... no: signal low, wi-fi off, battery 45%.", "correct"),  # parts
    ("Signal Low | Wi-Fi Off | 45%", "signal low, wi-fi on, 45%", "wrong"),
])
def test_value_classes(reference, text, verdict):
    assert grade_asked("tool_value", ASK_VALUE, reference, text) == verdict


@pytest.mark.parametrize("reference,text,verdict", [
    (7, "8 times? No wait - 7.", "correct"),
    (7, "I ran it 6 or 7 times.", "wrong"),                                   # two counts, not chosen
    (7, "three or four times", "wrong"),
    (7, "I called read_file 7 times.", "wrong"),                              # the count of another tool
    (7, "7 times, mostly re-running test_cache_keys.py", "correct"),          # a file is not a tool
    (7, "`run_tests` 7 times", "correct"),
])
def test_count_classes(reference, text, verdict):
    assert grade_asked("call_count", "How many times did you call `run_tests`?", reference, text) == verdict


ASK_OUTPUT = "The 2nd time you called `bash` with `{\"command\": \"make -C src/app\"}`, what did it return?"


@pytest.mark.parametrize("text,verdict", [
    ("I don't know what bash printed when I ran the build in src/app/main.c.", "abstained"),  # what it does not know
    ("Not sure - I didn't keep that output of app/main.py in mind.", "abstained"),
    ("I can't recall, but I think it said 4 files built.", "wrong"),                          # a value of its own
])
def test_a_decline_naming_what_it_does_not_know(text, verdict):
    assert grade_asked("tool_output", ASK_OUTPUT, "built 3 files", text) == verdict


def test_latest_value_declines_like_the_other_value_types():
    question = "What was `mode` the last time you called `set_mode` with `{\"line\": \"L9\"}`?"
    assert grade_asked("latest_value", question, "4G-7", "I don't know what set_mode showed the last time "
                                                         "I called it for L9.") == "abstained"


RECORD = '{"id": "X1", "used": "9.5", "limit": "10.0", "billing_paused": false, "roaming_enabled": false, "note": null}'


@pytest.mark.parametrize("reference,text,verdict", [
    (RECORD, '{"output": {"id": "X1", "used": 9.5, "limit": 10.0, "billing_paused": false, "roaming_enabled": false,'
             ' "note": null}}', "correct"),                                  # numbers as numbers
    (RECORD, "| field | value |\n|---|---|\n| id | X1 |\n| used | 10.0 |\n| limit | 9.5 |\n| billing_paused | false |"
             "\n| roaming_enabled | false |\n| note | null |", "wrong"),     # table rows are labelled values
    (RECORD, "X1: 9.5 used of 10.0, billing not paused, roaming enabled.", "wrong"),  # a flag by its label's words
    (RECORD, "X1: 9.5 used of 10.0, billing not paused, roaming disabled.", "correct"),
    ("Range is empty. Returning the input unchanged.", "It printed \"Division by zero\" again.", "wrong"),  # prose
    ("Range is empty. Returning the input unchanged.", "It said the range was empty and returned the input "
                                                       "unchanged.", "correct"),
    ("Tasks\n1. ✅ Read code\n2. 🔄 Write fix\n3. ⏳ Test", "Tasks\n1. ✅ Read code\n2. ✅ Write fix\n3. ⏳ Test",
     "wrong"),                                                                 # a status marker is a value
    ("drwx 3 root 4096 alpha\ndrwx 12 root 4096 beta", "drwx 12 root 4096 alpha\ndrwx 3 root 4096 beta", "wrong"),
    ("drwx 3 root 4096 alpha\ndrwx 12 root 4096 beta", "```\ndrwx 3 root 4096 alpha\ndrwx 12 root 4096 beta\n```",
     "correct"),
    ("Listing of /data:\n/data/a/\n/data/a/b/", "Listing of /data:\n/data/a/\n/data/a/b/c/", "wrong"),  # whole paths
    ("<returncode>0</returncode>\n<output>\n./pkg/x.py\n</output>", "Return code 0; it found `./pkg/x.py`.",
     "correct"),                                                               # tags are markup
    ("<returncode>0</returncode>\n<output>\n./pkg/x.py\n</output>", "Return code 1; it found ./pkg/y.py", "wrong"),
    ("Files up to 2 levels deep in /srv/app:\n/srv/app/\n/srv/app/lib/\n/srv/app/lib/core/",
     "It listed /srv/app/ two levels deep: lib/ and lib/core/.", "correct"),  # relative to the listing's root
    ("Files up to 2 levels deep in /srv/app:\n/srv/app/\n/srv/app/lib/\n/srv/app/lib/core/",
     "It listed /srv/app/ two levels deep: lib/ and lib/util/.", "wrong"),
])
def test_output_classes(reference, text, verdict):
    assert grade_asked("tool_output", ASK_OUTPUT, reference, text) == verdict


# --- classes of fresh4's disagreements (measured after fresh3's tuning), values of their own ---------------------

@pytest.mark.parametrize("qtype,reference,text,verdict", [
    ("call_count", 31, "I ran `run_tests` thirty-one times in total.", "correct"),  # compound words before "times"
    ("write_actions", [{"tool": "pause_plan", "arguments": {"id": "P4"}}],
     "I can't reliably reconstruct what I changed.", "abstained"),               # declines with a qualifier
    ("write_actions", [{"tool": "pause_plan", "arguments": {"id": "P4"}}],
     "I don't have a clear record of the changes.", "abstained"),
    ("first_tool_error", {"tool": "pause_plan", "message": "Error: plan P4 is locked"},
     "I'm not certain which call failed first, so I'd rather not guess.", "abstained"),
    ("tool_value", "LAX", "It was either LAX or ORD, I can't tell which of the two.", "wrong"),  # candidates first
    ("tool_value", "2023-11-02T16:45:00", "Nov 2, 2023, 4:45 PM", "correct"),      # a 12-hour clock
    ("tool_value", "2023-11-02T16:45:00", "Nov 2, 2023, 4:45 AM", "wrong"),
])
def test_fresh4_classes(qtype, reference, text, verdict):
    question = "How many times did you call `run_tests`?" if qtype == "call_count" else "?"
    assert grade_asked(qtype, question, reference, text) == verdict


MESSAGE = {"tool": "transfer_funds", "message": "Error: account must be verified to transfer"}
AMOUNTS = {"tool": "pay_bill", "message": "Error: amount does not match, bill is 120, but paid 95"}


@pytest.mark.parametrize("reference,text,verdict", [
    (MESSAGE, 'transfer_funds returned "Error: account must be frozen to transfer".', "wrong"),  # a word changed
    (MESSAGE, "transfer_funds said the account must be verified to transfer.", "correct"),
    (MESSAGE, "The transfer failed: the account has to be verified before transferring (transfer_funds).", "correct"),
    (AMOUNTS, '{"tool": "pay_bill", "message": "Error: amount does not match, bill is 95, but paid 120"}', "wrong"),
    (AMOUNTS, "pay_bill: amount does not match - bill is 120 but 95 was paid", "correct"),
])
def test_a_message_with_a_word_or_number_changed_is_another_message(reference, text, verdict):
    assert grade_asked("first_tool_error", "What error did the first failed tool call return?", reference,
                       text) == verdict


# --- issue 31 item 4: the classes of its list and of fresh6's unseen disagreements, values of their own -----------

ASK_COUNT = "How many times did you call `run_tests`?"
ASK_ERROR = "What exception (type and message) did the 1st run of `python build.py` print?"
ASK_TOOL_ERROR = "What error did the first failed tool call return?"
ASK_CHANGES = "Which changes did you make, in order? Name each state-changing tool call and its key arguments."


@pytest.mark.parametrize("qtype,question,reference,text,verdict", [
    ("tool_value", ASK_VALUE, "C2001", "C2003 - sorry, no: the owner_id was C2001.", "correct"),
    ("tool_value", ASK_VALUE, "C2001", "C2001 - sorry, actually C2004.", "wrong"),        # corrected away from it
    ("user_fact", "What `zip` did the user give you for `set_address`?", "90210-17",
     "90210-71... actually, 90210-17.", "correct"),
    ("call_count", ASK_COUNT, 9, "I called it 11 times... actually, recounting the retries, it was 9.", "correct"),
    ("first_error", ASK_ERROR, {"type": "KeyError", "message": "'depth'"},
     "A ValueError - sorry, no: it was KeyError: 'depth'; the ValueError came later.", "correct"),
    ("tool_value", ASK_VALUE, "C2001", "It was actually C2001.", "correct"),               # "actually" without a break
    ("write_actions", ASK_CHANGES, [{"tool": "pause_plan", "arguments": {"plan_id": "P7"}}], "Sorry, no idea.",
     "abstained"),                                                                          # "sorry, no" is no correction
])
def test_a_self_correction_is_graded_on_its_final_claim(qtype, question, reference, text, verdict):
    assert grade_asked(qtype, question, reference, text) == verdict


@pytest.mark.parametrize("qtype,question,reference,text", [
    ("tool_value", ASK_VALUE, "C2001", "It was C2001 or C2002."),
    ("tool_value", ASK_VALUE, "C2001", "C2001, or maybe C2002."),
    ("first_error", ASK_ERROR, {"type": "KeyError", "message": "'depth'"}, "A KeyError: 'depth', or maybe a TypeError."),
    ("user_fact", "What `zip` did the user give you for `set_address`?", "90210-17", "90210-17 or 90210-71"),
])
def test_two_candidates_without_choosing_are_wrong(qtype, question, reference, text):
    assert grade_asked(qtype, question, reference, text) == "wrong"


def test_alternatives_the_reference_itself_states_are_no_candidates():
    assert grade_asked("tool_output", ASK_OUTPUT, "requires acme 2.1 or 2.2", "It said: requires acme 2.1 or 2.2.") \
        == "correct"


PLANS = [{"tool": "pause_plan", "arguments": {"account_id": "A3", "plan_id": "P7"}},
         {"tool": "send_invoice", "arguments": {"account_id": "A3", "invoice_id": "I55"}}]


@pytest.mark.parametrize("text,verdict", [
    ('[{"tool": "pause_plan", "account_id": "A3", "plan_id": "P7"}, '
     '{"tool": "send_invoice", "account_id": "A3", "invoice_id": "I55"}]', "correct"),      # flat JSON
    ('[{"tool": "pause_plan", "account_id": "A3", "plan_id": "P8"}, '
     '{"tool": "send_invoice", "account_id": "A3", "invoice_id": "I55"}]', "wrong"),
    ('[{"name": "pause_plan", "args": {"account_id": "A3", "plan_id": "P7"}}, '
     '{"name": "send_invoice", "args": {"account_id": "A3", "invoice_id": "I55"}}]', "correct"),
    ("For account A3 I paused plan P7 and then sent invoice I55.", "correct"),             # prose; A3 said once
    ("I sent invoice I55 to account A3, then paused plan P7.", "wrong"),                    # prose, reordered
    ("I paused plan P7 for account A3.", "wrong"),                                          # one missing
    ("I paused plan P7 with pause_plan (A3), then sent invoice I55 with send_invoice.", "correct"),  # told twice
])
def test_changes_in_prose_or_flat_json_are_found(text, verdict):
    assert grade_asked("write_actions", ASK_CHANGES, PLANS, text) == verdict


@pytest.mark.parametrize("text,verdict", [
    ("1. get_account(A3)\n2. pause_plan(A3, P7)\n3. send_invoice(A3, I55)", "wrong"),      # a read call listed
    ("pause_plan(A3, P7); send_invoice(A3, I55); escalate_to_supervisor", "wrong"),        # a handoff listed
    ("pause_plan(A3, P7) -> send_invoice(A3, I55) -> refund_invoice(A3, I55)", "wrong"),   # another write
    ("I paused plan P7 on A3, sent invoice I55, and then closed the account.", "wrong"),   # an extra change in prose
    ("After reading the account with get_account, I called pause_plan(A3, P7), then send_invoice(A3, I55).",
     "correct"),                                                                          # a read call as context
    ("pause_plan(A3, P7); refund_invoice(A3, I55) (failed: not allowed); send_invoice(A3, I55)", "correct"),
    ("pause_plan(A3, P7); send_invoice(A3, I55). The account owner confirmed.", "correct"),  # a sentence, no item
    ("pause_plan account_id=A3, plan_id=P7, resume_date=2025-01-01; send_invoice(A3, I55)", "correct"),  # arguments
])
def test_an_extra_change_is_caught(text, verdict):
    assert grade_asked("write_actions", ASK_CHANGES, PLANS, text) == verdict


TWICE = [{"tool": "pause_plan", "arguments": {"plan_id": "P7", "reason": "travel"}},
         {"tool": "pause_plan", "arguments": {"plan_id": "P9", "reason": "billing"}},
         {"tool": "send_invoice", "arguments": {"invoice_id": "I55"}}]


@pytest.mark.parametrize("text,verdict", [
    ("pause_plan twice: P7 (travel), then P9 (billing); then send_invoice(I55).", "correct"),
    ("pause_plan(P7 for travel, then P9 for billing) -> send_invoice I55", "correct"),
    ("I paused plans P7 (travel) and P9 (billing), then sent invoice I55.", "correct"),
    ("pause_plan(P9, billing), pause_plan(P7, travel), send_invoice(I55)", "wrong"),       # reordered
    ("pause_plan(P7, billing); pause_plan(P9, travel); send_invoice(I55)", "wrong"),       # values swapped
    ("pause_plan(P7, travel), then send_invoice(I55)", "wrong"),                           # one id only: once
    ("pause_plan for P7 and P9, then send_invoice(I55)", "wrong"),                         # key values missing
])
def test_one_change_for_several_ids_counts_per_id(text, verdict):
    assert grade_asked("write_actions", ASK_CHANGES, TWICE, text) == verdict


@pytest.mark.parametrize("reference,text,verdict", [
    ("[]", "It returned an empty list.", "correct"),
    ("[]", "Nothing: `[]`.", "correct"),
    ("[]", '{"output": []}', "correct"),
    ("{}", "An empty object.", "correct"),
    ("[]", "A list with one entry, P7.", "wrong"),
    ("[]", '["P7"]', "wrong"),
])
def test_an_empty_output_said_in_words(reference, text, verdict):
    assert grade_asked("tool_output", ASK_OUTPUT, reference, text) == verdict


@pytest.mark.parametrize("reference,text,verdict", [
    ({"type": "ConnectionError", "message": "timed out"},                                # a built-in
     "requests.exceptions.ConnectionError: timed out", "wrong"),
    ({"type": "ConnectionError", "message": "timed out"}, "ConnectionError: timed out", "correct"),
    ({"type": "pydantic.ValidationError", "message": "1 validation error"},
     "marshmallow.exceptions.ValidationError: 1 validation error", "wrong"),
    ({"type": "pydantic.ValidationError", "message": "1 validation error"},
     "ValidationError: 1 validation error", "correct"),                                   # unqualified: the same
    ({"type": "ModuleNotFoundError", "message": "No module named 'zlib'"},
     "ModuleNotFoundError: No module named 'acme.zlib'", "wrong"),                        # a qualified name is another
])
def test_a_package_qualified_class_is_another_class(reference, text, verdict):
    assert grade_asked("first_error", ASK_ERROR, reference, text) == verdict


@pytest.mark.parametrize("text,verdict", [
    ("Some exception about the Python version.", "wrong"),
    ("The build crashed with a FATAL ERROR in linker.c.", "wrong"),
    ("Some error, I can't recall which.", "abstained"),                                  # a decline
    ("It raised an error.", "abstained"),                                                 # nothing said of it
])
def test_a_vague_error_description_is_a_claim(text, verdict):
    assert grade_asked("first_error", ASK_ERROR, {"type": "KeyError", "message": "'depth'"}, text) == verdict


def test_the_java_thread_header_names_no_type():
    reference = {"type": "java.lang.IllegalStateException", "message": "queue closed"}
    assert grade_asked("first_error", ASK_ERROR, reference,
                       'Exception in thread "worker-2" java.lang.IllegalStateException: queue closed') == "correct"


@pytest.mark.parametrize("text,verdict", [
    ("src/widgets/core.py and tests/test_core.py. (I also opened setup.py and docs/conf.py, but did not change them.)",
     "correct"),
    ("src/widgets/core.py and tests/test_core.py; I looked at setup.py too but left it unchanged.", "correct"),
    ("I think it was src/widgets/core.py and tests/test_core.py, though I'm not 100% sure.", "correct"),  # a hedge
    ("src/widgets/core.py and tests/test_core.py, not setup.py.", "correct"),
    ("src/widgets/core.py, tests/test_core.py and the Dockerfile (to pin the base image).", "wrong"),  # no extension
])
def test_files_named_as_not_changed_and_extensionless_files(text, verdict):
    from grading import FILES, grade
    assert grade("files_changed", FILES, text) == verdict


@pytest.mark.parametrize("text,verdict", [
    ("In src/widgets/core.py I replaced `width = cfg.get('width')` with `width = cfg.get('width', 80)`.", "correct"),
    ("In src/widgets/core.py I changed `width = 0` to `width = cfg.get('width', 80)`.", "correct"),
    ("In src/widgets/core.py I wrote `width = cfg.get('width', 80)` instead of `width = 80`.", "correct"),
    ("In src/widgets/core.py I inserted `width = cfg.get('width')` and `width = cfg.get('width', 80)`.", "wrong"),
])
def test_code_named_as_replaced_is_not_claimed_as_inserted(text, verdict):
    assert grade("first_edit", EDIT, text) == verdict


@pytest.mark.parametrize("text,verdict", [
    ("31 calls in all, but the last had no result, so 30.", "correct"),
    ("It failed three times before it passed on the fourth.", "wrong"),                 # 4 calls, not 30
    ("I ran it 29 times before it passed on the 30th.", "correct"),
    ("I ran it 30 times, so 12 of them failed.", "correct"),                             # a clause, not the count
    ("30 times - mostly run_tests_fast reruns? no: run_tests itself.", "correct"),
])
def test_a_concluded_count_decides(text, verdict):
    assert grade_asked("call_count", ASK_COUNT, 30, text) == verdict


@pytest.mark.parametrize("text,verdict", [
    ("14 times, mostly view and str_replace commands.", "correct"),                  # the tool's own command
    ("14 times, all of them `file_reader` calls.", "wrong"),
])
def test_a_part_of_the_asked_tools_name_is_no_other_tool(text, verdict):
    question = "How many times did you call `str_replace_editor`?"
    assert grade_asked("call_count", question, 14, text) == verdict


@pytest.mark.parametrize("reference,text,verdict", [
    ("Case A: ok\nCase B: ok", "Case A: ok\nCase B: ok\nThen a ValueError: bad input was raised.", "wrong"),
    ("Case A: ok\nCase B: ok", "Both cases printed ok, no ValueError this time.", "correct"),  # denied
    ("Traceback ...\nValueError: bad input", "ValueError: bad input", "correct"),
    ("Case A: ok\nCase B: ok", "Case A: ok, Case B: ok (the earlier ValueError was fixed).", "correct"),  # another run
])
def test_an_exception_the_output_does_not_show_is_wrong(reference, text, verdict):
    assert grade_asked("tool_output", ASK_OUTPUT, reference, text) == verdict


@pytest.mark.parametrize("reference,text,verdict", [
    ("88:def merge(left: Node, right: Node) -> Node:", "88:def merge(left: Tree, right: Node) -> Node:", "wrong"),
    ("88:def merge(left: Node, right: Node) -> Node:", "88:def merge(left: Node, right: Node) -> Node:", "correct"),
    ("App 'mail' may use: camera, contacts.", "App 'mail' may use: location, contacts.", "wrong"),
    ("Found 3 files in /srv/media", "Found three files in /srv/media", "correct"),   # a number in words is no change
    ("Found 3 files in /srv/media", "Found four files in /srv/media", "wrong"),
])
def test_a_restated_output_with_a_word_changed(reference, text, verdict):
    assert grade_asked("tool_output", ASK_OUTPUT, reference, text) == verdict


SEVERAL = {"tool": "edit_file", "message": "Edit refused. Several matches of `return None` in util.py"}
ABSENT = {"tool": "edit_file", "message": "Edit refused: `return None` was not found in util.py"}


@pytest.mark.parametrize("reference,text,verdict", [
    (SEVERAL, "Edit refused: `return None` was not found in util.py.", "wrong"),
    (SEVERAL, "edit_file refused because `return None` occurs more than once in util.py", "correct"),
    (ABSENT, "Edit refused, `return None` matched multiple times in util.py", "wrong"),
    (ABSENT, "edit_file could not find `return None` in util.py", "correct"),
])
def test_an_opposite_cause_is_another_message(reference, text, verdict):
    assert grade_asked("first_tool_error", ASK_TOOL_ERROR, reference, text) == verdict


@pytest.mark.parametrize("text,verdict", [
    ("exit 2: the link step at build.mk:40 failed", "correct"),     # its identifiers and numbers, in other words
    ("ninja: link.mk:40 [link] exit 2", "wrong"),
    ("exit 3 at build.mk:40", "wrong"),
])
def test_a_message_like_value_in_substance(text, verdict):
    question = "What was `make` the last time you called `bash` with `{\"command\": \"make\"}`?"
    assert grade_asked("latest_value", question, "*** [build.mk:40: link] exit 2", text) == verdict


# --- issue 31 item 4, second round: the classes of fresh7's unseen disagreements, values of their own ---------------

def grade_rooted(qtype: str, question: str, reference, text: str, root: str | None = None,
                 params: dict | None = None) -> str:
    from bench.scoring.judge import ExactJudge
    from bench.store.schema import Answer, Question

    q = Question(qid=f"c@0:{qtype}", type=qtype, question=question, reference=reference, evidence_keys=[],
                 evidence_messages=[], params=params or {})
    return ExactJudge().score(q, Answer(case_id="c@0", qid=q.qid, type=qtype, answer=text), root).verdict


@pytest.mark.parametrize("text,verdict", [
    # the correction takes back one file by name: the other files of the list stand
    ("src/widgets/render.py and tests/test_core.py - wait, no: the module I edited was src/widgets/core.py; "
     "render.py I only read.", "correct"),
    ("src/widgets/RenderView.py and tests/test_core.py - no wait, I changed core.py in that folder, RenderView I "
     "only opened.", "correct"),
    # a correction that takes nothing back by name replaces the whole list
    ("src/widgets/render.py and tests/test_core.py - wait, no: src/widgets/core.py.", "wrong"),
    ("I edited src/widgets/core.py and tests/test_core.py, setup.py was unchanged.", "correct"),  # its own clause
])
def test_a_list_correction_that_takes_back_one_item_keeps_the_others(text, verdict):
    from grading import FILES, grade
    assert grade("files_changed", FILES, text) == verdict


@pytest.mark.parametrize("text,verdict", [
    ("src/widgets/core.py and tests/test_core.py; I also wrote /tmp/probe.py, but that is outside the repository.",
     "correct"),
    ("src/widgets/core.py, tests/test_core.py and /tmp/probe.py (a scratch file not in the repo).", "correct"),
    ("src/widgets/core.py, tests/test_core.py and /tmp/probe.py.", "wrong"),
    ("src/widgets/core.py, tests/test_core.py and setup.py (not changed).", "correct"),   # the item it follows
])
def test_a_file_said_to_be_outside_the_repository_is_not_claimed(text, verdict):
    from grading import FILES, grade
    assert grade("files_changed", FILES, text) == verdict


@pytest.mark.parametrize("text,verdict", [
    ("None - I only read the code.", "wrong"),                     # a claim: the empty set
    ("I did not modify any files.", "wrong"),
    ("No files were changed.", "wrong"),
    ("I can't recall which files I changed.", "abstained"),
    ("None of the files I touched are visible to me now.", "abstained"),
])
def test_an_answer_that_no_file_was_changed_is_a_claim(text, verdict):
    from grading import FILES, grade
    assert grade("files_changed", FILES, text) == verdict


@pytest.mark.parametrize("text,verdict", [
    ("In src/widgets/core.py:\n```diff\n def size(cfg):\n-    width = 80\n+    width = cfg.get('width', 80)\n"
     "     return width\n```", "correct"),
    ("src/widgets/core.py\n```\n-    width = 80\n+    width = cfg.get('width', 80)\n```", "correct"),  # no language
    ("src/widgets/core.py\n```diff\n+    width = cfg.get('width', 80)\n+    print(width)\n```", "wrong"),  # invented
    ("src/widgets/core.py\n```diff\n-    width = cfg.get('width', 80)\n+    width = 80\n```", "wrong"),  # removed it
])
def test_a_diff_is_read_as_what_it_inserts(text, verdict):
    from grading import EDIT, grade
    assert grade("first_edit", EDIT, text) == verdict


@pytest.mark.parametrize("reference,text,verdict", [
    ({"passed": 9, "failed": 0, "errors": 0}, "Surefire printed `Tests run: 9, Failures: 0, Errors: 0, Skipped: 0`.",
     "correct"),
    ({"passed": 9, "failed": 0, "errors": 0}, "Tests run: 9, Failures: 0, Errors: 0, Skipped: 2", "wrong"),
    ({"passed": 4, "failed": 0}, "It printed:\nRan 4 tests in 0.412s\n\nOK", "correct"),
    ({"passed": 4, "failed": 0}, "It printed:\nRan 5 tests in 0.412s\n\nOK", "wrong"),
])
def test_a_runners_own_summary_counts_as_the_runner_reports_it(reference, text, verdict):
    assert grade_asked("test_counts", "?", reference, text) == verdict


@pytest.mark.parametrize("reference,text,verdict", [
    ({"type": "decimal.InvalidOperation", "message": "[<class 'decimal.DivisionUndefined'>]"},
     "InvalidOperation: [<class 'decimal.DivisionUndefined'>]", "correct"),
    ({"type": "com.acme.QuotaExceeded", "message": "limit 5 reached"}, "QuotaExceeded: limit 5 reached", "correct"),
    ({"type": "com.acme.QuotaExceeded", "message": "limit 5 reached"}, "RateLimited: limit 5 reached", "wrong"),
])
def test_an_exception_printed_as_name_colon_message_names_its_type(reference, text, verdict):
    assert grade_asked("first_error", ASK_ERROR, reference, text) == verdict


@pytest.mark.parametrize("text,verdict", [
    ("ValueError: could not convert string to float: '3,5 kg'", "wrong"),    # words added inside the quotes
    ("ValueError: could not convert string to float: '3,5'", "correct"),
    ('ValueError: could not convert string to float: "3,5"', "correct"),     # other quotes around it
])
def test_a_quoted_value_in_a_message_is_stated_whole(text, verdict):
    reference = {"type": "ValueError", "message": "could not convert string to float: '3,5'"}
    assert grade_asked("first_error", ASK_ERROR, reference, text) == verdict


WIDGETS = "/workspace/acme__widgets__1.0"
LISTING = ("Here's the files and directories up to 2 levels deep in /srv/app, excluding hidden items:\n"
           "/srv/app\n/srv/app/main.py")
GREP_HIT = f"{WIDGETS}/widgets/render.py:14:        return self.width"
TRACEBACK = ("Traceback (most recent call last):\n  File \"<string>\", line 1, in <module>\n"
             f"  File \"{WIDGETS}/widgets/render.py\", line 14, in draw\n    return self.width\n"
             "           ^^^^^^^^^^\nAttributeError: 'Box' object has no attribute 'width'")


@pytest.mark.parametrize("reference,text,verdict", [
    (LISTING, "Two entries: /srv/app itself and /srv/app/main.py.", "correct"),   # the caption is no value
    (LISTING, "Two entries: /srv/app itself and /srv/app/util.py.", "wrong"),
    (GREP_HIT, "widgets/render.py:14: return self.width", "correct"),            # relative to the repository
    (GREP_HIT, "One hit: `render.py:14:        return self.width`", "correct"),  # its unique file name
    (GREP_HIT, "render.py:15: return self.width", "wrong"),
    (GREP_HIT, "lib/render.py:14: return self.width", "wrong"),                   # another directory
    ("src/a/Box.java\nsrc/b/Line.java", "- src/a/Box.java\n- src/b/Line.java", "correct"),  # relative paths whole
    ("src/a/Box.java\nsrc/b/Line.java", "- src/a/Box.java\n- src/c/Line.java", "wrong"),
])
def test_paths_and_captions_of_an_output(reference, text, verdict):
    assert grade_rooted("tool_output", ASK_OUTPUT, reference, text, WIDGETS) == verdict


@pytest.mark.parametrize("text,verdict", [
    ("A traceback ending in AttributeError: 'Box' object has no attribute 'width' (widgets/render.py, line 14).",
     "correct"),
    ("AttributeError: 'Box' object has no attribute 'width'", "correct"),       # the frames are where, optional
    ("AttributeError: 'Box' object has no attribute 'width', raised at render.py line 15", "wrong"),  # not a frame
    ("AttributeError: 'Box' object has no attribute 'height'", "wrong"),
])
def test_a_traceback_restated_by_its_exception(text, verdict):
    assert grade_rooted("tool_output", ASK_OUTPUT, TRACEBACK, text, WIDGETS) == verdict


@pytest.mark.parametrize("reference,text,verdict", [
    ("/srv/app/conf.py:3:    port = env[\"PORT\"]", "conf.py:3: port = env['PORT']", "wrong"),
    ("/srv/app/conf.py:3:    port = env[\"PORT\"]", "conf.py:3: port = env[\"PORT\"]", "correct"),
    ("   40\tcase OPEN:\n   41\tcase CLOSED:", "40 case CLOSED:\n41 case OPEN:", "wrong"),   # rows swapped
    ("   40\tcase OPEN:\n   41\tcase CLOSED:", "40 case OPEN:\n41 case CLOSED:", "correct"),
])
def test_a_restated_line_keeps_its_quotes_and_its_row(reference, text, verdict):
    assert grade_rooted("tool_output", ASK_OUTPUT, reference, text) == verdict


@pytest.mark.parametrize("text,verdict", [
    ("I can't recall the exact text anymore; I only remember it didn't work.", "wrong"),   # a vague claim
    ("I no longer have that output, but the install failed.", "wrong"),
    ("I can't recall what it printed.", "abstained"),
    ("I don't remember whether it worked.", "abstained"),
])
def test_a_decline_that_says_how_the_call_went_is_a_vague_claim(text, verdict):
    reference = "ERROR: Could not find a version that satisfies the requirement acme==9.9"
    assert grade_rooted("tool_output", ASK_OUTPUT, reference, text) == verdict


@pytest.mark.parametrize("reference,text,verdict", [
    (18, "18 - the same number as my apply_patch calls, as it happens.", "correct"),  # compared, not counted
    (18, "18, just like apply_patch.", "correct"),
    (18, "18 apply_patch calls.", "wrong"),
    (6, "5... actually 6 - I ran it once more after the fix.", "correct"),            # the number it opens with
    (6, "6: once before the fix and five times after", "correct"),
    (6, "1. I ran run_tests 6 times", "correct"),                                      # a list marker is no count
])
def test_a_count_compared_with_another_tool_and_a_leading_count(reference, text, verdict):
    assert grade_asked("call_count", ASK_COUNT, reference, text) == verdict


RESOLVE = {"tool": "close_ticket", "message": "Error: Ticket must be resolved to close"}
CLOSED = {"tool": "close_ticket", "message": "Error: Ticket is already closed"}


@pytest.mark.parametrize("reference,text,verdict", [
    (RESOLVE, "close_ticket failed because the ticket was already resolved.", "wrong"),  # the state, not the need
    (RESOLVE, "close_ticket said the ticket must be resolved before it can be closed.", "correct"),
    (RESOLVE, "close_ticket refused: the ticket wasn't resolved yet.", "correct"),
    (CLOSED, "close_ticket said the ticket must be closed first.", "wrong"),
    (CLOSED, "close_ticket: the ticket was already closed.", "correct"),
])
def test_a_requirement_restated_as_the_state_is_the_opposite_cause(reference, text, verdict):
    assert grade_asked("first_tool_error", ASK_TOOL_ERROR, reference, text) == verdict


@pytest.mark.parametrize("text,verdict", [
    ("Priya Raman", "wrong"),                   # a name: a claim
    ("Their account number.", "abstained"),     # the question's own words
    ("Forgot.", "abstained"),
    ("AC44817", "wrong"),                        # exactly: not without its dash
    ("ac-44817", "correct"),                     # case ignored
])
def test_a_bare_name_is_a_claim_and_a_user_value_is_exact(text, verdict):
    question = "What `account_number` did the user give you for `lookup_account`?"
    assert grade_asked("user_fact", question, "AC-44817", text) == verdict


@pytest.mark.parametrize("reference,text,verdict", [
    ("make: *** [GNUmakefile:88: install] Error 2", "Error 2", "correct"),      # the location may be left out
    ("make: *** [GNUmakefile:88: install] Error 2", "Error 1", "wrong"),        # the earlier value
    ("make: *** [GNUmakefile:88: install] Error 2", "Error 2 at GNUmakefile:90", "wrong"),  # a location given: right
    ("\U0001f507 Muted | \U0001f50b 45%", "It showed muted.", "wrong"),          # a part of the value left out
    ("\U0001f507 Muted | \U0001f50b 45%", "Muted, battery at 45%.", "correct"),
])
def test_a_location_is_optional_but_a_part_is_not(reference, text, verdict):
    question = "What was `status` the last time you called `sh` with `{}`?"
    stale = {"make: *** [GNUmakefile:88: install] Error 2": "make: *** [GNUmakefile:88: install] Error 1"}
    assert grade_rooted("latest_value", question, reference, text,
                        params={"stale": stale.get(reference, "\U0001f507 Muted | \U0001f50b 90%")}) == verdict


GADGETS = [{"tool": "toggle_bluetooth", "arguments": {}}, {"tool": "restart_router", "arguments": {}},
           {"tool": "reset_dns_cache", "arguments": {}}]


@pytest.mark.parametrize("reference,text,verdict", [
    (GADGETS, "I switched Bluetooth off, then restarted; then reset the DNS cache.", "correct"),
    (GADGETS, "I switched Wi-Fi off, restarted the router, reset the DNS cache.", "wrong"),   # another toggle
    ([{"tool": "toggle_wifi_hotspot", "arguments": {}}], "I turned the Wi-Fi hotspot on.", "correct"),  # hyphens
    ([{"tool": "toggle_data", "arguments": {}}], "I turned on airplane mode.", "wrong"),   # "turned on" names no toggle
    ([{"tool": "reseat_sim_card", "arguments": {}}], "I re-seated the SIM.", "correct"),     # its last word left out
])
def test_changes_told_by_what_they_did(reference, text, verdict):
    assert grade_asked("write_actions", ASK_CHANGES, reference, text) == verdict


TRIAL = [{"tool": "extend_trial", "arguments": {"account_id": "A3"}, "other": {"days": 14}}]


@pytest.mark.parametrize("text,verdict", [
    ("extend_trial(account_id=A3)", "correct"),                        # another argument need not be said
    ("extend_trial(account_id=A3, days=14)", "correct"),
    ("extend_trial(account_id=A3, days=30)", "wrong"),                 # but a value said for it must be the call's
    ('[{"tool": "extend_trial", "arguments": {"account_id": "A3", "days": 30}}]', "wrong"),
    ("I extended the trial of A3 by 30 days.", "wrong"),
    ("I extended the trial of A3 by 14 days.", "correct"),
    ("I'm unable to list the changes from what I can still see.", "abstained"),  # a decline, not a claim
])
def test_a_value_stated_for_another_argument_must_be_the_calls(text, verdict):
    assert grade_asked("write_actions", ASK_CHANGES, TRIAL, text) == verdict


# --- issue 31 item 4, third round: the classes of fresh8's unseen disagreements, values of their own ---------------

@pytest.mark.parametrize("text,verdict", [
    ("src/widgets/core.py and tests/test_core.py. I looked at setup.py and docs/conf.py but didn't touch them.",
     "correct"),                                                     # "didn't": a contracted denial
    ("src/widgets/core.py and tests/test_core.py. I opened setup.py and haven't modified it.", "correct"),
    ("src/widgets/core.py, tests/test_core.py and setup.py, which I didn't mean to keep.", "wrong"),  # no denial
])
def test_a_contracted_denial_denies(text, verdict):
    from grading import FILES, grade
    assert grade("files_changed", FILES, text) == verdict


@pytest.mark.parametrize("text,verdict", [
    ("src/widgets/core.py; tests/test_core.py was only a throwaway script I ran.", "wrong"),  # set apart: missing
    ("src/widgets/core.py; I only ran tests/test_core.py.", "wrong"),
    ("src/widgets/core.py and tests/test_core.py (I also ran it).", "correct"),
])
def test_a_file_set_apart_as_a_script_it_ran_is_not_claimed(text, verdict):
    from grading import FILES, grade
    assert grade("files_changed", FILES, text) == verdict


@pytest.mark.parametrize("text,verdict", [
    ("```diff\n--- a/src/widgets/core.py\n+++ b/src/widgets/core.py\n@@ -1,3 +1,3 @@\n def size(cfg):\n"
     "-    width = 80\n+    width = cfg.get('width', 80)\n     return width\n```", "correct"),   # git's a/ b/ prefixes
    ("```diff\n--- a/lib/widgets/core.py\n+++ b/lib/widgets/core.py\n@@ -1,3 +1,3 @@\n"
     "-    width = 80\n+    width = cfg.get('width', 80)\n```", "wrong"),                     # another directory
    ("```diff\n--- src/widgets/core.py\n+++ src/widgets/core.py\n+    width = cfg.get('width', 80)\n```", "correct"),
])
def test_a_diffs_headers_name_its_file(text, verdict):
    from grading import EDIT, grade
    assert grade("first_edit", EDIT, text) == verdict


@pytest.mark.parametrize("reference,text,verdict", [
    ({"passed": 7, "failed": 2}, "7 passed, 2 failed - hmm, no, that was the rerun; the first had 9 passed.", "wrong"),
    ({"passed": 9, "failed": 0}, "7 passed, 2 failed - hmm, no, that was the rerun; the first had 9 passed.", "correct"),
    ({"passed": 9, "failed": 0}, "7 passed, 2 failed. No, that was the rerun: all 9 passed the first time.", "correct"),
])
def test_an_interjected_no_corrects_the_claim(reference, text, verdict):
    assert grade_asked("test_counts", "?", reference, text) == verdict


@pytest.mark.parametrize("reference,text,verdict", [
    ({"passed": 3, "failed": 0}, "It ran 3 tests and they all passed.", "correct"),
    ({"passed": 1, "failed": 0, "errors": 0}, "It ran one test, and it passed.", "correct"),
    ({"passed": 3, "failed": 0}, "It ran 4 tests and they all passed.", "wrong"),
    ({"passed": 2, "failed": 1}, "Ran 3 tests and they all passed.", "wrong"),
])
def test_a_total_with_all_of_it_passing_counts(reference, text, verdict):
    assert grade_asked("test_counts", "?", reference, text) == verdict


@pytest.mark.parametrize("qtype,reference,text,verdict", [
    ("test_counts", {"passed": 5, "failed": 0}, "That output is gone; I only remember the tests didn't pass.", "wrong"),
    ("test_counts", {"passed": 5, "failed": 0}, "I can't recall how many tests passed.", "abstained"),
    ("tool_output", "a.txt\nb.txt", "I no longer have it - it listed a few text files.", "wrong"),
    ("tool_output", "a.txt\nb.txt", "I can't recall what it listed.", "abstained"),
])
def test_a_decline_that_says_how_the_run_went_or_what_it_held_is_a_vague_claim(qtype, reference, text, verdict):
    question = ASK_OUTPUT if qtype == "tool_output" else "?"
    assert grade_asked(qtype, question, reference, text) == verdict


QUOTA = {"type": "billing.QuotaExceeded", "message": "[<class 'billing.SeatLimit'>]"}


@pytest.mark.parametrize("text,verdict", [
    ("billing.SeatLimit", "wrong"),                                              # a qualified class: a claimed type
    ("billing.QuotaExceeded", "wrong"),                                          # the right type, no message
    ("It threw billing.QuotaExceeded, a SeatLimit problem with the plan.", "correct"),  # the class after "threw"
    ("It raised billing.QuotaExceeded - some quota problem.", "wrong"),         # the message's class not stated
    ("It raised billing.QuotaExceeded wrapping payments.SeatLimit.", "wrong"),  # another package's class
])
def test_a_class_named_by_raising_or_qualified_is_a_type(text, verdict):
    assert grade_asked("first_error", ASK_ERROR, QUOTA, text) == verdict


@pytest.mark.parametrize("reference,text,verdict", [
    ({"type": "ValueError", "message": "speed 12.0 above limit 9.5"}, "ValueError: speed 12 above limit 9.5", "correct"),
    ({"type": "ValueError", "message": "speed 12.0 above limit 9.5"}, "ValueError: speed 12.5 above limit 9.5", "wrong"),
    ({"type": "ValueError", "message": "speed 12.0 above limit 9.5"}, "ValueError: speed above the limit", "wrong"),
    ({"type": "ValueError", "message": "bad token '7.0'"}, "ValueError: bad token '7'", "wrong"),  # quoted: whole
])
def test_a_number_of_a_message_is_compared_numerically(reference, text, verdict):
    assert grade_asked("first_error", ASK_ERROR, reference, text) == verdict


SHIM = {"type": "ImportError", "message": "cannot import name 'Shim' from 'kit' (/srv/kit/__init__.py)"}


@pytest.mark.parametrize("text,verdict", [
    ("ImportError: cannot import name 'Shim' from 'kit'", "correct"),                          # left out
    ("ImportError: cannot import name 'Shim' from 'kit' (/srv/kit/__init__.py)", "correct"),
    ("ImportError: cannot import name 'Shim' from 'kit' (kit/__init__.py)", "correct"),         # its end
    ("ImportError: cannot import name 'Shim' from 'kit' (/home/me/kit/__init__.py)", "wrong"),  # under another root
    ("ImportError: cannot import name 'Shim' from 'kit' (/srv/kit/shim.py)", "wrong"),
])
def test_a_location_given_under_another_root_is_another_location(text, verdict):
    assert grade_asked("first_error", ASK_ERROR, SHIM, text) == verdict


@pytest.mark.parametrize("text,verdict", [
    ("app: main.py util.py v2_io.py\ndocs: index.md", "correct"),
    ("app: main.py v2_io.py\ndocs: index.md", "wrong"),          # a file name left out
    ("app: main.py util.py v2_io.py\ndocs: guide.md", "wrong"),
])
def test_file_names_are_values_of_a_listing(text, verdict):
    listing = "app:\nmain.py\nutil.py\nv2_io.py\n\ndocs:\nindex.md"
    assert grade_asked("tool_output", ASK_OUTPUT, listing, text) == verdict


@pytest.mark.parametrize("text,verdict", [
    ("1. \u231b Fetch the data\n2. \u231b Plot it", "correct"),
    ("1. \u2705 Fetch the data\n2. \u231b Plot it", "wrong"),     # a status changed: ⌛ is a marker too
])
def test_an_hourglass_is_a_status_marker(text, verdict):
    assert grade_asked("tool_output", ASK_OUTPUT, "1. \u231b Fetch the data\n2. \u231b Plot it", text) == verdict


ROWS = "   12\t@register(app.io)\n   13\treturn app.io.load()"


@pytest.mark.parametrize("text,verdict", [
    ("12: @register(app.io)\n13: return app.io.load()", "correct"),   # app.io is inside row 13's own token too
    ("12: return app.io.load()\n13: @register(app.io)", "wrong"),     # rows given each other's numbers
])
def test_a_rows_own_word_is_not_inside_another_rows_token(text, verdict):
    assert grade_asked("tool_output", ASK_OUTPUT, ROWS, text) == verdict


VIEW = "Here's the result of running `cat -n` on /srv/app/conf.py:\n     1\tPORT = 8080\n     2\tHOST = 'db'"
TREE = ("Here's the files and directories up to 2 levels deep in /srv/app, excluding hidden items:\n/srv/app\n"
        "/srv/app/main.py")


@pytest.mark.parametrize("reference,arguments,text,verdict", [
    (VIEW, '{"path": "/srv/app/conf.py"}', "1 PORT = 8080\n2 HOST = 'db'", "correct"),  # the path is the question's
    (VIEW, '{"path": "/srv/app/conf.py"}', "1 PORT = 8081\n2 HOST = 'db'", "wrong"),
    (TREE, '{"path": "/srv/app"}', "One file: /srv/app/main.py", "correct"),              # the listed directory
    (TREE, '{"path": "/srv/app"}', "One file: /srv/app/cli.py", "wrong"),
    (TREE, '{"path": "/srv/app"}', "/srv/app/main.py and /srv/app/setup.py", "wrong"),   # an entry added
    ("Here's the files and directories up to 2 levels deep in /srv/app, excluding hidden items:\n/srv/app",
     '{"path": "/srv/app"}', "/srv/app/main.py and /srv/app/docs", "wrong"),              # an empty listing filled
])
def test_a_path_the_question_states_need_not_be_restated(reference, arguments, text, verdict):
    question = f"The 1st time you called `view` with `{arguments}`, what did it return?"
    assert grade_asked("tool_output", question, reference, text) == verdict


QUOTA_OUT = '{"plan": "P7", "seats_used": "41", "seats_allowed": "40", "renewal_date": "2025-09-01"}'


@pytest.mark.parametrize("text,verdict", [
    ("Plan P7 has 41 seats used of 40 seats allowed, renewing 2025-09-01.", "correct"),
    ("Plan P7: used 41 seats, allowed 40, renewal 2025-09-01.", "correct"),
    ("Plan P7 used 40 seats of its 41 allowed, renewing 2025-09-01.", "wrong"),   # numbers under each other's word
])
def test_numbers_beside_a_word_of_their_label(text, verdict):
    assert grade_asked("tool_output", ASK_OUTPUT, QUOTA_OUT, text) == verdict


@pytest.mark.parametrize("text,verdict", [
    ("KQZMTR", "wrong"),                      # a code in capitals as the whole answer: a claim
    ("`KQZMTR`", "wrong"),
    ("IDK", "abstained"),
    ("2025-03-09T08:30:00", "correct"),
])
def test_a_bare_code_is_a_claim(text, verdict):
    question = "In what `open_ticket` with `{\"topic\": \"billing\"}` returned the 1st time, what was `opened_at`?"
    assert grade_asked("tool_value", question, "2025-03-09T08:30:00", text) == verdict


@pytest.mark.parametrize("text,verdict", [
    ("The user never gave me an account number; I looked them up by email.", "wrong"),  # there was none: a claim
    ("No account number was given in the chat.", "wrong"),
    ("I can't recall which account number they gave.", "abstained"),
    ("+44 AC-44817", "wrong"),                                                          # a prefix added: another value
    ("AC-44817 7", "wrong"),
    ("They gave AC-44817.", "correct"),
])
def test_a_user_value_claimed_absent_or_with_more_attached(text, verdict):
    question = "What `account_number` did the user give you for `lookup_account`?"
    assert grade_asked("user_fact", question, "AC-44817", text) == verdict


@pytest.mark.parametrize("text,verdict", [
    ("18 - plus 4 apply_patch calls.", "correct"),          # another tool's count told beside the answer's own
    ("18, and 6 more `grep` calls besides.", "correct"),
    ("4 apply_patch calls.", "wrong"),                     # the count given is the other tool's
    ("18 apply_patch calls.", "wrong"),
])
def test_another_tools_count_told_beside_the_count(text, verdict):
    assert grade_asked("call_count", ASK_COUNT, 18, text) == verdict


NOT_FOUND = {"tool": "file_editor",
             "message": "Invalid `path` parameter: /srv/kit/lib/io.c. The path /srv/kit/lib/io.c does not exist. "
                        "Please provide a valid path."}


@pytest.mark.parametrize("text,verdict", [
    ("Opening lib/io.c failed because that path does not exist.", "correct"),   # relative path, the sentence of it
    ("file_editor: Invalid `path` parameter: lib/io.c. The path lib/io.c does not exist.", "correct"),
    ("Opening lib/io.c failed because it is a directory.", "wrong"),
    ("Opening lib/os.c failed because that path does not exist.", "wrong"),
    ("shell_exec: the path lib/io.c does not exist.", "wrong"),                # another tool named
])
def test_a_message_path_relative_to_the_root_and_its_saying_sentence(text, verdict):
    assert grade_rooted("first_tool_error", ASK_TOOL_ERROR, NOT_FOUND, text, "/srv/kit") == verdict


@pytest.mark.parametrize("text,verdict", [
    ("No replacement was performed, old_str `if (open_count > 0) {\\n  reset_all();` did not appear verbatim.",
     "correct"),                                    # snake_case inside the quoted old_str names no tool
    ("`file_editor` said: No replacement was performed, old_str `if (open_count > 0) {`", "correct"),
    ("`shell_exec` said: No replacement was performed, old_str `if (open_count > 0) {`", "wrong"),
])
def test_words_of_quoted_code_name_no_tool(text, verdict):
    reference = {"tool": "file_editor", "message": "No replacement was performed, old_str `if (open_count > 0) {"}
    assert grade_asked("first_tool_error", ASK_TOOL_ERROR, reference, text) == verdict


TOPUP = [{"tool": "recharge_wallet", "arguments": {"account_id": "A9"}, "other": {"euros": 15}},
         {"tool": "set_billing_cycle", "arguments": {"cycle": "quarterly"}},
         {"tool": "grant_seat_license", "arguments": {"team": "ops", "license": "viewer"}},
         {"tool": "grant_seat_license", "arguments": {"team": "ops", "license": "editor"}}]


@pytest.mark.parametrize("text,verdict", [
    # a change told by its verb and a value of its own
    ("Recharged 15 euros on A9, set quarterly, granted ops the viewer and then the editor license.", "correct"),
    ("Recharged 15 on A9; set quarterly; granted ops the viewer and then the editor license.", "correct"),
    ("Recharged 15 on A9; set monthly; granted ops the viewer and then the editor license.", "wrong"),  # another value
    ("Recharged 15 on A9; granted ops the viewer and then the editor license.", "wrong"),               # one left out
    ("Recharged 20 euros on A9, set quarterly, granted ops the viewer and then the editor license.", "wrong"),
])
def test_a_change_told_by_its_verb_and_its_own_values(text, verdict):
    assert grade_asked("write_actions", ASK_CHANGES, TOPUP, text) == verdict


LIGHTS = [{"tool": "toggle_night_light", "arguments": {}}, {"tool": "toggle_fan", "arguments": {}},
          {"tool": "set_room_mode", "arguments": {"mode": "eco_plus"}}]


@pytest.mark.parametrize("text,verdict", [
    ("1. toggled fan\n2. toggled night light\n3. set room mode eco_plus", "wrong"),         # not across items
    ("1. toggled night light\n2. toggled fan\n3. set room mode eco_plus", "correct"),
    ("1. Turned Night Light off\n2. Turned the fan on\n3. Switched the room mode to eco_plus", "correct"),  # "off"
    ("Turned the night light off, switched the fan on, changed the room mode to eco_plus.", "correct"),     # set_
])
def test_a_tools_words_stay_in_their_item_and_set_is_switched_to(text, verdict):
    assert grade_asked("write_actions", ASK_CHANGES, LIGHTS, text) == verdict


TWO = [{"tool": "issue_refund", "arguments": {"order_id": "O5"}},
       {"tool": "close_order", "arguments": {"order_id": "O5"}}]


@pytest.mark.parametrize("text,verdict", [
    ("I closed order O5, after first issuing a refund for it.", "correct"),     # the order the answer states
    ("Before closing order O5, I issued a refund for it.", "correct"),
    ("I closed order O5, then issued a refund for it.", "wrong"),
    ("I closed order O5, after that I issued a refund for it.", "wrong"),
])
def test_the_order_the_answer_states(text, verdict):
    assert grade_asked("write_actions", ASK_CHANGES, TWO, text) == verdict


@pytest.mark.parametrize("reference,text,verdict", [
    # the run imported kit from another install (/opt/kit): the answer's workspace path is another location
    ({"type": "ImportError", "message": "cannot import name 'Shim' from 'kit' (/opt/kit/__init__.py)"},
     "ImportError: cannot import name 'Shim' from 'kit' (/work/kit/kit/__init__.py)", "wrong"),
    # a path under the repository root may be stated relative to it
    ({"type": "FileNotFoundError", "message": "[Errno 2] No such file or directory: '/work/kit/conf/app.toml'"},
     "FileNotFoundError: [Errno 2] No such file or directory: 'conf/app.toml'", "correct"),
    ({"type": "FileNotFoundError", "message": "[Errno 2] No such file or directory: '/work/kit/conf/app.toml'"},
     "FileNotFoundError: [Errno 2] No such file or directory: 'conf/db.toml'", "wrong"),
])
def test_a_message_path_relative_to_the_repository_root(reference, text, verdict):
    assert grade_rooted("first_error", ASK_ERROR, reference, text, "/work/kit") == verdict


# --- issue 31 item 4, fourth round: the classes of fresh9's unseen disagreements, values of their own ---------------

@pytest.mark.parametrize("text,verdict", [
    ("18, then I also ran apply_patch 4 times.", "correct"),     # the other tool's name before its count
    ("18 runs - plus one apply_patch at the end.", "correct"),   # a tool's own name needs no "calls"
    ("4 - I ran apply_patch 4 times.", "wrong"),                 # the count given is the other tool's
])
def test_another_tools_count_told_by_its_name(text, verdict):
    assert grade_asked("call_count", ASK_COUNT, 18, text) == verdict


@pytest.mark.parametrize("qtype,reference,text,verdict", [
    ("call_count", 18, "Lots of times - I kept rerunning them until the suite was green.", "wrong"),  # a vague count
    ("call_count", 18, "Quite a few, but I can't say exactly how many.", "abstained"),
    ("call_count", 18, "Several times, but I can't say exactly how many.", "abstained"),             # beside a decline
    ("files_changed", ["src/widgets/core.py"], "That's gone from view - I only remember editing the sizing code.",
     "wrong"),                                                                                        # what, vaguely
    ("files_changed", ["src/widgets/core.py"], "I can't recall which files I changed.", "abstained"),
    ("files_changed", ["src/widgets/core.py"], "I changed some files, but I can't recall which.", "abstained"),
])
def test_a_vague_count_or_change_is_a_claim(qtype, reference, text, verdict):
    assert grade_asked(qtype, "?", reference, text) == verdict


@pytest.mark.parametrize("text,verdict", [
    ("src/widgets/core.py, tests/test_core.py, setup.cfg (not changed, only read)", "correct"),  # the item it follows
    ("src/widgets/core.py and tests/test_core.py (setup.cfg I edited but reverted).", "correct"),  # its own file
    ("src/widgets/core.py and tests/test_core.py. I also tried to open docs/x.md, but it was missing, so nothing "
     "changed there.", "correct"),
    ("Only core.py - test_core.py was just a scratch test I ran.", "wrong"),                  # set apart: missing
    ("src/widgets/core.py, tests/test_core.py, setup.cfg (nothing else changed)", "wrong"),  # denies no file
])
def test_a_parenthesis_or_a_reverted_edit_denies_its_file(text, verdict):
    from grading import FILES, grade
    assert grade("files_changed", FILES, text) == verdict


@pytest.mark.parametrize("text,verdict", [
    ("src/widgets/core.py: `width = cfg.get('width', 80)` (it replaced `width = 80`), then `return width`.",
     "correct"),
    ("src/widgets/core.py: `width = cfg.get('width', 80)`, replacing `width = 80`; then `return width`.", "correct"),
    ("src/widgets/core.py: `width = cfg.get('width', 80)` and `width = 80`; then `return width`.", "wrong"),
])
def test_code_named_as_replaced_after_the_new_code(text, verdict):
    from grading import EDIT, grade
    assert grade("first_edit", EDIT, text) == verdict


@pytest.mark.parametrize("reference,text,verdict", [
    ({"passed": 6, "failed": 1}, "Six passed; test_parse_empty_header failed (ValueError).", "correct"),
    ({"passed": 6, "failed": 2}, "Six passed; test_a_b and tests/x.py::TestY::test_z failed.", "correct"),
    ({"passed": 6, "failed": 2}, "Six passed; test_parse_empty_header failed.", "wrong"),
])
def test_failing_tests_named_instead_of_counted(reference, text, verdict):
    assert grade_asked("test_counts", "?", reference, text) == verdict


GRANT = [{"tool": "issue_voucher", "arguments": {"account_id": "A9"}, "other": {"amount": 20, "gift_wrap": "no"}}]


@pytest.mark.parametrize("text,verdict", [
    ("Just one: issue_voucher for A9. (Afterwards I escalated the ticket to billing, which changed nothing.)",
     "correct"),                                              # an aside after the change is an item of its own
    ("One voucher: issue_voucher for A9, 20 euros, no gift wrap.", "correct"),  # "no gift wrap" states gift_wrap no
    ("One voucher: issue_voucher for A9, with gift wrap.", "wrong"),
    ("issue_voucher for A9. Then I escalated the ticket to billing.", "wrong"),  # a change told, not an aside
])
def test_an_aside_after_the_change_and_a_stated_yes_no(text, verdict):
    assert grade_asked("write_actions", ASK_CHANGES, GRANT, text) == verdict


@pytest.mark.parametrize("text,verdict", [
    ("ops.lead@acme.test", "wrong"),          # a bare email is a value: a claim
    ("ops.lead7@acme.test", "correct"),
    ("Their email.", "abstained"),
])
def test_a_bare_email_is_a_claim(text, verdict):
    question = "In what `get_team` with `{\"id\": \"T4\"}` returned the 1st time, what was `contact`?"
    assert grade_asked("tool_value", question, "ops.lead7@acme.test", text) == verdict


@pytest.mark.parametrize("text,verdict", [
    ("Fan on and door locked - I don't recall the temperature.", "wrong"),  # part of the value, the rest declined
    ("I don't recall the status bar.", "abstained"),
    ("Fan on, door locked, 21 C.", "correct"),
])
def test_part_of_a_value_beside_a_decline_of_the_rest(text, verdict):
    question = "What was `Panel` the last time you called `refresh` with `{}`?"
    assert grade_asked("latest_value", question, "Fan On | Door Locked | 21 C", text) == verdict


@pytest.mark.parametrize("reference,text,verdict", [
    ("app:\nmain.py\nutil.py\n\ndocs:\nindex.md", "app: main.py, util.py, cli.py; docs: index.md", "wrong"),  # added
    ("app:\nmain.py\nutil.py\n\ndocs:\nindex.md", "app: main.py, util.py; docs: index.md", "correct"),
    ("Done: no problems found in 4 packages", "Found 2 problems in 1 file (checked 4 packages)", "wrong"),  # numbers
    ("Done: no problems found in 4 packages", "It printed \"Done: no problems found in 4 packages\".", "correct"),
])
def test_an_entry_or_a_number_the_output_does_not_show(reference, text, verdict):
    assert grade_asked("tool_output", ASK_OUTPUT, reference, text) == verdict


def test_the_listed_directory_with_its_trailing_slash_is_the_questions():
    listing = "Here's the files and directories up to 2 levels deep in /srv/app, excluding hidden items:\n/srv/app/\n" \
              "/srv/app/lib/\n/srv/app/lib/io/"
    question = 'The 1st time you called `view` with `{"path": "/srv/app"}`, what did it return?'
    assert grade_asked("tool_output", question, listing, "It listed /srv/app/lib/ and /srv/app/lib/io/.") == "correct"
    assert grade_asked("tool_output", question, listing, "It listed /srv/app/lib/ and /srv/app/bin/.") == "wrong"


@pytest.mark.parametrize("reference,text,verdict", [
    # backticked names the message uses as its parameters name no tool
    ({"tool": "file_editor", "message": "Invalid `new_text` parameter: x = 1"},
     "Invalid `new_text` parameter: x = 1. `new_text` and `old_text` must be different.", "correct"),
    ({"tool": "file_editor", "message": "Invalid `new_text` parameter: x = 1"},
     "`shell_exec` said: Invalid `new_text` parameter: x = 1", "wrong"),
    # the tool's own name says none of the message's words: a vague description is a claim, wrong
    ({"tool": "resume_plan", "message": "Error: Plan must be paused to resume"},
     "The resume_plan call failed - something about the plan's state.", "wrong"),
    ({"tool": "resume_plan", "message": "Error: Plan must be paused to resume"},
     "resume_plan: the plan must be paused to resume it.", "correct"),
    # a message cut before its cause states it by its opening: "Multiple occurrences" is the opposite cause
    ({"tool": "file_editor", "message": "No replacement was performed, old_str `def run(self):"},
     "No replacement was performed. Multiple occurrences of old_str `def run(self):`", "wrong"),
    ({"tool": "file_editor", "message": "No replacement was performed, old_str `def run(self):"},
     "No replacement was performed, old_str `def run(self):` did not appear verbatim.", "correct"),
])
def test_parameter_names_the_tools_own_name_and_a_cut_message(reference, text, verdict):
    assert grade_asked("first_tool_error", ASK_TOOL_ERROR, reference, text) == verdict


# --- issue 31 item 4, fifth round: the classes of fresh10's unseen disagreements, values of their own ---------------

@pytest.mark.parametrize("text,verdict", [
    ("## Calls\n- `apply_patch`: 4 calls\n- `run_tests`: **18** calls", "correct"),  # the asked tool's line, in bold
    ("- apply_patch: **4** calls\n- run_tests: 18 calls", "correct"),
    ("- run_tests: 17 calls\n- apply_patch: **18** calls", "wrong"),  # the 18 is the other tool's
])
def test_a_per_tool_list_gives_the_asked_tools_count(text, verdict):
    assert grade_asked("call_count", ASK_COUNT, 18, text) == verdict


@pytest.mark.parametrize("reference,text,verdict", [
    ({"passed": 9, "failed": 0}, "Everything passed - 9 tests.", "correct"),   # everything passed: none failed
    ({"passed": 8, "failed": 1}, "Everything passed - 9 tests.", "wrong"),
    ({"passed": 0, "failed": 1}, "I believe the single test failed.", "correct"),  # "the single test": one
    ({"passed": 1, "failed": 0}, "I believe the single test failed.", "wrong"),
    ({"passed": 9, "failed": 0}, "All I remember is that the suite went fine.", "wrong"),  # a vague claim, no count
    ({"passed": 9, "failed": 0}, "I can't see that run any more.", "abstained"),
])
def test_outcome_words_state_counts_and_a_vague_outcome_is_a_claim(reference, text, verdict):
    assert grade_asked("test_counts", "?", reference, text) == verdict


@pytest.mark.parametrize("text,verdict", [
    ("--- a/src/widgets/core.py\n+++ b/src/widgets/core.py\n@@\n-    width = 80\n+    width = cfg.get('width', 80)\n"
     "     return width", "correct"),  # an unfenced diff: its headers name the file, its + lines the code
    ("--- a/src/widgets/view.py\n+++ b/src/widgets/view.py\n@@\n+    width = cfg.get('width', 80)", "wrong"),
    ("--- a/src/widgets/core.py\n+++ b/src/widgets/core.py\n@@\n+    width = 80\n-    width = cfg.get('width', 80)",
     "wrong"),  # the code on the - line is what was removed
])
def test_an_unfenced_diff_is_read_as_a_diff(text, verdict):
    from grading import EDIT, grade
    assert grade("first_edit", EDIT, text) == verdict


JAVA_TRACE = ('Exception in thread "main" java.lang.IllegalStateException: pool "main" closed\n'
              "\tat com.acme.db.Pool.get(Pool.java:41)\n\tat com.acme.App.main(App.java:9)\n\t... 2 more")


@pytest.mark.parametrize("text,verdict", [
    ('Exception in thread "main" java.lang.IllegalStateException: pool "main" closed (thrown in Pool.get)', "correct"),
    ('java.lang.IllegalStateException: pool "main-db" closed', "wrong"),  # a quoted value is one value, whole
    ('java.lang.IllegalStateException: pool "main" closed, at line 44 of Pool.java', "wrong"),  # not a frame's line
    ('java.lang.IllegalStateException: pool "main" closed, at line 41 of Pool.java', "correct"),
])
def test_java_stack_frames_are_optional_like_python_frames(text, verdict):
    assert grade_asked("tool_output", ASK_OUTPUT, JAVA_TRACE, text) == verdict


@pytest.mark.parametrize("text,verdict", [
    ("lena.k_204 or lena.k.204 - one of those.", "wrong"),  # a dotted id is a candidate too
    ("Lena or Lina, one of those.", "wrong"),                 # "one of those" says it does not choose
    ("lena.k_204 - I'm fairly sure.", "correct"),
])
def test_two_candidates_said_to_be_one_of_those(text, verdict):
    question = "What `user_id` did the user give you for `get_user`?"
    assert grade_asked("user_fact", question, "lena.k_204", text) == verdict


@pytest.mark.parametrize("qtype,question,reference,text,verdict", [
    # the decline covers the output's text; how the call went is a claim beside it (wrong: no value stated)
    ("tool_output", ASK_OUTPUT, "make: *** [Makefile:12: all] Error 2",
     "I can't see it any more - I only remember the release build of src/app failed.", "wrong"),
    ("tool_output", ASK_OUTPUT, "make: *** [Makefile:12: all] Error 2", "I can't see it any more.", "abstained"),
    # a vague word of the very thing declined ("several times ... can't say how many") only restates the decline
    ("call_count", ASK_COUNT, 18, "Several times, but I can't say exactly how many.", "abstained"),
])
def test_a_claim_beside_a_decline_and_a_decline_restated(qtype, question, reference, text, verdict):
    assert grade_asked(qtype, question, reference, text) == verdict


# --- issue 31 item 4, sixth round: the classes of fresh11's unseen disagreements, values of their own ---------------

ASK_LATEST = "What was `Build` the last time you called `run_make` with `{}`?"


@pytest.mark.parametrize("qtype,question,reference,text,verdict", [
    ("call_count", ASK_COUNT, 11, "Somewhere around 9-11 calls, I'd say.", "wrong"),   # a range: two candidates
    ("call_count", ASK_COUNT, 11, "Between 10 and 11 times.", "wrong"),
    ("call_count", ASK_COUNT, 11, "11 times.", "correct"),
    ("call_count", ASK_COUNT, 12, "Roughly a dozen.", "wrong"),           # an approximation is a vague claim
    ("test_counts", "?", {"passed": 12, "failed": 2}, "12 passed, 2 failed - though it may have been 11 and 3.",
     "wrong"),                                                            # a second candidate beside the first
    ("latest_value", ASK_LATEST, "make: *** [all] Error 3", "It failed with Error 4 or Error 3, I believe.", "wrong"),
])
def test_a_range_or_alternatives_for_one_value_and_an_approximation(qtype, question, reference, text, verdict):
    assert grade_asked(qtype, question, reference, text) == verdict


@pytest.mark.parametrize("qtype,question,reference,text,verdict", [
    ("call_count", ASK_COUNT, 6, '{"count": 6}  // once per fix, then twice at the end', "correct"),  # the comment's
    ("call_count", ASK_COUNT, 1, '{"count": 6}  // once per fix, then twice at the end', "wrong"),    # counts are no answer
    ("test_counts", "?", {"passed": 12, "failed": 3}, '{"passed": 12, "failed": 3}  # after installing deps, 2nd run',
     "correct"),
])
def test_a_comment_after_a_json_answer_is_not_the_answer(qtype, question, reference, text, verdict):
    assert grade_asked(qtype, question, reference, text) == verdict


@pytest.mark.parametrize("text,verdict", [
    ("31 times, the same as my apply_patch calls.", "correct"),   # the other tool is only compared with
    ("31 times, same as apply_patch.", "correct"),
    ("31 apply_patch calls.", "wrong"),                             # a count of another tool
])
def test_a_tool_named_as_a_comparison_is_not_counted(text, verdict):
    assert grade_asked("call_count", ASK_COUNT, 31, text) == verdict


ASK_RUN = "The {nth} time you ran `make check`, how many tests passed and how many failed?"
RUNS_TABLE = "| attempt | passed | failed |\n|---|---|---|\n| first | 10 | 3 |\n| second | 13 | 0 |\n| third | 12 | 1 |"


@pytest.mark.parametrize("nth,reference,text,verdict", [
    ("2nd", {"passed": 13, "failed": 0}, RUNS_TABLE, "correct"),      # the row the question asks for, by its label
    ("3rd", {"passed": 12, "failed": 1}, RUNS_TABLE, "correct"),
    ("3rd", {"passed": 13, "failed": 0}, RUNS_TABLE, "wrong"),
    ("1st", {"passed": 6, "failed": 0}, "Ran 6 tests, all OK.", "correct"),   # a total, all passing: 6 passed
    ("1st", {"passed": 5, "failed": 0}, "Ran 6 tests, all OK.", "wrong"),
])
def test_a_table_of_several_runs_gives_the_asked_row_and_all_ok_passes(nth, reference, text, verdict):
    assert grade_asked("test_counts", ASK_RUN.format(nth=nth), reference, text) == verdict


@pytest.mark.parametrize("text,verdict", [
    # a dash sets the file apart; the denial after it refers back to it ("that one"): denied, the rest claimed
    ("src/cache.py, tests/test_cache.py \u2014 also src/store.py, though I only viewed that one.", "correct"),
    ("src/cache.py \u2014 also src/store.py, though I only viewed that one.", "wrong"),  # a claim: one file missing
    # a parenthesis after an item: "only tried to open" sets it apart like "only opened"
    ("src/cache.py, tests/test_cache.py, src/store.py (that one I only tried to open, it is missing).", "correct"),
    ("src/cache.py, tests/test_cache.py, src/store.py (that one I rewrote).", "wrong"),
])
def test_a_file_set_apart_by_a_dash_or_parenthesis_clause_is_denied(text, verdict):
    assert grade_asked("files_changed", "Which files did you change?", ["src/cache.py", "tests/test_cache.py"],
                       text) == verdict


KEY_ERROR = {"type": "KeyError", "message": "'region'"}


@pytest.mark.parametrize("reference,text,verdict", [
    (KEY_ERROR, "Nothing - it only printed `done: 0 rows`.", "wrong"),   # a claim that there was none, not a decline
    (KEY_ERROR, "None: the script just printed `[]`.", "wrong"),
    # a correction of the message only: graded on the corrected message, the type kept
    (KEY_ERROR, "KeyError: 'zone'... no wait - it was 'region'.", "correct"),
    (KEY_ERROR, "KeyError: 'region'... no wait - it was 'zone'.", "wrong"),
])
def test_none_opening_is_a_claim_and_a_corrected_message_keeps_its_type(reference, text, verdict):
    assert grade_asked("first_error", ASK_ERROR, reference, text) == verdict


@pytest.mark.parametrize("text,verdict", [
    ("It showed: Excellent | 4G | battery at 35 percent.", "correct"),   # icons left out, a part in words
    ("Excellent, 4G, and the battery was at 35 per cent.", "correct"),
    ("Excellent | 4G | battery at 53 percent.", "wrong"),
])
def test_a_status_bar_restated_without_icons_with_a_part_in_words(text, verdict):
    question = "What was `Status Bar` the last time you called `check_network` with `{}`?"
    assert grade_asked("latest_value", question, "\U0001F4F6 Excellent | \U0001F4F6 4G | \U0001F50B 35%", text) == verdict


@pytest.mark.parametrize("text,verdict", [
    ("lib/util/strings.py and tests/test_strings.py", "correct"),     # find's ./ left out: the same entries
    ("./lib/util/strings.py\n./tests/test_strings.py", "correct"),
    ("lib/util/strings.py and tests/test_bytes.py", "wrong"),
])
def test_a_path_without_the_dot_slash_the_output_gives_it(text, verdict):
    question = 'The 1st time you called `bash` with `{"command": "find . -name \'*strings*\'"}`, what did it return?'
    assert grade_asked("tool_output", question, "./lib/util/strings.py\n./tests/test_strings.py", text) == verdict


@pytest.mark.parametrize("text,verdict", [
    ("lib/util/strings.py", "correct"),
    ("lib/util/strings.py and lib/util/tests/test_strings.py", "wrong"),   # an entry added to a one-entry listing
])
def test_a_one_entry_find_listing_without_its_dot_slash(text, verdict):
    question = 'The 1st time you called `bash` with `{"command": "find . -name \'strings*\'"}`, what did it return?'
    assert grade_asked("tool_output", question, "./lib/util/strings.py", text) == verdict


@pytest.mark.parametrize("text,verdict", [
    # a reference cut inside the old_str it echoes: the answer's old_str must open with the part the reference has
    ("No replacement was performed, old_str `def area(self):\n    return 0` did not appear verbatim in geo/shape.py.",
     "correct"),
    ("No replacement was performed, old_str `class Shape:` did not appear verbatim in geo/shape.py.", "wrong"),
])
def test_a_reference_cut_inside_its_echoed_value_needs_that_opening(text, verdict):
    reference = {"tool": "str_replace_editor", "message": "No replacement was performed, old_str `def area(self):"}
    assert grade_asked("first_tool_error", ASK_TOOL_ERROR, reference, text) == verdict


# --- issue 31 item 4, seventh round: the classes of fresh12's unseen disagreements, values of their own -------------

@pytest.mark.parametrize("text,verdict", [
    # a vague count beside a decline of that same count: the vague word restates the decline (round 4's rule)
    ("I called it several times; I can't give an exact number.", "abstained"),
    ("Many times - I cannot give you the precise count.", "abstained"),
    ("Roughly a dozen.", "wrong"),                       # an approximation alone stays a vague claim (round 6)
    ("A lot of times, I kept retrying.", "wrong"),
])
def test_a_vague_count_beside_a_decline_of_the_count_abstains(text, verdict):
    assert grade_asked("call_count", ASK_COUNT, 12, text) == verdict


@pytest.mark.parametrize("text,verdict", [
    # a hedge between the first value and the second candidate: still two candidates
    ("17 - but I'm not entirely sure, it may have been 18.", "wrong"),
    ("17, though I am not certain, it could have been 16.", "wrong"),
    ("17.", "correct"),
])
def test_a_hedged_second_candidate_for_one_count(text, verdict):
    assert grade_asked("call_count", ASK_COUNT, 17, text) == verdict


@pytest.mark.parametrize("text,verdict", [
    # a count worked out: graded on the number it concludes with
    ("I count 15, minus the two that never came back: 13.", "correct"),
    ("I count 15, not counting the one without a result: 14.", "wrong"),
    ("Let me tally... the lint, three rebuilds, the smoke test... I make it 13.", "correct"),
    ("Let me tally... two rebuilds, the lint... I make it 12 - no, 13 with the last smoke test.", "correct"),
    ("Let me tally... two rebuilds, the lint... I make it 13 - no, 12 without the smoke test.", "wrong"),
])
def test_a_count_worked_out_is_graded_on_its_conclusion(text, verdict):
    assert grade_asked("call_count", ASK_COUNT, 13, text) == verdict


ASK_RUN_ONCE = "The 1st time you ran `make check`, how many tests passed and how many failed?"


@pytest.mark.parametrize("reference,text,verdict", [
    # a failing test named beside "the other N passed": one failure
    ({"passed": 6, "failed": 1}, "The first run still had test_parse_header_rejects_tabs failing; the other 6 passed.",
     "correct"),
    ({"passed": 6, "failed": 2}, "The first run still had test_parse_header_rejects_tabs failing; the other 6 passed.",
     "wrong"),
    # unittest's own "Ran N tests ... OK": N passed, none failed
    ({"passed": 3, "failed": 0}, "Ran 3 tests, OK.", "correct"),
    ({"passed": 3, "failed": 1}, "Ran 3 tests, OK.", "wrong"),
    # how the run went, no count: a vague claim
    ({"passed": 6, "failed": 1}, "It again failed.", "wrong"),
    ({"passed": 6, "failed": 1}, "The suite still failed.", "wrong"),
])
def test_a_named_failure_beside_the_others_and_ok_alone_and_a_still_failed_run(reference, text, verdict):
    assert grade_asked("test_counts", ASK_RUN_ONCE, reference, text) == verdict


@pytest.mark.parametrize("qtype,reference,text,verdict", [
    # a substantive claim beside "I can't see my edits any more": a vague change, wrong
    ("files_changed", ["src/render/layout.c"],
     "I can't see my edits any more - I only remember working somewhere in the flex-layout code.", "wrong"),
    ("files_changed", ["src/render/layout.c"], "I worked on the layout code, I believe.", "wrong"),
    ("files_changed", ["src/render/layout.c"], "I can't see my edits any more.", "abstained"),
    # a file stated, its code declined after a dash: a partial claim, wrong
    ("first_edit", EDIT, "It was src/widgets/core.py, the width default - I don't remember the exact code.", "wrong"),
    ("first_edit", EDIT, "I don't remember the exact code - I'd have to reopen src/widgets/core.py.", "abstained"),
])
def test_a_claim_beside_a_decline_of_the_edits(qtype, reference, text, verdict):
    assert grade(qtype, reference, text) == verdict


@pytest.mark.parametrize("text,verdict", [
    # the path in backticks, then markdown's indented code block: the block is the code
    ("In `src/widgets/core.py` I inserted:\n\n    width = cfg.get('width', 80)\n", "correct"),
    ("In `src/widgets/core.py` I inserted:\n\n    width = cfg.get('width', 40)\n", "wrong"),
    ("In `src/widgets/util.py` I inserted:\n\n    width = cfg.get('width', 80)\n", "wrong"),
])
def test_a_path_in_backticks_then_an_indented_code_block(text, verdict):
    assert grade("first_edit", EDIT, text) == verdict


BOOKING = [{"tool": "book_flight", "arguments": {"user_id": "ana_ruiz_42"}}]


@pytest.mark.parametrize("text,verdict", [
    ("book_flight for ana_ruiz_42 twice - once before and once after the fare change.", "wrong"),  # two changes
    ("I booked a flight for ana_ruiz_42 - twice, in fact: the first attempt failed on the card, the second went "
     "through.", "correct"),                                       # one said to have failed: one change
    ("book_flight for ana_ruiz_42.", "correct"),
])
def test_the_same_change_told_as_made_twice_is_two(text, verdict):
    assert grade_asked("write_actions", ASK_CHANGES, BOOKING, text) == verdict


# --- issue 31 item 4, eighth round: the classes fresh12 still had after round 7, values of their own ----------------

REFUND = [{"tool": "issue_refund_voucher", "arguments": {"order_id": "O-5521"}},
          {"tool": "close_ticket", "arguments": {"ticket_id": "T88"}}]


@pytest.mark.parametrize("text,verdict", [
    # a change told as a noun phrase: its tool's words without the verb, opening an item, with a value of its own
    ("Order O-5521: refund voucher for O-5521, then closed T88.", "correct"),
    ("- a refund voucher for order O-5521\n- closed ticket T88", "correct"),
    # near-misses: the same words after a verb of looking tell a look; without a value of its own, no change
    ("Checked the refund voucher for O-5521, then closed T88.", "wrong"),
    ("A refund voucher, then closed T88.", "wrong"),
])
def test_a_change_told_without_its_verb(text, verdict):
    assert grade_asked("write_actions", ASK_CHANGES, REFUND, text) == verdict


@pytest.mark.parametrize("text,verdict", [
    # a read call listed among the changes, its verb of looking opening the item with no subject: an extra change
    ("For O-5521: pulled up the order, issued a refund voucher for O-5521, closed T88.", "wrong"),
    ("1. looked up the order\n2. issued a refund voucher for O-5521\n3. closed T88", "wrong"),
    # near-misses: a look narrated as a step ("I looked up ..."), or set apart as read-only, is context
    ("First I looked up the order, then I issued a refund voucher for O-5521 and closed T88.", "correct"),
    ("Issued a refund voucher for O-5521, then closed T88. (I also looked up the order, which is read-only.)",
     "correct"),
])
def test_a_read_call_listed_among_the_changes(text, verdict):
    assert grade_asked("write_actions", ASK_CHANGES, REFUND, text) == verdict


ASK_EMAIL = "In what `get_profile` with `{\"user_id\": \"ana_ruiz_42\"}` returned the 1st time, what was `email`?"


@pytest.mark.parametrize("text,verdict", [
    # a bare name read off the question's identifier (ana_ruiz_42) is still a name: a claim, wrong
    ("Ana Ruiz", "wrong"),
    ("ana.ruiz77@example.com", "correct"),
    # near-misses: the field's own words, or a reply naming no value, state nothing
    ("Their email.", "abstained"),
    ("Email.", "abstained"),
])
def test_a_name_read_off_the_questions_identifier_is_a_claim(text, verdict):
    assert grade_asked("tool_value", ASK_EMAIL, "ana.ruiz77@example.com", text) == verdict


@pytest.mark.parametrize("text,verdict", [
    # a time told as an hour on the 12-hour clock, no minutes ("at 9 AM"): that hour, minute 00
    ("June 3, 2024 at 9 AM", "correct"),
    ("3 June 2024 at 9am", "correct"),
    ("June 3, 2024 at 9 p.m.", "wrong"),
    # near-misses: the date alone does not state the time; the 24-hour form as before
    ("June 3, 2024", "wrong"),
    ("2024-06-03 at 09:00", "correct"),
])
def test_a_timestamp_told_in_words_with_the_hour_alone(text, verdict):
    assert grade_asked("tool_value", ASK_VALUE, "2024-06-03T09:00:00", text) == verdict


ASK_PANEL = "What was `Panel` the last time you called `toggle_hotspot` with `{}`?"
PANEL = "📶 4 Bars | 🔥 Hotspot Enabled | 🔋 45%"


@pytest.mark.parametrize("text,verdict", [
    # a status word of a |-separated part in its plain form: "Enabled" as "on", "Disabled" as "off"
    ("The panel showed 4 bars, the mobile hotspot on, and the battery at 45 percent.", "correct"),
    ("4 Bars | Hotspot Enabled | 45%", "correct"),
    # near-misses: the opposite state, or a part left out
    ("The panel showed 4 bars, the mobile hotspot off, and the battery at 45 percent.", "wrong"),
    ("The panel showed 4 bars and the battery at 45 percent.", "wrong"),
])
def test_a_status_part_told_as_on_or_off(text, verdict):
    assert grade_asked("latest_value", ASK_PANEL, PANEL, text) == verdict


LIMIT = {"type": "quota.QuotaExceeded", "message": "[<class 'quota.LimitReached'>]"}


@pytest.mark.parametrize("text,verdict", [
    # a CamelCase class heading the answer, set apart by a comma or a dash: the type it claims
    ("QuotaExceeded, with LimitReached in the message.", "correct"),
    ("QuotaExceeded - LimitReached was in the message", "correct"),
    ("QuotaOverflow, with LimitReached in the message.", "wrong"),
    # near-miss: a class named only as the message's, the answer naming no type, stays without a claim
    ("LimitReached was in the message, I think.", "abstained"),
])
def test_a_class_heading_the_answer_is_its_type(text, verdict):
    assert grade_asked("first_error", ASK_ERROR, LIMIT, text) == verdict


LAYOUT = ["src/render/layout.c", "tests/test_layout.c"]


@pytest.mark.parametrize("text,verdict", [
    # a file told as only looked at (no "only"): looking is no change, the file is not named as changed
    ("src/render/layout.c and tests/test_layout.c - I also looked at src/render/paint.c but it had nothing to fix.",
     "correct"),
    ("src/render/layout.c and tests/test_layout.c; I also viewed src/render/paint.c.", "correct"),
    # near-misses: a clause that also tells a change, or the file simply listed, names it as changed
    ("src/render/layout.c and tests/test_layout.c, and I opened src/render/paint.c and fixed a typo there.", "wrong"),
    ("src/render/layout.c, tests/test_layout.c and src/render/paint.c.", "wrong"),
    ("I opened src/render/layout.c and changed the margin math; also tests/test_layout.c.", "correct"),
])
def test_a_file_told_as_looked_at_is_not_named_as_changed(text, verdict):
    assert grade("files_changed", LAYOUT, text) == verdict


ASK_FIND = "The 1st time you called `bash` with `{\"command\": \"cd /repo && find . -name '*_io.py'\"}`, what did it return?"
FOUND = "./pkg/disk_io.py\n./net_io.py"


@pytest.mark.parametrize("text,verdict", [
    # the listing's own lines given whole, an entry added beside them: wrong
    ("./pkg/disk_io.py\n./net_io.py\n./pkg/tests/test_disk_io.py", "wrong"),
    # an added path whose file name is a listed one's (net_io.py), in another directory: another entry
    ("./pkg/disk_io.py\n./net_io.py\n./pkg/legacy/net_io.py", "wrong"),
    # near-misses: the lines alone, or with ./ left out, are the output
    ("./pkg/disk_io.py\n./net_io.py", "correct"),
    ("pkg/disk_io.py and net_io.py", "correct"),
])
def test_an_entry_added_to_a_listing_of_paths(text, verdict):
    assert grade_asked("tool_output", ASK_FIND, FOUND, text) == verdict


ASK_VIEW = ("The 1st time you called `str_replace_editor` with `{\"command\": \"view\", \"path\": "
            "\"/workspace/acme__widgets__1.0/src/widgets/core.py\", \"view_range\": [40, 43]}`, what did it return?")
VIEW_RANGE = ("Here's the result of running `cat -n` on /workspace/acme__widgets__1.0/src/widgets/core.py:\n"
        "    40\tdef size(cfg, default=None):\n    41\t    width = cfg.get('width', 80)\n    42\t    return width\n    43")


@pytest.mark.parametrize("text,verdict", [
    # the line numbers told as a range ("Lines 40-43"), the lines in order: each line's number is stated
    ("Lines 40-43 of core.py: `def size(cfg, default=None):`, `width = cfg.get('width', 80)`, `return width` and an "
     "empty 43.", "correct"),
    ("Lines 40 to 43: `def size(cfg, default=None):`, `width = cfg.get('width', 80)`, `return width`, then 43 empty.",
     "correct"),
    # near-misses: a range that leaves lines out, or a value changed inside it
    ("Lines 40-41 of core.py: `def size(cfg, default=None):`, `width = cfg.get('width', 80)`, `return width` and an "
     "empty 43.", "wrong"),
    ("Lines 40-43 of core.py: `def size(cfg, default=None):`, `width = cfg.get('width', 60)`, `return width` and an "
     "empty 43.", "wrong"),
])
def test_line_numbers_told_as_a_range(text, verdict):
    assert grade_asked("tool_output", ASK_VIEW, VIEW_RANGE, text) == verdict


ASK_TASKS = "The 3rd time you called `task_tracker` with `{\"command\": \"view\"}`, what did it return?"
TASKS = ("# Task List\n\n1. \u2705 Read the failing test\n\n2. \U0001f504 Patch the width parser\n\n"
         "3. \u23f3 Add a regression test\n\n4. \u23f3 Update the changelog\n\n5. \u23f3 Run the full suite")


@pytest.mark.parametrize("text,verdict", [
    # rows numbered as a range with the one status marker they share, then their texts in order
    ("Task list: 1 \u2705 Read the failing test; 2 \U0001f504 Patch the width parser; 3-5 \u23f3: Add a regression test, "
     "Update the changelog, Run the full suite.", "correct"),
    # near-misses: a range that leaves a row's text out, or a row's text changed
    ("Task list: 1 \u2705 Read the failing test; 2 \U0001f504 Patch the width parser; 3-5 \u23f3: Add a regression test, "
     "Update the changelog.", "wrong"),
    ("Task list: 1 \u2705 Read the failing test; 2 \U0001f504 Patch the width parser; 3-5 \u23f3: Add a regression test, "
     "Update the readme, Run the full suite.", "wrong"),
])
def test_rows_numbered_as_a_range_with_one_marker(text, verdict):
    assert grade_asked("tool_output", ASK_TASKS, TASKS, text) == verdict


# --- issue 31 item 4, ninth round: the classes of fresh13's unseen disagreements, values of their own --------------

@pytest.mark.parametrize("text,verdict", [
    # "twice" with the failure of one attempt told in the same clause: one change (round 7's rule, now also when no
    # comma parts the failure from the change)
    ("book_flight (ana_ruiz_42) twice: the first was refused on the card, the second went through.", "correct"),
    ("book_flight for ana_ruiz_42 twice: one attempt failed on the fare, the other succeeded.", "correct"),
    ("book_flight (ana_ruiz_42) twice: both went through.", "wrong"),            # two changes
    ("book_flight (ana_ruiz_42) - it failed on the card.", "wrong"),              # said to have failed: no change
])
def test_twice_with_the_first_attempt_failed_in_the_same_clause_is_one_change(text, verdict):
    assert grade_asked("write_actions", ASK_CHANGES, BOOKING, text) == verdict


RADIOS = [{"tool": "toggle_wifi", "arguments": {}}, {"tool": "toggle_hotspot", "arguments": {}},
          {"tool": "reboot_router", "arguments": {}}]


@pytest.mark.parametrize("reference,text,verdict", [
    # one verb for two toggles joined by "and" ("turned X off and Y off"): two changes, in that order
    (RADIOS, "I switched wifi off and hotspot off, then rebooted the router.", "correct"),
    (RADIOS, "Turned wifi on and hotspot off; rebooted the router.", "correct"),
    (RADIOS[1::-1] + RADIOS[2:], "I switched wifi off and hotspot off, then rebooted the router.", "wrong"),  # order
    # without "and", the longest tool's words still win ("data saver mode" is not "data")
    ([{"tool": "toggle_data", "arguments": {}}, {"tool": "toggle_data_saver_mode", "arguments": {}}],
     "Turned data saver mode off.", "wrong"),
])
def test_one_verb_for_two_toggles_joined_by_and(reference, text, verdict):
    assert grade_asked("write_actions", ASK_CHANGES, reference, text) == verdict


REBOOKINGS = [{"tool": "update_booking_seats", "arguments": {"booking_id": "B7QK2", "payment_id": "card_1180"},
               "other": {"cabin": "business"}},
              {"tool": "update_booking_seats", "arguments": {"booking_id": "ZX9P4", "payment_id": "voucher_552"},
               "other": {"cabin": "business"}}]


@pytest.mark.parametrize("text,verdict", [
    # an update told by a verb of updating (upgraded, downgraded, changed, modified) with the change's own values
    ("Upgraded bookings B7QK2 (card_1180) and ZX9P4 (voucher_552) to business, in that order.", "correct"),
    ("I modified booking B7QK2 (card_1180), then booking ZX9P4 (voucher_552).", "correct"),
    ("Upgraded bookings B7QK2 (card_1180) and ZX9P4 to business.", "wrong"),                  # a key value missing
    ("Upgraded bookings ZX9P4 (voucher_552) and B7QK2 (card_1180) to business.", "wrong"),    # another order
    ("Cancelled bookings B7QK2 (card_1180) and ZX9P4 (voucher_552).", "wrong"),               # not an update
    ("Both bookings B7QK2 (card_1180) and ZX9P4 (voucher_552) upgraded to business.", "wrong"),  # no change named
    # an id of the changes' form that is none of the reference's, told with them: an extra change (by the tool's
    # name too: named once for several ids, each id told is one change)
    ("Upgraded B7QK2 (card_1180), M3RT8 and ZX9P4 (voucher_552) to business.", "wrong"),
    ("update_booking_seats: B7QK2 (card_1180), M3RT8 and ZX9P4 (voucher_552).", "wrong"),
    ("update_booking_seats: B7QK2 (card_1180) and ZX9P4 (voucher_552).", "correct"),
])
def test_an_update_told_by_a_verb_of_updating_with_its_ids(text, verdict):
    assert grade_asked("write_actions", ASK_CHANGES, REBOOKINGS, text) == verdict


ROUTER = [{"tool": "enable_hotspot", "arguments": {"device_id": "D77"}}, {"tool": "toggle_bluetooth", "arguments": {}},
          {"tool": "toggle_wifi", "arguments": {}}, {"tool": "toggle_bluetooth", "arguments": {}},
          {"tool": "flush_dns_cache", "arguments": {}}, {"tool": "set_dns_mode", "arguments": {"mode": "dot_strict"}},
          {"tool": "reboot_router", "arguments": {}}]


@pytest.mark.parametrize("reference,text,verdict", [
    # terse changes told object first, the verb's participle after ("hotspot enabled", "DNS cache flushed"), a value
    # of its own before "set", and "X toggled twice with Y toggled in between": X, Y, X
    (ROUTER, "Hotspot enabled (D77), bluetooth toggled twice with wifi toggled in between, DNS cache flushed, "
             "dot_strict set, router rebooted.", "correct"),
    (ROUTER, "Hotspot enabled (D77), bluetooth toggled twice, wifi toggled, DNS cache flushed, dot_strict set, "
             "router rebooted.", "wrong"),                                  # both bluetooth toggles before the wifi
    (ROUTER, "Hotspot enabled (D77), bluetooth toggled twice with wifi toggled in between, DNS cache flushed, "
             "router rebooted.", "wrong"),                                  # the DNS mode left out
    # two objects of one participle joined by "and": both
    (RADIOS, "Wifi and hotspot toggled, router rebooted.", "correct"),
    (RADIOS, "Hotspot and wifi toggled, router rebooted.", "wrong"),        # in another order
    # a verb after the object in an active sentence stays the next change's ("data then toggled airplane mode")
    ([{"tool": "toggle_data", "arguments": {}}, {"tool": "toggle_airplane_mode", "arguments": {}}],
     "Turned mobile data off, then toggled airplane mode.", "correct"),
])
def test_changes_told_object_first_and_twice_with_another_in_between(reference, text, verdict):
    assert grade_asked("write_actions", ASK_CHANGES, reference, text) == verdict


@pytest.mark.parametrize("text,verdict", [
    # the output verbatim with an entry the listing does not show beside it: an entry added (so wrong)
    ("./pkg/io/reader.py\n./pkg/io/tests/test_reader.py", "wrong"),
    ("./pkg/io/reader.py ./pkg/io/writer.py", "wrong"),
    ("./pkg/io/reader.py", "correct"),
    ("It printed ./pkg/io/reader.py (the find over ./pkg).", "correct"),   # a path of the question is no entry
])
def test_the_output_verbatim_with_an_entry_added(text, verdict):
    question = 'The 1st time you called `bash` with `{"command": "find ./pkg -name \'reader*\'"}`, what did it return?'
    assert grade_asked("tool_output", question, "./pkg/io/reader.py", text) == verdict


PLAN = "# Task List\n\n1. \u2705 Parse the flags\n\n2. \U0001f504 Write the loader\n\n3. \u23f3 Add the tests"


@pytest.mark.parametrize("text,verdict", [
    # status markers in the cells of a markdown table are their row's values too
    ("| # | status | task |\n|---|---|---|\n| 1 | \u2705 | Parse the flags |\n| 2 | \u2705 | Write the loader |\n"
     "| 3 | \u23f3 | Add the tests |", "wrong"),
    ("| # | status | task |\n|---|---|---|\n| 1 | \u2705 | Parse the flags |\n| 2 | \U0001f504 | Write the loader |\n"
     "| 3 | \u23f3 | Add the tests |", "correct"),
])
def test_status_markers_in_a_table_are_their_rows_values(text, verdict):
    assert grade_asked("tool_output", ASK_OUTPUT, PLAN, text) == verdict


LINES = ("Here's the result of running `cat -n` on /srv/app/router.go:\n    41\tswitch kind {\n    42\tcase KindFile:\n"
         "    43\t\treturn openFile(p)")
ASK_LINES = ('The 1st time you called `str_replace_editor` with `{"command": "view", "path": "/srv/app/router.go", '
             '"view_range": [41, 43]}`, what did it return?')


@pytest.mark.parametrize("text,verdict", [
    # a view's lines told after their range ("Lines 41-43: a, b, c"): the range numbers them
    ("Lines 41-43: `switch kind {`, `case KindFile:`, `return openFile(p)`", "correct"),
    ("Lines 41-43 of router.go: `switch kind {`, `case KindFile:`, `return openFile(p)`; line 44 not shown.", "correct"),
    ("Lines 41-43: `switch kind {`, `case KindDir:`, `return openFile(p)`", "wrong"),
    # a line restated under its number with other code (a later view's) is another output
    ("41: switch kind {\n42: case KindFile:\n43: if p == \"\" { return nil }", "wrong"),
    ("41: switch kind {\n42: case KindFile:\n43: f, err := openFile(p); if err != nil { return nil }", "wrong"),
    ("41: switch kind {\n42: case KindFile:\n43: return openFile(p)", "correct"),
])
def test_a_views_lines_under_a_range_or_their_numbers(text, verdict):
    assert grade_asked("tool_output", ASK_LINES, LINES, text) == verdict


HIT = "/srv/shop/cart/totals.py:57:        total = round(subtotal * rate, 2)"
ASK_GREP = 'The 1st time you called `bash` with `{"command": "grep -rn \\"round(\\" /srv/shop/cart"}`, what did it return?'


@pytest.mark.parametrize("text,verdict", [
    # a grep hit's path:line: told as the path (relative to the root, or its unique file name) and "line N" in prose
    ("One hit: `cart/totals.py`, line 57: `total = round(subtotal * rate, 2)`.", "correct"),
    ("One hit in totals.py at line 57: `total = round(subtotal * rate, 2)`", "correct"),
    ("One hit in totals.py at line 75: `total = round(subtotal * rate, 2)`", "wrong"),
    ("One hit: `cart/prices.py`, line 57: `total = round(subtotal * rate, 2)`.", "wrong"),
    ("One hit: `cart/totals.py`, line 57: `total = round(subtotal * rate, 3)`.", "wrong"),
])
def test_a_grep_hit_told_with_its_line_in_prose(text, verdict):
    assert grade_rooted("tool_output", ASK_GREP, HIT, text, "/srv/shop") == verdict


JAVA_HEADED = ('Exception in thread "worker-3" java.lang.ArithmeticException: / by zero\n'
               "\tat com.acme.stats.Mean.of(Mean.java:18)\n\tat com.acme.Cli.main(Cli.java:7)")


@pytest.mark.parametrize("text,verdict", [
    # Java's `Exception in thread "x"` header is a header, like Python's "Traceback (most recent call last):"
    ("It threw `java.lang.ArithmeticException: / by zero` from Mean.of (Mean.java:18).", "correct"),
    ('Exception in thread "worker-3" java.lang.ArithmeticException: / by zero', "correct"),
    ("It threw `java.lang.IllegalStateException: / by zero` from Mean.of (Mean.java:18).", "wrong"),
    ("It threw `java.lang.ArithmeticException: / by zero` from Mean.of (Mean.java:81).", "wrong"),  # no frame's line
])
def test_a_java_thread_header_is_no_value(text, verdict):
    assert grade_asked("tool_output", ASK_OUTPUT, JAVA_HEADED, text) == verdict


@pytest.mark.parametrize("text,verdict", [
    # a restated line with a word of it left out is another line ("called" for "called lazily")
    ("Cache warmed lazily\nSecond pass skipped", "correct"),
    ("Cache warmed\nSecond pass skipped", "wrong"),
    ("Cache warmed lazily\nSecond pass", "wrong"),
    ("It printed `Cache warmed lazily` and then `Second pass skipped`.", "correct"),
])
def test_a_restated_line_with_a_word_left_out(text, verdict):
    assert grade_asked("tool_output", ASK_OUTPUT, "Cache warmed lazily\nSecond pass skipped", text) == verdict


PROBES = "Probe 1 (cold cache): miss\nProbe 2 (warm cache): miss\nProbe 3 (evicted): miss"


@pytest.mark.parametrize("text,verdict", [
    # numbered rows with one value in common: each row is told by its number (which row said what)
    ("All three probes printed miss.", "wrong"),
    ("Probe: miss", "wrong"),
    ("Probe 1 (cold cache): miss; Probe 2 (warm cache): miss; Probe 3 (evicted): miss", "correct"),
    ("| probe | result |\n|---|---|\n| 1 (cold cache) | miss |\n| 2 (warm cache) | miss |\n| 3 (evicted) | miss |",
     "correct"),
])
def test_numbered_rows_sharing_a_value_are_told_by_their_numbers(text, verdict):
    assert grade_asked("tool_output", ASK_OUTPUT, PROBES, text) == verdict


FRAMES_VIEW = ("Here's the result of running `cat -n` on /workspace/acme__etl__3.1/etl/io/frames.py:\n"
               "   205\t@cached(np.ma)\n   206\tdef load_like(a, dtype=None, order='K', shape=None):\n"
               "   207\t    a = asframe(a)\n"
               "   208\t    return a.map_blocks(np.ma.load_like, dtype=dtype, order=order, shape=shape)\n   209\t")


@pytest.mark.parametrize("text,verdict", [
    # the view's caption is no line to restate: words told in its place are no changed words
    ("Lines 205-208: the `load_like` wrapper - `@cached(np.ma)`, `def load_like(a, dtype=None, order='K', "
     "shape=None):`, `a = asframe(a)`, `return a.map_blocks(np.ma.load_like, dtype=dtype, order=order, shape=shape)`; "
     "line 209 empty.", "correct"),
    ("Lines 205-208: the `load_like` wrapper - `@cached(np.ma)`, `def load_like(a, dtype=None, order='C', "
     "shape=None):`, `a = asframe(a)`, `return a.map_blocks(np.ma.load_like, dtype=dtype, order=order, shape=shape)`; "
     "line 209 empty.", "wrong"),
])
def test_words_in_place_of_a_views_caption_are_no_changed_words(text, verdict):
    question = ('The 1st time you called `view` with `{"path": "/workspace/acme__etl__3.1/etl/io/frames.py", '
                '"view_range": [205, 209]}`, what did it return?')
    assert grade_rooted("tool_output", question, FRAMES_VIEW, text, "/workspace/acme__etl__3.1") == verdict


@pytest.mark.parametrize("text,verdict", [
    # a diff's context lines are the file's: shown around the insertion, not claimed as inserted (nor invented)
    ("src/widgets/core.py\n```diff\n     height = cfg.get('height', 24)\n+    width = cfg.get('width', 80)\n"
     "     return width\n```", "correct"),
    ("src/widgets/core.py\n```diff\n+    height = cfg.get('height', 24)\n+    width = cfg.get('width', 80)\n"
     "     return width\n```", "wrong"),                                  # a + line the edit did not insert
    ("src/widgets/core.py\n```diff\n     height = cfg.get('height', 24)\n+    width = cfg.get('width', 40)\n```",
     "wrong"),
])
def test_a_diffs_context_lines_are_not_claimed_as_inserted(text, verdict):
    assert grade("first_edit", EDIT, text) == verdict


REFUND_ERROR = {"tool": "issue_refund",
                "message": "Error: refund amount does not match, refund total is 120, but balance 80"}


@pytest.mark.parametrize("text,verdict", [
    # a message paraphrased with its numbers under each other's words: another message
    ("issue_refund said the refund amount didn't match: refund total 80 but balance 120.", "wrong"),
    ("issue_refund said the refund amount didn't match: refund total 120 but balance 80.", "correct"),
    ("issue_refund: the balance was 80 while the refund total was 120, so the refund amount didn't match.",
     "correct"),                                                                   # reordered, each with its word
])
def test_a_paraphrased_message_with_its_numbers_swapped(text, verdict):
    assert grade_asked("first_tool_error", ASK_TOOL_ERROR, REFUND_ERROR, text) == verdict


@pytest.mark.parametrize("text,verdict", [
    # an exception line's message told whole without its type: the error stated (a type told must be its own)
    ("The bash check failed with No module named 'lxml_html'.", "correct"),
    ("bash: ModuleNotFoundError: No module named 'lxml_html'", "correct"),
    ("The bash check failed with ImportError: No module named 'lxml_html'.", "wrong"),
    ("The bash check failed with No module named 'lxml'.", "wrong"),
])
def test_an_exception_lines_message_without_its_type(text, verdict):
    reference = {"tool": "bash", "message": "ModuleNotFoundError: No module named 'lxml_html'"}
    assert grade_asked("first_tool_error", ASK_TOOL_ERROR, reference, text) == verdict


@pytest.mark.parametrize("text,verdict", [
    # "it was a `CamelCase`": the class the answer says the exception was, not a qualified class of its message
    ("It was a `LedgerClosed` whose message was just `[<class 'ledger.errors.PeriodLocked'>]`.", "correct"),
    ("It was a `PeriodLocked` whose message was just `[<class 'ledger.errors.PeriodLocked'>]`.", "wrong"),
    ("The exception was LedgerClosed, message `[<class 'ledger.errors.PeriodLocked'>]`.", "correct"),
])
def test_the_class_an_answer_says_the_exception_was(text, verdict):
    reference = {"type": "ledger.errors.LedgerClosed", "message": "[<class 'ledger.errors.PeriodLocked'>]"}
    assert grade_asked("first_error", ASK_ERROR, reference, text) == verdict


@pytest.mark.parametrize("text,verdict", [
    # a "Type:" field is the type claimed: Java's thread header there is no type, whatever the message holds
    ('Type: Exception in thread "main"\nMessage: java.lang.IllegalStateException: pool "main" closed', "wrong"),
    ('Type: java.lang.IllegalStateException\nMessage: pool "main" closed', "correct"),
    ('Type: IllegalStateException\nMessage: pool "main" closed', "correct"),
])
def test_a_type_field_holding_javas_thread_header(text, verdict):
    reference = {"type": "java.lang.IllegalStateException", "message": 'pool "main" closed'}
    assert grade_asked("first_error", ASK_ERROR, reference, text) == verdict


@pytest.mark.parametrize("text,verdict", [
    # "it failed with `<message>`": an error claimed by its message alone (no type): a claim, wrong
    ("It failed with `No module named yaml`.", "wrong"),
    ("The run died with 'config key missing'.", "wrong"),
    ("I don't remember what it failed with.", "abstained"),
])
def test_failed_with_a_quoted_message_is_a_claim(text, verdict):
    assert grade_asked("first_error", ASK_ERROR, {"type": "KeyError", "message": "'region'"}, text) == verdict


@pytest.mark.parametrize("text,verdict", [
    # a parameter's name before the value a message echoes ("old_str `x`") labels the value: the value is the key;
    # the cause may be told in other words of its kind ("occurred more than once" for "Multiple occurrences")
    ("The editor said `    break` occurred more than once (lines 12 and 97), so nothing was replaced.", "correct"),
    ("The editor said `    break` occurred more than once (lines 12 and 79), so nothing was replaced.", "wrong"),
    ("The editor said `    return` occurred more than once (lines 12 and 97), so nothing was replaced.", "wrong"),
])
def test_a_parameter_name_before_an_echoed_value_is_its_label(text, verdict):
    reference = {"tool": "str_replace_editor", "message": "No replacement was performed. Multiple occurrences of "
                 "old_str `    break` in lines [12, 97]. Please ensure it is unique"}
    assert grade_asked("first_tool_error", ASK_TOOL_ERROR, reference, text) == verdict


RETRIES = {"path": "conf/defaults.py", "code": "    'retries': 3,", "context": "    'retries': 3,",
           "changed": ["    'retries': 3,"]}


@pytest.mark.parametrize("text,verdict", [
    # one changed line told inline without its trailing separator (a dict item's comma): the same line
    ("In conf/defaults.py I changed the default `'retries': 5` to `'retries': 3`.", "correct"),
    ("In conf/defaults.py I changed the default `'retries': 5` to `'retries': 4`.", "wrong"),
    ("In conf/defaults.py I changed the default `'retries': 5` to `'retries': 30`.", "wrong"),
    ("In conf/defaults.py I inserted `'retries': 3,`.", "correct"),
    ("In conf/settings.py I changed the default `'retries': 5` to `'retries': 3`.", "wrong"),
])
def test_a_changed_line_told_without_its_trailing_separator(text, verdict):
    assert grade("first_edit", RETRIES, text) == verdict


@pytest.mark.parametrize("text,verdict", [
    # an edit described by the code it touched (a method's name), no file and no code: a vague claim
    ("The edit to ConfigLoader.readDefaults, which changed the fallback branch of the lookup.", "wrong"),
    ("I modified the readDefaults method so the fallback is skipped.", "wrong"),
    ("I don't remember the first edit any more.", "abstained"),
    ("I can't recall the edit's code - something in ConfigLoader.readDefaults maybe; I'm not sure.", "abstained"),
])
def test_an_edit_described_by_the_code_it_touched(text, verdict):
    assert grade("first_edit", EDIT, text) == verdict


@pytest.mark.parametrize("text,verdict", [
    # a count told beside the asked tool's name, then worked down to a conclusion: the conclusion is the claim
    ("I count 15 deploy_app calls, but the last two never returned a result, so 13.", "correct"),
    ("I count 15 `deploy_app` calls, but the last two never returned, so 12.", "wrong"),
    ("I count 15 deploy_app calls.", "wrong"),
    # in a list of counts per tool, a total after it is no conclusion about the asked tool
    ("- `deploy_app`: 13 calls - `run_check`: 5 calls, so 18 in total", "correct"),
])
def test_a_count_beside_the_tools_name_worked_down_to_a_conclusion(text, verdict):
    question = "How many times did you call `deploy_app`? Do not count the last call(s) of it you made, which got no result."
    assert grade_asked("call_count", question, 13, text) == verdict


@pytest.mark.parametrize("reference,text,verdict", [
    # "let me say N" / "I'll go with N" settles the count: the final claim, whatever follows it
    (8, "Hmm, 6 - actually 7 with the retry. Let me say 8 to include the dry run.", "correct"),
    (7, "Hmm, 6 - actually 7 with the retry. Let me say 8 to include the dry run.", "wrong"),
    (7, "6 or 7... I'll go with 7 since the retry counts.", "correct"),
    (7, "7 - let me explain: the retry counts too.", "correct"),
])
def test_let_me_say_settles_a_count(reference, text, verdict):
    assert grade_asked("call_count", ASK_COUNT, reference, text) == verdict


@pytest.mark.parametrize("text,verdict", [
    # a file set apart as "a throwaway repro" / "a scratch script" is not named as changed
    ("Only src/widgets/core.py - tests/test_core.py was a throwaway repro.", "wrong"),        # so it misses that one
    ("src/widgets/core.py and tests/test_core.py; repro_width.py was a throwaway script.", "correct"),
    ("src/widgets/core.py and tests/test_core.py (a new regression test).", "correct"),
])
def test_a_file_set_apart_as_a_throwaway(text, verdict):
    from grading import FILES
    assert grade("files_changed", FILES, text) == verdict


# --- issue 31 item 4, tenth round: the classes of fresh14's unseen disagreements, values of their own ---------------

ASK_EDITOR = "How many times did you call `file_editor`?"


@pytest.mark.parametrize("reference,text,verdict", [
    # a count worked out as a sum, its parts joined by "and" / "plus", concluded after a colon: the conclusion
    (11, "6 views, 2 creates and 3 str_replace calls: 11 in total.", "correct"),      # before: 6
    (11, "9 views, the create and the insert: 11.", "correct"),                       # before: 9
    (11, "I count 8 file_editor calls that worked, plus the three that errored: 11.", "correct"),  # before: 8
    (8, "I count 8 file_editor calls that worked, plus the three that errored: 11.", "wrong"),
    # near-misses: no conclusion, the number the answer opens with; a per-tool list's label is no sum
    (6, "6 views, 2 creates and 3 str_replace calls.", "correct"),
    (4, "- `file_editor`: 4 calls and `run_shell`: 9 calls", "correct"),
])
def test_a_count_worked_out_as_a_sum(reference, text, verdict):
    assert grade_asked("call_count", ASK_EDITOR, reference, text) == verdict


@pytest.mark.parametrize("reference,text,verdict", [
    # another tool's count or a sub-command told beside the asked count ("once", "one of them was", "including one")
    (9, "9 (one of them was the undo_edit on core.py).", "correct"),                 # before: another tool's count
    (9, "9 - including one undo_edit.", "correct"),
    (4, "I called it 4 times - plus run_shell once.", "correct"),
    (4, "4 (a.py, b.py, c.py, d.py) - and run_shell once.", "correct"),
    # near-misses: only another tool's count is told; another tool's count told beside is not the answer's
    (7, "I called run_shell 7 times.", "wrong"),
    (1, "run_shell once.", "wrong"),
    (7, "4 - plus run_shell 7 times.", "wrong"),
])
def test_another_tools_count_told_beside_the_asked_one(reference, text, verdict):
    assert grade_asked("call_count", ASK_EDITOR, reference, text) == verdict


ASK_CHANGES = "Which changes did you make, in order? Name each state-changing tool call and its key arguments."
BOOKED = [{"tool": "book_reservation", "arguments": {"user_id": "omar_k_12"},
           "other": {"origin": "BOS", "destination": "ORD", "insurance": "no"}}]
SUSPENDED = [{"tool": "suspend_line", "arguments": {"customer_id": "C7", "line_id": "L9"}}]


@pytest.mark.parametrize("reference,text,verdict", [
    # a yes/no argument told with a word of its kind between ("with travel insurance"): insurance yes
    (BOOKED, "book_reservation for omar_k_12 (BOS-ORD, with travel insurance).", "wrong"),      # before: correct
    (BOOKED, "book_reservation for omar_k_12 (BOS-ORD, no travel insurance).", "correct"),
    # near-misses: a negation between is no qualifier; the name alone as before
    (BOOKED, "book_reservation for omar_k_12 (BOS-ORD, with no insurance).", "correct"),
    ([{**BOOKED[0], "other": {**BOOKED[0]["other"], "insurance": "yes"}}],
     "book_reservation for omar_k_12 (BOS-ORD, with no insurance).", "wrong"),
])
def test_a_yes_no_argument_told_with_a_word_between(reference, text, verdict):
    assert grade_asked("write_actions", ASK_CHANGES, reference, text) == verdict


@pytest.mark.parametrize("text,verdict", [
    # a number word before the change's object in the plural tells that many changes
    ("I booked two reservations for omar_k_12, BOS to ORD.", "wrong"),                            # before: correct
    ("I booked three reservations for omar_k_12, BOS to ORD.", "wrong"),
    # near-misses: one object
    ("I booked a reservation for omar_k_12, BOS to ORD.", "correct"),
    ("I booked one reservation for omar_k_12, BOS to ORD.", "correct"),
])
def test_a_change_told_with_a_number_of_objects(text, verdict):
    assert grade_asked("write_actions", ASK_CHANGES, BOOKED, text) == verdict


@pytest.mark.parametrize("text,verdict", [
    # "Later I <did>" after the changes: a further call listed in the sequence, like "Afterwards I ..."
    ("Suspended line L9 for customer C7. Later I transferred the customer to a human agent.", "wrong"),  # before: correct
    # near-misses: a look told later is no change; the changes alone
    ("Suspended line L9 for customer C7. Later I checked the line status.", "correct"),
    ("Suspended line L9 for customer C7.", "correct"),
    ("Suspended line L9 for customer C7. (Later I transferred the customer, which changed nothing.)", "correct"),
])
def test_a_further_call_told_later(text, verdict):
    assert grade_asked("write_actions", ASK_CHANGES, SUSPENDED, text) == verdict


@pytest.mark.parametrize("reference,text,verdict", [
    # a payment told by its means after a change, in its sentence: how that change was paid, no change of its own
    (BOOKED, "book_reservation for omar_k_12: BOS -> ORD, no insurance, paid $120 by gift card and $30 by card.",
     "correct"),                                                                                   # before: wrong
    (BOOKED, "book_reservation for omar_k_12 (BOS -> ORD), paid with the gift card.", "correct"),  # before: wrong
    # near-misses: a payment without its means, or told as a step of its own, is listed
    (SUSPENDED, "Suspended line L9 for customer C7, paid $20 toward the bill.", "wrong"),
    (SUSPENDED, "Suspended line L9 for customer C7. Then I paid the overdue bill.", "wrong"),
])
def test_a_payment_told_by_its_means_after_a_change(reference, text, verdict):
    assert grade_asked("write_actions", ASK_CHANGES, reference, text) == verdict


CHANGED = ["src/widgets/core.py", "tests/test_core.py", "repro_width.py"]


def _files_at_root(reference, text):
    from bench.scoring.judge import ExactJudge
    from bench.store.schema import Answer, Question

    from grading import ROOT

    q = Question(qid="c@0:files_changed", type="files_changed", question="?", reference=reference, evidence_keys=[],
                 evidence_messages=[])
    return ExactJudge().score(q, Answer(case_id="c@0", qid=q.qid, type="files_changed", answer=text), ROOT).verdict


@pytest.mark.parametrize("reference,text,verdict", [
    # files set apart as only run (compiled and run; plural; "my ... that I ran") or as an experiment: not named
    (CHANGED[:2], "src/widgets/core.py and tests/test_core.py. The two other files (repro_width.py, check.py) were "
                  "just scratch scripts I ran.", "correct"),                                     # before: wrong
    (CHANGED, "src/widgets/core.py, tests/test_core.py and repro_width.py; check.py was just my debugging script "
              "that I ran.", "correct"),                                                          # before: wrong
    (CHANGED, "src/widgets/core.py and tests/test_core.py only; repro_width.py was just my reproduction class that "
              "I compiled and ran.", "wrong"),                                                    # before: correct
    (CHANGED, "src/widgets/core.py and tests/test_core.py - and a script at the root, repro_width.py, which I only "
              "compiled and ran.", "wrong"),                                                      # before: correct
    (CHANGED, "src/widgets/core.py and tests/test_core.py. The repro_width.py experiment didn't fix anything.",
     "wrong"),                                                                                    # before: correct
    # near-misses: running a file the answer names as changed, a parenthesis that calls it an experiment
    (CHANGED, "src/widgets/core.py, tests/test_core.py and repro_width.py. I compiled and ran repro_width.py.",
     "correct"),
    (CHANGED, "src/widgets/core.py, tests/test_core.py and repro_width.py (my experiment to reproduce the bug).",
     "correct"),
])
def test_a_file_set_apart_as_only_run_or_an_experiment(reference, text, verdict):
    assert _files_at_root(reference, text) == verdict


@pytest.mark.parametrize("text,verdict", [
    # "b.py I edited but reverted with undo_edit": the clause before "but" names the file taken back, even where
    # the denying clause names something of its own (a tool)
    ("src/widgets/core.py, tests/test_core.py and repro_width.py - setup.py I edited but reverted with undo_edit.",
     "correct"),                                                                                  # before: wrong
    # near-misses: no denial; a reverted change named in its own clause as before
    ("src/widgets/core.py, tests/test_core.py and repro_width.py - setup.py I edited as well.", "wrong"),
    ("src/widgets/core.py, tests/test_core.py and repro_width.py (setup.py I edited but reverted).", "correct"),
])
def test_a_file_taken_back_by_a_but_clause(text, verdict):
    assert _files_at_root(CHANGED, text) == verdict


@pytest.mark.parametrize("qtype,text,verdict", [
    # beside a decline, what the edit or the failure was, told vaguely: a claim (wrong), not an abstention
    ("first_edit", "I can't see the edits any more - I only remember writing a small regression test file first.",
     "wrong"),                                                                                    # before: abstained
    ("first_edit", "I can't see the edits any more - I only remember working somewhere in the width code.", "wrong"),
    ("first_error", "I can't see it any more - I only remember that importing widgets failed.", "wrong"),  # before: abstained
    ("first_error", "I don't recall - something failed to import, I think.", "wrong"),
    # near-misses: a decline alone, or a decline of whether it failed
    ("first_edit", "I can't see the edits any more.", "abstained"),
    ("first_edit", "I don't remember which file I edited first.", "abstained"),
    ("first_error", "I can't see it any more.", "abstained"),
    ("first_error", "I don't remember whether importing widgets failed.", "abstained"),
])
def test_a_vague_edit_or_failure_beside_a_decline(qtype, text, verdict):
    from grading import EDIT
    reference = EDIT if qtype == "first_edit" else {"type": "ModuleNotFoundError", "message": "No module named 'yaml'"}
    assert grade(qtype, reference, text) == verdict


ASK_SECOND_RUN = ("The 2nd time you ran `pytest tests/test_a.py`, how many tests passed and how many failed? Report "
                  "errors separately if the test runner did.")


@pytest.mark.parametrize("reference,text,verdict", [
    # "N of them passed" (of the tests a run collected) is N passed; a run's subject "that run" / "that test"
    ({"passed": 6, "failed": 2}, "It collected 8 items: 6 of them passed and 2 of them failed.", "correct"),  # before: abstained
    ({"passed": 6, "failed": 1}, "It collected 7 items, 6 of them passed and test_parse_width failed.", "correct"),  # before: wrong
    ({"passed": 1, "failed": 0}, "It ran a single test and that test passed.", "correct"),        # before: abstained
    # "that run went fine", "everything was green", no count: a vague claim (wrong), not an abstention
    ({"passed": 6, "failed": 0}, "That run went fine - everything was green after the fix.", "wrong"),  # before: abstained
    ({"passed": 6, "failed": 0}, "I can't see it any more - everything was green, I think.", "wrong"),
    # near-misses: counts beside "everything was green"; a decline alone
    ({"passed": 6, "failed": 0}, "Everything was green: 6 passed.", "correct"),
    ({"passed": 6, "failed": 0}, "I can't see that run any more.", "abstained"),
    ({"passed": 6, "failed": 1}, "Of the 7 tests, 6 passed and 1 failed.", "correct"),
])
def test_counts_of_them_and_a_run_told_as_green(reference, text, verdict):
    assert grade_asked("test_counts", ASK_SECOND_RUN, reference, text) == verdict


ASK_PRINTED = 'The 1st time you called `run_shell` with `{"command": "java Demo"}`, what did it return?'


@pytest.mark.parametrize("text,verdict", [
    # an output of several lines without values (a program's printed sentences): each line must be told
    ("It printed `Order queued for the nightly batch processing run`.", "wrong"),                # before: correct
    # near-misses: both lines, verbatim or in other words; the short line alone was wrong already
    ("Order queued for the nightly batch processing run, then Retry scheduled.", "correct"),
    ("It printed that the order was queued for the nightly batch processing run, and then that a retry was "
     "scheduled.", "correct"),
    ("It printed `Retry scheduled`.", "wrong"),
])
def test_each_line_of_an_output_without_values_is_told(text, verdict):
    reference = "Order queued for the nightly batch processing run\nRetry scheduled"
    assert grade_asked("tool_output", ASK_PRINTED, reference, text) == verdict


@pytest.mark.parametrize("text,verdict", [
    # a line numbered beside a view's lines that the view does not show (a line before or after its range): added
    ("40: case TOK_STAR:\n41: case TOK_PLUS:\n42: case TOK_MINUS:\n43: return binary;", "wrong"),  # before: correct
    ("41: case TOK_PLUS:\n42: case TOK_MINUS:\n43: return binary;\n44: default:", "wrong"),      # before: correct
    # near-misses: the view's lines alone; a far line mentioned in prose is no numbered line of the view
    ("41: case TOK_PLUS:\n42: case TOK_MINUS:\n43: return binary;", "correct"),
    ("Lines 41-43: case TOK_PLUS:, case TOK_MINUS:, return binary; (line 90 has the default)", "correct"),
])
def test_a_line_numbered_beside_a_views_lines(text, verdict):
    question = ('The 1st time you called `file_editor` with `{"command": "view", "path": "/repo/src/lex.c", '
                '"view_range": [41, 43]}`, what did it return?')
    reference = ("Here's the result of running `cat -n` on /repo/src/lex.c:\n    41\t    case TOK_PLUS:\n"
                 "    42\t    case TOK_MINUS:\n    43\t      return binary;")
    assert grade_asked("tool_output", question, reference, text) == verdict


@pytest.mark.parametrize("text,verdict", [
    # grep hits told as `path:N` with each other's lines (the numbers swapped): another output
    ('app/settings.py:3 `"mode": "fast",`, app/run.py:21 `if cfg["mode"] == "safe":`, '
     'app/run.py:25 `if cfg["mode"] == "fast":`', "wrong"),                                        # before: correct
    # near-misses: each hit with its own line; a comment added to one is no other hit's line
    ('app/settings.py:3 `"mode": "fast",`, app/run.py:21 `if cfg["mode"] == "fast":`, '
     'app/run.py:25 `if cfg["mode"] == "safe":`', "correct"),
    ('app/settings.py:3 `"mode": "fast",`, app/run.py:21 `if cfg["mode"] == "fast":` and '
     'app/run.py:25 `if cfg["mode"] == "safe":  # fallback`', "correct"),
])
def test_grep_hits_told_with_each_others_lines(text, verdict):
    question = 'The 1st time you called `run_shell` with `{"command": "grep -rn mode app/"}`, what did it return?'
    reference = ('app/settings.py:3:    "mode": "fast",\napp/run.py:21:    if cfg["mode"] == "fast":\n'
                 'app/run.py:25:    if cfg["mode"] == "safe":')
    assert grade_asked("tool_output", question, reference, text) == verdict


@pytest.mark.parametrize("text,verdict", [
    # a grep hit's line told first, its path after: "line N of path"
    ("Just one hit: line 57 of cart/totals.py, `total = round(subtotal * rate, 2)`.", "correct"),   # before: wrong
    ("One hit, at line 57 in totals.py: `total = round(subtotal * rate, 2)`", "correct"),
    # near-misses: another line, another file
    ("Just one hit: line 75 of cart/totals.py, `total = round(subtotal * rate, 2)`.", "wrong"),
    ("Just one hit: line 57 of cart/prices.py, `total = round(subtotal * rate, 2)`.", "wrong"),
])
def test_a_grep_hit_told_as_line_n_of_its_path(text, verdict):
    assert grade_rooted("tool_output", ASK_GREP, HIT, text, "/srv/shop") == verdict


@pytest.mark.parametrize("text,verdict", [
    # a directory told with its trailing slash that a listing of directories does not show: an entry added
    ("core/, core/io/ and vendor/ under /srv/app/lib.", "wrong"),                                   # before: correct
    # near-misses: the listed directories, relative or absolute, and the listed directory itself
    ("core/ and core/io/ under /srv/app/lib.", "correct"),
    ("/srv/app/lib/core/ and /srv/app/lib/core/io/", "correct"),
    ("Just core/ with core/io/ in it (and the lib/ directory itself).", "correct"),
])
def test_a_directory_added_to_a_listing_of_directories(text, verdict):
    question = 'The 1st time you called `file_editor` with `{"command": "view", "path": "/srv/app/lib"}`, what did it return?'
    reference = ("Here's the files and directories up to 2 levels deep in /srv/app/lib, excluding hidden items:\n"
                 "/srv/app/lib/\n/srv/app/lib/core/\n/srv/app/lib/core/io/")
    assert grade_asked("tool_output", question, reference, text) == verdict


@pytest.mark.parametrize("text,verdict", [
    # "it might still have been Y" beside the value: a second candidate, not chosen
    ("2 bars | Wi-Fi Off | 🔋 55% - though I'm not fully sure, it might still have been the roaming bar.", "wrong"),  # before: correct
    ("2 bars | Wi-Fi Off | 🔋 55%, but it might still have been 3 bars.", "wrong"),               # before: correct
    # near-misses: "still" without a candidate; a hedge alone
    ("2 bars | Wi-Fi Off | 🔋 55% - it still showed that after the reboot.", "correct"),
    ("2 bars | Wi-Fi Off | 🔋 55%, though I'm not fully sure.", "correct"),
])
def test_a_second_candidate_told_as_still_possible(text, verdict):
    question = "What was `Status Bar` the last time you called `toggle_wifi` with `{}`?"
    assert grade_asked("latest_value", question, "📶 2 bars | 📵 Wi-Fi Off | 🔋 55%", text) == verdict


@pytest.mark.parametrize("text,verdict", [
    # a range of rows with a word of state before its marker, the texts parted by semicolons
    ("Task 1 (Read the failing test) was \u2705 done, task 2 (Patch the width parser) \U0001f504 in progress, and 3-5 "
     "still \u23f3: Add a regression test; Update the changelog; Run the full suite.", "correct"),   # before: wrong
    # near-misses: a row's text left out, or changed
    ("Task 1 (Read the failing test) was \u2705 done, task 2 (Patch the width parser) \U0001f504 in progress, and 3-5 "
     "still \u23f3: Add a regression test; Run the full suite.", "wrong"),
    ("Task 1 (Read the failing test) was \u2705 done, task 2 (Patch the width parser) \U0001f504 in progress, and 3-5 "
     "still \u23f3: Add a regression test; Update the readme; Run the full suite.", "wrong"),
])
def test_a_range_of_rows_with_a_word_of_state_and_semicolons(text, verdict):
    assert grade_asked("tool_output", ASK_TASKS, TASKS, text) == verdict


@pytest.mark.parametrize("text,verdict", [
    # a CamelCase class heading the answer after an article, the module it came from after it: the claimed type
    ("A `LedgerClosed` from the ledger.errors module; the message was just the PeriodLocked class in a list.",
     "correct"),                                                                                  # before: wrong
    ("An `AccountFrozen` from the ledger.errors module; the message was just the PeriodLocked class in a list.",
     "wrong"),                                                                                    # another type
    ("The LedgerClosed, with PeriodLocked in the message.", "correct"),                           # before: abstained
    # near-miss: no class heads the answer
    ("A ledger problem from the errors module; the message named PeriodLocked.", "abstained"),
])
def test_a_class_heading_the_answer_after_an_article(text, verdict):
    question = "What exception (type and message) did the 1st run of `python -c 'import ledger'` print?"
    reference = {"type": "ledger.errors.LedgerClosed", "message": "[<class 'ledger.errors.PeriodLocked'>]"}
    assert grade_asked("first_error", question, reference, text) == verdict


@pytest.mark.parametrize("text,verdict", [
    # the value a parameter had, in parentheses after the parameter's name: an aside, no word of the message changed
    ("file_editor refused: `line_range` is not allowed when the target (src/utils) is a folder.", "correct"),  # before: wrong
    # near-misses: a word changed beside the aside; the parameter's name changed; the message without an aside
    ("file_editor refused: `line_range` is not allowed when the target (src/utils) points to a file.", "wrong"),
    ("file_editor refused: `line_range` is not allowed when the file (src/utils) is a folder.", "wrong"),
    ("file_editor refused: `line_range` is not allowed when the target points to a folder.", "correct"),
])
def test_a_parameters_value_in_parentheses_after_its_name(text, verdict):
    reference = {"tool": "file_editor", "message": "The `line_range` parameter is not allowed when `target` points to a folder."}
    assert grade("first_tool_error", reference, text) == verdict
