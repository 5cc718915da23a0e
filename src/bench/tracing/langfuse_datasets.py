"""The benchmark's cases as a Langfuse dataset: one item per case, stable names and ids.

    name = dataset_name(source.label(), cases)     # bench-<source>-<case-set hash>
    upload_dataset(client, name, cases)            # create the dataset, upsert its items
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection
from typing import Any

from bench.store.schema import case_set_hash

__all__ = ["dataset_name", "dataset_item_id", "upload_dataset", "is_transport"]


def dataset_name(label: str, cases: Collection[Any], override: str | None = None) -> str:
    """``tracing.dataset`` or ``bench-<label>-<case-set hash>`` (same cases, same name); ``label`` is
    the source's (:meth:`bench.sources.Source.label`: the file's stem, the hub dataset's name, or
    the source name)."""
    if override:
        return str(override)
    label = "".join(ch if ch.isalnum() or ch in "-_." else "-" for ch in str(label or "data"))
    known = getattr(cases, "case_set_hash", None)  # a job's case set knows its hash: not read again
    return f"bench-{label}-{(known if isinstance(known, str) else case_set_hash(cases))[:12]}"


def dataset_item_id(name: str, case_id: str) -> str:
    """Stable item id of a case in a dataset (Langfuse ids are global, hence the name)."""
    return hashlib.sha256(f"{name}\n{case_id}".encode()).hexdigest()[:32]


def _item(case: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    questions = case.get("questions") or []
    item_input = {
        "case_id": case["case_id"], "instance_id": case.get("instance_id"), "repo": case.get("repo"),
        "n_messages": len(case.get("messages") or []),
        "questions": [{"qid": q["qid"], "type": q["type"], "question": q["question"]} for q in questions],
    }
    expected = {q["qid"]: q.get("reference") for q in questions}
    metadata = {"case_id": case["case_id"], "source_row": case.get("source_row"),
                "trajectory_id": case.get("trajectory_id"), "resolved": case.get("resolved")}
    return item_input, expected, metadata


def upload_dataset(client: Any, name: str, cases: Collection[Any], description: str | None = None,
                   retries: int = 1) -> dict[str, Any]:
    """Create (or update) the dataset and upsert one item per case; returns ids."""
    options = {"max_retries": retries}
    try:
        dataset = client.api.datasets.create(
            name=name, description=description or "bench cases: one item per case, its recall questions",
            metadata={"n_cases": len(cases)}, request_options=options)
    except Exception as err:  # noqa: BLE001 - an existing dataset may refuse a create
        if is_transport(err):
            raise
        dataset = client.api.datasets.get(dataset_name=name, request_options=options)
    items = {}
    for case in (c if isinstance(c, dict) else c.to_dict() for c in cases):
        item_input, expected, metadata = _item(case)
        item_id = dataset_item_id(name, case["case_id"])
        client.api.dataset_items.create(dataset_name=name, id=item_id, input=item_input,
                                        expected_output=expected, metadata=metadata, request_options=options)
        items[case["case_id"]] = item_id
    return {"id": dataset.id, "name": name, "items": items}


def is_transport(err: BaseException) -> bool:
    import httpx

    return isinstance(err, (httpx.TransportError, TimeoutError, ConnectionError, OSError))
