"""Structural checks over an argument graph (pure reads).

Each function takes the store's ``MultiDiGraph`` and a conclusion id and returns
plain sorted Python data. Support checks run on the supports+assumes view;
attacks edges never count as support.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import islice, pairwise

import networkx as nx

from graph_server.betweenness import edge_betweenness_to_target
from graph_server.views import (
    SUPER_SOURCE,
    augmented_view,
    givens,
    live_nodes,
    reachable_from,
    support_view,
)

MAX_CYCLES_REPORTED = 10
UNSUPPORTED_OK_TYPES = frozenset({"given", "assumption"})


def orphans(view: nx.DiGraph) -> list[str]:
    """Claims with no incoming support that are neither givens nor assumptions. O(V).

    Parameters
    ----------
    view : networkx.DiGraph
        The support view of a graph (:func:`~graph_server.views.support_view`); each node's
        ``type`` says whether being unsupported makes it an orphan.

    Returns
    -------
    list of str
        The orphans, sorted.

    Examples
    --------
    >>> from graph_server.views import support_view
    >>> from graph_server.fixture import support_chain
    >>> graph = support_chain()  # A and B support C, C supports Z
    >>> graph.add_node("F", type="claim", refuted=False, confidence=0.5)
    >>> orphans(support_view(graph))
    ['F']
    """
    return _unsupported(view, lambda kind: kind not in UNSUPPORTED_OK_TYPES)


def floating_assumptions(view: nx.DiGraph) -> list[str]:
    """Assumptions with no incoming support: declared premises nobody backs. O(V).

    Parameters
    ----------
    view : networkx.DiGraph
        The support view of a graph (:func:`~graph_server.views.support_view`); only its
        nodes of ``type`` assumption are looked at.

    Returns
    -------
    list of str
        The floating assumptions, sorted.

    Examples
    --------
    >>> from graph_server.views import support_view
    >>> from graph_server.fixture import support_chain
    >>> graph = support_chain()  # A and B support C, C supports Z
    >>> graph.nodes["B"]["type"] = "assumption"
    >>> floating_assumptions(support_view(graph))
    ['B']
    """
    return _unsupported(view, lambda kind: kind == "assumption")


def _unsupported(view: nx.DiGraph, counted: Callable[[str], bool]) -> list[str]:
    """The nodes no support edge enters whose ``type`` ``counted`` accepts, sorted. O(V)."""
    return sorted(
        n for n, data in view.nodes(data=True) if view.in_degree(n) == 0 and counted(data["type"])
    )


def cycles(view: nx.DiGraph, limit: int = MAX_CYCLES_REPORTED) -> list[list[str]]:
    """Up to ``limit`` simple cycles, each rotated to start at its smallest id, sorted.

    Enumeration stops after ``limit`` cycles, so the cost is bounded by
    O((V + E) * (limit + 1)) (Johnson's algorithm per cycle found).

    Parameters
    ----------
    view : networkx.DiGraph
        The support view of a graph (:func:`~graph_server.views.support_view`).
    limit : int, optional
        The most cycles reported (default :data:`MAX_CYCLES_REPORTED`).

    Returns
    -------
    list of list of str
        Each cycle as its nodes, starting at the smallest id; sorted.

    Examples
    --------
    >>> from graph_server.views import support_view
    >>> from graph_server.fixture import support_chain
    >>> graph = support_chain()  # A and B support C, C supports Z
    >>> _ = graph.add_edge("Z", "C", "supports", confidence=0.5)
    >>> cycles(support_view(graph))
    [['C', 'Z']]
    """
    found = islice(nx.simple_cycles(view), limit)
    rotated = []
    for cycle in found:
        start = cycle.index(min(cycle))
        rotated.append(cycle[start:] + cycle[:start])
    return sorted(rotated)


def evidence_reach(graph: nx.MultiDiGraph, view: nx.DiGraph) -> set[str]:
    """Live nodes reachable from a live given along live support edges. O(V + E).

    Parameters
    ----------
    graph : networkx.MultiDiGraph
        A stored argument graph; its live givens are where the search starts.
    view : networkx.DiGraph
        Its support view (:func:`~graph_server.views.support_view`), whose edges are
        followed between live nodes only.

    Returns
    -------
    set of str
        The live givens and every live node they support, directly or not.

    Examples
    --------
    >>> from graph_server.views import support_view
    >>> from graph_server.fixture import support_chain
    >>> graph = support_chain()  # A and B support C, C supports Z
    >>> sorted(evidence_reach(graph, support_view(graph)))
    ['A', 'B', 'C', 'Z']
    >>> graph.nodes["C"]["refuted"] = True
    >>> sorted(evidence_reach(graph, support_view(graph)))
    ['A', 'B']
    """
    live = live_nodes(graph)
    return reachable_from(view.subgraph(live), givens(graph, live))


def refuted_but_feeding(graph: nx.MultiDiGraph, view: nx.DiGraph, conclusion: str) -> list[str]:
    """Refuted claims that still have a support path to the conclusion. O(V + E).

    Parameters
    ----------
    graph : networkx.MultiDiGraph
        A stored argument graph, read for each claim's ``refuted`` flag.
    view : networkx.DiGraph
        Its support view (:func:`~graph_server.views.support_view`) with the refuted claims in it.
    conclusion : str
        The claim whose ancestors in the view are checked.

    Returns
    -------
    list of str
        The refuted ancestors of the conclusion, sorted.

    Examples
    --------
    >>> from graph_server.views import support_view
    >>> from graph_server.fixture import support_chain
    >>> graph = support_chain()  # A and B support C, C supports Z
    >>> for node in ("A", "C"):
    ...     graph.nodes[node]["refuted"] = True
    >>> refuted_but_feeding(graph, support_view(graph), "Z")
    ['A', 'C']
    """
    upstream = nx.ancestors(view, conclusion)
    return sorted(n for n in upstream if graph.nodes[n]["refuted"])


def check_structure(graph: nx.MultiDiGraph, conclusion: str) -> dict[str, object]:
    """All structural checks for one conclusion, as the public payload.

    ``unreachable_conclusion`` is judged on live claims only: a conclusion whose
    every route to evidence crosses a refuted claim is unreachable.

    Parameters
    ----------
    graph : networkx.MultiDiGraph
        A stored argument graph.
    conclusion : str
        The claim that ``unreachable_conclusion`` and ``refuted_but_feeding`` are about; the
        other checks cover the whole graph.

    Returns
    -------
    dict
        ``orphans``, ``assumptions``, ``cycles`` (see the functions of the same names),
        ``unreachable_conclusion`` (bool) and ``refuted_but_feeding``.

    Examples
    --------
    >>> from graph_server.fixture import support_chain
    >>> graph = support_chain()  # A and B support C, C supports Z
    >>> graph.nodes["C"]["refuted"] = True
    >>> check_structure(graph, "Z")
    ... # doctest: +NORMALIZE_WHITESPACE
    {'orphans': [], 'assumptions': [], 'cycles': [], 'unreachable_conclusion': True,
     'refuted_but_feeding': ['C']}
    """
    view = support_view(graph)
    return {
        "orphans": orphans(view),
        "assumptions": floating_assumptions(view),
        "cycles": cycles(view),
        "unreachable_conclusion": conclusion not in evidence_reach(graph, view),
        "refuted_but_feeding": refuted_but_feeding(graph, view, conclusion),
    }


def critical_links(graph: nx.MultiDiGraph, conclusion: str) -> dict[str, object]:
    """Where the live argument for ``conclusion`` is thinnest.

    - ``min_cut_nodes``: a minimum set of claims whose removal disconnects the
      conclusion from all evidence (its size equals the support width, Menger).
    - ``bridge_edges``: support edges lying on every evidence path.
    - ``ranked``: every edge on some evidence path (it starts downstream of a
      live given and ends upstream of the conclusion), with its shortest-path
      betweenness from the givens to the conclusion (0 when it only lies on longer
      paths) and the weakest confidence among the edge and its two endpoints;
      least confident first, then most central.

    The super-source never appears. Complexity: O(V * E) for the cut, O(P * (V + E))
    for bridges where P is the length of one evidence path, O(V + E) for ranking.

    Parameters
    ----------
    graph : networkx.MultiDiGraph
        A stored argument graph.
    conclusion : str
        The claim the evidence routes lead to.

    Returns
    -------
    dict
        ``min_cut_nodes``, ``bridge_edges`` and ``ranked``, as above; all empty when no
        live evidence reaches the conclusion.

    Examples
    --------
    >>> from graph_server.fixture import support_chain
    >>> graph = support_chain()  # A and B support C, C supports Z
    >>> links = critical_links(graph, "Z")
    >>> links["min_cut_nodes"], links["bridge_edges"]
    (['C'], [['C', 'Z']])
    >>> links["ranked"][0]
    {'edge': ['C', 'Z'], 'betweenness': 2.0, 'min_confidence_on_edge': 0.8}
    """
    view = augmented_view(graph, conclusion)
    if conclusion not in view or not nx.has_path(view, SUPER_SOURCE, conclusion):
        return {"min_cut_nodes": [], "bridge_edges": [], "ranked": []}
    cut = nx.minimum_node_cut(view, SUPER_SOURCE, conclusion)
    return {
        "min_cut_nodes": sorted(cut),
        "bridge_edges": _bridge_edges(view, conclusion),
        "ranked": _ranked_edges(view, conclusion),
    }


def _bridge_edges(view: nx.DiGraph, conclusion: str) -> list[list[str]]:
    # An edge on every path is in particular on this one, so only its edges are tried.
    path = nx.shortest_path(view, SUPER_SOURCE, conclusion)
    bridges = []
    for src, dst in pairwise(path):
        if src == SUPER_SOURCE:
            continue
        data = view.edges[src, dst]
        view.remove_edge(src, dst)
        if not nx.has_path(view, SUPER_SOURCE, conclusion):
            bridges.append([src, dst])
        view.add_edge(src, dst, **data)
    return sorted(bridges)


def _ranked_edges(view: nx.DiGraph, conclusion: str) -> list[dict[str, object]]:
    sources = list(view.successors(SUPER_SOURCE))
    evidence = view.subgraph(n for n in view if n != SUPER_SOURCE)
    scores = edge_betweenness_to_target(evidence, sources, conclusion)
    downstream_of_evidence = reachable_from(evidence, sources)
    upstream_of_conclusion = nx.ancestors(evidence, conclusion) | {conclusion}
    ranked = []
    for src, dst in evidence.edges:
        if src not in downstream_of_evidence or dst not in upstream_of_conclusion:
            continue
        score = scores.get((src, dst), 0.0)
        weakest = min(
            view.edges[src, dst]["confidence"],
            view.nodes[src]["confidence"],
            view.nodes[dst]["confidence"],
        )
        ranked.append(
            {"edge": [src, dst], "betweenness": round(score, 6), "min_confidence_on_edge": weakest}
        )
    ranked.sort(key=lambda r: (r["min_confidence_on_edge"], -r["betweenness"], r["edge"]))
    return ranked
