"""The records of :mod:`corpus.index`: what one ingest did (:class:`IngestReport`) and what an
index holds (:class:`IndexInfo`)."""

from __future__ import annotations

from dataclasses import dataclass

from corpus.index_scan import FileProblem


@dataclass(frozen=True)
class IngestReport:
    """What one ingest did. Paths are relative to the ingested folder, sorted.

    Parameters
    ----------
    accepted, replaced, skipped, removed : tuple of str
        New files, now indexed; changed files whose chunks were replaced; unchanged files,
        not touched; files gone from the folder, removed from the index.
    failed : tuple of FileProblem
        Files that could not be read (a previously indexed version stays).
    ignored, empty : tuple of str
        Files with no reader; accepted or replaced files that hold no text.
    chunks_added, chunks_removed, chunks_embedded, files_total, chunks_total : int
        What changed, and what the index now holds.
    dense : bool
        Whether every chunk of the index now has a dense vector.
    dense_note : str
        Why dense search is off, or ``""``.
    bytes_read : int
        Bytes read from the files.
    seconds : float
        Wall-clock time of the ingest.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from corpus import ingest, ingest_texts
    >>> texts = {"guide.md": "Rack 7 stands in the north hall.", "photo.png": b""}
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     docs, index = Path(tmp, "docs"), Path(tmp, "docs.sqlite")
    ...     report = ingest_texts(texts, docs, index, dense=False)
    ...     again = ingest(docs, index, dense=False)
    >>> report.accepted, report.ignored, report.chunks_total, report.ok
    (('guide.md',), ('photo.png',), 1, True)
    >>> again.skipped
    ('guide.md',)
    """

    accepted: tuple[str, ...]
    """New files, now indexed."""
    replaced: tuple[str, ...]
    """Changed files whose chunks were replaced."""
    skipped: tuple[str, ...]
    """Unchanged files, not touched."""
    removed: tuple[str, ...]
    """Files gone from the folder, removed from the index."""
    failed: tuple[FileProblem, ...]
    """Files that could not be read (a previously indexed version stays)."""
    ignored: tuple[str, ...]
    """Files with no reader (by suffix); hidden files and folders are not even listed."""
    empty: tuple[str, ...]
    """Accepted or replaced files that hold no text (a scanned PDF, say): they have no chunks."""
    chunks_added: int
    chunks_removed: int
    chunks_embedded: int
    files_total: int
    chunks_total: int
    dense: bool
    """Whether every chunk of the index now has a dense vector."""
    dense_note: str
    """Why dense search is off, or ``""``."""
    bytes_read: int
    seconds: float
    words_left_out: int = 0
    """Word occurrences the static embedder left out of dense vectors because their file
    had spent its word budget (``corpus.embed.DocumentWords``; keyword search still has
    them). 0 for prose."""

    @property
    def ok(self) -> bool:
        """True when no file failed."""
        return not self.failed


@dataclass(frozen=True)
class IndexInfo:
    """A summary of an index (see :func:`index_info`).

    Parameters
    ----------
    path : str
        The index file.
    schema_version : int
        The version of the index's tables.
    files, chunks, vectors : int
        How many files, chunks and dense vectors it holds.
    dense_model, dense_note : str
        The embedder of its vectors (``""``: none), and why dense search is off (``""``).
    size_bytes : int
        The size of the file.

    Examples
    --------
    >>> from corpus import IndexInfo
    >>> info = IndexInfo("docs.sqlite", 1, 2, 3, 0, "", "keyword-only", 57344)
    >>> info.chunks, info.vectors == info.chunks
    (3, False)
    """

    path: str
    schema_version: int
    files: int
    chunks: int
    vectors: int
    dense_model: str
    dense_note: str
    size_bytes: int
