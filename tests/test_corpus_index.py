"""The corpus index: incremental, all-or-nothing ingest into one SQLite file."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest
from corpus_fixtures import CORPUS, HAS_PYPDF, ingest_killed_after, make_pdf, write_corpus

import corpus
from corpus import CorpusIndexError, index_info
from corpus.index import file_version


def ingest(root: Path, index: Path, **kwargs: object) -> corpus.IngestReport:
    return corpus.ingest(root, index, dense=False, **kwargs)  # type: ignore[arg-type]


def snapshot(index: Path) -> list[tuple[object, ...]]:
    with sqlite3.connect(index) as conn:
        files = conn.execute("SELECT path, sha256, chunks FROM files ORDER BY path").fetchall()
        chunks = conn.execute("SELECT chunk_id, text FROM chunks ORDER BY chunk_id").fetchall()
    return [*files, *chunks]


def fts_consistent(index: Path) -> bool:
    with sqlite3.connect(index) as conn:
        conn.execute("INSERT INTO chunk_fts(chunk_fts, rank) VALUES ('integrity-check', 1)")
        return bool(conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok")


def test_a_first_ingest_accepts_every_readable_file_and_reports_the_rest(
    tmp_path: Path,
) -> None:
    root = write_corpus(tmp_path / "docs")
    (root / "bad.txt").write_bytes(b"\xff\xfe\xfa")
    (root / "image.png").write_bytes(b"\x89PNG")
    (root / ".hidden").mkdir()
    (root / ".hidden" / "secret.md").write_text("not ingested")
    (root / "blank.md").write_text("\n\n")
    report = ingest(root, tmp_path / "idx.sqlite")
    assert report.accepted == ("blank.md", "notes.txt", "power/ups.html", "racks/rack7-v1.2.md")
    assert [(p.path, p.reason) for p in report.failed] == [
        ("bad.txt", "not UTF-8 text (invalid byte at offset 0)")
    ]
    assert report.ignored == ("image.png",)
    assert report.empty == ("blank.md",)
    assert not report.ok
    assert report.files_total == 4 and report.chunks_total == report.chunks_added > 0
    assert report.dense is False and "turned off" in report.dense_note
    assert fts_consistent(tmp_path / "idx.sqlite")


def test_chunks_keep_path_page_offsets_version_and_content_hash(tmp_path: Path) -> None:
    root = write_corpus(tmp_path / "docs")
    index = tmp_path / "idx.sqlite"
    ingest(root, index)
    with sqlite3.connect(index) as conn:
        row = conn.execute(
            "SELECT f.path, f.version, f.sha256, c.page, c.start_char, c.end_char, c.text "
            "FROM chunks c JOIN files f ON f.id = c.file_id WHERE c.chunk_id = ?",
            ("racks/rack7-v1.2.md#p1c1",),
        ).fetchone()
    path, version, sha, page, start, end, text = row
    assert (path, version, page) == ("racks/rack7-v1.2.md", "1.2", 1)
    assert CORPUS[path][start:end] == text
    import hashlib

    assert sha == hashlib.sha256(CORPUS[path].encode()).hexdigest()


def test_re_ingesting_an_unchanged_folder_touches_nothing(tmp_path: Path) -> None:
    root = write_corpus(tmp_path / "docs")
    index = tmp_path / "idx.sqlite"
    ingest(root, index)
    before = snapshot(index)
    report = ingest(root, index)
    assert report.skipped == ("notes.txt", "power/ups.html", "racks/rack7-v1.2.md")
    assert report.accepted == report.replaced == report.removed == ()
    assert report.bytes_read == 0 and report.chunks_added == report.chunks_removed == 0
    assert snapshot(index) == before


def test_a_touched_but_identical_file_is_skipped_after_hashing(tmp_path: Path) -> None:
    root = write_corpus(tmp_path / "docs")
    index = tmp_path / "idx.sqlite"
    ingest(root, index)
    os.utime(root / "notes.txt", ns=(1, 1))
    report = ingest(root, index)
    assert "notes.txt" in report.skipped and report.bytes_read > 0
    assert ingest(root, index).bytes_read == 0  # the new time was recorded


def test_changed_files_are_replaced_deleted_removed_and_new_ones_added(tmp_path: Path) -> None:
    root = write_corpus(tmp_path / "docs")
    index = tmp_path / "idx.sqlite"
    ingest(root, index)
    (root / "notes.txt").write_text("Cooling moved to hall Z.", encoding="utf-8")
    (root / "power" / "ups.html").unlink()
    (root / "new.md").write_text("# New\n\nA new file about hall Q.", encoding="utf-8")
    report = ingest(root, index)
    assert report.replaced == ("notes.txt",)
    assert report.removed == ("power/ups.html",)
    assert report.accepted == ("new.md",)
    assert report.skipped == ("racks/rack7-v1.2.md",)
    texts: dict[str, str] = dict(snapshot(index)[3:])  # type: ignore[arg-type]
    assert texts["notes.txt#p1c1"] == "Cooling moved to hall Z."
    assert not any(key.startswith("power/") for key in texts)
    assert [h.chunk_id for h in corpus.search(index, "hall Z cooling", 1, dense=False)] == [
        "notes.txt#p1c1"
    ]
    assert corpus.search(index, "diesel generator", 3, dense=False) == []
    assert fts_consistent(index)


def test_a_file_that_turns_unreadable_keeps_its_previous_version(tmp_path: Path) -> None:
    root = write_corpus(tmp_path / "docs")
    index = tmp_path / "idx.sqlite"
    ingest(root, index)
    (root / "notes.txt").write_bytes(b"\x00binary now")
    report = ingest(root, index)
    assert [p.path for p in report.failed] == ["notes.txt"]
    assert "previously indexed version is kept" in report.failed[0].reason
    assert corpus.search(index, "chillers", 1, dense=False)[0].path == "notes.txt"


def test_changing_the_chunk_size_re_chunks_every_file(tmp_path: Path) -> None:
    root = write_corpus(tmp_path / "docs")
    index = tmp_path / "idx.sqlite"
    ingest(root, index)
    report = ingest(root, index, max_chars=100)
    assert len(report.replaced) == 3 and report.skipped == ()
    with sqlite3.connect(index) as conn:
        longest = conn.execute("SELECT MAX(LENGTH(text)) FROM chunks").fetchone()[0]
    assert longest <= 100


def test_an_exception_mid_ingest_leaves_the_previous_index_intact(tmp_path: Path) -> None:
    root = write_corpus(tmp_path / "docs")
    index = tmp_path / "idx.sqlite"
    ingest(root, index)
    before = snapshot(index)
    (root / "notes.txt").write_text("changed", encoding="utf-8")
    (root / "racks" / "rack7-v1.2.md").unlink()
    for i in range(5):
        (root / f"extra{i}.md").write_text(f"extra file {i}", encoding="utf-8")

    def fail_halfway(stage: str, done: int, total: int) -> None:
        if done == 4:
            raise RuntimeError("disk on fire")

    with pytest.raises(RuntimeError, match="disk on fire"):
        ingest(root, index, progress=fail_halfway)
    assert snapshot(index) == before
    assert fts_consistent(index)


def test_a_killed_ingest_process_leaves_the_previous_index_consistent(tmp_path: Path) -> None:
    root = write_corpus(tmp_path / "docs")
    index = tmp_path / "idx.sqlite"
    ingest(root, index)
    before = snapshot(index)
    for i in range(200):
        (root / "bulk" / f"f{i:03d}.md").parent.mkdir(exist_ok=True)
        (root / "bulk" / f"f{i:03d}.md").write_text(f"# Bulk {i}\n\nbulk text {i}.")
    (root / "notes.txt").unlink()
    assert ingest_killed_after(root, index, 120)
    assert snapshot(index) == before
    assert fts_consistent(index)
    report = ingest(root, index)
    assert len(report.accepted) == 200 and report.removed == ("notes.txt",)


@pytest.mark.skipif(not HAS_PYPDF, reason="needs the optional pypdf package ([corpus] extra)")
def test_pdf_pages_become_chunks_with_their_page_numbers(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    (root / "manual v2.0.pdf").write_bytes(make_pdf(["Intro page.", "Rack 9 is in hall D."]))
    index = tmp_path / "idx.sqlite"
    report = ingest(root, index)
    assert report.accepted == ("manual v2.0.pdf",)
    hit = corpus.search(index, "rack 9 hall", 1, dense=False)[0]
    assert (hit.chunk_id, hit.page, hit.version) == ("manual v2.0.pdf#p2c1", 2, "2.0")


@pytest.mark.parametrize(
    ("name", "version"),
    [
        ("manual-v1.2.md", "1.2"),
        ("spec_v3.txt", "3"),
        ("notes 2.0.1.pdf", "2.0.1"),
        ("report-2024-05-01.md", None),
        ("vortex.md", None),
        ("v7", "7"),
        ("plain.txt", None),
    ],
)
def test_the_version_is_read_from_the_file_name(name: str, version: str | None) -> None:
    assert file_version(name) == version


def test_a_database_that_is_not_a_corpus_index_is_refused(tmp_path: Path) -> None:
    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE t (x)")
    root = write_corpus(tmp_path / "docs")
    with pytest.raises(CorpusIndexError, match="not a logic-graph corpus index"):
        ingest(root, other)
    (tmp_path / "junk.sqlite").write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(CorpusIndexError, match=r"not an SQLite database|unusable"):
        ingest(root, tmp_path / "junk.sqlite")
    with pytest.raises(CorpusIndexError, match="not a logic-graph corpus index"):
        index_info(other)


@pytest.mark.parametrize(
    ("directory", "index", "kwargs", "field"),
    [
        ("missing", "idx.sqlite", {}, "directory"),
        (None, "idx.sqlite", {}, "directory"),
        ("docs", "", {}, "index_path"),
        ("docs", "docs", {}, "index_path"),
        ("docs", "nofolder/idx.sqlite", {}, "index_path"),
        ("docs", "idx.sqlite", {"progress": 3}, "progress"),
        ("docs", "idx.sqlite", {"dense": "yes"}, "dense"),
        ("docs", "idx.sqlite", {"max_chars": 5}, "max_chars"),
    ],
)
def test_bad_ingest_arguments_raise_a_value_error_naming_the_field(
    tmp_path: Path, directory: str | None, index: str, kwargs: dict[str, object], field: str
) -> None:
    write_corpus(tmp_path / "docs")
    with pytest.raises(ValueError, match=field):
        corpus.ingest(
            None if directory is None else tmp_path / directory,  # type: ignore[arg-type]
            tmp_path / index if index else "",
            **kwargs,  # type: ignore[arg-type]
        )


def test_index_info_counts_files_chunks_and_vectors(tmp_path: Path) -> None:
    root = write_corpus(tmp_path / "docs")
    index = tmp_path / "idx.sqlite"
    report = ingest(root, index)
    info = index_info(index)
    assert (info.files, info.chunks, info.vectors) == (3, report.chunks_total, 0)
    assert info.schema_version == 2 and info.size_bytes > 0
    with pytest.raises(ValueError, match="does not exist"):
        index_info(tmp_path / "nope.sqlite")
