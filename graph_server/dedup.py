"""Near-duplicate claims: find them, guard against false merges, merge them.

This module plans (rules 1 to 3 below); the rival cap of rule 1 is in
:mod:`graph_server.dedup_rivals`, the clustering of rule 3 and the assertion order in
:mod:`graph_server.dedup_clusters`, and applying a plan (rule 4) in
:mod:`graph_server.dedup_apply`. Their public names are importable from here too.

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
   **Rival cap.** The claims that differ only in one number (or only in negation)
   form a group; rival readings of one value are a handful of claims. A group of more
   than ``max_rival_claims`` claims (``StoreLimits``) is a list of different things
   ("rack 1" ... "rack 2000"), so its pairs make no attack edges: without the cap n
   templated claims would make n(n-1) of them. Such groups are reported in the plan
   (``withheld``); their claims still never merge (their numbers differ).
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
   (guard pairs, blocked pairs, pairs joined by an attacks edge) in one cluster,
   or two wordings that differ by a substitution, or two different sources, even
   when those two were never compared (the rules are not transitive: "server x9
   runs linux" is close to both "x9 runs linux" and "server x9 linux").
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

*Search.* :func:`plan_merges` finds mergeable pairs through signature blocks and a
content-word index (:mod:`graph_server.candidates`), not by comparing every pair. Nodes
joined by them form components; only inside a component can a cluster form, so the pairs
that must stay apart (similar but blocked) are searched for there alone, with the exact
similarity search. The clusters are identical to those of the O(n^2) formulation that
compares every pair (the tests keep it as the oracle). Complexity: near-linear in the
claims (see candidates) plus the components' exact searches and O(P log P) for P candidate
pairs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import networkx as nx

from graph_server.candidates import ContentIndex, block_numbers, covering_pairs
from graph_server.dedup_apply import TYPE_PRECEDENCE as TYPE_PRECEDENCE
from graph_server.dedup_apply import MergePlan as MergePlan
from graph_server.dedup_apply import apply_plan as apply_plan
from graph_server.dedup_clusters import _cluster, _components, _order_cluster
from graph_server.dedup_clusters import assertion_order as assertion_order
from graph_server.dedup_clusters import natural_key as natural_key
from graph_server.dedup_rivals import DEFAULT_MAX_RIVALS as DEFAULT_MAX_RIVALS
from graph_server.dedup_rivals import _guard_pairs, _ordered
from graph_server.similarity import (
    ClaimKey,
    claim_key,
    is_similar,
    pairwise_similar_pairs,
    similar_pairs,
)
from graph_server.slot_guard import differ_by_substitution
from graph_server.validation import DEFAULT_JACCARD_THRESHOLD, DEFAULT_RATIO_THRESHOLD


class Cancelled(Exception):
    """Raised by a ``checkpoint`` when the caller asked to stop; nothing was changed yet.

    Examples
    --------
    >>> import networkx as nx
    >>> def stop() -> None:
    ...     raise Cancelled("the caller went away")
    >>> plan_merges(nx.MultiDiGraph(), 0.7, 0.85, checkpoint=stop)
    Traceback (most recent call last):
    ...
    graph_server.dedup.Cancelled: the caller went away
    """


def plan_merges(
    graph: nx.MultiDiGraph,
    jaccard_threshold: float,
    ratio_threshold: float,
    focus: Iterable[str] | None = None,
    *,
    key_of: Callable[[str], ClaimKey] = claim_key,
    checkpoint: Callable[[], None] = lambda: None,
    max_rivals: int = DEFAULT_MAX_RIVALS,
) -> MergePlan:
    """Decide which nodes merge and which pairs contradict (cost: module docstring). Pure read.

    Parameters
    ----------
    graph : networkx.MultiDiGraph
        A stored argument graph; node attributes ``claim``, ``aliases``, ``run_ids``,
        ``type``, ``refuted`` and ``source`` are read.
    jaccard_threshold, ratio_threshold : float
        The similarity thresholds (:func:`graph_server.similarity.is_similar`).
    focus : iterable of str, optional
        Limits new merges and contradictions to pairs involving at least one of these nodes
        (used when a fresh ingest is deduplicated against the graph); constraints between
        all nodes still apply. Default: every node.
    key_of : callable, optional
        Normalises a claim (the store passes its per-graph cache).
    checkpoint : callable, optional
        Called between batches; may raise :class:`Cancelled`, which propagates.
    max_rivals : int, optional
        The rival cap (module docstring).

    Returns
    -------
    MergePlan
        The clusters, contradictions and withheld rival groups.

    Examples
    --------
    Two restatements of one reading merge; the rival reading contradicts both:

    >>> from graph_server.fixture import claims_graph
    >>> graph = claims_graph()  # n1, n2: one reading of Trellium's melting point; n3 a rival
    >>> plan_merges(graph, 0.7, 0.85)
    MergePlan(clusters=[['n1', 'n2']], contradictions=[('n1', 'n3'), ('n2', 'n3')], withheld=[])
    >>> plan_merges(graph, 0.7, 0.85, focus=["n3"]).clusters
    []
    >>> plan_merges(graph, 0.7, 0.85, max_rivals=2).withheld
    [(('n1', 'n2', 'n3'), 2)]
    """
    nodes = sorted(graph.nodes, key=lambda n: assertion_order(graph, n))
    data = [graph.nodes[node] for node in nodes]
    owner, keys, keys_of = _claim_keys(data, key_of)
    checkpoint()
    focused = _focus_positions(nodes, focus)
    thresholds = (jaccard_threshold, ratio_threshold)
    linked = _linked_pairs(data, owner, keys, focused, thresholds, checkpoint)
    checkpoint()
    components = _components(len(nodes), linked)
    mergeable, apart = _sort_pairs(components, data, owner, keys, keys_of, thresholds)
    checkpoint()
    return finish_plan(graph, nodes, owner, keys, mergeable, apart, focused, max_rivals)


def _focus_positions(nodes: Sequence[str], focus: Iterable[str] | None) -> set[int]:
    """The positions in ``nodes`` of the ``focus`` ids (unknown ids ignored; None: all)."""
    if focus is None:
        return set(range(len(nodes)))
    position_of = {node: p for p, node in enumerate(nodes)}
    return {position_of[n] for n in set(focus) if n in position_of}


def _linked_pairs(
    data: Sequence[dict[str, Any]],
    owner: Sequence[int],
    keys: Sequence[ClaimKey],
    focused: set[int],
    thresholds: tuple[float, float],
    checkpoint: Callable[[], None],
) -> set[tuple[int, int]]:
    """The node-position pairs, one of them focused, that the candidate search finds similar
    and no substitution or kind keeps apart: the links the components are built from."""
    blocks = block_numbers(keys, (i for i, key in enumerate(keys) if key.tokens))
    usable = sorted(blocks)
    signatures = [blocks.get(i, -1) for i in range(len(keys))]
    linked: set[tuple[int, int]] = set()

    def accept(i: int, j: int) -> None:
        pair = _ordered(owner[i], owner[j])
        if (
            pair[0] != pair[1]
            and pair not in linked
            and not differ_by_substitution(keys[i].content, keys[j].content)
            and not _different_kinds(data[pair[0]], data[pair[1]])
            and is_similar(keys[i], keys[j], *thresholds)
        ):
            linked.add(pair)

    focus_keys = [i for i in usable if owner[i] in focused]
    everything = ContentIndex(keys, signatures, usable)
    covering_pairs(keys, focus_keys, everything, signatures, accept, checkpoint)
    if len(focus_keys) < len(usable):
        # Pairs whose covered side is outside the focus: ask the focused claims.
        only_focus = ContentIndex(keys, signatures, focus_keys)
        rest = [i for i in usable if owner[i] not in focused]
        covering_pairs(keys, rest, only_focus, signatures, accept, checkpoint)
    return linked


def _claim_keys(
    data: Sequence[dict[str, Any]], key_of: Callable[[str], ClaimKey]
) -> tuple[list[int], list[ClaimKey], list[list[int]]]:
    """The keys of every node's claim and aliases, in node order. O(total text).

    Returns ``(owner, keys, keys_of)``: ``keys[k]`` belongs to node position ``owner[k]``,
    and ``keys_of[p]`` lists the key indices of node position ``p``.
    """
    owner: list[int] = []
    keys: list[ClaimKey] = []
    keys_of: list[list[int]] = []
    for position, attributes in enumerate(data):
        keys_of.append([])
        for text in [attributes["claim"], *attributes["aliases"]]:
            keys_of[position].append(len(keys))
            owner.append(position)
            keys.append(key_of(text))
    return owner, keys, keys_of


def _sort_pairs(
    components: Iterable[Iterable[int]],
    data: Sequence[dict[str, Any]],
    owner: Sequence[int],
    keys: Sequence[ClaimKey],
    keys_of: Sequence[Sequence[int]],
    thresholds: tuple[float, float],
) -> tuple[set[tuple[int, int]], set[tuple[int, int]]]:
    """Similar node pairs inside each component, split into mergeable and kept apart.

    A pair stays apart when its claims must (:func:`_must_stay_apart`) or its nodes are of
    different kinds. Returns ``(mergeable, apart)`` as ordered position pairs. Cost: the
    exact similarity search within each component.
    """
    mergeable: set[tuple[int, int]] = set()
    apart: set[tuple[int, int]] = set()
    for component in components:
        members = [k for position in component for k in keys_of[position]]
        for a, b in _similar_within([keys[k] for k in members], *thresholds):
            i, j = members[a], members[b]
            pair = _ordered(owner[i], owner[j])
            if pair[0] == pair[1]:
                continue
            if _must_stay_apart(keys[i], keys[j]) or _different_kinds(data[pair[0]], data[pair[1]]):
                apart.add(pair)
            else:
                mergeable.add(pair)
    return mergeable, apart


def finish_plan(
    graph: nx.MultiDiGraph,
    nodes: Sequence[str],
    owner: Sequence[int],
    keys: Sequence[ClaimKey],
    mergeable: set[tuple[int, int]],
    apart: set[tuple[int, int]],
    focused: set[int],
    max_rivals: int = DEFAULT_MAX_RIVALS,
) -> MergePlan:
    """Add the guard pairs and attack edges to the constraints and cluster: the end of
    :func:`plan_merges`, shared with the every-pair reference in the tests.

    Parameters
    ----------
    graph : networkx.MultiDiGraph
        The graph being planned for; its attacks edges keep their ends apart.
    nodes : sequence of str
        Its nodes, in assertion order (:func:`assertion_order`).
    owner : sequence of int
        ``owner[k]`` is the position in ``nodes`` of the node claim key ``k`` belongs to.
    keys : sequence of ClaimKey
        The claim keys of every node's claim and aliases.
    mergeable, apart : set of tuple of int
        Similar node-position pairs, and those that must stay apart, each ``(smaller, larger)``.
    focused : set of int
        The positions of the focus nodes (see :func:`plan_merges`).
    max_rivals : int, optional
        The rival cap: the guard pairs of a larger rival group are not made contradictions.

    Returns
    -------
    MergePlan
        The clusters, the contradictions touching the focus and the withheld rival groups.

    Examples
    --------
    >>> from graph_server.fixture import claims_graph
    >>> from graph_server.similarity import claim_key
    >>> graph, nodes = claims_graph(), ["n1", "n2", "n3"]  # n1, n2: one reading; n3 a rival
    >>> keys = [claim_key(graph.nodes[node]["claim"]) for node in nodes]
    >>> finish_plan(graph, nodes, [0, 1, 2], keys, {(0, 1)}, set(), {0, 1, 2}).clusters
    [['n1', 'n2']]
    >>> finish_plan(graph, nodes, [0, 1, 2], keys, {(0, 1)}, {(0, 1)}, {0, 1, 2}).clusters
    []
    """
    guarded, over_cap = _guards(owner, keys, max_rivals)
    apart = apart | guarded | _attacking(graph, nodes)
    traits = _traits(graph, nodes, owner, keys)
    clusters = _cluster(len(nodes), sorted(mergeable - apart), apart, focused, traits)
    return MergePlan(
        clusters=[_order_cluster(graph, [nodes[p] for p in members]) for members in clusters],
        contradictions=sorted(
            (nodes[a], nodes[b]) for a, b in guarded if a in focused or b in focused
        ),
        withheld=_withheld(over_cap, owner, nodes, focused),
    )


def _guards(
    owner: Sequence[int], keys: Sequence[ClaimKey], max_rivals: int
) -> tuple[set[tuple[int, int]], list[tuple[list[int], int]]]:
    """The guard pairs (rule 1) as node-position pairs, and the rival groups over the cap.

    The pairs of an over-cap group need not be kept apart: their signatures differ, so no
    merge can join them.
    """
    rivals, over_cap = _guard_pairs(keys, max_rivals)
    ordered = (_ordered(owner[i], owner[j]) for i, j in rivals)
    return {pair for pair in ordered if pair[0] != pair[1]}, over_cap


def _attacking(graph: nx.MultiDiGraph, nodes: Sequence[str]) -> set[tuple[int, int]]:
    """The node-position pairs an attacks edge joins: a merge never bridges an attack."""
    position_of = {node: p for p, node in enumerate(nodes)}
    return {
        _ordered(position_of[src], position_of[dst])
        for src, dst, relation in graph.edges(keys=True)
        if relation == "attacks" and src != dst
    }


def _traits(
    graph: nx.MultiDiGraph, nodes: Sequence[str], owner: Sequence[int], keys: Sequence[ClaimKey]
) -> tuple[list[set[frozenset[str]]], list[set[str]]]:
    """Per node position, the content words of each wording and the source if any: what
    keeps two never-compared claims out of one cluster (:func:`_cluster`)."""
    contents: list[set[frozenset[str]]] = [set() for _ in nodes]
    for k, key in enumerate(keys):
        contents[owner[k]].add(key.content)
    return contents, [{graph.nodes[node].get("source")} - {None} for node in nodes]


def _withheld(
    over_cap: list[tuple[list[int], int]],
    owner: Sequence[int],
    nodes: Sequence[str],
    focused: set[int],
) -> list[tuple[tuple[str, ...], int]]:
    """The over-cap rival groups touching the focus, as (node ids, rival pairs), sorted."""
    withheld = []
    for group, pairs in over_cap:
        positions = sorted({owner[k] for k in group})
        if any(p in focused for p in positions):
            withheld.append((tuple(sorted(nodes[p] for p in positions)), pairs))
    return sorted(withheld)


def _similar_within(
    keys: Sequence[ClaimKey], jaccard_threshold: float, ratio_threshold: float
) -> set[tuple[int, int]]:
    """Every similar pair among a component's claims (small: a direct loop is cheapest)."""
    if len(keys) > 24:
        return similar_pairs(keys, jaccard_threshold, ratio_threshold)
    return pairwise_similar_pairs(keys, jaccard_threshold, ratio_threshold)


def same_claim(
    a: str,
    b: str,
    jaccard_threshold: float = DEFAULT_JACCARD_THRESHOLD,
    ratio_threshold: float = DEFAULT_RATIO_THRESHOLD,
) -> bool:
    """Whether claims ``a`` and ``b``, meeting alone, would be folded into one node: similar
    (:func:`graph_server.similarity.is_similar`) and not kept apart by polarity, a number, an
    identifier or a substituted content word (rule 2 above; node types and sources aside).
    O(len(a) + len(b)) plus one edit-distance ratio.

    Parameters
    ----------
    a, b : str
        Two claims as written.
    jaccard_threshold, ratio_threshold : float, optional
        The similarity thresholds (default: the store's).

    Returns
    -------
    bool
        Whether the two would merge.

    Examples
    --------
    >>> same_claim("The red car is fast", "The red car is very fast")
    True
    >>> same_claim("The red car is fast", "The blue car is fast")
    False
    >>> same_claim("Server x9 runs Linux", "Server x8 runs Linux")
    False
    """
    key_a, key_b = claim_key(a), claim_key(b)
    return is_similar(key_a, key_b, jaccard_threshold, ratio_threshold) and not _must_stay_apart(
        key_a, key_b
    )


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
