"""GraphStore: many in-memory argument graphs behind one lock.

This is the library API (the MCP server in :mod:`graph_server.server` exposes the
same methods as tools). Every public method takes ``graph_id`` first, returns a
JSON-serialisable dict and never raises: failures come back as
``{"error": "..."}`` naming the field, the value and the rule broken.

The store owns all state and the lock; the algorithms it calls
(:mod:`~graph_server.checks`, :mod:`~graph_server.semantics`,
:mod:`~graph_server.disputes`, :mod:`~graph_server.dedup`) are functions over
networkx graphs that the store hands them while holding the lock.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import networkx as nx

from graph_server import checks, disputes, semantics
from graph_server.dedup import MergePlan, apply_plan, plan_merges
from graph_server.validation import (
    EdgeRecord,
    NodeRecord,
    StoreLimits,
    check_confidence,
    check_flag,
    check_id,
    parse_edge,
    parse_node,
    shown,
)

log = logging.getLogger(__name__)

Payload = dict[str, Any]
F = TypeVar("F", bound=Callable[..., Payload])

DEFAULT_JACCARD_THRESHOLD = 0.7
DEFAULT_RATIO_THRESHOLD = 0.85
_ECHO_CHARS = 200


class _Rejected(Exception):
    """Internal: aborts a call with a caller-facing error message."""


@dataclass
class _Graph:
    graph: nx.MultiDiGraph = field(default_factory=nx.MultiDiGraph)
    merged_into: dict[str, str] = field(default_factory=dict)
    """Ids removed by dedup -> the id they were merged into (possibly merged again later)."""
    merged_claim: dict[str, str] = field(default_factory=dict)
    edge_count: int = 0
    """Kept in step with the graph: MultiDiGraph.number_of_edges() is O(V), not O(1)."""

    def resolve(self, node_id: str) -> str:
        while node_id in self.merged_into:
            node_id = self.merged_into[node_id]
        return node_id


def _public(method: F) -> F:
    """Hold the store lock for the whole call and turn every failure into an error dict."""

    @functools.wraps(method)
    def wrapper(self: GraphStore, *args: Any, **kwargs: Any) -> Payload:
        with self._lock:
            try:
                return method(self, *args, **kwargs)
            except _Rejected as rejected:
                return {"error": str(rejected)}
            except Exception as exc:  # the contract: never raise to the caller
                log.exception("internal error in %s", method.__name__)
                return {
                    "error": f"internal error in {method.__name__}: {type(exc).__name__}: {exc}"
                }

    return wrapper  # type: ignore[return-value]


class GraphStore:
    """Thread-safe store of argument graphs keyed by caller-supplied ``graph_id``."""

    def __init__(
        self,
        *,
        limits: StoreLimits | None = None,
        jaccard_threshold: float = DEFAULT_JACCARD_THRESHOLD,
        ratio_threshold: float = DEFAULT_RATIO_THRESHOLD,
    ) -> None:
        self.limits = limits or StoreLimits()
        self.jaccard_threshold = jaccard_threshold
        self.ratio_threshold = ratio_threshold
        self._graphs: dict[str, _Graph] = {}
        self._lock = threading.RLock()

    # ----------------------------------------------------------------- writes

    @_public
    def assert_graph(
        self,
        graph_id: str,
        nodes: Any,
        edges: Any = None,
        run_id: str | None = None,
        *,
        dedup: Any = True,
    ) -> Payload:
        """Ingest nodes and edges, keep the valid ones, deduplicate new nodes.

        Inputs: node dicts ``{id, claim, type, confidence?, run_ids?, source?}``, edge
        dicts, an optional ``run_id`` for items naming none, and the keyword-only
        ``dedup`` switch (a bool, or ``"true"``/``"false"``; default true).
        Each rejected item is reported with its reason; accepted items stay.
        Re-sending the same payload changes nothing. New nodes are deduplicated
        against the whole graph (see :mod:`graph_server.dedup`) unless ``dedup`` is
        false, in which case nothing merges and no contradiction is created now
        (``merge_duplicates`` can run later).

        ``source`` (optional, validated like an id) is what the claim is anchored to:
        for a given, the id of the evidence span it cites; for any node, an identity
        key chosen by the caller. Two nodes with different non-null sources are never
        merged (and get no attack edge for it). Re-asserting an id with a different
        non-null source is rejected for that item; the same or no source is fine.

        Returns ``{accepted_nodes, accepted_edges, rejected, auto_merged,
        contradictions_created}``. Cost: validation O(items) plus the dedup of the
        new nodes (see :func:`graph_server.dedup.plan_merges`).
        """
        self._check_graph_id(graph_id)
        if run_id is not None:
            self._check(check_id("run_id", run_id, self.limits))
        dedup_flag, problem = check_flag("dedup", dedup)
        if problem:
            raise _Rejected(problem)
        nodes = self._check_list("nodes", nodes)
        edges = self._check_list("edges", [] if edges is None else edges)
        if len(nodes) + len(edges) > self.limits.max_items_per_call:
            raise _Rejected(
                f"nodes + edges has {len(nodes) + len(edges)} items, over the limit of "
                f"{self.limits.max_items_per_call} per call; split the payload"
            )
        if graph_id not in self._graphs and len(self._graphs) >= self.limits.max_graphs:
            raise _Rejected(
                f"graph_id {graph_id!r} would be graph number {len(self._graphs) + 1}, over the "
                f"limit of {self.limits.max_graphs}; delete_graph unused graphs first"
            )
        state = self._graphs.setdefault(graph_id, _Graph())
        rejected: list[Payload] = []
        accepted_nodes: list[str] = []
        new_nodes: list[str] = []
        for raw in nodes:
            record = parse_node(raw, run_id, self.limits)
            outcome = record if isinstance(record, str) else self._add_node(state, record)
            if outcome is None:
                assert isinstance(record, NodeRecord)
                accepted_nodes.append(record.id)
                if record.id in state.graph and record.id not in new_nodes:
                    new_nodes.append(record.id)
            else:
                rejected.append({"item": _echo(raw), "reason": outcome})
        accepted_edges: list[list[str]] = []
        for raw in edges:
            edge = parse_edge(raw, run_id, self.limits)
            added = edge if isinstance(edge, str) else self._add_edge(state, graph_id, edge)
            if isinstance(added, list):
                accepted_edges.append(added)
            else:
                rejected.append({"item": _echo(raw), "reason": added})

        merges: list[list[str]] = []
        contradictions: list[list[str]] = []
        if dedup_flag:
            plan = plan_merges(
                state.graph, self.jaccard_threshold, self.ratio_threshold, focus=new_nodes
            )
            merges, contradictions = self._apply(state, plan)
        return {
            "accepted_nodes": accepted_nodes,
            "accepted_edges": accepted_edges,
            "rejected": rejected,
            "auto_merged": merges,
            "contradictions_created": contradictions,
        }

    @_public
    def merge_duplicates(
        self,
        graph_id: str,
        jaccard_threshold: Any = DEFAULT_JACCARD_THRESHOLD,
        ratio_threshold: Any = DEFAULT_RATIO_THRESHOLD,
    ) -> Payload:
        """Full-graph dedup pass. Returns ``{merges: [[kept, merged]], contradictions_created}``."""
        state = self._state(graph_id)
        jaccard = self._check_value(check_confidence("jaccard_threshold", jaccard_threshold))
        ratio = self._check_value(check_confidence("ratio_threshold", ratio_threshold))
        merges, contradictions = self._apply(state, plan_merges(state.graph, jaccard, ratio))
        return {"merges": merges, "contradictions_created": contradictions}

    @_public
    def mark_refuted(
        self, graph_id: str, node_id: str, reason: str, conclusion_id: str | None = None
    ) -> Payload:
        """Mark a claim refuted and report the conclusion's support width before and after.

        The conclusion is ``conclusion_id`` when given, else the graph's single
        ``conclusion`` node if exactly one exists (otherwise widths are null).
        Marking an already refuted claim changes nothing and keeps the first reason.
        """
        state = self._state(graph_id)
        node_id = self._node(state, graph_id, node_id, "node_id")
        if not isinstance(reason, str) or not reason.strip():
            raise _Rejected(f"reason must be a non-empty string, got {shown(reason)}")
        if len(reason) > self.limits.max_reason_chars:
            raise _Rejected(
                f"reason has {len(reason)} characters, over the limit of "
                f"{self.limits.max_reason_chars}"
            )
        conclusion = self._conclusion_for(state, graph_id, conclusion_id)
        data = state.graph.nodes[node_id]
        already = bool(data["refuted"])
        before = self._width(state.graph, conclusion)
        if not already:
            data["refuted"] = True
            data["refute_reason"] = reason.strip()
        return {
            "ok": True,
            "node_id": node_id,
            "already_refuted": already,
            "conclusion_id": conclusion,
            "width_before": before,
            "width_after": self._width(state.graph, conclusion),
        }

    @_public
    def update_node(
        self,
        graph_id: str,
        node_id: str,
        confidence: Any = None,
        run_id: str | None = None,
    ) -> Payload:
        """Set a claim's confidence and/or add a provenance run id (e.g. a verifier's)."""
        state = self._state(graph_id)
        node_id = self._node(state, graph_id, node_id, "node_id")
        if confidence is None and run_id is None:
            raise _Rejected("update_node needs confidence, run_id or both; got neither")
        data = state.graph.nodes[node_id]
        if confidence is not None:
            data["confidence"] = self._check_value(check_confidence("confidence", confidence))
        if run_id is not None:
            self._check(check_id("run_id", run_id, self.limits))
            data["run_ids"].add(run_id)
        return {"ok": True, "node": _export_node(node_id, data)}

    @_public
    def delete_graph(self, graph_id: str) -> Payload:
        """Forget a graph and free its memory."""
        self._state(graph_id)
        del self._graphs[graph_id]
        return {"ok": True, "graph_id": graph_id}

    # ------------------------------------------------------------------ reads

    @_public
    def check_structure(self, graph_id: str, conclusion_id: str) -> Payload:
        """Orphans, floating assumptions, cycles, reachability, refuted-but-feeding claims."""
        state = self._state(graph_id)
        conclusion = self._node(state, graph_id, conclusion_id, "conclusion_id")
        return checks.check_structure(state.graph, conclusion)

    @_public
    def critical_links(self, graph_id: str, conclusion_id: str) -> Payload:
        """Minimum node cut, bridge edges and edges ranked weakest-first."""
        state = self._state(graph_id)
        conclusion = self._node(state, graph_id, conclusion_id, "conclusion_id")
        return checks.critical_links(state.graph, conclusion)

    @_public
    def support_width(self, graph_id: str, conclusion_id: str) -> Payload:
        """Node-disjoint evidence paths (Menger) and the confidence-capped max flow."""
        state = self._state(graph_id)
        conclusion = self._node(state, graph_id, conclusion_id, "conclusion_id")
        paths, flow = semantics.support_width(state.graph, conclusion)
        return {"disjoint_paths": len(paths), "paths": paths, "max_flow": flow}

    @_public
    def surviving_claims(self, graph_id: str) -> Payload:
        """Grounded labelling over attacks, plus claims still grounded in live evidence."""
        state = self._state(graph_id)
        label = semantics.grounded_labelling(state.graph)
        return {
            "in": sorted(n for n, lab in label.items() if lab == semantics.IN),
            "out": sorted(n for n, lab in label.items() if lab == semantics.OUT),
            "undecided": sorted(n for n, lab in label.items() if lab == semantics.UNDEC),
            "surviving": sorted(semantics.surviving(state.graph, label)),
        }

    @_public
    def disputed_nodes(self, graph_id: str, conclusion_id: str) -> Payload:
        """Live contradiction pairs and single-run claims the conclusion leans on."""
        state = self._state(graph_id)
        conclusion = self._node(state, graph_id, conclusion_id, "conclusion_id")
        return {
            "contradiction_pairs": disputes.contradiction_pairs(state.graph),
            "isolated_load_bearing": disputes.isolated_load_bearing(state.graph, conclusion),
        }

    @_public
    def get_graph(self, graph_id: str) -> Payload:
        """Every node and edge with every attribute, sorted by id."""
        state = self._state(graph_id)
        graph = state.graph
        return {
            "graph_id": graph_id,
            "nodes": [_export_node(n, graph.nodes[n]) for n in sorted(graph.nodes)],
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

    @_public
    def list_graphs(self) -> Payload:
        """Ids and sizes of every stored graph."""
        return {
            "graphs": [
                {
                    "graph_id": graph_id,
                    "nodes": state.graph.number_of_nodes(),
                    "edges": state.graph.number_of_edges(),
                }
                for graph_id, state in sorted(self._graphs.items())
            ]
        }

    # ---------------------------------------------------------------- helpers

    def _add_node(self, state: _Graph, record: NodeRecord) -> str | None:
        graph = state.graph
        if record.id in state.merged_into:
            kept = state.resolve(record.id)
            if state.merged_claim[record.id] != record.claim:
                return (
                    f"id {record.id!r} was merged into {kept!r} with claim "
                    f"{shown(state.merged_claim[record.id])}; a different claim cannot reuse it"
                )
            # The kept node speaks for the merged id, so its source is the one to match.
            conflict = _source_conflict(record, graph.nodes[kept], f"{kept!r} (merged from it)")
            if conflict:
                return conflict
            _adopt_source(graph.nodes[kept], record)
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
            conflict = _source_conflict(record, data, "it")
            if conflict:
                return conflict
            _adopt_source(data, record)
            data["run_ids"] |= record.run_ids
            data["confidence"] = max(data["confidence"], record.confidence)
            return None
        if graph.number_of_nodes() >= self.limits.max_nodes_per_graph:
            return f"graph is full: limit of {self.limits.max_nodes_per_graph} nodes reached"
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
        return None

    def _add_edge(self, state: _Graph, graph_id: str, edge: EdgeRecord) -> list[str] | str:
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
            existing["confidence"] = max(existing["confidence"], edge.confidence)
            existing["run_ids"] |= edge.run_ids
        elif state.edge_count >= self.limits.max_edges_per_graph:
            return f"graph is full: limit of {self.limits.max_edges_per_graph} edges reached"
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
        return [src, dst, edge.relation]

    def _apply(self, state: _Graph, plan: MergePlan) -> tuple[list[list[str]], list[list[str]]]:
        claims = {
            n: state.graph.nodes[n]["claim"] for cluster in plan.clusters for n in cluster[1:]
        }
        merges, contradictions = apply_plan(state.graph, plan)
        state.edge_count = state.graph.number_of_edges()
        for kept, merged in merges:
            state.merged_into[merged] = kept
            state.merged_claim[merged] = claims[merged]
        return merges, contradictions

    def _width(self, graph: nx.MultiDiGraph, conclusion: str | None) -> int | None:
        if conclusion is None:
            return None
        return len(semantics.disjoint_paths(graph, conclusion))

    def _conclusion_for(
        self, state: _Graph, graph_id: str, conclusion_id: str | None
    ) -> str | None:
        if conclusion_id is not None:
            return self._node(state, graph_id, conclusion_id, "conclusion_id")
        found = [n for n, t in state.graph.nodes(data="type") if t == "conclusion"]
        return found[0] if len(found) == 1 else None

    def _state(self, graph_id: Any) -> _Graph:
        self._check_graph_id(graph_id)
        if graph_id not in self._graphs:
            raise _Rejected(
                f"graph_id {graph_id!r} not found ({len(self._graphs)} graphs stored; "
                "see list_graphs)"
            )
        return self._graphs[graph_id]

    def _node(self, state: _Graph, graph_id: str, node_id: Any, field_name: str) -> str:
        self._check(check_id(field_name, node_id, self.limits))
        if node_id in state.graph:
            return str(node_id)
        if node_id in state.merged_into:
            raise _Rejected(
                f"{field_name} {node_id!r} was merged into {state.resolve(node_id)!r}; use that id"
            )
        raise _Rejected(f"{field_name} {node_id!r} is not a node of graph {graph_id!r}")

    def _check_graph_id(self, graph_id: Any) -> None:
        self._check(check_id("graph_id", graph_id, self.limits))

    @staticmethod
    def _check_list(field_name: str, value: Any) -> list[Any]:
        if not isinstance(value, list | tuple):
            raise _Rejected(f"{field_name} must be a list, got {shown(value)}")
        return list(value)

    @staticmethod
    def _check(problem: str | None) -> None:
        if problem:
            raise _Rejected(problem)

    @staticmethod
    def _check_value(parsed: tuple[float | None, str | None]) -> float:
        value, problem = parsed
        if problem or value is None:
            raise _Rejected(problem or "missing value")
        return value


def _source_conflict(record: NodeRecord, data: dict[str, Any], holder: str) -> str | None:
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


def _adopt_source(data: dict[str, Any], record: NodeRecord) -> None:
    """A node asserted without a source takes the first one it is re-asserted with."""
    if data["source"] is None:
        data["source"] = record.source


def _export_node(node_id: str, data: dict[str, Any]) -> Payload:
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


def _echo(item: Any) -> Any:
    """The rejected item as the caller sent it, with very long strings shortened."""
    if isinstance(item, str):
        return item if len(item) <= _ECHO_CHARS else item[:_ECHO_CHARS] + f"... ({len(item)} chars)"
    if isinstance(item, dict):
        return {str(k): _echo(v) for k, v in list(item.items())[:20]}
    if isinstance(item, list | tuple):
        return [_echo(v) for v in list(item)[:20]]
    if item is None or isinstance(item, bool | int | float):
        return item
    return shown(item)
