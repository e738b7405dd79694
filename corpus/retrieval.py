"""Hybrid retrieval: BM25 keyword lists and dense lists, fused by reciprocal rank fusion.

For each query (the raw question and up to three variants, e.g. an LLM's rewrites) the index
gives two rankings of its chunks (:mod:`corpus.rankings`), each :data:`DEFAULT_DEPTH` long at
most: keyword (BM25) and, when asked for (``dense``; off by default, as in ``logic-graph
search``), the index has a vector for every chunk, the same embedder is installed and
sqlite-vec can be loaded, dense. All rankings are fused by reciprocal rank
fusion (:func:`rrf_fuse`), and the question's own best hits stay in the top ``k``
(:func:`keep_own`; both in :mod:`corpus.fusion`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from corpus.embed import Embedder
from corpus.entities import entity_ranking
from corpus.fusion import RRF_K as RRF_K
from corpus.fusion import Dropped as Dropped
from corpus.fusion import best_ranks
from corpus.fusion import keep_own as keep_own
from corpus.fusion import rrf_fuse as rrf_fuse
from corpus.hits import Hit as Hit
from corpus.hits import load_hits
from corpus.index import QueryGuard, open_index, read_meta
from corpus.index_pin import PinnedIndex
from corpus.rankings import COMMON_TERM_MIN as COMMON_TERM_MIN
from corpus.rankings import COMMON_TERM_SHARE as COMMON_TERM_SHARE
from corpus.rankings import DENSE_CANDIDATES as DENSE_CANDIDATES
from corpus.rankings import EXACT_DENSE_LIMIT as EXACT_DENSE_LIMIT
from corpus.rankings import MAX_QUERY_TERMS as MAX_QUERY_TERMS
from corpus.rankings import _dense_rankings
from corpus.rankings import dense_ranking as dense_ranking
from corpus.rankings import keyword_ranking as keyword_ranking
from corpus.rankings import query_terms as query_terms

DEFAULT_DEPTH = 50
"""How deep each single ranking goes before fusion (at least ``4 * k``)."""
MAX_VARIANTS = 3
MAX_K = 1000
KEEP_OWN = 3
"""The question's own best hits (its own rankings fused) that rewrites cannot push out."""
ENTITY_SEEDS = 5
"""How many fused hits seed the entity-graph ranking."""


@dataclass(frozen=True)
class Retrieval:
    """The result of :func:`retrieve`: hits best first, and how they were found.

    Parameters
    ----------
    hits : tuple of Hit
        The chunks, best first.
    queries : tuple of str
        The queries actually run (the question first, duplicates and blanks dropped).
    dense_used : bool
        Whether dense rankings were fused in.
    dense_note : str
        Why dense retrieval was not used, or ``""``.

    Examples
    --------
    >>> from corpus import Retrieval
    >>> found = Retrieval((), ("where is rack 7",), False, "dense retrieval was turned off")
    >>> found.hits, found.dense_used
    ((), False)
    """

    hits: tuple[Hit, ...]
    queries: tuple[str, ...]
    """The queries actually run (the question first, duplicates and blanks dropped)."""
    dense_used: bool
    dense_note: str
    """Why dense retrieval was not used, or ``""``."""
    dropped: tuple[Dropped, ...] = ()
    """Chunks of the fused top ``k`` left out for the question's own best hits."""


def retrieve(
    index_path: Path | str | PinnedIndex,
    question: str,
    variants: Sequence[str] = (),
    k: int = 8,
    *,
    dense: bool | Embedder = False,
    depth: int = DEFAULT_DEPTH,
    guard: QueryGuard | None = None,
    entities: float = 0.0,
    keep: int = KEEP_OWN,
    hyde: str | None = None,
) -> Retrieval:
    """The top ``k`` chunks for ``question`` and its ``variants``, their rankings fused by RRF.

    Parameters
    ----------
    index_path, guard : Path, str or PinnedIndex, and QueryGuard, optional
        An ingested index; the time limit and cancellation check of every query.
    question, variants, k, depth : str, sequence of str, int and int, optional
        The question (always searched), its variants (blanks and repeats are dropped); how
        many chunks (1 to :data:`MAX_K`), each ranking's length (at least ``4 * k``).
    dense, hyde : bool or Embedder, and str, optional
        Keyword only (False, the default: as ``logic-graph search``), dense rankings as well
        when available (True) or with this embedder; a passage whose dense ranking joins.
    entities, keep : float and int, optional
        The entity-graph ranking's weight (0: none); how many of the question's own best
        hits stay in the top ``k`` (at most ``k // 2``; the chunks they displace: ``dropped``).

    Returns
    -------
    Retrieval
        The hits, best first, the queries run, whether dense rankings were used and why not.

    Raises
    ------
    ValueError, CorpusIndexError
        Naming a bad argument; for an unusable index or a query the guard stopped.

    Examples
    --------
    >>> from corpus import retrieve, temporary_index
    >>> texts = {
    ...     "guide.md": "Rack 7 stands in the north hall.",
    ...     "moves.md": "Rack 9 moved to the south hall in May.",
    ... }
    >>> with temporary_index(texts, dense=False) as index:
    ...     found = retrieve(index, "Where is rack 7?", ["rack 7 hall", " "], k=2, dense=False)
    >>> found.queries
    ('Where is rack 7?', 'rack 7 hall')
    >>> [hit.path for hit in found.hits]
    ['guide.md', 'moves.md']
    """
    queries = check_retrieval(question, variants, k, dense, depth, entities, keep, hyde)
    with searching(index_path, k, depth, dense, guard) as searcher:
        asked = searcher.asked(queries, hyde)
        fused, graph = searcher.fuse(asked, entities=entities)
        kept, dropped = keep_own(fused, own_best(asked[0], keep), k)
        hits = tuple(searcher.load_hits(kept, asked, [graph]))
        return Retrieval(hits, tuple(queries), *searcher.dense_state, tuple(dropped))


def check_retrieval(
    question: object,
    variants: object,
    k: object,
    dense: object,
    depth: object,
    entities: object,
    keep: object,
    hyde: object,
) -> list[str]:
    """The queries to run (:func:`check_queries`), or ValueError naming the bad argument
    of :func:`retrieve` (``entities``, ``keep`` and ``hyde`` checked too)."""
    queries = check_queries(question, variants, k, dense, depth)
    check_weight("entities", entities)
    check_hyde(hyde)
    if isinstance(keep, bool) or not isinstance(keep, int) or not 0 <= keep <= MAX_K:
        raise ValueError(f"keep must be an integer from 0 to {MAX_K}, got {keep!r}")
    return queries


@contextmanager
def searching(
    index_path: Path | str | PinnedIndex,
    k: int,
    depth: int,
    dense: bool | Embedder,
    guard: QueryGuard | None,
) -> Iterator[Searcher]:
    """A :class:`Searcher` on the open index, its rankings ``max(depth, 4 * k)`` long, every
    query under ``guard`` (default: :data:`~corpus.index.QUERY_TIME_LIMIT_S`)."""
    guard = guard if guard is not None else QueryGuard()
    with open_index(index_path, guard) as conn:
        yield Searcher(conn, index_path, max(depth, 4 * k), dense, guard)


def own_best(own: Rankings, keep: int) -> list[str]:
    """The ``keep`` best chunks of the question's own rankings ``own``, fused alone (what
    :func:`keep_own` keeps in the top ``k``)."""
    return [chunk for chunk, _ in rrf_fuse(own.all)][:keep]


def check_weight(name: str, value: object) -> float:
    """``value`` as a weight (a number from 0 to 100), or ValueError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 100:
        raise ValueError(f"{name} must be a number from 0 to 100, got {value!r}")
    return float(value)


def check_hyde(passage: object) -> None:
    """Raise ValueError naming ``hyde`` unless ``passage`` is None or a non-blank string."""
    if passage is not None and (not isinstance(passage, str) or not passage.strip()):
        raise ValueError(f"hyde must be None or a non-empty passage, got {passage!r}")


@dataclass(frozen=True)
class Rankings:
    """The rankings of one query: keyword and dense (empty when dense is off), each a list
    of chunk ids, best first."""

    keyword: list[str]
    dense: list[str]

    @property
    def all(self) -> list[list[str]]:
        """The non-empty rankings."""
        return [ranking for ranking in (self.keyword, self.dense) if ranking]


class Searcher:
    """The rankings of the queries of one retrieval on one open index (see
    :func:`retrieve`; :mod:`corpus.multihop` runs several hops through one).
    ``dense_note`` says why dense rankings were not made, once a query has tried."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        index_path: Path | str | PinnedIndex,
        depth: int,
        dense: bool | Embedder,
        guard: QueryGuard,
    ) -> None:
        self.conn = conn
        self.index_path = index_path
        self.depth = depth
        self.dense = dense
        self.guard = guard
        self.meta = read_meta(conn)
        self.chunks = int(self.meta.get("chunk_count", "0"))
        self.dense_note = "dense retrieval was turned off for this search" if dense is False else ""

    def rankings(self, query: str) -> Rankings:
        """The keyword and (when available) dense rankings of ``query``."""
        keyword = keyword_ranking(self.conn, query, self.depth, chunks=self.chunks)
        if self.dense is False or self.dense_note:
            return Rankings(keyword, [])
        dense, self.dense_note = _dense_rankings(
            self.index_path, self.meta, [query], self.depth, self.dense, self.guard
        )
        return Rankings(keyword, dense[0] if dense else [])

    @property
    def dense_state(self) -> tuple[bool, str]:
        """Whether dense rankings were made, and ``dense_note`` (why not, or ``""``)."""
        return not self.dense_note, self.dense_note

    def asked(self, queries: Sequence[str], hyde: str | None) -> list[Rankings]:
        """The rankings of the question (``queries[0]``, first), of its variants and of the
        HyDE passage ``hyde`` (:meth:`passage_rankings`)."""
        return [*(self.rankings(query) for query in queries), *self.passage_rankings(hyde)]

    def passage_rankings(self, passage: str | None) -> list[Rankings]:
        """The dense ranking of a hypothetical answer ``passage`` (HyDE) and no keyword
        ranking; ``[]`` for no passage or when dense rankings are not available."""
        if passage is None or self.dense is False or self.dense_note:
            return []
        dense, self.dense_note = _dense_rankings(
            self.index_path,
            self.meta,
            [" ".join(passage.split())],
            self.depth,
            self.dense,
            self.guard,
        )
        return [Rankings([], dense[0])] if dense else []

    def entity_ranking(self, seeds: Sequence[str] = (), names: Sequence[str] = ()) -> list[str]:
        """The chunks that name the entities of ``seeds`` or ``names``
        (:func:`corpus.entities.entity_ranking`)."""
        return entity_ranking(self.conn, self.depth, seeds=seeds, names=names, chunks=self.chunks)

    def fuse(
        self,
        lists: Sequence[Rankings],
        *,
        entities: float = 0.0,
        seeds: int = ENTITY_SEEDS,
        names: Sequence[str] = (),
    ) -> tuple[list[tuple[str, float]], list[str]]:
        """Every ranking of ``lists`` fused, and the entity-graph ranking: with ``entities``
        > 0, that of the ``seeds`` best fused chunks and of ``names``, fused in again
        weighing ``entities`` (each other ranking weighs 1); else ``[]``."""
        flat = [ranking for item in lists for ranking in item.all]
        fused = rrf_fuse(flat)
        if entities <= 0:
            return fused, []
        graph = self.entity_ranking([c for c, _ in fused[:seeds]], names)
        return rrf_fuse([*flat, graph], weights=[*(1.0 for _ in flat), entities]), graph

    def text(self, chunk_id: str) -> str:
        """The text of one chunk (``""`` when the index has no such chunk)."""
        return self.texts([chunk_id]).get(chunk_id, "")

    def texts(self, chunk_ids: Sequence[str], *, headed: bool = False) -> dict[str, str]:
        """The text of each of ``chunk_ids`` that the index holds, by chunk id; ``headed``: its
        section trail first, on a line of its own (what the chunk is about where its text
        does not say: "Rack 8 is in hall C" under "Racks > Rack 8")."""
        ids = list(dict.fromkeys(chunk_ids))
        marks = ",".join("?" * len(ids))
        rows = self.conn.execute(
            f"SELECT chunk_id, section, text FROM chunks WHERE chunk_id IN ({marks})", ids
        )
        return {
            str(chunk): f"{section}\n{text}" if headed and section else str(text)
            for chunk, section, text in rows
        }

    def load_hits(
        self,
        fused: Sequence[tuple[str, float]],
        lists: Sequence[Rankings],
        graphs: Sequence[list[str]] = (),
    ) -> list[Hit]:
        """The :class:`Hit` of each fused chunk, with its best rank in the keyword and dense
        rankings of ``lists`` and in the entity-graph rankings ``graphs``."""
        return load_hits(
            self.conn,
            list(fused),
            (
                best_ranks([item.keyword for item in lists]),
                best_ranks([item.dense for item in lists]),
                best_ranks(list(graphs)),
            ),
        )


def search(
    index_path: Path | str, query: str, k: int = 8, *, dense: bool | Embedder = False
) -> list[Hit]:
    """The top ``k`` chunks for one query (keyword only unless ``dense``, see :func:`retrieve`).

    Parameters
    ----------
    index_path : Path or str
        An ingested index.
    query : str
        The text to search for.
    k : int, optional
        How many chunks, 1 to :data:`MAX_K` (default 8).
    dense : bool or Embedder, optional
        As for :func:`retrieve`.

    Returns
    -------
    list of Hit
        The chunks, best first.

    Raises
    ------
    ValueError, CorpusIndexError
        As :func:`retrieve` does.

    Examples
    --------
    >>> from corpus import search, temporary_index
    >>> with temporary_index({"guide.md": "Rack 7 is in the north hall."}, dense=False) as index:
    ...     [hit.text for hit in search(index, "north hall", k=3, dense=False)]
    ['Rack 7 is in the north hall.']
    >>> search(index, "  ")  # the query is refused before the index is opened
    Traceback (most recent call last):
    ...
    ValueError: question must be a non-empty string, got '  '
    """
    return list(retrieve(index_path, query, (), k, dense=dense).hits)


def check_queries(
    question: object, variants: object, k: object, dense: object, depth: object
) -> list[str]:
    """The queries to run (the question, then its distinct non-blank variants), or
    ValueError naming the bad argument (see :func:`retrieve`)."""
    if not isinstance(question, str) or not question.strip():
        raise ValueError(f"question must be a non-empty string, got {question!r}")
    if isinstance(variants, str) or not isinstance(variants, Sequence):
        raise ValueError(f"variants must be a list of strings, got {type(variants).__name__}")
    if len(variants) > MAX_VARIANTS:
        raise ValueError(f"variants has {len(variants)} items, at most {MAX_VARIANTS} allowed")
    for index, variant in enumerate(variants):
        if not isinstance(variant, str):
            raise ValueError(f"variants[{index}] must be a string, got {variant!r}")
    for name, value, top in (("k", k, MAX_K), ("depth", depth, 10 * MAX_K)):
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= top:
            raise ValueError(f"{name} must be an integer from 1 to {top}, got {value!r}")
    if not isinstance(dense, bool) and not isinstance(dense, Embedder):
        raise ValueError(f"dense must be a bool or an Embedder, got {type(dense).__name__}")
    queries: list[str] = []
    for query in (question, *variants):
        cleaned = " ".join(query.split())
        if cleaned and cleaned.casefold() not in {q.casefold() for q in queries}:
            queries.append(cleaned)
    return queries
