"""Reciprocal rank fusion, and keeping the question's own best hits in the fused top ``k``.

A chunk scores ``sum(weight / (RRF_K + rank))`` over the rankings it appears in (rank
1-based), ties broken by its best single rank, then by chunk id, so the output is
deterministic (:func:`rrf_fuse`). Rewrites of a question can push its own best hits out of
the top ``k``; :func:`keep_own` puts them back, listing what made room (:class:`Dropped`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

RRF_K = 60
"""The usual reciprocal-rank-fusion constant (Cormack et al., 2009)."""


@dataclass(frozen=True)
class Dropped:
    """A chunk that fusion ranked in the top ``k`` but that was left out to keep one of the
    question's own best hits (see :func:`keep_own`)."""

    chunk_id: str
    fused_rank: int
    kept_for: str
    """The chunk of the question's own hits that took its place."""
    reason: str


def rrf_fuse(
    rankings: Sequence[Sequence[str]],
    *,
    k: int = RRF_K,
    weights: Sequence[float] | None = None,
) -> list[tuple[str, float]]:
    """Weighted reciprocal rank fusion: an id scores ``weight / (k + rank)`` in each ranking
    it is in.

    Cost: O(total length * log).

    Parameters
    ----------
    rankings : sequence of sequence of str
        Each a list of ids, best first; an id seen twice in one ranking counts at its first
        place.
    k : int, optional
        The rank offset (default :data:`RRF_K`, 60), 0 or more.
    weights : sequence of float, optional
        One non-negative weight per ranking (default 1 each).

    Returns
    -------
    list of (str, float)
        ``(id, score)`` pairs, best first: score descending, then best single rank
        ascending, then id ascending.

    Raises
    ------
    ValueError
        When ``k`` is not a non-negative integer, or ``weights`` has another length than
        ``rankings`` or a negative weight.

    Examples
    --------
    >>> from corpus import rrf_fuse
    >>> rrf_fuse([["a", "b"], ["b", "c"]], k=0)
    [('b', 1.5), ('a', 1.0), ('c', 0.5)]
    >>> rrf_fuse([["a", "b"], ["b", "c"]], k=0, weights=[2, 0])
    [('a', 2.0), ('b', 1.0), ('c', 0.0)]
    """
    if isinstance(k, bool) or not isinstance(k, int) or k < 0:
        raise ValueError(f"k must be a non-negative integer, got {k!r}")
    factors = [1.0] * len(rankings) if weights is None else [float(w) for w in weights]
    if len(factors) != len(rankings) or any(not w >= 0 for w in factors):
        raise ValueError(
            f"weights must be {len(rankings)} non-negative numbers, one per ranking, "
            f"got {weights!r}"
        )
    scores: dict[str, float] = {}
    for ranking, weight in zip(rankings, factors, strict=True):
        for item, rank in best_ranks([list(ranking)]).items():
            scores[item] = scores.get(item, 0.0) + weight / (k + rank)
    best = best_ranks([list(ranking) for ranking in rankings])
    return sorted(scores.items(), key=lambda pair: (-pair[1], best[pair[0]], pair[0]))


def keep_own(
    fused: Sequence[tuple[str, float]], own: Sequence[str], k: int
) -> tuple[list[tuple[str, float]], list[Dropped]]:
    """The top ``k`` of ``fused`` with the ids of ``own`` (the question's own best hits)
    among them, at most half of ``k``: an ``own`` id that the other rankings pushed below
    ``k`` takes the place of the lowest fused id that is not in ``own``; the result keeps
    the fused order. Half, so that the other rankings always keep room.

    Parameters
    ----------
    fused: ``(id, score)`` pairs, best first (:func:`rrf_fuse`).
    own: the ids that should stay, best first; the first ``k // 2`` are kept.
    k: how many to keep.

    Returns
    -------
    The kept pairs, and one :class:`Dropped` per id that made room, best fused rank first.

    Examples
    --------
    >>> kept, dropped = keep_own([("a", 3.0), ("b", 2.0), ("c", 1.0), ("d", 0.5)], ["d"], 2)
    >>> [chunk for chunk, _ in kept], dropped[0].chunk_id, dropped[0].kept_for
    (['a', 'd'], 'b', 'd')
    """
    rank = {chunk: number for number, (chunk, _) in enumerate(fused, 1)}
    must = [chunk for chunk in dict.fromkeys(own) if chunk in rank][: k // 2]
    missing = [chunk for chunk in must if rank[chunk] > k]
    top = [chunk for chunk, _ in fused[:k]]
    others = [chunk for chunk in top if chunk not in must]
    out = others[len(others) - len(missing) :] if missing else []
    dropped = [
        Dropped(
            chunk_id=gone,
            fused_rank=rank[gone],
            kept_for=kept,
            reason=(
                f"fused rank {rank[gone]} of the top {k}: it made room for {kept}, the "
                f"question's own hit {must.index(kept) + 1}, which the other rankings had "
                f"pushed to fused rank {rank[kept]}"
            ),
        )
        for gone, kept in zip(out, missing, strict=True)
    ]
    keep = set(top) - set(out) | set(missing)
    return [pair for pair in fused if pair[0] in keep], dropped


def best_ranks(rankings: list[list[str]]) -> dict[str, int]:
    """Each id's best (smallest, 1-based) rank in any of ``rankings``. O(total length).

    Parameters
    ----------
    rankings : list of list of str
        Each a list of ids, best first.

    Returns
    -------
    dict of str to int
        The ids in order of first appearance, each with its best rank.

    Examples
    --------
    >>> best_ranks([["a", "b", "a"], ["b", "c"]])
    {'a': 1, 'b': 1, 'c': 2}
    """
    best: dict[str, int] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking, 1):
            best[item] = min(best.get(item, rank), rank)
    return best
