"""Dedup: the design's M1 cases, the guards and the merge policy."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graph_server.dedup import same_claim
from graph_server.errors import InvalidInput
from graph_server.records import AssertGraphAnswer
from graph_server.similarity import claim_key, is_similar, normalize
from graph_server.store import GraphStore


def node(
    node_id: str, claim: str, node_type: str = "given", confidence: float = 0.8
) -> dict[str, Any]:
    return {"id": node_id, "claim": claim, "type": node_type, "confidence": confidence}


def ingest(
    store: GraphStore, run_id: str, *nodes: dict[str, Any], edges: Any = ()
) -> AssertGraphAnswer:
    return store.assert_graph("g", list(nodes), list(edges), run_id=run_id)


def holding(
    *nodes: dict[str, Any], run: str = "r1", edges: Any = (), store: GraphStore | None = None
) -> GraphStore:
    """``store`` (a new default one when None) after ingesting ``nodes`` and ``edges`` of
    ``run``."""
    store = store if store is not None else GraphStore()
    ingest(store, run, *nodes, edges=edges)
    return store


def two_runs(
    first: dict[str, Any], second: dict[str, Any], runs: tuple[str, str] = ("r1", "r2")
) -> tuple[GraphStore, AssertGraphAnswer]:
    """A store holding node ``first`` of one run, and the reply to ingesting ``second`` of
    another."""
    store = holding(first, run=runs[0])
    return store, ingest(store, runs[1], second)


def test_case_and_punctuation_variants_merge_with_run_ids_unioned() -> None:
    store, result = two_runs(
        node("r1:n1", "Server X runs Linux"), node("r2:n1", "server x runs linux.")
    )
    assert result.auto_merged == [["r1:n1", "r2:n1"]]
    (kept,) = store.get_graph("g").nodes
    assert kept.id == "r1:n1"
    assert kept.run_ids == ["r1", "r2"]
    assert kept.aliases == ["server x runs linux."]
    assert kept.merged_ids == ["r2:n1"]


def test_negated_claim_is_not_merged_and_mutual_attacks_are_created() -> None:
    store, result = two_runs(
        node("r1:n1", "Server X runs Linux"), node("r2:n1", "Server X does not run Linux")
    )
    assert result.auto_merged == []
    assert result.contradictions_created == [["r1:n1", "r2:n1"]]
    edges = {(e.src, e.dst, e.relation) for e in store.get_graph("g").edges}
    assert edges == {("r1:n1", "r2:n1", "attacks"), ("r2:n1", "r1:n1", "attacks")}
    assert store.disputed_nodes("g", "r1:n1").contradiction_pairs == [["r1:n1", "r2:n1"]]


@pytest.mark.parametrize(
    ("first", "second"),
    [
        pytest.param("trellium melts at 412 C", "trellium melts at 350 C", id="numbers"),
        pytest.param(
            "The backup job finishes on time",
            "The backup job doesn't finish on time",
            id="contraction_is_negation",
        ),
        pytest.param(
            "the nightly batch on cluster east processed 1200 jobs without errors",
            "the nightly batch on cluster east processed 1300 jobs without errors",
            id="similar_but_for_a_number",
        ),
    ],
)
def test_a_differing_number_or_a_negation_is_a_contradiction_not_a_merge(
    first: str, second: str
) -> None:
    _, result = two_runs(node("a", first), node("b", second))
    assert result.auto_merged == []
    assert result.contradictions_created == [["a", "b"]]


def test_double_negation_is_not_a_contradiction() -> None:
    a, b = claim_key("x9 is not offline"), claim_key("x9 is never not offline")
    assert a.negations % 2 != b.negations % 2  # parity differs: guard fires
    c = claim_key("it is not false that x9 is offline")
    assert c.negations == 2 and c.negations % 2 == claim_key("x9 is offline").negations % 2


def test_thousands_separators_are_canonicalised() -> None:
    assert normalize("Traffic reached 84,200 requests.") == normalize(
        "traffic reached 84200 requests"
    )


def test_unrelated_claims_do_not_merge() -> None:
    assert not is_similar(
        claim_key("rack 7 has spare capacity"), claim_key("server x9 runs linux"), 0.7, 0.85
    )


def test_edges_are_repointed_and_parallel_edges_collapse() -> None:
    store = holding(
        node("r1:g", "the survey lists server x9"),
        node("r1:c", "x9 is usable", "conclusion", 0.7),
        edges=[{"src": "r1:g", "dst": "r1:c", "relation": "supports", "confidence": 0.6}],
    )
    result = ingest(
        store,
        "r2",
        node("r2:g", "The survey lists server X9!"),
        node("r2:c", "X9 is usable.", "conclusion", 0.9),
        edges=[{"from": "r2:g", "to": "r2:c", "relation": "supports", "confidence": 0.9}],
    )
    assert sorted(result.auto_merged) == [["r1:c", "r2:c"], ["r1:g", "r2:g"]]
    graph = store.get_graph("g")
    assert [n.id for n in graph.nodes] == ["r1:c", "r1:g"]
    assert [edge.model_dump() for edge in graph.edges] == [
        {
            "src": "r1:g",
            "dst": "r1:c",
            "relation": "supports",
            "confidence": 0.9,
            "run_ids": ["r1", "r2"],
        }
    ]
    conclusion = next(n for n in graph.nodes if n.id == "r1:c")
    assert conclusion.confidence == 0.9


def test_earliest_run_is_kept_in_natural_order() -> None:
    _, result = two_runs(
        node("r10:n1", "The cooling loop failed at noon"),
        node("r2:n1", "the cooling loop failed at noon."),
        runs=("r10", "r2"),
    )
    assert result.auto_merged == [["r2:n1", "r10:n1"]]


@pytest.mark.parametrize(
    ("first", "second", "expected"),
    [
        ("given", "inference", "given"),
        ("inference", "assumption", "inference"),
        ("assumption", "given", "given"),
    ],
)
def test_merged_type_follows_precedence(first: str, second: str, expected: str) -> None:
    store, _ = two_runs(
        node("a", "The pump station shut down", first),
        node("b", "the pump station shut down.", second),
    )
    (kept,) = store.get_graph("g").nodes
    assert kept.type == expected


@pytest.mark.parametrize("other", ["given", "inference", "assumption"])
def test_a_conclusion_never_absorbs_or_joins_a_non_conclusion(other: str) -> None:
    store, result = two_runs(
        node("a", "The pump station shut down", other),
        node("b", "the pump station shut down.", "conclusion"),
    )
    assert result.auto_merged == [] and result.contradictions_created == []
    assert len(store.get_graph("g").nodes) == 2


def test_live_paraphrase_merges_into_refuted_node_which_stays_refuted() -> None:
    store = holding(node("r2:n1", "The vendor shipped the firmware in March"), run="r2")
    store.mark_refuted("g", "r2:n1", "the changelog says April")
    result = ingest(store, "r1", node("r1:n1", "the vendor shipped the firmware in march."))
    assert result.auto_merged == [["r2:n1", "r1:n1"]]
    (kept,) = store.get_graph("g").nodes
    assert kept.refuted is True and kept.refute_reason == "the changelog says April"
    assert kept.run_ids == ["r1", "r2"]


def test_merge_never_bridges_a_contradiction_through_a_third_claim() -> None:
    store = holding(
        node("a", "the east pump station shut down early on monday"),
        node("b", "the east pump station did not shut down early on monday"),
    )
    # c is similar to both a and b; it may join one of them, never both.
    ingest(store, "r2", node("c", "the east pump station shut down early monday"))
    ids = [n.id for n in store.get_graph("g").nodes]
    assert "a" in ids and "b" in ids


PUMP_FAILED = "the pump at site four failed twice"


def unmerged(*claims: str) -> GraphStore:
    """A store whose thresholds merge nothing, holding ``claims`` as nodes a, b, c, ... of r1."""
    strict = GraphStore(jaccard_threshold=1.0, ratio_threshold=1.0)
    return holding(
        *(node(chr(ord("a") + i), claim) for i, claim in enumerate(claims)), store=strict
    )


def test_merge_duplicates_with_strict_thresholds_merges_less() -> None:
    store = unmerged(PUMP_FAILED, f"{PUMP_FAILED} today")
    assert store.get_graph("g").nodes[1].id == "b"
    result = store.merge_duplicates("g", jaccard_threshold=0.7, ratio_threshold=0.85)
    assert result.merges == [["a", "b"]]


def test_merge_duplicates_is_idempotent() -> None:
    store = unmerged(
        PUMP_FAILED, f"{PUMP_FAILED} today", "the pump at site four did not fail twice"
    )
    loose: dict[str, Any] = {"jaccard_threshold": 0.7, "ratio_threshold": 0.85}
    first = store.merge_duplicates("g", **loose)
    snapshot = store.get_graph("g")
    assert first.merges
    assert store.merge_duplicates("g", **loose).model_dump(by_alias=True) == {
        "merges": [],
        "contradictions_created": [],
        "contradictions_withheld": [],
    }
    assert store.get_graph("g") == snapshot


@pytest.mark.parametrize("bad", [-0.1, 1.5, "high", True])
def test_merge_duplicates_rejects_bad_thresholds(bad: Any) -> None:
    store = holding(node("a", "x"))
    with pytest.raises(InvalidInput) as refused:
        store.merge_duplicates("g", jaccard_threshold=bad)
    error = str(refused.value)
    assert "jaccard_threshold" in error


def test_claims_naming_different_identifiers_stay_apart_without_contradicting() -> None:
    _, result = two_runs(node("a", "Server x9 runs Linux"), node("b", "server x8 runs linux."))
    assert result.auto_merged == [] and result.contradictions_created == []


def test_identical_wordings_from_many_runs_collapse_into_one_node() -> None:
    store = GraphStore()
    for run in range(1, 7):
        ingest(store, f"r{run}", node(f"r{run}:n1", "The generator in hall B is offline."))
    (kept,) = store.get_graph("g").nodes
    assert kept.id == "r1:n1"
    assert kept.merged_ids == [f"r{run}:n1" for run in range(2, 7)]


WORDS = ["x9", "x8", "runs", "Linux", "not", "the", "server", "rack", "7", "9", "cron", "job"]


@given(
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=6),
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=6),
)
@settings(max_examples=200, deadline=None)
def test_same_claim_agrees_with_what_the_store_merges(first: list[str], second: list[str]) -> None:
    # The pairwise rule the orchestrator anchors with, against the store's own dedup of the
    # same two claims (one run each, neither with a source).
    a, b = " ".join(first), " ".join(second)
    _, result = two_runs(node("a", a, "inference"), node("b", b, "inference"))
    assert same_claim(a, b) == bool(result.auto_merged)


def test_applying_a_plan_to_a_shallow_copy_leaves_the_original_graph_as_it_was() -> None:
    # networkx's graph.copy() shares attribute values: a merge must not grow the run-id sets
    # of the graph it was copied from.
    from graph_server.dedup import apply_plan, plan_merges
    from graph_server.fixture import TRELLIUM, claims_graph

    original = claims_graph([*TRELLIUM, ("g", "the lab notes list trellium", "r1")])
    original.add_edge("g", "n1", key="supports", confidence=0.7, run_ids={"r1"})
    original.add_edge("g", "n2", key="supports", confidence=0.7, run_ids={"r2"})
    trial = original.copy()
    assert apply_plan(trial, plan_merges(trial, 0.7, 0.85))[0] == [["n1", "n2"]]
    assert trial.nodes["n1"]["run_ids"] == trial.edges["g", "n1", "supports"]["run_ids"]
    assert original.nodes["n1"]["run_ids"] == {"r1"}
    assert original.edges["g", "n1", "supports"]["run_ids"] == {"r1"}
