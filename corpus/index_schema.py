"""The corpus index's schema: its tables, the checks that a file is a corpus index of this
schema version holding nothing but data, and its ``meta`` reader (see :mod:`corpus.index`).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

SCHEMA_VERSION = 2
"""2 added the entity graph (``entity``, ``chunk_entity``); an ingest upgrades a version-1
index in place (:data:`UPGRADE_FROM_1`), readers ask for that ingest."""
APPLICATION_ID = 0x4C474358  # "LGCX"
FIRST_INGEST_KEY = "first_ingest"
"""A ``meta`` key present only while the index's first ingest has not committed."""

ENTITY_SCHEMA = """
CREATE TABLE entity (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
CREATE TABLE chunk_entity (
    chunk INTEGER NOT NULL,
    entity INTEGER NOT NULL,
    PRIMARY KEY (chunk, entity)
) WITHOUT ROWID;
CREATE INDEX chunk_entity_by_entity ON chunk_entity(entity, chunk);
"""
"""The entity graph (:mod:`corpus.entities`): the names each chunk mentions."""

DELETE_TRIGGER = """
CREATE TRIGGER chunks_ad AFTER DELETE ON chunks BEGIN
    INSERT INTO chunk_fts(chunk_fts, rowid, text, section)
    VALUES ('delete', old.id, old.text, old.section);
    DELETE FROM chunk_vectors WHERE chunk = old.id;
    DELETE FROM chunk_bits WHERE chunk = old.id;
    DELETE FROM chunk_entity WHERE chunk = old.id;
END;
"""
"""A chunk's FTS entry, vector, sign bits and entity mentions go with it."""

SCHEMA = (
    """
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
CREATE TABLE chunk_vectors (chunk INTEGER PRIMARY KEY, embedding BLOB NOT NULL);
CREATE TABLE chunk_bits (chunk INTEGER PRIMARY KEY, bits BLOB NOT NULL);
"""
    + ENTITY_SCHEMA
    + DELETE_TRIGGER
)

UPGRADE_FROM_1 = ENTITY_SCHEMA + "DROP TRIGGER chunks_ad;" + DELETE_TRIGGER
"""What turns a version-1 index into version 2 (its entity tables are then filled from the
stored chunks)."""


class CorpusIndexError(Exception):
    """The index file cannot be used (not a corpus index, another schema, locked, corrupt).

    The message says which and why, in one line.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from corpus import CorpusIndexError, search
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     notes = Path(tmp, "notes.sqlite")
    ...     _ = notes.write_text("not a database")
    ...     try:
    ...         search(notes, "rack 7")
    ...     except CorpusIndexError as error:
    ...         print(str(error).split(": ")[-1])
    file is not a database
    """


def read_meta(conn: sqlite3.Connection) -> dict[str, str]:
    """The ``meta`` table as a dict. O(rows)."""
    return dict(conn.execute("SELECT key, value FROM meta").fetchall())


def check_schema(conn: sqlite3.Connection, path: Path, *, allow_empty: bool) -> bool:
    """Whether the file is an empty database (only when ``allow_empty``); raises
    :class:`CorpusIndexError` when it is not a corpus index of this schema version, and,
    for a reader (not ``allow_empty``), when its first ingest has not committed."""
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
    if version == 1:
        raise CorpusIndexError(
            f"index {str(path)!r} has schema version 1, this code reads 2 (it adds the entity "
            "graph); run the ingest again to upgrade it in place (no file is read again)"
        )
    if version != SCHEMA_VERSION:
        raise CorpusIndexError(
            f"index {str(path)!r} has schema version {version}, this code reads "
            f"{SCHEMA_VERSION}; delete it and ingest again"
        )
    problem = check_structure(conn)
    if problem:
        raise CorpusIndexError(f"index {str(path)!r} is not a well-formed corpus index: {problem}")
    if not allow_empty:
        first = conn.execute("SELECT 1 FROM meta WHERE key = ?", (FIRST_INGEST_KEY,)).fetchone()
        if first is not None:
            raise CorpusIndexError(
                f"index {str(path)!r} holds no corpus yet: its first ingest has not finished "
                "(it is running, or it was stopped); run the ingest again if it was stopped"
            )
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
    """Name -> (kind, whitespace-collapsed SQL, columns) of every object :data:`SCHEMA`
    creates, read once from an in-memory database built with it."""
    if not _EXPECTED:
        memory = sqlite3.connect(":memory:")
        try:
            for statement in split_statements(SCHEMA):
                memory.execute(statement)
            for kind, name, sql in memory.execute("SELECT type, name, sql FROM sqlite_master"):
                if name.startswith(("chunk_fts_", "sqlite_autoindex_")):
                    continue
                columns = tuple(row[1] for row in memory.execute(f'PRAGMA table_info("{name}")'))
                _EXPECTED[name] = (kind, " ".join((sql or "").split()), columns)
        finally:
            memory.close()
    return _EXPECTED


def split_statements(script: str) -> list[str]:
    """The statements of :data:`SCHEMA` (triggers hold ``;`` inside ``BEGIN ... END``)."""
    statements: list[str] = []
    current: list[str] = []
    for line in script.strip().splitlines():
        current.append(line)
        joined = "\n".join(current).strip()
        if joined.endswith(";") and sqlite3.complete_statement(joined):
            statements.append(joined)
            current = []
    return statements
