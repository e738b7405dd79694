"""The rack-7 fixture reproduces every expectation of the design's worked example.

The design's expected ``surviving`` set lists G, which contradicts its own rule:
G is an inference with no supporting path from any given, exactly like F, so it
does not survive. G is still labelled IN (nothing attacks it) and A is OUT.
"""

from __future__ import annotations

import pytest

from graph_server.fixture import CONCLUSION, RUNS
from graph_server.store import GraphStore


@pytest.fixture
def store() -> GraphStore:
    store = GraphStore()
    for run_id, nodes, edges in RUNS:
        result = store.assert_graph("rack7", nodes, edges, run_id=run_id)
        assert result.rejected == []
        assert result.auto_merged == []
    return store


def test_fixture_ingests_cleanly_and_reingest_is_idempotent(store: GraphStore) -> None:
    before = store.get_graph("rack7")
    for run_id, nodes, edges in RUNS:
        again = store.assert_graph("rack7", nodes, edges, run_id=run_id)
        assert again.rejected == [] and again.auto_merged == []
    assert store.get_graph("rack7") == before
    assert len(before.nodes) == 8 and len(before.edges) == 7


def test_merge_pass_finds_nothing_to_merge(store: GraphStore) -> None:
    assert store.merge_duplicates("rack7").model_dump(by_alias=True) == {
        "merges": [],
        "contradictions_created": [],
        "contradictions_withheld": [],
    }


def test_check_structure_reports_orphans_f_and_g_and_nothing_else(store: GraphStore) -> None:
    assert store.check_structure("rack7", CONCLUSION).model_dump(by_alias=True) == {
        "orphans": ["F", "G"],
        "assumptions": [],
        "cycles": [],
        "unreachable_conclusion": False,
        "refuted_but_feeding": [],
    }


def test_support_width_is_two_disjoint_routes(store: GraphStore) -> None:
    width = store.support_width("rack7", CONCLUSION)
    assert width.disjoint_paths == 2
    routes = {tuple(path) for path in width.paths}
    assert ("D", "Z") in routes
    assert routes - {("D", "Z")} <= {("A", "C", "E", "Z"), ("B", "C", "E", "Z")}
    # Flow: D->Z carries 0.7, the C->E->Z route is capped by E's 0.8.
    assert width.max_flow == pytest.approx(1.5)


def test_critical_links_cut_has_two_nodes_and_no_bridges(store: GraphStore) -> None:
    links = store.critical_links("rack7", CONCLUSION)
    assert len(links.min_cut_nodes) == 2
    assert "__S__" not in links.min_cut_nodes
    assert links.bridge_edges == []
    confidences = [entry.min_confidence_on_edge for entry in links.ranked]
    assert confidences == sorted(confidences)
    assert links.ranked[0].edge == ["D", "Z"]


def test_surviving_claims_resolve_the_g_discrepancy_by_the_reachability_rule(
    store: GraphStore,
) -> None:
    surviving = store.surviving_claims("rack7")
    assert "G" in surviving.in_
    assert surviving.out == ["A"]
    assert surviving.undecided == []
    assert surviving.surviving == ["B", "C", "D", "E", "Z"]


def test_refuting_d_drops_width_to_one_and_d_is_reported_feeding(store: GraphStore) -> None:
    result = store.mark_refuted("rack7", "D", "survey column misread")
    assert result.ok is True
    assert (result.width_before, result.width_after) == (2, 1)
    width = store.support_width("rack7", CONCLUSION)
    assert width.disjoint_paths == 1
    assert "D" not in {node for path in width.paths for node in path}
    assert store.check_structure("rack7", CONCLUSION).refuted_but_feeding == ["D"]
    assert "D" in store.surviving_claims("rack7").out


def test_disputed_nodes_include_g_as_attacker_of_load_bearing_a(store: GraphStore) -> None:
    disputed = store.disputed_nodes("rack7", CONCLUSION)
    assert disputed.contradiction_pairs == []
    by_id = {entry.id: entry for entry in disputed.isolated_load_bearing}
    assert by_id["G"].model_dump() == {"id": "G", "run_count": 1, "on_path": False}
    assert by_id["A"].on_path is True
    assert "F" not in by_id and CONCLUSION not in by_id
