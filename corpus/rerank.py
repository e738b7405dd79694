"""Reranking: a stage between fusion and packing that reorders a pool of retrieved chunks by
their relevance to the question (issue 36).

Two rerankers share :func:`apply_order`, which turns an ordering of the pool into hits and
refuses an invalid one (the fused order stands, and the reason is returned):

- a **cross-encoder** the user has on disk (:func:`load_cross_encoder`, through the optional
  ``corpus-rerank`` extra; nothing is downloaded), or any other :class:`Scorer`, scores each
  ``(question, chunk)`` pair and :func:`rerank_hits` sorts the pool by score;
- an **LLM reranker** (:mod:`orchestrator.loop.corpus_rerank`) asks a model for the ordering,
  one call per pool.

The pool is :func:`pool_size` chunks: fusion's top ``POOL_FACTOR * k``; the reranked top ``k``
are kept.
"""

from __future__ import annotations

import importlib.util
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from corpus.retrieval import MAX_K, Hit

POOL_FACTOR = 2
"""A reranked retrieval draws this many times ``k`` chunks from fusion, and keeps ``k``."""
RERANK_EXTRA = "corpus-rerank"
RERANK_HINT = f"pip install 'logic-graph[{RERANK_EXTRA}]'"


class RerankerUnavailable(RuntimeError):
    """The cross-encoder cannot be used: its library is not installed (the message names the
    extra) or the model at the path cannot be loaded.

    Examples
    --------
    >>> str(RerankerUnavailable("needs the extra"))
    'needs the extra'
    """


@runtime_checkable
class Scorer(Protocol):
    """What reranks a pool: a relevance score per ``(query, text)`` pair, higher is better.

    Examples
    --------
    >>> class Overlap:
    ...     def scores(self, query, texts):
    ...         return [float(len(set(query.split()) & set(t.split()))) for t in texts]
    >>> isinstance(Overlap(), Scorer)
    True
    """

    def scores(self, query: str, texts: Sequence[str]) -> list[float]:
        """One score per text of ``texts``, in their order.

        Parameters
        ----------
        query : str
            The question.
        texts : sequence of str
            The chunks' texts.

        Returns
        -------
        list of float
            ``len(texts)`` scores, higher is more relevant.

        Raises
        ------
        RuntimeError
            When the model fails.

        Examples
        --------
        >>> class Length:
        ...     def scores(self, query, texts):
        ...         return [float(len(t)) for t in texts]
        >>> Length().scores("q", ["ab", "a"])
        [2.0, 1.0]
        """
        ...


def pool_size(k: int) -> int:
    """How many fused chunks a reranked retrieval of ``k`` draws.

    Parameters
    ----------
    k : int
        Chunks kept after reranking, 1 to :data:`~corpus.retrieval.MAX_K`.

    Returns
    -------
    int
        ``POOL_FACTOR * k``, at most :data:`~corpus.retrieval.MAX_K`.

    Raises
    ------
    ValueError
        When ``k`` is out of range.

    Examples
    --------
    >>> pool_size(8)
    16
    """
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_K:
        raise ValueError(f"k must be an integer from 1 to {MAX_K}, got {k!r}")
    return min(POOL_FACTOR * k, MAX_K)


def apply_order(hits: Sequence[Hit], order: Sequence[str]) -> tuple[list[Hit], str | None]:
    """``hits`` in ``order`` (chunk ids), or in their own order with the reason ``order`` was
    refused: it must hold every chunk id of ``hits`` exactly once, and no other.

    Parameters
    ----------
    hits : sequence of Hit
        The pool, in fused order.
    order : sequence of str
        The reranker's ordering, best first.

    Returns
    -------
    (list of Hit, str or None)
        The reordered hits and None, or the fused order and why ``order`` was not used.

    Raises
    ------
    ValueError
        When ``hits`` repeats a chunk id (a bad ``order`` is not an error: it is the returned
        reason).

    Examples
    --------
    >>> from corpus.retrieval import Hit
    >>> pool = [Hit(c, "f.md", 1, 0, 1, "", None, "t", 0.0, 1, None) for c in ("a", "b")]
    >>> [h.chunk_id for h in apply_order(pool, ["b", "a"])[0]]
    ['b', 'a']
    >>> apply_order(pool, ["b", "b"])[1]
    "the ordering repeats 'b'"
    """
    by_id = {hit.chunk_id: hit for hit in hits}
    if len(by_id) != len(hits):
        raise ValueError("hits must not repeat a chunk id")
    problem = _order_problem(list(by_id), order)
    if problem is not None:
        return list(hits), problem
    return [by_id[chunk] for chunk in order], None


def _order_problem(known: list[str], order: Sequence[str]) -> str | None:
    """Why ``order`` is not an ordering of ``known``, or None."""
    seen: set[str] = set()
    for chunk in order:
        if chunk not in known:
            return f"the ordering names {chunk!r}, which is not in the pool"
        if chunk in seen:
            return f"the ordering repeats {chunk!r}"
        seen.add(chunk)
    missing = [chunk for chunk in known if chunk not in seen]
    if missing:
        return (
            f"the ordering leaves out {len(missing)} of the {len(known)} chunks "
            f"({missing[0]!r} first)"
        )
    return None


def rerank_hits(query: str, hits: Sequence[Hit], scorer: Scorer) -> tuple[list[Hit], str | None]:
    """``hits`` sorted by ``scorer``'s score for ``(query, hit.text)``, best first, ties in
    fused order; the fused order and the reason when the scorer fails or returns other than
    one finite number per hit.

    Parameters
    ----------
    query : str
        The question.
    hits : sequence of Hit
        The pool, in fused order.
    scorer : Scorer
        The cross-encoder, or any object with ``scores(query, texts)``.

    Returns
    -------
    (list of Hit, str or None)
        As :func:`apply_order`.

    Raises
    ------
    ValueError
        When ``scorer`` has no ``scores`` method.

    Examples
    --------
    >>> from corpus.retrieval import Hit
    >>> pool = [Hit(c, "f.md", 1, 0, 1, "", None, t, 0.0, 1, None)
    ...         for c, t in (("a", "rack 9 hall"), ("b", "rack 7 is in hall B"))]
    >>> class Overlap:
    ...     def scores(self, query, texts):
    ...         return [float(len(set(query.split()) & set(t.split()))) for t in texts]
    >>> [h.chunk_id for h in rerank_hits("rack 7 hall", pool, Overlap())[0]]
    ['b', 'a']
    """
    if not isinstance(scorer, Scorer):
        raise ValueError(f"scorer must have a scores(query, texts) method, got {scorer!r}")
    try:
        scores = [float(s) for s in scorer.scores(query, [hit.text for hit in hits])]
    except (RuntimeError, ValueError, TypeError) as exc:
        return list(hits), f"the reranker failed: {type(exc).__name__}: {exc}"
    if len(scores) != len(hits) or not all(math.isfinite(s) for s in scores):
        return list(hits), (
            f"the reranker gave {len(scores)} scores for {len(hits)} chunks, or a score that "
            "is not a finite number"
        )
    ranked = sorted(range(len(hits)), key=lambda i: (-scores[i], i))
    return apply_order(hits, [hits[i].chunk_id for i in ranked])


def check_cross_encoder(path: Path | str) -> Path:
    """``path`` as a folder a cross-encoder can be loaded from, checked without loading it:
    the folder exists and the library of the ``corpus-rerank`` extra is installed.

    Parameters
    ----------
    path : Path or str
        The model's folder.

    Returns
    -------
    Path
        The folder.

    Raises
    ------
    ValueError
        When ``path`` is not a folder (the message names ``reranker``).
    RerankerUnavailable
        When ``sentence-transformers`` is not installed (the message names the extra).

    Examples
    --------
    >>> try:
    ...     check_cross_encoder("/no/such/model")
    ... except ValueError as exc:
    ...     print(exc)
    reranker '/no/such/model' is not a folder holding a cross-encoder model
    """
    folder = Path(path)
    if not folder.is_dir():
        raise ValueError(f"reranker {str(path)!r} is not a folder holding a cross-encoder model")
    if importlib.util.find_spec("sentence_transformers") is None:
        raise RerankerUnavailable(
            f"the cross-encoder reranker needs the optional '{RERANK_EXTRA}' extra "
            f"(sentence-transformers): {RERANK_HINT}"
        )
    return folder


def load_cross_encoder(path: Path | str) -> Scorer:
    """The cross-encoder model in the folder ``path``, as a :class:`Scorer`; nothing is
    downloaded (the model is loaded with ``local_files_only``).

    Parameters
    ----------
    path : Path or str
        A folder holding a sentence-transformers cross-encoder (``config.json``, weights,
        tokenizer), for example one saved with ``CrossEncoder.save``.

    Returns
    -------
    Scorer
        Scores ``(query, text)`` pairs with the model.

    Raises
    ------
    ValueError
        When ``path`` is not a folder (checked first, by :func:`check_cross_encoder`).
    RerankerUnavailable
        When ``sentence-transformers`` is not installed (the message names the
        ``corpus-rerank`` extra), or the model cannot be loaded from ``path``.

    Examples
    --------
    A folder that holds no model (or no ``sentence-transformers`` to load one with):

    >>> import tempfile
    >>> from corpus import RerankerUnavailable
    >>> with tempfile.TemporaryDirectory() as empty:
    ...     try:
    ...         load_cross_encoder(empty)
    ...     except RerankerUnavailable as exc:
    ...         print(f"no reranker: {exc}")
    no reranker: ...
    """
    folder = check_cross_encoder(path)
    from sentence_transformers import CrossEncoder

    try:
        model = CrossEncoder(str(folder), local_files_only=True)
    except (OSError, ValueError, RuntimeError) as exc:
        raise RerankerUnavailable(
            f"reranker {str(path)!r}: the cross-encoder cannot be loaded from it: {exc}"
        ) from exc
    return _CrossEncoderScorer(model)


class _CrossEncoderScorer:
    """A loaded sentence-transformers ``CrossEncoder`` as a :class:`Scorer`."""

    def __init__(self, model: Any) -> None:
        self._model = model

    def scores(self, query: str, texts: Sequence[str]) -> list[float]:
        return [float(s) for s in self._model.predict([(query, text) for text in texts])]
