"""A stored graph written out for use elsewhere: JSON, GraphML, Mermaid or HTML.

``json`` is the graph as the store's own tools take it back: ``nodes`` and ``edges`` are
valid ``assert_graph`` items (only the keys it accepts), ``evidence`` holds ``add_evidence``
spans and ``refuted`` the ``mark_refuted`` calls. Replayed in that order into an empty
graph (``assert_graph`` with ``dedup`` false, so nothing merges twice; evidence after the
nodes, so givens are not checked a second time), it gives the same checks. Merge history
(aliases, merged ids) is not part of it; ``--state-file`` keeps that.

``graphml`` is for Gephi, yEd and networkx (list attributes joined with ", ", absent
values left out, as GraphML has no null). ``mermaid`` is a flowchart an agent can show
in chat, cut to :data:`MERMAID_MAX_NODES` nodes (the diagram says what was left out).
``html`` is one self-contained page to open in a browser, every node drawn
(:mod:`graph_server.graph_page`).
"""

from __future__ import annotations

from typing import Any

import networkx as nx

from graph_server.mermaid import flowchart
from graph_server.validation import NODE_KEYS

Payload = dict[str, Any]
FORMATS = ("graphml", "json", "mermaid", "html")
MERMAID_MAX_NODES = 200
"""Beyond this a flowchart is unreadable in a chat window; the most informative nodes stay."""
EDGE_KEYS = ("src", "dst", "relation", "confidence", "run_ids")
"""What an exported edge holds: the ``assert_graph`` keys, without the from/to aliases."""


def to_json(graph: Payload, evidence: dict[str, str]) -> Payload:
    """The replayable form of ``graph`` (a ``get_graph`` payload) and its evidence spans."""
    return {
        "nodes": [{key: node[key] for key in NODE_KEYS} for node in graph["nodes"]],
        "edges": [{key: edge[key] for key in EDGE_KEYS} for edge in graph["edges"]],
        "evidence": [{"id": span, "text": evidence[span]} for span in sorted(evidence)],
        "refuted": [
            {"id": node["id"], "reason": node["refute_reason"]}
            for node in graph["nodes"]
            if node["refuted"]
        ],
    }


def to_graphml(graph: Payload) -> str:
    """GraphML text of ``graph``: one node per claim, one edge per link keyed by relation."""
    out = nx.MultiDiGraph(graph_id=graph["graph_id"])
    for node in graph["nodes"]:
        attributes = {
            "claim": node["claim"],
            "type": node["type"],
            "confidence": node["confidence"],
            "run_ids": ", ".join(node["run_ids"]),
            "refuted": node["refuted"],
            "refute_reason": node["refute_reason"],
            "source": node["source"],
            "aliases": ", ".join(node["aliases"]),
            "merged_ids": ", ".join(node["merged_ids"]),
        }
        out.add_node(node["id"], **{k: v for k, v in attributes.items() if v is not None})
    for edge in graph["edges"]:
        out.add_edge(
            edge["src"],
            edge["dst"],
            key=edge["relation"],
            relation=edge["relation"],
            confidence=edge["confidence"],
            run_ids=", ".join(edge["run_ids"]),
        )
    return "\n".join(nx.generate_graphml(out))


def to_mermaid(graph: Payload, surviving: list[str], disputed: list[str]) -> str:
    """Mermaid flowchart source of ``graph``, drawn as the orchestrator's report draws it."""
    conclusions = [node["id"] for node in graph["nodes"] if node["type"] == "conclusion"]
    return flowchart(
        graph,
        chosen=None,
        candidates=conclusions,
        surviving=surviving,
        disputed=disputed,
        max_nodes=MERMAID_MAX_NODES,
    )
