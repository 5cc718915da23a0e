"""CSV exports (rescore's CSV, the report's questions.csv) escape cells that a spreadsheet would read as a
formula; numbers stay numbers."""

from __future__ import annotations

import json

from bench.runner import run
from bench.store.records import read_jsonl
from bench.study.assemble import write_report
from bench.study.tables import csv_safe

from jobs import job_cfg


def test_csv_cells_that_start_like_formulas_are_escaped(tmp_path, finished):
    import csv

    import pandas as pd

    frame = pd.DataFrame({"a": ["=HYPERLINK(\"http://x\")", "+1", "-2", "@SUM(A1)", "\tx", "\rx", "safe", None],
                          "n": [1, -2, 3, 4, 5, 6, 7, 8]})
    safe = csv_safe(frame)
    assert safe["a"].tolist()[:7] == ["'=HYPERLINK(\"http://x\")", "'+1", "'-2", "'@SUM(A1)", "'\tx", "'\rx", "safe"]
    assert safe["n"].tolist() == frame["n"].tolist()  # numbers stay numbers
    job = tmp_path / "job"
    run(job_cfg(output_dir=str(job)))
    answers = read_jsonl(job / "answers.jsonl")
    answers[0]["answer"] = '=HYPERLINK("http://evil.example","click")'
    (job / "answers.jsonl").write_text("".join(json.dumps(a) + "\n" for a in answers))
    from bench.rescore import main as rescore_main

    assert rescore_main([str(job), "--output", str(tmp_path / "rescored.csv")]) == 0
    with (tmp_path / "rescored.csv").open(newline="", encoding="utf-8") as handle:
        cells = [cell for line in csv.reader(handle) for cell in line]
    assert "'=HYPERLINK(\"http://evil.example\",\"click\")" in cells
    assert not any(cell.startswith(("=", "+", "@")) for cell in cells)
    write_report([job], tmp_path / "report")
    with (tmp_path / "report" / "questions.csv").open(newline="", encoding="utf-8") as handle:
        assert not any(cell.startswith(("=", "+", "-", "@")) for line in csv.reader(handle) for cell in line)
