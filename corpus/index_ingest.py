"""One ingest transaction's work on the open index: schema, file sync, embeddings, ``meta``
(see :func:`corpus.index.ingest_directory`, which opens, commits and reports).
"""

from __future__ import annotations

import hashlib
import itertools
import os
import re
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from stat import S_ISREG

from corpus.chunking import CHUNKER_VERSION, iter_chunk_rows
from corpus.embed import Embedder, sign_bits
from corpus.entities import drop_orphans, store_mentions
from corpus.index_scan import FileProblem, open_no_follow, too_big
from corpus.index_schema import (
    APPLICATION_ID,
    FIRST_INGEST_KEY,
    SCHEMA,
    SCHEMA_VERSION,
    UPGRADE_FROM_1,
    check_schema,
    read_meta,
    split_statements,
)
from corpus.readers import MAX_FILE_BYTES, Page, ReadError, read_pages

EMBED_BATCH = 16
"""Chunks embedded per model call."""
INSERT_BATCH = 512
"""Chunks inserted per statement while a file is stored."""
MAX_CHUNKS_PER_FILE = 200_000
"""A file that would make more chunks is a failed file, not indexed (200 MB of prose, the
size limit, makes about 175,000 at the default bound): it bounds the rows, index entries and
embeddings that one file can cost."""

Progress = Callable[[str, int, int], None]
"""``progress(stage, done, total)``; stages are ``"read"`` (files) and ``"embed"`` (chunks)."""

_VERSION = re.compile(r"(?:^|[-_ .])v?(\d+(?:\.\d+)+)(?=$|[-_ .])|(?:^|[-_ .])v(\d+)(?=$|[-_ .])")


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


@dataclass
class IngestRun:
    """The state of one ingest transaction (see :func:`corpus.index.ingest_directory`): its
    inputs, then what it did so far."""

    conn: sqlite3.Connection
    root: Path
    files: dict[str, Path]
    progress: Progress | None
    embedder: Embedder | None
    max_chars: int
    force: bool = False
    """Every file is re-chunked: the chunker changed since the index was written."""
    accepted: list[str] = field(default_factory=list)
    replaced: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    failed: list[FileProblem] = field(default_factory=list)
    empty: list[str] = field(default_factory=list)
    chunks_added: int = 0
    chunks_removed: int = 0
    chunks_embedded: int = 0
    bytes_read: int = 0
    dense_note: str = ""
    words_left_out: int = 0
    """Word occurrences left out of dense vectors by the per-document word budget."""

    @property
    def chunker(self) -> str:
        """The chunker's rules version and size bound, as the index's meta records them."""
        return f"{CHUNKER_VERSION}:{self.max_chars}"

    def prepare(self, path: Path) -> bool:
        """Create the schema in a new file, or check an existing one; decide whether every
        file must be re-chunked (the chunker changed) or re-embedded (the model changed).
        Returns whether the schema was created (the caller commits it at once). A version-1
        index is upgraded first, in this transaction (:meth:`_upgrade_from_1`)."""
        self._upgrade_from_1()
        created = check_schema(self.conn, path, allow_empty=True)
        if created:
            self._create_schema()
            # Committed with the schema and cleared by the commit of the ingest itself, so
            # a first ingest that was killed leaves an index that says so, not an empty file.
            self._set_meta(FIRST_INGEST_KEY, "not finished")
        meta = read_meta(self.conn)
        self.force = meta.get("chunker") != self.chunker
        if self.embedder is not None and meta.get("dense_model") != self.embedder.name:
            self.conn.execute("DELETE FROM chunk_vectors")
            self.conn.execute("DELETE FROM chunk_bits")
        return created

    def _upgrade_from_1(self) -> None:
        """Add the entity graph to a version-1 corpus index and fill it from the stored
        chunks (no file is read); anything else is left to :func:`check_schema`."""
        pragma = self.conn.execute
        if pragma("PRAGMA application_id").fetchone()[0] != APPLICATION_ID:
            return
        if pragma("PRAGMA user_version").fetchone()[0] != 1:
            return
        for statement in split_statements(UPGRADE_FROM_1):
            self.conn.execute(statement)
        rows = self.conn.execute("SELECT id, section, text FROM chunks ORDER BY id")
        while batch := rows.fetchmany(INSERT_BATCH):
            store_mentions(self.conn, [(row, embed_text(text, sec)) for row, sec, text in batch])
        self.conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        self._set_meta("schema_version", str(SCHEMA_VERSION))

    def _create_schema(self) -> None:
        for statement in split_statements(SCHEMA):
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
        """Skip, add or replace the file at ``relative`` (``row``: its id, size, mtime and
        SHA-256 in the index; None when it is new), or record why it failed."""
        changed = self._changed_pages(relative, full, row)
        if changed is not None:
            self._store_pages(relative, full, row, *changed)

    def _read_changed(
        self, relative: str, row: tuple[int, int, int, str] | None
    ) -> tuple[os.stat_result, bytes] | None:
        """The file's status and bytes, or None when it is skipped (same size and time as
        its row) or failed (recorded). Opened without following links, read once."""
        try:
            fd = open_no_follow(self.root, relative)
        except OSError as exc:
            self.failed.append(FileProblem(relative, f"cannot open: {exc.strerror or exc}"))
            return None
        with os.fdopen(fd, "rb") as handle:
            stat = os.fstat(fd)
            if not S_ISREG(stat.st_mode):
                self.failed.append(FileProblem(relative, "no longer a regular file"))
                return None
            same = (stat.st_size, stat.st_mtime_ns) == (row[1:3] if row else None)
            if same and not self.force:
                self.skipped.append(relative)
                return None
            if stat.st_size > MAX_FILE_BYTES:
                self.failed.append(FileProblem(relative, too_big(stat.st_size)))
                return None
            try:  # one byte over the limit tells a file that grew since the fstat
                data = handle.read(MAX_FILE_BYTES + 1)
            except OSError as exc:
                self.failed.append(FileProblem(relative, f"cannot read: {exc.strerror or exc}"))
                return None
        if len(data) > MAX_FILE_BYTES:
            self.failed.append(FileProblem(relative, too_big(len(data))))
            return None
        self.bytes_read += len(data)
        return stat, data

    def _changed_pages(
        self, relative: str, full: Path, row: tuple[int, int, int, str] | None
    ) -> tuple[os.stat_result, str, list[Page]] | None:
        """The status, SHA-256 and pages of a changed file, or None when it is skipped (its
        SHA-256 matches its row: only its time is brought up to date) or failed (recorded).
        Its bytes are let go on return: the pages hold the text now."""
        read = self._read_changed(relative, row)
        if read is None:
            return None
        stat, data = read
        digest = hashlib.sha256(data).hexdigest()
        if row is not None and not self.force and digest == row[3]:
            self.conn.execute(
                "UPDATE files SET size = ?, mtime_ns = ? WHERE id = ?",
                (stat.st_size, stat.st_mtime_ns, row[0]),
            )
            self.skipped.append(relative)
            return None
        try:
            return stat, digest, read_pages(full, data)
        except ReadError as exc:
            self.failed.append(FileProblem(relative, f"{exc}{_kept(row)}"))
            return None

    def _store_pages(
        self,
        relative: str,
        full: Path,
        row: tuple[int, int, int, str] | None,
        stat: os.stat_result,
        digest: str,
        pages: list[Page],
    ) -> None:
        """Replace the file's row and chunks (or add them), all or nothing: a file that
        passes the chunk limit halfway is taken back out whole, and its previously indexed
        version comes back (a savepoint per file)."""
        self.conn.execute("SAVEPOINT one_file")
        removed = 0
        if row is not None:
            removed = self._delete_file(row[0])
        cursor = self.conn.execute(
            "INSERT INTO files (path, size, mtime_ns, sha256, version, pages, chunks) "
            "VALUES (?, ?, ?, ?, ?, ?, 0)",
            (relative, stat.st_size, stat.st_mtime_ns, digest, file_version(full.name), len(pages)),
        )
        file_id = cursor.lastrowid
        added = self._insert_chunks(file_id, relative, pages)
        if added > MAX_CHUNKS_PER_FILE:
            self.conn.execute("ROLLBACK TO one_file")
            self.conn.execute("RELEASE one_file")
            self.failed.append(
                FileProblem(
                    relative,
                    f"would make more than {MAX_CHUNKS_PER_FILE:,} chunks, the limit per file; "
                    f"it was not indexed{_kept(row)}",
                )
            )
            return
        self.conn.execute("UPDATE files SET chunks = ? WHERE id = ?", (added, file_id))
        self.conn.execute("RELEASE one_file")
        if row is not None:
            self.chunks_removed += removed
            self.replaced.append(relative)
        else:
            self.accepted.append(relative)
        if not added:
            self.empty.append(relative)
        self.chunks_added += added

    def _insert_chunks(self, file_id: int | None, relative: str, pages: list[Page]) -> int:
        """Insert the chunks of ``pages`` in batches of :data:`INSERT_BATCH` as the chunker
        makes them, so memory holds one batch, not the file's chunks; stop one chunk past
        :data:`MAX_CHUNKS_PER_FILE`. Returns how many were inserted."""
        chunks = (
            row
            for page in pages
            for row in iter_chunk_rows(page.text, relative, page.number, max_chars=self.max_chars)
        )
        added = 0
        while added <= MAX_CHUNKS_PER_FILE:
            batch = list(
                itertools.islice(chunks, min(INSERT_BATCH, MAX_CHUNKS_PER_FILE + 1 - added))
            )
            if not batch:
                break
            self.conn.executemany(
                "INSERT INTO chunks (chunk_id, file_id, page, number, start_char, end_char, "
                "section, text) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (chunk, file_id, page, number, start, end, section, text)
                    for chunk, page, number, start, end, section, text in batch
                ],
            )
            marks = ",".join("?" * len(batch))
            rows = dict(
                self.conn.execute(
                    f"SELECT chunk_id, id FROM chunks WHERE chunk_id IN ({marks})",
                    [chunk for chunk, *_ in batch],
                )
            )
            store_mentions(
                self.conn,
                [(rows[row[0]], embed_text(row[6], row[5])) for row in batch],
            )
            added += len(batch)
        return added

    def _delete_file(self, file_id: int) -> int:
        removed = self.conn.execute("DELETE FROM chunks WHERE file_id = ?", (file_id,)).rowcount
        self.conn.execute("DELETE FROM files WHERE id = ?", (file_id,))
        return removed

    def embed_missing(self) -> None:
        """Embed every chunk that has no vector yet (new chunks, or all after a model
        change), file by file in chunk order, in batches of :data:`EMBED_BATCH`. An embedder
        with a per-document word budget (the static one: ``document_words``) gets a fresh
        budget for each file's chunks, so what one file costs it is bounded by that file's
        size, and its vectors do not depend on the files embedded before."""
        if self.embedder is None:
            return
        rows = self.conn.execute(
            "SELECT id, file_id, text, section FROM chunks WHERE id NOT IN "
            "(SELECT chunk FROM chunk_vectors) ORDER BY file_id, id"
        ).fetchall()
        budget_for = getattr(self.embedder, "document_words", None)
        done = 0
        for _, group in itertools.groupby(rows, key=lambda row: row[1]):
            chunks = list(group)  # the rows themselves: no text is copied
            words = None
            if callable(budget_for):  # the characters of embed_text(text, section), summed
                chars = sum(len(text) + (len(sec) + 1 if sec else 0) for _, _, text, sec in chunks)
                words = budget_for(chars)
            for begin in range(0, len(chunks), EMBED_BATCH):
                batch = chunks[begin : begin + EMBED_BATCH]
                texts = [embed_text(text, section) for _, _, text, section in batch]
                vectors = (
                    self.embedder.passages(texts)
                    if words is None
                    else self.embedder.passages(texts, words)  # type: ignore[call-arg]
                )
                self._store_vectors([chunk for chunk, _, _, _ in batch], vectors)
                done += len(batch)
                if self.progress is not None:
                    self.progress("embed", done, len(rows))
            if words is not None and words.left_out:
                self.words_left_out += words.left_out

    def _store_vectors(self, chunks: list[int], vectors: list[bytes]) -> None:
        assert self.embedder is not None
        if len(vectors) != len(chunks):
            raise RuntimeError(
                f"embedder {self.embedder.name} returned {len(vectors)} vectors "
                f"for {len(chunks)} texts"
            )
        for chunk, vector in zip(chunks, vectors, strict=True):
            if len(vector) != 4 * self.embedder.dim:
                raise RuntimeError(
                    f"embedder {self.embedder.name} returned a {len(vector)}-byte vector, "
                    f"expected {4 * self.embedder.dim}"
                )
            self.conn.execute("INSERT INTO chunk_vectors VALUES (?, ?)", (chunk, vector))
            self.conn.execute("INSERT INTO chunk_bits VALUES (?, ?)", (chunk, sign_bits(vector)))
        self.chunks_embedded += len(chunks)

    def finish(self, dense_note: str) -> tuple[int, int, int]:
        """Write ``meta``; return (files, chunks, vectors) in the index."""
        self.conn.execute("DELETE FROM meta WHERE key = ?", (FIRST_INGEST_KEY,))
        if self.chunks_removed:
            drop_orphans(self.conn)
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


def _kept(row: tuple[int, int, int, str] | None) -> str:
    """What a failure message adds for a file that was indexed before (its ``row``)."""
    return " (the previously indexed version is kept)" if row is not None else ""


def embed_text(text: str, section: str) -> str:
    """What is embedded for a chunk, and what its entities are read from: its heading
    trail, then its text."""
    return f"{section}\n{text}" if section else text
