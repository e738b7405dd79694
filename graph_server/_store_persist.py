"""Pieces of ``GraphStore.dump_state`` and ``restore_state``: records in, records out.

Private to :class:`graph_server.store.GraphStore`, which holds the locks and the memory
budget; the functions here read or fill one graph's state while the store holds its lock,
or are pure. A bad record raises ``KeyError``, ``TypeError``, ``ValueError`` or
:class:`~graph_server.errors.StoreError`; the store names the record in the message.
"""

from __future__ import annotations

from typing import Any

from graph_server import export
from graph_server._store_payloads import snapshot
from graph_server._store_state import GraphState, required
from graph_server.records import Rejection, StoredGraph
from graph_server.validation import NODE_KEYS, check_text, shown

Item = dict[str, object]
"""One node, edge or span as ``assert_graph`` and ``add_evidence`` take it."""
Batch = tuple[list[Item], list[Item]]
"""Nodes and edges of one ``assert_graph`` call."""


def dump_record(name: str, state: GraphState) -> StoredGraph:
    """One graph in full: its snapshot, evidence and merge history, sorted. O(size)."""
    shot = snapshot(name, state.graph)
    return StoredGraph(
        graph_id=shot.graph_id,
        nodes=shot.nodes,
        edges=shot.edges,
        evidence=dict(sorted(state.evidence.items())),
        merged_into=dict(sorted(state.merged_into.items())),
        merged_claim=dict(sorted(state.merged_claim.items())),
    )


def assert_batches(nodes: list[Any], edges: list[Any], step: int) -> list[Batch]:
    """The ``assert_graph`` calls that reload a graph: nodes first, then edges.

    Each call holds at most ``step`` items; a graph with neither still gets one (empty)
    call, so it exists. Raises KeyError for a node or edge missing a key. O(items).
    """
    items: list[Item] = [{key: node[key] for key in NODE_KEYS} for node in nodes]
    links: list[Item] = [{key: edge[key] for key in export.EDGE_KEYS} for edge in edges]
    batches: list[Batch] = [(items[i : i + step], []) for i in range(0, len(items), step)]
    batches += [([], links[i : i + step]) for i in range(0, len(links), step)]
    return batches or [([], [])]


def evidence_batches(evidence: Any, step: int) -> list[list[Item]]:
    """The ``add_evidence`` calls that reload a graph's spans, ``step`` spans each. O(n)."""
    spans: list[Item] = [{"id": k, "text": v} for k, v in dict(evidence).items()]
    return [spans[i : i + step] for i in range(0, len(spans), step)]


def restore_node_flags(state: GraphState, nodes: list[Any], max_reason_chars: int) -> None:
    """Set refutation, aliases and merged ids that ``assert_graph`` does not take. O(V)."""
    for node in nodes:
        data = state.graph.nodes[node["id"]]
        if not isinstance(node["refuted"], bool):
            raise TypeError(f"refuted must be true or false, got {shown(node['refuted'])}")
        if node["refuted"]:
            data["refuted"] = True
            data["refute_reason"] = required(
                "refute_reason",
                check_text("refute_reason", node["refute_reason"], max_reason_chars),
                "missing text",
            )
        data["aliases"] = strings("aliases", node["aliases"])
        data["merged_ids"] = strings("merged_ids", node["merged_ids"])


def restore_merges(state: GraphState, merged_into: Any, merged_claim: Any) -> int:
    """Load the merge history; returns the bytes of all merged claims (to charge). O(n)."""
    for merged, kept in merged_into.items():
        claim = merged_claim[merged]
        if not isinstance(kept, str) or not isinstance(claim, str):
            raise TypeError(f"merged id {shown(merged)} needs a string target and claim")
        if merged in state.graph:
            raise ValueError(f"merged id {shown(merged)} is also a live node")
        state.merged_into[merged] = kept
        state.merged_claim[merged] = claim
    return sum(len(claim.encode("utf-8")) for claim in state.merged_claim.values())


def check_merge_chains(state: GraphState, merged_into: Any) -> None:
    """Raise ValueError unless every merged id leads to a live node. O(n * chain length)."""
    for merged in merged_into:
        # A chain that loops or ends nowhere would hang or break every later lookup.
        seen = {merged}
        target = merged_into[merged]
        while target in merged_into and target not in seen:
            seen.add(target)
            target = merged_into[target]
        if target not in state.graph:
            raise ValueError(f"merged id {shown(merged)} does not lead to a node")


def refuse_failures(rejected: list[Rejection]) -> None:
    """Raise ValueError naming the first item a store call refused (restore_state). O(1)."""
    if rejected:
        raise ValueError(f"{rejected[0].at}: {rejected[0].reason}")


def strings(field_name: str, value: Any) -> list[str]:
    """``value`` as a list of strings, or TypeError. O(len(value))."""
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise TypeError(f"{field_name} must be a list of strings, got {shown(value)}")
    return list(value)
