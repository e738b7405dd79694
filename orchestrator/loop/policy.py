"""The loop's rules, as pure functions: stop, decide, the attack quorum, the verdict rule and
the per-call seed.

Nothing here makes a call, touches the store, keeps time or takes a lock: every function reads
its arguments and returns a value, so each rule can be read, tested and replayed on its own.
The stages that apply these rules live in :mod:`orchestrator.loop.stages` and the driver that runs
them in :mod:`orchestrator.loop.driver`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import NamedTuple

from orchestrator.checks import Assessment, Candidate
from orchestrator.records import RefusalReason, StopReason

CONFIRMED_CONFIDENCE = 0.9
"""A claim a majority of verifiers supported gets at least this confidence."""
UNDETERMINED_CONFIDENCE = 0.5
"""A claim every verifier found not determinable gets at most this confidence."""


class Stop(NamedTuple):
    """Why the loop ended: a :class:`~orchestrator.records.reasons.StopReason` and a sentence."""

    reason: StopReason
    detail: str


def stop_rule(
    current: Assessment,
    previous: Assessment | None,
    interrogated: Sequence[str],
    usable_runs: int,
    *,
    k: int,
    m_verify: int,
    budget_remaining: int,
    budget_limit: int,
    deadline_reached: bool,
) -> Stop | None:
    """The first stop rule that holds, in order, or None to run another verification round.

    Parameters
    ----------
    current, previous : the assessment after this round and after the one before (None in the
        first round).
    interrogated : claims already verified (each is verified at most once per task).
    usable_runs : interrogation runs that put something into the graph.
    k, m_verify : the run's width target and verification calls per claim.
    budget_remaining, budget_limit : logical calls left and the cap.
    deadline_reached : whether the run's wall-clock budget is spent.

    Returns
    -------
    ``Stop(reason, detail)``: ``no_candidates``, ``no_disputes``, ``nothing_to_gain`` (no
    live candidate has an argument free of flags, which no verdict can change),
    ``width_reached`` (the ranking did not change in the last round and the top is grounded
    with width >= k),
    ``disputes_exhausted``, ``deadline_reached``, ``budget_exhausted`` (fewer calls left than
    one verification needs); None when none holds.
    """
    settled = _settled(current, previous, usable_runs, k=k)
    if settled is not None:
        return settled
    return _spent(
        current,
        interrogated,
        m_verify=m_verify,
        budget_remaining=budget_remaining,
        budget_limit=budget_limit,
        deadline_reached=deadline_reached,
    )


def _settled(
    current: Assessment, previous: Assessment | None, usable_runs: int, *, k: int
) -> Stop | None:
    """The stops read off the graph (:func:`stop_rule`'s first four): no candidate, no
    dispute, nothing a verdict could gain, or an unchanged ranking with a grounded top of
    width >= k; None when verifying could still change the outcome."""
    if not current.live_candidates:
        if usable_runs == 0:
            why = "no run produced a usable graph"
        elif not current.candidates:
            why = "no conclusion node was accepted into the graph"
        else:
            why = "every candidate answer was refuted"
        return Stop(StopReason.NO_CANDIDATES, why)
    if not current.disputed:
        return Stop(
            StopReason.NO_DISPUTES,
            "no contradiction pairs and no single-run load-bearing claims",
        )
    if all(c.width == 0 or c.flags for c in current.live_candidates):
        return Stop(
            StopReason.NOTHING_TO_GAIN,
            "no live candidate has an unflagged argument, and no verdict can give it one",
        )
    top = current.candidates[0]
    if (
        previous is not None
        and previous.snapshot() == current.snapshot()
        and top.grounded
        and top.width >= k
    ):
        return Stop(
            StopReason.WIDTH_REACHED,
            f"candidates unchanged by the last round and the top candidate has width "
            f"{top.width} >= k={k}",
        )
    return None


def _spent(
    current: Assessment,
    interrogated: Sequence[str],
    *,
    m_verify: int,
    budget_remaining: int,
    budget_limit: int,
    deadline_reached: bool,
) -> Stop | None:
    """The stops of a run that cannot verify more (:func:`stop_rule`'s last three): every
    disputed claim already verified, the wall-clock budget spent, or fewer calls left than
    one verification needs; None when another round can run."""
    untried = untried_disputes(current, interrogated)
    if not untried:
        return Stop(
            StopReason.DISPUTES_EXHAUSTED,
            f"{len(current.disputed)} disputed claim(s) remain, all already verified once",
        )
    if deadline_reached:
        return Stop(
            StopReason.DEADLINE,
            f"the run's wall-clock budget ran out; {len(untried)} disputed claim(s) unverified",
        )
    if budget_remaining < m_verify:
        return Stop(
            StopReason.BUDGET_EXHAUSTED,
            f"{budget_remaining} of {budget_limit} calls left, fewer than the "
            f"{m_verify} one verification needs; {len(untried)} disputed claim(s) unverified",
        )
    return None


def untried_disputes(current: Assessment, interrogated: Sequence[str]) -> list[str]:
    """The disputed claims of ``current`` never verified, in queue order."""
    return [node for node in current.disputed if node not in interrogated]


def decide(
    assessment: Assessment,
    usable_runs: int,
    unanswerable_runs: int = 0,
    *,
    has_evidence: bool = True,
    require_width: int | None = None,
    fragile: bool = False,
) -> tuple[str | None, Candidate | None]:
    """``(refusal_reason, None)`` or ``(None, chosen candidate)``.

    In order: ``no_evidence`` (a task without documents, which makes no call at all),
    ``all_runs_failed`` (no usable run), then, when there is no grounded top candidate,
    ``runs_found_no_answer`` (at least half the usable runs said the evidence does not decide
    the question) or else ``no_grounded_conclusion``; ``answer_fragile`` (``fragile``: the
    leave-the-argument-out run verified another answer); ``candidates_tied``; ``below_k`` (with
    ``require_width``, the ``--require-k`` width, and a smaller top width); otherwise the top
    candidate.

    Only a verified argument can stand against a verified answer: a run that says
    "unanswerable", or whose argument fails the checks, brings no argument, so it never vetoes
    an answer another run verified (issue 32: more calls must only add). A verified argument
    for another answer does (the ranking, then ``candidates_tied``), and so does a refuted
    premise (the candidate is no longer grounded).
    """
    if not has_evidence:
        return RefusalReason.NO_EVIDENCE, None
    if usable_runs == 0:
        return RefusalReason.ALL_RUNS_FAILED, None
    top = assessment.top
    if top is None or not top.grounded:
        if unanswerable_runs and 2 * unanswerable_runs >= usable_runs:
            return RefusalReason.UNANSWERABLE, None
        return RefusalReason.NO_GROUNDED, None
    if fragile:
        # The run that could not see the first argument's sentences saw less evidence: its
        # verified answer must not outrank the first, and the first has lost its footing.
        return RefusalReason.FRAGILE, None
    if assessment.top_tied:
        return RefusalReason.TIED, None
    if require_width is not None and top.width < require_width:
        return RefusalReason.BELOW_K, None
    return None, top


def attack_counts(
    drawn_by_runs: int,
    target_runs: int,
    usable_runs: int,
    *,
    on_evidence: bool = False,
    from_evidence: bool = False,
) -> bool:
    """The attack quorum: whether an attack edge drawn by ``drawn_by_runs`` interrogation runs
    counts against a claim that ``target_runs`` interrogation runs stand behind.

    It counts when its runs are at least half as many as the target's, and at least two when
    two or more runs are usable (``usable_runs``): one run's stray attack must not sink an
    answer five runs reached, while an objection runs repeat still counts. An attack on a
    cited document sentence (``on_evidence``) counts only when it comes from another cited
    sentence (``from_evidence``): a model's own claim cannot defeat the documents (whether a
    given says what its sentence says is the citation check's and the verifiers' business).
    The 1.5B drew its answer "yes" as an attack on the very sentence that supported it.
    """
    if on_evidence and not from_evidence:
        return False
    return 2 * drawn_by_runs >= target_runs and drawn_by_runs >= min(2, usable_runs)


def majority(m_verify: int) -> int:
    """Votes a verdict needs among ``m_verify`` verification calls (2 of 3)."""
    return m_verify // 2 + 1


def verdict_outcome(tally: Mapping[str | None, int], m_verify: int) -> str:
    """The verdict rule over one claim's ``m_verify`` votes.

    ``tally`` counts votes by verdict (``None``: a failed call or an unreadable reply, which
    counts toward no side). Returns ``refuted`` (a majority refuted), ``confirmed`` (a majority
    supported), ``not_determinable`` (every vote said so) or ``no_majority``.
    """
    needed = majority(m_verify)
    if tally.get("refuted", 0) >= needed:
        return "refuted"
    if tally.get("supported", 0) >= needed:
        return "confirmed"
    if tally.get("not_determinable", 0) == m_verify:
        return "not_determinable"
    return "no_majority"


def refutation_reason(refuted: int, m_verify: int, round_no: int, first: str | None) -> str:
    """The reason a refuted claim is marked with: the vote count and the first reason."""
    return (
        f"refuted by {refuted} of {m_verify} fresh verification calls "
        f"(round {round_no}): {first or 'no reason given'}"
    )


def call_seed(base: int | None, *parts: object) -> int | None:
    """A per-call seed derived from the run's ``base`` seed and the call's role and indices
    (None when unseeded); stable across processes (no ``hash()`` randomisation)."""
    if base is None:
        return None
    digest = hashlib.sha256(repr((base, *parts)).encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF
