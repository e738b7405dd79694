"""The indexed dedup plan equals the plan built from every similar pair.

``graph_server.dedup.plan_merges`` never compares every pair of claims: it searches
signature blocks and a content-word index, then looks for blocked pairs only inside
the components that could merge. ``dedup_reference.reference_plan`` classifies every
similar pair the O(n^2) loop finds. The clusters and contradictions must be the same
on random claim sets (paraphrases, typos, negations, numbers, aliases from earlier
merges, sources, conclusions, attack edges), with and without a focus.
"""

from __future__ import annotations

import random
from typing import Any

import networkx as nx
from dedup_reference import reference_plan
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import claim_lists
from test_crosscheck import dedup_payloads, replay

from graph_server.candidates import Variants
from graph_server.dedup import plan_merges
from graph_server.similarity import is_variant

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
THRESHOLDS = st.sampled_from([0.0, 0.5, 0.7, 0.85, 1.0])


def _graph_of(claims: list[str], kinds: list[str]) -> nx.MultiDiGraph:
    graph = nx.MultiDiGraph()
    for index, (claim, kind) in enumerate(zip(claims, kinds, strict=True)):
        graph.add_node(
            f"c{index}",
            claim=claim,
            type=kind,
            confidence=0.8,
            run_ids={f"r{index % 3}"},
            refuted=False,
            refute_reason=None,
            aliases=[],
            merged_ids=[],
            source=None,
        )
    return graph


@SETTINGS
@given(
    claim_lists(max_size=30),
    st.lists(st.sampled_from(["given", "inference", "conclusion"]), min_size=30, max_size=30),
    THRESHOLDS,
    THRESHOLDS,
    st.integers(min_value=0, max_value=2**16),
)
def test_indexed_plan_equals_the_every_pair_plan_with_and_without_focus(
    claims: list[str], kinds: list[str], jaccard: float, ratio: float, seed: int
) -> None:
    graph = _graph_of(claims, kinds[: len(claims)])
    assert plan_merges(graph, jaccard, ratio) == reference_plan(graph, jaccard, ratio)
    focus = random.Random(seed).sample(sorted(graph.nodes), k=len(claims) // 3)
    assert plan_merges(graph, jaccard, ratio, focus=focus) == reference_plan(
        graph, jaccard, ratio, focus=focus
    )


@SETTINGS
@given(dedup_payloads(), st.integers(min_value=0, max_value=2**16))
def test_indexed_plan_equals_the_every_pair_plan_on_graphs_holding_merged_aliases(
    payload: dict[str, Any], seed: int
) -> None:
    store, _ = replay(payload, shuffle_seed=None)
    graph = store._graphs["g"].graph if "g" in store._graphs else nx.MultiDiGraph()
    for jaccard, ratio in ((0.7, 0.85), (0.5, 0.6)):
        assert plan_merges(graph, jaccard, ratio) == reference_plan(graph, jaccard, ratio)
        focus = random.Random(seed).sample(sorted(graph.nodes), k=graph.number_of_nodes() // 2)
        assert plan_merges(graph, jaccard, ratio, focus=focus) == reference_plan(
            graph, jaccard, ratio, focus=focus
        )


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet="abcdefghij", min_size=5, max_size=10), max_size=40, unique=True))
def test_typo_variants_from_the_buckets_equal_the_pairwise_variant_test(words: list[str]) -> None:
    variants = Variants(words)
    for word in words:
        expected = tuple(
            sorted(other for other in words if other != word and is_variant(word, other))
        )
        assert variants.of(word) == expected


def test_templated_claims_in_blocks_of_one_produce_no_candidate_pairs_to_check() -> None:
    claims = [f"shipment sh{i:05d} of pumps left Oslo on May {i % 28 + 1}" for i in range(3000)]
    graph = _graph_of(claims, ["given"] * len(claims))
    plan = plan_merges(graph, 0.7, 0.85)
    assert plan.clusters == [] and plan.contradictions == []
