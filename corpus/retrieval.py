"""Hybrid retrieval: BM25 keyword lists and dense lists, fused by reciprocal rank fusion.

For each query (the raw question and up to three variants, e.g. an LLM's rewrites) the index
gives two rankings of its chunks, each :data:`DEFAULT_DEPTH` long at most:

- **keyword**: FTS5's BM25 over the chunk text (weight 1) and heading trail (weight 0.5). The
  query is cut into words, stopwords dropped, and the words OR-ed, so any text is a valid
  query (no FTS5 syntax reaches SQLite);
- **dense** (when the index has a vector for every chunk, the same embedder is installed and
  sqlite-vec can be loaded): cosine distance between the query's and the chunks' e5 vectors.
  Up to :data:`EXACT_DENSE_LIMIT` vectors every distance is computed; above it a Hamming scan
  over the vectors' sign bits keeps :data:`DENSE_CANDIDATES` candidates and exact cosine
  distances rank those (binary quantisation with rescoring).

All rankings are fused with :func:`rrf_fuse`: a chunk scores ``sum(1 / (RRF_K + rank))`` over
the rankings it appears in (rank 1-based), ties broken by its best single rank, then by chunk
id, so the output is deterministic.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from corpus.embed import Embedder, connect_vec, load_embedder, sign_bits
from corpus.entities import entity_ranking
from corpus.index import CorpusIndexError, QueryGuard, open_index, read_meta
from corpus.index_pin import PinnedIndex
from corpus.words import STOPWORDS

RRF_K = 60
"""The usual reciprocal-rank-fusion constant (Cormack et al., 2009)."""
DEFAULT_DEPTH = 50
"""How deep each single ranking goes before fusion (at least ``4 * k``)."""
EXACT_DENSE_LIMIT = 20_000
DENSE_CANDIDATES = 400
MAX_VARIANTS = 3
MAX_K = 1000
MAX_QUERY_TERMS = 32
KEEP_OWN = 3
"""The question's own best hits (its own rankings fused) that rewrites cannot push out."""
ENTITY_SEEDS = 5
"""How many fused hits seed the entity-graph ranking."""
COMMON_TERM_SHARE = 0.2
COMMON_TERM_MIN = 2000
"""A query word in more than this share of the chunks, and in more than this many, is
dropped from the keyword query (see :func:`keyword_ranking`)."""

_QUESTION_WORDS = frozenset(
    {"what", "which", "who", "whom", "whose", "where", "when", "why", "how", "does", "did", "do"}
)
_TERM = re.compile(r"[^\W_]+")


@dataclass(frozen=True)
class Hit:
    """One retrieved chunk.

    Parameters
    ----------
    chunk_id : str
        ``<relative path>#p<page>c<number>``: stable across re-ingests of an unchanged file.
    path : str
        The file, relative to the ingested folder.
    page, start, end : int
        The 1-based page, and the character offsets of the chunk in its text.
    section : str
        The heading trail above the chunk (``""``: none).
    version : str or None
        The version the file's name carries (``guide-v2.md``: ``"2"``), if any.
    text : str
        The chunk's text.
    score : float
        The fused RRF score (higher is better).
    keyword_rank, dense_rank : int or None
        The chunk's best rank in any keyword or dense ranking (1 = top), None if in none.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from corpus import ingest, search
    >>> tmp = tempfile.TemporaryDirectory()
    >>> docs, index = Path(tmp.name, "docs"), Path(tmp.name, "docs.sqlite")
    >>> docs.mkdir()
    >>> _ = (docs / "guide-v2.md").write_text("# Site\\n\\nRack 7 stands in the north hall.")
    >>> _ = ingest(docs, index, dense=False)
    >>> (hit,) = search(index, "rack 7", k=1, dense=False)
    >>> hit.chunk_id, hit.section, hit.version, hit.keyword_rank, hit.dense_rank
    ('guide-v2.md#p1c1', 'Site', '2', 1, None)
    >>> tmp.cleanup()
    """

    chunk_id: str
    """``<relative path>#p<page>c<number>``: stable across re-ingests of an unchanged file."""
    path: str
    """The file, relative to the ingested folder."""
    page: int
    start: int
    end: int
    """Character offsets of the chunk in its page's text."""
    section: str
    version: str | None
    text: str
    score: float
    """The fused RRF score (higher is better)."""
    keyword_rank: int | None
    """Best rank of the chunk in any keyword ranking (1 = top), None if in none."""
    dense_rank: int | None
    """Best rank of the chunk in any dense ranking, None if in none (or dense was off)."""
    entity_rank: int | None = None
    """Best rank of the chunk in an entity-graph ranking, None if in none (or it was off)."""


@dataclass(frozen=True)
class Dropped:
    """A chunk that fusion ranked in the top ``k`` but that was left out to keep one of the
    question's own best hits (see :func:`keep_own`)."""

    chunk_id: str
    fused_rank: int
    kept_for: str
    """The chunk of the question's own hits that took its place."""
    reason: str


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


def query_terms(query: str) -> list[str]:
    """The search words of ``query``: lower-cased words, stopwords and question words dropped
    (kept when nothing else is left), each once, at most :data:`MAX_QUERY_TERMS`.
    Cost: O(len(query))."""
    if not isinstance(query, str):
        raise ValueError(f"query must be a string, got {type(query).__name__}")
    words = list(dict.fromkeys(word.casefold() for word in _TERM.findall(query)))
    content = [w for w in words if w not in STOPWORDS and w not in _QUESTION_WORDS]
    return (content or words)[:MAX_QUERY_TERMS]


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
    best: dict[str, int] = {}
    for ranking, weight in zip(rankings, factors, strict=True):
        seen: set[str] = set()
        for rank, item in enumerate(ranking, 1):
            if item in seen:
                continue
            seen.add(item)
            scores[item] = scores.get(item, 0.0) + weight / (k + rank)
            best[item] = min(best.get(item, rank), rank)
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


def keyword_ranking(
    conn: sqlite3.Connection, query: str, depth: int, *, chunks: int = 0
) -> list[str]:
    """Chunk ids matching ``query`` by BM25, best first, at most ``depth``.

    ``chunks`` is the index's chunk count: in a large index a word found in more than
    :data:`COMMON_TERM_SHARE` of the chunks (and at least :data:`COMMON_TERM_MIN` of them) is
    left out of the query, unless every word is that common (then all are kept).
    Such a word adds little to BM25 (its idf is small) but makes SQLite score most of the
    index: docs/corpus.md gives the measurement. Ties are broken by row, then by chunk id.
    Cost: one bounded count per word (at most the cap of rows each), then one FTS5 query,
    O(matching rows)."""
    terms = query_terms(query)
    cap = max(int(COMMON_TERM_SHARE * chunks), COMMON_TERM_MIN)
    if chunks > cap and len(terms) > 1:
        counts = [
            conn.execute(
                "SELECT COUNT(*) FROM (SELECT rowid FROM chunk_fts WHERE chunk_fts MATCH ? "
                "LIMIT ?)",
                (f'"{term}"', cap + 1),
            ).fetchone()[0]
            for term in terms
        ]
        rare = [term for term, count in zip(terms, counts, strict=True) if count <= cap]
        terms = rare or terms
    if not terms:
        return []
    rows = conn.execute(
        "SELECT chunks.chunk_id FROM (SELECT rowid, bm25(chunk_fts, 1.0, 0.5) AS score "
        "FROM chunk_fts WHERE chunk_fts MATCH ? ORDER BY score, rowid LIMIT ?) AS found "
        "JOIN chunks ON chunks.id = found.rowid ORDER BY found.score, chunks.chunk_id",
        (" OR ".join(f'"{term}"' for term in terms), depth),
    ).fetchall()
    return [row[0] for row in rows]


def dense_ranking(
    vconn: Any,
    query_vector: bytes,
    depth: int,
    *,
    vectors: int,
    exact_limit: int = EXACT_DENSE_LIMIT,
    candidates: int = DENSE_CANDIDATES,
) -> list[str]:
    """Chunk ids nearest to ``query_vector`` by cosine distance, at most ``depth``, ties by
    chunk id. ``vconn`` must have sqlite-vec loaded; ``vectors`` is how many the index holds.
    Exact over all vectors up to ``exact_limit`` of them; else Hamming candidates on the
    sign bits, rescored exactly.
    Cost: O(vectors * dim) exact, O(vectors * dim / 32 + candidates * dim) otherwise."""
    if vectors <= exact_limit:
        rows = vconn.execute(
            "SELECT chunks.chunk_id FROM chunk_vectors JOIN chunks ON chunks.id = chunk "
            "ORDER BY vec_distance_cosine(embedding, ?), chunks.chunk_id LIMIT ?",
            (query_vector, depth),
        ).fetchall()
        return [row[0] for row in rows]
    pool = [
        row[0]
        for row in vconn.execute(
            "SELECT chunk FROM chunk_bits "
            "ORDER BY vec_distance_hamming(vec_bit(bits), vec_bit(?)), chunk LIMIT ?",
            (sign_bits(query_vector), max(candidates, depth)),
        )
    ]
    marks = ",".join("?" * len(pool))
    rows = vconn.execute(
        "SELECT chunks.chunk_id FROM chunk_vectors JOIN chunks ON chunks.id = chunk "
        f"WHERE chunk IN ({marks}) "
        "ORDER BY vec_distance_cosine(embedding, ?), chunks.chunk_id LIMIT ?",
        (*pool, query_vector, depth),
    ).fetchall()
    return [row[0] for row in rows]


def retrieve(
    index_path: Path | str | PinnedIndex,
    question: str,
    variants: Sequence[str] = (),
    k: int = 8,
    *,
    dense: bool | Embedder = True,
    depth: int = DEFAULT_DEPTH,
    guard: QueryGuard | None = None,
    entities: float = 0.0,
    keep: int = KEEP_OWN,
    hyde: str | None = None,
) -> Retrieval:
    """The top ``k`` chunks for ``question`` and up to :data:`MAX_VARIANTS` ``variants``.

    Each query is ranked by keywords (BM25) and, when the index and the extras allow, by
    dense vectors; the rankings are fused by :func:`rrf_fuse`. Cost: one FTS5 query per
    query plus, with dense, one embedding and one vector scan each.

    Parameters
    ----------
    index_path : Path, str or PinnedIndex
        An ingested index.
    question : str
        The raw question (always searched).
    variants : sequence of str, optional
        Query variants; blank ones and repeats are dropped, so an unusable rewrite falls
        back to the question alone.
    k : int, optional
        How many chunks, 1 to :data:`MAX_K` (default 8).
    dense : bool or Embedder, optional
        True (default) to add dense rankings when the index and the extras allow (queries
        embedded with the backend the index was built with, whatever
        ``$LOGIC_GRAPH_EMBEDDER`` says), False for keyword-only, or the :class:`Embedder`
        the index was built with.
    depth : int, optional
        Length of each single ranking (raised to ``4 * k`` when smaller).
    guard : QueryGuard, optional
        The time limit and cancellation check for every query of this retrieval (default:
        :data:`~corpus.index.QUERY_TIME_LIMIT_S`, no cancellation).
    entities : float, optional
        The weight of the entity-graph ranking (:func:`corpus.entities.entity_ranking`,
        seeded with the :data:`ENTITY_SEEDS` best fused chunks) in a second fusion; 0 (the
        default) for none. Costs one entity-graph walk.
    keep : int, optional
        How many of the question's own best hits (its keyword and dense rankings fused) stay
        in the top ``k`` whatever the variants rank (default :data:`KEEP_OWN`; 0 to
        :data:`MAX_K`, at most ``k // 2`` apply). The chunks they displace are listed in
        :attr:`Retrieval.dropped`.
    hyde : str, optional
        A hypothetical answer passage (HyDE): its dense ranking, and no keyword ranking, joins
        the fusion like a variant's. Nothing when dense rankings are not available.

    Returns
    -------
    Retrieval
        The hits, best first, the queries run and whether dense rankings were used.

    Raises
    ------
    ValueError
        Naming a bad argument.
    CorpusIndexError
        For an unusable index, malformed dense vectors, or a query the guard stopped.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from corpus import ingest, retrieve
    >>> tmp = tempfile.TemporaryDirectory()
    >>> docs, index = Path(tmp.name, "docs"), Path(tmp.name, "docs.sqlite")
    >>> docs.mkdir()
    >>> _ = (docs / "guide.md").write_text("Rack 7 stands in the north hall.")
    >>> _ = (docs / "moves.md").write_text("Rack 9 moved to the south hall in May.")
    >>> _ = ingest(docs, index, dense=False)
    >>> found = retrieve(index, "Where is rack 7?", ["rack 7 hall", " "], k=2, dense=False)
    >>> found.queries
    ('Where is rack 7?', 'rack 7 hall')
    >>> [hit.path for hit in found.hits]
    ['guide.md', 'moves.md']
    >>> tmp.cleanup()
    """
    queries = check_queries(question, variants, k, dense, depth)
    check_weight("entities", entities)
    check_hyde(hyde)
    if isinstance(keep, bool) or not isinstance(keep, int) or not 0 <= keep <= MAX_K:
        raise ValueError(f"keep must be an integer from 0 to {MAX_K}, got {keep!r}")
    guard = guard if guard is not None else QueryGuard()
    with open_index(index_path, guard) as conn:
        searcher = Searcher(conn, index_path, max(depth, 4 * k), dense, guard)
        own = searcher.rankings(queries[0])
        lists = [own, *(searcher.rankings(query) for query in queries[1:])]
        lists += searcher.passage_rankings(hyde)
        fused, graph = searcher.fuse(lists, entities=entities)
        kept, dropped = keep_own(fused, [c for c, _ in rrf_fuse(own.all)][:keep], k)
        hits = searcher.load_hits(kept, lists, [graph])
    return Retrieval(
        hits=tuple(hits),
        queries=tuple(queries),
        dense_used=not searcher.dense_note,
        dense_note=searcher.dense_note,
        dropped=tuple(dropped),
    )


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
        row = self.conn.execute("SELECT text FROM chunks WHERE chunk_id = ?", (chunk_id,))
        found = row.fetchone()
        return str(found[0]) if found else ""

    def load_hits(
        self,
        fused: Sequence[tuple[str, float]],
        lists: Sequence[Rankings],
        graphs: Sequence[list[str]] = (),
    ) -> list[Hit]:
        """The :class:`Hit` of each fused chunk, with its best rank in the keyword and dense
        rankings of ``lists`` and in the entity-graph rankings ``graphs``."""
        return _load_hits(
            self.conn,
            list(fused),
            (
                _best_ranks([item.keyword for item in lists]),
                _best_ranks([item.dense for item in lists]),
                _best_ranks(list(graphs)),
            ),
        )


def search(
    index_path: Path | str, query: str, k: int = 8, *, dense: bool | Embedder = True
) -> list[Hit]:
    """The top ``k`` chunks for one query (hybrid when available, see :func:`retrieve`).

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
    >>> import tempfile
    >>> from pathlib import Path
    >>> from corpus import ingest, search
    >>> tmp = tempfile.TemporaryDirectory()
    >>> docs, index = Path(tmp.name, "docs"), Path(tmp.name, "docs.sqlite")
    >>> docs.mkdir()
    >>> _ = (docs / "guide.md").write_text("Rack 7 stands in the north hall.")
    >>> _ = ingest(docs, index, dense=False)
    >>> [hit.text for hit in search(index, "north hall", k=3, dense=False)]
    ['Rack 7 stands in the north hall.']
    >>> search(index, "  ")
    Traceback (most recent call last):
    ...
    ValueError: question must be a non-empty string, got '  '
    >>> tmp.cleanup()
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


def _dense_rankings(
    index_path: Path | str | PinnedIndex,
    meta: dict[str, str],
    queries: list[str],
    depth: int,
    dense: bool | Embedder,
    guard: QueryGuard,
) -> tuple[list[list[str]], str]:
    """Dense rankings for ``queries`` and ``""``, or ``[]`` and why dense was not used.
    Raises :class:`CorpusIndexError` when the vectors cannot be compared (a blob of the
    wrong size) or ``guard`` stopped the scan."""
    if meta.get("dense_note"):
        return [], meta["dense_note"]
    if not meta.get("dense_model"):
        return [], "the index has no dense vectors (ingested without the corpus extras)"
    if isinstance(dense, bool):
        embedder, note = load_embedder(meta["dense_model"])  # the index's own backend
        if embedder is None:
            return [], note
    else:
        embedder = dense
    if embedder.name != meta["dense_model"]:
        return [], (
            f"the index was embedded with {meta['dense_model']}, not {embedder.name}; "
            "re-ingest to switch"
        )
    if isinstance(index_path, PinnedIndex):
        vconn, note = connect_vec(index_path.path, index_path.connect)
    else:
        vconn, note = connect_vec(index_path)
    if vconn is None:
        return [], note
    guard.install(vconn)
    try:
        vectors = int(meta.get("vector_count", "0"))
        rankings = [
            dense_ranking(vconn, embedder.query(query), depth, vectors=vectors) for query in queries
        ]
        return rankings, ""
    except vconn.Error as exc:  # pysqlite3 has its own exception classes
        reason = guard.reason or f"its dense vectors are malformed ({exc})"
        raise CorpusIndexError(f"index {str(index_path)!r}: {reason}") from exc
    finally:
        vconn.close()


def _best_ranks(rankings: list[list[str]]) -> dict[str, int]:
    best: dict[str, int] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking, 1):
            best[item] = min(best.get(item, rank), rank)
    return best


def _load_hits(
    conn: sqlite3.Connection,
    fused: list[tuple[str, float]],
    best_rank: tuple[dict[str, int], dict[str, int], dict[str, int]],
) -> list[Hit]:
    if not fused:
        return []
    marks = ",".join("?" * len(fused))
    rows = {
        row[0]: row
        for row in conn.execute(
            "SELECT c.chunk_id, f.path, c.page, c.start_char, c.end_char, c.section, "
            "f.version, c.text FROM chunks c JOIN files f ON f.id = c.file_id "
            f"WHERE c.chunk_id IN ({marks})",
            [chunk for chunk, _ in fused],
        )
    }
    keyword, dense, entity = best_rank
    return [
        Hit(
            chunk_id=chunk,
            path=rows[chunk][1],
            page=rows[chunk][2],
            start=rows[chunk][3],
            end=rows[chunk][4],
            section=rows[chunk][5],
            version=rows[chunk][6],
            text=rows[chunk][7],
            score=score,
            keyword_rank=keyword.get(chunk),
            dense_rank=dense.get(chunk),
            entity_rank=entity.get(chunk),
        )
        for chunk, score in fused
    ]
