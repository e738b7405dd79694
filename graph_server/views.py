"""Read-only networkx views of a stored argument graph.

The store keeps one ``networkx.MultiDiGraph`` per graph: node attributes hold the
claim fields, and each edge is keyed by its relation (``supports``, ``attacks``,
``assumes``) so a pair of nodes carries at most one edge per relation.

The structural checks never look at that multigraph directly. They work on
plain ``DiGraph`` views built here, with nodes and edges inserted in sorted
order so every algorithm that iterates the view (cycle enumeration, flow
augmenting paths, cut selection) behaves identically for identical content,
whatever order the caller ingested it in.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable

import networkx as nx

SUPER_SOURCE = "__S__"
"""Virtual node linked to every live given; never reported to callers."""

SUPPORT_RELATIONS = frozenset({"supports", "assumes"})
INFINITE_CAPACITY = 1e9


def live_nodes(graph: nx.MultiDiGraph) -> set[str]:
    """Nodes not marked refuted. O(V).

    Parameters
    ----------
    graph : networkx.MultiDiGraph
        A stored argument graph; a node without a ``refuted`` attribute counts as live.

    Returns
    -------
    set of str
        The ids of the nodes whose ``refuted`` attribute is false or missing.

    Examples
    --------
    >>> from graph_server.fixture import support_chain
    >>> graph = support_chain()  # A and B support C, C supports Z
    >>> graph.nodes["C"]["refuted"] = True
    >>> sorted(live_nodes(graph))
    ['A', 'B', 'Z']
    """
    return {n for n, refuted in graph.nodes(data="refuted") if not refuted}


def givens(graph: nx.MultiDiGraph, among: Iterable[str] | None = None) -> list[str]:
    """Sorted ids of ``type == "given"`` nodes, optionally restricted to ``among``. O(V).

    Parameters
    ----------
    graph : networkx.MultiDiGraph
        A stored argument graph; each node's ``type`` is read.
    among : iterable of str, optional
        Only the givens among these are returned (default: every node).

    Returns
    -------
    list of str
        The givens (of ``among`` only, when given), sorted.

    Examples
    --------
    >>> from graph_server.fixture import support_chain
    >>> graph = support_chain()  # A and B support C, C supports Z
    >>> givens(graph), givens(graph, among=["B", "C"])
    (['A', 'B'], ['B'])
    """
    pool = graph.nodes if among is None else among
    return sorted(n for n in pool if graph.nodes[n]["type"] == "given")


def support_view(graph: nx.MultiDiGraph, keep: Iterable[str] | None = None) -> nx.DiGraph:
    """Collapse supports/assumes edges into a DiGraph, attacks excluded.

    Parallel support and assumes edges between one pair become a single edge whose
    ``confidence`` is the larger of the two. ``keep`` restricts the view to those
    nodes (e.g. only live nodes); by default every node is kept. O(V log V + E log E).

    Parameters
    ----------
    graph : networkx.MultiDiGraph
        A stored argument graph; its ``attacks`` edges are left out.
    keep : iterable of str, optional
        The nodes of the view, e.g. only the live ones (default: every node).

    Returns
    -------
    networkx.DiGraph
        The kept nodes with their attributes and the support edges among them, each with its
        ``confidence``, inserted in sorted order.

    Examples
    --------
    >>> from graph_server.fixture import support_chain
    >>> graph = support_chain()  # A and B support C, C supports Z
    >>> _ = graph.add_edge("B", "Z", "attacks", confidence=0.5)
    >>> sorted(support_view(graph, keep=["A", "C", "Z"]).edges(data="confidence"))
    [('A', 'C', 0.8), ('C', 'Z', 0.8)]
    """
    kept = set(graph.nodes) if keep is None else set(keep)
    view = nx.DiGraph()
    for node in sorted(kept):
        view.add_node(node, **graph.nodes[node])
    best: dict[tuple[str, str], float] = {}
    for src, dst, relation, confidence in graph.edges(keys=True, data="confidence"):
        if relation not in SUPPORT_RELATIONS or src not in kept or dst not in kept:
            continue
        pair = (src, dst)
        best[pair] = max(confidence, best.get(pair, 0.0))
    for (src, dst), confidence in sorted(best.items()):
        view.add_edge(src, dst, confidence=confidence)
    return view


def attack_pairs(graph: nx.MultiDiGraph) -> list[tuple[str, str]]:
    """Sorted (attacker, target) pairs of every attacks edge. O(E log E).

    Parameters
    ----------
    graph : networkx.MultiDiGraph
        A stored argument graph, whose ``attacks`` edges are listed.

    Returns
    -------
    list of (str, str)
        ``(attacker, target)``, sorted.

    Examples
    --------
    >>> from graph_server.fixture import support_chain
    >>> graph = support_chain()  # A and B support C, C supports Z
    >>> _ = graph.add_edge("B", "Z", "attacks", confidence=0.5)
    >>> attack_pairs(graph)
    [('B', 'Z')]
    """
    return sorted(
        (src, dst) for src, dst, relation in graph.edges(keys=True) if relation == "attacks"
    )


def augmented_view(graph: nx.MultiDiGraph, conclusion: str) -> nx.DiGraph:
    """Live support view plus a virtual super-source feeding every live given.

    Refuted nodes are dropped entirely. The conclusion itself is never linked from
    the super-source, even when it is a given, so its width counts the evidence
    that leads *to* it rather than the claim vouching for itself. O(V log V + E log E).

    Parameters
    ----------
    graph : networkx.MultiDiGraph
        A stored argument graph.
    conclusion : str
        The node whose evidence is measured.

    Returns
    -------
    networkx.DiGraph
        The live support view with :data:`SUPER_SOURCE` linked to each live given.

    Examples
    --------
    >>> from graph_server.fixture import support_chain
    >>> graph = support_chain()  # A and B support C, C supports Z
    >>> graph.nodes["B"]["refuted"] = True
    >>> sorted(augmented_view(graph, "Z").edges)
    [('A', 'C'), ('C', 'Z'), ('__S__', 'A')]
    """
    view = support_view(graph, live_nodes(graph))
    sources = [given for given in givens(graph, view.nodes) if given != conclusion]
    view.add_node(SUPER_SOURCE)
    for given in sources:
        view.add_edge(SUPER_SOURCE, given, confidence=1.0)
    return view


def reachable_from(view: nx.DiGraph, sources: Iterable[str]) -> set[str]:
    """Every node reachable from any of ``sources`` (sources included). O(V + E).

    Parameters
    ----------
    view : networkx.DiGraph
        A view of the graph (:func:`support_view`).
    sources : iterable of str
        Where to start.

    Returns
    -------
    set of str
        The sources and every node a directed path leads to from one of them.

    Examples
    --------
    >>> from graph_server.fixture import support_chain
    >>> graph = support_chain()  # A and B support C, C supports Z
    >>> sorted(reachable_from(support_view(graph), ["C"]))
    ['C', 'Z']
    """
    reached = set(sources)
    frontier = deque(reached)
    while frontier:
        for successor in view.successors(frontier.popleft()):
            if successor not in reached:
                reached.add(successor)
                frontier.append(successor)
    return reached
