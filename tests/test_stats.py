"""`evals.stats` and the statistics in every summary, checked against hand-computed values."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evals.compare import arm_statistics
from evals.reporting import render_statistics
from evals.score import ABSTAINED, CORRECT, WRONG, row_outcome
from evals.stats import (
    aurc,
    compare_arms,
    mcnemar_exact,
    paired_bootstrap,
    selective_accuracy_at,
)


def row(outcome: str, confidence: float | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "outcome": outcome,
        "correct": outcome == CORRECT,
        "confidence": confidence,
        "answerable": True,
        "extra": extra,
    }


def test_mcnemar_matches_the_binomial_tail_computed_by_hand() -> None:
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(5, 0) == pytest.approx(2 / 32)  # 2 * C(5,0) / 2^5
    assert mcnemar_exact(3, 1) == pytest.approx(10 / 16)  # 2 * (C(4,0) + C(4,1)) / 2^4
    assert mcnemar_exact(1, 3) == mcnemar_exact(3, 1)
    assert mcnemar_exact(2, 2) == 1.0  # capped at 1


def test_mcnemar_refuses_negative_counts() -> None:
    with pytest.raises(ValueError, match=">= 0"):
        mcnemar_exact(-1, 2)


def test_a_bootstrap_of_identical_arms_is_zero_and_of_opposite_arms_is_one() -> None:
    same = paired_bootstrap([1, 0, 1], [1, 0, 1])
    assert same == {"diff": 0.0, "low": 0.0, "high": 0.0}
    apart = paired_bootstrap([1, 1, 1, 1], [0, 0, 0, 0])
    assert apart == {"diff": 1.0, "low": 1.0, "high": 1.0}


def test_a_bootstrap_is_deterministic_for_a_seed_and_brackets_the_observed_difference() -> None:
    a = [1, 0, 1, 1, 0, 1, 0, 1, 1, 1]
    b = [0, 0, 1, 0, 0, 1, 1, 0, 1, 0]
    first = paired_bootstrap(a, b, seed=3)
    assert first == paired_bootstrap(a, b, seed=3)
    assert first["diff"] == pytest.approx(0.3)
    assert first["low"] is not None and first["high"] is not None
    assert first["low"] <= 0.3 <= first["high"]
    assert first["high"] - first["low"] > 0.2  # ten items cannot give a narrow interval


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(-1, 1), st.integers(-1, 1)), min_size=2, max_size=30))
def test_the_bootstrap_interval_lies_within_the_range_of_the_paired_differences(
    pairs: list[tuple[int, int]],
) -> None:
    a, b = [float(x) for x, _ in pairs], [float(y) for _, y in pairs]
    result = paired_bootstrap(a, b, resamples=300)
    deltas = [x - y for x, y in pairs]
    assert result["low"] is not None and result["high"] is not None
    assert min(deltas) <= result["low"] <= result["high"] <= max(deltas)


def test_a_bootstrap_refuses_unpaired_scores() -> None:
    with pytest.raises(ValueError, match="differ in length"):
        paired_bootstrap([1, 0], [1])
    assert paired_bootstrap([], []) == {"diff": None, "low": None, "high": None}


def test_aurc_averages_the_risk_over_answered_ranks_most_confident_first() -> None:
    rows = [row(CORRECT, 3), row(WRONG, 2), row(CORRECT, 1), row(ABSTAINED)]
    result = aurc(rows, row_outcome)
    # risk(1) = 0, risk(2) = 1/2, risk(3) = 1/3
    assert result["aurc"] == pytest.approx((0 + 1 / 2 + 1 / 3) / 3)
    assert result["max_coverage"] == 0.75 and result["answered"] == 3


def test_aurc_gives_a_tie_group_its_expected_risk_instead_of_an_arbitrary_order() -> None:
    tied = aurc([row(CORRECT, 1), row(WRONG, 1)], row_outcome)
    assert tied["aurc"] == pytest.approx(0.5)


def test_an_arm_without_confidence_is_one_point_whose_area_is_its_error_rate() -> None:
    rows = [row(CORRECT), row(CORRECT), row(WRONG)]
    assert aurc(rows, row_outcome)["aurc"] == pytest.approx(1 / 3)
    assert aurc([row(ABSTAINED)], row_outcome) == {
        "aurc": None,
        "max_coverage": 0.0,
        "answered": 0,
    }


def test_arm_6_answers_are_ranked_by_width_then_run_support() -> None:
    # Same width 2: the answer with more runs behind it comes first.
    rows = [
        row(WRONG, 2, rank=[2, 1]),
        row(CORRECT, 2, rank=[2, 3]),
        row(WRONG, 1, rank=[1, 5]),
    ]
    assert selective_accuracy_at(rows, 1 / 3, row_outcome) == 1.0
    assert aurc(rows, row_outcome)["aurc"] == pytest.approx((0 + 1 / 2 + 2 / 3) / 3)


def test_selective_accuracy_takes_the_most_confident_answers_up_to_the_coverage() -> None:
    rows = [row(CORRECT, 3), row(WRONG, 2), row(CORRECT, 1), row(ABSTAINED)]
    assert selective_accuracy_at(rows, 0.25, row_outcome) == 1.0
    assert selective_accuracy_at(rows, 0.5, row_outcome) == 0.5
    assert selective_accuracy_at(rows, 1.0, row_outcome) is None  # answers only 3 of 4
    # A tie group cut at the boundary counts with its expected accuracy.
    assert selective_accuracy_at([row(CORRECT, 1), row(WRONG, 1)], 0.5, row_outcome) == 0.5


def test_comparing_two_arms_pairs_items_by_id_and_says_when_the_interval_excludes_zero() -> None:
    arm_a = {f"i{n}": row(CORRECT) for n in range(12)}
    arm_b = {f"i{n}": row(WRONG) for n in range(12)}
    arm_b["extra-item"] = row(CORRECT)
    result = compare_arms(arm_a, arm_b, row_outcome)
    assert result["items"] == 12
    assert result["accuracy_diff"]["diff"] == 1.0
    assert result["net_diff"]["diff"] == 2.0  # +1 against -1 on every item
    assert result["mcnemar"] == {"only_a": 12, "only_b": 0, "p": pytest.approx(2 / 2**12)}
    assert result["distinguishable"] == {"accuracy": True, "net": True}
    even = compare_arms(arm_a, dict(arm_a), row_outcome)
    assert even["distinguishable"] == {"accuracy": False, "net": False}
    assert math.isclose(even["mcnemar"]["p"], 1.0)


def test_the_statistics_section_names_each_pair_and_says_plainly_what_is_distinguishable() -> None:
    arms = {
        1: {f"i{n}": row(CORRECT if n % 2 else WRONG) for n in range(8)},
        6: {f"i{n}": row(CORRECT if n % 2 else ABSTAINED, 2) for n in range(8)},
        7: {f"i{n}": row(CORRECT if n % 4 else WRONG, 0.5) for n in range(8)},
    }
    stats = arm_statistics(arms)
    assert sorted(stats["pairs"]) == ["6-1", "6-7"]
    # Arm 6 is right exactly where arm 1 is: no discordant pair at all.
    assert stats["pairs"]["6-1"]["mcnemar"]["p"] == 1.0
    assert stats["matched_coverage_6_7"]["coverage"] == 0.5
    assert stats["matched_coverage_6_7"]["accuracy_a"] == 1.0
    text = render_statistics(stats)
    assert "| arm 6 vs arm 1 | 8 |" in text
    assert "not distinguishable from zero" in text
    assert "| 6 | 0.000 | 4 | 50.0% |" in text
