"""Pieces of ``GraphStore.dump_state`` and ``restore_state``: records in, records out.

Private to :class:`graph_server.store.GraphStore`, which holds the locks and the memory
budget; the functions here read or fill one graph's state while the store holds its lock,
or are pure. A bad record raises ``KeyError``, ``TypeError``, ``ValueError`` or
:class:`~graph_server._store_state.Rejected`; the store names the record in the message.
"""

from __future__ import annotations

from typing import Any

from graph_server import export
from graph_server._store_payloads import snapshot
from graph_server._store_state import GraphState, Payload, required
from graph_server.validation import NODE_KEYS, check_text, shown

Batch = tuple[list[Payload], list[Payload]]
"""Nodes and edges of one ``assert_graph`` call."""


def dump_record(name: str, state: GraphState) -> Payload:
    """One graph in full: its snapshot, evidence and merge history, sorted. O(size)."""
    return {
        **snapshot(name, state.graph),
        "evidence": dict(sorted(state.evidence.items())),
        "merged_into": dict(sorted(state.merged_into.items())),
        "merged_claim": dict(sorted(state.merged_claim.items())),
    }


def assert_batches(nodes: list[Any], edges: list[Any], step: int) -> list[Batch]:
    """The ``assert_graph`` calls that reload a graph: nodes first, then edges.

    Each call holds at most ``step`` items; a graph with neither still gets one (empty)
    call, so it exists. Raises KeyError for a node or edge missing a key. O(items).
    """
    items = [{key: node[key] for key in NODE_KEYS} for node in nodes]
    links = [{key: edge[key] for key in export.EDGE_KEYS} for edge in edges]
    batches: list[Batch] = [(items[i : i + step], []) for i in range(0, len(items), step)]
    batches += [([], links[i : i + step]) for i in range(0, len(links), step)]
    return batches or [([], [])]


def evidence_batches(evidence: Any, step: int) -> list[list[Payload]]:
    """The ``add_evidence`` calls that reload a graph's spans, ``step`` spans each. O(n)."""
    spans = [{"id": k, "text": v} for k, v in dict(evidence).items()]
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


def refuse_failures(answer: Payload) -> None:
    """Raise on a store answer that refused the call or any item of it (restore_state)."""
    if "error" in answer:
        raise ValueError(answer["error"])
    if answer["rejected"]:
        first = answer["rejected"][0]
        raise ValueError(f"{first['at']}: {first['reason']}")


def strings(field_name: str, value: Any) -> list[str]:
    """``value`` as a list of strings, or TypeError. O(len(value))."""
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise TypeError(f"{field_name} must be a list of strings, got {shown(value)}")
    return list(value)
