"""Readers of a corpus index survive a dead writer, a live writer and a crafted file: every
query is time-bounded and cancellable, and a file that is not what an ingest writes is
refused before any of its data is read."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from corpus_fixtures import HashEmbedder, vec_search_available, write_corpus

import corpus
from corpus import CorpusIndexError, index_info, retrieve, search_evidence
from corpus import index as index_module
from corpus.index import QueryGuard, open_index

REPO = Path(__file__).resolve().parents[1]
RECURSIVE = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r)"


@pytest.fixture
def index(tmp_path: Path) -> Path:
    path = tmp_path / "idx.sqlite"
    corpus.ingest(write_corpus(tmp_path / "docs"), path, dense=False)
    return path


def kill_mid_transaction(index: Path) -> None:
    """Change the index in a process killed before it commits, with enough changes that
    SQLite has already written pages to the file: its rollback journal stays behind."""
    script = textwrap.dedent(
        f"""
        import os, signal, sqlite3
        conn = sqlite3.connect({str(index)!r}, isolation_level=None)
        conn.execute("PRAGMA cache_size = 10")
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("DELETE FROM chunks")
        conn.executemany(
            "INSERT INTO meta VALUES (?, ?)", [(f"k{{i}}", "x" * 1000) for i in range(2000)]
        )
        os.kill(os.getpid(), signal.SIGKILL)
        """
    )
    subprocess.run([sys.executable, "-c", script], cwd=REPO, timeout=60, check=False)


def craft(index: Path, *statements: str) -> None:
    with sqlite3.connect(index) as conn:
        for statement in statements:
            conn.execute(statement)


def test_readers_work_on_an_index_whose_ingest_was_killed_mid_write(index: Path) -> None:
    before = index_info(index)
    kill_mid_transaction(index)
    assert Path(f"{index}-journal").exists()
    assert index_info(index) == before
    found = search_evidence(str(index), "tape library", 1)
    assert found["hits"][0]["chunk_id"] == "racks/rack7-v1.2.md#p1c2"


def test_a_reader_that_meets_an_ingest_lock_says_the_index_is_busy(
    index: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(index_module, "BUSY_TIMEOUT_S", 0.05)
    writer = sqlite3.connect(index, isolation_level=None)
    try:
        writer.execute("BEGIN EXCLUSIVE")
        with pytest.raises(CorpusIndexError, match="busy, an ingest is running"):
            index_info(index)
        assert "busy, an ingest is running" in search_evidence(str(index), "rack", 1)["error"]
    finally:
        writer.close()


@pytest.mark.parametrize(
    ("statements", "problem"),
    [
        (
            [
                "DROP TABLE meta",
                f"CREATE VIEW meta(key, value) AS {RECURSIVE} SELECT 'k' || n, 'v' FROM r",
            ],
            "'meta' is a view, expected a table",
        ),
        (
            ["CREATE TRIGGER extra AFTER INSERT ON files BEGIN SELECT 1; END"],
            "unexpected trigger 'extra'",
        ),
        (["ALTER TABLE files ADD COLUMN note TEXT"], "table 'files' has columns"),
        (["DROP TABLE chunk_bits"], "table 'chunk_bits' is missing"),
        (
            [
                "DROP TRIGGER chunks_ai",
                "CREATE TRIGGER chunks_ai AFTER INSERT ON chunks BEGIN SELECT 1; END",
            ],
            "trigger 'chunks_ai' is not defined as this code defines it",
        ),
    ],
)
def test_an_index_with_views_triggers_or_columns_of_its_own_is_refused_on_open(
    index: Path, statements: list[str], problem: str
) -> None:
    craft(index, *statements)
    started = time.monotonic()
    result = search_evidence(str(index), "rack", 1)
    assert "not a well-formed corpus index" in result["error"]
    assert problem in result["error"]
    assert time.monotonic() - started < 5
    with pytest.raises(CorpusIndexError, match="not a well-formed corpus index"):
        corpus.ingest(index.parent / "docs", index, dense=False)


def test_a_query_past_the_time_limit_is_stopped_with_an_error_naming_the_limit(
    index: Path,
) -> None:
    started = time.monotonic()
    with (
        pytest.raises(CorpusIndexError, match=r"stopped after 0\.2 s \(the time limit\)"),
        open_index(index, QueryGuard(0.2)) as conn,
    ):
        conn.execute(f"{RECURSIVE} SELECT COUNT(*) FROM r").fetchone()
    assert time.monotonic() - started < 3


def test_a_cancelled_search_stops_its_queries(index: Path) -> None:
    cancelled = threading.Event()
    threading.Timer(0.1, cancelled.set).start()
    with (
        pytest.raises(CorpusIndexError, match="the search was cancelled"),
        open_index(index, QueryGuard(cancel=cancelled.is_set)) as conn,
    ):
        conn.execute(f"{RECURSIVE} SELECT COUNT(*) FROM r").fetchone()


def test_readers_never_change_the_index_file(index: Path) -> None:
    with open_index(index) as conn, pytest.raises(sqlite3.OperationalError, match="readonly"):
        conn.execute("DELETE FROM files")
    assert index_info(index).files == 3


@pytest.mark.skipif(not vec_search_available(), reason="needs sqlite-vec ([corpus] extra)")
def test_a_malformed_vector_blob_gives_an_error_naming_the_vectors(tmp_path: Path) -> None:
    path = tmp_path / "idx.sqlite"
    embedder = HashEmbedder()
    corpus.ingest(write_corpus(tmp_path / "docs"), path, dense=embedder)
    craft(path, "UPDATE chunk_vectors SET embedding = x'010203'")
    with pytest.raises(CorpusIndexError, match="dense vectors are malformed"):
        retrieve(path, "tape library", k=1, dense=embedder)


def test_an_index_file_the_reader_may_not_write_is_still_read(index: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root may write any file")
    index.chmod(0o444)
    try:
        assert index_info(index).files == 3
    finally:
        index.chmod(0o644)
