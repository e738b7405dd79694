"""Retrieved chunks as a task's documents, and evidence spans traced back to their files.

Each hit becomes one document of the task, in hit order, so the evidence-span ids of
:mod:`corpus.evidence` apply unchanged: ``D2.3`` is the third sentence of the second
retrieved chunk. :meth:`CorpusEvidence.locate` turns such an id into what a person needs to
follow the citation: the chunk id, the file, its page, the sentence's character offsets in the
page's text, the section and the quoted sentence.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from corpus.evidence import Evidence, build_evidence
from corpus.index import CorpusIndexError, QueryGuard
from corpus.index_pin import PinnedIndex, pin_inside
from corpus.limits import MAX_SEARCH_K
from corpus.retrieval import Hit, retrieve
from corpus.views import ChunkView

MAX_SEARCH_QUERY_CHARS = 1000
MAX_INDEX_PATH_CHARS = 4096
"""Longer ``index`` arguments are refused before the file system sees them (Linux PATH_MAX)."""
INDEX_ROOTS_ENV = "LOGIC_GRAPH_INDEX_ROOTS"
"""Folders whose indexes the MCP server may open, separated by ``os.pathsep`` (``:``)."""


@dataclass(frozen=True)
class SpanSource:
    """Where one evidence span of a corpus task comes from: the retrieved chunk (its id,
    file, page, section and version) and the sentence's place in the chunk's page.

    Parameters
    ----------
    span_id : str
        ``D<document>.<sentence>``, as the prompts and the report use it.
    hit : Hit
        The chunk the sentence is in.
    start, end : int
        Offsets of the sentence in its page's text (chunk offset + offset in the chunk).
    text : str
        The sentence, whitespace collapsed (as the report quotes it).

    See Also
    --------
    CorpusEvidence.locate : finds the source of a span id.

    Examples
    --------
    >>> from corpus import Hit, SpanSource
    >>> hit = Hit("guide.md#p1c2", "guide.md", 1, 120, 188, "Site", None,
    ...           "Rack 7 stands in hall B.", 0.03, 1, None)
    >>> source = SpanSource("D1.1", hit, 120, 144, "Rack 7 stands in hall B.")
    >>> source.hit.path, source.start
    ('guide.md', 120)
    """

    span_id: str
    """``D<document>.<sentence>`` as the prompts and the report use it."""
    hit: Hit
    """The chunk the sentence is in."""
    start: int
    end: int
    """Offsets of the sentence in its page's text (chunk offset + offset in the chunk)."""
    text: str
    """The sentence, whitespace collapsed (as the report quotes it)."""

    def citation(self) -> str:
        """A one-line human citation of the span.

        Returns
        -------
        str
            ``<file> p.<page>, chars <start>-<end> [<chunk id>]``.

        Examples
        --------
        >>> from corpus import Hit, SpanSource
        >>> hit = Hit("guide.md#p1c2", "guide.md", 1, 120, 188, "Site", None,
        ...           "Rack 7 stands in hall B.", 0.03, 1, None)
        >>> SpanSource("D1.1", hit, 120, 144, "Rack 7 stands in hall B.").citation()
        'guide.md p.1, chars 120-144 [guide.md#p1c2]'
        """
        hit = self.hit
        return f"{hit.path} p.{hit.page}, chars {self.start}-{self.end} [{hit.chunk_id}]"


@dataclass(frozen=True)
class CorpusEvidence:
    """Hits turned into task documents (one per chunk, in hit order).

    Parameters
    ----------
    hits : tuple of Hit
        The retrieved chunks, best first, each chunk once (see :func:`hits_to_evidence`).

    Attributes
    ----------
    documents : tuple of str
        The chunk texts: pass these as the task's ``documents``.
    labels : tuple of str
        The chunk id of each document, in order (document ``D<i>`` is ``labels[i-1]``).
    headings : tuple of str
        What each document stands under: its section trail, else its file's title.
    evidence : corpus.evidence.Evidence
        The spans of the documents, numbered as the prompts number them.

    Examples
    --------
    >>> from corpus import CorpusEvidence, Hit
    >>> hit = Hit("guide.md#p1c1", "guide.md", 1, 0, 56, "", None,
    ...           "Rack 7 stands in the north hall. The hall has two feeds.", 0.03, 1, None)
    >>> found = CorpusEvidence((hit,))
    >>> found.labels
    ('guide.md#p1c1',)
    >>> [(span.id, span.text) for span in found.evidence.spans]
    [('D1.1', 'Rack 7 stands in the north hall.'), ('D1.2', 'The hall has two feeds.')]
    """

    hits: tuple[Hit, ...]

    @property
    def documents(self) -> tuple[str, ...]:
        """The chunk texts: pass these as the task's ``documents``."""
        return tuple(hit.text for hit in self.hits)

    @property
    def labels(self) -> tuple[str, ...]:
        """The chunk id of each document, in order (document ``D<i>`` is ``labels[i-1]``)."""
        return tuple(hit.chunk_id for hit in self.hits)

    @property
    def headings(self) -> tuple[str, ...]:
        """What each document stands under (:attr:`Hit.heading`), in order; ``""``: nothing."""
        return tuple(hit.heading for hit in self.hits)

    @cached_property
    def evidence(self) -> Evidence:
        """The spans of the documents, exactly as :func:`corpus.evidence.build_evidence`
        numbers them for the prompts, each read under its document's heading."""
        return build_evidence(self.documents, self.headings)

    def locate(self, span_id: object) -> SpanSource | None:
        """The source of one span of these documents. Cost: O(1) after the first call.

        Parameters
        ----------
        span_id : object
            A span id, ``"D2.3"``: sentence 3 of document 2.

        Returns
        -------
        SpanSource or None
            The chunk and page offsets of the span; None for an id that is not a span of
            these documents (also for input that is not a string).

        Examples
        --------
        Document ``D2`` is the second hit, and the span's offsets are in its page:

        >>> from corpus import CorpusEvidence, Hit
        >>> rack7 = Hit("guide.md#p1c1", "guide.md", 1, 0, 32, "", None,
        ...             "Rack 7 stands in the north hall.", 0.03, 1, None)
        >>> rack8 = Hit("guide.md#p1c2", "guide.md", 1, 120, 163, "", None,
        ...             "The hall has two feeds. Rack 8 holds tapes.", 0.02, 2, None)
        >>> found = CorpusEvidence((rack7, rack8))
        >>> found.locate("D2.2").citation()
        'guide.md p.1, chars 144-163 [guide.md#p1c2]'
        >>> found.locate("D3.1") is None
        True
        """
        span = self.evidence.get(span_id)
        if span is None:
            return None
        hit = self.hits[span.document - 1]
        return SpanSource(span.id, hit, hit.start + span.start, hit.start + span.end, span.text)


def hits_to_evidence(hits: Sequence[Hit]) -> CorpusEvidence:
    """Wrap retrieved hits as task documents, one per chunk. Cost: O(len(hits)).

    Parameters
    ----------
    hits : sequence of Hit
        Retrieved chunks, best first; a chunk id seen again keeps its first place.

    Returns
    -------
    CorpusEvidence
        The documents, their chunk ids and their citation spans.

    Raises
    ------
    ValueError
        When ``hits`` is not a sequence of :class:`Hit`.

    Examples
    --------
    >>> from corpus import Hit, hits_to_evidence
    >>> hit = Hit("guide.md#p1c1", "guide.md", 1, 0, 24, "", None,
    ...           "Rack 7 stands in hall B.", 0.03, 1, None)
    >>> hits_to_evidence([hit, hit]).documents
    ('Rack 7 stands in hall B.',)
    >>> hits_to_evidence("guide.md")
    Traceback (most recent call last):
    ...
    ValueError: hits must be a sequence of Hit, got str
    """
    if isinstance(hits, str) or not isinstance(hits, Sequence):
        raise ValueError(f"hits must be a sequence of Hit, got {type(hits).__name__}")
    unique: dict[str, Hit] = {}
    for index, hit in enumerate(hits):
        if not isinstance(hit, Hit):
            raise ValueError(f"hits[{index}] must be a Hit, got {type(hit).__name__}")
        unique.setdefault(hit.chunk_id, hit)
    return CorpusEvidence(tuple(unique.values()))


def index_roots_from_env(environ: Mapping[str, str] | None = None) -> list[Path]:
    """The folders named in :data:`INDEX_ROOTS_ENV` (blank entries skipped), in order."""
    value = (os.environ if environ is None else environ).get(INDEX_ROOTS_ENV, "")
    return [Path(part) for part in value.split(os.pathsep) if part.strip()]


def search_evidence(
    index: object,
    query: object,
    k: object = 5,
    *,
    dense: object = False,
    roots: Sequence[Path | str] | None = None,
    cancel: Callable[[], bool] | None = None,
) -> dict[str, Any]:
    """Search an index for evidence an agent can cite (the MCP tool ``search_evidence``); each
    query bounded by :data:`~corpus.index.QUERY_TIME_LIMIT_S`. Cost: one :func:`retrieve`.

    Parameters
    ----------
    index : str or Path
        An index made by ``logic-graph ingest`` (at most :data:`MAX_INDEX_PATH_CHARS` characters).
    query : str
        Any text, 1 to :data:`MAX_SEARCH_QUERY_CHARS` characters.
    k : int, optional
        How many chunks, 1 to :data:`MAX_SEARCH_K` (default 5).
    dense : bool, optional
        False (default): keyword only, as ``logic-graph search``; True adds dense rankings.
    roots : sequence of Path or str, optional
        When given (the MCP server's ``--index-root`` folders), the index must be a file inside
        one of them, opened once without following links below the root, each connection checked
        (:mod:`corpus.index_pin`); any other path gets one refusal. None allows any path.
    cancel : callable, optional
        Returns True when the search should stop (MCP cancellation); checked while it runs.

    Returns
    -------
    dict
        ``{"index", "query", "dense_used", "dense_note", "hits"}``, hits best first, each a
        :class:`ChunkView` (its ``spans``: the chunk's sentences, with stable ids
        ``<chunk id>:s<n>`` and offsets in the page). Bad input or an unusable index gives
        ``{"error": ...}`` naming the argument; nothing raises.

    Examples
    --------
    >>> from corpus import search_evidence, temporary_index
    >>> text = "Rack 7 stands in the north hall. The hall has two feeds."
    >>> with temporary_index({"guide.md": text}, dense=False) as index:
    ...     (hit,) = search_evidence(index, "which hall is rack 7 in", k=1)["hits"]
    ...     search_evidence(index, "", k=1)
    {'error': "query must be a non-empty string, got ''"}
    >>> [(span["id"], span["start"], span["end"]) for span in hit["spans"]]
    [('guide.md#p1c1:s1', 0, 32), ('guide.md#p1c1:s2', 33, 56)]
    """
    try:
        path, text, count, dense = _search_arguments(index, query, k, dense)
        target = _served_index(path, roots)
    except ValueError as exc:
        return {"error": str(exc)}
    return _search_answer(path, target, text, count, dense, cancel)


def _search_arguments(
    index: object, query: object, k: object, dense: object
) -> tuple[Path | str, str, int, bool]:
    """``index``, ``query``, ``k`` and ``dense`` of :func:`search_evidence`, checked;
    ValueError naming the first bad one."""
    if not isinstance(index, str | Path) or not str(index).strip():
        raise ValueError(f"index must be the path of a corpus index, got {index!r}")
    if len(str(index)) > MAX_INDEX_PATH_CHARS:
        raise ValueError(
            f"index: the path has {len(str(index))} characters, over the limit of "
            f"{MAX_INDEX_PATH_CHARS}"
        )
    if not isinstance(query, str) or not query.strip():
        raise ValueError(f"query must be a non-empty string, got {query!r}")
    if len(query) > MAX_SEARCH_QUERY_CHARS:
        raise ValueError(
            f"query has {len(query)} characters, over the limit of {MAX_SEARCH_QUERY_CHARS}"
        )
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_SEARCH_K:
        raise ValueError(f"k must be an integer in 1..{MAX_SEARCH_K}, got {k!r}")
    if not isinstance(dense, bool):
        raise ValueError(f"dense must be true or false, got {dense!r}")
    return index, query, k, dense


def _served_index(
    index: Path | str, roots: Sequence[Path | str] | None
) -> Path | str | PinnedIndex:
    """What :func:`search_evidence` opens: ``index`` itself when ``roots`` is None, else the
    index pinned inside one of ``roots`` (:func:`corpus.index_pin.pin_inside`); ValueError
    when there are no roots or the index is not inside them."""
    if roots is None:
        return index
    if not roots:
        raise ValueError(
            "index: this server serves no index folders; start it with "
            f"--index-root DIR (repeatable) or set {INDEX_ROOTS_ENV}"
        )
    pinned = pin_inside(str(index), roots)
    if pinned is None:
        raise ValueError(
            f"index {str(index)!r} is not an index file inside the folders "
            "this server serves (see --index-root)"
        )
    return pinned


def _search_answer(
    index: Path | str,
    target: Path | str | PinnedIndex,
    query: str,
    k: int,
    dense: bool,
    cancel: Callable[[], bool] | None,
) -> dict[str, Any]:
    """:func:`search_evidence`'s answer: ``k`` chunks of ``target`` retrieved for ``query``
    (a pinned index closed after), or ``{"error": ...}`` when the index is unusable."""
    try:
        found = retrieve(target, query, (), k, dense=dense, guard=QueryGuard(cancel=cancel))
    except (ValueError, CorpusIndexError) as exc:
        return {"error": f"index: {exc}"}
    finally:
        if isinstance(target, PinnedIndex):
            target.close()
    return {
        "index": str(index),
        "query": query,
        "dense_used": found.dense_used,
        "dense_note": found.dense_note,
        "hits": [chunk_view(hit) for hit in found.hits],
    }


def chunk_view(hit: Hit) -> ChunkView:
    """``hit`` as ``search_evidence`` answers it (see :class:`ChunkView`)."""
    spans = build_evidence([hit.text]).spans
    return {
        "chunk_id": hit.chunk_id,
        "path": hit.path,
        "page": hit.page,
        "section": hit.section,
        "title": hit.title,
        "version": hit.version,
        "score": round(hit.score, 6),
        "text": hit.text,
        "spans": [
            {
                "id": f"{hit.chunk_id}:s{span.sentence}",
                "text": span.text,
                "start": hit.start + span.start,
                "end": hit.start + span.end,
            }
            for span in spans
        ],
    }
