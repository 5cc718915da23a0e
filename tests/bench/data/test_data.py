"""Dataset loading through `datasets` (local parquet/jsonl, HF selection logic, errors)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest
from omegaconf import OmegaConf

from bench.data.selection import DatasetError, load_cases

from builders import ROOT, bash, edit, row
from commands import bench, one_line_error

ROOT_EDIT = edit("9", "create", f"{ROOT}/a.py", file_text="print('a')\n")


def dataset_cfg(path, **overrides):
    cfg = OmegaConf.create({
        "source": "local", "path": str(path), "limit": None,
        "filters": {"resolved": None, "exit_status": None, "one_per_repo": False, "min_messages": 0,
                    "max_messages": None, "min_tokens": 0, "max_tokens": None, "min_questions": 0}})
    for key, value in overrides.items():
        OmegaConf.update(cfg, key, value)
    return cfg


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def good(instance_id, repo="acme/widgets", resolved=True, exit_status="submit"):
    return row(bash("1", "ls", "x"), ROOT_EDIT, instance_id=instance_id, repo=repo, resolved=resolved,
               exit_status=exit_status, patch_files=("a.py",))


def test_local_jsonl_keeps_source_rows_and_applies_filters(tmp_path):
    rows = [good("a-1", repo="a/a", resolved=False), good("b-1", repo="b/b"), good("b-2", repo="b/b"),
            good("c-1", repo="c/c", exit_status="max_iterations"), good("d-1", repo="d/d"), good("e-1", repo="e/e")]
    path = write_jsonl(tmp_path / "rows.jsonl", rows)
    cfg = dataset_cfg(path, limit=2, **{"filters.resolved": True, "filters.exit_status": ["submit"],
                                        "filters.one_per_repo": True})
    selection = load_cases(cfg)
    assert [c.instance_id for c in selection.cases] == ["b-1", "d-1"]
    assert [c.source_row for c in selection.cases] == [1, 4]
    assert selection.skipped == {"resolved": 1, "one_per_repo": 1, "exit_status": 1}
    assert selection.rows_read == 5  # stopped reading once the limit was reached


def test_local_parquet_goes_through_the_same_path(tmp_path):
    rows = [good("a-1"), good("b-1")]
    for r in rows:  # parquet needs one schema: arguments stay JSON strings as in the source
        r["tools"] = json.loads(json.dumps(r["tools"]))
    path = tmp_path / "rows.parquet"
    pd.DataFrame(rows).to_parquet(path)
    selection = load_cases(dataset_cfg(path))
    assert [c.source_row for c in selection.cases] == [0, 1]
    assert selection.cases[0].questions[0].type == "files_changed"


def test_bad_rows_are_rejected_and_a_file_of_only_bad_rows_gives_zero_cases(tmp_path):
    bad = row(bash("1", "ls", "x"))
    bad["trajectory"][2]["tool_calls"][0]["function"]["arguments"] = "{broken"
    path = write_jsonl(tmp_path / "bad.jsonl", [bad, bad])
    selection = load_cases(dataset_cfg(path))
    assert selection.cases == [] and [r.source_row for r in selection.rejected] == [0, 1]
    assert "not valid JSON" in selection.rejected[0].reason


def test_missing_columns_give_a_clear_error(tmp_path):
    path = write_jsonl(tmp_path / "x.jsonl", [{"instance_id": "a", "messages": []}])
    with pytest.raises(DatasetError, match=r"lacks required column\(s\) \['trajectory'\]"):
        load_cases(dataset_cfg(path))


def test_corrupt_parquet_and_missing_file_give_clear_errors(tmp_path):
    path = tmp_path / "corrupt.parquet"
    path.write_bytes(b"PAR1 this is not parquet")
    with pytest.raises(DatasetError, match="cannot read"):
        load_cases(dataset_cfg(path))
    with pytest.raises(DatasetError, match="not found"):
        load_cases(dataset_cfg(tmp_path / "nope.parquet"))


def test_unreachable_hub_gives_a_clear_error(monkeypatch):
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # nothing listens there
    monkeypatch.setenv("HF_HUB_ETAG_TIMEOUT", "2")
    cfg = OmegaConf.create({"source": "hf", "hf_name": "nebius/SWE-rebench-openhands-trajectories",
                            "revision": "35455389ab51bf5e2306bfd436ef72d0f98bf882", "split": "train",
                            "limit": 1, "filters": {}})
    with pytest.raises(DatasetError, match="dataset=local dataset.path=FILE"):
        load_cases(cfg)


def test_real_sample_converts_and_selects(dev_parquet):
    selection = load_cases(dataset_cfg(dev_parquet))
    assert selection.rows_read == 15 and len(selection.cases) + len(selection.rejected) == 15
    assert len(selection.cases) >= 12
    assert all(c.questions for c in selection.cases)
    assert len({c.case_id for c in selection.cases}) == len(selection.cases)


def _load(path: Path, **filters):
    cfg = OmegaConf.create({"source": "local", "path": str(path), "limit": None,
                            "filters": {"resolved": None, **filters}})
    return load_cases(cfg)


def test_rows_with_a_non_list_tools_value_are_rejected_and_resolved_strings_are_parsed(tmp_path):
    steps = [bash("1", "ls", "a.py")]
    schemas = row()["tools"]
    tools_rows = [  # one file per column type (older pyarrow JSON readers refuse a column of mixed types)
        row(*steps, instance_id="tools-object", tools=json.dumps({"type": "function", "function": {"name": "x"}})),
        row(*steps, instance_id="tools-text", tools="not json"),
        row(*steps, instance_id="tools-string-list", tools=json.dumps(schemas)),
    ]
    resolved_rows = [row(*steps, instance_id=f"resolved-{value}", resolved=value)
                     for value in ("false", "True", "maybe", "0")]
    (tmp_path / "tools.jsonl").write_text("".join(json.dumps(r) + "\n" for r in tools_rows))
    (tmp_path / "resolved.jsonl").write_text("".join(json.dumps(r) + "\n" for r in resolved_rows))
    tools = _load(tmp_path / "tools.jsonl")
    assert [c.instance_id for c in tools.cases] == ["tools-string-list"]
    assert tools.cases[0].tools == schemas
    reasons = {r.instance_id: r.reason for r in tools.rejected}
    assert reasons["tools-object"] == "tools is a JSON dict, not a list of tool schemas"
    assert reasons["tools-text"].startswith("tools is a string that is not valid JSON")
    resolved = _load(tmp_path / "resolved.jsonl", resolved=True)
    assert [c.instance_id for c in resolved.cases] == ["resolved-True"]
    assert resolved.skipped == {"resolved": 2}  # "false" and "0" are false
    assert [(r.instance_id, r.reason) for r in resolved.rejected] == [("resolved-maybe",
                                                                      "resolved is 'maybe', not a boolean")]


def test_a_source_without_rows_says_no_rows(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    (tmp_path / "empty.jsonl").write_text("")
    (tmp_path / "blank.jsonl").write_text("\n\n")
    pq.write_table(pa.table({"instance_id": pa.array([], pa.string()), "trajectory": pa.array([], pa.string())}),
                   tmp_path / "empty.parquet")
    for name in ("empty.jsonl", "blank.jsonl", "empty.parquet"):
        with pytest.raises(DatasetError, match=rf"{re.escape(name)} \(\w+\) has no rows"):
            _load(tmp_path / name)
    one_line_error(bench(tmp_path, "dataset=local", "dataset.path=empty.parquet"), "empty.parquet", "has no rows")
