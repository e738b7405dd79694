"""The machinery under :class:`graph_server.store.GraphStore`: the table of graphs, the
per-graph locks, the memory budget, rollback and the id checks.

Private to the store. Concurrency: each graph has its own lock, held for the whole of a call
on that graph, so work on one graph never waits for another. A short registry lock guards
only the table of graphs (creation, lookup, deletion, listing) and the memory budget; it is
never held while a graph's lock is awaited.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from graph_server._store_ingest import IngestCall, Ingested, ingest_edges, ingest_nodes
from graph_server._store_state import GraphState, Undo, required
from graph_server.dedup import Cancelled as Interrupted
from graph_server.errors import Cancelled, LimitExceeded, NotFound
from graph_server.validation import (
    DEFAULT_JACCARD_THRESHOLD,
    DEFAULT_RATIO_THRESHOLD,
    StoreLimits,
    normalise_id,
)


class StoreBase:
    """Thread-safe table of argument graphs keyed by caller-supplied ``graph_id``.

    Parameters
    ----------
    limits : StoreLimits, optional
        The hard limits (default :class:`~graph_server.validation.StoreLimits`).
    jaccard_threshold, ratio_threshold : float, optional
        The duplicate thresholds ``assert_graph`` and ``merge_duplicates`` use.
    """

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
        self._graphs: dict[str, GraphState] = {}
        self._registry = threading.Lock()
        self._claim_bytes = 0

    @property
    def claim_bytes(self) -> int:
        """UTF-8 bytes of claim text held across all graphs (what the budget counts)."""
        with self._registry:
            return self._claim_bytes

    @contextmanager
    def _locked(self, graph_id: Any, *, create: bool = False) -> Iterator[tuple[str, GraphState]]:
        """Hold the lock of graph ``graph_id`` (normalised), creating it if asked.

        The registry lock is held only to look the graph up, never while waiting for
        the graph's lock; a graph deleted while we waited is looked up again.
        """
        name = self._id("graph_id", graph_id)
        while True:
            with self._registry:
                state = self._graphs.get(name)
                if state is None:
                    state = self._graphs[name] = self._new_graph(name, create)
            with state.lock:
                if state.alive:
                    yield name, state
                    return

    @contextmanager
    def _locked_node(
        self, graph_id: Any, node_id: Any, field_name: str
    ) -> Iterator[tuple[str, GraphState, str]]:
        """:meth:`_locked`, and in it the live node ``node_id`` names (see :meth:`_node`)."""
        with self._locked(graph_id) as (name, state):
            yield name, state, self._node(state, name, node_id, field_name)

    def _new_graph(self, name: str, create: bool) -> GraphState:
        """A new graph for the table (the registry lock held), or the error saying why not."""
        if not create:
            raise NotFound(
                "graph_id",
                f"graph_id {name!r} not found ({len(self._graphs)} graphs stored; see list_graphs)",
            )
        if len(self._graphs) >= self.limits.max_graphs:
            raise LimitExceeded(
                "max_graphs",
                f"graph_id {name!r} would be graph number {len(self._graphs) + 1}, "
                f"over the limit of {self.limits.max_graphs}; delete_graph unused graphs first",
            )
        return GraphState()

    def _settle(self, name: str, state: GraphState) -> None:
        """Publish a completed write; a graph the call created and left empty is not kept.

        So a first ``assert_graph`` or ``add_evidence`` whose items were all rejected leaves
        no trace: no empty graph counts against ``max_graphs`` or shows in ``list_graphs``.
        """
        if not state.committed and state.graph.number_of_nodes() == 0 and not state.evidence:
            with self._registry:
                self._graphs.pop(name, None)
                state.alive = False
            return
        state.settle()

    @contextmanager
    def _all_or_nothing(
        self, call: str, name: str, state: GraphState, undo: Undo
    ) -> Iterator[None]:
        """Run a write's body; if it raises anything, take back what ``undo`` logged (and the
        budget it reserved) before the exception goes on, so a refused, cancelled or failed
        call leaves the graph exactly as it was. A dedup interruption becomes the store's
        ``Cancelled`` naming ``call``."""
        try:
            yield
        except Interrupted:
            self._roll_back(name, state, undo)
            raise Cancelled(call) from None
        except BaseException:
            self._roll_back(name, state, undo)
            raise

    def _roll_back(self, name: str, state: GraphState, undo: Undo) -> None:
        """Take back a call's changes and its share of the budget. O(items changed)."""
        undo.roll_back(state)
        with self._registry:
            self._claim_bytes -= undo.reserved
            state.claim_bytes -= undo.reserved
            if not state.committed:
                # A graph this call created: it leaves no trace either.
                self._graphs.pop(name, None)
                state.alive = False

    def _ingest(
        self,
        graph_id: str,
        state: GraphState,
        nodes: list[Any],
        edges: list[Any],
        run_id: str | None,
        undo: Undo,
        checkpoint: Callable[[], None],
    ) -> Ingested:
        """Add the valid items (recording ``undo``), charge the memory budget.

        Raises :class:`LimitExceeded` over the budget and whatever ``checkpoint`` raises.
        O(items).
        """
        call = IngestCall(run_id, undo, checkpoint, self.limits)
        ingest_nodes(state, nodes, call)
        self._charge(state, undo)
        ingest_edges(state, graph_id, edges, call)
        return call.out

    def _charge(self, state: GraphState, undo: Undo) -> None:
        """Reserve the new claims' bytes in the memory budget, or refuse the whole call."""
        with self._registry:
            if self._claim_bytes + undo.claim_bytes > self.limits.max_claim_bytes:
                wanted, used = undo.claim_bytes, self._claim_bytes
                raise LimitExceeded(
                    "max_claim_bytes",
                    f"memory budget exceeded: this call adds {wanted:,} bytes of claim text, "
                    f"{used:,} of the {self.limits.max_claim_bytes:,}-byte budget "
                    "(max_claim_bytes, all graphs together) are in use; nothing from this "
                    "call was applied. delete_graph graphs you no longer need, or send less",
                )
            self._claim_bytes += undo.claim_bytes
            state.claim_bytes += undo.claim_bytes
            undo.reserved = undo.claim_bytes

    def _conclusion_for(
        self, state: GraphState, graph_id: str, conclusion_id: str | None
    ) -> str | None:
        """The named conclusion, or the graph's sole ``conclusion`` node (None if not one)."""
        if conclusion_id is not None:
            return self._node(state, graph_id, conclusion_id, "conclusion_id")
        return state.sole_conclusion()

    def _node(self, state: GraphState, graph_id: str, node_id: Any, field_name: str) -> str:
        """The live node ``node_id`` names, or :class:`NotFound` (naming a merge's target)."""
        node = self._id(field_name, node_id)
        if node in state.graph:
            return node
        if node in state.merged_into:
            raise NotFound(
                field_name,
                f"{field_name} {node!r} was merged into {state.resolve(node)!r}; use that id",
            )
        raise NotFound(field_name, f"{field_name} {node!r} is not a node of graph {graph_id!r}")

    def _id(self, field_name: str, value: Any) -> str:
        """``value`` under the id rule, or :class:`~graph_server.errors.InvalidInput`."""
        checked = normalise_id(field_name, value, self.limits)
        return required(field_name, checked, f"{field_name} is missing")

    def _optional_id(self, field_name: str, value: Any) -> str | None:
        """:meth:`_id` of ``value``, or None when it is None."""
        return None if value is None else self._id(field_name, value)
