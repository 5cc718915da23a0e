"""bench.calibrate: Cohen's kappa, the report, bad-input errors, the shipped calibration file, the LLM judge's mechanics."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter

import pytest

from bench.calibrate import HUMAN_VERDICTS, KNOWN_TYPES, cohen_kappa, load_rows
from bench.calibrate import main as calibrate_main

from commands import one_line, tool
from paths import DATA, PROJECT
from scripted import scripted_verdict, write_jsonl

CALIBRATION = DATA / "judge_calibration.jsonl"
LAST_LINE = re.compile(r"^agreement (\d+)/(\d+) \((\d+\.\d)%\) kappa (-?\d\.\d{3}|n/a)$")


# --------------------------------------------------------------------------- Cohen's kappa
def test_kappa_textbook_two_categories():
    # 50 items: both yes 20, A yes/B no 5, A no/B yes 10, both no 15.
    # p_o = 35/50 = 0.7; A says yes 25/50, B 30/50: p_e = 0.5*0.6 + 0.5*0.4 = 0.5; kappa = 0.2/0.5 = 0.4
    a = ["yes"] * 20 + ["yes"] * 5 + ["no"] * 10 + ["no"] * 15
    b = ["yes"] * 20 + ["no"] * 5 + ["yes"] * 10 + ["no"] * 15
    assert cohen_kappa(a, b) == pytest.approx(0.4)


def test_kappa_three_verdicts_by_hand():
    # agreements 3 + 2 + 2 = 7 of 10: p_o = 0.7; both raters c4 w3 a3: p_e = (16+9+9)/100 = 0.34
    # kappa = (0.7 - 0.34) / 0.66 = 6/11
    human = ["correct"] * 4 + ["wrong"] * 3 + ["abstained"] * 3
    judge = ["correct"] * 3 + ["wrong"] * 3 + ["abstained"] * 3 + ["correct"]
    assert cohen_kappa(human, judge) == pytest.approx(6 / 11)


def test_kappa_with_an_unscored_category():
    # p_o = 3/4; human c2 w1 a1, judge c2 w1 u1: p_e = (4 + 1)/16; kappa = (12/16 - 5/16) / (11/16) = 7/11
    human = ["correct", "wrong", "abstained", "correct"]
    judge = ["correct", "wrong", "unscored", "correct"]
    assert cohen_kappa(human, judge) == pytest.approx(7 / 11)


def test_kappa_edges():
    assert cohen_kappa(["correct", "wrong"], ["correct", "wrong"]) == pytest.approx(1.0)
    assert cohen_kappa(["correct", "wrong"], ["wrong", "correct"]) == pytest.approx(-1.0)
    # one rater constant: agreement 1/2 is what chance gives, kappa 0
    assert cohen_kappa(["correct", "wrong"], ["correct", "correct"]) == pytest.approx(0.0)
    assert cohen_kappa(["correct"] * 3, ["correct"] * 3) is None  # expected agreement 1: undefined
    assert cohen_kappa([], []) is None
    with pytest.raises(ValueError):
        cohen_kappa(["correct"], [])


# --------------------------------------------------------------------------- the CLI with the exact judge
FILES = ["pkg/mod.py", "tests/test_mod.py"]
ERROR = {"type": "ValueError", "message": "invalid literal for int() with base 10: 'x'"}
COUNTS = {"passed": 3, "failed": 1}


def small_rows() -> list[dict]:
    base = {"question": "q?", "repo_root": "/repo"}
    return [
        {**base, "id": "fc-1", "type": "files_changed", "reference": FILES, "answer": json.dumps(FILES),
         "verdict": "correct"},
        {**base, "id": "fc-2", "type": "files_changed", "reference": FILES, "answer": '["other/file.py"]',
         "verdict": "wrong"},
        # deliberately mislabelled: the answer is the reference, so any judge says correct
        {**base, "id": "fe-1", "type": "first_error", "reference": ERROR, "answer": json.dumps(ERROR),
         "verdict": "wrong"},
        {**base, "id": "fe-2", "type": "first_error", "reference": ERROR, "answer": "I don't know.",
         "verdict": "abstained"},
        {"id": "tc-1", "type": "test_counts", "question": "q?", "reference": COUNTS, "answer": json.dumps(COUNTS),
         "verdict": "correct"},
    ]


def test_report_lists_disagreements_per_type_and_last_line(tmp_path, capsys):
    path = write_jsonl(tmp_path / "small.jsonl", small_rows())
    assert calibrate_main([str(path), "judge=exact"]) == 0
    lines = capsys.readouterr().out.rstrip("\n").splitlines()
    # one disagreement: the mislabelled row, with both verdicts, the judge's reason and the answer
    assert "disagreements: 1" in lines
    at = next(i for i, line in enumerate(lines) if "fe-1" in line)
    assert "[first_error]" in lines[at] and "human=wrong" in lines[at] and "judge=correct" in lines[at]
    assert lines[at + 1].strip().startswith("reason: ") and len(lines[at + 1].strip()) > len("reason: ")
    assert lines[at + 2].strip().startswith("answer: ") and "ValueError" in lines[at + 2]
    assert not any(f"{rid}  [" in line for line in lines for rid in ("fc-1", "fc-2", "fe-2", "tc-1"))
    table = {line.split()[0]: line.split()[1:] for line in lines
             if line.split() and line.split()[0] in KNOWN_TYPES}
    # human [c, w] / judge [c, w]: kappa 1; human [w, a] / judge [c, a]: p_o .5, p_e .25 -> 1/3;
    # a single label on both sides: kappa undefined
    assert table["files_changed"] == ["2", "2", "100.0%", "1.000"]
    assert table["first_error"] == ["2", "1", "50.0%", "0.333"]
    assert table["test_counts"] == ["1", "1", "100.0%", "n/a"]
    # overall: p_o 4/5; human c2 w2 a1, judge c3 w1 a1: p_e 9/25 -> kappa (0.8 - 0.36) / 0.64
    assert lines[-1] == f"agreement 4/5 (80.0%) kappa {(0.8 - 0.36) / 0.64:.3f}"
    assert LAST_LINE.match(lines[-1])


def test_fail_under(tmp_path, capsys):
    path = write_jsonl(tmp_path / "small.jsonl", small_rows())
    assert calibrate_main([str(path), "--fail-under", "0.8"]) == 0
    assert calibrate_main([str(path), "--fail-under", "0.81"]) == 1
    captured = capsys.readouterr()
    assert "below --fail-under 0.81" in captured.err
    assert LAST_LINE.match(captured.out.rstrip("\n").splitlines()[-1])  # the report is still printed


def test_a_judge_that_raises_leaves_the_row_unscored(tmp_path):
    from bench.calibrate import judge_rows
    from bench.store.schema import Score

    class Picky:
        def score(self, question, answer, repo_root=None):
            if question.type == "call_count":
                raise KeyError(question.type)
            return Score(case_id=answer.case_id, qid=answer.qid, type=question.type, verdict="correct",
                         reason=f"root {repo_root}")

    rows = load_rows(write_jsonl(tmp_path / "x.jsonl", [
        {"id": "a", "type": "call_count", "question": "How many?", "reference": 3, "answer": "3",
         "verdict": "correct"},
        {"id": "b", "type": "tool_value", "question": "What?", "reference": "x", "answer": "x", "verdict": "correct",
         "repo_root": "/r"},
    ]))
    results = judge_rows(rows, Picky(), workers=2)
    assert [(r["id"], r["judge"]) for r in results] == [("a", "unscored"), ("b", "correct")]
    assert "KeyError" in results[0]["reason"] and results[1]["reason"] == "root /r"


# --------------------------------------------------------------------------- bad input
GOOD = {"id": "x", "type": "call_count", "question": "How many?", "reference": 3, "answer": "3", "verdict": "correct"}


@pytest.mark.parametrize("bad,expected", [
    ("{not json", "not valid JSON"),
    ('["a list"]', "expected a JSON object"),
    (json.dumps({k: v for k, v in GOOD.items() if k != "verdict"}), "missing field(s) verdict"),
    (json.dumps({**GOOD, "type": "favourite_colour"}), "unknown type 'favourite_colour'"),
    (json.dumps({**GOOD, "verdict": "maybe"}), "unknown verdict 'maybe'"),
    (json.dumps({**GOOD, "verdict": "unscored"}), "unknown verdict 'unscored'"),
    (json.dumps({**GOOD, "answer": 3}), "field 'answer' must be a string"),
    (json.dumps({**GOOD, "id": "first"}), "duplicate id 'first'"),
])
def test_bad_line_is_one_error_naming_file_and_line(tmp_path, capsys, bad, expected):
    path = write_jsonl(tmp_path / "labels.jsonl", [{**GOOD, "id": "first"}, "", bad])
    assert calibrate_main([str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    err = captured.err.strip().splitlines()
    assert len(err) == 1 and f"{path}:3:" in err[0] and expected in err[0], err


def test_missing_or_empty_file(tmp_path, capsys):
    assert calibrate_main([str(tmp_path / "absent.jsonl")]) == 2
    assert calibrate_main([str(write_jsonl(tmp_path / "empty.jsonl", ["", "  "]))]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and "absent.jsonl: no such file" in err[0] and "no labelled rows" in err[1]


def test_unknown_judge_is_one_line(tmp_path, capsys):
    path = write_jsonl(tmp_path / "small.jsonl", small_rows())
    assert calibrate_main([str(path), "judge=nope"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: cannot build judge 'nope'")


@pytest.mark.parametrize("override, expected", [
    ("+judge.api_key=sk-abcdefghijklmnopqrstuvwx", "judge.api_key: do not put keys in the config"),
    pytest.param("judge.base_url='http://127.0.0.1:1/v1#q7Z9xw2LmN4pR8tE'",  # these two import the model stack (~10 s)
                 "cannot reach the endpoint http://127.0.0.1:1/v1#***", marks=pytest.mark.slow),
    pytest.param("judge.api_key_env=BENCH_NO_SUCH_KEY_VAR", "the API key variable BENCH_NO_SUCH_KEY_VAR is not set",
                 marks=pytest.mark.slow),
])
def test_a_key_or_a_judge_that_cannot_be_built_is_one_line_naming_the_cause_and_no_secret(tmp_path, capsys,
                                                                                           override, expected):
    """As bench.main and bench.rescore: a key on the command line is refused, a URL's key never printed, and
    the cause is named (not Hydra's "Error in call to target" wrapper)."""
    path = write_jsonl(tmp_path / "small.jsonl", small_rows())
    keyless = [] if "api_key_env" in override else ["judge.api_key_env=null"]
    assert calibrate_main([str(path), "judge=llm", override, *keyless]) == 2
    out = capsys.readouterr()
    err = out.err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and expected in err[0], err
    assert "sk-abcdefghijklmnop" not in out.out + out.err and "q7Z9xw2LmN4pR8tE" not in out.out + out.err


def test_module_cli_bad_input_has_no_traceback(tmp_path):
    path = write_jsonl(tmp_path / "labels.jsonl", [GOOD, json.dumps({**GOOD, "id": "y", "type": "nope"})])
    proc = subprocess.run([sys.executable, "-m", "bench.calibrate", str(path)], capture_output=True, text=True,
                          cwd=PROJECT, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.strip() == (f"error: {path}:2: unknown type 'nope' (known: {', '.join(KNOWN_TYPES)})")
    assert "Traceback" not in proc.stderr


# --------------------------------------------------------------------------- the shipped calibration file
def test_calibration_file_schema():
    rows = load_rows(CALIBRATION)  # every line valid, ids unique (load_rows raises otherwise)
    assert len(rows) >= 120
    by_type = Counter(r.type for r in rows)
    assert set(by_type) == set(KNOWN_TYPES) and min(by_type.values()) >= 12, by_type
    verdicts = Counter(r.verdict for r in rows)
    assert set(verdicts) == set(HUMAN_VERDICTS)
    assert all(verdicts[v] >= 0.15 * len(rows) for v in HUMAN_VERDICTS), verdicts  # a real mix, not one class
    for row in rows:
        if row.type == "first_edit":
            assert set(row.reference) == {"path", "code", "context"}
            assert row.repo_root and not row.reference["path"].startswith("/")
        elif row.type == "first_tool_error":
            assert set(row.reference) == {"tool", "message"}
        elif row.type == "call_count":
            assert isinstance(row.reference, int)
    raw = [json.loads(line) for line in CALIBRATION.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert all(r.get("source") for r in raw)  # provenance of every question


# --------------------------------------------------------------------------- the LLM judge's mechanics
def test_llm_judge_through_calibrate(tmp_path, capsys):
    from fake_openai import FakeOpenAI

    rows = [
        {"id": "r1", "type": "first_error", "question": "q?", "reference": ERROR, "answer": "ValueError MARK-OK",
         "verdict": "correct"},
        {"id": "r2", "type": "first_error", "question": "q?", "reference": ERROR, "answer": "KeyError MARK-WRONG",
         "verdict": "wrong"},
        {"id": "r3", "type": "tool_value", "question": "q?", "reference": 65.0, "answer": "no idea MARK-DUNNO",
         "verdict": "abstained"},
        {"id": "r4", "type": "call_count", "question": "q?", "reference": 3, "answer": "3 MARK-GARBLED",
         "verdict": "correct"},
        # the scripted judge says correct where the human said wrong
        {"id": "r5", "type": "call_count", "question": "q?", "reference": 3, "answer": "4 MARK-OK",
         "verdict": "wrong"},
    ]
    path = write_jsonl(tmp_path / "llm.jsonl", rows)
    with FakeOpenAI(reply=scripted_verdict) as server:
        args = [str(path), "judge=llm", f"judge.base_url={server.base_url}", "judge.name=fake-judge",
                "judge.api_key_env=null", f"cache.path={tmp_path / 'cache.sqlite'}"]
        assert calibrate_main(args) == 0
        first = capsys.readouterr().out.rstrip("\n").splitlines()
        calls = server.stats()["requests"]
        assert calls == len(rows)  # one judge call per labelled answer
        assert calibrate_main(args) == 0  # a second calibration is served by the response cache
        assert server.stats()["requests"] == calls
        assert capsys.readouterr().out.rstrip("\n").splitlines() == first
    assert "llm:fake-judge" in first[0]
    r4 = next(i for i, line in enumerate(first) if line.strip().startswith("r4 "))
    assert "human=correct" in first[r4] and "judge=unscored" in first[r4]
    r5 = next(i for i, line in enumerate(first) if line.strip().startswith("r5 "))
    assert "judge=correct" in first[r5] and "scripted correct" in first[r5 + 1]
    assert not any(line.strip().startswith(("r1 ", "r2 ", "r3 ")) for line in first)
    # agreement from the judge's verdicts: 3/5; human c2 w2 a1, judge c2 w1 a1 u1: p_e = (4 + 2 + 1)/25
    expected = cohen_kappa(["correct", "wrong", "abstained", "correct", "wrong"],
                           ["correct", "wrong", "abstained", "unscored", "correct"])
    assert expected == pytest.approx((0.6 - 7 / 25) / (1 - 7 / 25))
    assert first[-1] == f"agreement 3/5 (60.0%) kappa {expected:.3f}"


def _deep(depth: int) -> str:
    return "[" * depth + "]" * depth


def test_calibrate_on_a_deeply_nested_line_is_one_line_naming_it(tmp_path):
    path = tmp_path / "labels.jsonl"
    good = {"id": "a", "type": "call_count", "question": "q", "reference": 1, "answer": "1", "verdict": "correct"}
    path.write_text(json.dumps(good) + "\n" + '{"id": "b", "reference": ' + _deep(100_000) + "}\n")
    one_line(tool("bench.calibrate", str(path)), f"{path}:2", "nested too deeply")
    path.write_text(json.dumps(good) + "\n" + json.dumps({**good, "id": "b", "reference": json.loads(_deep(300))})
                    + "\n")
    one_line(tool("bench.calibrate", str(path)), f"{path}:2", "nested more than")
