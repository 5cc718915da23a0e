"""Issue 17 items 1-2: evidence depth buckets, nearest-target selection, guessable drops,
``questions.depths`` in Hydra, and the metrics' type x depth cells."""

from __future__ import annotations

import pytest
from hydra import compose, initialize_config_dir

from bench.config.checks import ConfigError, validate
from bench.data.selection import load_cases
from bench.questions import add_questions
from bench.questions.depth import DEPTHS, check_depths, depth_of, pick_depths, present_depths
from bench.questions.guess import drop_templates, guess_reason, header_only, readable_in_question
from bench.scoring.metrics import compute_metrics
from bench.store.schema import Question
from bench.text.tokens import TokenCounter

from paths import CONF_DIR, DEV_PARQUET

CONF = CONF_DIR
DEV = DEV_PARQUET


def compose_with(*overrides: str):
    with initialize_config_dir(config_dir=str(CONF), version_base=None):
        return compose("config", overrides=list(overrides))


@pytest.fixture(scope="module")
def counter() -> TokenCounter:
    return TokenCounter()


@pytest.fixture(scope="module")
def dev_cases(counter):
    cfg = compose_with("dataset=local", f"dataset.path={DEV}")
    return load_cases(cfg.dataset, counter, depths=list(cfg.questions.depths)).cases


def _q(tokens: int, qid: str = "c:tool_output") -> Question:
    return Question(qid=qid, type="tool_output", question="?", reference=str(tokens), evidence_keys=[],
                    evidence_messages=[0], evidence_back={"messages": 1, "tokens": tokens})


# --- buckets ---------------------------------------------------------------------------------

@pytest.mark.parametrize(("tokens", "label"), [(0, "<2k"), (1_999, "<2k"), (2_000, "2-8k"), (7_999, "2-8k"),
                                               (8_000, "8-32k"), (31_999, "8-32k"), (32_000, ">32k")])
def test_bucket_boundaries(tokens, label):
    assert depth_of(tokens) == label


def test_buckets_present_follow_the_history_length():
    assert present_depths(1_500, DEPTHS) == ["<2k"]
    assert present_depths(2_000, DEPTHS) == ["<2k"]  # nothing lies 2,000 tokens back or more
    assert present_depths(2_001, DEPTHS) == ["<2k", "2-8k"]
    assert present_depths(40_000, ["8-32k", ">32k"]) == ["8-32k", ">32k"]


def test_unknown_depth_label_is_refused():
    assert check_depths([">32k", "<2k"]) == ["<2k", ">32k"]
    assert check_depths(None) is None
    with pytest.raises(ValueError, match="unknown depth '3k'"):
        check_depths(["3k"])


# --- nearest target ----------------------------------------------------------------------------

def test_one_target_per_bucket_the_earliest_inside_it():
    candidates = [_q(30_000), _q(9_000), _q(5_000), _q(3_000), _q(500)]
    chosen, empty = pick_depths(candidates, DEPTHS, 33_000)
    assert [q.evidence_back["tokens"] for q in chosen] == [30_000, 5_000, 500]
    assert [q.depth for q in chosen] == ["8-32k", "2-8k", "<2k"]
    assert empty == [">32k"]  # its nearest target (30k) already answers 8-32k


def test_a_bucket_without_targets_takes_the_nearest_when_its_own_bucket_is_not_asked():
    chosen, empty = pick_depths([_q(9_000), _q(500)], [">32k"], 40_000)
    assert [q.evidence_back["tokens"] for q in chosen] == [9_000] and chosen[0].depth == "8-32k"
    assert empty == [">32k"]


def test_real_long_runs_get_questions_at_several_depths(dev_cases):
    depths = {q.depth for c in dev_cases for q in c.questions if q.type == "tool_output"}
    assert len(depths) >= 3  # not every question at the start of the history any more
    for case in dev_cases:
        qids = [q.qid for q in case.questions]
        assert len(qids) == len(set(qids))
        for q in case.questions:
            assert q.depth is not None and q.qid == f"{case.case_id}:{q.type}@{q.depth}"
            assert depth_of(q.evidence_back["tokens"]) == q.depth


def test_call_count_gets_the_depth_of_its_earliest_call(dev_cases):
    for case in dev_cases:
        for q in case.questions:
            if q.type == "call_count":
                total = TokenCounter().count_messages(case.messages)
                first = min(q.evidence_messages)
                back = total - TokenCounter().count_messages(case.messages[:first])
                assert q.evidence_back["tokens"] == back and q.depth == depth_of(back)


def test_null_depths_keeps_the_earliest_target_and_the_old_ids(counter):
    cfg = compose_with("dataset=local", f"dataset.path={DEV}", "dataset.limit=3")
    cases = load_cases(cfg.dataset, counter, depths=None).cases
    for case in cases:
        types = [q.type for q in case.questions]
        assert len(types) == len(set(types))
        assert all(q.qid == f"{case.case_id}:{q.type}" for q in case.questions)


# --- guessable ---------------------------------------------------------------------------------

def test_header_only_directory_listing_from_dev_is_dropped(counter):
    cfg = compose_with("dataset=local", f"dataset.path={DEV}", "dataset.limit=2")
    case = load_cases(cfg.dataset, counter, depths=None).cases[1]  # its first listing: the repo root, empty
    reasons = [d.reason for d in case.dropped_questions if d.type == "tool_output"]
    assert any(r.startswith("header-only") for r in reasons)
    listing = ("Here's the files and directories up to 2 levels deep in /workspace/python__mypy__0.820, "
               "excluding hidden items:\n/workspace/python__mypy__0.820")
    assert header_only(listing, '{"command": "view", "path": "/workspace/python__mypy__0.820"}')
    assert not header_only(listing + "\n/workspace/python__mypy__0.820/mypy/", '{"path": "/workspace/python__mypy__0.820"}')
    assert header_only("total 0") and header_only("   ") and not header_only("total 16\ndrwxr-xr-x 3 root root common")


def test_reference_readable_in_the_question_is_dropped():
    made = Question(qid="c:tool_output", type="tool_output", question="?",
                    reference="File created successfully at: /workspace/acme/reproduce.py", evidence_keys=[],
                    evidence_messages=[], target={"tool": "str_replace_editor", "ordinal": 1, "arguments": {
                        "command": "create", "path": "/workspace/acme/reproduce.py", "file_text": "print(1)"}})
    assert readable_in_question(made) and guess_reason(made).startswith("readable in the question")
    echoed = Question(qid="c:tool_value", type="tool_value", question="?", reference="L1001", evidence_keys=[],
                      evidence_messages=[], target={"tool": "get_details_by_id", "arguments": {"id": "L1001"},
                                                    "ordinal": 1, "field": "line_id"})
    assert guess_reason(echoed) is not None
    fresh = Question(qid="c:tool_value", type="tool_value", question="?", reference="1985-06-15", evidence_keys=[],
                     evidence_messages=[], target={"tool": "get_customer_by_phone", "ordinal": 1,
                                                   "arguments": {"phone_number": "555-123-2002"}, "field": "dob"})
    assert guess_reason(fresh) is None


def test_template_answers_of_the_ops_sample_are_dropped(counter):
    cfg = compose_with("dataset=ops")
    cases = load_cases(cfg.dataset, counter, depths=None).cases
    reasons = [d.reason for c in cases for d in c.dropped_questions]
    assert any(r.startswith("template answer") for r in reasons)
    # the get_details_by_id reply every case shares is asked nowhere now
    assert not any(q.type == "tool_output" and q.target["tool"] == "get_details_by_id"
                   and '"line_id": "L1001"' in q.reference for c in cases for q in c.questions)


def test_template_needs_three_cases_or_a_fifth_and_never_one(counter):
    cfg = compose_with("dataset=ops")
    cases = load_cases(cfg.dataset, counter, depths=None).cases
    first, second = cases[0], cases[1]
    for case in (first, second):  # fresh questions, then one reference shared by exactly these two
        add_questions(case, counter, ["tool_value"])
        case.questions[0].reference = "shared-value"
        case.questions[0].target["tool"] = "t"
    def shared_dropped(subset) -> int:  # drops of the shared reference (other templates may recur in a subset)
        drop_templates(subset, min_cases=3, share=0.2)
        return sum(d.reason.startswith("template answer") and "of `t`" in d.reason for c in subset
                   for d in c.dropped_questions)

    assert shared_dropped(cases[:20]) == 0  # 2 of 20 cases: 10%, fewer than 3
    assert shared_dropped(cases[:10]) == 2  # 2 of 10 cases: 20%
    lone = cases[2]
    add_questions(lone, counter, ["tool_value"])
    assert drop_templates([lone], min_cases=3, share=0.2) == 0  # one case is never a template


def _value_question(qtype: str, case_id: str, reference: str) -> Question:
    target = {"tool": "get_line_status", "arguments": {"line": case_id}, "field": "status"}
    if qtype == "user_fact":
        target = {"tool": "get_customer_by_phone", "argument": "phone_number"}
    return Question(qid=f"{case_id}:{qtype}", type=qtype, question="?", reference=reference, evidence_keys=[],
                    evidence_messages=[], target=target)


@pytest.mark.parametrize(("qtype", "dropped"), [("latest_value", 3), ("user_fact", 0)])
def test_a_tool_reply_shared_by_three_cases_is_a_template_a_user_value_is_not(counter, qtype, dropped):
    """latest_value's reference is what a tool returned (a shared reply is guessable); user_fact's
    comes from the user (one persona's phone number in several cases is not guessable in one)."""
    cases = load_cases(compose_with("dataset=ops").dataset, counter, depths=None).cases[:3]
    for case in cases:
        case.questions = [_value_question(qtype, case.case_id, "active")]
        case.dropped_questions = []
    assert drop_templates(cases, min_cases=3, share=0.2) == dropped
    assert all(bool(c.dropped_questions) == bool(dropped) for c in cases)


def test_a_latest_value_quoted_in_the_question_is_readable_there():
    question = _value_question("latest_value", "L1001", "L1001")
    assert guess_reason(question) == "readable in the question (the quoted arguments or tool name)"


# --- config ------------------------------------------------------------------------------------

def test_depths_compose_default_null_and_subset():
    assert list(compose_with().questions.depths) == list(DEPTHS)
    assert compose_with("questions.depths=null").questions.depths is None
    assert list(compose_with("questions.depths=[\">32k\"]").questions.depths) == [">32k"]
    validate(compose_with("questions.depths=null"))
    with pytest.raises(ConfigError, match="questions.depths: unknown depth"):
        validate(compose_with("questions.depths=[deep]"))


# --- metrics -----------------------------------------------------------------------------------

def test_metrics_cells_by_type_and_depth(dev_cases):
    records = [c.to_dict() for c in dev_cases]
    questions = [q for r in records for q in r["questions"] if not q["in_task_text"]]
    correct = {q["qid"] for q in questions if q["depth"] == "<2k"}
    scores = [{"qid": q["qid"], "verdict": "correct" if q["qid"] in correct else "wrong"} for q in questions]
    views = [{"evidence": {q["qid"]: {"visible": q["qid"] in correct, "recoverable": False} for q in questions},
              "kept_tokens": 1, "full_tokens": 1, "kept_messages": 1, "full_messages": 1}]
    cells = compute_metrics(records, views, [], scores)["by_type_depth"]
    total = 0
    for qtype, by in cells.items():
        for label, cell in by.items():
            expect = [q for q in questions if q["type"] == qtype and q["depth"] == label]
            total += cell["n"]
            assert cell["n"] == len(expect) and cell["n_flagged"] == len(expect)
            want = 1.0 if label == "<2k" else 0.0
            assert cell["accuracy"] == want and cell["evidence_visible"] == want
            instances = len({q["_instance"] for q in expect if "_instance" in q} or
                            {r["instance_id"] for r in records for q in r["questions"] if q in expect})
            for ci in (cell["accuracy_ci"], cell["evidence_visible_ci"]):  # never zero-width
                low, high = ci
                if instances == 1:  # one instance: no spread between instances to measure, the whole range
                    assert (low, high) == (0.0, 1.0)
                else:  # all right or all wrong: the one-sided bound over the instances
                    assert want in (low, high) and 0 < high - low < 1
    assert total == len(questions)
    mixed = cells["tool_output"]
    assert set(mixed) >= {"<2k", "2-8k"}
