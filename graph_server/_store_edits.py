"""The small edits of :class:`graph_server.store.GraphStore`: refute, update, delete.

Private to the store (``GraphStore`` inherits them; read them there). Each holds one graph's
lock for the whole call.
"""

from __future__ import annotations

from graph_server import _store_payloads as payloads
from graph_server._store_reads import StoreReads
from graph_server._store_state import release_memory, required
from graph_server.errors import InvalidInput
from graph_server.records import (
    DeleteGraphAnswer,
    GraphId,
    MarkRefutedAnswer,
    NewConfidence,
    NodeId,
    Reason,
    UpdateNodeAnswer,
    VerifierRun,
    WidthConclusion,
)
from graph_server.validation import check_confidence, check_text


class StoreEdits(StoreReads):
    """The store's edits of single claims and whole graphs (see
    :class:`graph_server.store.GraphStore`).

    Examples
    --------
    >>> sorted(name for name in vars(StoreEdits) if not name.startswith("_"))
    ['delete_graph', 'mark_refuted', 'update_node']
    """

    def mark_refuted(
        self,
        graph_id: GraphId,
        node_id: NodeId,
        reason: Reason,
        conclusion_id: WidthConclusion = None,
    ) -> MarkRefutedAnswer:
        """Mark a claim refuted and report a conclusion's support width before and after.

        Marking an already refuted claim changes nothing and keeps the first reason.

        Parameters
        ----------
        graph_id : str
            The graph.
        node_id : str
            The claim shown false.
        reason : str
            Why, in one sentence (at most ``max_reason_chars``).
        conclusion_id : str, optional
            The conclusion whose width to report; by default the graph's single
            ``conclusion`` node (widths are None when it has none or several).

        Returns
        -------
        MarkRefutedAnswer
            ``ok``, ``node_id``, ``already_refuted``, ``conclusion_id``, ``width_before``
            and ``width_after``. Two width computations, O(V*E) each.

        Raises
        ------
        InvalidInput
            For an empty or over-long reason.
        NotFound
            For an unknown graph, node or conclusion.

        Examples
        --------
        >>> from graph_server.fixture import rack7_store
        >>> answer = rack7_store().mark_refuted("rack7", "D", "survey column misread")
        >>> answer.width_before, answer.width_after
        (2, 1)
        """
        limit = self.limits.max_reason_chars
        why = required("reason", check_text("reason", reason, limit), "missing text")
        with self._locked_node(graph_id, node_id, "node_id") as (name, state, node):
            conclusion = self._conclusion_for(state, name, conclusion_id)
            data = state.graph.nodes[node]
            already = bool(data["refuted"])
            before = payloads.width(state.graph, conclusion)
            if not already:
                data.update(refuted=True, refute_reason=why)
            return MarkRefutedAnswer(
                ok=True,
                node_id=node,
                already_refuted=already,
                conclusion_id=conclusion,
                width_before=before,
                width_after=payloads.width(state.graph, conclusion),
            )

    def update_node(
        self,
        graph_id: GraphId,
        node_id: NodeId,
        confidence: NewConfidence = None,
        run_id: VerifierRun = None,
    ) -> UpdateNodeAnswer:
        """Set a claim's confidence and/or add a run to its provenance (e.g. a verifier's).

        Parameters
        ----------
        graph_id : str
            The graph.
        node_id : str
            The claim.
        confidence : float, optional
            The new confidence in 0..1; replaces the current one.
        run_id : str, optional
            A run id to add to the claim's ``run_ids``.

        Returns
        -------
        UpdateNodeAnswer
            ``ok`` and the updated ``node``. O(1).

        Raises
        ------
        InvalidInput
            When neither is given, or for a bad confidence or run id.
        NotFound
            For an unknown graph or node.

        Examples
        --------
        >>> from graph_server.fixture import rack7_store
        >>> node = rack7_store().update_node("rack7", "D", 0.95, run_id="v1").node
        >>> node.confidence, node.run_ids
        (0.95, ['r1', 'v1'])
        """
        if confidence is None and run_id is None:
            raise InvalidInput(
                "confidence", "update_node needs confidence, run_id or both; got neither"
            )
        checked = None if confidence is None else check_confidence("confidence", confidence)
        value = None if checked is None else required("confidence", checked)
        run = self._optional_id("run_id", run_id)
        with self._locked_node(graph_id, node_id, "node_id") as (_, state, node):
            data = state.graph.nodes[node]
            if value is not None:
                data["confidence"] = value
            if run is not None:
                data["run_ids"].add(run)
            return UpdateNodeAnswer(ok=True, node=payloads.export_node(node, data))

    def delete_graph(self, graph_id: GraphId) -> DeleteGraphAnswer:
        """Forget a graph and free its memory (its claims leave the memory budget).

        Parameters
        ----------
        graph_id : str
            The graph to forget.

        Returns
        -------
        DeleteGraphAnswer
            ``ok`` and the ``graph_id`` deleted. O(size of the graph).

        Raises
        ------
        NotFound
            For an unknown graph, so deleting one twice fails the second time.

        Examples
        --------
        >>> from graph_server.fixture import rack7_store
        >>> store = rack7_store()
        >>> store.delete_graph("rack7").ok, store.list_graphs().graphs
        (True, [])
        """
        with self._locked(graph_id) as (name, state):
            with self._registry:
                del self._graphs[name]
                self._claim_bytes -= state.claim_bytes
            state.alive = False
            state.clear()
        release_memory()
        return DeleteGraphAnswer(ok=True, graph_id=name)
