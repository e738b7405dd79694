"""The replies of the store's read calls, built from a graph the caller holds locked.

Private to :class:`graph_server.store.GraphStore`: pure functions of a networkx graph (and
what the algorithm modules compute from it) to the records of :mod:`graph_server.records`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import networkx as nx

from graph_server import arguments, checks, disputes, export, semantics
from graph_server.graph_page import graph_html
from graph_server.record_data import graph_data
from graph_server.records import (
    ArgumentWidthAnswer,
    CheckStructureAnswer,
    CriticalLinksAnswer,
    DisputedNodesAnswer,
    EdgeOut,
    ExportGraphAnswer,
    GetGraphAnswer,
    IsolatedClaim,
    NodeOut,
    SupportWidthAnswer,
    SurvivingClaimsAnswer,
)


def snapshot(graph_id: str, graph: nx.MultiDiGraph) -> GetGraphAnswer:
    """Every node and edge with every attribute, sorted by id. O(V log V + E log E)."""
    return GetGraphAnswer(
        graph_id=graph_id,
        nodes=[export_node(n, graph.nodes[n]) for n in sorted(graph.nodes)],
        edges=[
            EdgeOut(
                src=src,
                dst=dst,
                relation=relation,
                confidence=data["confidence"],
                run_ids=sorted(data["run_ids"]),
            )
            for src, dst, relation, data in sorted(
                graph.edges(keys=True, data=True), key=lambda e: e[:3]
            )
        ],
    )


def export_node(node_id: str, data: Mapping[str, Any]) -> NodeOut:
    """One node's attributes as a record (sets sorted, lists copied). O(runs)."""
    return NodeOut(
        id=node_id,
        claim=data["claim"],
        type=data["type"],
        confidence=data["confidence"],
        run_ids=sorted(data["run_ids"]),
        refuted=data["refuted"],
        refute_reason=data["refute_reason"],
        aliases=list(data["aliases"]),
        merged_ids=list(data["merged_ids"]),
        source=data["source"],
    )


def width(graph: nx.MultiDiGraph, conclusion: str | None) -> int | None:
    """Node-disjoint evidence paths to ``conclusion`` (None without one). See semantics."""
    if conclusion is None:
        return None
    return len(semantics.disjoint_paths(graph, conclusion))


def structure(graph: nx.MultiDiGraph, conclusion: str) -> CheckStructureAnswer:
    """The structural faults of the argument for ``conclusion`` (see checks)."""
    return CheckStructureAnswer.model_validate(checks.check_structure(graph, conclusion))


def critical_links(graph: nx.MultiDiGraph, conclusion: str) -> CriticalLinksAnswer:
    """The links and claims ``conclusion`` hangs on (see checks)."""
    return CriticalLinksAnswer.model_validate(checks.critical_links(graph, conclusion))


def support_width(graph: nx.MultiDiGraph, conclusion: str) -> SupportWidthAnswer:
    """The disjoint evidence paths to ``conclusion`` and the capped flow (see semantics)."""
    paths, flow = semantics.support_width(graph, conclusion)
    return SupportWidthAnswer(disjoint_paths=len(paths), paths=paths, max_flow=flow)


def disputed_nodes(graph: nx.MultiDiGraph, conclusion: str) -> DisputedNodesAnswer:
    """Live contradiction pairs and the single-run claims ``conclusion`` leans on (see
    disputes)."""
    isolated = disputes.isolated_load_bearing(graph, conclusion)
    return DisputedNodesAnswer(
        contradiction_pairs=disputes.contradiction_pairs(graph),
        isolated_load_bearing=[IsolatedClaim.model_validate(item) for item in isolated],
    )


def argument_width(
    graph: nx.MultiDiGraph, conclusion: str, checkpoint: Callable[[], None]
) -> ArgumentWidthAnswer:
    """The argument width record of ``conclusion``.

    ``checkpoint`` may end the search (see :func:`graph_server.arguments.argument_width`,
    which also gives the cost).
    """
    found = arguments.argument_width(graph, conclusion, checkpoint=checkpoint)
    return ArgumentWidthAnswer(
        width=found.width,
        arguments=[list(claims) for claims in found.arguments],
        independent=[list(found.arguments[i]) for i in found.independent],
        min_cut=list(found.min_cut),
        capped=found.capped,
        max_arguments=arguments.DEFAULT_MAX_ARGUMENTS,
    )


def surviving_claims(graph: nx.MultiDiGraph) -> SurvivingClaimsAnswer:
    """``in``, ``out``, ``undecided`` and ``surviving``, each sorted. Cost: the grounded
    labelling."""
    label = semantics.grounded_labelling(graph)
    return SurvivingClaimsAnswer.model_validate(
        {
            "in": sorted(n for n, lab in label.items() if lab == semantics.IN),
            "out": sorted(n for n, lab in label.items() if lab == semantics.OUT),
            "undecided": sorted(n for n, lab in label.items() if lab == semantics.UNDEC),
            "surviving": sorted(semantics.surviving(graph, label)),
        }
    )


def exported(
    graph_id: str, graph: nx.MultiDiGraph, evidence: dict[str, str], format: str
) -> ExportGraphAnswer:
    """The export record for a format of ``validation.EXPORT_FORMATS``.

    For json ``graph`` is the replayable object and ``content`` null; for graphml, mermaid
    and html ``content`` is the text and ``graph`` null. Cost: O(size of the graph) plus,
    for mermaid and html, the grounded labelling and contradiction pairs.
    """
    shot = snapshot(graph_id, graph)
    if format == "json":
        return ExportGraphAnswer(
            graph_id=graph_id, format=format, graph=export.to_json(shot, evidence), content=None
        )
    if format == "graphml":
        content = export.to_graphml(shot)
    else:
        label = semantics.grounded_labelling(graph)
        surviving = sorted(semantics.surviving(graph, label))
        disputed = sorted({n for pair in disputes.contradiction_pairs(graph) for n in pair})
        if format == "html":
            content = graph_html(graph_data(shot), evidence, surviving, disputed)
        else:
            content = export.to_mermaid(shot, surviving, disputed)
    return ExportGraphAnswer(graph_id=graph_id, format=format, graph=None, content=content)
