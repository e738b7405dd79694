"""The loop's pure rules (`orchestrator.loop.policy`), checked one by one."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from orchestrator.checks.assess import Assessment, Candidate
from orchestrator.loop.policy import attack_counts, stop_rule
from orchestrator.records.reasons import StopReason


def test_an_attack_counts_when_enough_runs_draw_it() -> None:
    assert attack_counts(2, 4, usable_runs=6)  # half the target's runs, and two of them
    assert not attack_counts(1, 2, usable_runs=6)  # one run's stray attack
    assert not attack_counts(2, 5, usable_runs=6)  # fewer than half of the target's runs
    assert attack_counts(1, 1, usable_runs=1)  # a single usable run may object alone


def test_a_models_claim_cannot_defeat_a_cited_document_sentence() -> None:
    # The 1.5B drew its answer "yes" as an attack on the sentence that supported it, in two
    # of six runs: by the quorum alone that counted.
    assert attack_counts(2, 4, usable_runs=6)
    assert not attack_counts(2, 4, usable_runs=6, on_evidence=True)
    # Two cited sentences that conflict still meet as an attack.
    assert attack_counts(2, 4, usable_runs=6, on_evidence=True, from_evidence=True)


@given(
    st.integers(0, 10),
    st.integers(0, 10),
    st.integers(1, 10),
    st.booleans(),
)
def test_an_attack_from_evidence_is_judged_by_the_quorum_alone(
    drawn: int, target: int, usable: int, on_evidence: bool
) -> None:
    plain = attack_counts(drawn, target, usable)
    assert (
        attack_counts(drawn, target, usable, on_evidence=on_evidence, from_evidence=True) is plain
    )


def _candidate(node_id: str, width: int, flags: tuple[str, ...] = ()) -> Candidate:
    return Candidate(
        node_id=node_id,
        claim=node_id,
        refuted=False,
        surviving=width > 0,
        width=width,
        max_flow=float(width),
        paths=(),
        run_ids=("r1",),
        flags=flags,
    )


def _assessment(*candidates: Candidate) -> Assessment:
    labels: dict[str, list[str]] = {"in": [], "out": [], "undecided": [], "surviving": []}
    isolated = ({"id": "r1:i1", "on_path": True, "candidate": candidates[0].node_id},)
    return Assessment(candidates, labels, (), isolated)


def _stop(current: Assessment) -> str | None:
    stop = stop_rule(
        current, None, [], 1, k=2, m_verify=3, budget_remaining=5, budget_limit=6,
        deadline_reached=False,
    )  # fmt: skip
    return None if stop is None else stop.reason


def test_no_verification_is_spent_when_no_candidate_has_an_unflagged_argument() -> None:
    """A verdict can refute or confirm a claim, never add an argument or lift a flag."""
    refused = _assessment(_candidate("answer:a", 0), _candidate("answer:b", 2, ("answer_missing",)))
    assert _stop(refused) == StopReason.NOTHING_TO_GAIN


def test_a_candidate_with_an_unflagged_argument_still_gets_its_round() -> None:
    assert _stop(_assessment(_candidate("answer:a", 1))) is None
