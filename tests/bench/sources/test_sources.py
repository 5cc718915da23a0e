"""Sources as classes (issue 21 item 1): each source's own keys, one error line for a key it does not
take, and a new source that is one class plus its YAML."""

from __future__ import annotations

import itertools
import json
import shutil
from dataclasses import dataclass
from typing import ClassVar

import pytest

from bench.config.checks import CONF_DIR, compose, dataset_source, validate
from bench.core.errors import ConfigError
from bench.data.selection import load_cases
from bench.runner import run
from bench.sources import ChatLog, Filters, Hub, LocalFile, Shipped, Source, as_source, sample_path, source_classes
from bench.text.tokens import TokenCounter

from commands import bench, one_line_error
from jobs import job_cfg
from paths import DEV_PARQUET


@pytest.mark.parametrize("option,cls", [("sample", Shipped), ("ops", Shipped), ("local", LocalFile),
                                        ("chat", ChatLog), ("hf", Hub)])
def test_each_dataset_option_builds_its_class(option, cls):
    extra = ["dataset.path=/tmp/x.jsonl"] if option in ("local", "chat") else []
    source = dataset_source(compose([f"dataset={option}", *extra]).dataset)
    assert type(source) is cls and isinstance(source.filters, Filters)
    assert source.source == ("sample" if option == "sample" else option)


def test_each_source_labels_its_rows_by_what_it_reads():
    """The label names a Langfuse dataset (``bench-<label>-<hash>``): the file's stem, the hub dataset's name."""
    assert Hub(hf_name="nebius/SWE-rebench-openhands-trajectories").label() == "SWE-rebench-openhands-trajectories"
    assert LocalFile(path="/data/runs/dev.parquet").label() == "dev"
    assert Shipped().label() == Shipped().source


def test_a_key_the_source_does_not_take_is_one_line_naming_the_fix():
    with pytest.raises(ConfigError, match=r"^dataset.hf_name=x is not used by dataset.source=local .*use dataset=hf"):
        validate(compose(["dataset=local", "dataset.path=a.jsonl", "+dataset.hf_name=x"]))
    with pytest.raises(ConfigError, match=r"dataset.filters.min_turns=3 is not a setting of dataset.filters"):
        validate(compose(["+dataset.filters.min_turns=3"]))
    with pytest.raises(ConfigError, match=r"dataset.limit: expected int or null, got 'many'"):
        validate(compose(["dataset.limit=many"]))
    with pytest.raises(ConfigError, match=r"dataset.source: 'ops2' is not read by Shipped"):
        validate(compose(["dataset.source=ops2"]))
    with pytest.raises(ConfigError, match=r"dataset.format: 'csv' is not one of"):
        LocalFile(path="a.csv", format="csv")


def test_filters_apply_in_order_and_name_the_first_that_fails():
    counter = TokenCounter()
    everything = load_cases(Shipped(source="ops", profile="tau2"), counter)
    few = load_cases(Shipped(source="ops", profile="tau2", filters=Filters(min_messages=10**6)), counter)
    assert everything.cases and not few.cases and few.skipped == {"messages": everything.rows_read}
    limited = load_cases({"source": "ops", "profile": "tau2", "limit": 2}, counter)
    assert [c.case_id for c in limited.cases] == [c.case_id for c in everything.cases[:2]]
    assert limited.source["path"] == str(sample_path("ops")) and limited.source["hf_name"] is None


@dataclass(kw_only=True)
class _Reversed(Source):
    """A throwaway source: the shipped operations rows, last first."""

    source: str = "reversed"
    names: ClassVar[tuple[str, ...]] = ("reversed",)
    skip: int = 0  # its own key: rows dropped from the end first

    def rows(self):
        rows = list(Shipped(source="ops").rows())[::-1]
        yield from rows[self.skip:]


def test_a_throwaway_source_touches_only_its_class_and_yaml(tmp_path):
    conf = tmp_path / "conf"
    shutil.copytree(CONF_DIR, conf)
    (conf / "dataset" / "reversed.yaml").write_text(
        "defaults:\n  - sample\n  - _self_\n"
        f"_target_: {__name__}._Reversed  # the class\nsource: reversed  # its name\n"
        "profile: tau2  # tau2-bench tools\nskip: 1  # rows dropped\n", encoding="utf-8")
    cfg = compose(["dataset=reversed", "dataset.limit=3"], config_dir=conf)
    source = dataset_source(cfg.dataset)
    assert type(source) is _Reversed and source.skip == 1 and _Reversed in source_classes()
    selection = load_cases(source, TokenCounter())
    ops = [json.loads(line)["instance_id"] for line in sample_path("ops").read_text().splitlines() if line.strip()]
    assert [c.instance_id for c in selection.cases] == ops[::-1][1:4]
    assert selection.source["source"] == "reversed"
    with pytest.raises(ConfigError, match="dataset.path=x is not used by dataset.source=reversed"):
        as_source({"_target_": f"{__name__}._Reversed", "path": "x"})


def test_shards_split_a_case_set_by_instance_disjoint_and_whole():
    counter = TokenCounter()
    dev = str(DEV_PARQUET)
    whole = load_cases(LocalFile(path=dev), counter).cases
    parts = [load_cases(LocalFile(path=dev, shard=f"{i}/3"), counter) for i in range(3)]
    ids = [[c.case_id for c in p.cases] for p in parts]
    assert sorted(sum(ids, [])) == sorted(c.case_id for c in whole)           # every case in one shard
    assert all(set(a).isdisjoint(b) for a, b in itertools.combinations(ids, 2))
    for part in parts:                                                        # an instance stays whole
        assert part.skipped.get("shard", 0) == part.rows_read - len(part.cases) - len(part.rejected)
    by_instance = {}
    for index, part in enumerate(parts):
        for case in part.cases:
            by_instance.setdefault(case.instance_id, set()).add(index)
    assert all(len(found) == 1 for found in by_instance.values())
    assert load_cases(LocalFile(path=dev, shard="0/1"), counter).case_set_hash == load_cases(
        LocalFile(path=dev), counter).case_set_hash
    for bad in ("3/3", "1", "a/b", "-1/2"):
        with pytest.raises(ConfigError, match="dataset.shard: I/N"):
            LocalFile(path=dev, shard=bad)
    validate(compose(["dataset=ops", "dataset.shard=1/4"]))


def test_the_report_merges_the_shards_of_one_case_set_into_one_set_with_one_interval(tmp_path):
    from bench.study import load_jobs

    whole = run(compose(["dataset=ops", f"output_dir={tmp_path / 'whole'}", "cache.enabled=false"]))
    for index in range(3):
        run(compose(["dataset=ops", f"dataset.shard={index}/3", f"output_dir={tmp_path / 'shards' / str(index)}",
                     "cache.enabled=false"]))
    jobs = load_jobs([tmp_path / "shards"])
    assert len(jobs) == 1 and len(jobs[0].shard_paths) == 3 and jobs[0].status == "complete"
    merged = jobs[0].metrics
    assert merged["n_questions"] == whole["n_questions"] and merged["accuracy"] == pytest.approx(whole["accuracy"])
    assert merged["accuracy_ci"] == pytest.approx(whole["accuracy_ci"])  # one set, one interval


def test_a_dataset_setting_the_chosen_dataset_does_not_use_is_an_error(tmp_path):
    one_line_error(bench(tmp_path, "dataset.path=/nonexistent"), "dataset.path=/nonexistent is not used",
                   "dataset=local")
    assert not (tmp_path / "outputs").exists() or not any((tmp_path / "outputs").rglob("run.json"))
    one_line_error(bench(tmp_path, "dataset=hf", "dataset.path=rows.parquet"),
                   "dataset.path=rows.parquet is not used by dataset=hf", "dataset=local")
    with pytest.raises(ConfigError, match="dataset.path=rows.parquet is not used by dataset.source=hf"):
        validate(job_cfg("dataset=hf", "+dataset.path=rows.parquet"))
    with pytest.raises(ConfigError, match="dataset.revision=main is not used by dataset.source=local"):
        validate(job_cfg("dataset=local", "dataset.path=x.jsonl", "+dataset.revision=main"))
    validate(job_cfg("dataset=local", "dataset.path=x.jsonl", "dataset.format=json"))  # what local uses is fine
