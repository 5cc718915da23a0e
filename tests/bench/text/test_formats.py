"""Each text format compaction writes into a view reads back the way it was written."""

from __future__ import annotations

import pytest

from bench.text.formats import (
    CUT,
    Attempt,
    find_handles,
    format_excerpt,
    format_file_item,
    format_omitted,
    format_retry_note,
    handle_ref,
    is_placeholder,
    note_detail,
    parse_excerpt,
    parse_file_item,
    parse_omitted,
    parse_retry_note,
    placeholder,
    placeholder_handle,
    stored_note,
    strip_stored_note,
)


def test_handle_reference_placeholder_and_stored_note():
    assert find_handles(f"see {handle_ref('out_ab12')} and {handle_ref('out_cd34')}") == ["out_ab12", "out_cd34"]
    assert is_placeholder(placeholder()) and placeholder_handle(placeholder()) is None
    assert placeholder_handle(placeholder("out_ab12")) == "out_ab12"
    assert not is_placeholder("a normal output")
    assert strip_stored_note(f"output text\n{stored_note('out_ab12')}") == "output text"


@pytest.mark.parametrize("output, cleared, code, handle, expected", [
    ("3 passed in 0.1s", False, None, None, ("3 passed in 0.1s", None, False, None)),
    ("collecting\n1 failed, 2 passed in 1s", False, 1, "out_x", ("1 failed, 2 passed in 1s", "out_x", True, 1)),
    ("", False, None, None, ("", None, False, None)),
    (None, False, None, None, (None, None, False, None)),  # no result
    ("anything", True, None, "out_y", (None, "out_y", False, None)),  # cleared
    ("x" * 500, False, None, None, (None, None, False, None)),  # cut: unknown
])
def test_timeline_excerpts_round_trip(output, cleared, code, handle, expected):
    text = format_excerpt(output, cleared=cleared, limit=200, exit_code=code, handle=handle)
    excerpt = parse_excerpt(text)
    assert (excerpt.output, excerpt.handle, excerpt.partial, excerpt.exit_code) == expected
    if output and len(output) > 200 and "\n" not in output:
        assert text.endswith(CUT)


def test_lists_round_trip():
    assert parse_omitted(format_omitted(12)) == 12 and parse_omitted("- a file") is None
    ops = {"create": 1, "str_replace": 2}
    assert parse_file_item(format_file_item("/repo/a.py", ops)) == ("/repo/a.py", ops)


def test_retry_note_round_trips_actions_and_details():
    attempts = [Attempt(["pytest tests/x.py -x"], [note_detail("1 failed in 0.2s", "out_1")]),
                Attempt(["pytest tests/x.py -vv", "ls"], [note_detail("1 failed in 0.3s"), note_detail(None)])]
    note = format_retry_note(attempts)
    count, parts = parse_retry_note(f"{note}\n\nfinal attempt text")
    assert count == 2 and len(parts) == 2
    assert parts[0] == "`pytest tests/x.py -x` -> 1 failed in 0.2s (stored: read_tool_output(handle=\"out_1\"))"
    assert parts[1].startswith("`pytest tests/x.py -vv | ls` -> 1 failed in 0.3s / (no output)")
    assert parse_retry_note("no note here") is None
