"""Applying a merge plan: fold each cluster into its kept node, then add the attacks.

The plan comes from :func:`graph_server.dedup.plan_merges` (rules 1 to 3 of
:mod:`graph_server.dedup`); this module is rule 4, the merge policy: the kept node takes
the union of run ids, aliases and merged ids, the maximum confidence and the strongest type
(conclusion > given > inference > assumption); edges are re-pointed to it, parallel edges of
one relation collapse (max confidence, run ids unioned) and would-be self-loops are dropped.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import networkx as nx

TYPE_PRECEDENCE = ("conclusion", "given", "inference", "assumption")


@dataclass(frozen=True)
class MergePlan:
    """What :func:`graph_server.dedup.plan_merges` decided; apply it with :func:`apply_plan`.

    Examples
    --------
    >>> plan = MergePlan(clusters=[["n1", "n2"]], contradictions=[("n1", "n3")])
    >>> plan.clusters[0][0], plan.withheld
    ('n1', [])
    """

    clusters: list[list[str]] = field(default_factory=list)
    """Each cluster lists the kept node first, then the nodes merged into it."""
    contradictions: list[tuple[str, str]] = field(default_factory=list)
    """Guard pairs (by original node id) that must attack each other."""
    withheld: list[tuple[tuple[str, ...], int]] = field(default_factory=list)
    """Rival groups over the cap: ``(node ids sorted, rival pairs not made attacks)``."""


def apply_plan(
    graph: nx.MultiDiGraph, plan: MergePlan, max_edges: int | None = None
) -> tuple[list[list[str]], list[list[str]], list[list[str]]]:
    """Carry out a plan on ``graph`` in place, never growing it past ``max_edges`` edges.

    Merges run first (they only remove edges); then each contradiction gets its missing
    attack edges while both fit under ``max_edges``. A graph the store could not load back
    (over its edge limit) is so never made. O(sum of degrees of merged nodes + V + C) for C
    contradictions.

    Parameters
    ----------
    graph : networkx.MultiDiGraph
        The graph the plan was made for; changed in place (new run-id sets, so a shallow
        copy, ``graph.copy()``, leaves the graph it was copied from as it was).
    plan : MergePlan
        What :func:`graph_server.dedup.plan_merges` decided.
    max_edges : int, optional
        The most edges ``graph`` may hold afterwards (default None: no limit).

    Returns
    -------
    merges : list of list of str
        ``[kept, merged]`` pairs, sorted.
    contradictions_created : list of list of str
        The ``[a, b]`` pairs (by kept node) whose mutual attacks did not both exist before,
        sorted.
    over_limit : list of list of str
        The pairs left without their attacks because the graph was full, sorted.

    Examples
    --------
    >>> from graph_server.fixture import claims_graph
    >>> graph = claims_graph()  # n1, n2: one reading of Trellium's melting point; n3 a rival
    >>> from graph_server.dedup import plan_merges
    >>> plan = plan_merges(graph, 0.7, 0.85)
    >>> _ = graph.add_edge("g", "n2", key="supports", confidence=0.7, run_ids={"r2"})
    >>> apply_plan(graph, plan)
    ([['n1', 'n2']], [['n1', 'n3']], [])
    >>> sorted(graph.edges(keys=True))
    [('g', 'n1', 'supports'), ('n1', 'n3', 'attacks'), ('n3', 'n1', 'attacks')]
    >>> graph.nodes["n1"]["aliases"], sorted(graph.nodes["n1"]["run_ids"])
    (['Trellium melts at 412 C.'], ['r1', 'r2'])

    With no room for the two attack edges, the merge happens and the contradiction waits:

    >>> graph = claims_graph()
    >>> apply_plan(graph, plan_merges(graph, 0.7, 0.85), max_edges=1)
    ([['n1', 'n2']], [], [['n1', 'n3']])
    """
    representative, merges = _merge_clusters(graph, plan.clusters)
    room = None if max_edges is None else max_edges - graph.number_of_edges()
    created, over_limit = _add_attacks(graph, plan.contradictions, representative, room)
    return sorted(merges), created, over_limit


def _merge_clusters(
    graph: nx.MultiDiGraph, clusters: list[list[str]]
) -> tuple[dict[str, str], list[list[str]]]:
    """Fold each cluster into its first node: ``(merged id -> kept id, [kept, merged] pairs)``."""
    representative: dict[str, str] = {}
    merges: list[list[str]] = []
    for kept, *absorbed in clusters:
        for node in absorbed:
            _absorb(graph, kept, node)
            representative[node] = kept
            merges.append([kept, node])
    return representative, merges


def _add_attacks(
    graph: nx.MultiDiGraph,
    contradictions: list[tuple[str, str]],
    representative: dict[str, str],
    room: int | None,
) -> tuple[list[list[str]], list[list[str]]]:
    """Give each contradiction (by kept node) its missing mutual attacks while they fit in
    ``room`` more edges (None: no limit): ``(created, over_limit)`` pairs, sorted."""
    created: set[tuple[str, str]] = set()
    over_limit: set[tuple[str, str]] = set()
    for a, b in contradictions:
        ra, rb = representative.get(a, a), representative.get(b, b)
        if ra == rb:
            continue
        missing = [(s, d) for s, d in ((ra, rb), (rb, ra)) if not graph.has_edge(s, d, "attacks")]
        if room is not None and len(missing) > room:
            over_limit.add((min(ra, rb), max(ra, rb)))
            continue
        for src, dst in missing:
            graph.add_edge(
                src, dst, key="attacks", relation="attacks", confidence=1.0, run_ids=set()
            )
        if room is not None:
            room -= len(missing)
        if missing:
            created.add((min(ra, rb), max(ra, rb)))
    return [list(pair) for pair in sorted(created)], [list(pair) for pair in sorted(over_limit)]


def _absorb(graph: nx.MultiDiGraph, kept: str, node: str) -> None:
    target, source = graph.nodes[kept], graph.nodes[node]
    # New sets, never |=: a shallow copy of the graph (networkx's graph.copy()) shares its
    # run-id sets with the caller's graph, which must not grow with this one.
    target["run_ids"] = target["run_ids"] | source["run_ids"]
    target["aliases"] = sorted(
        (set(target["aliases"]) | set(source["aliases"]) | {source["claim"]}) - {target["claim"]}
    )
    target["merged_ids"] = sorted(set(target["merged_ids"]) | set(source["merged_ids"]) | {node})
    target["confidence"] = max(target["confidence"], source["confidence"])
    target["type"] = min(target["type"], source["type"], key=TYPE_PRECEDENCE.index)
    if target.get("source") is None:
        target["source"] = source.get("source")

    moved = [
        (kept, dst, rel, data) for _, dst, rel, data in graph.out_edges(node, keys=True, data=True)
    ]
    moved += [
        (src, kept, rel, data) for src, _, rel, data in graph.in_edges(node, keys=True, data=True)
    ]
    graph.remove_node(node)
    for src, dst, relation, data in moved:
        if src == dst:
            continue
        if graph.has_edge(src, dst, relation):
            existing = graph.edges[src, dst, relation]
            existing["confidence"] = max(existing["confidence"], data["confidence"])
            existing["run_ids"] = existing["run_ids"] | data["run_ids"]
        else:
            graph.add_edge(src, dst, key=relation, **data)
