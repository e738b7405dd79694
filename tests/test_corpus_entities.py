"""The entity graph of a corpus index: extraction, incremental upkeep, crash safety, the
version-1 upgrade and the entity-graph retriever."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from corpus_fixtures import ingest_killed_after, write_corpus

import corpus
from corpus.entities import entity_ranking, extract_entities
from corpus.index import CorpusIndexError
from corpus.index_schema import DELETE_TRIGGER

CHAIN = {
    "bridges/kest.md": "The Kest Bridge spans the Olm River. Orrin Works built the Kest Bridge.",
    "firms/orrin.md": "Orrin Works was founded by Hella Marsk in 1841.",
    "people/marsk.md": "Hella Marsk was born in Tavring.",
    "noise/a.md": "The Brel Bridge spans the Saba River.",
    "noise/b.md": "Tavring holds a market every week.",
}


def entity_rows(index: Path) -> list[tuple[str, str]]:
    """Every (chunk id, entity name) mention of the index, sorted."""
    with sqlite3.connect(index) as conn:
        return sorted(
            conn.execute(
                "SELECT chunks.chunk_id, entity.name FROM chunk_entity "
                "JOIN chunks ON chunks.id = chunk_entity.chunk "
                "JOIN entity ON entity.id = chunk_entity.entity"
            ).fetchall()
        )


def entity_names(index: Path) -> list[str]:
    with sqlite3.connect(index) as conn:
        return sorted(row[0] for row in conn.execute("SELECT name FROM entity"))


@pytest.fixture
def chain_index(tmp_path: Path) -> tuple[Path, Path]:
    """:data:`CHAIN` written under ``tmp_path/docs`` and ingested keyword-only into
    ``tmp_path/idx.sqlite``: (corpus root, index)."""
    root = write_corpus(tmp_path / "docs", CHAIN)
    index = tmp_path / "idx.sqlite"
    corpus.ingest(root, index, dense=False)
    return root, index


def test_names_are_capitalised_phrases_numbers_with_units_versions_and_titles() -> None:
    text = (
        "In 2021 the Bank of Ashby moved Rack 7 to hall B. Each shelf carries 3.5 kg. "
        'Git 2.23.0 added "Switch Branches" to the manual.'
    )
    assert extract_entities(text) == [
        "bank of ashby",
        "rack 7",
        "3.5 kg",
        "git",
        "2.23.0",
        "switch branches",
    ]


def test_a_sentence_opening_word_alone_is_not_a_name() -> None:
    assert extract_entities("The pump failed. It was old. Which one? When it rained.") == []


def test_a_bridge_chunk_is_found_only_through_the_entity_graph(
    chain_index: tuple[Path, Path],
) -> None:
    _, index = chain_index
    question = "Which company built the Kest Bridge?"
    plain = corpus.retrieve(index, question, (), 3, dense=False)
    assert "firms/orrin.md#p1c1" not in [hit.chunk_id for hit in plain.hits]
    graph = corpus.retrieve(index, question, (), 3, dense=False, entities=1.0)
    found = {hit.chunk_id: hit for hit in graph.hits}
    # "Orrin Works was founded by Hella Marsk" shares no word with the question: only the
    # name "Orrin Works" of the Kest Bridge chunk leads to it
    assert found["firms/orrin.md#p1c1"].keyword_rank is None
    assert found["firms/orrin.md#p1c1"].entity_rank == 1


def test_the_entity_ranking_follows_names_and_skips_entities_past_the_fanout_cap(
    chain_index: tuple[Path, Path],
) -> None:
    _, index = chain_index
    with sqlite3.connect(index) as conn:
        assert entity_ranking(conn, 5, names=["Hella Marsk"]) == [
            "firms/orrin.md#p1c1",
            "people/marsk.md#p1c1",
        ]
        # "Tavring" is named by two chunks: with a cap of 1 it is not followed
        assert entity_ranking(conn, 5, names=["Tavring"], fanout=1) == []
        assert entity_ranking(conn, 5, seeds=["people/marsk.md#p1c1"]) == [
            "firms/orrin.md#p1c1",
            "noise/b.md#p1c1",
        ]


def test_a_reingest_updates_the_entity_graph_and_drops_names_no_chunk_holds(
    chain_index: tuple[Path, Path],
    tmp_path: Path,
) -> None:
    root, index = chain_index
    (root / "people" / "marsk.md").write_text("Hella Marsk was born in Quelby.")
    (root / "noise" / "a.md").unlink()
    corpus.ingest(root, index, dense=False)
    names = entity_names(index)
    assert "quelby" in names and "brel bridge" not in names and "saba river" not in names
    fresh = tmp_path / "fresh.sqlite"
    corpus.ingest(root, fresh, dense=False)
    assert entity_rows(index) == entity_rows(fresh)
    assert entity_names(index) == entity_names(fresh)


def test_the_entity_tables_stay_consistent_after_a_kill_9_during_ingest(
    chain_index: tuple[Path, Path], tmp_path: Path
) -> None:
    root, index = chain_index
    before = entity_rows(index), entity_names(index)
    for i in range(200):
        (root / "bulk" / f"f{i:03d}.md").parent.mkdir(exist_ok=True)
        (root / "bulk" / f"f{i:03d}.md").write_text(f"Firm {i} was founded by Hella Marsk.")
    (root / "noise" / "a.md").unlink()
    assert ingest_killed_after(root, index, 120)
    assert (entity_rows(index), entity_names(index)) == before
    corpus.ingest(root, index, dense=False)
    fresh = tmp_path / "fresh.sqlite"
    corpus.ingest(root, fresh, dense=False)
    assert entity_rows(index) == entity_rows(fresh) and len(entity_rows(index)) > 200


def downgrade_to_version_1(index: Path) -> None:
    """Make ``index`` what schema version 1 wrote: no entity tables, the old trigger."""
    old_trigger = DELETE_TRIGGER.replace("    DELETE FROM chunk_entity WHERE chunk = old.id;\n", "")
    with sqlite3.connect(index) as conn:
        conn.executescript(
            "DROP TRIGGER chunks_ad; DROP TABLE chunk_entity; DROP TABLE entity;"
            + old_trigger
            + "PRAGMA user_version = 1; UPDATE meta SET value = '1' WHERE key = 'schema_version';"
        )


def test_a_version_1_index_is_refused_by_readers_and_upgraded_by_the_next_ingest(
    chain_index: tuple[Path, Path],
) -> None:
    root, index = chain_index
    expected = entity_rows(index)
    downgrade_to_version_1(index)
    with pytest.raises(CorpusIndexError, match=r"schema version 1.*run the ingest again"):
        corpus.search(index, "Kest Bridge", dense=False)
    report = corpus.ingest(root, index, dense=False)
    assert report.chunks_added == 0 and len(report.skipped) == len(CHAIN)
    assert entity_rows(index) == expected
    assert corpus.index_info(index).schema_version == 2
    (root / "firms" / "orrin.md").unlink()  # the upgraded trigger takes mentions with chunks
    corpus.ingest(root, index, dense=False)
    assert not [row for row in entity_rows(index) if row[0].startswith("firms/")]
