"""Leave-the-argument-out: once an answer is verified, ask once more without the sentences
its argument rests on.

Independence without temperature (issue 32): a run that cannot see the first argument's
sentences either finds the answer again by another road, which is a second argument sharing no
cited sentence with the first (width 2 by construction), or it does not. A verified argument for
another answer shows the first was fragile, and the run refuses (:func:`flipped`,
``answer_fragile`` in :func:`..policy.decide`); a run that finds no answer brings no argument
and changes nothing.
The run is greedy, one call from the budget, in the run's shape, with the span ids of the
sentences it still sees unchanged.
"""

from __future__ import annotations

from corpus.evidence import Evidence
from orchestrator.checks import Assessment, Candidate
from orchestrator.loop.stages.context import LoopContext
from orchestrator.loop.stages.fan_out import interrogate
from orchestrator.records import LeaveOutRecord, RunRecord
from orchestrator.reply import answer_key


def argument_sentences(candidate: Candidate, evidence: Evidence) -> frozenset[str]:
    """The span ids of the cited sentences that ``candidate``'s counted arguments rest on."""
    return frozenset(
        claim for argument in candidate.arguments for claim in argument if evidence.get(claim)
    )


def leave_argument_out(
    ctx: LoopContext, candidate: Candidate, index: int
) -> tuple[LeaveOutRecord, RunRecord | None]:
    """Run ``r<index>`` on the evidence without ``candidate``'s argument sentences. The run is
    None when there is nothing to hide, nothing would be left, or the budget is spent."""
    hidden = argument_sentences(candidate, ctx.inputs.evidence)
    left = Evidence(tuple(span for span in ctx.inputs.evidence.spans if span.id not in hidden))
    record: LeaveOutRecord = {
        "run_id": f"r{index}",
        "answer_left_out": candidate.answer_key,
        "hidden": sorted(hidden),
        "asked": False,
        "answer": None,
        "why_not": None,
    }
    if not hidden or not left.spans:
        record["why_not"] = "the argument cites no sentence" if not hidden else "nothing left"
        return record, None
    if not ctx.caller.budget.try_reserve():
        record["why_not"] = "call budget exhausted"
        return record, None
    record["asked"] = True
    run = interrogate(ctx, index, left)
    ctx.trace.event("leave_out", run_id=record["run_id"], hidden=record["hidden"])
    return record, run


def flipped(assessment: Assessment, left_out: LeaveOutRecord | None) -> bool:
    """Whether the leave-the-argument-out run verified an answer other than the one whose
    sentences it could not see (the decision then refuses, ``answer_fragile``)."""
    if left_out is None or not left_out["answer"]:
        return False
    other = answer_key(left_out["answer"])
    return other != left_out["answer_left_out"] and any(
        candidate.answer_key == other and candidate.grounded for candidate in assessment.candidates
    )
