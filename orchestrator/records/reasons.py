"""Why a run stopped and why it gave no answer: the two vocabularies of ``report.json``.

``stop_reason`` (:class:`StopReason`) says why the control loop ended; ``refusal_reason``
(:class:`RefusalReason`) says why no answer is given. They are independent: a loop can stop
with ``width_reached`` and still refuse, and an answered run has no refusal reason.

Both are :class:`enum.StrEnum`: a member *is* its string (``RefusalReason.TIED ==
"candidates_tied"``), so reports, traces and JSON carry the plain value. This module imports
nothing from the project, so the loop, the report, corpus rounds and the run entry point
share one definition without importing each other.
"""

from __future__ import annotations

from enum import StrEnum


class StopReason(StrEnum):
    """Why the loop ended, in the order the loop tests them (docs/orchestrator.md)."""

    NO_CANDIDATES = "no_candidates"
    NO_DISPUTES = "no_disputes"
    NOTHING_TO_GAIN = "nothing_to_gain"
    """No live candidate has an argument free of flags: a verdict can refute a claim or
    confirm it, never add an argument or lift a flag, so no verification could make one
    answerable."""
    WIDTH_REACHED = "width_reached"
    DISPUTES_EXHAUSTED = "disputes_exhausted"
    DEADLINE = "deadline_reached"
    BUDGET_EXHAUSTED = "budget_exhausted"


class RefusalReason(StrEnum):
    """Why a run gives no answer."""

    NO_EVIDENCE = "no_evidence"
    """The task has no documents: nothing to judge, no call made."""
    ALL_RUNS_FAILED = "all_runs_failed"
    """No interrogation produced a usable graph."""
    NO_GROUNDED = "no_grounded_conclusion"
    """No candidate answer rests on cited evidence."""
    TIED = "candidates_tied"
    """The top candidates are tied."""
    UNANSWERABLE = "runs_found_no_answer"
    """No argument carries an answer, and at least half the usable runs said the evidence does
    not decide the question."""
    FRAGILE = "answer_fragile"
    """Leave-the-argument-out: the run without the sentences the answer rests on verified
    another answer, so the answer hangs on those sentences while the rest of the evidence
    carries a different one."""
    BELOW_K = "below_k"
    """``require_k`` is set and the answer's support width is below k."""
    INSUFFICIENT_EVIDENCE = "insufficient_evidence"
    """A corpus run: retrieval rounds ended without evidence that carries an answer."""
    BACKEND_FAILED = "backend_failed"
    """No model call returned a reply: about the backend, not the evidence (the loop itself
    can only see that no run was usable, ``all_runs_failed``)."""
