"""Self-consistency (arm 7) and the scoring rules that credit honest abstention."""

from __future__ import annotations

import pytest

from evals.arms import ArmSettings, self_consistency
from evals.datasets import load_dataset
from evals.metrics import abstention_metrics, g2_reading, risk_coverage
from evals.results import ResultRow, result_row
from evals.score import ABSTAINED, CORRECT, ERROR, NO_ANSWER, WRONG, outcome, row_outcome
from evals.vote import ABSTAIN, MAJORITY, NO_VOTES, TIE, majority_vote
from orchestrator.llm.testing import ScriptedClient

MULTIHOP = load_dataset("multihop", limit=1)
UNANSWERABLE = load_dataset("multihop_unanswerable", limit=1)

# --- the vote ------------------------------------------------------------------------------


def test_answers_that_normalise_alike_vote_together_and_the_common_spelling_wins() -> None:
    vote = majority_vote(["Quelmere.", "quelmere", "Quelheim", "Quelmere."])
    assert vote.outcome == MAJORITY
    assert vote.answer == "Quelmere." and vote.key == "quelmere"
    assert vote.counts == {"quelheim": 1, "quelmere": 3}
    assert vote.share == pytest.approx(0.75)


def test_an_answer_with_and_without_the_kind_asked_for_votes_together() -> None:
    vote = majority_vote(["Teven", "Teven River", "Sabra"], frozenset({"river"}))
    assert (vote.outcome, vote.key, vote.answer) == (MAJORITY, "teven", "Teven River")
    assert majority_vote(["Teven", "Teven River", "Sabra"]).outcome == TIE


def test_numbers_in_different_notations_are_one_answer() -> None:
    vote = majority_vote(["1,200", "1200.0", "1300"])
    assert (vote.outcome, vote.key, vote.voters) == (MAJORITY, "1200", 3)


def test_a_tie_at_the_top_is_reported_as_a_tie_and_gives_no_answer() -> None:
    vote = majority_vote(["Quelheim", "Quelmere", None])
    assert vote.outcome == TIE
    assert vote.answer is None and vote.share is None


def test_a_winning_refusal_is_an_abstention() -> None:
    vote = majority_vote(["unknown", "cannot be determined", "Quelheim"])
    assert vote.outcome == ABSTAIN and vote.answer is None
    assert vote.counts == {"quelheim": 1, "unanswerable": 2}


def test_samples_without_a_readable_answer_do_not_vote() -> None:
    assert majority_vote([None, None]).outcome == NO_VOTES
    vote = majority_vote([None, "7", None])
    assert vote.outcome == MAJORITY and vote.share == pytest.approx(1 / 3)


# --- arm 7 ---------------------------------------------------------------------------------


def sampled(*answers: str) -> ScriptedClient:
    return ScriptedClient([f"Reasoning.\nANSWER: {a}" for a in answers])


def test_self_consistency_samples_in_fresh_contexts_at_temperature_with_distinct_seeds() -> None:
    client = sampled("Quelmere", "Quelmere", "Quelheim")
    settings = ArmSettings(samples=3, sample_temperature=0.7, seed=10)
    result = self_consistency(MULTIHOP[0], "m", client, settings=settings)
    assert result.answer == "Quelmere" and not result.refused
    assert len(result.calls) == 3
    assert [c["kwargs"]["seed"] for c in client.calls] == [10, 11, 12]
    assert {c["kwargs"]["temperature"] for c in client.calls} == {0.7}
    # Every sample is a fresh conversation: the same two messages, no earlier reply in them.
    assert all(len(c["messages"]) == 2 for c in client.calls)
    assert result.extra["votes"] == {"quelheim": 1, "quelmere": 2}
    assert result.extra["confidence"] == pytest.approx(2 / 3)


def test_a_tied_vote_is_not_answered_and_scores_as_an_abstention() -> None:
    result = self_consistency(
        MULTIHOP[0], "m", sampled("Quelmere", "Quelheim"), settings=ArmSettings(samples=2)
    )
    assert result.refused and result.answer is None
    assert result.extra["vote_outcome"] == TIE
    row = result_row(7, MULTIHOP[0], result, result.calls, 1.0, None)
    assert row["outcome"] == ABSTAINED and not row["correct"]
    assert abstention_metrics([row])["answered"] == 0


# --- outcomes ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("answerable", "answer", "refused", "correct", "error", "expected"),
    [
        (True, "Quelmere", False, True, False, CORRECT),
        (True, "Quelheim", False, False, False, WRONG),
        (True, None, True, False, False, ABSTAINED),
        (True, None, False, False, False, NO_ANSWER),
        (True, None, False, False, True, ERROR),
        (False, None, True, False, False, ABSTAINED),
        # Any answer to an item the evidence cannot settle is wrong, whatever it says.
        (False, "Yssra River", False, True, False, WRONG),
    ],
)
def test_each_result_has_one_outcome(
    answerable: bool, answer: str | None, refused: bool, correct: bool, error: bool, expected: str
) -> None:
    got = outcome(
        answerable=answerable, answer=answer, refused=refused, correct=correct, error=error
    )
    assert got == expected


def test_abstaining_on_an_unanswerable_item_scores_as_a_correct_abstention() -> None:
    item = UNANSWERABLE[0]
    refused = self_consistency(item, "m", sampled("unknown"), settings=ArmSettings(samples=1))
    row = result_row(7, item, refused, refused.calls, 1.0, None)
    assert row["answerable"] is False
    assert row["outcome"] == ABSTAINED and row["correct"] is True
    guessed = self_consistency(item, "m", sampled("Yssra River"), settings=ArmSettings(samples=1))
    wrong = result_row(7, item, guessed, guessed.calls, 1.0, None)
    assert wrong["outcome"] == WRONG and wrong["correct"] is False
    metrics = abstention_metrics([row, wrong])
    assert metrics["correct_abstentions"] == 1 and metrics["wrong_on_unanswerable"] == 1


def fake_row(
    outcome_: str, *, answerable: bool = True, confidence: float | None = None
) -> ResultRow:
    return {
        "id": f"{outcome_}-{answerable}-{confidence}-{id(object())}",
        "outcome": outcome_,
        "answerable": answerable,
        "confidence": confidence,
        "refused": outcome_ == ABSTAINED,
        "error": "boom" if outcome_ == ERROR else None,
    }


def test_net_score_is_right_answers_minus_wrong_answers_and_abstaining_scores_zero() -> None:
    rows = [
        fake_row(CORRECT),
        fake_row(CORRECT),
        fake_row(CORRECT),
        fake_row(WRONG),
        fake_row(ABSTAINED),
        fake_row(NO_ANSWER),
        fake_row(ERROR),
        fake_row(ABSTAINED, answerable=False),
        fake_row(WRONG, answerable=False),
        fake_row(ABSTAINED, answerable=False),
    ]
    m = abstention_metrics(rows)
    assert m["items"] == 10
    assert m["net_score"] == 3 - 2
    assert m["net_per_item"] == pytest.approx(0.1)
    assert (m["answered"], m["coverage"]) == (5, pytest.approx(0.5))
    assert m["accuracy_answered"] == pytest.approx(3 / 5)
    # Accuracy credits the two abstentions on unanswerable items, not the one on an answerable.
    assert m["correct"] == 5 and m["accuracy"] == pytest.approx(0.5)
    assert (m["abstained"], m["correct_abstentions"], m["wrong_on_unanswerable"]) == (3, 2, 1)
    assert (m["unanswerable_items"], m["no_answer"]) == (3, 1)


def test_rows_written_before_outcomes_were_recorded_get_theirs_from_their_fields() -> None:
    old = {"id": "a", "answer": "x", "correct": True, "refused": False, "error": None}
    assert row_outcome(old) == CORRECT
    assert row_outcome({**old, "answer": None, "refused": True}) == ABSTAINED


def test_the_risk_coverage_curve_answers_the_most_confident_items_first() -> None:
    rows = [
        fake_row(CORRECT, confidence=3),
        fake_row(WRONG, confidence=1),
        fake_row(CORRECT, confidence=1),
        fake_row(ABSTAINED),
    ]
    curve = risk_coverage(rows)
    assert [p["threshold"] for p in curve] == [3, 1]
    assert [p["coverage"] for p in curve] == [pytest.approx(0.25), pytest.approx(0.75)]
    assert [p["risk"] for p in curve] == [0.0, pytest.approx(1 / 3)]
    assert risk_coverage([fake_row(CORRECT)]) == []  # an arm without confidence has no curve


def test_g2_compares_arm_6_with_self_consistency_on_accuracy_and_net_score() -> None:
    def arm(*outcomes: str) -> dict[str, ResultRow]:
        rows: list[ResultRow] = [
            {**fake_row(o), "id": f"i{n}", "cost_usd": 0.0} for n, o in enumerate(outcomes)
        ]
        return {r["id"]: r for r in rows}

    arms = {6: arm(CORRECT, ABSTAINED, ABSTAINED), 7: arm(CORRECT, CORRECT, WRONG)}
    g2 = g2_reading(arms)
    versus = g2["versus"]["7"]
    assert (versus["net_arm6"], versus["net_other"]) == (1, 1)
    assert versus["accuracy_delta_pp"] == pytest.approx(100 * (1 / 3 - 2 / 3))
    assert g2["verdict"] == "not met" and g2["net_verdict"] == "not met"
    arms[7] = arm(CORRECT, WRONG, WRONG)
    assert g2_reading(arms)["net_verdict"] == "met"
