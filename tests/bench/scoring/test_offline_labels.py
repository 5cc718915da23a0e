"""The offline stack says what it measures (issue 17, item 7): with ``model=offline`` the
headline is "evidence available (offline reader)" in metrics.json, the console summary and the
report, and the report's paired comparisons say so too."""

from __future__ import annotations

import json
from pathlib import Path

from bench.answering.evidence_reader import EvidenceReader
from bench.main import format_summary
from bench.scoring.metric_records import OFFLINE_MEASURE
from bench.scoring.metrics import compute_metrics
from bench.study.assemble import write_report

from jobs import run_job


def test_offline_jobs_are_labelled_in_metrics_summary_and_report(tmp_path: Path) -> None:
    root = tmp_path / "sweep"
    full = run_job(root / "arm=full", "arm=full", "dataset.limit=3")
    run_job(root / "arm=nlatest", "arm=nlatest", "arm.n=10", "dataset.limit=3")
    metrics = json.loads((full / "metrics.json").read_text())
    assert metrics["measures"] == OFFLINE_MEASURE == "evidence available (offline reader)"
    summary = format_summary({**metrics, "job_dir": str(full)})
    assert f"{OFFLINE_MEASURE}: 100.0%" in summary and "  accuracy:" not in summary
    markdown = (write_report([root])["output"] / "report.md").read_text()
    assert f"**Measures: {OFFLINE_MEASURE}.**" in markdown
    assert f"Paired comparisons of {OFFLINE_MEASURE}" in markdown
    assert f"| {OFFLINE_MEASURE} B − A |" in markdown


def test_a_model_job_measures_accuracy() -> None:
    case = {"case_id": "c", "instance_id": "i", "questions": [
        {"qid": "c:q", "type": "call_count", "in_task_text": False}]}
    answer = {"case_id": "c", "qid": "c:q", "usage": {"model": "gpt-4o-mini"}}
    score = {"case_id": "c", "qid": "c:q", "verdict": "correct"}
    assert compute_metrics([case], [], [answer], [score])["measures"] == "accuracy"
    offline = {**answer, "usage": {"model": EvidenceReader.name}}
    assert compute_metrics([case], [], [offline], [score])["measures"] == OFFLINE_MEASURE
    # a job mixing the reader with a model (none today) is not labelled offline
    assert compute_metrics([case], [], [offline, {**answer, "qid": "c:q2"}], [score])["measures"] == "accuracy"
