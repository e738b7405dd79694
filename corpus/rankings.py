"""The two single rankings of a query over an index's chunks, best first.

- **keyword** (:func:`keyword_ranking`): FTS5's BM25 over the chunk text (weight 1) and
  heading trail (weight 0.5). The query is cut into words (:func:`query_terms`), stopwords
  dropped, and the words OR-ed, so any text is a valid query (no FTS5 syntax reaches SQLite);
- **dense** (:func:`dense_ranking`): cosine distance between the query's and the chunks' e5
  vectors. Up to :data:`EXACT_DENSE_LIMIT` vectors every distance is computed; above it a
  Hamming scan over the vectors' sign bits keeps :data:`DENSE_CANDIDATES` candidates and
  exact cosine distances rank those (binary quantisation with rescoring).

:mod:`corpus.retrieval` fuses them.
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path
from typing import Any

from corpus.embed import Embedder, connect_vec, load_embedder, sign_bits
from corpus.index import CorpusIndexError, QueryGuard
from corpus.index_pin import PinnedIndex
from corpus.words import STOPWORDS

EXACT_DENSE_LIMIT = 20_000
DENSE_CANDIDATES = 400
MAX_QUERY_TERMS = 32
COMMON_TERM_SHARE = 0.2
COMMON_TERM_MIN = 2000
"""A query word in more than this share of the chunks, and in more than this many, is
dropped from the keyword query (see :func:`keyword_ranking`)."""

_QUESTION_WORDS = frozenset(
    {"what", "which", "who", "whom", "whose", "where", "when", "why", "how", "does", "did", "do"}
)
_TERM = re.compile(r"[^\W_]+")


def query_terms(query: str) -> list[str]:
    """The search words of ``query``: lower-cased words, stopwords and question words dropped
    (kept when nothing else is left), each once, at most :data:`MAX_QUERY_TERMS`.
    Cost: O(len(query))."""
    if not isinstance(query, str):
        raise ValueError(f"query must be a string, got {type(query).__name__}")
    words = list(dict.fromkeys(word.casefold() for word in _TERM.findall(query)))
    content = [w for w in words if w not in STOPWORDS and w not in _QUESTION_WORDS]
    return (content or words)[:MAX_QUERY_TERMS]


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
