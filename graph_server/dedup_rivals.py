"""The guard pairs and the rival cap (rule 1 of :mod:`graph_server.dedup`).

Claims that differ only in their negation parity, or only in one number, are rival
readings of one statement and must attack each other. They form groups; a group of more
than ``max_rival_claims`` claims (``StoreLimits``) is a list of different things ("rack 1"
... "rack 2000"), so its pairs make no attack edges and the group is reported instead.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from graph_server.similarity import ClaimKey
from graph_server.validation import StoreLimits

DEFAULT_MAX_RIVALS = StoreLimits().max_rival_claims
"""Largest rival group whose pairs become contradictions (see the rival cap)."""


def _guard_pairs(
    keys: Sequence[ClaimKey], max_rivals: int
) -> tuple[set[tuple[int, int]], list[tuple[list[int], int]]]:
    """Rival pairs of claim keys (rule 1), and the rival groups over the cap.

    A group is the keys with one statement and both parities (negation guard), or the
    keys that agree on all numbers but one position (numeric guard). Returns ``(pairs,
    over_cap)``: ``pairs`` from the groups of at most ``max_rivals`` keys, and for each
    bigger group its keys and the count of rival pairs it holds. Cost: O(keys * numbers
    per claim) plus the pairs returned, at most ``max_rivals`` per key and group.
    """
    by_statement: dict[tuple[frozenset[str], tuple[str, ...]], list[int]] = defaultdict(list)
    by_wording: dict[tuple[frozenset[str], int, int], list[int]] = defaultdict(list)
    for i, key in enumerate(keys):
        if not key.content:
            continue
        by_statement[(key.content, key.numbers)].append(i)
        if key.numbers:
            by_wording[(key.content, key.negations % 2, len(key.numbers))].append(i)
    pairs: set[tuple[int, int]] = set()
    over_cap: list[tuple[list[int], int]] = []
    for members in by_statement.values():
        even = [i for i in members if keys[i].negations % 2 == 0]
        odd = [i for i in members if keys[i].negations % 2 == 1]
        _rivals([even, odd], max_rivals, pairs, over_cap)
    for (_, _, count), members in by_wording.items():
        for position in range(count):
            masked: dict[tuple[str, ...], dict[str, list[int]]] = defaultdict(
                lambda: defaultdict(list)
            )
            for i in members:
                numbers = keys[i].numbers
                masked[numbers[:position] + numbers[position + 1 :]][numbers[position]].append(i)
            for by_value in masked.values():
                _rivals(list(by_value.values()), max_rivals, pairs, over_cap)
    return pairs, over_cap


def _rivals(
    classes: list[list[int]],
    max_rivals: int,
    pairs: set[tuple[int, int]],
    over_cap: list[tuple[list[int], int]],
) -> None:
    """Pair every key with the keys of the other ``classes`` (one rival group), into
    ``pairs``; a group over ``max_rivals`` keys goes to ``over_cap`` instead."""
    classes = [members for members in classes if members]
    if len(classes) < 2:
        return
    size = sum(len(members) for members in classes)
    if size > max_rivals:
        count = (size * size - sum(len(members) ** 2 for members in classes)) // 2
        over_cap.append((sorted(i for members in classes for i in members), count))
        return
    for c, first in enumerate(classes):
        for second in classes[c + 1 :]:
            pairs.update(_ordered(i, j) for i in first for j in second)


def _ordered(a: int, b: int) -> tuple[int, int]:
    return (a, b) if a <= b else (b, a)
