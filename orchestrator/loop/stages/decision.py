"""Assessment of the merged graph, and the details a decision is reported with.

:func:`assess_graph` ranks the candidate answers and builds the disputed queue
(:func:`orchestrator.checks.assess.assess`); the decision itself is the pure rule
:func:`orchestrator.loop.policy.decide`; :func:`decision_details` then reads from the store what the
report shows of it (each candidate's structure, the chosen answer's critical links, the graph).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from graph_server.record_data import GraphData, graph_data
from orchestrator.checks import Assessment, Candidate, assess
from orchestrator.loop.stages.context import GRAPH_ID, LoopContext
from orchestrator.records import AnswerRecord


@dataclass(frozen=True)
class Details:
    """What the report shows beside the decision: ``structure`` per candidate node,
    ``critical_links`` of the chosen answer (None when refused) and the whole ``graph``."""

    structure: dict[str, dict[str, Any]]
    critical_links: dict[str, Any] | None
    graph: GraphData


def assess_graph(ctx: LoopContext, answers: dict[str, AnswerRecord], round_no: int) -> Assessment:
    """The assessment of the graph as it stands after round ``round_no`` (traced)."""
    with ctx.timed("assess"):
        current = assess(
            ctx.graph.store,
            GRAPH_ID,
            ctx.graph.nodes(),
            answers,
            ctx.inputs.evidence_texts,
            chain=ctx.inputs.chain.telling_apart(ctx.graph.told_apart),
            checked=frozenset(ctx.graph.checked),
        )
    ctx.trace.event("assess", round=round_no, **assessment_summary(current))
    return current


def decision_details(
    ctx: LoopContext, current: Assessment, chosen: Candidate | None, has_graph: bool
) -> Details:
    """The store's structure check of every candidate, the chosen one's critical links and
    the graph (an empty one when no run reached the store)."""
    with ctx.timed("details"):
        structure = {
            c.node_id: ctx.graph.store.check_structure(GRAPH_ID, c.node_id).model_dump()
            for c in current.candidates
        }
        critical = (
            ctx.graph.store.critical_links(GRAPH_ID, chosen.node_id).model_dump()
            if chosen
            else None
        )
        graph = (
            graph_data(ctx.graph.store.get_graph(GRAPH_ID))
            if has_graph
            else {"graph_id": GRAPH_ID, "nodes": [], "edges": []}
        )
    return Details(structure, critical, graph)


def assessment_summary(assessment: Assessment) -> dict[str, Any]:
    """The trace's line for one assessment."""
    return {
        "candidates": [
            {
                "id": c.node_id,
                "grounded": c.grounded,
                "refuted": c.refuted,
                "width": c.width,
                "max_flow": c.max_flow,
                "run_support": c.run_support,
            }
            for c in assessment.candidates
        ],
        "contradiction_pairs": [list(p) for p in assessment.contradiction_pairs],
        "isolated_load_bearing": [item["id"] for item in assessment.isolated],
    }
