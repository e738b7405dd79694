"""The entity graph of a corpus: names read mechanically off each chunk at ingest, stored in
the index beside the chunks, and a retriever that follows them from chunk to chunk.

**Extraction** (:func:`extract_entities`, no model): three kinds of name, each normalised to
one key (whitespace collapsed, case folded):

- capitalised phrases: runs of capitalised words, joined by "of" between two of them and
  ending in an optional number ("Rookcombe Foundry", "Bank of Ashby", "Rack 7"), with
  leading function words dropped ("The Faldcrest Bridge" -> "faldcrest bridge"; "In" alone
  is no name);
- numbers with units ("3.5 kg", "40 %", "12 km") and dotted versions ("2.23.0");
- titles: text in double quotes that starts with a capital ("“Tape Handling Rules”").

At most :data:`MAX_ENTITIES_PER_CHUNK` names per chunk, in order of first appearance.

**Tables** (created with the rest of the schema, :mod:`corpus.index_schema`):
``entity(id, name)`` and ``chunk_entity(chunk, entity)``; the chunks-to-entities rows of a
chunk go with it (a trigger), and entities no chunk names any more are deleted at the end of
an ingest that removed chunks (:func:`drop_orphans`). Both are written inside the ingest's
single transaction, so they are exactly as crash-safe as the chunks.

**Retrieval** (:func:`entity_ranking`): the chunks that name the entities of some seed
chunks (the chunks already found) or some names (a bridge value), best first. An entity named
by more than :data:`ENTITY_FANOUT` chunks is not followed: it says little and would make one
query visit a large share of the index.
"""

from __future__ import annotations

import math
import re
import sqlite3
from collections.abc import Iterable, Sequence

from corpus.words import STOPWORDS

MAX_ENTITIES_PER_CHUNK = 64
ENTITY_FANOUT = 50
"""An entity named by more chunks than this is not followed by :func:`entity_ranking`."""
MAX_NAME_CHARS = 80

FUNCTION_WORDS = STOPWORDS | frozenset(
    {
        "as", "after", "all", "also", "any", "before", "both", "but", "by", "did", "do",
        "does", "during", "each", "every", "for", "from", "has", "had", "have", "he", "her",
        "here", "his", "how", "if", "into", "its", "no", "not", "or", "our", "she", "so",
        "some", "such", "than", "their", "them", "then", "there", "these", "they", "those",
        "under", "until", "upon", "we", "what", "when", "where", "which", "while", "who",
        "whom", "whose", "why", "with", "within", "without", "you", "your",
    }
)  # fmt: skip
"""Capitalised only because they start a sentence: never a name, nor the start of one."""

_WORD = r"[A-ZÀ-ÖØ-Þ][\w'’&-]*"
_CAPITALISED = re.compile(rf"\b{_WORD}(?:(?:\s+of)?\s+{_WORD})*(?:\s+\d+\b(?!\.\d))?")
_UNITS = (
    "%|percent|kg|g|mg|km|m|cm|mm|mi|ft|ml|kb|mb|gb|tb|ms|min|h|hours?|days?|weeks?|months?|"
    "years?|v|kv|w|kw|mw|gw|kwh|hz|khz|mhz|ghz|°c|°f|eur|usd|gbp"
)
_NUMBER_UNIT = re.compile(rf"(?<![\w.])(\d+(?:[.,]\d+)?)\s?({_UNITS})(?![\w])", re.IGNORECASE)
_VERSION = re.compile(r"(?<![\w.])\d+(?:\.\d+){2,}\b")
_TITLE = re.compile(r"[\"“]([A-Z][^\"“”\n]{1,78})[\"”]")
_PLACEHOLDER = re.compile(r"#\d+")


def entity_key(name: str) -> str:
    """The stored form of a name: whitespace collapsed, case folded.

    Parameters
    ----------
    name: a name as found in a text.

    Returns
    -------
    The key, ``""`` for a blank name.

    Examples
    --------
    >>> entity_key("  Rookcombe   Foundry ")
    'rookcombe foundry'
    """
    return " ".join(name.split()).casefold()


def extract_entities(text: str) -> list[str]:
    """The entity keys named in ``text``, in order of first appearance, each once, at most
    :data:`MAX_ENTITIES_PER_CHUNK` (see the module docstring for the rules).

    Parameters
    ----------
    text: any text (a chunk, its heading trail, a question).

    Returns
    -------
    The keys (:func:`entity_key`), deterministic for a given text.

    Raises
    ------
    ValueError: ``text`` is not a string.

    Examples
    --------
    >>> extract_entities("The Faldcrest Bridge was built by Rookcombe Foundry in 1947.")
    ['faldcrest bridge', 'rookcombe foundry']
    >>> extract_entities('Each shelf of Rack 7 carries 3.5 kg; see "Shelf Rules".')
    ['rack 7', '3.5 kg', 'shelf rules']
    """
    if not isinstance(text, str):
        raise ValueError(f"text must be a string, got {type(text).__name__}")
    found: list[tuple[int, str]] = []
    for match in _CAPITALISED.finditer(text):
        name = _strip_function_words(match.group(0))
        if name:
            found.append((match.start(), name))
    for match in _NUMBER_UNIT.finditer(text):
        found.append((match.start(), f"{match.group(1)} {match.group(2)}"))
    found.extend((match.start(), match.group(0)) for match in _VERSION.finditer(text))
    found.extend((match.start(), match.group(1)) for match in _TITLE.finditer(text))
    keys: dict[str, None] = {}
    for _, name in sorted(found, key=lambda pair: pair[0]):
        key = entity_key(name)
        if 2 <= len(key) <= MAX_NAME_CHARS:
            keys.setdefault(key, None)
        if len(keys) == MAX_ENTITIES_PER_CHUNK:
            break
    return list(keys)


def _strip_function_words(phrase: str) -> str:
    """``phrase`` without its leading function words ("The", "In") and without a lone
    trailing number left by them; ``""`` when nothing that names anything is left."""
    words = phrase.split()
    while words and words[0].casefold() in FUNCTION_WORDS:
        words.pop(0)
    if not words or words[0].isdigit() or words[0].casefold() == "of":
        return ""
    return " ".join(words)


def names_in(text: str) -> list[str]:
    """The entity keys and ``#k`` placeholders of a (sub-)question, placeholders first.

    Examples
    --------
    >>> names_in("Who or what is the founder of #1?")
    ['#1']
    >>> names_in("Which company built the Faldcrest Bridge?")
    ['faldcrest bridge']
    """
    return [*_PLACEHOLDER.findall(text), *extract_entities(_PLACEHOLDER.sub(" ", text))]


def store_mentions(conn: sqlite3.Connection, chunks: Sequence[tuple[int, str]]) -> None:
    """Record the entities of ``chunks`` (``(chunks.id, text to read)`` pairs) in ``entity``
    and ``chunk_entity``. Cost: one extraction per chunk, two statements per batch."""
    pairs = [(row, key) for row, text in chunks for key in extract_entities(text)]
    if not pairs:
        return
    conn.executemany(
        "INSERT OR IGNORE INTO entity (name) VALUES (?)", [(key,) for key in {k for _, k in pairs}]
    )
    conn.executemany(
        "INSERT OR IGNORE INTO chunk_entity (chunk, entity) "
        "SELECT ?, id FROM entity WHERE name = ?",
        pairs,
    )


def drop_orphans(conn: sqlite3.Connection) -> int:
    """Delete the entities that no chunk names any more; returns how many. O(entities)."""
    return conn.execute(
        "DELETE FROM entity WHERE NOT EXISTS "
        "(SELECT 1 FROM chunk_entity WHERE chunk_entity.entity = entity.id)"
    ).rowcount


def entity_ranking(
    conn: sqlite3.Connection,
    depth: int,
    *,
    seeds: Sequence[str] = (),
    names: Iterable[str] = (),
    chunks: int = 0,
    fanout: int = ENTITY_FANOUT,
) -> list[str]:
    """Chunk ids that name what ``seeds`` or ``names`` name, best first, at most ``depth``.

    Parameters
    ----------
    conn: an open corpus index.
    depth: the most chunk ids returned.
    seeds: chunk ids already found, best first; their entities are followed, the seed of
        rank r weighing 1/r. The seeds themselves are not returned.
    names: names to follow as well (a bridge value), each weighing 1; keys or raw text.
    chunks: the index's chunk count (for the idf); 0 reads it.
    fanout: an entity named by more chunks than this is not followed.

    Returns
    -------
    Chunk ids, scored by the sum over the entities they share of (weight of the entity's
    best seed) * log(1 + chunks / chunks naming it); ties by chunk id.

    Cost: one bounded count per followed entity, then O(entities * fanout) rows.
    """
    weights, seed_rows = _seed_entities(conn, seeds)
    weights.update(dict.fromkeys(_named_entities(conn, names), 1.0))
    if not weights:
        return []
    total = chunks or conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
    scores = _shared_entity_scores(conn, weights, seed_rows, total, fanout)
    if not scores:
        return []
    marks = ",".join("?" * len(scores))
    ids = dict(conn.execute(f"SELECT id, chunk_id FROM chunks WHERE id IN ({marks})", list(scores)))
    ranked = sorted(scores, key=lambda row: (-scores[row], ids[row]))
    return [ids[row] for row in ranked[:depth]]


def _seed_entities(
    conn: sqlite3.Connection, seeds: Sequence[str]
) -> tuple[dict[int, float], set[int]]:
    """The entities the chunks ``seeds`` (best first) name, each weighing 1/r for the best
    rank r of a seed naming it; and the rows of those seeds."""
    weights: dict[int, float] = {}
    seed_rows: set[int] = set()
    if not seeds:
        return weights, seed_rows
    marks = ",".join("?" * len(seeds))
    rank_of = {chunk: rank for rank, chunk in enumerate(seeds, 1)}
    for row, chunk_id, entity in conn.execute(
        "SELECT chunks.id, chunks.chunk_id, chunk_entity.entity FROM chunks "
        "JOIN chunk_entity ON chunk_entity.chunk = chunks.id "
        f"WHERE chunks.chunk_id IN ({marks})",
        list(seeds),
    ):
        seed_rows.add(row)
        weight = 1.0 / rank_of[chunk_id]
        weights[entity] = max(weights.get(entity, 0.0), weight)
    return weights, seed_rows


def _named_entities(conn: sqlite3.Connection, names: Iterable[str]) -> list[int]:
    """The entities of the index that ``names`` (keys or raw text) name."""
    keys = sorted({entity_key(name) for name in names} - {""})
    if not keys:
        return []
    marks = ",".join("?" * len(keys))
    return [row[0] for row in conn.execute(f"SELECT id FROM entity WHERE name IN ({marks})", keys)]


def _shared_entity_scores(
    conn: sqlite3.Connection,
    weights: dict[int, float],
    seed_rows: set[int],
    total: int,
    fanout: int,
) -> dict[int, float]:
    """Each chunk row outside ``seed_rows`` that names an entity of ``weights``, scored by the
    sum over those entities of weight * log(1 + ``total`` / chunks naming it); an entity named
    by more than ``fanout`` chunks is not followed."""
    scores: dict[int, float] = {}
    for entity, weight in sorted(weights.items()):
        named_by = [
            row[0]
            for row in conn.execute(
                "SELECT chunk FROM chunk_entity WHERE entity = ? LIMIT ?", (entity, fanout + 1)
            )
        ]
        if len(named_by) > fanout:
            continue
        gain = weight * math.log(1.0 + total / len(named_by))
        for row in named_by:
            if row not in seed_rows:
                scores[row] = scores.get(row, 0.0) + gain
    return scores
