"""GraphStore: many in-memory argument graphs, one lock per graph.

This is the library API (the MCP server in :mod:`graph_server.server` exposes the same
methods as tools, its schemas derived from these signatures). Every public method takes
``graph_id`` first and returns a typed record of :mod:`graph_server.records`; a refused
call raises a :class:`~graph_server.errors.StoreError` naming the field, the value and the
rule broken (or the limit), and nothing of it is applied. Items of ``assert_graph`` and
``add_evidence`` are refused one by one instead: each comes back in the answer's
``rejected`` with its position and reason, and the call's valid items are kept.

Concurrency: each graph has its own lock, held for the whole of a call on that graph, so
work on one graph never waits for another (:mod:`graph_server._store_base`).

Writes are all or nothing where it matters: ``assert_graph`` records an undo log while it
adds items and deduplicates; if the caller's ``cancel`` check fires before the commit point
(between batches), or the call would overrun the memory budget, the log is rolled back and
the graph is exactly as before. The reads live in :mod:`graph_server._store_reads`, the
small edits (``mark_refuted``, ``update_node``, ``delete_graph``) in
:mod:`graph_server._store_edits`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from graph_server._store_edits import StoreEdits
from graph_server._store_ingest import parse_spans
from graph_server._store_persist import (
    assert_batches,
    check_merge_chains,
    dump_record,
    evidence_batches,
    refuse_failures,
    restore_merges,
    restore_node_flags,
)
from graph_server._store_state import (
    CancelCheck,
    GraphState,
    Undo,
    check_count,
    check_list,
    checkpoint_for,
    required,
)
from graph_server.dedup import Cancelled as Interrupted
from graph_server.dedup import plan_merges
from graph_server.errors import Cancelled, InvalidInput, StoreError
from graph_server.records import (
    AddEvidenceAnswer,
    AssertGraphAnswer,
    Dedup,
    Edges,
    GraphId,
    JaccardThreshold,
    MergeDuplicatesAnswer,
    Nodes,
    RatioThreshold,
    RunTag,
    Spans,
    StoredGraph,
    Withheld,
)
from graph_server.validation import check_confidence, check_flag, shown

__all__ = ["CancelCheck", "GraphStore"]


class GraphStore(StoreEdits):
    """Thread-safe store of argument graphs keyed by caller-supplied ``graph_id``.

    Parameters
    ----------
    limits : StoreLimits, optional
        The hard limits (default :class:`~graph_server.validation.StoreLimits`); each one
        is enforced with an error, a rejected item or a withheld contradiction naming it.
    jaccard_threshold, ratio_threshold : float, optional
        The duplicate thresholds (defaults 0.7 and 0.85).

    Notes
    -----
    ``source`` is what a claim is anchored to: for a given, the evidence span it cites
    (checked when the graph has evidence, see :meth:`add_evidence`). Two nodes with different
    sources are never merged, and an id keeps its first source. When nodes are added or
    merged, a group of more than ``max_rival_claims`` claims that differ only in one number
    gets no attack edges, and no contradiction takes the graph past ``max_edges_per_graph``;
    ``contradictions_withheld`` lists each such case.

    Examples
    --------
    >>> store = GraphStore()
    >>> store.assert_graph("g", [{"id": "A", "claim": "rack 7 is in hall B", "type": "given"}])
    ... # doctest: +ELLIPSIS
    AssertGraphAnswer(accepted_nodes=['A'], accepted_edges=[], rejected=[], ...)
    >>> store.support_width("g", "A").disjoint_paths
    0
    """

    def assert_graph(
        self,
        graph_id: GraphId,
        nodes: Nodes,
        edges: Edges = None,
        run_id: RunTag = None,
        *,
        dedup: Dedup = True,
        cancel: CancelCheck | None = None,
    ) -> AssertGraphAnswer:
        """Keep the valid nodes and edges, deduplicate the new nodes against the graph (idempotent);
        ``source`` anchors a claim and the contradiction caps apply (class Notes).

        Parameters
        ----------
        graph_id : str
            The graph, created on first use (a call that adds nothing creates none).
        nodes : sequence of mappings
            ``{id, claim, type, confidence?, run_ids?, source?}`` each (or their JSON text).
        edges : sequence of mappings, optional
            ``{src|from, dst|to, relation, confidence?, run_ids?}`` each.
        run_id : str, optional
            The run of every item that names no ``run_ids``.
        dedup : bool, default True
            False stores every node as sent (``"true"``/``"false"`` are accepted too).
        cancel : callable, optional
            Checked between batches (see ``Cancelled`` below).

        Returns
        -------
        AssertGraphAnswer
            Accepted and refused items (``at``, reason), merges, contradictions; O(items + dedup).

        Raises
        ------
        InvalidInput
            For ``nodes``/``edges`` that are not lists, a bad ``run_id`` or ``dedup``.
        LimitExceeded
            Over ``max_items_per_call``, ``max_graphs`` or the memory budget: nothing applied.
        Cancelled
            When ``cancel`` returned True before the commit point: the call is undone.

        Examples
        --------
        >>> nodes = [{"id": "A", "claim": "rack 7 is in hall B", "type": "given"},
        ...          {"id": "Z", "claim": "x9 is in hall B", "type": "conclusion"},
        ...          {"id": "Q", "claim": "a guess", "type": "guess"}]
        >>> edges = [{"from": "A", "to": "Z", "relation": "supports"}]
        >>> answer = GraphStore().assert_graph("g", nodes, edges, run_id="r1")
        >>> answer.accepted_nodes, answer.accepted_edges, answer.rejected[0].at
        (['A', 'Z'], [['A', 'Z', 'supports']], 'nodes.2')
        """
        payload, dedup_flag = self._checked_payload(nodes, edges, run_id, dedup)
        checkpoint = checkpoint_for(cancel)
        with self._locked(graph_id, create=True) as (name, state):
            undo = Undo()
            with self._all_or_nothing("assert_graph", name, state, undo):
                answer = self._write(name, state, payload, dedup_flag, undo, checkpoint)
            self._settle(name, state)
        return answer

    def _checked_payload(
        self, nodes: Nodes, edges: Edges, run_id: RunTag, dedup: Dedup
    ) -> tuple[tuple[list[Any], list[Any], str | None], bool]:
        """:meth:`assert_graph`'s arguments validated (``run_id``, ``dedup``, then the items,
        before any lock is taken): ``((nodes, edges, run_id), dedup)``."""
        run = self._optional_id("run_id", run_id)
        dedup_flag = required("dedup", check_flag("dedup", dedup))
        items, links = _payload(nodes, edges, self.limits.max_items_per_call)
        return (items, links, run), dedup_flag

    def _write(
        self,
        name: str,
        state: GraphState,
        payload: tuple[list[Any], list[Any], str | None],
        dedup: bool,
        undo: Undo,
        checkpoint: Callable[[], None],
    ) -> AssertGraphAnswer:
        """The work of :meth:`assert_graph` under its lock: ingest ``(nodes, edges, run_id)``
        recording ``undo``, then deduplicate the new nodes if ``dedup``."""
        items, links, run = payload
        result = self._ingest(name, state, items, links, run, undo, checkpoint)
        thresholds = (self.jaccard_threshold, self.ratio_threshold)
        merges, contradictions, withheld = (
            self._dedup(state, thresholds, list(result.new_nodes), checkpoint)
            if dedup
            else ([], [], [])
        )
        return AssertGraphAnswer(
            accepted_nodes=result.accepted_nodes,
            accepted_edges=result.accepted_edges,
            rejected=result.rejected,
            citations=result.citations,
            auto_merged=merges,
            contradictions_created=contradictions,
            contradictions_withheld=withheld,
        )

    def add_evidence(self, graph_id: GraphId, spans: Spans) -> AddEvidenceAnswer:
        """Register evidence spans ``{id, text}`` on a graph (creating it on first use).

        From then on every ``given`` that :meth:`assert_graph` receives for this graph must
        cite one of them in ``source`` and say what it says (:mod:`graph_server.citation`:
        its numbers and names occur in the span, its content words are contained in it, no
        negation added); a given that fails is stored as an ``assumption`` and the reply's
        ``citations`` says why. Re-sending a span is a no-op; a known id with a different
        text is a rejected item. Span text counts against the memory budget.

        Parameters
        ----------
        graph_id : str
            The graph, created on first use.
        spans : sequence of mappings
            ``{id, text}`` each.

        Returns
        -------
        AddEvidenceAnswer
            ``graph_id``, ``accepted`` ids, ``rejected`` items and ``spans`` (how many the
            graph now holds). O(total text).

        Raises
        ------
        InvalidInput
            For ``spans`` that is not a list, or a bad ``graph_id``.
        LimitExceeded
            Over ``max_items_per_call``, ``max_graphs`` or the memory budget.

        Examples
        --------
        >>> store = GraphStore()
        >>> store.add_evidence("g", [{"id": "s1", "text": "Rack 7 is in hall B."}]).spans
        1
        >>> given = {"id": "A", "claim": "rack 7 is in hall C", "type": "given", "source": "s1"}
        >>> store.assert_graph("g", [given]).citations[0].reason
        'name_mismatch'
        """
        items = check_list("spans", spans)
        check_count("spans", len(items), self.limits.max_items_per_call)
        with self._locked(graph_id, create=True) as (name, state):
            accepted, rejected, added = parse_spans(state.evidence, items, self.limits)
            undo = Undo(claim_bytes=sum(len(text.encode("utf-8")) for text in added.values()))
            with self._all_or_nothing("add_evidence", name, state, undo):
                self._charge(state, undo)
            state.evidence.update(added)
            self._settle(name, state)
            return AddEvidenceAnswer(
                graph_id=name, accepted=accepted, rejected=rejected, spans=len(state.evidence)
            )

    def merge_duplicates(
        self,
        graph_id: GraphId,
        jaccard_threshold: JaccardThreshold = None,
        ratio_threshold: RatioThreshold = None,
        *,
        cancel: CancelCheck | None = None,
    ) -> MergeDuplicatesAnswer:
        """A dedup pass over the whole graph, with the contradiction caps of assert_graph.

        Parameters
        ----------
        graph_id : str
            The graph to deduplicate.
        jaccard_threshold, ratio_threshold : float, optional
            Scores in 0..1 at or above which two claims count as the same; None (the
            default) uses this store's own thresholds (the ones ``assert_graph`` uses).
        cancel : callable, optional
            Checked while the pass is planned; a cancelled pass changes nothing.

        Returns
        -------
        MergeDuplicatesAnswer
            ``merges`` (``[kept, merged]`` pairs), ``contradictions_created`` and
            ``contradictions_withheld``. Cost: see :func:`graph_server.dedup.plan_merges`.

        Raises
        ------
        InvalidInput
            For a threshold outside 0..1.
        NotFound
            For an unknown graph.
        Cancelled
            When ``cancel`` fired: nothing is applied.

        Examples
        --------
        >>> store = GraphStore()
        >>> nodes = [{"id": "a", "claim": "server x9 runs linux", "type": "given"},
        ...          {"id": "b", "claim": "Server x9 runs Linux.", "type": "given"}]
        >>> store.assert_graph("g", nodes, dedup=False).auto_merged
        []
        >>> store.merge_duplicates("g").merges
        [['a', 'b']]
        """
        thresholds = (
            _threshold("jaccard_threshold", jaccard_threshold, self.jaccard_threshold),
            _threshold("ratio_threshold", ratio_threshold, self.ratio_threshold),
        )
        checkpoint = checkpoint_for(cancel)
        with self._locked(graph_id) as (_, state):
            try:
                merges, contradictions, withheld = self._dedup(state, thresholds, None, checkpoint)
            except Interrupted:
                raise Cancelled("merge_duplicates") from None
            state.settle()
        return MergeDuplicatesAnswer(
            merges=merges, contradictions_created=contradictions, contradictions_withheld=withheld
        )

    def _dedup(
        self,
        state: GraphState,
        thresholds: tuple[float, float],
        focus: list[str] | None,
        checkpoint: Callable[[], None],
    ) -> tuple[list[list[str]], list[list[str]], list[Withheld]]:
        """Plan the merges of the ``focus`` nodes (None: of every node) under ``checkpoint``,
        then carry them out: ``(merges, contradictions, withheld)`` (see ``state.apply``)."""
        plan = plan_merges(
            state.graph,
            *thresholds,
            focus=focus,
            key_of=state.key,
            checkpoint=checkpoint,
            max_rivals=self.limits.max_rival_claims,
        )
        checkpoint()
        # The commit point: from here on the call completes.
        return state.apply(plan, self.limits)

    def dump_state(self) -> list[StoredGraph]:
        """Every graph in full (merge history and evidence included), sorted by id.

        Each graph is read under its own lock, so a record is never half-written.

        Returns
        -------
        list of StoredGraph
            What :meth:`restore_state` takes back (as JSON: ``record.model_dump()``).
            O(size of the store).

        Examples
        --------
        >>> from graph_server.fixture import rack7_store
        >>> [record.graph_id for record in rack7_store().dump_state()]
        ['rack7']
        """
        with self._registry:
            listed = sorted(self._graphs.items())
        records: list[StoredGraph] = []
        for name, state in listed:
            with state.lock:
                if state.alive and state.committed:
                    records.append(dump_record(name, state))
        return records

    def restore_state(self, records: Any) -> None:
        """Load what :meth:`dump_state` wrote (as JSON) into this empty store.

        The nodes, edges and evidence go through :meth:`assert_graph` and
        :meth:`add_evidence`, so every validation rule and every limit (memory budget
        included) applies as if a client had sent them.

        Parameters
        ----------
        records : list
            The dumped graphs, each ``{graph_id, nodes, edges, evidence, merged_into,
            merged_claim}`` as plain JSON values.

        Raises
        ------
        InvalidInput
            (field ``graphs``) when the store is not empty, or for any record or item
            refused: the whole load is refused, naming the graph and the item.

        Examples
        --------
        >>> from graph_server.fixture import rack7_store
        >>> records = [r.model_dump() for r in rack7_store().dump_state()]
        >>> store = GraphStore()
        >>> store.restore_state(records)
        >>> store.list_graphs().graphs[0].nodes
        8
        >>> store.restore_state(records)
        Traceback (most recent call last):
        ...
        graph_server.errors.InvalidInput: restore_state needs an empty store
        """
        if self._graphs:
            raise InvalidInput("graphs", "restore_state needs an empty store")
        if not isinstance(records, list):
            raise InvalidInput("graphs", f"graphs must be a list, got {shown(records)}")
        for index, record in enumerate(records):
            try:
                self._restore_graph(record)
            except (KeyError, TypeError, ValueError, StoreError) as exc:
                graph_id = record.get("graph_id") if isinstance(record, dict) else None
                problem = f"missing key {exc}" if isinstance(exc, KeyError) else str(exc)
                raise InvalidInput(
                    "graphs", f"graphs.{index} ({shown(graph_id)}): {problem}"
                ) from None

    def _restore_graph(self, record: Any) -> None:
        """Load one dumped graph (see :meth:`restore_state`); raises on anything refused."""
        if not isinstance(record, dict):
            raise TypeError(f"a graph must be an object, got {shown(record)}")
        graph_id, nodes, edges = record["graph_id"], record["nodes"], record["edges"]
        if graph_id in self._graphs:
            raise ValueError("the same graph_id appears twice")
        if not (nodes or edges or record["evidence"] or record["merged_into"]):
            return  # an empty graph, which earlier servers kept: nothing to restore
        # Nodes before edges, in calls within the per-call limit; dedup off: merges already ran.
        step = self.limits.max_items_per_call
        for batch_nodes, batch_edges in assert_batches(nodes, edges, step):
            refuse_failures(
                self.assert_graph(graph_id, batch_nodes, batch_edges, dedup=False).rejected
            )
        for spans in evidence_batches(record["evidence"], step):
            refuse_failures(self.add_evidence(graph_id, spans).rejected)
        with self._locked(graph_id) as (_, state):
            restore_node_flags(state, nodes, self.limits.max_reason_chars)
            merged_into = record["merged_into"]
            merged_bytes = restore_merges(state, merged_into, record["merged_claim"])
            # Merged claims stay charged to the budget while live, so they are on reload too.
            self._charge(state, Undo(claim_bytes=merged_bytes))
            check_merge_chains(state, merged_into)


def _payload(nodes: Any, edges: Any, limit: int) -> tuple[list[Any], list[Any]]:
    """``nodes`` and ``edges`` as lists (None: no edges), refused unless both are lists and
    hold at most ``limit`` items together."""
    items = check_list("nodes", nodes)
    links = check_list("edges", [] if edges is None else edges)
    check_count("nodes + edges", len(items) + len(links), limit)
    return items, links


def _threshold(field: str, value: float | None, default: float) -> float:
    """``value`` (``default`` when None) checked to be a score in 0..1, or InvalidInput."""
    return required(field, check_confidence(field, default if value is None else value))
