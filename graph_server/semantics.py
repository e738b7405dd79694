"""Argument semantics: grounded labelling, surviving claims, support width, flow.

All functions are pure reads over the store's ``MultiDiGraph`` (see
:mod:`graph_server.views` for the edge layout).
"""

from __future__ import annotations

from collections import deque

import networkx as nx
from networkx.algorithms.flow import edmonds_karp

from graph_server.views import (
    INFINITE_CAPACITY,
    SUPER_SOURCE,
    attack_pairs,
    augmented_view,
    givens,
    reachable_from,
    support_view,
)

IN, OUT, UNDEC = "in", "out", "undecided"


def grounded_labelling(graph: nx.MultiDiGraph) -> dict[str, str]:
    """Dung grounded labelling of the attack graph, refuted nodes forced OUT.

    A node is IN when every attacker is OUT (vacuously so when unattacked) and OUT
    when some attacker is IN; whatever the fixpoint leaves unsettled is UNDEC. A
    refuted node is OUT from the start and stays OUT, so its own attacks carry no
    weight. Computed by propagation with per-node counters of attackers not yet
    OUT, which reaches the same least fixpoint as the naive repeat-until-stable
    loop in O(V + E) instead of O(V * E).

    Parameters
    ----------
    graph : networkx.MultiDiGraph
        A stored argument graph; its ``attacks`` edges are the attack relation.

    Returns
    -------
    dict
        ``{node: "in" | "out" | "undecided"}`` for every node.

    Examples
    --------
    >>> from graph_server.fixture import support_chain
    >>> graph = support_chain()  # A and B support C, C supports Z
    >>> _ = graph.add_edge("B", "C", "attacks", confidence=0.5)
    >>> _ = graph.add_edge("C", "B", "attacks", confidence=0.5)
    >>> grounded_labelling(graph)
    {'A': 'in', 'B': 'undecided', 'C': 'undecided', 'Z': 'in'}
    >>> graph.nodes["B"]["refuted"] = True
    >>> grounded_labelling(graph)
    {'A': 'in', 'B': 'out', 'C': 'in', 'Z': 'in'}
    """
    pending, targets = _attack_counts(graph)
    label = {n: UNDEC for n in graph.nodes}
    queue: deque[str] = deque()
    for node, refuted in sorted(graph.nodes(data="refuted")):
        if refuted:
            label[node] = OUT
            queue.append(node)
    for node in sorted(graph.nodes):
        if label[node] == UNDEC and pending[node] == 0:
            label[node] = IN
            queue.append(node)

    while queue:
        node = queue.popleft()
        for target in targets[node]:
            if label[target] != UNDEC:
                continue
            if label[node] == IN:
                label[target] = OUT
                queue.append(target)
            else:
                pending[target] -= 1
                if pending[target] == 0:
                    label[target] = IN
                    queue.append(target)
    return label


def _attack_counts(graph: nx.MultiDiGraph) -> tuple[dict[str, int], dict[str, list[str]]]:
    """How many attackers each node has, and the nodes each node attacks. O(V + E)."""
    pending = dict.fromkeys(graph.nodes, 0)
    targets: dict[str, list[str]] = {n: [] for n in graph.nodes}
    for src, dst in attack_pairs(graph):
        pending[dst] += 1
        targets[src].append(dst)
    return pending, targets


def surviving(graph: nx.MultiDiGraph, label: dict[str, str]) -> set[str]:
    """Nodes not OUT that are givens or reachable from a not-OUT given.

    Reachability follows supports/assumes edges through not-OUT nodes only, so an
    inference whose every route to evidence crosses a defeated claim does not
    survive. O(V + E).

    Parameters
    ----------
    graph : networkx.MultiDiGraph
        A stored argument graph.
    label : dict
        Its labelling, ``{node: "in" | "out" | "undecided"}`` (:func:`grounded_labelling`).

    Returns
    -------
    set of str
        The surviving nodes.

    Examples
    --------
    >>> from graph_server.fixture import support_chain
    >>> graph = support_chain()  # A and B support C, C supports Z
    >>> _ = graph.add_edge("A", "C", "attacks", confidence=0.5)
    >>> sorted(surviving(graph, grounded_labelling(graph)))
    ['A', 'B']
    """
    alive = [n for n in graph.nodes if label[n] != OUT]
    view = support_view(graph, alive)
    return reachable_from(view, givens(graph, alive))


def support_width(graph: nx.MultiDiGraph, conclusion: str) -> tuple[list[list[str]], float]:
    """Node-disjoint evidence paths to ``conclusion`` and the confidence-capped flow.

    Works on the augmented live view (refuted nodes removed, super-source linked
    to every live given). By Menger's theorem the number of returned paths is the
    minimum number of claims whose failure cuts the conclusion off from evidence.
    Paths are reported without the super-source, sorted.

    ``max_flow`` splits every node ``v`` into ``v_in -> v_out`` with capacity equal
    to its confidence (givens and the super-source uncapped) and gives each edge
    its own confidence as capacity; the sink is the conclusion's ``in`` side, so
    the conclusion's own confidence does not cap the evidence reaching it.

    Complexity: O(V * E) worst case (augmenting paths, at most V of them).

    Parameters
    ----------
    graph : networkx.MultiDiGraph
        A stored argument graph.
    conclusion : str
        The claim whose evidence is measured; its own confidence caps no flow.

    Returns
    -------
    paths : list of list of str
        Node-disjoint paths from givens to the conclusion, sorted; their number is the width.
    max_flow : float
        The confidence-capped flow, rounded to 6 places; 0.0 when no path exists.

    Examples
    --------
    >>> from graph_server.fixture import support_chain
    >>> graph = support_chain()  # A and B support C, C supports Z
    >>> support_width(graph, "Z")
    ([['A', 'C', 'Z']], 0.8)
    >>> _ = graph.add_edge("B", "Z", "supports", confidence=0.6)
    >>> support_width(graph, "Z")
    ([['A', 'C', 'Z'], ['B', 'Z']], 1.4)
    """
    view = augmented_view(graph, conclusion)
    paths = _disjoint_paths(view, conclusion)
    return (paths, _split_node_flow(view, conclusion)) if paths else ([], 0.0)


def disjoint_paths(graph: nx.MultiDiGraph, conclusion: str) -> list[list[str]]:
    """Only the node-disjoint paths of :func:`support_width`, without the flow. O(V * E).

    Parameters
    ----------
    graph : networkx.MultiDiGraph
        A stored argument graph.
    conclusion : str
        The claim the paths lead to.

    Returns
    -------
    list of list of str
        Node-disjoint paths from givens to the conclusion, sorted.

    Examples
    --------
    >>> from graph_server.fixture import support_chain
    >>> graph = support_chain()  # A and B support C, C supports Z
    >>> disjoint_paths(graph, "Z")
    [['A', 'C', 'Z']]
    """
    return _disjoint_paths(augmented_view(graph, conclusion), conclusion)


def _disjoint_paths(view: nx.DiGraph, conclusion: str) -> list[list[str]]:
    if conclusion not in view or not nx.has_path(view, SUPER_SOURCE, conclusion):
        return []
    return sorted(path[1:] for path in nx.node_disjoint_paths(view, SUPER_SOURCE, conclusion))


def _split_node_flow(view: nx.DiGraph, conclusion: str) -> float:
    split = nx.DiGraph()
    for node, data in view.nodes(data=True):
        uncapped = node == SUPER_SOURCE or data.get("type") == "given"
        capacity = INFINITE_CAPACITY if uncapped else data["confidence"]
        split.add_edge((node, "in"), (node, "out"), capacity=capacity)
    for src, dst, confidence in view.edges(data="confidence"):
        capacity = INFINITE_CAPACITY if src == SUPER_SOURCE else confidence
        split.add_edge((src, "out"), (dst, "in"), capacity=capacity)
    # Edmonds-Karp rather than the default preflow-push: these graphs need few
    # augmenting paths, and it measured 2-4x faster on 500-2,000-claim graphs.
    value = nx.maximum_flow_value(
        split, (SUPER_SOURCE, "out"), (conclusion, "in"), flow_func=edmonds_karp
    )
    return round(float(value), 6)
