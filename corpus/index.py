"""The corpus index: one SQLite file holding files, chunks, an FTS5 (BM25) table and, when the
extras are installed, dense vectors; and the incremental, all-or-nothing ingest that fills it.

Schema (version :data:`SCHEMA_VERSION`, recorded in ``meta`` and ``PRAGMA user_version``;
``PRAGMA application_id`` marks the file as a logic-graph corpus):

- ``meta(key, value)``: ``schema_version``, ``chunker`` (rules version and size bound),
  ``dense_model``, ``dense_dim``, ``dense_note`` (why dense search is off, when it is);
- ``files(id, path, size, mtime_ns, sha256, version, pages, chunks)``: one row per indexed
  file, ``path`` relative to the ingested folder with ``/`` separators, ``version`` read from
  the file name (``manual-v1.2.md`` -> ``1.2``) or NULL;
- ``chunks(id, chunk_id, file_id, page, number, start_char, end_char, section, text)``;
- ``chunk_fts``: an external-content FTS5 table over ``chunks.text`` and ``chunks.section``
  (Porter stemming, diacritics folded), kept in step by triggers;
- ``chunk_vectors(chunk, embedding)`` and ``chunk_bits(chunk, bits)``: float32 vectors and
  their sign bits, keyed by ``chunks.id``.

**Ingest** (:func:`ingest_directory`) runs in one transaction: it scans the folder, skips a
file whose size and modification time match the index (or whose SHA-256 matches, when only
the time changed), replaces a changed file's chunks, removes files that are gone, embeds the
chunks that have no vector yet, and commits once. Any exception (a failing disk, Ctrl-C, a
killed process) leaves the index as it was before: SQLite's rollback journal guarantees it.
A new index is the exception: its schema is committed first with a ``first_ingest`` mark in
``meta``, removed by the ingest's own commit, so a first ingest that dies leaves an index
that readers recognise as unfinished (and the next ingest completes) rather than an empty
database.
A file that cannot be read is reported and left as it was in the index (it is retried on the
next ingest).
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from corpus.chunking import DEFAULT_MAX_CHARS, chunk_page
from corpus.embed import Embedder, load_embedder
from corpus.index_ingest import EMBED_BATCH, IngestRun, Progress, file_version
from corpus.index_pin import PinnedIndex
from corpus.index_records import IndexInfo, IngestReport
from corpus.index_scan import FileProblem, Scan, by_path, open_no_follow, scan_directory
from corpus.index_schema import (
    APPLICATION_ID,
    SCHEMA_VERSION,
    CorpusIndexError,
    check_schema,
    check_structure,
    read_meta,
)

__all__ = [
    "APPLICATION_ID",
    "BUSY_TIMEOUT_S",
    "EMBED_BATCH",
    "QUERY_TIME_LIMIT_S",
    "SCHEMA_VERSION",
    "CorpusIndexError",
    "FileProblem",
    "IndexInfo",
    "IngestReport",
    "Progress",
    "QueryGuard",
    "Scan",
    "check_ingest_arguments",
    "check_structure",
    "file_version",
    "index_info",
    "ingest_directory",
    "open_index",
    "open_no_follow",
    "read_meta",
    "scan_directory",
    "validate_index_path",
]

QUERY_TIME_LIMIT_S = 20.0
"""Wall-clock bound on the queries of one search (a healthy index answers in milliseconds)."""
BUSY_TIMEOUT_S = 5.0
"""How long a reader waits for an ingest's commit to release its lock before giving up."""
_GUARD_STEPS = 1000
"""SQLite virtual-machine steps between two checks of the deadline and of cancellation."""


class QueryGuard:
    """Stops the SQLite queries of one search once ``seconds`` have passed or ``cancel()``
    says so, as a progress handler (a crafted index can make one query run forever); the
    interrupted query raises ``sqlite3.OperationalError`` and :attr:`reason` says why.
    Cost: one clock read per :data:`_GUARD_STEPS` SQLite steps."""

    def __init__(
        self, seconds: float = QUERY_TIME_LIMIT_S, cancel: Callable[[], bool] | None = None
    ) -> None:
        self.seconds = seconds
        self.deadline = time.monotonic() + seconds
        self.cancel = cancel
        self.reason = ""

    def __call__(self) -> int:
        if self.cancel is not None and self.cancel():
            self.reason = "the search was cancelled"
        elif time.monotonic() > self.deadline:
            self.reason = (
                f"the search was stopped after {self.seconds:g} s (the time limit); "
                "the index is too large or not a well-formed corpus index"
            )
        return 1 if self.reason else 0

    def install(self, conn: Any) -> None:
        """Bound every later query on ``conn`` (stdlib sqlite3 or pysqlite3)."""
        conn.set_progress_handler(self, _GUARD_STEPS)


def validate_index_path(index_path: object, *, must_exist: bool) -> Path:
    """``index_path`` as a Path, or ValueError naming the field. O(1)."""
    if not isinstance(index_path, str | Path) or not str(index_path).strip():
        raise ValueError(f"index_path must be a non-empty str or Path, got {index_path!r}")
    path = Path(index_path)
    try:
        is_dir, is_file, parent_is_dir = path.is_dir(), path.is_file(), path.parent.is_dir()
    except (OSError, ValueError) as exc:  # a name too long for the OS, a NUL byte
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ValueError(f"index_path {_shown(path)} cannot be used: {reason}") from exc
    if is_dir:
        raise ValueError(f"index_path {str(path)!r} is a directory; give a file path")
    if must_exist and not is_file:
        raise ValueError(f"index_path {str(path)!r} does not exist; run an ingest first")
    if not must_exist and not parent_is_dir:
        raise ValueError(f"index_path {str(path)!r}: folder {str(path.parent)!r} does not exist")
    return path


def _shown(path: Path | str, limit: int = 120) -> str:
    """``path`` quoted for a message, its middle elided when it is long."""
    text = str(path)
    if len(text) <= limit:
        return repr(text)
    return f"{text[: limit // 2]!r}...{text[-limit // 2 :]!r} ({len(text)} characters)"


@contextmanager
def open_index(
    index_path: Path | str | PinnedIndex, guard: QueryGuard | None = None
) -> Iterator[sqlite3.Connection]:
    """A query-only connection to an existing corpus index (checked to be one, see
    :func:`check_structure`), closed on exit; every query on it is bounded by ``guard``
    (default: :data:`QUERY_TIME_LIMIT_S`). A :class:`~corpus.index_pin.PinnedIndex` is
    opened by its path and checked to be the file that was pinned. Raises ValueError for a
    bad path and :class:`CorpusIndexError` for a file that is not a usable index, one that an
    ingest has locked, a pinned file that was swapped, or a query the guard stopped.
    Cost: O(schema size)."""
    if isinstance(index_path, PinnedIndex):
        path = index_path.path
        # Checked right after the open, before any statement reads the file.
        conn = index_path.connect(lambda: _connect_reader(path), _close)
    else:
        path = validate_index_path(index_path, must_exist=True)
        conn = _connect_reader(path)
    guard = guard if guard is not None else QueryGuard()
    try:
        conn.execute("PRAGMA query_only = 1")
        guard.install(conn)
        check_schema(conn, path, allow_empty=False)
        yield conn
    except sqlite3.DatabaseError as exc:
        raise CorpusIndexError(_unreadable(path, exc, guard)) from exc
    finally:
        conn.close()


def _close(conn: sqlite3.Connection) -> None:
    conn.close()


def _connect_reader(path: Path) -> sqlite3.Connection:
    """A connection for a reader, which makes it ``query_only`` before its first query.
    It is opened read-write when the file allows it: an ingest that was killed leaves a
    rollback journal, and only a writable connection can roll it back (SQLite does so on
    the first read), so a read-only one would fail with "attempt to write a readonly
    database" until the next ingest."""
    uri = path.resolve().as_uri()
    try:
        conn = sqlite3.connect(f"{uri}?mode=rw", uri=True, timeout=BUSY_TIMEOUT_S)
    except sqlite3.Error:
        try:
            conn = sqlite3.connect(f"{uri}?mode=ro", uri=True, timeout=BUSY_TIMEOUT_S)
        except sqlite3.Error as exc:
            raise CorpusIndexError(f"cannot open index {str(path)!r}: {exc}") from exc
    return conn


def _unreadable(path: Path, exc: BaseException, guard: QueryGuard | None = None) -> str:
    """The one-line reason an index query failed, telling a lock and a stop from damage."""
    if guard is not None and guard.reason:
        return f"index {str(path)!r}: {guard.reason}"
    message = str(exc)
    if "locked" in message or "busy" in message:
        return f"index {str(path)!r} is busy, an ingest is running; try again when it has finished"
    if "readonly" in message:
        return (
            f"index {str(path)!r} holds the journal of an ingest that did not finish and this "
            "process may not write the file to roll it back; run the ingest again as its owner"
        )
    return f"index {str(path)!r} is unreadable: {message}"


def index_info(index_path: Path | str) -> IndexInfo:
    """Counts and dense status of an index. O(1) queries (counts are O(rows) in SQLite, a
    few ms at 100k chunks).

    Parameters
    ----------
    index_path : Path or str
        An index made by :func:`corpus.ingest`.

    Returns
    -------
    IndexInfo
        Its schema version, files, chunks and vectors, dense model and note, and size.

    Raises
    ------
    ValueError
        For a path that is not an existing file.
    CorpusIndexError
        For a file that is not a usable index.

    Examples
    --------
    >>> from corpus import index_info, temporary_index
    >>> with temporary_index({"guide.md": "Rack 7 is in the north hall."}, dense=False) as index:
    ...     info = index_info(index)
    >>> info.files, info.chunks, info.vectors
    (1, 1, 0)
    >>> index_info(index)
    Traceback (most recent call last):
    ...
    ValueError: index_path '...index.sqlite' does not exist; run an ingest first
    """
    with open_index(index_path) as conn:
        meta = read_meta(conn)
        files = conn.execute("SELECT COUNT(*) FROM files").fetchone()[0]
        chunks = conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
        vectors = conn.execute("SELECT COUNT(*) FROM chunk_vectors").fetchone()[0]
    path = Path(index_path)
    return IndexInfo(
        path=str(path),
        schema_version=int(meta.get("schema_version", "0")),
        files=files,
        chunks=chunks,
        vectors=vectors,
        dense_model=meta.get("dense_model", ""),
        dense_note=meta.get("dense_note", ""),
        size_bytes=path.stat().st_size,
    )


def ingest_directory(
    directory: Path | str,
    index_path: Path | str,
    *,
    progress: Progress | None = None,
    dense: bool | Embedder = True,
    max_chars: int = DEFAULT_MAX_CHARS,
) -> IngestReport:
    """Bring the index at ``index_path`` (created if missing) in line with ``directory``.

    Public as :func:`corpus.ingest`. Any exception leaves the index as it was. Cost: O(bytes
    of new or changed files), one ``stat`` per unchanged file, a model pass per chunk embedded.

    Parameters
    ----------
    directory : Path or str
        The folder to ingest (hidden files and folders and symbolic links are left out).
    index_path : Path or str
        The index file.
    progress : callable, optional
        ``progress(stage, done, total)``, called after each file and each embedding batch.
    dense : bool or Embedder, optional
        True (default) to embed with the default embedder when the extras are installed,
        False for keyword-only, or the :class:`Embedder` to use.
    max_chars : int, optional
        The chunk size bound (changing it re-chunks every file).

    Returns
    -------
    IngestReport
        The files accepted, replaced, skipped, removed, failed and ignored, and the counts.

    Raises
    ------
    ValueError
        For a bad argument: ``directory`` not a folder, ``index_path`` in no folder, ...
    CorpusIndexError
        For an index file that cannot be used.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from corpus import ingest, ingest_texts
    >>> tmp = tempfile.TemporaryDirectory()
    >>> docs, index = Path(tmp.name, "docs"), Path(tmp.name, "docs.sqlite")
    >>> _ = ingest_texts({"guide.md": "Rack 7 stands in the north hall."}, docs, index, dense=False)
    >>> _ = (docs / "guide.md").write_text("Rack 7 stands in the south hall.")
    >>> ingest(docs, index, dense=False).replaced
    ('guide.md',)
    >>> ingest(docs / "guide.md", index)
    Traceback (most recent call last):
    ...
    ValueError: directory '...guide.md' is not a folder
    >>> tmp.cleanup()
    """
    started = time.monotonic()
    root, path = check_ingest_arguments(directory, index_path, progress, dense, max_chars)
    scan, run, counts = _sync_index(root, path, progress, dense, max_chars)
    return _report(run, scan, counts, time.monotonic() - started)


def check_ingest_arguments(
    directory: object, index_path: object, progress: object, dense: object, max_chars: int
) -> tuple[Path, Path]:
    """The folder and the index file of an ingest, once every argument is checked; raises
    ValueError naming the first bad one."""
    if not isinstance(directory, str | Path) or not str(directory).strip():
        raise ValueError(f"directory must be a non-empty str or Path, got {directory!r}")
    root = Path(directory)
    if not root.is_dir():
        raise ValueError(f"directory {str(root)!r} is not a folder")
    path = validate_index_path(index_path, must_exist=False)
    if progress is not None and not callable(progress):
        raise ValueError(f"progress must be callable or None, got {type(progress).__name__}")
    if not isinstance(dense, bool) and not isinstance(dense, Embedder):
        raise ValueError(f"dense must be a bool or an Embedder, got {type(dense).__name__}")
    chunk_page("", "x", 1, max_chars=max_chars)  # validates max_chars
    return root, path


def _sync_index(
    root: Path, path: Path, progress: Progress | None, dense: bool | Embedder, max_chars: int
) -> tuple[Scan, IngestRun, tuple[int, int, int]]:
    """Bring the index file ``path`` in line with the folder ``root``, in one transaction.
    Returns what the folder holds, the run (what it did to the index) and the (files, chunks,
    vectors) the index now holds."""
    embedder, dense_note = _resolve_embedder(dense)
    scan = scan_directory(root)
    conn = _connect_writer(path)
    try:
        run = IngestRun(conn, root, scan.files, progress, embedder, max_chars)
        counts = _in_one_transaction(conn, path, run, dense_note)
    except sqlite3.DatabaseError as exc:
        raise CorpusIndexError(f"index {str(path)!r} is unusable: {exc}") from exc
    finally:
        conn.close()
    return scan, run, counts


def _connect_writer(path: Path) -> sqlite3.Connection:
    """The ingest's connection (autocommit: it runs its own transactions)."""
    try:
        return sqlite3.connect(path, isolation_level=None, timeout=30)
    except sqlite3.Error as exc:
        raise CorpusIndexError(f"cannot open index {str(path)!r}: {exc}") from exc


def _in_one_transaction(
    conn: sqlite3.Connection, path: Path, run: IngestRun, dense_note: str
) -> tuple[int, int, int]:
    """Do ``run``'s work in one transaction, committed at the end and rolled back on any
    exception (a new index's schema and marker are committed first, whatever follows).
    Returns (files, chunks, vectors) in the index."""
    try:
        conn.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError as exc:
        raise CorpusIndexError(_unreadable(path, exc)) from exc
    try:
        if run.prepare(path):  # a new index: its schema and marker are kept whatever follows
            conn.execute("COMMIT")
            conn.execute("BEGIN IMMEDIATE")
        run.sync_files()
        run.embed_missing()
        counts = run.finish(dense_note)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return counts


def _report(
    run: IngestRun, scan: Scan, counts: tuple[int, int, int], seconds: float
) -> IngestReport:
    """The report of a committed ingest: what ``run`` did to the files of ``scan``, and
    ``counts`` (files, chunks, vectors) that the index now holds."""
    return IngestReport(
        accepted=tuple(run.accepted),
        replaced=tuple(run.replaced),
        skipped=tuple(run.skipped),
        removed=tuple(run.removed),
        failed=tuple(sorted([*scan.problems, *run.failed], key=by_path)),
        ignored=tuple(scan.ignored),
        empty=tuple(run.empty),
        chunks_added=run.chunks_added,
        chunks_removed=run.chunks_removed,
        chunks_embedded=run.chunks_embedded,
        files_total=counts[0],
        chunks_total=counts[1],
        dense=counts[1] > 0 and counts[2] == counts[1],
        dense_note=run.dense_note,
        bytes_read=run.bytes_read,
        seconds=seconds,
        words_left_out=run.words_left_out,
    )


def _resolve_embedder(dense: bool | Embedder) -> tuple[Embedder | None, str]:
    if dense is False:
        return None, "dense embeddings were turned off for this ingest"
    if dense is True:
        return load_embedder()
    assert not isinstance(dense, bool)
    return dense, ""
