"""Near-duplicate claims: find them, guard against false merges, merge them.

Why this matters: paraphrases of one claim from different runs must become one
node, or support width counts the same evidence twice and contradictions
between runs never meet. The rules, in order:

1. **Guards come first.** Two claims whose content words (stemmed, ignoring
   negations, auxiliaries and numbers) agree are compared on what remains:
   - same numbers, different negation parity -> a contradiction (negation guard);
   - same negation parity and the same count of numbers, differing in exactly
     one of them (in order of appearance) -> a contradiction (numeric guard).
     "trellium melts at 412 C" vs "... at 350 C" contradict; "pump 3 read 40"
     vs "pump 5 read 50" differ twice, most likely talk about different things,
     and are only kept apart.
   A contradiction is never merged; the pair gets mutual ``attacks`` edges.
2. **Similar pairs merge** (see :mod:`graph_server.similarity`) unless they are
   blocked, never merged (and never made to attack each other):
   - they differ in negation parity, in their numbers or in an identifier token
     mixing letters and digits (``x9`` vs ``x8``);
   - a content word was substituted (the slot guard): each claim holds a content
     word the other lacks and that is no typo of one on the other side ("born in
     Braskthorpe" / "born in Braskmere", "a red car" / "a blue car");
   - one is a conclusion and the other is not: an answer never absorbs its evidence;
   - both carry a ``source`` and the sources differ: claims anchored to different
     evidence spans (or identity keys) are different claims by the caller's word.
3. **Clustering** is union-find over mergeable pairs processed in a canonical
   order, refusing any union that would put two claims that must stay apart
   (guard pairs, blocked pairs, pairs joined by an attacks edge) in one cluster.
   A merged node keeps every claim it absorbed as an alias and is compared
   through all of them, which makes a second pass a no-op (idempotence) and the
   outcome independent of ingest order.
4. **Merge policy** per cluster: keep the earliest-asserted node (smallest first
   run id, then node id, both in natural order) unless the cluster holds a refuted
   node, in which case the earliest refuted node is kept so a refuted claim is
   never revived by a live paraphrase; otherwise a node with a ``source`` is kept
   over nodes without one, so a checked citation keeps its id and its text. The kept
   node takes the union of run ids,
   aliases and merged ids, the maximum confidence and the strongest type
   (conclusion > given > inference > assumption; a conclusion stays a conclusion
   so an answer candidate is never lost). Edges are re-pointed to it, parallel
   edges of one relation collapse (max confidence, run ids unioned) and edges
   that would become self-loops are dropped.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import networkx as nx

from graph_server.similarity import ClaimKey, claim_key, differ_by_substitution, similar_pairs

PairFinder = Callable[[Sequence[ClaimKey], float, float], set[tuple[int, int]]]
TYPE_PRECEDENCE = ("conclusion", "given", "inference", "assumption")
_DIGITS = re.compile(r"(\d+)")


@dataclass(frozen=True)
class MergePlan:
    """What :func:`plan_merges` decided; apply it with :func:`apply_plan`."""

    clusters: list[list[str]] = field(default_factory=list)
    """Each cluster lists the kept node first, then the nodes merged into it."""
    contradictions: list[tuple[str, str]] = field(default_factory=list)
    """Guard pairs (by original node id) that must attack each other."""


def natural_key(text: str) -> tuple[tuple[int, int, str], ...]:
    """Sort key that orders ``r2`` before ``r10``."""
    return tuple(
        (0, int(part), part) if part.isdigit() else (1, 0, part)
        for part in _DIGITS.split(text)
        if part
    )


def assertion_order(graph: nx.MultiDiGraph, node: str) -> tuple[object, ...]:
    """Earliest-assertion key: first run id (natural order), then node id.

    Nodes without provenance sort after every node that has some.
    """
    run_ids = graph.nodes[node]["run_ids"]
    if run_ids:
        return (0, min(natural_key(r) for r in run_ids), natural_key(node))
    return (1, (), natural_key(node))


def plan_merges(
    graph: nx.MultiDiGraph,
    jaccard_threshold: float,
    ratio_threshold: float,
    focus: Iterable[str] | None = None,
    find_pairs: PairFinder = similar_pairs,
) -> MergePlan:
    """Decide which nodes merge and which pairs contradict. Pure read.

    ``focus`` limits new merges and contradictions to pairs involving at least one
    of those nodes (used when a fresh ingest is deduplicated against the graph);
    constraints between all nodes still apply. ``find_pairs`` is the similarity
    search; the default is the indexed search, and
    :func:`graph_server.similarity.pairwise_similar_pairs` gives the O(n^2)
    reference used to check it. Complexity: the similarity search
    plus O(P log P) for P candidate pairs.
    """
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
    guarded = {
        pair
        for pair in (_ordered(owner[i], owner[j]) for i, j in _guard_pairs(keys))
        if pair[0] != pair[1]
    }
    apart |= guarded
    for src, dst, relation in graph.edges(keys=True):
        if relation == "attacks" and src != dst:
            apart.add(_ordered(position_of[src], position_of[dst]))

    clusters = _cluster(len(nodes), sorted(mergeable - apart), apart, focused)
    return MergePlan(
        clusters=[_order_cluster(graph, [nodes[p] for p in members]) for members in clusters],
        contradictions=sorted(
            (nodes[a], nodes[b]) for a, b in guarded if a in focused or b in focused
        ),
    )


def apply_plan(graph: nx.MultiDiGraph, plan: MergePlan) -> tuple[list[list[str]], list[list[str]]]:
    """Carry out a plan on ``graph`` in place.

    Returns ``(merges, contradictions_created)``: ``[[kept, merged]]`` pairs and the
    ``[a, b]`` pairs whose mutual attacks did not both exist before, sorted.
    O(sum of degrees of merged nodes + C) for C contradictions.
    """
    representative: dict[str, str] = {}
    merges: list[list[str]] = []
    for kept, *absorbed in plan.clusters:
        for node in absorbed:
            _absorb(graph, kept, node)
            representative[node] = kept
            merges.append([kept, node])

    created: set[tuple[str, str]] = set()
    for a, b in plan.contradictions:
        ra, rb = representative.get(a, a), representative.get(b, b)
        if ra == rb:
            continue
        missing = [(s, d) for s, d in ((ra, rb), (rb, ra)) if not graph.has_edge(s, d, "attacks")]
        for src, dst in missing:
            graph.add_edge(
                src, dst, key="attacks", relation="attacks", confidence=1.0, run_ids=set()
            )
        if missing:
            created.add((min(ra, rb), max(ra, rb)))
    return sorted(merges), [list(pair) for pair in sorted(created)]


def _must_stay_apart(a: ClaimKey, b: ClaimKey) -> bool:
    # Similar wording is not the same claim when the polarity, a number or a name
    # differs: "server x9 runs linux" and "server x8 runs linux" are two servers.
    return (
        a.negations % 2 != b.negations % 2
        or a.numbers != b.numbers
        or a.identifiers != b.identifiers
        or differ_by_substitution(a.content, b.content)
    )


def _different_kinds(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Node-level reasons two similar claims stay apart: a conclusion and a
    non-conclusion, or two different sources."""
    if (a["type"] == "conclusion") != (b["type"] == "conclusion"):
        return True
    first, second = a.get("source"), b.get("source")
    return first is not None and second is not None and first != second


def _guard_pairs(keys: list[ClaimKey]) -> set[tuple[int, int]]:
    by_statement: dict[tuple[frozenset[str], tuple[str, ...]], list[int]] = defaultdict(list)
    by_wording: dict[tuple[frozenset[str], int, int], list[int]] = defaultdict(list)
    for i, key in enumerate(keys):
        if not key.content:
            continue
        by_statement[(key.content, key.numbers)].append(i)
        if key.numbers:
            by_wording[(key.content, key.negations % 2, len(key.numbers))].append(i)
    pairs: set[tuple[int, int]] = set()
    for members in by_statement.values():
        even = [i for i in members if keys[i].negations % 2 == 0]
        odd = [i for i in members if keys[i].negations % 2 == 1]
        pairs.update(_ordered(i, j) for i in even for j in odd)
    for (_, _, count), members in by_wording.items():
        for position in range(count):
            pairs |= _differ_only_at(keys, members, position)
    return pairs


def _differ_only_at(
    keys: list[ClaimKey], members: list[int], position: int
) -> set[tuple[int, int]]:
    """Pairs whose number sequences agree everywhere except at ``position``."""
    masked: dict[tuple[str, ...], dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    for i in members:
        numbers = keys[i].numbers
        masked[numbers[:position] + numbers[position + 1 :]][numbers[position]].append(i)
    pairs: set[tuple[int, int]] = set()
    for by_value in masked.values():
        groups = list(by_value.values())
        for g, first in enumerate(groups):
            for second in groups[g + 1 :]:
                pairs.update(_ordered(i, j) for i in first for j in second)
    return pairs


def _cluster(
    size: int,
    candidates: list[tuple[int, int]],
    apart: set[tuple[int, int]],
    focused: set[int],
) -> list[list[int]]:
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
        keep, drop = min(ra, rb), max(ra, rb)
        parent[drop] = keep
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


def _absorb(graph: nx.MultiDiGraph, kept: str, node: str) -> None:
    target, source = graph.nodes[kept], graph.nodes[node]
    target["run_ids"] |= source["run_ids"]
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
            existing["run_ids"] |= data["run_ids"]
        else:
            graph.add_edge(src, dst, key=relation, **data)


def _ordered(a: int, b: int) -> tuple[int, int]:
    return (a, b) if a <= b else (b, a)
