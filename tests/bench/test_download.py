"""bench.download: the selected raw rows and a manifest; the local copy gives the same selection."""

from __future__ import annotations

import json
import os
import shutil

import pytest
from omegaconf import OmegaConf

from bench.config.checks import compose
from bench.config.job_cases import load_job_cases
from bench.data.selection import load_cases
from bench.download import main as download_main
from bench.download import row_sha256
from bench.text.tokens import TokenCounter

from jobs import job_cfg

FILTERS = ["dataset.filters.min_tokens=0", "dataset.filters.max_tokens=null", "dataset.filters.resolved=null",
           "dataset.filters.exit_status=null"]


@pytest.fixture
def hub_dir(tmp_path, dev_parquet):
    """A local directory laid out like the hub dataset (data/train-*.parquet)."""
    root = tmp_path / "hub"
    (root / "data").mkdir(parents=True)
    shutil.copy(dev_parquet, root / "data" / "train-00000-of-00001.parquet")
    return root


def test_download_then_local_gives_the_same_selection(hub_dir, tmp_path, capsys):
    source = ["dataset=hf", f"dataset.hf_name={hub_dir}", "dataset.limit=4", *FILTERS]  # one_per_repo on
    out = tmp_path / "rows.parquet"
    assert download_main([*source, f"out={out}"]) == 0
    manifest = json.loads((tmp_path / "rows.manifest.json").read_text())
    assert manifest["source"]["source"] == "hf" and manifest["source"]["revision"]
    assert manifest["filters"]["one_per_repo"] is True and manifest["limit"] == 4
    from_hub = load_job_cases(compose(source), TokenCounter())  # as the job selects
    assert [r["source_row"] for r in manifest["rows"]] == [c.source_row for c in from_hub.cases]
    assert [r["instance_id"] for r in manifest["rows"]] == [c.instance_id for c in from_hub.cases]
    assert len(set(from_hub.source["source_rows"])) == 4 and from_hub.skipped.get("one_per_repo")
    local = load_job_cases(compose(["dataset=local", f"dataset.path={out}"]), TokenCounter())
    assert [c.case_id for c in local.cases] == [c.case_id for c in from_hub.cases]
    assert local.case_set_hash == from_hub.case_set_hash == manifest["case_set_hash"]
    rows = load_cases(OmegaConf.create({"source": "local", "path": str(out), "filters": {}}), keep_rows=True).rows
    assert [row_sha256(r) for r in rows] == [r["sha256"] for r in manifest["rows"]]


@pytest.mark.parametrize("args, message", [
    (["dataset=ops"], "give the output file once"),
    (["dataset=ops", "out=rows.csv"], "use a .parquet or .jsonl"),
    (["dataset=local", "dataset.path=/nonexistent.parquet", "out=x.parquet"], "dataset file not found"),
])
def test_bad_arguments_get_one_line(args, message, capsys):
    assert download_main(args) == 2
    errors = [line for line in capsys.readouterr().err.replace("\r", "\n").splitlines() if line.startswith("error")]
    assert len(errors) == 1 and message in errors[0]


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_a_downloaded_file_is_checked_against_its_manifest_and_a_changed_row_refused(tmp_path, suffix):
    from bench.data.selection import DatasetError
    from bench.download import main as download_main
    from bench.runner import run

    out = tmp_path / f"rows{suffix}"
    assert download_main(["dataset.limit=3", f"out={out}"]) == 0
    metrics = run(job_cfg("dataset=local", f"dataset.path={out}", output_dir=str(tmp_path / "ok")))
    assert metrics["n_cases"] == 3  # the untouched download reads as it was written
    if suffix == ".jsonl":
        lines = out.read_text(encoding="utf-8").splitlines()
        lines[1] = json.dumps({**json.loads(lines[1]), "model_patch": "tampered"})
        out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    else:
        import pyarrow.parquet as pq

        table = pq.read_table(out).to_pylist()
        table[1]["model_patch"] = "tampered"
        import pyarrow as pa

        pq.write_table(pa.Table.from_pylist(table), out)
    with pytest.raises(DatasetError, match=r"row 1 \(source_row 1\) of the file does not match its manifest"):
        run(job_cfg("dataset=local", f"dataset.path={out}", output_dir=str(tmp_path / "bad")))
    assert not (tmp_path / "bad" / "answers.jsonl").exists()


def test_download_on_a_full_disk_removes_the_partial_file_and_names_it(tmp_path, monkeypatch, capsys):
    import errno

    from bench import download

    def full_disk(rows, out):  # noqa: ANN001
        out.write_text('{"half": ')
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(download, "_write_rows", full_disk)
    out = tmp_path / "rows.jsonl"
    assert download.main(["dataset.limit=2", f"out={out}"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and str(out) in err and "No space left" in err and "removed" in err
    assert not out.exists() and not (tmp_path / "rows.manifest.json").exists()


@pytest.mark.parametrize("override, expected", [
    ("dataset.nope=1", "error: unknown config key 'dataset.nope'"),
    ("dataset=nope", "error: unknown option dataset=nope (options: "),
    ("+judge.api_key=sk-abcdefghijklmnopqrstuvwx", "error: judge.api_key: do not put keys in the config"),
])
def test_a_bad_override_or_a_key_is_one_line_as_bench_main_says_it(tmp_path, capsys, override, expected):
    assert download_main([override, f"out={tmp_path / 'rows.parquet'}"]) == 2
    out = capsys.readouterr()
    assert out.err.startswith(expected) and out.err.count("\n") == 1, out.err
    assert "sk-abcdefghijklmnop" not in out.out + out.err and list(tmp_path.iterdir()) == []
