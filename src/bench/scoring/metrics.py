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
from bench.scoring.panel import panel_metrics
from bench.stats import METHOD, METHOD_TYPES, accuracy_interval, detectable_difference, ratio_interval
from bench.store.schema import STALE_REASON, VERDICTS

__all__ = ["compute_metrics", "budget_metrics", "lower_bound", "LOWER_BOUND_NOTE", "metric_case", "QUESTION_FIELDS", "VIEW_OMITTED", "CASE_OMITTED", "SCORE_OMITTED", "question_depth_label", "DISTANCE_BUCKETS", "distance_bucket", "headline_questions", "instance_clusters"]

# Tokens back from the end of the history to the latest message that shows the answer.
DISTANCE_BUCKETS = (("<2k", 0, 2_000), ("2-8k", 2_000, 8_000), ("8-32k", 8_000, 32_000), (">32k", 32_000, None))


# The offline reader's model name (bench.answering.evidence_reader.EvidenceReader.name): with it every answer
# measures whether the evidence is available in the view, not what a model would answer.
OFFLINE_READER = "offline-evidence-reader"
OFFLINE_MEASURE = "evidence available (offline reader)"


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


def distance_bucket(question: dict[str, Any]) -> str | None:
    """The distance bucket of a question (by ``nearest_back`` tokens; None when unknown)."""
    back = question.get("nearest_back") or question.get("evidence_back")
    if not back:
        return None
    tokens = back.get("tokens", 0)
    for label, low, high in DISTANCE_BUCKETS:
        if tokens >= low and (high is None or tokens < high):
            return label
    return None


def _rate(numerator: float, denominator: float) -> float | None:
    return round(numerator / denominator, 4) if denominator else None


# What the metrics read of a question, and of a view: a job keeps only these of its cases and views
# (a case set of any size; the rest is in cases.jsonl and views.jsonl).
QUESTION_FIELDS = ("qid", "type", "in_task_text", "evidence_back", "nearest_back", "depth")
VIEW_OMITTED = ("messages", "summary")
CASE_OMITTED = ("messages", "tools", "system_prompt", "model_patch")  # what a report reads of cases: the rest
SCORE_OMITTED = ("prompt", "raw")  # the judge's prompt and unparsed reply


def metric_case(case: dict[str, Any]) -> dict[str, Any]:
    """A ``cases.jsonl`` record as :func:`compute_metrics` reads it: ids and its questions' :data:`QUESTION_FIELDS`."""
    return {"case_id": case["case_id"], "instance_id": case.get("instance_id"),
            "questions": [{k: q[k] for k in QUESTION_FIELDS if k in q} for q in case["questions"]]}


def headline_questions(cases: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """qid -> question (with its case's instance as ``_instance``), in_task_text ones left out."""
    return {q["qid"]: {**q, "_instance": c.get("instance_id") or c["case_id"]}
            for c in cases for q in c["questions"] if not q.get("in_task_text")}


def instance_clusters(hits: Iterable[tuple[str, bool]]) -> list[tuple[int, int]]:
    """Per instance, in instance order: (hits, questions), from ``(instance, hit)`` pairs (one
    per question, of one job or pooled over several): the clusters of the bootstrap intervals."""
    sums: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for instance, hit in hits:
        row = sums[instance]
        row[0] += 1 if hit else 0
        row[1] += 1
    return [(v[0], v[1]) for _, v in sorted(sums.items())]


def _clusters(questions: dict[str, dict[str, Any]], hit: Callable[[str], bool]) -> list[tuple[int, int]]:
    """Per instance: (questions for which ``hit(qid)``, questions)."""
    return instance_clusters((question["_instance"], hit(qid)) for qid, question in questions.items())


JUDGED = ("correct", "wrong", "abstained")  # verdicts that score an answer (unscored and missing do not)


def _verdict_block(qids: list[str], verdict_of: dict[str, str]) -> dict[str, Any]:
    counts = Counter(verdict_of.get(q, "missing") for q in qids)
    judged = any(counts[v] for v in JUDGED)  # no scored answer is no accuracy (null), not 0%
    return {"n": len(qids), "accuracy": _rate(counts["correct"], len(qids)) if judged else None,
            **{v: counts.get(v, 0) for v in VERDICTS}}


def question_depth_label(question: dict[str, Any]) -> str | None:
    """A question's depth (``depth``, else the bucket of its earliest evidence; None: unknown)."""
    if question.get("depth"):
        return question["depth"]
    back = question.get("evidence_back")
    return distance_bucket({"evidence_back": back}) if back else None


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
                "accuracy": _rate(sum(verdict_of.get(q) == "correct" for q in cell), len(cell)),
                "accuracy_ci": _interval([verdict_of.get(q) == "correct" for q in cell],
                                         [cell[q]["_instance"] for q in cell]),
                "n_flagged": len(seen),
                "evidence_visible": _rate(sum(visible(q) for q in seen), len(seen)),
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
        "accuracy": _rate(verdicts["correct"], n),
        "measures": figures["measures"],  # "accuracy", or "evidence available (offline reader)" (model=offline)
        "accuracy_ci": _interval(hits, instances, types=templates, generalize_types=generalize_types),
        "detectable_difference": (detectable_difference(hits, None, instances, types=templates,
                                                        generalize_types=generalize_types) if hits else None),
        "interval_method": METHOD_TYPES if generalize_types else METHOD,
        "accuracy_all_questions": _rate(sum(1 for q in every if correct(q)), len(every)),
        "in_task_text": _verdict_block(flagged, verdict_of),
        "verdicts": {v: verdicts.get(v, 0) for v in (*VERDICTS, "missing")},
        "confidently_wrong_rate": _rate(verdicts["wrong"] - hedged_wrong, n),
        "hedged_wrong_rate": _rate(hedged_wrong, n),
        "abstain_rate": _rate(verdicts["abstained"], n),
        "stale": sum(1 for qid in questions if qid in stale),
        "by_type": {t: {**_verdict_block(qids, verdict_of),
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
        metrics["by_type"][t] = {**_verdict_block([], verdict_of),
                                 "n_in_task_text": sum(1 for q in flagged if every[q]["type"] == t)}
    flags = {qid: f for v in views for qid, f in (v.get("evidence") or {}).items()}
    buckets: dict[str, list[str]] = defaultdict(list)
    for qid, question in questions.items():
        label = distance_bucket(question)
        if label:
            buckets[label].append(qid)
    metrics["by_distance"] = {
        label: {**_verdict_block(buckets[label], verdict_of),
                "evidence_visible": _rate(sum(bool(flags.get(q, {}).get("visible")) for q in buckets[label]
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
            tokens_kept_ratio=_rate(kept, full),
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
                "visible": _rate(sum(flags[q]["visible"] for q in seen), len(seen)),
                "recoverable": _rate(sum(flags[q]["recoverable"] for q in seen), len(seen)),
            }
        all_qids = [q for q in questions if q in flags]
        metrics["evidence_visible_rate"] = _rate(sum(flags[q]["visible"] for q in all_qids), len(all_qids))
        metrics["evidence_recoverable_rate"] = _rate(
            sum(flags[q]["recoverable"] for q in all_qids), len(all_qids))
        metrics["evidence_by_type"] = evidence
    if any("compactions" in (v.get("info") or {}) for v in views):
        case_of = {q["qid"]: c["case_id"] for c in cases for q in c["questions"]}
        metrics.update(_compaction_metrics(questions, case_of, views, flags, verdict_of))
    if full_correct is not None:
        base = {q: questions[q] for q in questions if q in full_correct}
        metrics["accuracy_relative_to_full"] = _rate(sum(correct(q) for q in base), len(base))
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


def _compaction_metrics(questions: dict[str, dict[str, Any]], case_of: dict[str, str], views: list[dict[str, Any]],
                        flags: dict[str, dict[str, Any]], verdict_of: dict[str, str]) -> dict[str, Any]:
    """Natural-trigger compaction (``info.compactions`` in the views): compactions per case,
    accuracy by the number of compactions its case went through, and per headline question
    the generation its evidence was last seen in (``never``: not even in the full history)."""
    count = {v["case_id"]: len((v.get("info") or {}).get("compactions") or []) for v in views}
    by_count: dict[int, list[str]] = defaultdict(list)
    for qid in questions:
        if case_of.get(qid) in count:
            by_count[count[case_of[qid]]].append(qid)
    last_seen = Counter(
        "never" if flags[q].get("generation") is None else str(flags[q]["generation"])
        for q in questions if q in flags and "generation" in flags[q])
    survived = [q for q in questions if q in flags and "generation" in flags[q]]
    return {
        "compactions_per_case": round(sum(count.values()) / len(count), 3) if count else None,
        "compactions_max": max(count.values(), default=0),
        "by_compactions": {str(n): _verdict_block(qids, verdict_of) for n, qids in sorted(by_count.items())},
        "evidence_last_seen_generation": dict(sorted(last_seen.items())),
        "evidence_survived_compactions": _rate(
            sum(1 for q in survived if flags[q]["generation"] is not None
                and flags[q]["generation"] == count.get(case_of.get(q))), len(survived)),
    }


def budget_metrics(views: list[dict[str, Any]]) -> dict[str, Any] | None:
    """What an arm with ``arm.budget`` kept against its target (``views.jsonl`` ``budget``), or None
    without a budget: the target and realized shares of each case's history tokens (means over the
    views), the median realized / target, and the views more than 20% over their target."""
    records = [(v, v["budget"]) for v in views if isinstance(v.get("budget"), dict)]
    if not records:
        return None
    ratios = sorted(float(b["realized_over_target"]) for _, b in records if b.get("realized_over_target") is not None)
    over = [v["case_id"] for v, b in records if b.get("over")]
    first = records[0][1]
    return {
        "value": first.get("value"), "kind": first.get("kind"), "n_views": len(records),
        "target_share": _rate(sum(min(b["target_tokens"], v["full_tokens"]) / v["full_tokens"]
                                  for v, b in records if v["full_tokens"]), len(records)),
        "realized_share": _rate(sum(v["kept_tokens"] / v["full_tokens"] for v, _ in records if v["full_tokens"]),
                                len(records)),
        "mean_target_tokens": round(sum(b["target_tokens"] for _, b in records) / len(records), 1),
        "mean_realized_tokens": round(sum(v["kept_tokens"] for v, _ in records) / len(records), 1),
        "median_realized_over_target": round(ratios[len(ratios) // 2] if len(ratios) % 2 else
                                             (ratios[len(ratios) // 2 - 1] + ratios[len(ratios) // 2]) / 2, 4)
        if ratios else None,
        "n_over": len(over),
        "over_cases": over[:20],  # the first 20; every view's record says "over"
    }


LOWER_BOUND_NOTE = ("summaries written by the offline extractive stand-in (no model): what the view keeps through "
                    "them is a lower bound of what a model's summary would keep")


def lower_bound(views: list[dict[str, Any]], policy: dict[str, Any]) -> dict[str, Any] | None:
    """A job whose views hold summaries of the extractive stand-in (the arm's declaration says its
    summarizer calls no model): its figures are a lower bound, never ranked against exact ones."""
    with_summary = sum(1 for v in views if v.get("summarizer_calls"))
    if not policy.get("stand_in_summary") or not with_summary:
        return None
    return {"summarizer": policy.get("summarizer"), "views_with_summary": with_summary, "note": LOWER_BOUND_NOTE}
