"""Compaction as lived (issue 19, item 1): ``arm=compact arm.auto_compact.force=false`` compacts
whenever the replayed history exceeds ``threshold x context_window``, again and again; each
compaction and the generation each question's evidence was last seen in reach views.jsonl.

    uv run pytest tests/bench/policies/test_compaction_natural.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from hydra import compose as hydra_compose
from hydra import initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from bench.config.arms import build_policy
from bench.config.checks import ConfigError, compose
from bench.policies import CompactPolicy, PolicyContext, view_problems
from bench.runner import run
from bench.store.schema import Case, Question
from bench.text.content import content_text
from bench.text.tokens import TokenCounter

from paths import DATA, PROJECT

DEV = DATA / "real" / "dev.parquet"
COUNTER = TokenCounter()
BIG = "line of output\n" * 40  # 600 characters
NATURAL = {"force": False, "threshold": 1.0}
NO_MICRO = {"enabled": False}


def bash(call_id: str, output: str) -> list[BaseMessage]:
    call = {"name": "execute_bash", "args": {"command": f"cat {call_id}.txt"}, "id": call_id, "type": "tool_call"}
    return [AIMessage(content="", tool_calls=[call]),
            ToolMessage(content=f"{output}\n[Command finished with exit code 0]", tool_call_id=call_id,
                        name="execute_bash")]


def turn(n: int, prefix: str = "r") -> list[BaseMessage]:
    """One user turn of ``n`` large results (``KEY-<prefix><i>`` in each), then a reply."""
    out: list[BaseMessage] = [HumanMessage("please fix the parser")]
    for i in range(n):
        out += bash(f"{prefix}{i}", f"KEY-{prefix}{i}\n{BIG}")
    return [*out, AIMessage("done")]


def question(qid: str, key: str, index: int) -> Question:
    return Question(qid=qid, type="tool_output", question="?", reference=key, evidence_keys=[key],
                    evidence_messages=[index])


def make_case(messages: list[BaseMessage], questions: list[Question] | None = None) -> Case:
    return Case(case_id="c", instance_id="i", repo="r", source_row=0, trajectory_id="t", system_prompt="",
                messages=messages, tools=[], model_patch="", repo_root="/repo", questions=questions or [])


def policy(auto: dict, summarizer=None, micro: dict | None = NO_MICRO) -> CompactPolicy:
    return CompactPolicy(auto_compact=auto, micro_compact=micro,
                         context=PolicyContext(counter=COUNTER, summarizer=summarizer))


class Recorder:
    """A summarizer that keeps what it is sent and answers ``summary #N``."""

    name, calls_model = "recorder", False

    def __init__(self, echo: bool = False) -> None:
        self.inputs: list[list[BaseMessage]] = []
        self.echo = echo  # answer with every key of the input (a summary that loses nothing)

    def summarize(self, messages, prompt, profile=None):
        self.inputs.append(list(messages))
        text = f"summary #{len(self.inputs)}"
        if self.echo:
            keys = sorted({w for m in messages for w in content_text(m.content).split() if w.startswith("KEY-")})
            text += " " + " ".join(keys)
        return text, {"model": self.name, "calls": 1}


# --- the trigger rule ----------------------------------------------------------------


def test_the_trigger_fires_just_over_the_threshold_and_not_at_it() -> None:
    history = turn(4)
    second_call = 3  # the AI message whose history is messages[:3] (the request and one exchange)
    at = COUNTER.count_messages(history[:second_call])
    at_threshold = policy({**NATURAL, "context_window": at})(make_case(history))
    assert all(c["at_message"] > second_call for c in at_threshold.info["compactions"])  # equal: not over
    over = policy({**NATURAL, "context_window": at - 1})(make_case(history))
    first = over.info["compactions"][0]
    assert first["at_message"] == second_call and first["tokens_before"] == at
    assert first["tokens_before"] > over.info["threshold_tokens"]


def test_below_the_threshold_nothing_compacts_and_the_history_is_shown_as_is() -> None:
    history = turn(3)
    view = policy({**NATURAL, "context_window": 10 * COUNTER.count_messages(history)})(make_case(history))
    assert view.info["compactions"] == [] and view.summary is None and view.messages == history


def test_threshold_and_window_out_of_range_fail_with_one_line() -> None:
    for auto, key in (({"threshold": 0}, "threshold"), ({"threshold": 1.5}, "threshold"),
                      ({"context_window": 0}, "context_window")):
        with pytest.raises(ConfigError, match=f"arm.auto_compact.{key}"):
            policy({**NATURAL, **auto})


# --- repeated compaction -------------------------------------------------------------


def test_a_later_summary_receives_the_previous_summary_and_what_came_after_it() -> None:
    history = turn(12)
    window = COUNTER.count_messages(history[:9])  # about four exchanges per compaction
    recorder = Recorder()
    view = policy({**NATURAL, "context_window": window}, summarizer=recorder)(make_case(history))
    compactions = view.info["compactions"]
    assert len(compactions) >= 2 and view.summarizer_calls == len(compactions) == len(recorder.inputs)
    first, second = recorder.inputs[0], recorder.inputs[1]
    assert first[0] == history[0] and "summary #1" not in content_text(first[0].content)
    # the second summary prompt holds the first summary, the turn's request, then the newer work only
    assert "summary #1" in content_text(second[0].content) and second[1] == history[0]
    seen_first = {m.tool_call_id for m in first if isinstance(m, ToolMessage)}
    seen_second = {m.tool_call_id for m in second if isinstance(m, ToolMessage)}
    assert seen_second and not seen_first & seen_second
    # each record names its summarizer call; the view is the last summary, the request, the rest
    assert [c["summarizer_call"] for c in compactions] == list(range(len(compactions)))
    assert all(c["in_turn"] and not c["at_question"] for c in compactions)
    assert view.messages[1] == history[0] and view.summary == f"summary #{len(compactions)}"
    assert content_text(view.messages[0].content).endswith(view.summary)
    assert not view_problems(view.messages)
    assert view.info["auto_compact"]["fired_during_replay"] == len(compactions)


def test_with_a_tail_the_newest_work_stays_verbatim_after_the_request() -> None:
    history = turn(12)
    window = COUNTER.count_messages(history[:9])
    view = CompactPolicy(auto_compact={**NATURAL, "context_window": window}, micro_compact=NO_MICRO,
                         context=PolicyContext(counter=COUNTER, summarizer=Recorder(),
                                               mechanism={"stepcut": True, "tail_fraction": 0.3}))(make_case(history))
    assert len(view.info["compactions"]) >= 2
    assert view.messages[1] == history[0] and isinstance(view.messages[2], AIMessage)
    assert not view_problems(view.messages)


def test_the_forced_arm_records_no_generations() -> None:
    view = policy({"force": True}, summarizer=Recorder())(make_case(turn(3), [question("c:q", "KEY-r0", 2)]))
    assert "compactions" not in view.info and "evidence_generation" not in view.info


# --- generations of evidence ---------------------------------------------------------


def test_evidence_is_last_seen_in_the_generation_before_the_compaction_that_lost_it() -> None:
    history = turn(12)
    window = COUNTER.count_messages(history[:9])
    last = len(history) - 2  # the newest result: never summarized away
    questions = [question("c:early", "KEY-r0", 2), question("c:late", "KEY-r11", last),
                 question("c:absent", "KEY-nowhere", 2)]
    lossy = policy({**NATURAL, "context_window": window}, summarizer=Recorder())(make_case(history, questions))
    n = len(lossy.info["compactions"])
    assert n >= 2
    generation = lossy.info["evidence_generation"]
    assert generation == {"c:early": 0, "c:late": n, "c:absent": None}
    # a summary that keeps every key carries the early evidence through every generation
    keeping = policy({**NATURAL, "context_window": window}, summarizer=Recorder(echo=True))(
        make_case(history, questions))
    assert keeping.info["evidence_generation"]["c:early"] == len(keeping.info["compactions"])


# --- jobs: views.jsonl, metrics, config ----------------------------------------------


def test_views_jsonl_records_every_compaction_and_the_generation_per_question(tmp_path) -> None:
    out = tmp_path / "job"
    run(compose([f"output_dir={out}", "cache.enabled=false", "arm=compact", "arm.auto_compact.force=false",
                 "arm.auto_compact.context_window=2048"]))
    views = [json.loads(line) for line in (out / "views.jsonl").read_text().splitlines()]
    metrics = json.loads((out / "metrics.json").read_text())
    total = 0
    for view in views:
        info = view["info"]
        compactions = info["compactions"]
        total += len(compactions)
        assert "evidence_generation" not in info  # moved beside the evidence flags
        assert view["summarizer_calls"] == len(compactions) == len(info["summarizer_usage"])
        for number, record in enumerate(compactions):
            assert record["tokens_before"] > info["threshold_tokens"] > record["tokens_after"] or record["at_question"]
            assert record["summarizer_call"] == number
            assert record["summarizer_usage"] == info["summarizer_usage"][number]
            assert 0 < record["at_message"] <= view["full_messages"]
        for flags in view["evidence"].values():
            assert flags["generation"] is None or 0 <= flags["generation"] <= len(compactions)
            if flags["visible"]:  # shown to the question: seen in the last generation
                assert flags["generation"] == len(compactions)
    assert total >= len(views)  # the shipped sample's 2-5k histories compact at a 2k window
    assert metrics["compactions_per_case"] == pytest.approx(round(total / len(views), 3))
    assert sum(b["n"] for b in metrics["by_compactions"].values()) == metrics["n_headline_questions"]
    assert sum(metrics["evidence_last_seen_generation"].values()) == metrics["n_headline_questions"]


def test_a_forced_job_writes_the_records_it_always_wrote(tmp_path) -> None:
    out = tmp_path / "job"
    run(compose([f"output_dir={out}", "cache.enabled=false", "arm=compact", "dataset.limit=2"]))
    for line in (out / "views.jsonl").read_text().splitlines():
        view = json.loads(line)
        assert "compactions" not in view["info"]
        assert all("generation" not in flags for flags in view["evidence"].values())
    assert "compactions_per_case" not in json.loads((out / "metrics.json").read_text())


def test_real_histories_compact_one_to_three_times_at_16k_to_32k() -> None:
    cfg = compose(["dataset=local", f"dataset.path={DEV}", "arm=compact", "arm.auto_compact.force=false"])
    from bench.data.selection import load_cases

    cases = [c for c in load_cases(cfg.dataset, COUNTER).cases if 20_000 <= COUNTER.count_messages(c.messages) <= 40_000]
    assert cases
    for window in (16384, 32768):
        cfg.arm.auto_compact.context_window = window
        built = build_policy(cfg, COUNTER)
        counts = [len(built(case).info["compactions"]) for case in cases]
        assert all(1 <= n <= 3 for n in counts) if window == 16384 else max(counts) <= 1, (window, counts)


def _compose(*overrides: str, hydra: bool = False):
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(PROJECT / "conf"), version_base="1.3"):
        return hydra_compose("config", overrides=list(overrides), return_hydra_config=hydra)


def test_the_natural_trigger_keys_compose_and_build() -> None:
    cfg = _compose("arm=compact", "arm.auto_compact.force=false", "arm.auto_compact.context_window=16384",
                   "arm.auto_compact.threshold=0.75")
    built = build_policy(cfg, COUNTER)
    assert built.auto_compact.force is False and built.auto_compact.threshold_tokens == int(0.75 * 16384)
    default = build_policy(_compose("arm=compact"), COUNTER)
    assert default.auto_compact.force is True and default.auto_compact.context_window == 131072


def test_experiment_windows_sweeps_the_context_window_of_the_natural_trigger() -> None:
    cfg = _compose("+experiment=windows", hydra=True)
    params = {k: [v.strip() for v in str(vals).split(",")] for k, vals in cfg.hydra.sweeper.params.items()}
    assert params == {"arm.auto_compact.context_window": ["16384", "24576", "32768"], "seed": ["0", "1", "2"]}
    assert cfg.arm.name == "compact" and cfg.arm.auto_compact.force is False
    assert str(cfg.hydra.sweep.dir).endswith("_windows")
    assert "experiment" in cfg.hydra.job.config.override_dirname.exclude_keys
    for window in params["arm.auto_compact.context_window"]:
        job = _compose("+experiment=windows", f"arm.auto_compact.context_window={window}")
        assert build_policy(job, COUNTER).auto_compact.threshold_tokens == int(0.8 * int(window))


def test_a_bad_window_on_the_command_line_is_one_clear_line(tmp_path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "HYDRA_FULL_ERROR"}
    done = subprocess.run([sys.executable, "-m", "bench.main", "arm=compact", "arm.auto_compact.force=false",
                           "arm.auto_compact.context_window=0"], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 2 and "arm.auto_compact.context_window" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.slow  # a subprocess sweep of two jobs
def test_windows_multirun_offline_on_the_sample_reports_compactions(tmp_path) -> None:
    sweep = tmp_path / "sweep"
    env = {k: v for k, v in os.environ.items() if not k.startswith("LANGFUSE_")}
    command = [sys.executable, "-m", "bench.main", "-m", "+experiment=windows", "seed=0",
               "arm.auto_compact.context_window=2048,4096", f"hydra.sweep.dir={sweep}", "cache.enabled=false"]
    done = subprocess.run(command, cwd=PROJECT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    jobs = pd.read_csv(sweep / "report" / "jobs.csv").sort_values("context_window")
    assert list(jobs["context_window"]) == [2048, 4096] and set(jobs["status"]) == {"complete"}
    small, large = jobs["compactions_per_case"]
    assert small > large > 0  # a smaller window compacts more often
    for _, row in jobs.iterrows():
        metrics = json.loads((Path(row["path"]) / "metrics.json").read_text())
        assert row["compactions_per_case"] == pytest.approx(metrics["compactions_per_case"])
        for count, block in metrics["by_compactions"].items():
            assert row[f"ncomp.{count}"] == pytest.approx(block["accuracy"]) or block["accuracy"] is None
    report = (sweep / "report" / "report.md").read_text()
    assert "Compaction as lived" in report and "context_window=2048" in report
    assert "Compaction as lived" in (sweep / "report" / "report.html").read_text()


def test_with_a_model_summarizer_each_compaction_is_one_cached_request_that_carries_the_last_summary(tmp_path):
    from fake_openai import FakeOpenAI

    def job(out: Path, url: str) -> list[dict]:
        run(compose([f"output_dir={out}", f"cache.path={tmp_path / 'cache.sqlite'}", "dataset.limit=4",
                     "arm=compact", "arm.auto_compact.force=false", "arm.auto_compact.context_window=2048",
                     "summarizer=openai", f"summarizer.base_url={url}", "summarizer.api_key_env=null",
                     "summarizer.backoff_base=0.01"]))
        return [json.loads(line) for line in (out / "views.jsonl").read_text().splitlines()]

    with FakeOpenAI(summary_chars=400, keep_raw=True) as server:
        views = job(tmp_path / "first", server.base_url)
        requests = [json.loads(body) for _, body in server.raw]
        again = job(tmp_path / "second", server.base_url)
        assert len(server.raw) == len(requests)  # the rerun's summaries all came from the response cache
    counts = [len(v["info"]["compactions"]) for v in views]
    summaries = [r for r in requests if not r.get("tools")]
    assert sum(counts) == len(summaries) and max(counts) >= 2
    calls = [json.loads(line) for line in (tmp_path / "first" / "calls.jsonl").read_text().splitlines()]
    assert sum(1 for c in calls if c.get("kind") == "summarizer") == sum(counts)
    # every compaction after a case's first sends the previous summary along with what came after it
    carrying = [r for r in summaries if any("(fake):" in json.dumps(m.get("content")) for m in r["messages"])]
    assert len(carrying) == sum(counts) - sum(1 for n in counts if n)
    def same(records: list[dict]) -> list:  # a cached reply's usage says it was a cache hit
        return [[{k: c[k] for k in c if k != "summarizer_usage"} for c in v["info"]["compactions"]] for v in records]

    assert same(again) == same(views) and [v["summary"] for v in again] == [v["summary"] for v in views]
    assert all(c["summarizer_usage"]["cache_hits"] == 1 for v in again for c in v["info"]["compactions"])
