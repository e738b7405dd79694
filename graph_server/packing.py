"""Exact set packing and hitting set over small families of claim sets.

:func:`graph_server.arguments.argument_width` asks both questions of a target's arguments:
how many of them are pairwise disjoint (:func:`max_disjoint`), and which fewest claims meet
every one (:func:`min_hitting_set`). Both are NP-hard in general; the families here hold at
most ``max_arguments`` sets, so exact branch and bound over bit masks is fast.
"""

from __future__ import annotations

from collections.abc import Sequence

Claims = frozenset[str]


def max_disjoint(family: Sequence[Claims]) -> list[int]:
    """A largest selection of pairwise-disjoint sets of ``family`` (maximum set packing).

    Parameters
    ----------
    family : sequence of frozenset of str
        The sets (for arguments: their claims without the target).

    Returns
    -------
    list of int
        Sorted indices into ``family``. Deterministic: the first optimum the search meets.

    Notes
    -----
    Exact branch and bound on the conflict graph (sets sharing a claim). A set
    with at most one conflict is taken without branching (always safe), otherwise the search
    branches on a set with the most conflicts, taken or left; each branch that takes it
    removes it and at least two others, so O(1.47^m * m) for ``m = len(family)`` (m <= 32
    under the default cap: at most about 2 * 10^5 branches).

    Examples
    --------
    >>> max_disjoint([frozenset("ab"), frozenset("bc"), frozenset("cd")])
    [0, 2]
    >>> max_disjoint([])
    []
    """
    conflicts = [
        sum(1 << j for j, other in enumerate(family) if j != i and claims & other)
        for i, claims in enumerate(family)
    ]
    best = 0

    def search(candidates: int, chosen: int) -> None:
        nonlocal best
        if (chosen | candidates).bit_count() <= best.bit_count():
            return
        if not candidates:
            best = chosen
            return
        degree = {i: (conflicts[i] & candidates).bit_count() for i in _bits(candidates)}
        easy = next((i for i, d in degree.items() if d <= 1), None)
        if easy is not None:
            search(candidates & ~(1 << easy | conflicts[easy]), chosen | 1 << easy)
            return
        pick = max(degree, key=lambda i: (degree[i], -i))
        search(candidates & ~(1 << pick | conflicts[pick]), chosen | 1 << pick)
        search(candidates & ~(1 << pick), chosen)

    search((1 << len(family)) - 1, 0)
    return list(_bits(best))


def min_hitting_set(family: Sequence[Claims]) -> list[str]:
    """A smallest set of elements meeting every set of ``family`` (minimum hitting set).

    Parameters
    ----------
    family : sequence of frozenset of str
        Non-empty sets (for arguments: their claims without the target).

    Returns
    -------
    list of str
        Sorted elements; ``[]`` for an empty family. Deterministic.

    Raises
    ------
    ValueError
        A set of ``family`` is empty (nothing can meet it).

    Notes
    -----
    Elements hitting a subset of the sets another element hits are dropped
    (a larger or equal one always does as well); then branch and bound: branch on the unmet
    set with the fewest elements, one branch per element, pruned by a greedy count of
    pairwise-disjoint unmet sets (each needs its own element). O(s^c * m * e) for ``s`` the
    largest set, ``c`` the cut size, ``m`` sets and ``e`` elements.

    Examples
    --------
    >>> min_hitting_set([frozenset("ab"), frozenset("bc"), frozenset("cd")])
    ['b', 'c']
    >>> min_hitting_set([])
    []
    >>> min_hitting_set([frozenset()])
    Traceback (most recent call last):
    ...
    ValueError: an empty set cannot be hit
    """
    if any(not claims for claims in family):
        raise ValueError("an empty set cannot be hit")
    hits = _hit_masks(family)
    elements = _undominated(hits)
    members = [[e for e in elements if hits[e] >> i & 1] for i in range(len(family))]
    best: list[str] = []
    best_size = len(family) + 1  # one element per set always suffices

    def search(unmet: int, chosen: list[str]) -> None:
        nonlocal best, best_size
        if not unmet:
            best, best_size = sorted(chosen), len(chosen)
            return
        if len(chosen) + _disjoint_count(members, unmet) >= best_size:
            return
        pick = min(_bits(unmet), key=lambda i: (len(members[i]), i))
        for element in members[pick]:
            search(unmet & ~hits[element], [*chosen, element])

    search((1 << len(family)) - 1, [])
    return best


def _hit_masks(family: Sequence[Claims]) -> dict[str, int]:
    """Each element's bit mask of the sets of ``family`` it is in (bit ``i``: set ``i``)."""
    hits: dict[str, int] = {}
    for index, claims in enumerate(family):
        for element in claims:
            hits[element] = hits.get(element, 0) | 1 << index
    return hits


def _disjoint_count(members: list[list[str]], unmet: int) -> int:
    """How many of the ``unmet`` sets (a bit mask) a greedy pass finds pairwise disjoint:
    each needs an element of its own, so a lower bound on what is left to choose."""
    used: set[str] = set()
    count = 0
    for i in _bits(unmet):
        if used.isdisjoint(members[i]):
            used.update(members[i])
            count += 1
    return count


def _undominated(hits: dict[str, int]) -> list[str]:
    """Elements whose hit mask no other element's mask contains (ties: the smallest id)."""
    ordered = sorted(hits)
    kept = []
    for element in ordered:
        mask = hits[element]
        dominated = any(
            other != element
            and mask | hits[other] == hits[other]
            and (mask != hits[other] or other < element)
            for other in ordered
        )
        if not dominated:
            kept.append(element)
    return kept


def _bits(mask: int) -> list[int]:
    """The indices of the set bits of ``mask``, ascending."""
    return [i for i in range(mask.bit_length()) if mask >> i & 1]
