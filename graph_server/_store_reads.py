"""The read calls of :class:`graph_server.store.GraphStore`: checks, widths, labels, exports.

Private to the store (``GraphStore`` inherits them; read them there). Each holds one graph's
lock for the whole call and hands the networkx graph to the algorithm modules
(:mod:`~graph_server.checks`, :mod:`~graph_server.semantics`,
:mod:`~graph_server.arguments`, :mod:`~graph_server.disputes`). None changes anything.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import networkx as nx

from graph_server import _store_payloads as payloads
from graph_server._store_base import StoreBase
from graph_server._store_state import CancelCheck, OverTime, checkpoint_for
from graph_server.dedup import Cancelled as Interrupted
from graph_server.errors import Cancelled, InvalidInput, LimitExceeded
from graph_server.records import (
    ArgumentWidthAnswer,
    CheckStructureAnswer,
    ConclusionId,
    CriticalLinksAnswer,
    DisputedNodesAnswer,
    ExportFormat,
    ExportGraphAnswer,
    GetGraphAnswer,
    GraphCount,
    GraphId,
    ListGraphsAnswer,
    SupportWidthAnswer,
    SurvivingClaimsAnswer,
)
from graph_server.validation import EXPORT_FORMATS, shown

Answer = TypeVar("Answer")


class StoreReads(StoreBase):
    """The store's read-only calls (see :class:`graph_server.store.GraphStore`).

    Examples
    --------
    >>> sorted(name for name in vars(StoreReads) if not name.startswith("_"))
    ... # doctest: +NORMALIZE_WHITESPACE
    ['argument_width', 'check_structure', 'critical_links', 'disputed_nodes', 'export_graph',
     'get_graph', 'list_graphs', 'support_width', 'surviving_claims']
    """

    def check_structure(
        self, graph_id: GraphId, conclusion_id: ConclusionId
    ) -> CheckStructureAnswer:
        """Structural faults of the argument for one conclusion.

        Parameters
        ----------
        graph_id : str
            The graph to check; ``orphans``, ``assumptions`` and ``cycles`` are its own,
            whatever the conclusion.
        conclusion_id : str
            The claim that ``unreachable_conclusion`` and ``refuted_but_feeding`` are about.

        Returns
        -------
        CheckStructureAnswer
            ``orphans`` (claims nothing supports that are neither givens nor assumptions),
            ``assumptions`` (unsupported ones), ``cycles`` (at most 10),
            ``unreachable_conclusion`` and ``refuted_but_feeding``. O(V+E), cycles
            O((V+E)*11).

        Raises
        ------
        NotFound
            For an unknown graph or conclusion; a conclusion no live evidence reaches is no
            error (``unreachable_conclusion`` is true).

        Examples
        --------
        >>> from graph_server.fixture import rack7_store
        >>> faults = rack7_store().check_structure("rack7", "Z")
        >>> faults.orphans, faults.unreachable_conclusion
        (['F', 'G'], False)
        """
        return self._on_conclusion(graph_id, conclusion_id, payloads.structure)

    def critical_links(self, graph_id: GraphId, conclusion_id: ConclusionId) -> CriticalLinksAnswer:
        """The links and claims a conclusion hangs on.

        Parameters
        ----------
        graph_id : str
            The graph to search; refuted claims and attacks play no part.
        conclusion_id : str
            The claim whose weak points are wanted.

        Returns
        -------
        CriticalLinksAnswer
            ``min_cut_nodes`` (fewest claims whose failure cuts the conclusion off from the
            givens), ``bridge_edges`` and ``ranked`` (links on an evidence route, least
            confident first). Cut O(V*E), bridges O(P*(V+E)), ranking O(V+E).

        Raises
        ------
        NotFound
            For an unknown graph or conclusion; a conclusion no live evidence reaches gets
            three empty lists.

        Examples
        --------
        >>> from graph_server.fixture import rack7_store
        >>> rack7_store().critical_links("rack7", "Z").min_cut_nodes
        ['D', 'E']
        """
        return self._on_conclusion(graph_id, conclusion_id, payloads.critical_links)

    def support_width(self, graph_id: GraphId, conclusion_id: ConclusionId) -> SupportWidthAnswer:
        """Node-disjoint evidence paths to a conclusion (Menger) and the confidence-capped
        max flow.

        Parameters
        ----------
        graph_id : str
            The graph, whose live givens are the evidence.
        conclusion_id : str
            The claim whose evidence is measured; it is no evidence for itself, even as a
            given, and its own confidence caps no flow.

        Returns
        -------
        SupportWidthAnswer
            ``disjoint_paths`` (1: a single point of failure, 0: no evidence), ``paths``
            and ``max_flow``. O(V*E).

        Raises
        ------
        NotFound
            For an unknown graph or conclusion; a conclusion no live evidence reaches has
            width 0 and ``max_flow`` 0.0.

        Examples
        --------
        >>> from graph_server.fixture import rack7_store
        >>> rack7_store().support_width("rack7", "Z").paths
        [['A', 'C', 'E', 'Z'], ['D', 'Z']]
        """
        return self._on_conclusion(graph_id, conclusion_id, payloads.support_width)

    def argument_width(
        self,
        graph_id: GraphId,
        conclusion_id: ConclusionId,
        *,
        cancel: CancelCheck | None = None,
    ) -> ArgumentWidthAnswer:
        """Independent arguments for a conclusion (:mod:`graph_server.arguments`).

        Premises a run lists together are joint; an argument is a minimal set of claims
        deriving the conclusion from live givens.

        Parameters
        ----------
        graph_id : str
            The graph to search for derivations.
        conclusion_id : str
            The claim to derive from the live givens.
        cancel : callable, optional
            Checked between claims; once it returns True the search stops.

        Returns
        -------
        ArgumentWidthAnswer
            ``arguments`` (each its claims without the conclusion, sorted by size, then
            ids), ``independent`` (a largest selection sharing no claim, ``width`` of them),
            ``min_cut`` (fewest claims meeting every argument), ``capped`` (a claim had more
            than ``max_arguments`` derivations or the search ran out of work: width and cut
            are lower bounds). Cost: see :func:`graph_server.arguments.argument_width`.

        Raises
        ------
        NotFound
            For an unknown graph or conclusion.
        LimitExceeded
            When the search runs past ``max_request_seconds`` (nothing changes).
        Cancelled
            When ``cancel`` fired.

        Examples
        --------
        >>> from graph_server.fixture import rack7_store
        >>> found = rack7_store().argument_width("rack7", "Z")
        >>> found.width, found.min_cut
        (1, ['A'])
        """
        with self._locked_node(graph_id, conclusion_id, "conclusion_id") as (name, state, target):
            checkpoint = checkpoint_for(cancel, self.limits.max_request_seconds)
            try:
                return payloads.argument_width(state.graph, target, checkpoint)
            except Interrupted:
                raise Cancelled("argument_width") from None
            except OverTime:
                raise LimitExceeded(
                    "max_request_seconds",
                    f"argument_width stopped after {self.limits.max_request_seconds:g} s, the "
                    f"per-request limit (max_request_seconds), on graph {name!r} with "
                    f"{state.graph.number_of_nodes():,} claims and {state.edge_count:,} links; "
                    "nothing was changed. Ask about a conclusion with a smaller support graph",
                ) from None

    def surviving_claims(self, graph_id: GraphId) -> SurvivingClaimsAnswer:
        """Grounded labelling over the attacks, and the claims still grounded in live evidence.

        Parameters
        ----------
        graph_id : str
            The graph whose attacks are labelled.

        Returns
        -------
        SurvivingClaimsAnswer
            ``in_`` (``in`` on the wire), ``out``, ``undecided`` and ``surviving`` (not out,
            and a given or reachable from one that is not out), each sorted. O(V+E).

        Raises
        ------
        NotFound
            For an unknown graph.

        Examples
        --------
        >>> from graph_server.fixture import rack7_store
        >>> labels = rack7_store().surviving_claims("rack7")
        >>> labels.out, "Z" in labels.surviving
        (['A'], True)
        """
        with self._locked(graph_id) as (_, state):
            return payloads.surviving_claims(state.graph)

    def disputed_nodes(self, graph_id: GraphId, conclusion_id: ConclusionId) -> DisputedNodesAnswer:
        """Live contradiction pairs, and the single-run claims a conclusion leans on.

        Parameters
        ----------
        graph_id : str
            The graph; its contradiction pairs are listed whatever the conclusion.
        conclusion_id : str
            The conclusion whose load-bearing claims to list.

        Returns
        -------
        DisputedNodesAnswer
            ``contradiction_pairs`` (live claims attacking each other both ways) and
            ``isolated_load_bearing`` (claims one run asserted that lie on an evidence route
            to the conclusion, ``on_path`` true, or attack one, false). O(V+E).

        Raises
        ------
        NotFound
            For an unknown graph or conclusion.

        Examples
        --------
        >>> from graph_server.fixture import rack7_store
        >>> disputed = rack7_store().disputed_nodes("rack7", "Z")
        >>> [(claim.id, claim.on_path) for claim in disputed.isolated_load_bearing][:2]
        [('A', True), ('B', True)]
        """
        return self._on_conclusion(graph_id, conclusion_id, payloads.disputed_nodes)

    def get_graph(self, graph_id: GraphId) -> GetGraphAnswer:
        """Every node and edge with every attribute, sorted by id.

        Parameters
        ----------
        graph_id : str
            The graph whose claims and links are read out.

        Returns
        -------
        GetGraphAnswer
            ``graph_id``, ``nodes`` (:class:`~graph_server.records.NodeOut`) and ``edges``
            (:class:`~graph_server.records.EdgeOut`). O(V log V + E log E).

        Raises
        ------
        NotFound
            For an unknown graph; a first ``assert_graph`` that rejected every item leaves
            none (no empty graph is kept).

        Examples
        --------
        >>> from graph_server.store import GraphStore
        >>> store = GraphStore()
        >>> claim = {"id": "A", "claim": "rack 7 is in hall B", "type": "given"}
        >>> _ = store.assert_graph("g", [claim])
        >>> store.get_graph("g").nodes  # the defaults filled in
        ... # doctest: +NORMALIZE_WHITESPACE
        [NodeOut(id='A', claim='rack 7 is in hall B', type='given', confidence=0.8, run_ids=[],
         refuted=False, refute_reason=None, aliases=[], merged_ids=[], source=None)]
        """
        with self._locked(graph_id) as (name, state):
            return payloads.snapshot(name, state.graph)

    def export_graph(self, graph_id: GraphId, format: ExportFormat) -> ExportGraphAnswer:
        """The graph written out as ``json`` (replayable into the store), ``graphml``,
        ``mermaid`` or ``html`` (:mod:`graph_server.export`).

        Parameters
        ----------
        graph_id : str
            The graph to write out.
        format : str
            One of ``graphml``, ``json``, ``mermaid``, ``html``.

        Returns
        -------
        ExportGraphAnswer
            For json ``graph`` is the replayable object and ``content`` None; for the others
            ``content`` is the text and ``graph`` None. O(V+E), plus the grounded labelling
            for mermaid and html.

        Raises
        ------
        InvalidInput
            For another format.
        NotFound
            For an unknown graph.

        Examples
        --------
        >>> from graph_server.fixture import rack7_store
        >>> exported = rack7_store().export_graph("rack7", "json")
        >>> sorted(exported.graph), exported.content
        (['edges', 'evidence', 'nodes', 'refuted'], None)
        """
        if format not in EXPORT_FORMATS:
            raise InvalidInput(
                "format", f"format must be one of {', '.join(EXPORT_FORMATS)}; got {shown(format)}"
            )
        with self._locked(graph_id) as (name, state):
            return payloads.exported(name, state.graph, state.evidence, format)

    def list_graphs(self) -> ListGraphsAnswer:
        """Ids and committed sizes of every stored graph, and the memory budget in use.

        Never waits for a busy graph (it reads the sizes of the last completed call).

        Returns
        -------
        ListGraphsAnswer
            ``graphs`` (each ``graph_id``, ``nodes``, ``edges``), ``claim_bytes`` and
            ``claim_bytes_limit``. O(graphs).

        Examples
        --------
        >>> from graph_server.fixture import rack7_store
        >>> listed = rack7_store().list_graphs()
        >>> listed.graphs[0].graph_id, listed.claim_bytes_limit
        ('rack7', 200000000)
        """
        with self._registry:
            listed = sorted(self._graphs.items())
            used = self._claim_bytes
        return ListGraphsAnswer(
            graphs=[
                GraphCount(graph_id=graph_id, nodes=state.sizes[0], edges=state.sizes[1])
                for graph_id, state in listed
            ],
            claim_bytes=used,
            claim_bytes_limit=self.limits.max_claim_bytes,
        )

    def _on_conclusion(
        self,
        graph_id: GraphId,
        conclusion_id: ConclusionId,
        answer: Callable[[nx.MultiDiGraph, str], Answer],
    ) -> Answer:
        """``answer(graph, conclusion)`` with the graph locked and ``conclusion_id`` checked
        to name a live node (:class:`~graph_server.errors.NotFound` otherwise)."""
        with self._locked_node(graph_id, conclusion_id, "conclusion_id") as (_, state, conclusion):
            return answer(state.graph, conclusion)
