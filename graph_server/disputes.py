"""Where re-interrogation should go: contradictions and single-run load-bearing claims."""

from __future__ import annotations

import networkx as nx

from graph_server.views import attack_pairs, givens, live_nodes, reachable_from, support_view


def contradiction_pairs(graph: nx.MultiDiGraph) -> list[list[str]]:
    """Live pairs that attack each other in both directions, each as ``[a, b]`` with a < b.

    Covers the pairs created by the dedup guards and any mutual attacks a caller
    asserted. Pairs where either side is already refuted are settled and left out.
    O(E log E).

    Parameters
    ----------
    graph : networkx.MultiDiGraph
        A stored argument graph; only its ``attacks`` edges and ``refuted`` flags are read.

    Returns
    -------
    list of list of str
        ``[a, b]`` pairs, sorted.

    Examples
    --------
    >>> from graph_server.fixture import support_chain
    >>> graph = support_chain()  # A and B support C, C supports Z
    >>> _ = graph.add_edges_from([("A", "B", "attacks"), ("B", "A", "attacks")], confidence=0.5)
    >>> contradiction_pairs(graph)
    [['A', 'B']]
    >>> graph.nodes["B"]["refuted"] = True
    >>> contradiction_pairs(graph)
    []
    """
    live = live_nodes(graph)
    attacks = set(attack_pairs(graph))
    return sorted(
        [a, b] for a, b in attacks if a < b and (b, a) in attacks and a in live and b in live
    )


def isolated_load_bearing(graph: nx.MultiDiGraph, conclusion: str) -> list[dict[str, object]]:
    """Live claims asserted by a single run that the conclusion leans on.

    A claim leans on the conclusion's support when it lies on an evidence route:
    reachable from a live given and able to reach the conclusion along live
    support edges (``on_path``). In acyclic graphs this is exactly "on some
    given-to-conclusion simple path"; with cycles it may include a few more
    claims, which errs toward checking more. Live attackers of on-path claims
    (or of the conclusion) are load-bearing too (``on_path`` false): if they hold, the route breaks.
    The conclusion itself is the thing being judged and is not listed.

    O(V + E).

    Parameters
    ----------
    graph : networkx.MultiDiGraph
        A stored argument graph; each node's ``run_ids`` lists the runs that asserted it.
    conclusion : str
        The claim being judged: the claims it leans on are listed, never itself.

    Returns
    -------
    list of dict
        ``{"id", "run_count", "on_path"}`` for each such claim, sorted by id.

    Examples
    --------
    >>> from graph_server.fixture import support_chain
    >>> graph = support_chain()  # A and B support C, C supports Z
    >>> graph.nodes["A"]["run_ids"] = ["r1", "r2"]
    >>> [claim["id"] for claim in isolated_load_bearing(graph, "Z")]
    ['B', 'C']
    """
    live = live_nodes(graph)
    view = support_view(graph, live)
    on_path: set[str] = set()
    if conclusion in view:
        upstream = nx.ancestors(view, conclusion)
        on_path = upstream & reachable_from(view, givens(graph, live))
    leaned_on = on_path | {conclusion}
    attackers = {src for src, dst in attack_pairs(graph) if dst in leaned_on and src in live}
    suspects = []
    for node in sorted((on_path | attackers) - {conclusion}):
        run_count = len(graph.nodes[node]["run_ids"])
        if run_count == 1:
            suspects.append({"id": node, "run_count": run_count, "on_path": node in on_path})
    return suspects
