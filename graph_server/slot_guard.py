"""The slot guard's token tests: is one word a typo of another, and do two claims fill one
slot differently ("born in Braskthorpe" / "born in Braskmere", "a red car" / "a blue car").

:mod:`graph_server.dedup` applies them to the pairs the similarity search found (so the
search itself stays exact), and :mod:`graph_server.candidates` blocks on the same typo rule.
"""

from __future__ import annotations

from rapidfuzz.distance import OSA

TYPO_MIN_CHARS = 7
"""Shortest token the slot guard treats as a possible typo of another (see is_variant)."""
TYPO_SHARED_PREFIX = 3
"""Leading characters a typo must leave intact: near-miss names differ up front."""


def is_variant(a: str, b: str) -> bool:
    """Whether two different content tokens are spellings of one word for the slot guard.

    Only a typo inside a long word counts: one edit (insert, delete, substitute, or swap
    two adjacent letters: the optimal-string-alignment distance) between tokens of at
    least :data:`TYPO_MIN_CHARS` characters that share their first
    :data:`TYPO_SHARED_PREFIX` characters ("Ferrowell"/"Ferowell", "inspection"/
    "inspcetion"). Shorter words differing by a letter are different words ("Acme"/"Acne",
    "men"/"man"). Measured on ``evals/datasets/multihop.jsonl``, whose fictional names are
    built as near misses of each other: of its 629 distinct capitalised words of 7+
    characters, 90 pairs are one edit apart ("Marlberg"/"Yarlberg") and the shared prefix
    joins none of them; over the stemmed content words of each item's own documents the
    rule joins no pair (without the prefix, 3). Counting a swap as one edit joins no
    further pair there and lets transposition typos merge (``bench_engine.py``'s synthetic
    paraphrases: 244 -> 262 of 300). ``benchmarks/bench_dedup_soundness.py`` prints these
    counts. Symmetric; O(len(a) + len(b)).

    Parameters
    ----------
    a, b : str
        Two different content tokens.

    Returns
    -------
    bool
        Whether one is a typo of the other.

    Examples
    --------
    >>> is_variant("ferrowell", "ferowell"), is_variant("inspection", "inspcetion")
    (True, True)
    >>> is_variant("acme", "acne"), is_variant("marlberg", "yarlberg")
    (False, False)
    """
    if min(len(a), len(b)) < TYPO_MIN_CHARS or a[:TYPO_SHARED_PREFIX] != b[:TYPO_SHARED_PREFIX]:
        return False
    return OSA.distance(a, b, score_cutoff=1) <= 1


def differ_by_substitution(a: frozenset[str], b: frozenset[str]) -> bool:
    """Whether each token set holds a content token the other lacks, with no variant
    (:func:`is_variant`) on the other side: one slot filled differently ("red car" /
    "blue car", "paid by Acme" / "paid by Apex"). A one-sided difference (extra words
    in one claim) is not a substitution. O(|a - b| * |b - a|).

    Parameters
    ----------
    a, b : frozenset of str
        Two content token sets (:attr:`ClaimKey.content`).

    Returns
    -------
    bool
        Whether the two differ in a slot, not merely by extra words or a typo.

    Examples
    --------
    >>> differ_by_substitution(frozenset({"red", "car"}), frozenset({"blue", "car"}))
    True
    >>> differ_by_substitution(frozenset({"red", "car"}), frozenset({"red", "fast", "car"}))
    False
    >>> differ_by_substitution(frozenset({"ferrowell", "mill"}), frozenset({"ferowell", "mill"}))
    False
    """
    only_a, only_b = a - b, b - a
    if not only_a or not only_b:
        return False
    lone_a = any(not any(is_variant(x, y) for y in only_b) for x in only_a)
    lone_b = any(not any(is_variant(x, y) for x in only_a) for y in only_b)
    return lone_a and lone_b
