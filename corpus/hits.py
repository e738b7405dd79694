"""A retrieved chunk: the record (:class:`Hit`) and how hits are read from the index
(:func:`load_hits`), with the title line of each hit's file."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from corpus.reference import title_line


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
    entity_rank : int or None, optional
        The chunk's best rank in an entity-graph ranking, None if in none.
    title : str, optional
        The title line of the chunk's file (:func:`corpus.reference.title_line` of the file's
        first chunk), ``""`` when it has none.

    Examples
    --------
    >>> from corpus import Hit
    >>> text = "Rack 7 stands in the north hall."
    >>> hit = Hit("guide.md#p1c1", "guide.md", 1, 0, len(text), "", None, text, 0.016, 1, None)
    >>> hit.path, hit.keyword_rank, hit.dense_rank, hit.entity_rank, hit.heading
    ('guide.md', 1, None, None, '')
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
    title: str = ""
    """The title line of the chunk's file, ``""`` when it has none: what a chunk from the
    middle of a plain-text file is about ("Git v2.23 Release Notes")."""

    @property
    def heading(self) -> str:
        """What the chunk stands under: its section trail, else its file's title, else ``""``.

        A chunk from the middle of a file may not name what it is about: "Added in:
        v18.3.0" under "Net > Class: net.Socket > socket.resetAndDestroy()", or "Two new
        commands ... are introduced" in the file titled "Git v2.23 Release Notes". The
        section trail is the nearer heading, so it wins over the file's title.

        Examples
        --------
        >>> from corpus import Hit
        >>> hit = Hit("n.md#p1c4", "n.md", 1, 0, 9, "Net > socket.end()", None, "Added in.",
        ...           0.01, 1, None, title="Net")
        >>> hit.heading
        'Net > socket.end()'
        >>> hit = Hit("2.23.txt#p1c3", "2.23.txt", 1, 0, 9, "", None, "Two new.", 0.01, 1, None,
        ...           title="Git v2.23 Release Notes")
        >>> hit.heading
        'Git v2.23 Release Notes'
        """
        return self.section or self.title


def load_hits(
    conn: sqlite3.Connection,
    fused: list[tuple[str, float]],
    best_rank: tuple[dict[str, int], dict[str, int], dict[str, int]],
) -> list[Hit]:
    """The hits of ``fused`` (chunk id, fused score; best first) read from the index, each
    with its best keyword, dense and entity ranks (``best_rank``) and its file's title. Two
    queries, however many hits."""
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
    titles = _file_titles(conn, {row[1] for row in rows.values()})
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
            title=titles.get(rows[chunk][1], ""),
        )
        for chunk, score in fused
    ]


def _file_titles(conn: sqlite3.Connection, paths: set[str]) -> dict[str, str]:
    """The title line (:func:`corpus.reference.title_line`) of each of ``paths`` that has
    one, read from its file's first chunk; one query, O(len(paths) log chunks).

    A file's chunks are inserted in page and chunk order in one ingest step, so its first
    chunk has its smallest row id, which the ``chunks_by_file`` index finds without reading
    the file's other chunks."""
    if not paths:
        return {}
    marks = ",".join("?" * len(paths))
    rows = conn.execute(
        "SELECT f.path, c.text FROM files f "
        "JOIN chunks c ON c.id = (SELECT MIN(id) FROM chunks WHERE file_id = f.id) "
        f"WHERE f.path IN ({marks})",
        sorted(paths),
    )
    titles = {str(path): title_line(str(text)) for path, text in rows}
    return {path: title[0] for path, title in titles.items() if title is not None}
