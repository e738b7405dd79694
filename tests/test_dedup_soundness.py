"""Sound dedup: claims about different things never merge; citations and sources decide."""

from __future__ import annotations

from typing import Any, cast

import pytest
from hypothesis import given
from hypothesis import strategies as st

from graph_server.dedup import _must_stay_apart
from graph_server.errors import InvalidInput
from graph_server.records import AssertGraphAnswer
from graph_server.similarity import claim_key, differ_by_substitution, is_variant, tokenize
from graph_server.store import GraphStore

DIFFERENT_THINGS = [
    (
        "The founder of Embstone Ironworks was born in Braskthorpe.",
        "The founder of Embstone Ironworks was born in Braskmere.",
    ),
    ("the suspect owns a red car", "the suspect owns a blue car"),
    ("The invoice was paid by Acme.", "The invoice was paid by Apex."),
    ("mortality in men rose", "mortality in women rose"),
    ("mortality in men rose sharply", "mortality in women rose sharply"),
    ("Ferrowood Mill stands on the river bank", "Ferrowell Mill stands on the river bank"),
    ("Vidar Tarvard founded Tullton Ironworks", "Vidar Tarvelm founded Tullton Ironworks"),
]
SAME_THING = [
    ("Server x9 runs Linux [D2]", "server x9 runs linux."),
    ("Server x9 runs Linux [D2.1]", "Server x9 runs Linux (D1.3)"),
    ("The servers run Linux", "the server runs linux"),
    ("Wenna Korick was born in Quelheim", "Wenna Korick was born in the town of Quelheim"),
    ("The cron scheduler runs only on Linux hosts", "only on linux hosts runs the cron scheduler"),
    ("Ferrowell Mill stands on the river bank", "Ferowell Mill stands on the river bank"),
    (
        "The inspection report was signed by Halvorsen",
        "the inspcetion report was signed by Halvorsen",
    ),
    ("Server X runs Linux", "server x runs linux."),
]


def two_runs(a: str, b: str, **extra: Any) -> AssertGraphAnswer:
    store = GraphStore()
    store.assert_graph("g", [{"id": "a", "claim": a, "type": "given", **extra}], run_id="r1")
    return store.assert_graph("g", [{"id": "b", "claim": b, "type": "given"}], run_id="r2")


@pytest.mark.parametrize(("a", "b"), DIFFERENT_THINGS)
def test_claims_about_different_things_neither_merge_nor_attack(a: str, b: str) -> None:
    result = two_runs(a, b)
    assert result.auto_merged == [] and result.contradictions_created == []
    store = GraphStore()
    store.assert_graph("g", [{"id": "a", "claim": a, "type": "given"}], run_id="r1")
    store.assert_graph("g", [{"id": "b", "claim": b, "type": "given"}], dedup=False)
    assert store.merge_duplicates("g").model_dump(by_alias=True) == {
        "merges": [],
        "contradictions_created": [],
        "contradictions_withheld": [],
    }


@pytest.mark.parametrize(("a", "b"), SAME_THING)
def test_restatements_of_one_claim_still_merge(a: str, b: str) -> None:
    assert two_runs(a, b).auto_merged == [["a", "b"]]


def test_citation_markers_are_no_tokens() -> None:
    assert tokenize("x9 runs Linux [D2] (D3.1) [D1, D4]") == ["x9", "runs", "linux"]
    assert tokenize("x9 runs Linux [D1][D2.3] (D4)") == ["x9", "runs", "linux"]
    assert tokenize("see [note 2]") == ["see", "note", "2"]


def test_the_spec_guards_still_hold() -> None:
    assert two_runs("Server X runs Linux", "server x runs linux.").auto_merged == [["a", "b"]]
    negated = two_runs("Server X runs Linux", "Server X does not run Linux")
    assert negated.auto_merged == [] and negated.contradictions_created == [["a", "b"]]
    numeric = two_runs("trellium melts at 412 C", "trellium melts at 350 C")
    assert numeric.auto_merged == [] and numeric.contradictions_created == [["a", "b"]]


def test_claims_with_different_sources_never_merge_and_a_sourced_node_is_kept() -> None:
    result = two_runs("Server x9 runs Linux", "server x9 runs linux.", source="D1.1")
    assert result.auto_merged == [["a", "b"]]
    store = GraphStore()
    store.assert_graph(
        "g", [{"id": "a", "claim": "x9 runs Linux", "type": "inference"}], run_id="r1"
    )
    store.assert_graph(
        "g",
        [{"id": "D2.1", "claim": "x9 runs linux.", "type": "given", "source": "D2.1"}],
        run_id="r2",
    )
    (kept,) = store.get_graph("g").nodes
    assert (kept.id, kept.source, kept.type) == ("D2.1", "D2.1", "given")
    store.assert_graph(
        "g",
        [{"id": "D3.1", "claim": "x9 runs Linux!", "type": "given", "source": "D3.1"}],
        run_id="r3",
    )
    assert sorted(n.id for n in store.get_graph("g").nodes) == ["D2.1", "D3.1"]


def test_a_source_is_validated_and_cannot_change_under_one_id() -> None:
    store = GraphStore()
    # A boolean is no source (a number is: it is taken as its decimal string, like an id).
    bad = store.assert_graph("g", [{"id": "a", "claim": "c", "type": "given", "source": True}])
    assert "source must be a non-empty string" in bad.rejected[0].reason
    store.assert_graph("g", [{"id": "a", "claim": "c", "type": "given", "source": "D1.1"}])
    again = store.assert_graph("g", [{"id": "a", "claim": "c", "type": "given", "source": "D1.2"}])
    assert "differs from the source 'D1.1'" in again.rejected[0].reason
    same = store.assert_graph("g", [{"id": "a", "claim": "c", "type": "given"}])
    assert same.rejected == []
    assert store.get_graph("g").nodes[0].source == "D1.1"


def test_dedup_false_ingests_without_merging_and_a_bad_flag_is_named() -> None:
    store = GraphStore()
    store.assert_graph("g", [{"id": "a", "claim": "x9 runs Linux", "type": "given"}])
    result = store.assert_graph(
        "g", [{"id": "b", "claim": "x9 runs linux.", "type": "given"}], dedup=False
    )
    assert result.auto_merged == [] and len(store.get_graph("g").nodes) == 2
    with pytest.raises(InvalidInput, match="dedup must be true or false"):
        store.assert_graph("g", [], dedup=cast(Any, "no"))  # the wrong type, deliberately


def test_a_typo_variant_needs_a_long_word_its_first_letters_and_one_edit() -> None:
    assert is_variant("ferrowell", "ferowell")  # a letter dropped
    assert is_variant("inspection", "inspcetion")  # two neighbours swapped: one edit
    assert not is_variant("acme", "acne") and not is_variant("braskthorpe", "braskmere")
    assert not is_variant("blade", "balde")  # too short to tell a typo from another word
    assert not is_variant("marlberg", "yarlberg")  # near-miss names differ up front
    assert not is_variant("ferrowood", "ferrowell")


@pytest.mark.parametrize(("flag", "merged"), [(True, 1), ("true", 1), (" False ", 0), (False, 0)])
def test_dedup_takes_a_bool_or_its_json_spelling(flag: Any, merged: int) -> None:
    store = GraphStore()
    store.assert_graph("g", [{"id": "a", "claim": "x9 runs Linux", "type": "given"}])
    result = store.assert_graph(
        "g", [{"id": "b", "claim": "x9 runs linux.", "type": "given"}], dedup=flag
    )
    assert len(result.auto_merged) == merged and result.contradictions_created == []


@pytest.mark.parametrize("flag", ["no", 1, 0, None, "yes", ""])
def test_any_other_dedup_value_is_refused_naming_the_field(flag: Any) -> None:
    with pytest.raises(InvalidInput, match=r"^dedup must be true or false") as refused:
        GraphStore().assert_graph("g", [], dedup=flag)
    assert refused.value.field == "dedup"


def test_dedup_false_creates_no_contradiction_and_merge_duplicates_catches_up() -> None:
    store = GraphStore()
    store.assert_graph("g", [{"id": "a", "claim": "trellium melts at 412 C", "type": "given"}])
    result = store.assert_graph(
        "g", [{"id": "b", "claim": "trellium melts at 350 C", "type": "given"}], dedup=False
    )
    assert result.auto_merged == [] and result.contradictions_created == []
    assert store.merge_duplicates("g").contradictions_created == [["a", "b"]]


def test_a_merged_id_keeps_the_source_of_the_node_it_was_merged_into() -> None:
    store = GraphStore()
    store.assert_graph(
        "g", [{"id": "a", "claim": "x9 runs Linux", "type": "given", "source": "D1.1"}]
    )
    merged = {"id": "b", "claim": "x9 runs linux.", "type": "given"}
    assert store.assert_graph("g", [merged]).auto_merged == [["a", "b"]]
    assert store.assert_graph("g", [merged]).rejected == []
    assert store.assert_graph("g", [{**merged, "source": "D1.1"}]).rejected == []
    (refused,) = store.assert_graph("g", [{**merged, "source": "D4.2"}]).rejected
    assert "source 'D4.2' of id 'b' differs from the source 'D1.1'" in refused.reason


def test_a_node_without_a_source_takes_the_one_it_is_re_asserted_with() -> None:
    store = GraphStore()
    node = {"id": "a", "claim": "x9 runs Linux", "type": "given"}
    store.assert_graph("g", [node])
    assert store.assert_graph("g", [{**node, "source": " D2.1 "}]).rejected == []
    assert store.get_graph("g").nodes[0].source == "D2.1"


SLOT_WORDS = ("red", "blue", "car", "owns", "suspect", "men", "ferrowell", "ferowell")
TYPO_WORDS = ("inspection", "inspcetion", "marlberg", "yarlberg")
WORDS = st.sampled_from([*SLOT_WORDS, *TYPO_WORDS])


@given(st.frozensets(WORDS, max_size=5), st.frozensets(WORDS, max_size=5))
def test_the_slot_guard_is_symmetric_and_never_fires_on_a_subset(
    a: frozenset[str], b: frozenset[str]
) -> None:
    assert differ_by_substitution(a, b) == differ_by_substitution(b, a)
    if a <= b or b <= a:
        assert not differ_by_substitution(a, b)


@given(st.text(alphabet="abcdeg", max_size=9), st.text(alphabet="abcdeg", max_size=9))
def test_the_typo_rule_is_symmetric(a: str, b: str) -> None:
    assert is_variant(a, b) == is_variant(b, a)


CLAIMS = [claim for pair in DIFFERENT_THINGS + SAME_THING for claim in pair]


def test_keeping_two_claims_apart_is_symmetric_on_every_listed_pair() -> None:
    for a in CLAIMS:
        for b in CLAIMS:
            assert _must_stay_apart(claim_key(a), claim_key(b)) == _must_stay_apart(
                claim_key(b), claim_key(a)
            ), (a, b)


@given(st.lists(st.sampled_from(CLAIMS), min_size=2, max_size=10))
def test_no_cluster_ever_holds_two_claims_the_slot_guard_keeps_apart(claims: list[str]) -> None:
    store = GraphStore()
    for i, claim in enumerate(claims):
        store.assert_graph("g", [{"id": f"n{i}", "claim": claim, "type": "given"}], run_id=f"r{i}")
    store.merge_duplicates("g")
    for kept in store.get_graph("g").nodes:
        texts = [kept.claim, *kept.aliases]
        keys = [claim_key(t).content for t in texts]
        assert not any(differ_by_substitution(x, y) for x in keys for y in keys)


def test_two_wordings_a_substitution_apart_never_meet_through_a_third() -> None:
    # Each is close to the first claim, but they fill one slot differently ("runs" /
    # "server") and are too far apart to be compared directly.
    store = GraphStore()
    claims = ["server x9 runs Linux", "X9 RUNS LINUX", "SERVER X9 LINUX"]
    nodes = [{"id": f"c{i}", "claim": c, "type": "given"} for i, c in enumerate(claims)]
    assert store.assert_graph("g", nodes).auto_merged == [["c0", "c1"]]
    kept = {node.id: node.aliases for node in store.get_graph("g").nodes}
    assert kept == {"c0": ["X9 RUNS LINUX"], "c2": []}
    assert store.merge_duplicates("g").merges == []


def test_two_sources_never_meet_through_a_claim_that_has_none() -> None:
    store = GraphStore()
    nodes = [
        {"id": "a", "claim": "the pump failed twice", "type": "given"},
        {"id": "b", "claim": "the pump failed twice", "type": "given", "source": "D1.1"},
        {"id": "c", "claim": "the pump failed twice", "type": "given", "source": "D2.1"},
    ]
    result = store.assert_graph("g", nodes)
    assert result.auto_merged == [["b", "a"]]
    sources = sorted((node.source for node in store.get_graph("g").nodes), key=str)
    assert sources == ["D1.1", "D2.1"]
