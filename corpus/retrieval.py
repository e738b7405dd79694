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


def query_terms(query: str) -> list[str]:
    """The search words of ``query``: lower-cased words, stopwords and question words dropped
    (kept when nothing else is left), each once, at most :data:`MAX_QUERY_TERMS`.
    Cost: O(len(query))."""
    if not isinstance(query, str):
        raise ValueError(f"query must be a string, got {type(query).__name__}")
    words = list(dict.fromkeys(word.casefold() for word in _TERM.findall(query)))
    content = [w for w in words if w not in STOPWORDS and w not in _QUESTION_WORDS]
    return (content or words)[:MAX_QUERY_TERMS]


def rrf_fuse(rankings: Sequence[Sequence[str]], *, k: int = RRF_K) -> list[tuple[str, float]]:
    """Reciprocal rank fusion: an id scores ``1 / (k + rank)`` in each ranking it is in.

    Cost: O(total length * log).

    Parameters
    ----------
    rankings : sequence of sequence of str
        Each a list of ids, best first; an id seen twice in one ranking counts at its first
        place.
    k : int, optional
        The rank offset (default :data:`RRF_K`, 60), 0 or more.

    Returns
    -------
    list of (str, float)
        ``(id, score)`` pairs, best first: score descending, then best single rank
        ascending, then id ascending.

    Raises
    ------
    ValueError
        When ``k`` is not a non-negative integer.

    Examples
    --------
    >>> from corpus import rrf_fuse
    >>> rrf_fuse([["a", "b"], ["b", "c"]], k=0)
    [('b', 1.5), ('a', 1.0), ('c', 0.5)]
    """
    if isinstance(k, bool) or not isinstance(k, int) or k < 0:
        raise ValueError(f"k must be a non-negative integer, got {k!r}")
    scores: dict[str, float] = {}
    best: dict[str, int] = {}
    for ranking in rankings:
        seen: set[str] = set()
        for rank, item in enumerate(ranking, 1):
            if item in seen:
                continue
            seen.add(item)
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + rank)
            best[item] = min(best.get(item, rank), rank)
    return sorted(scores.items(), key=lambda pair: (-pair[1], best[pair[0]], pair[0]))


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
    queries = _validate(question, variants, k, dense, depth)
    depth = max(depth, 4 * k)
    guard = guard if guard is not None else QueryGuard()
    with open_index(index_path, guard) as conn:
        meta = read_meta(conn)
        chunks = int(meta.get("chunk_count", "0"))
        rankings = [keyword_ranking(conn, query, depth, chunks=chunks) for query in queries]
        keyword_count = len(rankings)
        dense_note = ""
        if dense is False:
            dense_note = "dense retrieval was turned off for this search"
        else:
            dense_rankings, dense_note = _dense_rankings(
                index_path, meta, queries, depth, dense, guard
            )
            rankings.extend(dense_rankings)
        fused = rrf_fuse(rankings)[:k]
        best_rank = _best_ranks(rankings[:keyword_count]), _best_ranks(rankings[keyword_count:])
        hits = _load_hits(conn, fused, best_rank)
    return Retrieval(
        hits=tuple(hits),
        queries=tuple(queries),
        dense_used=not dense_note,
        dense_note=dense_note,
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


def _validate(
    question: object, variants: object, k: object, dense: object, depth: object
) -> list[str]:
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
    best_rank: tuple[dict[str, int], dict[str, int]],
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
    keyword, dense = best_rank
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
        )
        for chunk, score in fused
    ]
