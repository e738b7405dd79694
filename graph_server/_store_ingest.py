"""Adding validated nodes and edges to one stored graph (``GraphStore.assert_graph``).

Private to the store. Every function here changes a :class:`GraphState` whose lock the
caller holds, records what it changed in an :class:`Undo`, and reports a refused item as a
reason string; the memory budget is charged by the store, between the nodes and the edges.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from graph_server._store_state import GraphState, Undo
from graph_server.citation import SpanTable, check_citation
from graph_server.records import CitationCheck, Rejection
from graph_server.validation import (
    EdgeRecord,
    NodeRecord,
    StoreLimits,
    parse_edge,
    parse_node,
    parse_span,
    shown,
)

_ECHO_CHARS = 200
_BATCH = 1_000
"""Items validated between two cancellation checks."""


@dataclass
class Ingested:
    """What one ``assert_graph`` call accepted and refused, in the order of its items."""

    accepted_nodes: list[str] = field(default_factory=list)
    accepted_edges: list[list[str]] = field(default_factory=list)
    rejected: list[Rejection] = field(default_factory=list)
    citations: list[CitationCheck] = field(default_factory=list)
    new_nodes: dict[str, None] = field(default_factory=dict)
    """Accepted ids that are live nodes (the focus of the dedup that follows), in order."""


@dataclass(frozen=True)
class IngestCall:
    """What one ``assert_graph`` call ingests under: its run id, the undo log, the
    cancellation ``checkpoint`` (run every ``_BATCH`` items; it may raise
    :class:`graph_server.dedup.Cancelled`), the store's limits, and ``out`` for the results."""

    run_id: str | None
    undo: Undo
    checkpoint: Callable[[], None]
    limits: StoreLimits
    out: Ingested = field(default_factory=Ingested)


def ingest_nodes(state: GraphState, nodes: list[Any], call: IngestCall) -> None:
    """Validate and add ``nodes`` to ``state``, recording results in ``call.out``.

    A given is checked against the graph's evidence (when it has any) and kept as an
    ``assumption`` if its citation fails. Cost: O(items), plus the citation checks.
    """
    out = call.out
    spans = SpanTable(state.evidence)
    for index, raw in enumerate(nodes):
        if index % _BATCH == 0:
            call.checkpoint()
        record = parse_node(raw, call.run_id, call.limits)
        if isinstance(record, NodeRecord) and record.type == "given" and state.evidence:
            check = check_citation(record.claim, record.source, spans)
            out.citations.append(
                CitationCheck(
                    at=f"nodes.{index}",
                    id=record.id,
                    source=record.source,
                    ok=check.ok,
                    reason=check.reason,
                    detail=check.detail,
                )
            )
            if not check.ok:  # kept, but as a premise nothing supports
                record = replace(record, type="assumption")
        outcome = (
            record if isinstance(record, str) else add_node(state, record, call.undo, call.limits)
        )
        if outcome is None:
            assert isinstance(record, NodeRecord)
            out.accepted_nodes.append(record.id)
            if record.id in state.graph:
                out.new_nodes[record.id] = None
        else:
            out.rejected.append(rejection("nodes", index, raw, outcome))


def ingest_edges(state: GraphState, graph_id: str, edges: list[Any], call: IngestCall) -> None:
    """Validate and add ``edges`` to ``state``, recording results in ``call.out``. O(items)."""
    for index, raw in enumerate(edges):
        if index % _BATCH == 0:
            call.checkpoint()
        edge = parse_edge(raw, call.run_id, call.limits)
        added = (
            edge
            if isinstance(edge, str)
            else add_edge(state, graph_id, edge, call.undo, call.limits)
        )
        if isinstance(added, list):
            call.out.accepted_edges.append(added)
        else:
            call.out.rejected.append(rejection("edges", index, raw, added))
    call.checkpoint()


def add_node(state: GraphState, record: NodeRecord, undo: Undo, limits: StoreLimits) -> str | None:
    """Add a node, or merge a re-assertion into the node already there.

    Returns None when accepted, else the reason it was refused (a different claim or type
    under a known id, a conflicting source, a full graph). O(1) amortised.
    """
    graph = state.graph
    if record.id in state.merged_into:
        kept = state.resolve(record.id)
        if state.merged_claim[record.id] != record.claim:
            return (
                f"id {record.id!r} was merged into {kept!r} with claim "
                f"{shown(state.merged_claim[record.id])}; a different claim cannot reuse it"
            )
        # The kept node speaks for the merged id, so its source is the one to match.
        conflict = source_conflict(record, graph.nodes[kept], f"{kept!r} (merged from it)")
        if conflict:
            return conflict
        undo.touch_node(kept, graph.nodes[kept])
        adopt_source(graph.nodes[kept], record)
        graph.nodes[kept]["run_ids"] |= record.run_ids
        return None
    if record.id in graph:
        data = graph.nodes[record.id]
        if data["claim"] != record.claim:
            return (
                f"id {record.id!r} already holds the claim {shown(data['claim'])}; "
                "a different claim needs a different id"
            )
        if data["type"] != record.type:
            return f"id {record.id!r} already has type {data['type']!r}, not {record.type!r}"
        conflict = source_conflict(record, data, "it")
        if conflict:
            return conflict
        undo.touch_node(record.id, data)
        adopt_source(data, record)
        data["run_ids"] |= record.run_ids
        data["confidence"] = max(data["confidence"], record.confidence)
        return None
    if graph.number_of_nodes() >= limits.max_nodes_per_graph:
        return f"graph is full: limit of {limits.max_nodes_per_graph} nodes reached"
    graph.add_node(
        record.id,
        claim=record.claim,
        type=record.type,
        confidence=record.confidence,
        run_ids=set(record.run_ids),
        refuted=False,
        refute_reason=None,
        aliases=[],
        merged_ids=[],
        source=record.source,
    )
    undo.new_nodes.append(record.id)
    undo.claim_bytes += len(record.claim.encode("utf-8"))
    return None


def add_edge(
    state: GraphState, graph_id: str, edge: EdgeRecord, undo: Undo, limits: StoreLimits
) -> list[str] | str:
    """Add an edge between the live nodes its ends stand for, or strengthen the one there.

    Returns ``[src, dst, relation]`` (resolved ids) when accepted, else the reason it was
    refused (an unknown end, both ends merged into one claim, a full graph). O(1) amortised.
    """
    graph = state.graph
    src, dst = state.resolve(edge.src), state.resolve(edge.dst)
    for name, original in (("src", edge.src), ("dst", edge.dst)):
        if state.resolve(original) not in graph:
            return (
                f"{name} {original!r} is not a node of graph {graph_id!r} "
                "(never asserted, or rejected in this call)"
            )
    if src == dst:
        return f"src {edge.src!r} and dst {edge.dst!r} were merged into one claim {src!r}"
    if graph.has_edge(src, dst, edge.relation):
        existing = graph.edges[src, dst, edge.relation]
        undo.touch_edge((src, dst, edge.relation), existing)
        existing["confidence"] = max(existing["confidence"], edge.confidence)
        existing["run_ids"] |= edge.run_ids
    elif state.edge_count >= limits.max_edges_per_graph:
        return f"graph is full: limit of {limits.max_edges_per_graph} edges reached"
    else:
        state.edge_count += 1
        graph.add_edge(
            src,
            dst,
            key=edge.relation,
            relation=edge.relation,
            confidence=edge.confidence,
            run_ids=set(edge.run_ids),
        )
        undo.new_edges.append((src, dst, edge.relation))
    return [src, dst, edge.relation]


def source_conflict(record: NodeRecord, data: dict[str, Any], holder: str) -> str | None:
    """Why a re-asserted node's ``source`` cannot be accepted, or None.

    A source is an identity: once a node has one, a different one means a different
    claim, which needs a different id. Sending none (or the same) is fine.
    """
    if record.source is None or data["source"] in (None, record.source):
        return None
    return (
        f"source {record.source!r} of id {record.id!r} differs from the source "
        f"{data['source']!r} that {holder} already has; a different source needs a "
        "different id"
    )


def adopt_source(data: dict[str, Any], record: NodeRecord) -> None:
    """A node asserted without a source takes the first one it is re-asserted with."""
    if data["source"] is None:
        data["source"] = record.source


def echo(item: Any) -> Any:
    """The rejected item as the caller sent it, with very long strings shortened."""
    if isinstance(item, str):
        return item if len(item) <= _ECHO_CHARS else item[:_ECHO_CHARS] + f"... ({len(item)} chars)"
    if isinstance(item, dict):
        return {str(k): echo(v) for k, v in list(item.items())[:20]}
    if isinstance(item, list | tuple):
        return [echo(v) for v in list(item)[:20]]
    if item is None or isinstance(item, bool | int | float):
        return item
    return shown(item)


def rejection(items: str, index: int, raw: Any, reason: str) -> Rejection:
    """The reply's entry for item ``index`` of the argument ``items``, refused for ``reason``."""
    return Rejection(at=f"{items}.{index}", item=echo(raw), reason=reason)


def parse_spans(
    evidence: dict[str, str], spans: list[Any], limits: StoreLimits
) -> tuple[list[str], list[Rejection], dict[str, str]]:
    """Validate evidence spans against a graph's ``evidence`` (``add_evidence``).

    Returns ``(accepted ids, rejected items, new spans id -> text)``; a known id with a
    different text is rejected, a repeated one accepted again. O(total text).
    """
    accepted: list[str] = []
    rejected: list[Rejection] = []
    added: dict[str, str] = {}
    for index, raw in enumerate(spans):
        parsed = parse_span(raw, limits)
        if isinstance(parsed, str):
            rejected.append(rejection("spans", index, raw, parsed))
            continue
        span_id, text = parsed
        known = evidence.get(span_id, added.get(span_id))
        if known is not None and known != text:
            reason = f"span {span_id!r} already holds the text {shown(known)}"
            rejected.append(rejection("spans", index, raw, reason))
            continue
        added.setdefault(span_id, text)
        accepted.append(span_id)
    return accepted, rejected, added
