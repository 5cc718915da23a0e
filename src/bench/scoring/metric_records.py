"""What a job's metrics read of its records: the fields kept of each question, view, case and score (a
job keeps only these in memory, the rest stays in its files), and the answering model's name that says what
the headline measures.

    case = metric_case(case_record)          # ids and the questions' QUESTION_FIELDS
"""

from __future__ import annotations

from typing import Any

__all__ = ["QUESTION_FIELDS", "VIEW_OMITTED", "CASE_OMITTED", "SCORE_OMITTED", "metric_case", "OFFLINE_READER",
           "OFFLINE_MEASURE"]

# The offline reader's model name (bench.answering.evidence_reader.EvidenceReader.name): with it every answer
# measures whether the evidence is available in the view, not what a model would answer.
OFFLINE_READER = "offline-evidence-reader"
OFFLINE_MEASURE = "evidence available (offline reader)"

# What the metrics read of a question, and of a view: a job keeps only these of its cases and views
# (a case set of any size; the rest is in cases.jsonl and views.jsonl).
QUESTION_FIELDS = ("qid", "type", "in_task_text", "evidence_back", "nearest_back", "depth")
VIEW_OMITTED = ("messages", "summary")
CASE_OMITTED = ("messages", "tools", "system_prompt", "model_patch")  # what a report reads of cases: the rest
SCORE_OMITTED = ("prompt", "raw")  # the judge's prompt and unparsed reply


def metric_case(case: dict[str, Any]) -> dict[str, Any]:
    """A ``cases.jsonl`` record as :func:`bench.scoring.metrics.compute_metrics` reads it: ids and its
    questions' :data:`QUESTION_FIELDS`."""
    return {"case_id": case["case_id"], "instance_id": case.get("instance_id"),
            "questions": [{k: q[k] for k in QUESTION_FIELDS if k in q} for q in case["questions"]]}
