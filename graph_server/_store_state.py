"""The records :class:`graph_server.store.GraphStore` keeps per graph, and its undo log.

Private to the store: nothing here takes a lock. A :class:`GraphState` is only read or
changed by a caller that holds ``GraphState.lock`` (the store does), the way the algorithms
modules are handed a networkx graph.
"""

from __future__ import annotations

import gc
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import networkx as nx

from graph_server.dedup import Cancelled, MergePlan, apply_plan
from graph_server.errors import InvalidInput, LimitExceeded
from graph_server.records import Withheld
from graph_server.similarity import ClaimKey, claim_key
from graph_server.validation import StoreLimits, decode_json_text, shown

CancelCheck = Callable[[], bool]
"""Returns True once the caller wants the call abandoned (checked between batches)."""
T = TypeVar("T")
_SAMPLE_IDS = 8
"""Claim ids a ``contradictions_withheld`` entry names (its ``size`` says how many in all)."""


def required(
    field_name: str, parsed: tuple[T | None, str | None], missing: str = "missing value"
) -> T:
    """The value of a ``(value, problem)`` check, or :class:`InvalidInput` with the problem.

    ``missing`` is the message when there is neither value nor problem. O(1).
    """
    value, problem = parsed
    if problem or value is None:
        raise InvalidInput(field_name, problem or missing)
    return value


class OverTime(Exception):
    """Raised by a checkpoint once its request has run for its time limit."""


def checkpoint_for(cancel: CancelCheck | None, seconds: float | None = None) -> Callable[[], None]:
    """A check that raises :class:`graph_server.dedup.Cancelled` once ``cancel()`` is true,
    and :class:`OverTime` once ``seconds`` (None: no limit) have passed since it was made."""
    started = time.monotonic()

    def checkpoint() -> None:
        if cancel is not None and cancel():
            raise Cancelled
        if seconds is not None and time.monotonic() - started >= seconds:
            raise OverTime

    return checkpoint


def check_list(field_name: str, value: Any) -> list[Any]:
    """``value`` (or the JSON text of one) as a list, or :class:`InvalidInput`. O(len)."""
    value = decode_json_text(value)
    if not isinstance(value, list | tuple):
        raise InvalidInput(field_name, f"{field_name} must be a list, got {shown(value)}")
    return list(value)


def check_count(what: str, count: int, limit: int) -> None:
    """:class:`LimitExceeded` when one call sends more than ``limit`` items. O(1)."""
    if count > limit:
        raise LimitExceeded(
            "max_items_per_call",
            f"{what} has {count} items, over the limit of {limit} per call; split the payload",
        )


@dataclass
class GraphState:
    """One stored graph: the networkx graph, its merge history, evidence and lock."""

    graph: nx.MultiDiGraph = field(default_factory=nx.MultiDiGraph)
    merged_into: dict[str, str] = field(default_factory=dict)
    """Ids removed by dedup -> the id they were merged into (possibly merged again later)."""
    merged_claim: dict[str, str] = field(default_factory=dict)
    edge_count: int = 0
    """Kept in step with the graph: MultiDiGraph.number_of_edges() is O(V), not O(1)."""
    claim_bytes: int = 0
    """UTF-8 bytes of the claims this graph holds (its share of the memory budget)."""
    keys: dict[str, ClaimKey] = field(default_factory=dict)
    """This graph's claim normalisation cache: text -> key. Dropped with the graph."""
    lock: threading.RLock = field(default_factory=threading.RLock)
    alive: bool = True
    """False once deleted: a call that waited for the lock must not use it."""
    sizes: tuple[int, int] = (0, 0)
    """Committed node and edge counts, readable without the lock (list_graphs)."""
    committed: bool = False
    """Whether any call on this graph completed (a graph only a cancelled call saw is dropped)."""
    evidence: dict[str, str] = field(default_factory=dict)
    """Registered evidence spans, id -> text (add_evidence): givens are checked against them."""

    def resolve(self, node_id: str) -> str:
        """The live id a (possibly merged) id stands for. O(length of the merge chain)."""
        while node_id in self.merged_into:
            node_id = self.merged_into[node_id]
        return node_id

    def key(self, text: str) -> ClaimKey:
        """The normalised key of a claim, cached per graph. O(len(text)) on a miss."""
        found = self.keys.get(text)
        if found is None:
            found = self.keys[text] = claim_key(text)
        return found

    def sole_conclusion(self) -> str | None:
        """The graph's one ``conclusion`` node, or None if it has none or several. O(V)."""
        found = [n for n, t in self.graph.nodes(data="type") if t == "conclusion"]
        return found[0] if len(found) == 1 else None

    def settle(self) -> None:
        """Publish the committed sizes and mark the graph as having completed a call."""
        self.sizes = (self.graph.number_of_nodes(), self.edge_count)
        self.committed = True

    def apply(
        self, plan: MergePlan, limits: StoreLimits
    ) -> tuple[list[list[str]], list[list[str]], list[Withheld]]:
        """Carry out a dedup plan within the edge limit and record the merge history.

        Returns ``(merges, contradictions, withheld)``: the first two as
        :func:`graph_server.dedup.apply_plan` gives them; ``withheld`` reports (see
        :func:`withheld_report`) the rival groups over ``limits.max_rival_claims`` and the
        contradictions that found the graph full. Cost: that of ``apply_plan`` plus O(E)
        to recount the edges.
        """
        claims = {n: self.graph.nodes[n]["claim"] for cluster in plan.clusters for n in cluster[1:]}
        merges, contradictions, over_limit = apply_plan(
            self.graph, plan, limits.max_edges_per_graph
        )
        self.edge_count = self.graph.number_of_edges()
        for kept, merged in merges:
            self.merged_into[merged] = kept
            self.merged_claim[merged] = claims[merged]
        return merges, contradictions, withheld_report(plan, over_limit, limits)

    def clear(self) -> None:
        """Drop everything the graph holds (after deletion), so its memory is freed at once."""
        # networkx caches its views (nodes, adj, ...) in the graph's __dict__, and
        # they point back at the graph: a reference cycle that would wait for the
        # cyclic garbage collector. Clearing the dict frees the graph at once.
        self.graph.__dict__.clear()
        self.graph = nx.MultiDiGraph()
        self.keys.clear()
        self.merged_into.clear()
        self.merged_claim.clear()
        self.evidence.clear()


def withheld_report(
    plan: MergePlan, over_limit: list[list[str]], limits: StoreLimits
) -> list[Withheld]:
    """The ``contradictions_withheld`` entries of a dedup reply: why rival pairs got no
    attack edges. Each is ``{reason, size, pairs, claims}``: the claims concerned (their
    count and the first few ids) and how many rival pairs went without attacks. O(groups).
    """
    entries: list[Withheld] = []
    for group, pairs in plan.withheld:
        entries.append(
            Withheld(
                reason=(
                    f"{len(group)} claims differ only in one number (or only in negation), more "
                    f"than max_rival_claims ({limits.max_rival_claims}): read as a list of "
                    "different things, not rival readings of one value; they stay apart "
                    "without attack edges"
                ),
                size=len(group),
                pairs=pairs,
                claims=list(group[:_SAMPLE_IDS]),
            )
        )
    if over_limit:
        involved = sorted({node for pair in over_limit for node in pair})
        entries.append(
            Withheld(
                reason=(
                    f"graph is full: the attack edges of {len(over_limit)} contradictions "
                    f"would pass max_edges_per_graph ({limits.max_edges_per_graph})"
                ),
                size=len(involved),
                pairs=len(over_limit),
                claims=involved[:_SAMPLE_IDS],
            )
        )
    return entries


@dataclass
class Undo:
    """What one assert_graph call changed, so a cancelled call can be taken back."""

    new_nodes: list[str] = field(default_factory=list)
    old_nodes: dict[str, tuple[set[str], float, str | None]] = field(default_factory=dict)
    new_edges: list[tuple[str, str, str]] = field(default_factory=list)
    old_edges: dict[tuple[str, str, str], tuple[float, set[str]]] = field(default_factory=dict)
    claim_bytes: int = 0
    """Bytes of the claims this call added."""
    reserved: int = 0
    """Bytes charged to the memory budget so far (0 until the nodes are all in)."""

    def touch_node(self, node_id: str, data: dict[str, Any]) -> None:
        """Remember a node's provenance before its first change in this call. O(1)."""
        if node_id not in self.old_nodes and node_id not in self.new_nodes:
            self.old_nodes[node_id] = (set(data["run_ids"]), data["confidence"], data["source"])

    def touch_edge(self, edge: tuple[str, str, str], data: dict[str, Any]) -> None:
        """Remember an edge's confidence and runs before its first change. O(1)."""
        if edge not in self.old_edges:
            self.old_edges[edge] = (data["confidence"], set(data["run_ids"]))

    def roll_back(self, state: GraphState) -> None:
        """Undo this call's changes to ``state`` (not the budget). O(items changed)."""
        graph = state.graph
        for edge in reversed(self.new_edges):
            graph.remove_edge(*edge)
        for (src, dst, relation), (confidence, run_ids) in self.old_edges.items():
            graph.edges[src, dst, relation].update(confidence=confidence, run_ids=run_ids)
        for node_id in reversed(self.new_nodes):
            claim = graph.nodes[node_id]["claim"]
            graph.remove_node(node_id)
            state.keys.pop(claim, None)
        for node_id, (run_ids, confidence, source) in self.old_nodes.items():
            graph.nodes[node_id].update(run_ids=run_ids, confidence=confidence, source=source)
        state.edge_count -= len(self.new_edges)


def _load_malloc_trim() -> Callable[[int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        trim: Callable[[int], int] = ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):  # another libc: nothing to trim with
        return None
    return trim


_MALLOC_TRIM = _load_malloc_trim()


def release_memory() -> None:
    """Hand freed heap pages back to the operating system after a graph is deleted.

    CPython frees the graph's objects at once (nothing else refers to them), but
    glibc keeps freed pages in its arenas; ``malloc_trim`` returns them, so the
    process's RSS goes back down. A no-op where glibc is not the allocator.
    """
    gc.collect()
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)
