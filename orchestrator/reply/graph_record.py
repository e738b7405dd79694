"""The normalised graph a reply describes, typed once (:class:`ReplyGraph`).

Every reply shape that yields an argument (:mod:`.graph_shape`, :mod:`.chain_shape`) builds
one, :mod:`.parse` returns it and the loop asserts its nodes and edges into the store. A node
and an edge carry the fields ``assert_graph`` takes (:class:`graph_server.records.NodeIn`,
:class:`graph_server.records.EdgeIn`) that a reply can state: the store adds the rest
(``run_ids`` from the run, ``refuted``, ``aliases`` ...).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypedDict

from orchestrator.reply.fields import CONCLUSION_DECLARED, DEFAULT_CONFIDENCE


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


class GraphBuilder:
    """A graph the system draws itself (from a worked reply, or from hops), node by node:
    every claim and link at the default confidence, each cited sentence one given node
    (``g1``, ``g2`` ... in order of first citation), each link once.

    Examples
    --------
    >>> builder = GraphBuilder({"D1.1": "Kest Works built the Kest Bridge."})
    >>> builder.node("i1", "Kest Works", "inference")
    >>> builder.support(builder.given("D1.1"), "i1")
    >>> builder.node("c", "Kest Works", "conclusion")
    >>> builder.support("i1", "c")
    >>> graph = builder.graph("Kest Works")
    >>> [(edge["src"], edge["dst"]) for edge in graph["edges"]]
    [('g1', 'i1'), ('i1', 'c')]
    """

    def __init__(self, spans: Mapping[str, str]) -> None:
        self.spans = spans
        """Span id -> sentence: what a given node cites."""
        self.nodes: list[ReplyNode] = []
        self.edges: list[ReplyEdge] = []
        self._givens: dict[str, str] = {}

    def node(self, node_id: str, claim: str, node_type: str, source: str | None = None) -> None:
        """Add a claim (``source``: the span a given cites)."""
        self.nodes.append(
            {
                "id": node_id,
                "claim": claim,
                "type": node_type,
                "confidence": DEFAULT_CONFIDENCE,
                "source": source,
            }
        )

    def given(self, span_id: str) -> str:
        """The id of the given node citing ``span_id`` (one of :attr:`spans`), added on first
        use."""
        if span_id not in self._givens:
            self._givens[span_id] = f"g{len(self._givens) + 1}"
            self.node(self._givens[span_id], self.spans[span_id], "given", span_id)
        return self._givens[span_id]

    def support(self, src: str, dst: str) -> None:
        """Add the link ``src`` supports ``dst``, unless it is there already."""
        edge: ReplyEdge = {
            "src": src,
            "dst": dst,
            "relation": "supports",
            "confidence": DEFAULT_CONFIDENCE,
        }
        if edge not in self.edges:
            self.edges.append(edge)

    def graph(self, answer: str, conclusion: str = "c") -> ReplyGraph:
        """The graph drawn so far, concluding ``answer`` at node ``conclusion``."""
        return {
            "conclusion_node": conclusion,
            "conclusion_from": CONCLUSION_DECLARED,
            "answer": answer,
            "nodes": self.nodes,
            "edges": self.edges,
            "leniencies": [],
        }
