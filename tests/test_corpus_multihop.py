"""Sub-question retrieval: the plan check, bridges from hop to hop, and the question's own
hits kept in the top k."""

from __future__ import annotations

from pathlib import Path

import pytest
from corpus_fixtures import write_corpus

import corpus
from corpus.multihop import (
    PlanError,
    bridge_names,
    check_plan,
    fill,
    names_subject,
    retrieve_plan,
)
from corpus.retrieval import keep_own
from orchestrator.checks import decompose

QUESTION = "In which town was the founder of the company that built the Kest Bridge born?"
CHAIN = {
    "bridges/kest.md": "The Kest Bridge spans the Olm River. Orrin Works built the Kest Bridge.",
    "firms/orrin.md": "Orrin Works has its head office in Brask. Orrin Works was founded by "
    "Hella Marsk.",
    "people/marsk.md": "Hella Marsk kept journals. Hella Marsk was born in Tavring.",
    "noise/a.md": "The Brel Bridge was built by Varn Works. The Brel Bridge is old.",
    "noise/b.md": "Ivo Dask was born in Quelby. Ivo Dask founded a company in town.",
    "noise/c.md": "A town was founded near the company of Ivo Dask, who was born there.",
}


@pytest.mark.parametrize(
    ("plan", "message"),
    [
        ([], "plan must be a list of 1 to 6"),
        (["Which company built the Kest Bridge?", "   "], r"plan\[1\] must be a non-empty"),
        (
            ["Which company built the Kest Bridge?", "Who founded the Golden Gate?"],
            r"plan\[1\] .* names 'golden gate', which the question does not name",
        ),
        (
            ["Which company built the Kest Bridge?", "What is the weather like?"],
            r"plan\[1\] .* names nothing in the question or an earlier hop",
        ),
        (
            ["Who or what is the founder of #2?", "Which company built the Kest Bridge?"],
            r"plan\[0\] .* refers to #2, but the first sub-question can refer to no earlier",
        ),
        (
            ["Which company built the Kest Bridge?", "Who founded #2?"],
            r"plan\[1\] .* refers to #2, which is not an earlier sub-question",
        ),
        (
            ["Which company built a?", "Who founded #1?"],
            r"plan\[0\] 'Which company built a\?' ends on an article: it is cut short",
        ),
    ],
)
def test_a_plan_whose_sub_question_names_nothing_the_question_or_an_earlier_hop_names_is_rejected(
    plan: list[str], message: str
) -> None:
    with pytest.raises(PlanError, match=message):
        check_plan(QUESTION, plan)


def test_the_plan_read_off_the_questions_grammar_passes_the_check() -> None:
    plan = decompose(QUESTION)
    assert plan is not None
    assert check_plan(QUESTION, plan) == plan


def test_an_invalid_plan_is_rejected_before_the_index_is_read(tmp_path: Path) -> None:
    with pytest.raises(PlanError, match="names 'golden gate'"):
        retrieve_plan(tmp_path / "missing.sqlite", QUESTION, ["Who built the Golden Gate?"])


def test_the_bridge_is_the_new_name_of_the_sentence_that_answers_the_sub_question() -> None:
    text = CHAIN["firms/orrin.md"]
    assert bridge_names("Who or what is the founder of Orrin Works?", text) == ["Hella Marsk"]
    assert bridge_names("In which town is Orrin Works headquartered?", text) == ["Brask"]
    assert bridge_names("Who founded Orrin Works?", "Orrin Works is old.") == []


def test_a_sub_question_is_run_once_per_bridge_name_of_the_hop_it_refers_to() -> None:
    assert fill("Who founded #1?", [["Orrin Works", "Varn Works"]]) == [
        "Who founded Orrin Works?",
        "Who founded Varn Works?",
    ]
    assert fill("Who founded #1?", [[]]) == ["Who founded ?"]


def test_each_later_hop_is_filled_with_the_bridge_found_before_it(tmp_path: Path) -> None:
    root = write_corpus(tmp_path / "docs", CHAIN)
    index = tmp_path / "idx.sqlite"
    corpus.ingest(root, index, dense=False)
    plan = decompose(QUESTION)
    assert plan is not None
    found = retrieve_plan(index, QUESTION, plan, 3, dense=False)
    # each hop reads a bridge off its best chunks that name what it asks about
    assert [hop.queries[0] for hop in found.hops] == [
        "Which company built the Kest Bridge?",
        "Who or what is the founder of Orrin Works?",
        "In which town was Hella Marsk born?",
    ]
    assert found.hops[0].bridge == ("Orrin Works",)  # not the Brel Bridge's Varn Works
    assert [hop.chunk_ids[0] for hop in found.hops] == [
        "bridges/kest.md#p1c1",
        "firms/orrin.md#p1c1",
        "people/marsk.md#p1c1",
    ]
    assert {hit.chunk_id for hit in found.hits} == {
        "bridges/kest.md#p1c1",
        "firms/orrin.md#p1c1",
        "people/marsk.md#p1c1",
    }
    # the question alone finds words, not the chain
    alone = corpus.retrieve(index, QUESTION, (), 3, dense=False)
    assert "people/marsk.md#p1c1" not in {hit.chunk_id for hit in alone.hits}


LOOKALIKES = {
    "a/kest.md": "The Kest Bridge was built by Orrin Works. The Kest Bridge carries two lanes.",
    "b/kest.md": "The Kest Bridge spans the Olm River. Varn Works built the Kest Bridge.",
    "c/kest.md": "Tull Works built the Kest Bridge in 1901.",
    "noise/company.md": "Brel Company built a bridge for the company that built the road bridge.",
    "firms/orrin.md": "# Orrin Works\n\nOrrin Works built bridges.\n\n## People\n\n"
    "Hella Marsk founded it in 1820.",
    "firms/varn.md": "Ivo Dask founded Varn Works and Brel Company.",
}


@pytest.fixture
def lookalikes(tmp_path: Path) -> Path:
    """An index of :data:`LOOKALIKES`."""
    index = tmp_path / "idx.sqlite"
    corpus.ingest(write_corpus(tmp_path / "docs", LOOKALIKES), index, dense=False)
    return index


LOOKALIKE_PLAN = ["Which company built the Kest Bridge?", "Who founded #1?"]
LOOKALIKE_QUESTION = "Who founded the company that built the Kest Bridge?"


def test_a_hop_ranks_the_chunks_naming_its_subject_first_and_follows_three_of_them(
    lookalikes: Path,
) -> None:
    alone = corpus.retrieve(lookalikes, LOOKALIKE_PLAN[0], (), 4)
    assert alone.hits[0].chunk_id == "noise/company.md#p1c1"  # the most relation words
    first = retrieve_plan(lookalikes, LOOKALIKE_QUESTION, LOOKALIKE_PLAN, 4).hops[0]
    assert {chunk.split("/")[0] for chunk in first.chunk_ids[:3]} == {"a", "b", "c"}
    assert first.chunk_ids[3] == "noise/company.md#p1c1"
    # three documents say who built "the Kest Bridge": each builder is followed
    assert sorted(first.bridge) == ["Orrin Works", "Tull Works", "Varn Works"]


def test_a_chunk_names_its_subject_in_its_section_trail_too(lookalikes: Path) -> None:
    found = retrieve_plan(lookalikes, LOOKALIKE_QUESTION, LOOKALIKE_PLAN, 4)
    assert "Who founded Orrin Works?" in found.hops[1].queries
    # "Hella Marsk founded it in 1820." under "Orrin Works > People"; "Ivo Dask founded
    # Varn Works" is no answer about Orrin Works, whatever it ranks
    assert "Hella Marsk" in found.hops[1].bridge
    assert names_subject("Who founded Orrin Works?", "Orrin Works > People\nHella Marsk ...")
    assert not names_subject("Who founded Orrin Works?", "Ivo Dask founded Varn Works.")


def test_the_questions_own_top_hits_cannot_be_pushed_out_by_rewrites(tmp_path: Path) -> None:
    root = write_corpus(tmp_path / "docs", CHAIN)
    index = tmp_path / "idx.sqlite"
    corpus.ingest(root, index, dense=False)
    question = "Which bridge spans the Olm River?"
    rewrites = ["Ivo Dask born town", "Ivo Dask company town", "Ivo Dask founded town born"]
    unguarded = corpus.retrieve(index, question, rewrites, 2, dense=False, keep=0)
    assert "bridges/kest.md#p1c1" not in [hit.chunk_id for hit in unguarded.hits]
    kept = corpus.retrieve(index, question, rewrites, 2, dense=False, keep=1)
    assert "bridges/kest.md#p1c1" in [hit.chunk_id for hit in kept.hits]
    (dropped,) = kept.dropped
    assert dropped.kept_for == "bridges/kest.md#p1c1"
    assert dropped.chunk_id == unguarded.hits[1].chunk_id and dropped.fused_rank == 2
    assert "made room for bridges/kest.md#p1c1, the question's own hit 1" in dropped.reason


def test_own_hits_already_in_the_top_k_change_nothing_and_at_most_half_of_k_are_kept() -> None:
    fused = [("a", 4.0), ("b", 3.0), ("c", 2.0), ("d", 1.0)]
    assert keep_own(fused, ["b", "a"], 4) == (fused, [])
    kept, dropped = keep_own(fused, ["d", "c"], 2)  # at most half of k: "d" only
    assert kept == [("a", 4.0), ("d", 1.0)] and [d.chunk_id for d in dropped] == ["b"]
