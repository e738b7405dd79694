"""The loop's records, typed once: what the stages produce and
:class:`~orchestrator.loop.driver.LoopResult` carries into the report.

They are TypedDicts (plain dicts at run time), so report.json is written from them unchanged.
"""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict

from orchestrator.llm import CallFacts
from orchestrator.reply import ReplyGraph


class CallRecord(CallFacts):
    """One logical call (:func:`orchestrator.loop.calls.call_record`): the facts every record
    of a call states (:class:`orchestrator.llm.CallFacts`, shared with the client's ledger),
    and where in the loop it was made and how its reply parsed."""

    step: str
    subject: str
    vote: int | None
    parse_outcome: str | None
    retrieval_round: NotRequired[int]
    """Corpus runs only: the retrieval round that made the call."""


class CitationRecord(TypedDict):
    """One given a run wrote, checked against the span it cites
    (:func:`orchestrator.checks.anchor.anchor_run`): the span it was anchored to (None when
    none), whether the check passed, the span id it was corrected from (when the model cited
    a neighbour), and why it failed."""

    run_id: str
    node: str
    claim: str
    source: str | None
    span: str | None
    ok: bool
    corrected_from: str | None
    reason: str | None
    detail: str


class RunRecord(TypedDict):
    """One interrogation run: its parse outcome, what the store kept, its answer. ``graph``
    (the parsed reply) is present only between the fan-out and its ingest."""

    run_id: str
    outcome: str
    errors: list[str]
    ingested: bool
    conclusion_node: str | None
    answer: str | None
    answer_key: str
    conclusion_claim: str | None
    accepted_nodes: int
    accepted_edges: int
    rejected: list[Any]
    wait_s: float
    leniencies: list[Any]
    graph: NotRequired[ReplyGraph | None]


class HopsRecord(TypedDict):
    """The hop-by-hop interrogation of a run (:mod:`orchestrator.loop.stages.hops`): why it ran,
    the plan and whether it could be followed, each hop (:class:`orchestrator.checks.hops.Hop` as a
    dict), the answer the hops give (None when they give none) and the calls made."""

    run_id: str
    trigger: str
    plan: list[str] | None
    plan_source: str | None
    """``question`` (read off its grammar, :mod:`orchestrator.checks.decompose`) or ``model``."""
    plan_outcome: str
    plan_problem: str | None
    hops: list[dict[str, Any]]
    answer: str | None
    calls: int


class LeaveOutRecord(TypedDict):
    """Leave-the-argument-out (:mod:`orchestrator.loop.stages.leave_out`): the run asked, the answer
    whose argument was left out, the span ids hidden, whether the call was made (else why not)
    and the answer the run gave (filled in after its ingest)."""

    run_id: str
    answer_left_out: str
    hidden: list[str]
    asked: bool
    answer: str | None
    why_not: str | None


class MergeRecord(TypedDict):
    """Two nodes merged, at ingest of a run or in the merge pass (``at``)."""

    at: str
    kept: str
    merged: str
    kept_claim: str | None
    merged_claim: str | None


class ContradictionRecord(TypedDict):
    """A contradiction the store created between two nodes."""

    at: str
    pair: list[str]
    claims: list[str | None]


class AttackRecord(TypedDict):
    """A settled attack edge: the runs that drew it, the target's runs, whether it counted."""

    src: str
    dst: str
    runs: list[str]
    target_runs: int
    counted: bool


class RunAnswer(TypedDict):
    """One run's answer under a conclusion node."""

    run_id: str
    answer: str | None
    claim: str | None
    guessed_conclusion: bool


class AnswerRecord(TypedDict):
    """A conclusion node's answer key and the runs that gave it."""

    key: str
    answers: list[RunAnswer]


class VoteRecord(TypedDict):
    """One verification call's vote (``verdict`` None: failed or unreadable)."""

    j: int
    verdict: str | None
    reason: str | None
    parse_outcome: str | None
    error: str | None
    latency_s: float


class VerificationRecord(TypedDict):
    """One claim's verification: votes, tally, the outcome and what it changed."""

    round: int
    node_id: str
    claim: str
    votes: list[VoteRecord]
    tally: dict[str, int]
    majority_needed: int
    confidence_before: float
    confidence_after: float
    outcome: str
    action: str


class PhaseRecord(TypedDict):
    """The model wait of one phase (``fan_out``, ``round_<n>``)."""

    phase: str
    model_wait_s: float
