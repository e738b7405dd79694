"""The per-arm metrics of a run: answers, abstentions, net score, costs, arm 6's width strata,
the G2 reading and the risk-coverage curve. Pure functions over result rows."""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from evals.results import ArmRows, ResultRow
from evals.score import ABSTAINED, CORRECT, NO_ANSWER, WRONG, row_outcome

# The width strata of arm 6 (G4); widths above the last bucket join it.
WIDTH_BUCKETS = ("0", "1", "2", "3+")
G2_MARGIN_PP = 5.0


def _ratio(numerator: float, denominator: float) -> float | None:
    """``numerator / denominator``; None for a zero denominator."""
    return numerator / denominator if denominator else None


def abstention_metrics(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Answers, abstentions and the net score of one arm (result rows, or any rows with
    their outcome fields).

    ``correct`` counts right answers plus abstentions on unanswerable items; ``answered`` the
    items that got an answer (right or wrong); ``coverage`` answered over items;
    ``accuracy_answered`` (selective accuracy) right answers over answered; ``net_score`` right
    answers minus wrong ones, so abstaining scores 0 and a wrong answer costs a point.
    """
    n = len(rows)
    counts = Counter(row_outcome(r) for r in rows)
    unanswerable = [r for r in rows if r.get("answerable") is False]
    correct_abstentions = sum(row_outcome(r) == ABSTAINED for r in unanswerable)
    answered = counts[CORRECT] + counts[WRONG]
    return {
        "items": n,
        "correct": counts[CORRECT] + correct_abstentions,
        "correct_answers": counts[CORRECT],
        "wrong_answers": counts[WRONG],
        "accuracy": _ratio(counts[CORRECT] + correct_abstentions, n),
        "answered": answered,
        "coverage": _ratio(answered, n),
        "accuracy_answered": _ratio(counts[CORRECT], answered),
        "abstained": counts[ABSTAINED],
        "no_answer": counts[NO_ANSWER],
        "unanswerable_items": len(unanswerable),
        "correct_abstentions": correct_abstentions,
        "wrong_on_unanswerable": sum(row_outcome(r) == WRONG for r in unanswerable),
        "net_score": counts[CORRECT] - counts[WRONG],
        "net_per_item": _ratio(counts[CORRECT] - counts[WRONG], n),
    }


def arm_metrics(rows: Sequence[ResultRow]) -> dict[str, Any]:
    """Metrics of one arm over its result rows: `abstention_metrics` plus costs and usage.

    ``accuracy`` counts errors, refusals and missing answers as wrong, except that abstaining
    on an unanswerable item is right. ``cost_usd`` is None when any row's cost is unknown
    (``cost_usd_known`` keeps the known part); ``cost_per_correct_usd`` is None when cost is
    unknown or nothing is correct; ``correct_per_usd`` is None when cost is unknown or zero.
    """
    n = len(rows)
    scored = abstention_metrics(rows)
    correct = scored["correct"]
    refused = sum(bool(r.get("refused")) for r in rows)
    errors = sum(bool(r.get("error")) for r in rows)
    costs = [r.get("cost_usd") for r in rows]
    cost_known = all(isinstance(c, int | float) for c in costs)
    cost = sum(float(r.get("cost_usd_known") or 0.0) for r in rows)
    tokens = [r.get("tokens") for r in rows]
    tokens_known = all(isinstance(t, int) for t in tokens)
    qa = [r for r in rows if r.get("kind") == "qa"]
    return {
        **scored,
        "mean_f1": _ratio(sum(float(r.get("f1") or 0.0) for r in qa), len(qa)),
        "refusals": refused,
        "refusal_rate": _ratio(refused, n),
        "errors": errors,
        "missing_answer_line": sum(r.get("answer_format") == "missing" for r in rows),
        "cost_usd": cost if cost_known else None,
        "cost_usd_known": cost,
        "cost_per_correct_usd": cost / correct if cost_known and correct else None,
        "correct_per_usd": correct / cost if cost_known and cost > 0 else None,
        "mean_latency_s": _ratio(sum(float(r.get("latency_s") or 0.0) for r in rows), n),
        "tokens": sum(t for t in tokens if isinstance(t, int)) if tokens_known else None,
        "tokens_per_item": _ratio(sum(t for t in tokens if isinstance(t, int)), n)
        if tokens_known
        else None,
        "calls_per_item": _ratio(sum(int(r.get("n_calls") or 0) for r in rows), n),
    }


def _bucket(width: Any) -> str | None:
    """The width stratum of a row's support width; None for no conclusion."""
    if not isinstance(width, int) or width < 0:
        return None
    return WIDTH_BUCKETS[min(width, len(WIDTH_BUCKETS) - 1)]


def width_strata(rows: Sequence[ResultRow]) -> dict[str, Any]:
    """Arm 6 by support width of the chosen conclusion (G4).

    Returns ``{"buckets": {bucket: {"items", "answered", "correct", "accuracy_answered"}},
    "no_conclusion": int, "g4": {...}}``. Accuracy is over answered items only: a refusal is
    not a wrong conclusion. The G4 reading compares width >= 2 against width 1 and checks that
    accuracy does not fall from one bucket to the next (buckets 1, 2, 3+ that have answers).
    """
    buckets: dict[str, dict[str, int]] = {
        b: {"items": 0, "answered": 0, "correct": 0} for b in WIDTH_BUCKETS
    }
    no_conclusion = 0
    for row in rows:
        bucket = _bucket(row.get("width"))
        if bucket is None:
            no_conclusion += 1
            continue
        buckets[bucket]["items"] += 1
        if not row.get("refused") and not row.get("error"):
            buckets[bucket]["answered"] += 1
            buckets[bucket]["correct"] += bool(row.get("correct"))
    accuracy = {b: _ratio(v["correct"], v["answered"]) for b, v in buckets.items()}
    table = {b: {**v, "accuracy_answered": accuracy[b]} for b, v in buckets.items()}
    wide_answered = sum(buckets[b]["answered"] for b in ("2", "3+"))
    wide = _ratio(sum(buckets[b]["correct"] for b in ("2", "3+")), wide_answered)
    series = [acc for b in ("1", "2", "3+") if (acc := accuracy[b]) is not None]
    monotone = all(a <= b for a, b in itertools.pairwise(series))
    narrow = accuracy["1"]
    if narrow is None or wide is None:
        verdict = "not enough data (needs answered items of width 1 and of width >= 2)"
    elif wide > narrow and monotone:
        verdict = "holds"
    else:
        verdict = "does not hold"
    return {
        "buckets": table,
        "no_conclusion": no_conclusion,
        "g4": {
            "accuracy_width_1": narrow,
            "accuracy_width_2_plus": wide,
            "answered_width_1": buckets["1"]["answered"],
            "answered_width_2_plus": wide_answered,
            "monotone": monotone,
            "verdict": verdict,
        },
    }


# The arms G2 compares arm 6 with: naive revisit, verbatim re-injection, self-consistency.
G2_ARMS = (2, 3, 7)


def g2_reading(arms: Mapping[int, ArmRows]) -> dict[str, Any]:
    """G2: arm 6 against arms 2, 3 and 7 (self-consistency), on the items both have.

    Two readings. ``verdict`` (accuracy): met when arm 6 is at least `G2_MARGIN_PP` points more
    accurate than each compared arm at equal or lower total cost; cost comparisons with unknown
    costs are unknown (None) and do not meet it. ``net_verdict``: met when arm 6's net score
    (right minus wrong answers) is higher than each compared arm's.
    """
    compared = [other for other in G2_ARMS if other in arms]
    if 6 not in arms or not compared:
        return {
            "verdict": "not applicable (needs arm 6 and arm 2, 3 or 7)",
            "net_verdict": "not applicable",
            "versus": {},
        }
    versus: dict[str, Any] = {}
    met = net_met = True
    for other in compared:
        common = sorted(arms[6].keys() & arms[other].keys())
        mine = arm_metrics([arms[6][i] for i in common])
        theirs = arm_metrics([arms[other][i] for i in common])
        delta = (
            100 * (mine["accuracy"] - theirs["accuracy"])
            if mine["accuracy"] is not None and theirs["accuracy"] is not None
            else None
        )
        cheaper = (
            mine["cost_usd"] <= theirs["cost_usd"] + 1e-12
            if mine["cost_usd"] is not None and theirs["cost_usd"] is not None
            else None
        )
        versus[str(other)] = {
            "items": len(common),
            "accuracy_delta_pp": delta,
            "cost_usd_arm6": mine["cost_usd"],
            "cost_usd_other": theirs["cost_usd"],
            "equal_or_lower_cost": cheaper,
            "net_arm6": mine["net_score"],
            "net_other": theirs["net_score"],
            "calls_arm6": mine["calls_per_item"],
            "calls_other": theirs["calls_per_item"],
        }
        met = met and delta is not None and delta >= G2_MARGIN_PP and cheaper is True
        net_met = net_met and bool(common) and mine["net_score"] > theirs["net_score"]
    return {
        "verdict": "met" if met else "not met",
        "net_verdict": "met" if net_met else "not met",
        "versus": versus,
    }


def risk_coverage(rows: Sequence[ResultRow]) -> list[dict[str, Any]]:
    """The risk-coverage curve of an arm that scores its own confidence (arm 6: support width;
    arm 7: vote share), [] for an arm that does not.

    Answering only when confidence >= t, for each distinct t from the highest down: one point
    ``{"threshold", "coverage", "risk", "answered"}`` where coverage is answered items over all
    items and risk is wrong answers over answered ones. O(n log n).
    """
    answered = [r for r in rows if row_outcome(r) in (CORRECT, WRONG)]
    scored = [
        (confidence, r)
        for r in answered
        if isinstance(confidence := r.get("confidence"), int | float)
    ]
    if not scored or not rows:
        return []
    scored.sort(key=lambda pair: -float(pair[0]))
    points = []
    wrong = 0
    for position, (confidence, row) in enumerate(scored, start=1):
        wrong += row_outcome(row) == WRONG
        last = position == len(scored)
        if last or float(scored[position][0]) != float(confidence):
            points.append(
                {
                    "threshold": confidence,
                    "answered": position,
                    "coverage": position / len(rows),
                    "risk": wrong / position,
                }
            )
    return points
