"""The replies of the store's read calls, built from a graph the caller holds locked.

Private to :class:`graph_server.store.GraphStore`: pure functions of a networkx graph (and
what the algorithm modules compute from it) to the JSON-ready dicts the store returns.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import networkx as nx

from graph_server import arguments, disputes, export, semantics
from graph_server._store_state import Payload
from graph_server.graph_page import graph_html


def snapshot(graph_id: str, graph: nx.MultiDiGraph) -> Payload:
    """Every node and edge with every attribute, sorted by id. O(V log V + E log E)."""
    return {
        "graph_id": graph_id,
        "nodes": [export_node(n, graph.nodes[n]) for n in sorted(graph.nodes)],
        "edges": [
            {
                "src": src,
                "dst": dst,
                "relation": relation,
                "confidence": data["confidence"],
                "run_ids": sorted(data["run_ids"]),
            }
            for src, dst, relation, data in sorted(
                graph.edges(keys=True, data=True), key=lambda e: e[:3]
            )
        ],
    }


def export_node(node_id: str, data: dict[str, Any]) -> Payload:
    """One node's attributes as JSON-ready values (sets sorted, lists copied). O(runs)."""
    return {
        "id": node_id,
        "claim": data["claim"],
        "type": data["type"],
        "confidence": data["confidence"],
        "run_ids": sorted(data["run_ids"]),
        "refuted": data["refuted"],
        "refute_reason": data["refute_reason"],
        "aliases": list(data["aliases"]),
        "merged_ids": list(data["merged_ids"]),
        "source": data["source"],
    }


def width(graph: nx.MultiDiGraph, conclusion: str | None) -> int | None:
    """Node-disjoint evidence paths to ``conclusion`` (None without one). See semantics."""
    if conclusion is None:
        return None
    return len(semantics.disjoint_paths(graph, conclusion))


def argument_width(
    graph: nx.MultiDiGraph, conclusion: str, checkpoint: Callable[[], None]
) -> Payload:
    """``{width, arguments, independent, min_cut, capped, max_arguments}``.

    ``checkpoint`` may end the search (see :func:`graph_server.arguments.argument_width`,
    which also gives the cost).
    """
    found = arguments.argument_width(graph, conclusion, checkpoint=checkpoint)
    return {
        "width": found.width,
        "arguments": [list(claims) for claims in found.arguments],
        "independent": [list(found.arguments[i]) for i in found.independent],
        "min_cut": list(found.min_cut),
        "capped": found.capped,
        "max_arguments": arguments.DEFAULT_MAX_ARGUMENTS,
    }


def surviving_claims(graph: nx.MultiDiGraph) -> Payload:
    """``{in, out, undecided, surviving}``, each sorted. Cost: the grounded labelling."""
    label = semantics.grounded_labelling(graph)
    return {
        "in": sorted(n for n, lab in label.items() if lab == semantics.IN),
        "out": sorted(n for n, lab in label.items() if lab == semantics.OUT),
        "undecided": sorted(n for n, lab in label.items() if lab == semantics.UNDEC),
        "surviving": sorted(semantics.surviving(graph, label)),
    }


def exported(
    graph_id: str, graph: nx.MultiDiGraph, evidence: dict[str, str], format: str
) -> Payload:
    """``{graph_id, format, graph, content}`` for a format of ``export.FORMATS``.

    For json ``graph`` is the replayable object and ``content`` null; for graphml, mermaid
    and html ``content`` is the text and ``graph`` null. Cost: O(size of the graph) plus,
    for mermaid and html, the grounded labelling and contradiction pairs.
    """
    shot = snapshot(graph_id, graph)
    answer: Payload = {"graph_id": graph_id, "format": format, "graph": None, "content": None}
    if format == "json":
        return {**answer, "graph": export.to_json(shot, evidence)}
    if format == "graphml":
        return {**answer, "content": export.to_graphml(shot)}
    label = semantics.grounded_labelling(graph)
    surviving = sorted(semantics.surviving(graph, label))
    disputed = sorted({n for pair in disputes.contradiction_pairs(graph) for n in pair})
    if format == "html":
        return {**answer, "content": graph_html(shot, evidence, surviving, disputed)}
    return {**answer, "content": export.to_mermaid(shot, surviving, disputed)}
