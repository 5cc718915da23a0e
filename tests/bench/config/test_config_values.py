"""Values a setting cannot take are refused in one line, exit 2: a price that is not a price (NaN,
infinite, 1e308), a boolean written as ``maybe``, ``bench.estimate``'s ``--steps``/``--rate``/``--latency``
out of range. ``bench.estimate`` prices a judge panel's LLM members, and a sweep over seeds computes
one estimate for jobs that differ only by seed.

Each test failed before its fix (issue 32, "Judging and results" and "Crashes and hangs").
"""

from __future__ import annotations

import json

import pytest

from bench import estimate
from bench.core.errors import ConfigError
from bench.llm.call_errors import ModelSetupError
from bench.llm.price import Price

from commands import bench, one_line_error, tool

PRICE = "{input: 1.0, output: 4.0}"


@pytest.mark.parametrize("number", [float("nan"), float("inf"), float("-inf"), 1e308, -1.0])
def test_a_price_that_is_not_a_price_is_refused(number):
    with pytest.raises(ModelSetupError, match=r"model\.price\.input"):
        Price.of({"input": number, "output": 1.0})


@pytest.mark.one_variant
@pytest.mark.parametrize("value", ["nan", "inf", "1e308"])
def test_a_job_with_a_nan_infinite_or_absurd_price_is_one_line(tmp_path, value):
    done = bench(tmp_path, "model=openai", "model.base_url=http://127.0.0.1:9/v1", "model.api_key_env=null",
                 f"model.price={{input: {value}, output: 1.0}}", "dataset.limit=1", f"output_dir={tmp_path / 'job'}")
    line = one_line_error(done, "model.price.input")
    assert "$nan" not in done.stdout + done.stderr and "cannot reach" not in line


@pytest.mark.parametrize("value", ["nan", "1e308"])
def test_estimate_refuses_a_nan_or_absurd_price(tmp_path, value):
    done = tool("bench.estimate", "model=openai", f"model.price={{input: {value}, output: 1.0}}", cwd=tmp_path)
    assert done.returncode == 2 and done.stderr.startswith("error: model.price.input"), done.stderr
    assert done.stderr.count("\n") == 1, done.stderr  # refused before a row is read: no row's warning before it
    assert "$nan" not in done.stdout


@pytest.mark.parametrize("args", [["--steps", "-3"], ["--steps", "0"], ["--steps", "nan"], ["--rate", "-1"],
                                  ["--rate", "0"], ["--rate", "nan"], ["--latency", "-2"], ["--latency", "nan"],
                                  ["--latency", "inf"]])
def test_estimate_refuses_steps_rate_or_latency_out_of_range(capsys, args):
    assert estimate.main([*args]) == 2
    out = capsys.readouterr()
    assert out.out == "" and out.err.count("\n") == 1 and out.err.startswith(f"error: {args[0]}"), out.err


def test_estimate_prices_a_judge_panels_llm_members(capsys):
    common = ["--json", "model=openai", f"model.price={PRICE}"]
    assert estimate.main([*common, "judge=llm", f"judge.price={PRICE}"]) == 0
    alone = json.loads(capsys.readouterr().out.strip().splitlines()[0])
    assert estimate.main([*common, "judge=panel", f"judge.members.llm.price={PRICE}"]) == 0
    panel = json.loads(capsys.readouterr().out.strip().splitlines()[0])
    assert panel["total"]["cost_usd"] is not None  # was "cost n/a"
    assert panel["kinds"]["judge"] == alone["kinds"]["judge"]  # one LLM member: the LLM judge's calls and cost
    assert estimate.main([*common, "judge=panel", f"judge.members.llm.price={PRICE}", "+judge@judge.members.llm2=llm",
                          "judge.members.llm2.price={input: 3.0, output: 12.0}"]) == 0
    two = json.loads(capsys.readouterr().out.strip().splitlines()[0])["kinds"]["judge"]
    assert two["calls"] == 2 * alone["kinds"]["judge"]["calls"]
    assert two["cost_usd"] == pytest.approx(4 * alone["kinds"]["judge"]["cost_usd"], rel=1e-4)  # 1x + 3x the price


def test_a_seed_sweep_is_estimated_once_and_every_job_listed(monkeypatch, capsys):
    computed = []
    real = estimate.estimate_job

    def counting(overrides, steps=1.0):
        computed.append(overrides)
        return real(overrides, steps)

    monkeypatch.setattr(estimate, "estimate_job", counting)
    assert estimate.main(["-m", "seed=range(0,300)", "dataset.limit=2", "--json"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(computed) == 1 and len(lines) == 301  # one computation; 300 jobs and the total
    jobs = [json.loads(line) for line in lines[:-1]]
    assert [j["overrides"] for j in jobs][:2] == [["seed=0", "dataset.limit=2"], ["seed=1", "dataset.limit=2"]]
    assert json.loads(lines[-1])["calls"] == 300 * jobs[0]["total"]["calls"]


@pytest.mark.one_variant
@pytest.mark.parametrize("override", ["model.batch=maybe", "model.warm_prefix=sometimes", "model.check_endpoint=1",
                                      "cache.enabled=perhaps"])
def test_a_boolean_setting_refuses_anything_but_true_or_false(tmp_path, override):
    done = bench(tmp_path, "model=openai", "model.base_url=http://127.0.0.1:9/v1", "model.api_key_env=null", override,
                 "dataset.limit=1", f"output_dir={tmp_path / 'job'}")
    one_line_error(done, override.partition("=")[0], "true or false")


def test_a_panel_members_boolean_is_checked_as_the_judges():
    from bench.config.checks import compose, validate

    with pytest.raises(ConfigError, match="judge.members.llm.json_mode: expected true or false"):
        validate(compose(["judge=panel", "judge.members.llm.json_mode=maybe"]))
    validate(compose(["judge=panel", "judge.members.llm.json_mode=false"]))


@pytest.mark.parametrize("table", [{"input": None, "output": 1.0}, {"input": 1.0, "output": None}])
def test_a_price_table_without_input_or_output_is_refused_in_one_line(table):
    """null is unset: a table whose input or output is null has no price for those tokens (was a TypeError
    on the first priced call)."""
    with pytest.raises(ModelSetupError, match=r"model\.price needs input and output"):
        Price.of(table, "model")


def test_a_parts_fields_are_checked_whatever_else_its_classes_annotate(tmp_path, monkeypatch):
    """check_types evaluates the dataclass fields' annotations only: a base class's attribute typed with a
    name imported for the type checker alone (a provider arm's ``client: ChatClient``) is no field, and
    evaluating it would raise NameError."""
    import importlib
    import sys

    from bench.core.typecheck import check_types

    (tmp_path / "typed_part.py").write_text(
        "from __future__ import annotations\n"
        "from dataclasses import dataclass\n"
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from nowhere import Client\n"
        "class Base:\n"
        "    client: Client\n"
        "@dataclass\n"
        "class Part(Base):\n"
        "    n: int = 1\n"
        "    share: float | None = None\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "typed_part", raising=False)
    part = importlib.import_module("typed_part").Part
    check_types(part(n=2, share=0.5), "arm")
    with pytest.raises(ConfigError, match=r"arm\.n: expected int, got 'x'"):
        check_types(part(n="x"), "arm")
    with pytest.raises(ConfigError, match=r"arm\.share: expected float or null"):
        check_types(part(share="half"), "arm")
