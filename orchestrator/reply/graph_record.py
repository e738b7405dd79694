"""The normalised graph a reply describes, typed once (:class:`ReplyGraph`).

Every reply shape that yields an argument (:mod:`.graph_shape`, :mod:`.chain_shape`) builds
one, :mod:`.parse` returns it and the loop asserts its nodes and edges into the store. A node
and an edge carry the fields ``assert_graph`` takes (:class:`graph_server.records.NodeIn`,
:class:`graph_server.records.EdgeIn`) that a reply can state: the store adds the rest
(``run_ids`` from the run, ``refuted``, ``aliases`` ...).
"""

from __future__ import annotations

from typing import TypedDict


class ReplyNode(TypedDict):
    """One claim: ``type`` is one of :data:`graph_server.validation.NODE_TYPES`, ``source``
    the span id a given cites (None for none)."""

    id: str
    claim: str
    type: str
    confidence: float
    source: str | None


class ReplyEdge(TypedDict):
    """One link, ``src`` to ``dst``: ``relation`` is one of
    :data:`graph_server.validation.RELATIONS`."""

    src: str
    dst: str
    relation: str
    confidence: float


class ReplyGraph(TypedDict):
    """A reply's graph: its conclusion node and how it was found (one of
    :data:`orchestrator.reply.fields.CONCLUSION_SOURCES`), the short answer (None when the
    reply has none), the nodes and edges, and the leniency tags (see :mod:`.parse`)."""

    conclusion_node: str
    conclusion_from: str
    answer: str | None
    nodes: list[ReplyNode]
    edges: list[ReplyEdge]
    leniencies: list[str]
