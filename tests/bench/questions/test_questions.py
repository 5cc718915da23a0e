"""Question and reference rules (spec 1.3), one hand-built case per rule."""

from __future__ import annotations

import pytest

from bench.data.cases import row_to_case
from bench.extract import parse_first_exception, parse_test_counts
from bench.profiles import OPENHANDS
from bench.questions import add_questions, question_text

from builders import ROOT, bash, edit, row


def edit_ref(question):
    """A first_edit reference's path and added code (its context and changed lines are tested apart)."""
    return {"path": question.reference["path"], "code": question.reference["code"]}


def questions_of(*messages, patch_files=()):
    case = row_to_case(row(*messages, patch_files=patch_files), 0)
    add_questions(case)
    return {q.type: q for q in case.questions}, {d.type: d.reason for d in case.dropped_questions}, case


# --- metadata -----------------------------------------------------------------------------

def test_openhands_metadata_is_stripped_even_when_glued():
    raw = ("OBSERVATION:\nTraceback (most recent call last):\n  File \"x.py\", line 1\n"
           "KeyError: 'width'[Python Interpreter: /usr/bin/python]\n"
           "[Current working directory: /w]\n[Command finished with exit code 1]")
    assert OPENHANDS.clean(raw) == "Traceback (most recent call last):\n  File \"x.py\", line 1\nKeyError: 'width'"
    assert OPENHANDS.clean("\x1b[32m3 passed\x1b[0m in 0.1s\r\n") == "3 passed in 0.1s"
    assert OPENHANDS.clean("ValueError: x[Python interpreter: /opt/py]") == "ValueError: x"  # older casing


# --- files_changed --------------------------------------------------------------------------

def test_files_changed_reference_is_the_sorted_patch_paths():
    qs, _, case = questions_of(edit("1", "create", f"{ROOT}/b.py", file_text="x"),
                               edit("2", "str_replace", f"{ROOT}/a/c.py", old_str="a", new_str="b"),
                               patch_files=("b.py", "a/c.py"))
    q = qs["files_changed"]
    assert q.reference == ["a/c.py", "b.py"] and q.evidence_keys == ["a/c.py", "b.py"]
    assert case.questions[0].type == "files_changed"  # asked first


def test_files_changed_dropped_when_patch_and_edits_differ():
    _, dropped, _ = questions_of(edit("1", "create", f"{ROOT}/b.py", file_text="x"), patch_files=("other.py",))
    assert "differ" in dropped["files_changed"] and "other.py" in dropped["files_changed"]


def test_files_changed_dropped_when_patch_empty():
    _, dropped, _ = questions_of(edit("1", "create", f"{ROOT}/b.py", file_text="x"))
    assert dropped["files_changed"] == "model_patch names no file"


def test_created_then_removed_file_is_not_changed():
    qs, _, _ = questions_of(edit("1", "create", f"{ROOT}/repro.py", file_text="x"),
                            edit("2", "str_replace", f"{ROOT}/a.py", old_str="a", new_str="b"),
                            bash("3", f"rm {ROOT}/repro.py", ""), patch_files=("a.py",))
    assert qs["files_changed"].reference == ["a.py"]


# --- first_edit ----------------------------------------------------------------------------

def test_first_edit_skips_failed_and_outside_repo_edits():
    qs, _, case = questions_of(
        edit("1", "create", "/tmp/scratch.py", file_text="scratch"),
        edit("2", "str_replace", f"{ROOT}/w/core.py", old_str="nope", new_str="never applied",
             reply=f"ERROR:\nNo replacement was performed, old_str `nope` did not appear verbatim in {ROOT}/w/core.py."),
        edit("3", "str_replace", f"{ROOT}/w/core.py", old_str="w = 1", new_str="w = 2\n"),
        edit("4", "create", f"{ROOT}/later.py", file_text="later"),
    )
    q = qs["first_edit"]
    assert edit_ref(q) == {"path": "w/core.py", "code": "w = 2\n"}
    assert q.evidence_keys == ["w/core.py", "w = 2\n"]
    assert q.evidence_messages == [5, 6]  # call and result of the 3rd edit (index 0 is the user message)


def test_first_edit_insert_and_create_cite_their_code():
    qs, _, _ = questions_of(edit("1", "insert", f"{ROOT}/a.py", insert_line=3, new_str="import os"))
    assert edit_ref(qs["first_edit"]) == {"path": "a.py", "code": "import os"}
    qs, _, _ = questions_of(edit("1", "create", f"{ROOT}/n.py", file_text="print('new')\n"))
    assert edit_ref(qs["first_edit"]) == {"path": "n.py", "code": "print('new')\n"}


@pytest.mark.parametrize("command", [
    f"sed -i 's/a/b/' {ROOT}/w/core.py",
    f"cd {ROOT} && sed -i -e 's/a/b/' w/core.py",
    f"echo 'x = 1' > {ROOT}/w/core.py",
    f"cat > {ROOT}/w/new.py << 'EOF'\nprint('it''s > fine')\nEOF",
])
def test_first_edit_dropped_when_it_was_a_shell_edit(command):
    qs, dropped, _ = questions_of(bash("1", command, ""),
                                  edit("2", "str_replace", f"{ROOT}/w/core.py", old_str="a", new_str="later"))
    assert "first_edit" not in qs  # never replaced by the later editor edit
    assert "shell command" in dropped["first_edit"]


def test_shell_commands_that_write_outside_the_repo_are_not_edits():
    qs, _, _ = questions_of(bash("1", f"cd {ROOT} && python -m pytest > /tmp/log.txt 2>&1", ""),
                            bash("2", "sed -i 's/a/b/' /etc/hosts", ""),
                            edit("3", "str_replace", f"{ROOT}/a.py", old_str="a", new_str="b"))
    assert edit_ref(qs["first_edit"]) == {"path": "a.py", "code": "b"}


def test_first_edit_dropped_without_any_repo_edit():
    _, dropped, _ = questions_of(bash("1", "ls", "a.py"))
    assert dropped["first_edit"] == "no edit inside the repository"


# --- test_counts ---------------------------------------------------------------------------

@pytest.mark.parametrize("output,expected", [
    ("===== 2 failed, 5 passed in 0.12s =====", {"passed": 5, "failed": 2}),
    ("==== 1 failed, 3 passed, 1 error, 2 warnings in 1.50s ====", {"passed": 3, "failed": 1, "errors": 1}),
    ("3 passed in 0.01s", {"passed": 3, "failed": 0}),
    ("..F.E\nRan 7 tests in 0.003s\n\nFAILED (failures=1, errors=1)", {"passed": 5, "failed": 1, "errors": 1}),
    ("Ran 4 tests in 0.1s\n\nOK (skipped=1)", {"passed": 3, "failed": 0, "errors": 0}),
    ("[INFO] Tests run: 3, Failures: 0, Errors: 0, Skipped: 0, Time elapsed: 0.1 s - in a.BTest\n"
     "[INFO] Results:\n[ERROR] Tests run: 12, Failures: 1, Errors: 2, Skipped: 1",
     {"passed": 8, "failed": 1, "errors": 2}),
    ("5 tests completed, 1 failed, 1 skipped", {"passed": 3, "failed": 1}),
    ("mypy: Found 2 errors in 1 file (checked 3 source files)", None),
])
def test_test_runner_summaries(output, expected):
    assert parse_test_counts(output) == expected


def test_test_counts_names_command_and_run_ordinal():
    cmd = "python -m pytest tests/test_w.py -q"
    qs, _, _ = questions_of(bash("1", cmd, "ImportError while collecting"),
                            bash("2", "ls", "x"),
                            bash("3", cmd, "==== 1 failed, 4 passed in 0.31s ===="))
    q = qs["test_counts"]
    assert q.reference == {"passed": 4, "failed": 1}
    assert q.params == {"command": cmd, "ordinal": 2}
    assert "The 2nd time you ran `python -m pytest tests/test_w.py -q`" in q.question
    assert q.evidence_keys == [cmd, "==== 1 failed, 4 passed in 0.31s ===="]


def test_process_input_is_not_another_run_and_its_output_joins_the_run():
    cmd = "python -m pytest"
    qs, _, _ = questions_of(
        bash("1", cmd, "collecting ...", exit_code=-1),
        bash("2", "", "==== 6 passed in 9.00s ====", exit_code=0, is_input="true"),
        bash("3", "C-c", "^C"), bash("4", "ctrl+c", "^C"),
        bash("5", cmd, "==== 7 passed in 9.00s ===="),
    )
    q = qs["test_counts"]
    assert q.params["ordinal"] == 1 and q.reference == {"passed": 6, "failed": 0}
    assert q.evidence_messages == [1, 2, 4, 6, 8]  # the run, then inputs sent to it


def test_test_counts_dropped_without_summary():
    _, dropped, _ = questions_of(bash("1", "ls", "x"))
    assert "no test-runner summary" in dropped["test_counts"]


# --- first_error ---------------------------------------------------------------------------

def test_python_traceback_last_line_with_glued_marker():
    qs, _, _ = questions_of(bash("1", "python repro.py", "start\nTraceback (most recent call last):\n"
                                 "  File \"repro.py\", line 3, in <module>\n    w['width']\nKeyError: 'width'",
                                 exit_code=1))
    assert qs["first_error"].reference == {"type": "KeyError", "message": "'width'"}
    assert "1st run of `python repro.py`" in qs["first_error"].question


def test_java_exception_lines():
    assert parse_first_exception('Exception in thread "main" java.lang.NullPointerException: x is null')[0] == {
        "type": "java.lang.NullPointerException", "message": "x is null"}
    assert parse_first_exception("/testbed/src/a/FatalException.java\n} catch (Exception e) {") is None
    hit = parse_first_exception("[ERROR] boom\njava.lang.IllegalStateException: bad state\n\tat a.B.c(B.java:3)")
    assert hit[0] == {"type": "java.lang.IllegalStateException", "message": "bad state"}


def test_first_error_uses_the_first_exception_and_its_run_ordinal():
    qs, _, _ = questions_of(bash("1", "python r.py", "ok"),
                            bash("2", "python r.py", "Traceback (most recent call last):\n  File \"r.py\"\n"
                                 "ValueError: bad width\n\nDuring handling...\nTraceback (most recent call last):\n"
                                 "  File \"r.py\"\nRuntimeError: later"))
    q = qs["first_error"]
    assert q.reference == {"type": "ValueError", "message": "bad width"}
    assert q.params == {"command": "python r.py", "ordinal": 2}


def test_first_error_dropped_without_exception():
    _, dropped, _ = questions_of(bash("1", "ls", "x"))
    assert dropped["first_error"] == "no exception in any command output"


def test_question_texts_have_the_spec_shapes():
    assert question_text("files_changed", {}).startswith("Which files did you change in the repository?")
    assert question_text("first_edit", {}).startswith("What exact code did your first edit of the repository insert")
    assert question_text("first_error", {"command": "x", "ordinal": 3}) == \
        "What exception (type and message) did the 3rd run of `x` print?"


def test_test_counts_evidence_key_is_the_line_that_was_read():
    maven = ("[INFO] Tests run: 3, Failures: 0, Errors: 0, Skipped: 0, Time elapsed: 0.1 s - in a.BTest\n"
             "[INFO] Results:\n[INFO] Tests run: 12, Failures: 0, Errors: 0, Skipped: 0\n[INFO] BUILD SUCCESS")
    qs, _, _ = questions_of(bash("1", "mvn test", maven))
    assert qs["test_counts"].reference == {"passed": 12, "failed": 0, "errors": 0}
    assert qs["test_counts"].evidence_keys == ["mvn test", "[INFO] Tests run: 12, Failures: 0, Errors: 0, Skipped: 0"]
    # with failures Maven prints no passed count: 8 would be arithmetic the output does not show
    failing = maven.replace("Tests run: 12, Failures: 0, Errors: 0, Skipped: 0", "Tests run: 12, Failures: 1, Errors: 2, "
                            "Skipped: 1").replace("[INFO] Tests run: 12", "[ERROR] Tests run: 12")
    qs, dropped, _ = questions_of(bash("1", "mvn test", failing, exit_code=1))
    assert "test_counts" not in qs and "prints its counts" in dropped["test_counts"]
