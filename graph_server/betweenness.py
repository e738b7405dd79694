"""Edge betweenness from a set of sources to one target, in linear time.

``networkx.edge_betweenness_centrality_subset(G, sources, [t])`` runs one
breadth-first search per source, O(S * (V + E)). With a single target the same
numbers follow from two linear passes:

1. A reverse BFS from ``t`` gives ``d(v)``, the hop distance from ``v`` to ``t``,
   and ``sigma(v)``, the number of shortest ``v -> t`` paths.
2. An edge ``u -> v`` lies on a shortest path to ``t`` exactly when
   ``d(v) == d(u) - 1`` (call it *descending*); every walk along descending edges
   is a shortest path. For source ``s`` the edge carries the fraction
   ``paths_s(u) * sigma(v) / sigma(s)``, where ``paths_s(u)`` counts descending
   paths from ``s`` to ``u``. Summing over sources, ``w(u) = sum_s paths_s(u) /
   sigma(s)`` obeys ``w(u) = [u in sources] / sigma(u) + sum of w(p)`` over
   descending edges ``p -> u``, one pass in decreasing ``d`` order.

The test-suite checks the result against brute-force enumeration of all
shortest paths on random graphs. (networkx's subset routine disagrees with that
enumeration on some graphs where one source lies on another's shortest path, so
it is not used as the oracle.)
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable

import networkx as nx


def edge_betweenness_to_target(
    view: nx.DiGraph, sources: Iterable[str], target: str
) -> dict[tuple[str, str], float]:
    """Betweenness of every edge on a shortest source->target path. Complexity: O(V + E).

    Parameters
    ----------
    view : networkx.DiGraph
        The graph.
    sources : iterable of str
        Where paths start (the target itself is ignored as a source).
    target : str
        Where they end.

    Returns
    -------
    dict
        ``{(u, v): betweenness}`` for the edges with a non-zero value.

    Examples
    --------
    >>> import networkx as nx
    >>> view = nx.DiGraph([("A", "C"), ("B", "C"), ("C", "Z"), ("A", "Z")])
    >>> sorted(edge_betweenness_to_target(view, ["A", "B"], "Z").items())
    [(('A', 'Z'), 1.0), (('B', 'C'), 1.0), (('C', 'Z'), 1.0)]
    """
    distance, sigma = _reverse_bfs(view, target)
    weight: dict[str, float] = {}
    for source in sources:
        if source != target and source in distance:
            weight[source] = weight.get(source, 0.0) + 1.0 / sigma[source]

    scores: dict[tuple[str, str], float] = {}
    for node in sorted(distance, key=lambda n: (-distance[n], n)):
        carried = weight.get(node, 0.0)
        if carried == 0.0 or node == target:
            continue
        for successor in view.successors(node):
            if distance.get(successor) == distance[node] - 1:
                scores[(node, successor)] = carried * sigma[successor]
                weight[successor] = weight.get(successor, 0.0) + carried
    return scores


def _reverse_bfs(view: nx.DiGraph, target: str) -> tuple[dict[str, int], dict[str, int]]:
    distance = {target: 0}
    sigma = {target: 1}
    frontier = deque([target])
    while frontier:
        node = frontier.popleft()
        for predecessor in view.predecessors(node):
            if predecessor not in distance:
                distance[predecessor] = distance[node] + 1
                sigma[predecessor] = 0
                frontier.append(predecessor)
            if distance[predecessor] == distance[node] + 1:
                sigma[predecessor] += sigma[node]
    return distance, sigma
