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
import gc
import logging
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

import networkx as nx

from graph_server import arguments, checks, disputes, export, semantics
from graph_server.citation import SpanTable, check_citation
from graph_server.dedup import Cancelled, MergePlan, apply_plan, plan_merges
from graph_server.similarity import ClaimKey, claim_key
from graph_server.validation import (
    DEFAULT_JACCARD_THRESHOLD,
    DEFAULT_RATIO_THRESHOLD,
    NODE_KEYS,
    EdgeRecord,
    NodeRecord,
    StoreLimits,
    check_confidence,
    check_flag,
    check_text,
    decode_json_text,
    normalise_id,
    parse_edge,
    parse_node,
    parse_span,
    shown,
)

log = logging.getLogger(__name__)

Payload = dict[str, Any]
CancelCheck = Callable[[], bool]
"""Returns True once the caller wants the call abandoned (checked between batches)."""
F = TypeVar("F", bound=Callable[..., Payload])

_OWN_THRESHOLD: Any = object()
"""Default of ``merge_duplicates``' thresholds: use the store's own (None stays an error)."""
_ECHO_CHARS = 200
_BATCH = 1_000
"""Items validated between two cancellation checks."""


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
        while node_id in self.merged_into:
            node_id = self.merged_into[node_id]
        return node_id

    def key(self, text: str) -> ClaimKey:
        found = self.keys.get(text)
        if found is None:
            found = self.keys[text] = claim_key(text)
        return found


@dataclass
class _Undo:
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
        if node_id not in self.old_nodes and node_id not in self.new_nodes:
            self.old_nodes[node_id] = (set(data["run_ids"]), data["confidence"], data["source"])

    def touch_edge(self, edge: tuple[str, str, str], data: dict[str, Any]) -> None:
        if edge not in self.old_edges:
            self.old_edges[edge] = (data["confidence"], set(data["run_ids"]))

    def roll_back(self, state: _Graph) -> None:
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


def _public(method: F) -> F:
    """Turn every failure into an error dict (the contract: never raise to the caller)."""

    @functools.wraps(method)
    def wrapper(self: GraphStore, *args: Any, **kwargs: Any) -> Payload:
        try:
            return method(self, *args, **kwargs)
        except _Rejected as rejected:
            return {"error": str(rejected)}
        except Exception as exc:
            log.exception("internal error in %s", method.__name__)
            return {"error": f"internal error in {method.__name__}: {type(exc).__name__}: {exc}"}

    return wrapper  # type: ignore[return-value]


def _cancelled_error(method: str) -> _Rejected:
    return _Rejected(
        f"cancelled: {method} stopped before its commit point; nothing from this call was "
        "applied and the graph is as it was"
    )


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

        Returns ``{accepted_nodes, accepted_edges, rejected, auto_merged,
        contradictions_created}``. Cost: validation O(items) plus the dedup of the
        new nodes (see :func:`graph_server.dedup.plan_merges`).
        """
        run = self._optional_id("run_id", run_id)
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

        def checkpoint() -> None:
            if cancel is not None and cancel():
                raise Cancelled

        with self._locked(graph_id, create=True) as (name, state):
            undo = _Undo()
            try:
                result = self._ingest(name, state, nodes, edges, run, undo, checkpoint)
                merges: list[list[str]] = []
                contradictions: list[list[str]] = []
                if dedup_flag:
                    plan = plan_merges(
                        state.graph,
                        self.jaccard_threshold,
                        self.ratio_threshold,
                        focus=result.pop("_new_nodes"),
                        key_of=state.key,
                        checkpoint=checkpoint,
                    )
                    checkpoint()
                    # The commit point: from here on the call completes.
                    merges, contradictions = self._apply(state, plan)
                result.pop("_new_nodes", None)
            except Cancelled:
                self._roll_back(name, state, undo)
                raise _cancelled_error("assert_graph") from None
            except BaseException:
                self._roll_back(name, state, undo)
                raise
            self._settle(state)
        return {**result, "auto_merged": merges, "contradictions_created": contradictions}

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
        spans = self._check_list("spans", spans)
        if len(spans) > self.limits.max_items_per_call:
            raise _Rejected(
                f"spans has {len(spans)} items, over the limit of "
                f"{self.limits.max_items_per_call} per call; split the payload"
            )
        with self._locked(graph_id, create=True) as (name, state):
            accepted: list[str] = []
            rejected: list[Payload] = []
            added: dict[str, str] = {}
            for index, raw in enumerate(spans):
                parsed = parse_span(raw, self.limits)
                if isinstance(parsed, str):
                    rejected.append({"at": f"spans.{index}", "item": _echo(raw), "reason": parsed})
                    continue
                span_id, text = parsed
                known = state.evidence.get(span_id, added.get(span_id))
                if known is not None and known != text:
                    reason = f"span {span_id!r} already holds the text {shown(known)}"
                    rejected.append({"at": f"spans.{index}", "item": _echo(raw), "reason": reason})
                    continue
                added.setdefault(span_id, text)
                accepted.append(span_id)
            undo = _Undo(claim_bytes=sum(len(text.encode("utf-8")) for text in added.values()))
            try:
                self._charge(state, undo)
            except _Rejected:
                self._roll_back(name, state, undo)
                raise
            state.evidence.update(added)
            self._settle(state)
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
            ``{merges: [[kept, merged]], contradictions_created: [[a, b]]}``, or
            ``{"error": ...}`` for a bad threshold, an unknown graph or a cancelled pass.
        """
        if jaccard_threshold is _OWN_THRESHOLD:
            jaccard_threshold = self.jaccard_threshold
        if ratio_threshold is _OWN_THRESHOLD:
            ratio_threshold = self.ratio_threshold
        jaccard = self._check_value(check_confidence("jaccard_threshold", jaccard_threshold))
        ratio = self._check_value(check_confidence("ratio_threshold", ratio_threshold))

        def checkpoint() -> None:
            if cancel is not None and cancel():
                raise Cancelled

        with self._locked(graph_id) as (_, state):
            try:
                plan = plan_merges(
                    state.graph, jaccard, ratio, key_of=state.key, checkpoint=checkpoint
                )
                checkpoint()
            except Cancelled:
                raise _cancelled_error("merge_duplicates") from None
            merges, contradictions = self._apply(state, plan)
            self._settle(state)
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
        why = self._check_text(check_text("reason", reason, self.limits.max_reason_chars))
        with self._locked(graph_id) as (name, state):
            node = self._node(state, name, node_id, "node_id")
            conclusion = self._conclusion_for(state, name, conclusion_id)
            data = state.graph.nodes[node]
            already = bool(data["refuted"])
            before = self._width(state.graph, conclusion)
            if not already:
                data["refuted"] = True
                data["refute_reason"] = why
            return {
                "ok": True,
                "node_id": node,
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
        if confidence is None and run_id is None:
            raise _Rejected("update_node needs confidence, run_id or both; got neither")
        value = (
            None
            if confidence is None
            else self._check_value(check_confidence("confidence", confidence))
        )
        run = self._optional_id("run_id", run_id)
        with self._locked(graph_id) as (name, state):
            node = self._node(state, name, node_id, "node_id")
            data = state.graph.nodes[node]
            if value is not None:
                data["confidence"] = value
            if run is not None:
                data["run_ids"].add(run)
            return {"ok": True, "node": _export_node(node, data)}

    @_public
    def delete_graph(self, graph_id: str) -> Payload:
        """Forget a graph and free its memory (its claims leave the memory budget)."""
        with self._locked(graph_id) as (name, state):
            with self._registry:
                del self._graphs[name]
                self._claim_bytes -= state.claim_bytes
            state.alive = False
            # networkx caches its views (nodes, adj, ...) in the graph's __dict__, and
            # they point back at the graph: a reference cycle that would wait for the
            # cyclic garbage collector. Clearing the dict frees the graph at once.
            state.graph.__dict__.clear()
            state.graph = nx.MultiDiGraph()
            state.keys.clear()
            state.merged_into.clear()
            state.merged_claim.clear()
            state.evidence.clear()
        _release_memory()
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
    def argument_width(self, graph_id: str, conclusion_id: str) -> Payload:
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
        """
        with self._locked(graph_id) as (name, state):
            conclusion = self._node(state, name, conclusion_id, "conclusion_id")
            found = arguments.argument_width(state.graph, conclusion)
            return {
                "width": found.width,
                "arguments": [list(claims) for claims in found.arguments],
                "independent": [list(found.arguments[i]) for i in found.independent],
                "min_cut": list(found.min_cut),
                "capped": found.capped,
                "max_arguments": arguments.DEFAULT_MAX_ARGUMENTS,
            }

    @_public
    def surviving_claims(self, graph_id: str) -> Payload:
        """Grounded labelling over attacks, plus claims still grounded in live evidence."""
        with self._locked(graph_id) as (_, state):
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
            return _snapshot(name, state.graph)

    @_public
    def export_graph(self, graph_id: str, format: Any) -> Payload:
        """The graph as ``json`` (replayable into the store), ``graphml`` or ``mermaid``.

        Returns ``{graph_id, format, graph, content}``: for json ``graph`` is the replayable
        object (see :mod:`graph_server.export`) and ``content`` null; for the others
        ``content`` is the text and ``graph`` null.
        """
        if format not in export.FORMATS:
            raise _Rejected(
                f"format must be one of {', '.join(export.FORMATS)}; got {shown(format)}"
            )
        with self._locked(graph_id) as (name, state):
            graph = _snapshot(name, state.graph)
            answer: Payload = {"graph_id": name, "format": format, "graph": None, "content": None}
            if format == "json":
                return {**answer, "graph": export.to_json(graph, state.evidence)}
            if format == "graphml":
                return {**answer, "content": export.to_graphml(graph)}
            label = semantics.grounded_labelling(state.graph)
            surviving = sorted(semantics.surviving(state.graph, label))
            disputed = sorted(
                {n for pair in disputes.contradiction_pairs(state.graph) for n in pair}
            )
            return {**answer, "content": export.to_mermaid(graph, surviving, disputed)}

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
                records.append(
                    {
                        **_snapshot(name, state.graph),
                        "evidence": dict(sorted(state.evidence.items())),
                        "merged_into": dict(sorted(state.merged_into.items())),
                        "merged_claim": dict(sorted(state.merged_claim.items())),
                    }
                )
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
            except (KeyError, TypeError, ValueError, _Rejected) as exc:
                graph_id = record.get("graph_id") if isinstance(record, dict) else None
                problem = f"missing key {exc}" if isinstance(exc, KeyError) else str(exc)
                raise ValueError(f"graphs.{index} ({shown(graph_id)}): {problem}") from None

    def _restore_graph(self, record: Any) -> None:
        if not isinstance(record, dict):
            raise TypeError(f"a graph must be an object, got {shown(record)}")
        graph_id, nodes, edges = record["graph_id"], record["nodes"], record["edges"]
        if graph_id in self._graphs:
            raise ValueError("the same graph_id appears twice")
        items = [{key: node[key] for key in NODE_KEYS} for node in nodes]
        links = [{key: edge[key] for key in export.EDGE_KEYS} for edge in edges]
        step = self.limits.max_items_per_call
        # Nodes before edges, in calls within the per-call limit; dedup off: merges already ran.
        batches: list[tuple[list[Payload], list[Payload]]] = [
            (items[i : i + step], []) for i in range(0, len(items), step)
        ]
        batches += [([], links[i : i + step]) for i in range(0, len(links), step)]
        for batch_nodes, batch_edges in batches or [([], [])]:
            done = self.assert_graph(graph_id, batch_nodes, batch_edges, dedup=False)
            _refuse_failures(done)
        spans = [{"id": k, "text": v} for k, v in dict(record["evidence"]).items()]
        for i in range(0, len(spans), step):
            _refuse_failures(self.add_evidence(graph_id, spans[i : i + step]))
        with self._locked(graph_id) as (_, state):
            for node in nodes:
                data = state.graph.nodes[node["id"]]
                if not isinstance(node["refuted"], bool):
                    raise TypeError(f"refuted must be true or false, got {shown(node['refuted'])}")
                if node["refuted"]:
                    data["refuted"] = True
                    data["refute_reason"] = self._check_text(
                        check_text(
                            "refute_reason", node["refute_reason"], self.limits.max_reason_chars
                        )
                    )
                data["aliases"] = _strings("aliases", node["aliases"])
                data["merged_ids"] = _strings("merged_ids", node["merged_ids"])
            merged_into, merged_claim = record["merged_into"], record["merged_claim"]
            for merged, kept in merged_into.items():
                claim = merged_claim[merged]
                if not isinstance(kept, str) or not isinstance(claim, str):
                    raise TypeError(f"merged id {shown(merged)} needs a string target and claim")
                if merged in state.graph:
                    raise ValueError(f"merged id {shown(merged)} is also a live node")
                state.merged_into[merged] = kept
                state.merged_claim[merged] = claim
            # Merged claims stay charged to the budget while live, so they are on reload too.
            merged_bytes = sum(len(claim.encode("utf-8")) for claim in state.merged_claim.values())
            self._charge(state, _Undo(claim_bytes=merged_bytes))
            for merged in merged_into:
                # A chain that loops or ends nowhere would hang or break every later lookup.
                seen = {merged}
                target = merged_into[merged]
                while target in merged_into and target not in seen:
                    seen.add(target)
                    target = merged_into[target]
                if target not in state.graph:
                    raise ValueError(f"merged id {shown(merged)} does not lead to a node")

    # -------------------------------------------------------------- locking

    @contextmanager
    def _locked(self, graph_id: Any, *, create: bool = False) -> Iterator[tuple[str, _Graph]]:
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
                        raise _Rejected(
                            f"graph_id {name!r} not found ({len(self._graphs)} graphs stored; "
                            "see list_graphs)"
                        )
                    if len(self._graphs) >= self.limits.max_graphs:
                        raise _Rejected(
                            f"graph_id {name!r} would be graph number {len(self._graphs) + 1}, "
                            f"over the limit of {self.limits.max_graphs}; delete_graph unused "
                            "graphs first"
                        )
                    state = self._graphs[name] = _Graph()
            with state.lock:
                if state.alive:
                    yield name, state
                    return

    def _roll_back(self, name: str, state: _Graph, undo: _Undo) -> None:
        undo.roll_back(state)
        with self._registry:
            self._claim_bytes -= undo.reserved
            state.claim_bytes -= undo.reserved
            if not state.committed:
                # A graph this call created: it leaves no trace either.
                self._graphs.pop(name, None)
                state.alive = False

    @staticmethod
    def _settle(state: _Graph) -> None:
        state.sizes = (state.graph.number_of_nodes(), state.edge_count)
        state.committed = True

    # ---------------------------------------------------------------- helpers

    def _ingest(
        self,
        graph_id: str,
        state: _Graph,
        nodes: list[Any],
        edges: list[Any],
        run_id: str | None,
        undo: _Undo,
        checkpoint: Callable[[], None],
    ) -> Payload:
        """Add the valid items (recording ``undo``), charge the memory budget."""
        rejected: list[Payload] = []
        accepted_nodes: list[str] = []
        new_nodes: dict[str, None] = {}
        citations: list[Payload] = []
        spans = SpanTable(state.evidence)
        for index, raw in enumerate(nodes):
            if index % _BATCH == 0:
                checkpoint()
            record = parse_node(raw, run_id, self.limits)
            if isinstance(record, NodeRecord) and record.type == "given" and state.evidence:
                check = check_citation(record.claim, record.source, spans)
                citations.append(
                    {
                        "at": f"nodes.{index}",
                        "id": record.id,
                        "source": record.source,
                        "ok": check.ok,
                        "reason": check.reason,
                        "detail": check.detail,
                    }
                )
                if not check.ok:  # kept, but as a premise nothing supports
                    record = replace(record, type="assumption")
            outcome = record if isinstance(record, str) else self._add_node(state, record, undo)
            if outcome is None:
                assert isinstance(record, NodeRecord)
                accepted_nodes.append(record.id)
                if record.id in state.graph:
                    new_nodes[record.id] = None
            else:
                rejected.append({"at": f"nodes.{index}", "item": _echo(raw), "reason": outcome})
        self._charge(state, undo)
        accepted_edges: list[list[str]] = []
        for index, raw in enumerate(edges):
            if index % _BATCH == 0:
                checkpoint()
            edge = parse_edge(raw, run_id, self.limits)
            added = edge if isinstance(edge, str) else self._add_edge(state, graph_id, edge, undo)
            if isinstance(added, list):
                accepted_edges.append(added)
            else:
                rejected.append({"at": f"edges.{index}", "item": _echo(raw), "reason": added})
        checkpoint()
        return {
            "accepted_nodes": accepted_nodes,
            "accepted_edges": accepted_edges,
            "rejected": rejected,
            "citations": citations,
            "_new_nodes": list(new_nodes),
        }

    def _charge(self, state: _Graph, undo: _Undo) -> None:
        """Reserve the new claims' bytes in the memory budget, or refuse the whole call."""
        with self._registry:
            if self._claim_bytes + undo.claim_bytes > self.limits.max_claim_bytes:
                wanted, used = undo.claim_bytes, self._claim_bytes
                raise _Rejected(
                    f"memory budget exceeded: this call adds {wanted:,} bytes of claim text, "
                    f"{used:,} of the {self.limits.max_claim_bytes:,}-byte budget "
                    "(max_claim_bytes, all graphs together) are in use; nothing from this "
                    "call was applied. delete_graph graphs you no longer need, or send less"
                )
            self._claim_bytes += undo.claim_bytes
            state.claim_bytes += undo.claim_bytes
            undo.reserved = undo.claim_bytes

    def _add_node(self, state: _Graph, record: NodeRecord, undo: _Undo) -> str | None:
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
            undo.touch_node(kept, graph.nodes[kept])
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
            undo.touch_node(record.id, data)
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
        undo.new_nodes.append(record.id)
        undo.claim_bytes += len(record.claim.encode("utf-8"))
        return None

    def _add_edge(
        self, state: _Graph, graph_id: str, edge: EdgeRecord, undo: _Undo
    ) -> list[str] | str:
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
            undo.new_edges.append((src, dst, edge.relation))
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

    def _node(self, state: _Graph, graph_id: str, node_id: Any, field_name: str) -> str:
        node = self._id(field_name, node_id)
        if node in state.graph:
            return node
        if node in state.merged_into:
            raise _Rejected(
                f"{field_name} {node!r} was merged into {state.resolve(node)!r}; use that id"
            )
        raise _Rejected(f"{field_name} {node!r} is not a node of graph {graph_id!r}")

    def _id(self, field_name: str, value: Any) -> str:
        clean, problem = normalise_id(field_name, value, self.limits)
        if problem or clean is None:
            raise _Rejected(problem or f"{field_name} is missing")
        return clean

    def _optional_id(self, field_name: str, value: Any) -> str | None:
        return None if value is None else self._id(field_name, value)

    @staticmethod
    def _check_list(field_name: str, value: Any) -> list[Any]:
        value = decode_json_text(value)
        if not isinstance(value, list | tuple):
            raise _Rejected(f"{field_name} must be a list, got {shown(value)}")
        return list(value)

    @staticmethod
    def _check_text(parsed: tuple[str | None, str | None]) -> str:
        value, problem = parsed
        if problem or value is None:
            raise _Rejected(problem or "missing text")
        return value

    @staticmethod
    def _check_value(parsed: tuple[float | None, str | None]) -> float:
        value, problem = parsed
        if problem or value is None:
            raise _Rejected(problem or "missing value")
        return value


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


def _release_memory() -> None:
    """Hand freed heap pages back to the operating system after a graph is deleted.

    CPython frees the graph's objects at once (nothing else refers to them), but
    glibc keeps freed pages in its arenas; ``malloc_trim`` returns them, so the
    process's RSS goes back down. A no-op where glibc is not the allocator.
    """
    gc.collect()
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)


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


def _refuse_failures(answer: Payload) -> None:
    """Raise on a store answer that refused the call or any item of it (restore_state)."""
    if "error" in answer:
        raise ValueError(answer["error"])
    if answer["rejected"]:
        first = answer["rejected"][0]
        raise ValueError(f"{first['at']}: {first['reason']}")


def _strings(field_name: str, value: Any) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise TypeError(f"{field_name} must be a list of strings, got {shown(value)}")
    return list(value)


def _snapshot(graph_id: str, graph: nx.MultiDiGraph) -> Payload:
    """Every node and edge with every attribute, sorted by id (the caller holds the lock)."""
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
