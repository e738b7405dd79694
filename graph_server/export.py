"""A stored graph written out for use elsewhere: JSON, GraphML, Mermaid or HTML.

``json`` is the graph as the store's own tools take it back: ``nodes`` and ``edges`` are
valid ``assert_graph`` items (only the keys it accepts), ``evidence`` holds ``add_evidence``
spans and ``refuted`` the ``mark_refuted`` calls. Replayed in that order into an empty
graph (``assert_graph`` with ``dedup`` false, so nothing merges twice; evidence after the
nodes, so givens are not checked a second time), it gives the same checks. Merge history
(aliases, merged ids) is not part of it; ``--state-file`` keeps that.

``graphml`` is for Gephi, yEd and networkx (list attributes joined with ", ", absent
values left out, as GraphML has no null). It is always well-formed XML 1.0: characters XML
cannot hold (controls other than tab, newline and carriage return, and U+FFFE/U+FFFF, all
of which a claim may contain) are written as U+FFFD; each edge has its own id (``e0``,
``e1``, ... in sorted order); booleans are ``true``/``false``.

``mermaid`` is a flowchart an agent can show in chat, cut to :data:`MERMAID_MAX_NODES`
nodes (the diagram says what was left out). ``html`` is one self-contained page to open in
a browser, every node drawn (:mod:`graph_server.graph_page`).
"""

from __future__ import annotations

import re
from typing import Any
from xml.sax.saxutils import escape

from graph_server.mermaid import flowchart
from graph_server.record_data import graph_data
from graph_server.records import EdgeOut, GetGraphAnswer, NodeOut
from graph_server.validation import NODE_KEYS

MERMAID_MAX_NODES = 200
"""Beyond this a flowchart is unreadable in a chat window; the most informative nodes stay."""
EDGE_KEYS = ("src", "dst", "relation", "confidence", "run_ids")
"""What an exported edge holds: the ``assert_graph`` keys, without the from/to aliases."""


def to_json(graph: GetGraphAnswer, evidence: dict[str, str]) -> dict[str, Any]:
    """The replayable form of ``graph`` and its evidence spans (a JSON object)."""
    return {
        "nodes": [node.model_dump(include=set(NODE_KEYS)) for node in graph.nodes],
        "edges": [edge.model_dump(include=set(EDGE_KEYS)) for edge in graph.edges],
        "evidence": [{"id": span, "text": evidence[span]} for span in sorted(evidence)],
        "refuted": [
            {"id": node.id, "reason": node.refute_reason} for node in graph.nodes if node.refuted
        ],
    }


_NODE_ATTRIBUTES = (
    ("claim", "string"),
    ("type", "string"),
    ("confidence", "double"),
    ("run_ids", "string"),
    ("refuted", "boolean"),
    ("refute_reason", "string"),
    ("source", "string"),
    ("aliases", "string"),
    ("merged_ids", "string"),
)
_EDGE_ATTRIBUTES = (("relation", "string"), ("confidence", "double"), ("run_ids", "string"))
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
"""Characters XML 1.0 cannot carry, even escaped (tab, newline and CR it can)."""
_ATTRIBUTE_ENTITIES = {'"': "&quot;", "\n": "&#10;", "\r": "&#13;", "\t": "&#9;"}
"""Escaped besides & < >: quotes, and whitespace an XML parser would fold in an attribute."""


def xml_text(value: str) -> str:
    """``value`` made safe for an XML attribute or element: characters XML 1.0 cannot hold
    become U+FFFD, then markup characters and whitespace in attributes are escaped. O(n)."""
    return escape(_NOT_XML.sub("\ufffd", value), _ATTRIBUTE_ENTITIES)


def to_graphml(graph: GetGraphAnswer) -> str:
    """GraphML text of ``graph``: one node per claim, one edge (with its own id) per link.

    Written here rather than by networkx, whose writer passes control characters through
    (one such claim made the whole file unreadable), gives parallel edges the same id and
    writes booleans as ``True``. O(size of the graph).
    """
    lines = [
        '<?xml version="1.0" encoding="utf-8"?>',
        '<graphml xmlns="http://graphml.graphdrawing.org/xmlns" '
        'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
        'xsi:schemaLocation="http://graphml.graphdrawing.org/xmlns '
        'http://graphml.graphdrawing.org/xmlns/1.0/graphml.xsd">',
        '  <key id="g_graph_id" for="graph" attr.name="graph_id" attr.type="string" />',
    ]
    for scope, attributes in (("node", _NODE_ATTRIBUTES), ("edge", _EDGE_ATTRIBUTES)):
        lines += [
            f'  <key id="{scope[0]}_{name}" for="{scope}" attr.name="{name}" attr.type="{kind}" />'
            for name, kind in attributes
        ]
    lines.append('  <graph edgedefault="directed">')
    lines.append(f'    <data key="g_graph_id">{xml_text(graph.graph_id)}</data>')
    for node in graph.nodes:
        lines.append(f'    <node id="{xml_text(node.id)}">')
        lines += _data_lines("n", node, _NODE_ATTRIBUTES)
        lines.append("    </node>")
    for number, edge in enumerate(graph.edges):
        lines.append(
            f'    <edge id="e{number}" source="{xml_text(edge.src)}" target="{xml_text(edge.dst)}">'
        )
        lines += _data_lines("e", edge, _EDGE_ATTRIBUTES)
        lines.append("    </edge>")
    lines += ["  </graph>", "</graphml>"]
    return "\n".join(lines)


def _data_lines(
    prefix: str, item: NodeOut | EdgeOut, attributes: tuple[tuple[str, str], ...]
) -> list[str]:
    """The ``<data>`` lines of a node or edge: lists joined with ", ", nulls left out."""
    lines = []
    for name, kind in attributes:
        value = getattr(item, name)
        if value is None:
            continue
        if kind == "boolean":
            text = "true" if value else "false"
        elif kind == "double":
            text = repr(float(value))
        elif isinstance(value, list):
            text = xml_text(", ".join(value))
        else:
            text = xml_text(value)
        lines.append(f'      <data key="{prefix}_{name}">{text}</data>')
    return lines


def to_mermaid(graph: GetGraphAnswer, surviving: list[str], disputed: list[str]) -> str:
    """Mermaid flowchart source of ``graph``, drawn as the orchestrator's report draws it."""
    conclusions = [node.id for node in graph.nodes if node.type == "conclusion"]
    return flowchart(
        graph_data(graph),
        chosen=None,
        candidates=conclusions,
        surviving=surviving,
        disputed=disputed,
        max_nodes=MERMAID_MAX_NODES,
    )
