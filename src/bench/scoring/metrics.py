"""Job metrics from the stored records (so a resumed job and a report agree).

    metrics = compute_metrics(cases, views, answers, scores, full_correct)

The headline counts only questions whose answer is *not* readable in the task text
(``in_task_text`` false): an arm that keeps the first user message would otherwise
"remember" them without remembering anything. The flagged questions are reported apart
(``in_task_text``). Accuracy and accuracy relative to full carry 95% intervals about the case
set's fixed mix of question types over instances like these (:mod:`bench.stats`, one-way by
instance, types as strata; ``interval_method``: ``instances``, or ``instances+types`` with
``stats.generalize_types=true``), and ``detectable_difference`` is the smallest accuracy
difference the case set detects (null: none up to 100 points; docs/uncertainty.md); a wrong answer is confidently wrong unless it hedges
(:mod:`bench.scoring.hedges`, counted in ``hedged_wrong_rate``); ``by_distance`` splits the
headline by how far back the evidence last shows (``nearest_back`` tokens); ``by_type_depth``
splits it by type and evidence depth (the question's ``depth``: tokens back to its earliest
evidence), each cell with n and 95% intervals for accuracy and evidence-visible.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from typing import Any

from bench.scoring.hedges import is_hedged
from bench.scoring.metric_records import (
    CASE_OMITTED,
    OFFLINE_MEASURE,
    OFFLINE_READER,
    QUESTION_FIELDS,
    SCORE_OMITTED,
    VIEW_OMITTED,
    metric_case,
)
from bench.scoring.panel import panel_metrics
from bench.scoring.question_groups import (
    DISTANCE_BUCKETS,
    JUDGED,
    distance_bucket,
    headline_questions,
    instance_clusters,
    question_depth_label,
    rate,
    verdict_block,
)
from bench.scoring.view_figures import LOWER_BOUND_NOTE, budget_metrics, compaction_metrics, lower_bound
from bench.stats import METHOD, METHOD_TYPES, accuracy_interval, detectable_difference, ratio_interval
from bench.store.schema import STALE_REASON, VERDICTS

# compute_metrics, and the names imported from this module (bench/metrics.py before issue 33) before they moved to
# the modules beside it: metric_records (the fields read), question_groups (headline, buckets, verdict counts),
# view_figures (budget, lower bound, compactions)
__all__ = ["compute_metrics", "budget_metrics", "lower_bound", "LOWER_BOUND_NOTE", "metric_case", "QUESTION_FIELDS",
           "VIEW_OMITTED", "CASE_OMITTED", "SCORE_OMITTED", "question_depth_label", "DISTANCE_BUCKETS", "distance_bucket",
           "headline_questions", "instance_clusters", "OFFLINE_READER", "OFFLINE_MEASURE"]


def _answer_figures(answers: Iterable[dict[str, Any]], wrong: set[str]) -> dict[str, Any]:
    """What the metrics read of the answers, in one pass (a job's answers may be a stream of its
    records): what the headline measures (model accuracy, or with ``model=offline`` evidence
    availability), outcomes, retrievals, usage, and how many ``wrong`` answers hedge."""
    models: set[str | None] = set()
    outcomes: Counter[str] = Counter()
    usage: defaultdict[str, float] = defaultdict(int)  # integers stay integers (token counts), latency sums floats
    retrievals, hedges = 0, {}  # a wrong answer's qid -> whether it hedges (its last record's, as its verdict is)
    for answer in answers:
        models.add((answer.get("usage") or {}).get("model"))
        outcomes[answer.get("outcome", "answered")] += 1
        retrievals += len(answer.get("retrievals") or [])
        for key, value in (answer.get("usage") or {}).items():
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                usage[key] += value
        if answer["qid"] in wrong:
            hedges[answer["qid"]] = is_hedged(answer.get("answer") or "")
    return {"measures": OFFLINE_MEASURE if models == {OFFLINE_READER} else "accuracy", "outcomes": dict(outcomes),
            "retrievals": retrievals, "usage": {k: round(v, 3) for k, v in usage.items()},
            "hedged_wrong": sum(hedges.values())}


def _clusters(questions: dict[str, dict[str, Any]], hit: Callable[[str], bool]) -> list[tuple[int, int]]:
    """Per instance: (questions for which ``hit(qid)``, questions)."""
    return instance_clusters((question["_instance"], hit(qid)) for qid, question in questions.items())


def _type_depth_cells(questions: dict[str, dict[str, Any]], verdict_of: dict[str, str],
                      flags: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """type -> depth -> {n, accuracy, accuracy_ci, n_flagged, evidence_visible, evidence_visible_ci}
    (headline questions; intervals: :func:`bench.stats.accuracy_interval` by instance, within one type)."""
    cells: dict[str, dict[str, dict[str, dict[str, Any]]]] = defaultdict(lambda: defaultdict(dict))
    for qid, question in questions.items():
        label = question_depth_label(question)
        if label:
            cells[question["type"]][label][qid] = question
    out: dict[str, dict[str, Any]] = {}
    for qtype in sorted(cells):
        out[qtype] = {}
        for label, _, _ in DISTANCE_BUCKETS:
            cell = cells[qtype].get(label)
            if not cell:
                continue
            seen = {q: v for q, v in cell.items() if q in flags}
            visible = lambda qid: bool(flags[qid].get("visible"))  # noqa: E731
            out[qtype][label] = {
                "n": len(cell),
                "accuracy": rate(sum(verdict_of.get(q) == "correct" for q in cell), len(cell)),
                "accuracy_ci": _interval([verdict_of.get(q) == "correct" for q in cell],
                                         [cell[q]["_instance"] for q in cell]),
                "n_flagged": len(seen),
                "evidence_visible": rate(sum(visible(q) for q in seen), len(seen)),
                "evidence_visible_ci": _interval([visible(q) for q in seen], [seen[q]["_instance"] for q in seen]),
            }
    return out


def _interval(hits: list[bool], instances: list[str], **options: Any) -> tuple[float, float] | None:
    """The accuracy interval of these questions (None when there is none)."""
    return accuracy_interval(hits, instances, **options) if hits else None


def compute_metrics(
    cases: list[dict[str, Any]],
    views: list[dict[str, Any]],
    answers: Iterable[dict[str, Any]],
    scores: list[dict[str, Any]],
    full_correct: set[str] | None = None,
    policy: dict[str, Any] | None = None,
    *,
    reference: bool = False,
    generalize_types: bool = False,
) -> dict[str, Any]:
    """Accuracy (headline, with its interval) overall, per type and per distance; verdict
    counts; tokens; evidence and usage. ``full_correct``: qids the full arm answered
    correctly, for accuracy relative to full; ``policy``: the arm's declaration (``lower_bound``
    when its views hold the extractive stand-in's summaries); ``reference``: this job is the full arm
    itself (relative to itself: exactly 1, interval [1, 1]); ``generalize_types``: intervals also over
    other question types (stats.generalize_types, the two-way method)."""
    every = {q["qid"]: q for c in cases for q in c["questions"]}
    questions = headline_questions(cases)
    flagged = [qid for qid in every if qid not in questions]
    verdict_of = {s["qid"]: s["verdict"] for s in scores}
    # wrong answers that gave a value an earlier call returned (latest_value): counted apart too
    stale = {s["qid"] for s in scores if s["verdict"] == "wrong" and str(s.get("reason") or "").startswith(STALE_REASON)}
    by_type: dict[str, list[str]] = defaultdict(list)
    for qid, question in questions.items():
        by_type[question["type"]].append(qid)
    verdicts = Counter(verdict_of.get(qid, "missing") for qid in questions)
    n = len(questions)
    correct = lambda qid: verdict_of.get(qid) == "correct"  # noqa: E731
    clusters = _clusters(questions, correct)
    headline = list(questions)
    hits = [correct(q) for q in headline]
    instances = [questions[q]["_instance"] for q in headline]
    templates = [questions[q]["type"] for q in headline]  # a question type recurs in every case
    figures = _answer_figures(answers, {q for q in headline if verdict_of.get(q) == "wrong"})  # answers read once
    hedged_wrong = figures["hedged_wrong"]
    metrics: dict[str, Any] = {
        "n_cases": len(cases),
        "n_questions": len(every),
        "n_headline_questions": n,
        "n_scored": sum(1 for qid in every if qid in verdict_of),
        "n_clusters": len(clusters),
        "accuracy": rate(verdicts["correct"], n),
        "measures": figures["measures"],  # "accuracy", or "evidence available (offline reader)" (model=offline)
        "accuracy_ci": _interval(hits, instances, types=templates, generalize_types=generalize_types),
        "detectable_difference": (detectable_difference(hits, None, instances, types=templates,
                                                        generalize_types=generalize_types) if hits else None),
        "interval_method": METHOD_TYPES if generalize_types else METHOD,
        "accuracy_all_questions": rate(sum(1 for q in every if correct(q)), len(every)),
        "in_task_text": verdict_block(flagged, verdict_of),
        "verdicts": {v: verdicts.get(v, 0) for v in (*VERDICTS, "missing")},
        "confidently_wrong_rate": rate(verdicts["wrong"] - hedged_wrong, n),
        "hedged_wrong_rate": rate(hedged_wrong, n),
        "abstain_rate": rate(verdicts["abstained"], n),
        "stale": sum(1 for qid in questions if qid in stale),
        "by_type": {t: {**verdict_block(qids, verdict_of),
                        "n_in_task_text": sum(1 for q in flagged if every[q]["type"] == t)}
                    for t, qids in sorted(by_type.items())},
    }
    for t, qids in by_type.items():
        if any(every[q]["type"] == "latest_value" for q in qids):
            metrics["by_type"][t]["stale"] = sum(1 for q in qids if q in stale)
    if not any(verdicts[v] for v in JUDGED):  # nothing scored (every call refused, a judge that always fails)
        metrics.update(accuracy=None, accuracy_ci=None, accuracy_all_questions=None, confidently_wrong_rate=None,
                       abstain_rate=None)
    for t in sorted({every[q]["type"] for q in flagged} - set(by_type)):
        metrics["by_type"][t] = {**verdict_block([], verdict_of),
                                 "n_in_task_text": sum(1 for q in flagged if every[q]["type"] == t)}
    flags = {qid: f for v in views for qid, f in (v.get("evidence") or {}).items()}
    buckets: dict[str, list[str]] = defaultdict(list)
    for qid, question in questions.items():
        label = distance_bucket(question)
        if label:
            buckets[label].append(qid)
    metrics["by_distance"] = {
        label: {**verdict_block(buckets[label], verdict_of),
                "evidence_visible": rate(sum(bool(flags.get(q, {}).get("visible")) for q in buckets[label]
                                              if q in flags), sum(1 for q in buckets[label] if q in flags))}
        for label, _, _ in DISTANCE_BUCKETS if buckets.get(label)
    }
    metrics["by_type_depth"] = _type_depth_cells(questions, verdict_of, flags)
    if views:
        kept = sum(v["kept_tokens"] for v in views)
        full = sum(v["full_tokens"] for v in views)
        metrics.update(
            mean_kept_tokens=round(kept / len(views), 1),
            mean_full_tokens=round(full / len(views), 1),
            mean_kept_messages=round(sum(v["kept_messages"] for v in views) / len(views), 1),
            mean_full_messages=round(sum(v["full_messages"] for v in views) / len(views), 1),
            tokens_kept_ratio=rate(kept, full),
            summarizer_calls=sum(v.get("summarizer_calls", 0) for v in views),
        )
        budget = budget_metrics(views)
        if budget is not None:
            metrics["budget"] = budget
        bound = lower_bound(views, policy or {})
        if bound is not None:
            metrics["lower_bound"] = bound
        evidence: dict[str, Any] = {}
        for qtype, qids in sorted(by_type.items()):
            seen = [q for q in qids if q in flags]
            evidence[qtype] = {
                "visible": rate(sum(flags[q]["visible"] for q in seen), len(seen)),
                "recoverable": rate(sum(flags[q]["recoverable"] for q in seen), len(seen)),
            }
        all_qids = [q for q in questions if q in flags]
        metrics["evidence_visible_rate"] = rate(sum(flags[q]["visible"] for q in all_qids), len(all_qids))
        metrics["evidence_recoverable_rate"] = rate(
            sum(flags[q]["recoverable"] for q in all_qids), len(all_qids))
        metrics["evidence_by_type"] = evidence
    if any("compactions" in (v.get("info") or {}) for v in views):
        case_of = {q["qid"]: c["case_id"] for c in cases for q in c["questions"]}
        metrics.update(compaction_metrics(questions, case_of, views, flags, verdict_of))
    if full_correct is not None:
        base = {q: questions[q] for q in questions if q in full_correct}
        metrics["accuracy_relative_to_full"] = rate(sum(correct(q) for q in base), len(base))
        # both-correct over full-correct, over every headline question: the full arm's variance counts;
        # the full arm relative to itself is 1 by construction, not an estimate
        in_full = [q in full_correct for q in headline]
        metrics["accuracy_relative_to_full_ci"] = (
            (1.0, 1.0) if reference and base else
            ratio_interval([h and f for h, f in zip(hits, in_full, strict=True)], in_full, instances,
                           types=templates, generalize_types=generalize_types) if any(in_full) else None)
        metrics["n_full_correct"] = len(base)
    metrics.update(outcomes=figures["outcomes"], retrievals=figures["retrievals"], usage=figures["usage"])
    panel = panel_metrics(scores)  # judge=panel: the members' agreement and their disagreements
    if panel is not None:
        metrics["panel"] = panel
    return metrics
