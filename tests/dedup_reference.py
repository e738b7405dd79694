"""The dedup plan computed the straightforward way: the oracle for the indexed search.

:func:`reference_plan` is the engine's earlier ``plan_merges``: it finds every similar
pair of claims (with ``find_pairs``: the O(n^2) loop by default, or the earlier
prefix-filtered search), classifies each as mergeable or blocked, adds guard pairs and
attack edges as constraints, and clusters. It shares the guards, the clustering
(:func:`graph_server.dedup.finish_plan`) and the merge policy with
:mod:`graph_server.dedup`, so a difference between the two plans can only come from
which pairs the search found. The tests compare the two;
``benchmarks/bench_engine.py`` times it as the baseline ("today's code").
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import networkx as nx

from graph_server.dedup import MergePlan, _different_kinds, _must_stay_apart, finish_plan
from graph_server.dedup_clusters import assertion_order
from graph_server.dedup_rivals import _ordered
from graph_server.similarity import ClaimKey, claim_key, pairwise_similar_pairs

PairFinder = Callable[[Sequence[ClaimKey], float, float], set[tuple[int, int]]]


def reference_plan(
    graph: nx.MultiDiGraph,
    jaccard_threshold: float,
    ratio_threshold: float,
    focus: Iterable[str] | None = None,
    find_pairs: PairFinder = pairwise_similar_pairs,
) -> MergePlan:
    """Merge plan from every similar pair ``find_pairs`` returns (see module docstring)."""
    nodes = sorted(graph.nodes, key=lambda n: assertion_order(graph, n))
    owner: list[int] = []
    keys: list[ClaimKey] = []
    for position, node in enumerate(nodes):
        data = graph.nodes[node]
        for text in [data["claim"], *data["aliases"]]:
            owner.append(position)
            keys.append(claim_key(text))

    position_of = {node: p for p, node in enumerate(nodes)}
    focused = (
        set(range(len(nodes)))
        if focus is None
        else {position_of[n] for n in set(focus) if n in position_of}
    )
    mergeable: set[tuple[int, int]] = set()
    apart: set[tuple[int, int]] = set()
    for i, j in find_pairs(keys, jaccard_threshold, ratio_threshold):
        pair = _ordered(owner[i], owner[j])
        if pair[0] == pair[1]:
            continue
        first, second = (graph.nodes[nodes[p]] for p in pair)
        if _must_stay_apart(keys[i], keys[j]) or _different_kinds(first, second):
            apart.add(pair)
        else:
            mergeable.add(pair)
    return finish_plan(graph, nodes, owner, keys, mergeable, apart, focused)
