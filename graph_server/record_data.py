"""The store's answer records in their JSON form, typed: what ``record.model_dump()`` gives.

Callers that keep an answer as JSON (a report, a drawing) read these instead of an untyped
dict. Each TypedDict mirrors one record of :mod:`graph_server.records` key for key (a test
holds them equal); :func:`graph_data` and :func:`node_data` are the only conversions.
"""

from __future__ import annotations

from typing import TypedDict, cast

from graph_server.records import GetGraphAnswer, NodeOut


class NodeData(TypedDict):
    """:class:`~graph_server.records.NodeOut` as JSON."""

    id: str
    claim: str
    type: str
    confidence: float
    run_ids: list[str]
    refuted: bool
    refute_reason: str | None
    aliases: list[str]
    merged_ids: list[str]
    source: str | None


class EdgeData(TypedDict):
    """:class:`~graph_server.records.EdgeOut` as JSON."""

    src: str
    dst: str
    relation: str
    confidence: float
    run_ids: list[str]


class GraphData(TypedDict):
    """:class:`~graph_server.records.GetGraphAnswer` as JSON: the graph a report holds and
    the drawing code draws."""

    graph_id: str
    nodes: list[NodeData]
    edges: list[EdgeData]


def graph_data(graph: GetGraphAnswer) -> GraphData:
    """``graph`` as JSON (``model_dump``), typed.

    Examples
    --------
    >>> graph_data(GetGraphAnswer(graph_id="g", nodes=[], edges=[]))
    {'graph_id': 'g', 'nodes': [], 'edges': []}
    """
    return cast(GraphData, graph.model_dump())


def node_data(node: NodeOut) -> NodeData:
    """``node`` as JSON (``model_dump``), typed.

    Examples
    --------
    >>> node = NodeOut(id="A", claim="Acme paid.", type="given", confidence=1.0, run_ids=[],
    ...     refuted=False, refute_reason=None, aliases=[], merged_ids=[], source=None)
    >>> node_data(node)["claim"]
    'Acme paid.'
    """
    return cast(NodeData, node.model_dump())
