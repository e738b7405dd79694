"""How sure we are: paired intervals, exact McNemar tests and risk-coverage areas.

Every function is pure and deterministic (the bootstrap takes a seed). Inputs are per-item
result rows of `evals.run` (``raw/arm<N>.jsonl``), read through `evals.score.row_outcome`.

Per-item scores used throughout:

* *accuracy*: 1 for a right answer or an abstention on an unanswerable item, else 0 (the row's
  ``correct`` flag);
* *net*: +1 for a right answer, -1 for a wrong one (any answer to an unanswerable item is
  wrong), 0 for an abstention, a missing answer or an error.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from evals.score import CORRECT, WRONG

Row = Mapping[str, Any]
Outcome = Callable[[Row], str]

BOOTSTRAP_RESAMPLES = 10_000
LEVEL = 0.95


def net_points(row: Row, outcome_of: Outcome) -> int:
    """+1 right answer, -1 wrong answer, 0 otherwise."""
    result = outcome_of(row)
    return 1 if result == CORRECT else -1 if result == WRONG else 0


def paired_bootstrap(
    a: Sequence[float],
    b: Sequence[float],
    *,
    resamples: int = BOOTSTRAP_RESAMPLES,
    level: float = LEVEL,
    seed: int = 0,
) -> dict[str, float | None]:
    """Percentile bootstrap interval for mean(a) - mean(b) over paired items.

    Parameters
    ----------
    a, b : per-item scores of two arms on the same items, in the same order.
    resamples : bootstrap resamples (items drawn with replacement, pairs kept together).
    level : two-sided coverage of the interval.
    seed : seed of the resampling, so the same inputs give the same interval.

    Returns
    -------
    ``{"diff", "low", "high"}``; all None for no items. O(resamples * n).

    Raises
    ------
    ValueError : when ``a`` and ``b`` differ in length or ``level`` is not in (0, 1).
    """
    if len(a) != len(b):
        raise ValueError(f"paired scores differ in length: {len(a)} vs {len(b)}")
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    n = len(a)
    if n == 0:
        return {"diff": None, "low": None, "high": None}
    deltas = [x - y for x, y in zip(a, b, strict=True)]
    rng = random.Random(seed)
    means = sorted(sum(rng.choices(deltas, k=n)) / n for _ in range(resamples))
    tail = (1 - level) / 2
    low = means[max(0, math.floor(tail * resamples))]
    high = means[min(resamples - 1, math.ceil((1 - tail) * resamples) - 1)]
    return {"diff": sum(deltas) / n, "low": low, "high": high}


def mcnemar_exact(only_a: int, only_b: int) -> float:
    """Two-sided exact McNemar p-value from the discordant pairs.

    ``only_a``: items arm A got right and arm B did not; ``only_b``: the reverse. Under the
    null both are Binomial(only_a + only_b, 1/2); the p-value doubles the smaller tail (capped
    at 1). No discordant pairs gives 1.0. O(min(only_a, only_b)).
    """
    if only_a < 0 or only_b < 0:
        raise ValueError("discordant counts must be >= 0")
    n = only_a + only_b
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(only_a, only_b) + 1)) / (1 << n)
    return min(1.0, 2 * tail)


def _rank_value(row: Row) -> tuple[float, ...] | None:
    """An answered row's confidence as a sortable tuple: ``rank`` (e.g. arm 6's [width, run
    support]) when the row has one, else ``confidence``; None when it has neither."""
    rank = (row.get("extra") or {}).get("rank") if isinstance(row.get("extra"), dict) else None
    if isinstance(rank, list | tuple) and all(isinstance(v, int | float) for v in rank):
        return tuple(float(v) for v in rank)
    confidence = row.get("confidence")
    if isinstance(confidence, int | float) and not isinstance(confidence, bool):
        return (float(confidence),)
    return None


def ranked_answers(rows: Sequence[Row], outcome_of: Outcome) -> list[list[bool]]:
    """The arm's answered items as tie groups of right/wrong flags, most confident first.

    Answers without a confidence form one group after all scored ones (an arm that scores
    nothing, like arm 1, is a single group: one point on the curve).
    """
    answered = [r for r in rows if outcome_of(r) in (CORRECT, WRONG)]
    groups: dict[tuple[float, ...] | None, list[bool]] = {}
    for row in answered:
        groups.setdefault(_rank_value(row), []).append(outcome_of(row) == CORRECT)
    scored = sorted((k for k in groups if k is not None), reverse=True)
    ordered = [groups[k] for k in scored]
    if None in groups:
        ordered.append(groups[None])
    return ordered


def aurc(rows: Sequence[Row], outcome_of: Outcome) -> dict[str, float | None]:
    """Area under the arm's risk-coverage curve, and the coverage it reaches.

    Answers are taken most confident first; within a tie group the risk is the group's
    expected risk (ties are not broken arbitrarily). The area is the mean over the answered
    ranks k = 1..m of risk(k) = expected wrong answers among the first k / k: lower is better.
    An arm with one tie group (arm 1) has area equal to its error rate on answered items.
    ``max_coverage`` is m / items: the curve stops there, so compare areas only alongside it
    (and use `selective_accuracy_at` for matched coverage). None when nothing was answered.
    O(n log n).
    """
    groups = ranked_answers(rows, outcome_of)
    m = sum(len(g) for g in groups)
    if not rows or m == 0:
        return {"aurc": None, "max_coverage": 0.0 if rows else None, "answered": 0}
    total_risk = 0.0
    wrong_before = 0.0
    taken = 0
    for group in groups:
        wrong_rate = group.count(False) / len(group)
        for j in range(1, len(group) + 1):
            total_risk += (wrong_before + j * wrong_rate) / (taken + j)
        wrong_before += group.count(False)
        taken += len(group)
    return {"aurc": total_risk / m, "max_coverage": m / len(rows), "answered": m}


def selective_accuracy_at(
    rows: Sequence[Row], coverage: float, outcome_of: Outcome
) -> float | None:
    """Accuracy of the arm's most confident answers covering ``coverage`` of its items.

    Takes the first ``round(coverage * items)`` answers, most confident first; a tie group cut
    at the boundary contributes its expected accuracy. None when the arm answers fewer items
    than that, or when the count is 0. O(n log n).
    """
    wanted = round(coverage * len(rows))
    groups = ranked_answers(rows, outcome_of)
    if wanted <= 0 or wanted > sum(len(g) for g in groups):
        return None
    right = 0.0
    left = wanted
    for group in groups:
        take = min(left, len(group))
        right += take * group.count(True) / len(group)
        left -= take
        if not left:
            break
    return right / wanted


def compare_arms(
    rows_a: Mapping[str, Row],
    rows_b: Mapping[str, Row],
    outcome_of: Outcome,
    *,
    seed: int = 0,
) -> dict[str, Any]:
    """Arm A against arm B on the items both have (item id -> row).

    Returns the item count, bootstrap intervals for the difference in accuracy and in net
    score per item, the exact McNemar test on right/not right, and whether each interval
    excludes zero (``distinguishable``).
    """
    common = sorted(rows_a.keys() & rows_b.keys())
    acc_a = [float(bool(rows_a[i].get("correct"))) for i in common]
    acc_b = [float(bool(rows_b[i].get("correct"))) for i in common]
    net_a = [float(net_points(rows_a[i], outcome_of)) for i in common]
    net_b = [float(net_points(rows_b[i], outcome_of)) for i in common]
    only_a = sum(x > y for x, y in zip(acc_a, acc_b, strict=True))
    only_b = sum(y > x for x, y in zip(acc_a, acc_b, strict=True))
    accuracy = paired_bootstrap(acc_a, acc_b, seed=seed)
    net = paired_bootstrap(net_a, net_b, seed=seed)
    return {
        "items": len(common),
        "accuracy_diff": accuracy,
        "net_diff": net,
        "mcnemar": {"only_a": only_a, "only_b": only_b, "p": mcnemar_exact(only_a, only_b)},
        "distinguishable": {
            "accuracy": _excludes_zero(accuracy),
            "net": _excludes_zero(net),
        },
    }


def _excludes_zero(interval: Mapping[str, float | None]) -> bool:
    low, high = interval["low"], interval["high"]
    return low is not None and high is not None and (low > 0 or high < 0)


def matched_coverage(
    rows_a: Sequence[Row], rows_b: Sequence[Row], outcome_of: Outcome
) -> dict[str, float | None]:
    """Selective accuracy of two arms at the larger coverage both reach."""
    cover_a = aurc(rows_a, outcome_of)["max_coverage"] or 0.0
    cover_b = aurc(rows_b, outcome_of)["max_coverage"] or 0.0
    coverage = min(cover_a, cover_b)
    return {
        "coverage": coverage,
        "accuracy_a": selective_accuracy_at(rows_a, coverage, outcome_of),
        "accuracy_b": selective_accuracy_at(rows_b, coverage, outcome_of),
    }
