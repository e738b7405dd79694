"""Verification rounds: disputed claims re-checked in fresh contexts, the majority verdict
applied to the graph.

:func:`verification_round` takes up to ``max_per_round`` untried disputed claims whose
``m_verify`` calls all fit the budget (a partial set could miss the majority, and would spend
calls on a verdict that cannot count), asks them in a thread pool and applies each claim's
verdict (:func:`orchestrator.loop.policy.verdict_outcome`) in target order.
"""

from __future__ import annotations

from collections import Counter
from concurrent.futures import ThreadPoolExecutor

from graph_server.record_data import NodeData
from orchestrator.checks import Assessment
from orchestrator.loop.calls import CallSpec
from orchestrator.loop.policy import (
    CONFIRMED_CONFIDENCE,
    UNDETERMINED_CONFIDENCE,
    majority,
    refutation_reason,
    untried_disputes,
    verdict_outcome,
)
from orchestrator.loop.stages.context import GRAPH_ID, MAX_PARALLEL_CALLS, LoopContext
from orchestrator.records import VerificationRecord, VoteRecord
from orchestrator.reply import parse_verdict, prompts, schemas


def verification_round(
    ctx: LoopContext, round_no: int, current: Assessment, interrogated: list[str]
) -> list[VerificationRecord]:
    """One round: its targets are appended to ``interrogated``; returns one verification
    record per target (votes, tally, outcome, action, confidence before and after)."""
    targets: list[str] = []
    for node_id in untried_disputes(current, interrogated)[: ctx.inputs.config.max_per_round]:
        if not ctx.caller.budget.try_reserve(ctx.inputs.config.m_verify):
            break
        targets.append(node_id)
    interrogated.extend(targets)
    ctx.trace.event("round", round=round_no, targets=targets)
    m = ctx.inputs.config.m_verify
    nodes = ctx.graph.nodes()  # each target's verdict changes only that node
    workers = max(1, min(len(targets) * m, MAX_PARALLEL_CALLS))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = {
            (node_id, j): pool.submit(
                verify_call, ctx, round_no, node_id, nodes[node_id]["claim"], j
            )
            for node_id in targets
            for j in range(m)
        }
        votes = {node_id: [futures[(node_id, j)].result() for j in range(m)] for node_id in targets}
    ctx.caller.phases.append(
        {
            "phase": f"round_{round_no}",
            "model_wait_s": max(
                (v["latency_s"] for node_votes in votes.values() for v in node_votes),
                default=0.0,
            ),
        }
    )
    with ctx.timed("verdicts"):
        return [
            apply_verdict(ctx, round_no, slot, nodes[node_id], votes[node_id])
            for slot, node_id in enumerate(targets)
        ]


def verify_call(ctx: LoopContext, round_no: int, node_id: str, claim: str, j: int) -> VoteRecord:
    """Vote ``j`` on ``node_id`` (its ``claim``): ``{"j", "verdict", "reason",
    "parse_outcome", "error", "latency_s"}`` (``verdict`` None for a failed call or an
    unreadable reply)."""
    response_format = (
        schemas.verification_response_format() if ctx.inputs.config.structured_output else None
    )
    outcome = ctx.call(
        CallSpec(
            step=f"round_{round_no}",
            role="verification",
            subject=node_id,
            messages=prompts.verification_messages(
                ctx.inputs.evidence, claim, layout=ctx.inputs.config.prompt_layout
            ),
            response_format=response_format,
            max_tokens=ctx.inputs.config.max_tokens_verification,
            seed=ctx.seed("verification", round_no, node_id, j),
            temperature=ctx.inputs.config.temperature,
            vote=j,
        )
    )
    vote: VoteRecord = {
        "j": j,
        "verdict": None,
        "reason": None,
        "parse_outcome": None,
        "error": None,
        "latency_s": outcome.record["latency_s"],
    }
    if outcome.text is None:
        vote["error"] = str(outcome.error)
        return vote
    with ctx.timed("parse"):
        verdict = parse_verdict(outcome.text)
    outcome.record["parse_outcome"] = verdict.outcome
    vote["verdict"], vote["reason"] = verdict.verdict, verdict.reason
    vote["parse_outcome"] = verdict.outcome
    if verdict.verdict is None:
        vote["error"] = "; ".join(verdict.errors)
    return vote


def apply_verdict(
    ctx: LoopContext, round_no: int, slot: int, node: NodeData, votes: list[VoteRecord]
) -> VerificationRecord:
    """Apply the verdict of ``votes`` to ``node`` (as the store had it before the round) in
    the store; returns its record.

    Refuted: ``mark_refuted`` with the vote count and the first reason; confirmed: confidence
    ``max(old, 0.9)`` and provenance ``v<round>.<slot>``; not determinable by every vote:
    confidence ``min(old, 0.5)``; no majority: nothing changes.
    """
    m = ctx.inputs.config.m_verify
    tally = Counter(v["verdict"] for v in votes)
    node_id = node["id"]
    old = float(node["confidence"])
    entry = _unsettled_record(round_no, node, votes, tally, m)
    outcome = verdict_outcome(tally, m)
    if outcome == "refuted":
        first = next(v["reason"] for v in votes if v["verdict"] == "refuted")
        reason = refutation_reason(tally["refuted"], m, round_no, first)
        # No conclusion_id: the next assessment recomputes every candidate's width anyway,
        # so asking the store for a before/after width here would only repeat that work.
        ctx.graph.store.mark_refuted(GRAPH_ID, node_id, reason[:1900])
        entry["outcome"], entry["action"] = "refuted", f"mark_refuted({node_id})"
    elif outcome == "confirmed":
        run_id = f"v{round_no}.{slot}"
        new = max(old, CONFIRMED_CONFIDENCE)
        ctx.graph.store.update_node(GRAPH_ID, node_id, confidence=new, run_id=run_id)
        entry["confidence_after"] = new
        entry["outcome"] = "confirmed"
        entry["action"] = f"confidence {old:g} -> {new:g}, provenance {run_id}"
    elif outcome == "not_determinable":
        new = min(old, UNDETERMINED_CONFIDENCE)
        ctx.graph.store.update_node(GRAPH_ID, node_id, confidence=new)
        entry["confidence_after"] = new
        entry["outcome"] = "not_determinable"
        entry["action"] = f"confidence {old:g} -> {new:g}"
    ctx.trace.event(
        "verdict",
        round=round_no,
        node_id=node_id,
        outcome=entry["outcome"],
        tally=entry["tally"],
        action=entry["action"],
    )
    return entry


def _unsettled_record(
    round_no: int,
    node: NodeData,
    votes: list[VoteRecord],
    tally: Counter[str | None],
    m: int,
) -> VerificationRecord:
    """The record of ``node``'s verification before its verdict is applied: the votes and
    their ``tally``, the confidence unchanged, outcome ``no_majority`` and no action."""
    old = float(node["confidence"])
    return {
        "round": round_no,
        "node_id": node["id"],
        "claim": node["claim"],
        "votes": votes,
        "tally": {
            "supported": tally["supported"],
            "refuted": tally["refuted"],
            "not_determinable": tally["not_determinable"],
            "no_vote": tally[None],
        },
        "majority_needed": majority(m),
        "confidence_before": old,
        "confidence_after": old,
        "outcome": "no_majority",
        "action": "none",
    }
