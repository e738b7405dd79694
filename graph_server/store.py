"""GraphStore: many in-memory argument graphs, one lock per graph.

This is the library API (the MCP server in :mod:`graph_server.server` exposes the
same methods as tools). Every public method takes ``graph_id`` first, returns a
JSON-serialisable dict and never raises: failures come back as
``{"error": "..."}`` naming the field, the value and the rule broken.

Concurrency: each graph has its own lock, held for the whole of a call on that
graph, so work on one graph never waits for another. A short registry lock guards
only the table of graphs (creation, lookup, deletion, listing) and the memory
budget; it is never held while a graph's lock is awaited.

Writes are all or nothing where it matters: ``assert_graph`` records an undo log
while it adds items and deduplicates; if the caller's ``cancel`` check fires
before the commit point (between batches), or the call would overrun the memory
budget, the log is rolled back and the graph is exactly as before. The algorithms
(:mod:`~graph_server.checks`, :mod:`~graph_server.semantics`,
:mod:`~graph_server.disputes`, :mod:`~graph_server.dedup`) are functions over
networkx graphs that the store hands them while holding the graph's lock.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from graph_server import _store_payloads as payloads
from graph_server import checks, disputes, export, semantics
from graph_server._store_ingest import (
    IngestCall,
    Ingested,
    ingest_edges,
    ingest_nodes,
    parse_spans,
)
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
    OverTime,
    Payload,
    Rejected,
    Undo,
    cancelled_error,
    check_count,
    check_list,
    checkpoint_for,
    release_memory,
    required,
)
from graph_server.dedup import Cancelled, plan_merges
from graph_server.validation import (
    DEFAULT_JACCARD_THRESHOLD,
    DEFAULT_RATIO_THRESHOLD,
    StoreLimits,
    check_confidence,
    check_flag,
    check_text,
    normalise_id,
    shown,
)

__all__ = ["CancelCheck", "GraphStore", "Payload"]

log = logging.getLogger(__name__)

F = TypeVar("F", bound=Callable[..., Payload])

_OWN_THRESHOLD: Any = object()
"""Default of ``merge_duplicates``' thresholds: use the store's own (None stays an error)."""
_NO_VALUE = "missing value"


def _public(method: F) -> F:
    """Turn every failure into an error dict (the contract: never raise to the caller)."""

    @functools.wraps(method)
    def wrapper(self: GraphStore, *args: Any, **kwargs: Any) -> Payload:
        try:
            return method(self, *args, **kwargs)
        except Rejected as rejected:
            return {"error": str(rejected)}
        except Exception as exc:
            log.exception("internal error in %s", method.__name__)
            return {"error": f"internal error in {method.__name__}: {type(exc).__name__}: {exc}"}

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
        self._graphs: dict[str, GraphState] = {}
        self._registry = threading.Lock()
        self._claim_bytes = 0

    @property
    def claim_bytes(self) -> int:
        """UTF-8 bytes of claim text held across all graphs (what the budget counts)."""
        with self._registry:
            return self._claim_bytes

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
        cancel: CancelCheck | None = None,
    ) -> Payload:
        """Ingest nodes and edges, keep the valid ones, deduplicate new nodes.

        Inputs: node dicts ``{id, claim, type, confidence?, run_ids?, source?}``, edge
        dicts, an optional ``run_id`` for items naming none, and the keyword-only
        ``dedup`` switch (a bool, or ``"true"``/``"false"``; default true).
        Each rejected item is reported with its position (``at``) and reason;
        accepted items stay. Re-sending the same payload changes nothing. New nodes
        are deduplicated against the whole graph (see :mod:`graph_server.dedup`)
        unless ``dedup`` is false, in which case nothing merges and no contradiction
        is created now (``merge_duplicates`` can run later).

        ``source`` (optional, an id) is what the claim is anchored to: for a given,
        the id of the evidence span it cites; for any node, an identity key chosen by
        the caller. Two nodes with different non-null sources are never merged (and
        get no attack edge for it). Re-asserting an id with a different non-null
        source is rejected for that item; the same or no source is fine.

        All or nothing per call: ``cancel`` (optional) is checked between batches; if
        it returns true before the commit point, or the new claims would overrun the
        memory budget (``StoreLimits.max_claim_bytes``), every change of this call is
        undone and the answer is an error saying so.

        Contradictions are capped: a group of more than ``max_rival_claims`` claims that
        differ only in one number gets no attack edges (a list of different things, not
        rival readings), and no contradiction takes the graph past
        ``max_edges_per_graph``; ``contradictions_withheld`` lists each such case, so a
        graph the store (or a state file) cannot load back is never made.

        Returns ``{accepted_nodes, accepted_edges, rejected, citations, auto_merged,
        contradictions_created, contradictions_withheld}``. Cost: validation O(items) plus
        the dedup of the new nodes (see :func:`graph_server.dedup.plan_merges`).
        """
        run = self._optional_id("run_id", run_id)
        dedup_flag, problem = check_flag("dedup", dedup)
        if problem:
            raise Rejected(problem)
        nodes = check_list("nodes", nodes)
        edges = check_list("edges", [] if edges is None else edges)
        check_count("nodes + edges", len(nodes) + len(edges), self.limits.max_items_per_call)
        checkpoint = checkpoint_for(cancel)
        with self._locked(graph_id, create=True) as (name, state):
            undo = Undo()
            try:
                result = self._ingest(name, state, nodes, edges, run, undo, checkpoint)
                merges: list[list[str]] = []
                contradictions: list[list[str]] = []
                withheld: list[Payload] = []
                if dedup_flag:
                    plan = plan_merges(
                        state.graph,
                        self.jaccard_threshold,
                        self.ratio_threshold,
                        focus=list(result.new_nodes),
                        key_of=state.key,
                        checkpoint=checkpoint,
                        max_rivals=self.limits.max_rival_claims,
                    )
                    checkpoint()
                    # The commit point: from here on the call completes.
                    merges, contradictions, withheld = state.apply(plan, self.limits)
            except Cancelled:
                self._roll_back(name, state, undo)
                raise cancelled_error("assert_graph") from None
            except BaseException:
                self._roll_back(name, state, undo)
                raise
            self._settle(name, state)
        return {
            **result.payload(),
            "auto_merged": merges,
            "contradictions_created": contradictions,
            "contradictions_withheld": withheld,
        }

    @_public
    def add_evidence(self, graph_id: str, spans: Any) -> Payload:
        """Register evidence spans ``{id, text}`` on a graph (creating it on first use).

        From then on every ``given`` that ``assert_graph`` receives for this graph must cite
        one of them in ``source`` and say what it says (the rules of
        :mod:`graph_server.citation`: numbers and names of the claim occur in the span, its
        content words are contained in it, no negation added); a given that fails is stored
        as an ``assumption`` and ``citations`` in the reply says why. Re-sending a span is a
        no-op; a known id with a different text is a rejected item. Span text counts
        against the memory budget like claims (all or nothing per call).

        Returns ``{graph_id, accepted, rejected, spans}`` (``spans``: how many the graph now
        holds). Cost: O(total text).
        """
        spans = check_list("spans", spans)
        check_count("spans", len(spans), self.limits.max_items_per_call)
        with self._locked(graph_id, create=True) as (name, state):
            accepted, rejected, added = parse_spans(state.evidence, spans, self.limits)
            undo = Undo(claim_bytes=sum(len(text.encode("utf-8")) for text in added.values()))
            try:
                self._charge(state, undo)
            except Rejected:
                self._roll_back(name, state, undo)
                raise
            state.evidence.update(added)
            self._settle(name, state)
            return {
                "graph_id": name,
                "accepted": accepted,
                "rejected": rejected,
                "spans": len(state.evidence),
            }

    @_public
    def merge_duplicates(
        self,
        graph_id: str,
        jaccard_threshold: Any = _OWN_THRESHOLD,
        ratio_threshold: Any = _OWN_THRESHOLD,
        *,
        cancel: CancelCheck | None = None,
    ) -> Payload:
        """Full-graph dedup pass over one graph.

        Parameters
        ----------
        graph_id : str
            The graph to deduplicate.
        jaccard_threshold, ratio_threshold : float, optional
            Scores in 0..1 at or above which two claims count as the same; when left
            out, this store's own thresholds (the ones ``assert_graph`` uses).
        cancel : callable, optional
            Checked while the pass is planned; a cancelled pass changes nothing.

        Returns
        -------
        dict
            ``{merges: [[kept, merged]], contradictions_created: [[a, b]],
            contradictions_withheld: [...]}`` (the caps of ``assert_graph``), or
            ``{"error": ...}`` for a bad threshold, an unknown graph or a cancelled pass.
        """
        if jaccard_threshold is _OWN_THRESHOLD:
            jaccard_threshold = self.jaccard_threshold
        if ratio_threshold is _OWN_THRESHOLD:
            ratio_threshold = self.ratio_threshold
        jaccard = required(check_confidence("jaccard_threshold", jaccard_threshold), _NO_VALUE)
        ratio = required(check_confidence("ratio_threshold", ratio_threshold), _NO_VALUE)
        checkpoint = checkpoint_for(cancel)
        with self._locked(graph_id) as (_, state):
            try:
                plan = plan_merges(
                    state.graph,
                    jaccard,
                    ratio,
                    key_of=state.key,
                    checkpoint=checkpoint,
                    max_rivals=self.limits.max_rival_claims,
                )
                checkpoint()
            except Cancelled:
                raise cancelled_error("merge_duplicates") from None
            merges, contradictions, withheld = state.apply(plan, self.limits)
            state.settle()
        return {
            "merges": merges,
            "contradictions_created": contradictions,
            "contradictions_withheld": withheld,
        }

    @_public
    def mark_refuted(
        self, graph_id: str, node_id: str, reason: str, conclusion_id: str | None = None
    ) -> Payload:
        """Mark a claim refuted and report the conclusion's support width before and after.

        The conclusion is ``conclusion_id`` when given, else the graph's single
        ``conclusion`` node if exactly one exists (otherwise widths are null).
        Marking an already refuted claim changes nothing and keeps the first reason.
        """
        why = required(check_text("reason", reason, self.limits.max_reason_chars), "missing text")
        with self._locked(graph_id) as (name, state):
            node = self._node(state, name, node_id, "node_id")
            conclusion = self._conclusion_for(state, name, conclusion_id)
            data = state.graph.nodes[node]
            already = bool(data["refuted"])
            before = payloads.width(state.graph, conclusion)
            if not already:
                data["refuted"] = True
                data["refute_reason"] = why
            return {
                "ok": True,
                "node_id": node,
                "already_refuted": already,
                "conclusion_id": conclusion,
                "width_before": before,
                "width_after": payloads.width(state.graph, conclusion),
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
        if confidence is None and run_id is None:
            raise Rejected("update_node needs confidence, run_id or both; got neither")
        checked = None if confidence is None else check_confidence("confidence", confidence)
        value = None if checked is None else required(checked, _NO_VALUE)
        run = self._optional_id("run_id", run_id)
        with self._locked(graph_id) as (name, state):
            node = self._node(state, name, node_id, "node_id")
            data = state.graph.nodes[node]
            if value is not None:
                data["confidence"] = value
            if run is not None:
                data["run_ids"].add(run)
            return {"ok": True, "node": payloads.export_node(node, data)}

    @_public
    def delete_graph(self, graph_id: str) -> Payload:
        """Forget a graph and free its memory (its claims leave the memory budget)."""
        with self._locked(graph_id) as (name, state):
            with self._registry:
                del self._graphs[name]
                self._claim_bytes -= state.claim_bytes
            state.alive = False
            state.clear()
        release_memory()
        return {"ok": True, "graph_id": name}

    # ------------------------------------------------------------------ reads

    @_public
    def check_structure(self, graph_id: str, conclusion_id: str) -> Payload:
        """Orphans, floating assumptions, cycles, reachability, refuted-but-feeding claims."""
        with self._locked(graph_id) as (name, state):
            conclusion = self._node(state, name, conclusion_id, "conclusion_id")
            return checks.check_structure(state.graph, conclusion)

    @_public
    def critical_links(self, graph_id: str, conclusion_id: str) -> Payload:
        """Minimum node cut, bridge edges and edges ranked weakest-first."""
        with self._locked(graph_id) as (name, state):
            conclusion = self._node(state, name, conclusion_id, "conclusion_id")
            return checks.critical_links(state.graph, conclusion)

    @_public
    def support_width(self, graph_id: str, conclusion_id: str) -> Payload:
        """Node-disjoint evidence paths (Menger) and the confidence-capped max flow."""
        with self._locked(graph_id) as (name, state):
            conclusion = self._node(state, name, conclusion_id, "conclusion_id")
            paths, flow = semantics.support_width(state.graph, conclusion)
            return {"disjoint_paths": len(paths), "paths": paths, "max_flow": flow}

    @_public
    def argument_width(
        self, graph_id: str, conclusion_id: str, *, cancel: CancelCheck | None = None
    ) -> Payload:
        """Independent arguments for a conclusion (:mod:`graph_server.arguments`).

        Premises a run lists together are joint; an argument is a minimal set of claims
        deriving the conclusion from live givens. Returns ``{width, arguments, independent,
        min_cut, capped, max_arguments}``: ``arguments`` each list their claims without the
        conclusion (sorted by size, then ids), ``independent`` is a largest selection of
        them sharing no claim (``width`` of them), ``min_cut`` a smallest set of claims
        meeting every argument. ``capped`` true: a claim had more than ``max_arguments``
        derivations or the enumeration ran out of work (``DEFAULT_MAX_UNIONS`` unions), and
        width and cut size are lower bounds. Cost: see
        :func:`graph_server.arguments.argument_width`.

        Bounded per request: a search running longer than ``max_request_seconds`` ends with
        an error naming that limit, and ``cancel`` (optional) stops it between claims.
        """
        with self._locked(graph_id) as (name, state):
            conclusion = self._node(state, name, conclusion_id, "conclusion_id")
            checkpoint = checkpoint_for(cancel, self.limits.max_request_seconds)
            try:
                return payloads.argument_width(state.graph, conclusion, checkpoint)
            except Cancelled:
                raise cancelled_error("argument_width") from None
            except OverTime:
                raise Rejected(
                    f"argument_width stopped after {self.limits.max_request_seconds:g} s, the "
                    f"per-request limit (max_request_seconds), on graph {name!r} with "
                    f"{state.graph.number_of_nodes():,} claims and {state.edge_count:,} links; "
                    "nothing was changed. Ask about a conclusion with a smaller support graph"
                ) from None

    @_public
    def surviving_claims(self, graph_id: str) -> Payload:
        """Grounded labelling over attacks, plus claims still grounded in live evidence."""
        with self._locked(graph_id) as (_, state):
            return payloads.surviving_claims(state.graph)

    @_public
    def disputed_nodes(self, graph_id: str, conclusion_id: str) -> Payload:
        """Live contradiction pairs and single-run claims the conclusion leans on."""
        with self._locked(graph_id) as (name, state):
            conclusion = self._node(state, name, conclusion_id, "conclusion_id")
            return {
                "contradiction_pairs": disputes.contradiction_pairs(state.graph),
                "isolated_load_bearing": disputes.isolated_load_bearing(state.graph, conclusion),
            }

    @_public
    def get_graph(self, graph_id: str) -> Payload:
        """Every node and edge with every attribute, sorted by id."""
        with self._locked(graph_id) as (name, state):
            return payloads.snapshot(name, state.graph)

    @_public
    def export_graph(self, graph_id: str, format: Any) -> Payload:
        """The graph as ``json`` (replayable into the store), ``graphml`` or ``mermaid``.

        Returns ``{graph_id, format, graph, content}``: for json ``graph`` is the replayable
        object (see :mod:`graph_server.export`) and ``content`` null; for the others
        ``content`` is the text and ``graph`` null.
        """
        if format not in export.FORMATS:
            raise Rejected(
                f"format must be one of {', '.join(export.FORMATS)}; got {shown(format)}"
            )
        with self._locked(graph_id) as (name, state):
            return payloads.exported(name, state.graph, state.evidence, format)

    @_public
    def list_graphs(self) -> Payload:
        """Ids and committed sizes of every stored graph; never waits for a busy graph."""
        with self._registry:
            listed = sorted(self._graphs.items())
            used = self._claim_bytes
        return {
            "graphs": [
                {"graph_id": graph_id, "nodes": state.sizes[0], "edges": state.sizes[1]}
                for graph_id, state in listed
            ],
            "claim_bytes": used,
            "claim_bytes_limit": self.limits.max_claim_bytes,
        }

    # ------------------------------------------------------------ persistence

    def dump_state(self) -> list[Payload]:
        """Every graph in full (merge history and evidence included), sorted by id.

        Each graph is read under its own lock, so a record is never half-written; what
        :meth:`restore_state` takes back. Cost: O(size of the store).
        """
        with self._registry:
            listed = sorted(self._graphs.items())
        records: list[Payload] = []
        for name, state in listed:
            with state.lock:
                if not state.alive or not state.committed:
                    continue
                records.append(dump_record(name, state))
        return records

    def restore_state(self, records: Any) -> None:
        """Load what :meth:`dump_state` wrote into this (empty) store, or raise ValueError.

        The nodes, edges and evidence go through ``assert_graph`` and ``add_evidence``, so
        every validation rule and every limit (memory budget included) applies as if a
        client had sent them; any item refused refuses the whole load, naming it.
        """
        if self._graphs:
            raise ValueError("restore_state needs an empty store")
        if not isinstance(records, list):
            raise ValueError(f"graphs must be a list, got {shown(records)}")
        for index, record in enumerate(records):
            try:
                self._restore_graph(record)
            except (KeyError, TypeError, ValueError, Rejected) as exc:
                graph_id = record.get("graph_id") if isinstance(record, dict) else None
                problem = f"missing key {exc}" if isinstance(exc, KeyError) else str(exc)
                raise ValueError(f"graphs.{index} ({shown(graph_id)}): {problem}") from None

    def _restore_graph(self, record: Any) -> None:
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
            refuse_failures(self.assert_graph(graph_id, batch_nodes, batch_edges, dedup=False))
        for spans in evidence_batches(record["evidence"], step):
            refuse_failures(self.add_evidence(graph_id, spans))
        with self._locked(graph_id) as (_, state):
            restore_node_flags(state, nodes, self.limits.max_reason_chars)
            merged_into = record["merged_into"]
            merged_bytes = restore_merges(state, merged_into, record["merged_claim"])
            # Merged claims stay charged to the budget while live, so they are on reload too.
            self._charge(state, Undo(claim_bytes=merged_bytes))
            check_merge_chains(state, merged_into)

    # -------------------------------------------------------------- locking

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
                    if not create:
                        raise Rejected(
                            f"graph_id {name!r} not found ({len(self._graphs)} graphs stored; "
                            "see list_graphs)"
                        )
                    if len(self._graphs) >= self.limits.max_graphs:
                        raise Rejected(
                            f"graph_id {name!r} would be graph number {len(self._graphs) + 1}, "
                            f"over the limit of {self.limits.max_graphs}; delete_graph unused "
                            "graphs first"
                        )
                    state = self._graphs[name] = GraphState()
            with state.lock:
                if state.alive:
                    yield name, state
                    return

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

    def _roll_back(self, name: str, state: GraphState, undo: Undo) -> None:
        undo.roll_back(state)
        with self._registry:
            self._claim_bytes -= undo.reserved
            state.claim_bytes -= undo.reserved
            if not state.committed:
                # A graph this call created: it leaves no trace either.
                self._graphs.pop(name, None)
                state.alive = False

    # ---------------------------------------------------------------- helpers

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

        Raises :class:`Rejected` over the budget and whatever ``checkpoint`` raises. O(items).
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
                raise Rejected(
                    f"memory budget exceeded: this call adds {wanted:,} bytes of claim text, "
                    f"{used:,} of the {self.limits.max_claim_bytes:,}-byte budget "
                    "(max_claim_bytes, all graphs together) are in use; nothing from this "
                    "call was applied. delete_graph graphs you no longer need, or send less"
                )
            self._claim_bytes += undo.claim_bytes
            state.claim_bytes += undo.claim_bytes
            undo.reserved = undo.claim_bytes

    def _conclusion_for(
        self, state: GraphState, graph_id: str, conclusion_id: str | None
    ) -> str | None:
        if conclusion_id is not None:
            return self._node(state, graph_id, conclusion_id, "conclusion_id")
        return state.sole_conclusion()

    def _node(self, state: GraphState, graph_id: str, node_id: Any, field_name: str) -> str:
        node = self._id(field_name, node_id)
        if node in state.graph:
            return node
        if node in state.merged_into:
            raise Rejected(
                f"{field_name} {node!r} was merged into {state.resolve(node)!r}; use that id"
            )
        raise Rejected(f"{field_name} {node!r} is not a node of graph {graph_id!r}")

    def _id(self, field_name: str, value: Any) -> str:
        return required(normalise_id(field_name, value, self.limits), f"{field_name} is missing")

    def _optional_id(self, field_name: str, value: Any) -> str | None:
        return None if value is None else self._id(field_name, value)
