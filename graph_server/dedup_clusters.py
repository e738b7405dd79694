"""Clustering mergeable claims (rule 3 of :mod:`graph_server.dedup`) and the order of
assertion that picks each cluster's kept node (rule 4).

Union-find over the mergeable pairs in a canonical order, refusing any union that would
put two claims that must stay apart in one cluster, so the outcome does not depend on the
order claims were ingested in.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable

import networkx as nx

from graph_server.slot_guard import differ_by_substitution

_DIGITS = re.compile(r"(\d+)")


def natural_key(text: str) -> tuple[tuple[int, int, str], ...]:
    """Sort key that orders ``r2`` before ``r10``: runs of digits compare as numbers, and
    sort before text at the same place. O(len(text)).

    Parameters
    ----------
    text : str
        A run id or node id.

    Returns
    -------
    tuple
        One ``(0, number, digits)`` or ``(1, 0, text)`` entry per run of digits or of text.

    Examples
    --------
    >>> sorted(["r10", "r2", "r1"], key=natural_key)
    ['r1', 'r2', 'r10']
    >>> natural_key("r10")
    ((1, 0, 'r'), (0, 10, '10'))
    """
    return tuple(
        (0, int(part), part) if part.isdigit() else (1, 0, part)
        for part in _DIGITS.split(text)
        if part
    )


def assertion_order(graph: nx.MultiDiGraph, node: str) -> tuple[object, ...]:
    """Earliest-assertion key: first run id (natural order), then node id.

    Nodes without provenance sort after every node that has some.

    Parameters
    ----------
    graph : networkx.MultiDiGraph
        A stored argument graph (node attribute ``run_ids``: a set of run ids).
    node : str
        A node of ``graph``.

    Returns
    -------
    tuple
        A sort key; smaller means asserted earlier.

    Examples
    --------
    >>> import networkx as nx
    >>> graph = nx.MultiDiGraph()
    >>> graph.add_node("n1", run_ids={"r10"})
    >>> graph.add_node("n2", run_ids={"r2", "r12"})
    >>> graph.add_node("n3", run_ids=set())
    >>> sorted(graph.nodes, key=lambda node: assertion_order(graph, node))
    ['n2', 'n1', 'n3']
    """
    run_ids = graph.nodes[node]["run_ids"]
    if run_ids:
        return (0, min(natural_key(r) for r in run_ids), natural_key(node))
    return (1, (), natural_key(node))


def _components(size: int, pairs: Iterable[tuple[int, int]]) -> list[list[int]]:
    """Connected components with two or more members of the graph on ``range(size)``."""
    parent: dict[int, int] = {}

    def find(x: int) -> int:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in pairs:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    groups: dict[int, list[int]] = defaultdict(list)
    for x in list(parent):
        groups[find(x)].append(x)
    return [sorted(members) for members in groups.values() if len(members) > 1]


def _cluster(
    size: int,
    candidates: list[tuple[int, int]],
    apart: set[tuple[int, int]],
    focused: set[int],
    traits: tuple[list[set[frozenset[str]]], list[set[str]]],
) -> list[list[int]]:
    """Union-find over ``candidates`` in order, never joining what must stay apart.

    ``apart`` forbids pairs; ``traits`` (per node position: the content-word sets of its
    wordings, its source if any) forbid what the pairwise rules cannot see, because they
    are not transitive: "server x9 runs linux" is similar to "x9 runs linux" and to "server
    x9 linux", which differ by a substitution and were never compared (not similar
    enough), so a union may not bring two wordings that differ by a substitution, or two
    different sources, into one cluster.
    """
    contents = [set(found) for found in traits[0]]
    sources = [set(found) for found in traits[1]]
    parent = list(range(size))
    forbidden: dict[int, set[int]] = defaultdict(set)
    for a, b in apart:
        forbidden[a].add(b)
        forbidden[b].add(a)

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in candidates:
        if a not in focused and b not in focused:
            continue
        ra, rb = find(a), find(b)
        if ra == rb or rb in forbidden[ra]:
            continue
        if len(sources[ra] | sources[rb]) > 1 or any(
            differ_by_substitution(x, y) for x in contents[ra] for y in contents[rb]
        ):
            forbidden[ra].add(rb)
            forbidden[rb].add(ra)
            continue
        keep, drop = min(ra, rb), max(ra, rb)
        parent[drop] = keep
        contents[keep] |= contents[drop]
        sources[keep] |= sources[drop]
        for other in forbidden.pop(drop, set()):
            forbidden[other].discard(drop)
            forbidden[other].add(keep)
            forbidden[keep].add(other)

    groups: dict[int, list[int]] = defaultdict(list)
    for x in range(size):
        groups[find(x)].append(x)
    return [members for members in groups.values() if len(members) > 1]


def _order_cluster(graph: nx.MultiDiGraph, members: list[str]) -> list[str]:
    members = sorted(members, key=lambda n: assertion_order(graph, n))
    refuted = [n for n in members if graph.nodes[n]["refuted"]]
    sourced = [n for n in members if graph.nodes[n].get("source") is not None]
    kept = (refuted or sourced or members)[0]
    return [kept] + [n for n in members if n != kept]
