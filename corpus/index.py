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
A file that cannot be read is reported and left as it was in the index (it is retried on the
next ingest).
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from stat import S_ISREG
from typing import Any

from corpus.chunking import CHUNKER_VERSION, DEFAULT_MAX_CHARS, chunk_page
from corpus.embed import Embedder, load_embedder, sign_bits
from corpus.readers import MAX_FILE_BYTES, ReadError, is_supported, read_pages

SCHEMA_VERSION = 1
APPLICATION_ID = 0x4C474358  # "LGCX"
EMBED_BATCH = 16
"""Chunks embedded per model call."""

QUERY_TIME_LIMIT_S = 20.0
"""Wall-clock bound on the queries of one search (a healthy index answers in milliseconds)."""
BUSY_TIMEOUT_S = 5.0
"""How long a reader waits for an ingest's commit to release its lock before giving up."""
_GUARD_STEPS = 1000
"""SQLite virtual-machine steps between two checks of the deadline and of cancellation."""

Progress = Callable[[str, int, int], None]
"""``progress(stage, done, total)``; stages are ``"read"`` (files) and ``"embed"`` (chunks)."""

_VERSION = re.compile(r"(?:^|[-_ .])v?(\d+(?:\.\d+)+)(?=$|[-_ .])|(?:^|[-_ .])v(\d+)(?=$|[-_ .])")

_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE files (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    sha256 TEXT NOT NULL,
    version TEXT,
    pages INTEGER NOT NULL,
    chunks INTEGER NOT NULL
);
CREATE TABLE chunks (
    id INTEGER PRIMARY KEY,
    chunk_id TEXT NOT NULL UNIQUE,
    file_id INTEGER NOT NULL REFERENCES files(id),
    page INTEGER NOT NULL,
    number INTEGER NOT NULL,
    start_char INTEGER NOT NULL,
    end_char INTEGER NOT NULL,
    section TEXT NOT NULL,
    text TEXT NOT NULL
);
CREATE INDEX chunks_by_file ON chunks(file_id);
CREATE VIRTUAL TABLE chunk_fts USING fts5(
    text, section, content='chunks', content_rowid='id',
    tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER chunks_ai AFTER INSERT ON chunks BEGIN
    INSERT INTO chunk_fts(rowid, text, section) VALUES (new.id, new.text, new.section);
END;
CREATE TRIGGER chunks_ad AFTER DELETE ON chunks BEGIN
    INSERT INTO chunk_fts(chunk_fts, rowid, text, section)
    VALUES ('delete', old.id, old.text, old.section);
    DELETE FROM chunk_vectors WHERE chunk = old.id;
    DELETE FROM chunk_bits WHERE chunk = old.id;
END;
CREATE TABLE chunk_vectors (chunk INTEGER PRIMARY KEY, embedding BLOB NOT NULL);
CREATE TABLE chunk_bits (chunk INTEGER PRIMARY KEY, bits BLOB NOT NULL);
"""


class CorpusIndexError(Exception):
    """The index file cannot be used (not a corpus index, another schema, locked, corrupt)."""


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


@dataclass(frozen=True)
class FileProblem:
    """A file the ingest could not take, with the reason in one line."""

    path: str
    reason: str


@dataclass(frozen=True)
class IngestReport:
    """What one ingest did. Paths are relative to the ingested folder, sorted."""

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

    @property
    def ok(self) -> bool:
        """True when no file failed."""
        return not self.failed


@dataclass(frozen=True)
class IndexInfo:
    """A summary of an index (see :func:`index_info`)."""

    path: str
    schema_version: int
    files: int
    chunks: int
    vectors: int
    dense_model: str
    dense_note: str
    size_bytes: int


def file_version(name: str) -> str | None:
    """The version in a file name, or None: ``manual-v1.2.md`` -> ``1.2``,
    ``spec_v3.txt`` -> ``3``, ``notes 2.0.1.pdf`` -> ``2.0.1``; a date such as
    ``2024-05-01`` is not a version. The suffix is ignored. Cost: O(len(name))."""
    if not isinstance(name, str):
        raise ValueError(f"name must be a string, got {type(name).__name__}")
    stem = Path(name).stem
    match = _VERSION.search(stem)
    if match is None:
        return None
    return match.group(1) or match.group(2)


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
    index_path: Path | str, guard: QueryGuard | None = None
) -> Iterator[sqlite3.Connection]:
    """A query-only connection to an existing corpus index (checked to be one, see
    :func:`check_structure`), closed on exit; every query on it is bounded by ``guard``
    (default: :data:`QUERY_TIME_LIMIT_S`). Raises ValueError for a bad path and
    :class:`CorpusIndexError` for a file that is not a usable index, one that an ingest has
    locked, or a query the guard stopped. Cost: O(schema size)."""
    path = validate_index_path(index_path, must_exist=True)
    guard = guard if guard is not None else QueryGuard()
    conn = _connect_reader(path)
    try:
        guard.install(conn)
        _check_schema(conn, path, allow_empty=False)
        yield conn
    except sqlite3.DatabaseError as exc:
        raise CorpusIndexError(_unreadable(path, exc, guard)) from exc
    finally:
        conn.close()


def _connect_reader(path: Path) -> sqlite3.Connection:
    """A connection that cannot change the data. It is opened read-write when the file
    allows it: an ingest that was killed leaves a rollback journal, and only a writable
    connection can roll it back (SQLite does so on the first read), so a read-only one would
    fail with "attempt to write a readonly database" until the next ingest."""
    uri = path.resolve().as_uri()
    try:
        conn = sqlite3.connect(f"{uri}?mode=rw", uri=True, timeout=BUSY_TIMEOUT_S)
    except sqlite3.Error:
        try:
            conn = sqlite3.connect(f"{uri}?mode=ro", uri=True, timeout=BUSY_TIMEOUT_S)
        except sqlite3.Error as exc:
            raise CorpusIndexError(f"cannot open index {str(path)!r}: {exc}") from exc
    conn.execute("PRAGMA query_only = 1")
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


def read_meta(conn: sqlite3.Connection) -> dict[str, str]:
    """The ``meta`` table as a dict. O(rows)."""
    return dict(conn.execute("SELECT key, value FROM meta").fetchall())


def index_info(index_path: Path | str) -> IndexInfo:
    """Counts and dense status of the index at ``index_path``. O(1) queries (counts are
    O(rows) in SQLite, a few ms at 100k chunks)."""
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


@dataclass(frozen=True)
class Scan:
    """What :func:`scan_directory` found under a folder (relative posix paths, sorted)."""

    files: dict[str, Path]
    """Supported files: relative path -> path."""
    ignored: list[str]
    """Files with no reader."""
    problems: list[FileProblem]
    """Names that cannot be indexed (not UTF-8) and folders or files that cannot be listed."""


def scan_directory(directory: Path) -> Scan:
    """The files under ``directory``. Hidden files and folders (name starting with ``.``)
    and symbolic links are left out; a name that is not valid UTF-8 (the index stores text)
    and a folder the OS cannot list (a path too long, no permission) are problems to report,
    never a reason to stop. Cost: O(entries)."""
    found: dict[str, Path] = {}
    ignored: list[str] = []
    problems: list[FileProblem] = []

    def unlistable(exc: OSError) -> None:
        where = _relative_text(Path(exc.filename or directory), directory)
        problems.append(FileProblem(where, f"cannot list this folder: {exc.strerror or exc}"))

    for root, dirs, names in os.walk(directory, onerror=unlistable):
        kept = []
        for name in sorted(dirs):
            if not name.startswith("."):
                if _utf8(name):
                    kept.append(name)
                else:
                    problems.append(_bad_name(Path(root) / name, directory, "folder"))
        dirs[:] = kept
        for name in sorted(names):
            full = Path(root) / name
            if name.startswith("."):
                continue
            if not _utf8(name):
                problems.append(_bad_name(full, directory, "file"))
                continue
            try:
                if full.is_symlink() or not full.is_file():
                    continue
            except OSError as exc:  # e.g. a path longer than the OS allows
                where = _relative_text(full, directory)
                problems.append(FileProblem(where, f"cannot stat: {exc.strerror or exc}"))
                continue
            relative = full.relative_to(directory).as_posix()
            if is_supported(name):
                found[relative] = full
            else:
                ignored.append(relative)
    return Scan(dict(sorted(found.items())), sorted(ignored), sorted(problems, key=_by_path))


def open_no_follow(root: Path, relative: str) -> int:
    """A read-only file descriptor for ``root / relative`` that follows no symbolic link
    below ``root``: each folder and the file itself is opened with ``O_NOFOLLOW`` relative to
    the one before, so a file or folder swapped for a link after the scan fails to open
    (``OSError``, ELOOP or ENOTDIR) instead of letting the ingest read what the link points
    at. ``O_NONBLOCK`` keeps a swapped-in FIFO from blocking the open. Where the OS lacks
    ``dir_fd`` or ``O_NOFOLLOW`` the path is opened and then checked to be no link.
    Cost: one open per path component."""
    nofollow = getattr(os, "O_NOFOLLOW", 0)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    if not nofollow or os.open not in os.supports_dir_fd:
        full = root / relative
        fd = os.open(full, flags)
        if full.is_symlink():
            os.close(fd)
            raise OSError(errno.ELOOP, "is a symbolic link", str(full))
        return fd
    parent = os.open(root, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        *folders, name = relative.split("/")
        for folder in folders:
            below = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | nofollow, dir_fd=parent)
            os.close(parent)
            parent = below
        return os.open(name, flags | nofollow, dir_fd=parent)
    finally:
        os.close(parent)


def _too_big(size: int) -> str:
    return (
        f"file is {size:,} bytes, over the limit of {MAX_FILE_BYTES:,} "
        f"({MAX_FILE_BYTES // 2**20} MB); it was not read"
    )


def _utf8(name: str) -> bool:
    """Whether a name from the file system is valid UTF-8 (Python keeps invalid bytes as
    lone surrogates, which SQLite cannot store)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _relative_text(path: Path, directory: Path) -> str:
    """``path`` relative to ``directory`` for a report, invalid bytes shown as U+FFFD."""
    try:
        relative = path.relative_to(directory).as_posix()
    except ValueError:
        relative = path.as_posix()
    return relative.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _bad_name(path: Path, directory: Path, kind: str) -> FileProblem:
    return FileProblem(
        _relative_text(path, directory),
        f"{kind} name is not valid UTF-8; rename it to index it",
    )


def _by_path(problem: FileProblem) -> str:
    return problem.path


def ingest_directory(
    directory: Path | str,
    index_path: Path | str,
    *,
    progress: Progress | None = None,
    dense: bool | Embedder = True,
    max_chars: int = DEFAULT_MAX_CHARS,
) -> IngestReport:
    """Bring the index at ``index_path`` (created if missing) in line with ``directory``.

    Inputs: the folder to ingest; the index file; ``progress(stage, done, total)`` called
    after each file and each embedding batch; ``dense``: True to embed with the default
    embedder when the extras are installed, False for keyword-only, or an :class:`Embedder`
    to use; ``max_chars``: the chunk size bound (changing it re-chunks every file).
    Output: an :class:`IngestReport`. Raises ValueError for bad arguments and
    :class:`CorpusIndexError` for an unusable index; any exception leaves the index as it was.
    Cost: O(total bytes) for new or changed files plus one ``stat`` per unchanged file, plus
    one model pass per new chunk when embedding.
    """
    started = time.monotonic()
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
    embedder, dense_note = _resolve_embedder(dense)

    scan = scan_directory(root)
    try:
        conn = sqlite3.connect(path, isolation_level=None, timeout=30)
    except sqlite3.Error as exc:
        raise CorpusIndexError(f"cannot open index {str(path)!r}: {exc}") from exc
    try:
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            raise CorpusIndexError(_unreadable(path, exc)) from exc
        try:
            run = _Ingest(conn, root, scan.files, progress, embedder, max_chars)
            run.prepare(path)
            run.sync_files()
            run.embed_missing()
            counts = run.finish(dense_note)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    except sqlite3.DatabaseError as exc:
        raise CorpusIndexError(f"index {str(path)!r} is unusable: {exc}") from exc
    finally:
        conn.close()
    return IngestReport(
        accepted=tuple(run.accepted),
        replaced=tuple(run.replaced),
        skipped=tuple(run.skipped),
        removed=tuple(run.removed),
        failed=tuple(sorted([*scan.problems, *run.failed], key=_by_path)),
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
        seconds=time.monotonic() - started,
    )


def _resolve_embedder(dense: bool | Embedder) -> tuple[Embedder | None, str]:
    if dense is False:
        return None, "dense embeddings were turned off for this ingest"
    if dense is True:
        return load_embedder()
    assert not isinstance(dense, bool)
    return dense, ""


def _check_schema(conn: sqlite3.Connection, path: Path, *, allow_empty: bool) -> bool:
    """Whether the file is an empty database (only when ``allow_empty``); raises
    :class:`CorpusIndexError` when it is not a corpus index of this schema version."""
    try:
        app_id = conn.execute("PRAGMA application_id").fetchone()[0]
        tables = conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()[0]
    except sqlite3.DatabaseError as exc:
        if "file is not a database" not in str(exc):
            raise  # a lock, a journal to roll back: the caller words these
        raise CorpusIndexError(f"{str(path)!r} is not an SQLite database: {exc}") from exc
    if app_id == 0 and tables == 0:
        if allow_empty:
            return True
        raise CorpusIndexError(f"{str(path)!r} is an empty database, not a corpus index")
    if app_id != APPLICATION_ID:
        raise CorpusIndexError(
            f"{str(path)!r} is an SQLite database but not a logic-graph corpus index; "
            "give another --index path"
        )
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version != SCHEMA_VERSION:
        raise CorpusIndexError(
            f"index {str(path)!r} has schema version {version}, this code reads "
            f"{SCHEMA_VERSION}; delete it and ingest again"
        )
    problem = check_structure(conn)
    if problem:
        raise CorpusIndexError(f"index {str(path)!r} is not a well-formed corpus index: {problem}")
    return False


def check_structure(conn: sqlite3.Connection) -> str:
    """``""`` when the schema objects of ``conn`` are those this code creates, else the first
    difference: an object missing, or of another kind (a view or trigger where a table
    belongs), a table with other columns, a trigger or virtual table with other SQL, or an
    object the schema does not have. FTS5's shadow tables (``chunk_fts_*``), automatic
    indexes and ``sqlite_stat*`` tables are allowed. A query on a view can run forever and a
    foreign trigger runs on every write, so a file that passes holds nothing but data.
    Cost: O(schema objects); no table is read."""
    expected = _expected_structure()
    found: dict[str, tuple[str, str]] = {}
    for kind, name, sql in conn.execute("SELECT type, name, sql FROM sqlite_master"):
        if name.startswith(("chunk_fts_", "sqlite_stat")) and kind == "table":
            continue
        if name.startswith("sqlite_autoindex_") and kind == "index":
            continue
        if name not in expected:
            return f"unexpected {kind} {name!r}"
        found[name] = (kind, " ".join((sql or "").split()))
    for name, (kind, sql, columns) in expected.items():
        if name not in found:
            return f"{kind} {name!r} is missing"
        if found[name][0] != kind:
            return f"{name!r} is a {found[name][0]}, expected a {kind}"
        if kind == "table" and not sql.startswith("CREATE VIRTUAL"):
            actual = tuple(row[1] for row in conn.execute(f'PRAGMA table_info("{name}")'))
            if actual != columns:
                return f"table {name!r} has columns {list(actual)}, expected {list(columns)}"
        elif found[name][1] != sql:
            return f"{kind} {name!r} is not defined as this code defines it"
    return ""


_EXPECTED: dict[str, tuple[str, str, tuple[str, ...]]] = {}


def _expected_structure() -> dict[str, tuple[str, str, tuple[str, ...]]]:
    """Name -> (kind, whitespace-collapsed SQL, columns) of every object :data:`_SCHEMA`
    creates, read once from an in-memory database built with it."""
    if not _EXPECTED:
        memory = sqlite3.connect(":memory:")
        try:
            for statement in _split_statements(_SCHEMA):
                memory.execute(statement)
            for kind, name, sql in memory.execute("SELECT type, name, sql FROM sqlite_master"):
                if name.startswith(("chunk_fts_", "sqlite_autoindex_")):
                    continue
                columns = tuple(row[1] for row in memory.execute(f'PRAGMA table_info("{name}")'))
                _EXPECTED[name] = (kind, " ".join((sql or "").split()), columns)
        finally:
            memory.close()
    return _EXPECTED


class _Ingest:
    """The state of one ingest transaction (see :func:`ingest_directory`)."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        root: Path,
        files: dict[str, Path],
        progress: Progress | None,
        embedder: Embedder | None,
        max_chars: int,
    ) -> None:
        self.conn = conn
        self.root = root
        self.files = files
        self.progress = progress
        self.embedder = embedder
        self.max_chars = max_chars
        self.chunker = f"{CHUNKER_VERSION}:{max_chars}"
        self.force = False
        self.accepted: list[str] = []
        self.replaced: list[str] = []
        self.skipped: list[str] = []
        self.removed: list[str] = []
        self.failed: list[FileProblem] = []
        self.empty: list[str] = []
        self.chunks_added = 0
        self.chunks_removed = 0
        self.chunks_embedded = 0
        self.bytes_read = 0
        self.dense_note = ""

    def prepare(self, path: Path) -> None:
        """Create the schema in a new file, or check an existing one; decide whether every
        file must be re-chunked (the chunker changed) or re-embedded (the model changed)."""
        if _check_schema(self.conn, path, allow_empty=True):
            self._create_schema()
        meta = read_meta(self.conn)
        self.force = meta.get("chunker") != self.chunker
        if self.embedder is not None and meta.get("dense_model") != self.embedder.name:
            self.conn.execute("DELETE FROM chunk_vectors")
            self.conn.execute("DELETE FROM chunk_bits")

    def _create_schema(self) -> None:
        for statement in _split_statements(_SCHEMA):
            self.conn.execute(statement)
        self.conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        self.conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        self._set_meta("schema_version", str(SCHEMA_VERSION))

    def sync_files(self) -> None:
        """Skip, add or replace every scanned file; remove indexed files that are gone."""
        known = {
            row[0]: row[1:]
            for row in self.conn.execute("SELECT path, id, size, mtime_ns, sha256 FROM files")
        }
        total = len(self.files)
        for done, (relative, full) in enumerate(self.files.items(), 1):
            self._sync_one(relative, full, known.get(relative))
            if self.progress is not None:
                self.progress("read", done, total)
        for relative in sorted(set(known) - set(self.files)):
            self.chunks_removed += self._delete_file(known[relative][0])
            self.removed.append(relative)

    def _sync_one(self, relative: str, full: Path, row: tuple[int, int, int, str] | None) -> None:
        try:
            fd = open_no_follow(self.root, relative)
        except OSError as exc:
            self.failed.append(FileProblem(relative, f"cannot open: {exc.strerror or exc}"))
            return
        with os.fdopen(fd, "rb") as handle:
            stat = os.fstat(fd)
            if not S_ISREG(stat.st_mode):
                self.failed.append(FileProblem(relative, "no longer a regular file"))
                return
            same = (stat.st_size, stat.st_mtime_ns) == (row[1:3] if row else None)
            if same and not self.force:
                self.skipped.append(relative)
                return
            if stat.st_size > MAX_FILE_BYTES:
                self.failed.append(FileProblem(relative, _too_big(stat.st_size)))
                return
            try:  # one byte over the limit tells a file that grew since the fstat
                data = handle.read(MAX_FILE_BYTES + 1)
            except OSError as exc:
                self.failed.append(FileProblem(relative, f"cannot read: {exc.strerror or exc}"))
                return
        if len(data) > MAX_FILE_BYTES:
            self.failed.append(FileProblem(relative, _too_big(len(data))))
            return
        self.bytes_read += len(data)
        digest = hashlib.sha256(data).hexdigest()
        if row is not None and not self.force and digest == row[3]:
            self.conn.execute(
                "UPDATE files SET size = ?, mtime_ns = ? WHERE id = ?",
                (stat.st_size, stat.st_mtime_ns, row[0]),
            )
            self.skipped.append(relative)
            return
        try:
            pages = read_pages(full, data)
        except ReadError as exc:
            kept = " (the previously indexed version is kept)" if row is not None else ""
            self.failed.append(FileProblem(relative, f"{exc}{kept}"))
            return
        chunks = [
            chunk
            for page in pages
            for chunk in chunk_page(page.text, relative, page.number, max_chars=self.max_chars)
        ]
        if row is not None:
            self.chunks_removed += self._delete_file(row[0])
            self.replaced.append(relative)
        else:
            self.accepted.append(relative)
        if not chunks:
            self.empty.append(relative)
        cursor = self.conn.execute(
            "INSERT INTO files (path, size, mtime_ns, sha256, version, pages, chunks) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                relative,
                stat.st_size,
                stat.st_mtime_ns,
                digest,
                file_version(full.name),
                len(pages),
                len(chunks),
            ),
        )
        file_id = cursor.lastrowid
        self.conn.executemany(
            "INSERT INTO chunks (chunk_id, file_id, page, number, start_char, end_char, "
            "section, text) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [(c.id, file_id, c.page, c.number, c.start, c.end, c.section, c.text) for c in chunks],
        )
        self.chunks_added += len(chunks)

    def _delete_file(self, file_id: int) -> int:
        removed = self.conn.execute("DELETE FROM chunks WHERE file_id = ?", (file_id,)).rowcount
        self.conn.execute("DELETE FROM files WHERE id = ?", (file_id,))
        return removed

    def embed_missing(self) -> None:
        """Embed every chunk that has no vector yet (new chunks, or all after a model
        change), in batches of :data:`EMBED_BATCH`, in chunk-id order."""
        if self.embedder is None:
            return
        rows = self.conn.execute(
            "SELECT id, text, section FROM chunks WHERE id NOT IN "
            "(SELECT chunk FROM chunk_vectors) ORDER BY id"
        ).fetchall()
        for begin in range(0, len(rows), EMBED_BATCH):
            batch = rows[begin : begin + EMBED_BATCH]
            vectors = self.embedder.passages([_embed_text(text, sec) for _, text, sec in batch])
            if len(vectors) != len(batch):
                raise RuntimeError(
                    f"embedder {self.embedder.name} returned {len(vectors)} vectors "
                    f"for {len(batch)} texts"
                )
            for (chunk, _, _), vector in zip(batch, vectors, strict=True):
                if len(vector) != 4 * self.embedder.dim:
                    raise RuntimeError(
                        f"embedder {self.embedder.name} returned a {len(vector)}-byte vector, "
                        f"expected {4 * self.embedder.dim}"
                    )
                self.conn.execute("INSERT INTO chunk_vectors VALUES (?, ?)", (chunk, vector))
                self.conn.execute(
                    "INSERT INTO chunk_bits VALUES (?, ?)", (chunk, sign_bits(vector))
                )
            self.chunks_embedded += len(batch)
            if self.progress is not None:
                self.progress("embed", begin + len(batch), len(rows))

    def finish(self, dense_note: str) -> tuple[int, int, int]:
        """Write ``meta``; return (files, chunks, vectors) in the index."""
        self._set_meta("chunker", self.chunker)
        files = self.conn.execute("SELECT COUNT(*) FROM files").fetchone()[0]
        chunks = self.conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
        vectors = self.conn.execute("SELECT COUNT(*) FROM chunk_vectors").fetchone()[0]
        if self.embedder is not None:
            self._set_meta("dense_model", self.embedder.name)
            self._set_meta("dense_dim", str(self.embedder.dim))
        if chunks == 0:
            self.dense_note = "the index holds no text to embed"
        elif vectors < chunks:
            self.dense_note = dense_note or "some chunks have no dense vector"
            self.dense_note += f" ({vectors} of {chunks} chunks have vectors)"
        self._set_meta("dense_note", self.dense_note)
        self._set_meta("chunk_count", str(chunks))
        self._set_meta("vector_count", str(vectors))
        return files, chunks, vectors

    def _set_meta(self, key: str, value: str) -> None:
        self.conn.execute(
            "INSERT INTO meta (key, value) VALUES (?, ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (key, value),
        )


def _embed_text(text: str, section: str) -> str:
    """What is embedded for a chunk: its heading trail, then its text."""
    return f"{section}\n{text}" if section else text


def _split_statements(script: str) -> list[str]:
    """The statements of :data:`_SCHEMA` (triggers hold ``;`` inside ``BEGIN ... END``)."""
    statements: list[str] = []
    current: list[str] = []
    for line in script.strip().splitlines():
        current.append(line)
        joined = "\n".join(current).strip()
        if joined.endswith(";") and sqlite3.complete_statement(joined):
            statements.append(joined)
            current = []
    return statements
