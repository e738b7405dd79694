"""GraphStore: validation, partial ingest, limits, errors and thread safety."""

from __future__ import annotations

import json
import threading
from typing import Any, cast

import pytest

from graph_server.errors import InvalidInput, LimitExceeded, NotFound, StoreError
from graph_server.fixture import CONCLUSION, RUNS
from graph_server.store import GraphStore
from graph_server.validation import StoreLimits


def good_node(node_id: str = "n1", claim: str = "the pump failed", **extra: Any) -> dict[str, Any]:
    return {"id": node_id, "claim": claim, "type": "given", "confidence": 0.9, **extra}


def test_partial_ingest_keeps_valid_items_and_explains_each_rejection() -> None:
    store = GraphStore()
    result = store.assert_graph(
        "g",
        [
            good_node("ok"),
            {"id": "t", "claim": "x", "type": "guess"},
            {"id": "c", "claim": "y", "type": "given", "confidence": 1.5},
            {"claim": "no id", "type": "given"},
            cast(Any, "not an object"),  # deliberately not a mapping
        ],
        [
            {"src": "ok", "dst": "missing", "relation": "supports"},
            {"src": "ok", "dst": "ok", "relation": "supports"},
            {"src": "ok", "dst": "t", "relation": "undermines"},
        ],
    )
    assert result.accepted_nodes == ["ok"]
    reasons = [r.reason for r in result.rejected]
    assert "type must be one of" in reasons[0] and "'guess'" in reasons[0]
    assert "confidence 1.5 is outside [0, 1]" in reasons[1]
    assert reasons[2].startswith("id must be a non-empty string")
    assert reasons[3].startswith("node must be an object")
    assert "dst 'missing' is not a node of graph 'g'" in reasons[4]
    assert "cannot support or attack itself" in reasons[5]
    assert "relation must be one of" in reasons[6]
    assert result.rejected[0].item["type"] == "guess"
    assert [n.id for n in store.get_graph("g").nodes] == ["ok"]


def test_same_id_with_a_different_claim_is_rejected_without_touching_the_original() -> None:
    store = GraphStore()
    store.assert_graph("g", [good_node("n1", "the pump failed")], [])
    result = store.assert_graph("g", [good_node("n1", "the valve failed")], [])
    assert "already holds the claim" in result.rejected[0].reason
    assert store.get_graph("g").nodes[0].claim == "the pump failed"


def test_same_id_same_claim_unions_run_ids() -> None:
    store = GraphStore()
    store.assert_graph("g", [good_node()], [], run_id="r1")
    store.assert_graph("g", [good_node()], [], run_id="r2")
    assert store.get_graph("g").nodes[0].run_ids == ["r1", "r2"]


def test_numeric_strings_are_accepted_for_confidence() -> None:
    store = GraphStore()
    result = store.assert_graph("g", [good_node(confidence="0.75")], [])
    assert result.rejected == []
    assert store.get_graph("g").nodes[0].confidence == 0.75


def test_claim_length_limit_is_enforced_with_a_clear_reason() -> None:
    store = GraphStore(limits=StoreLimits(max_claim_chars=50))
    result = store.assert_graph("g", [good_node(claim="x" * 51)], [])
    assert result.rejected[0].reason == "claim has 51 characters, over the limit of 50"
    assert len(result.model_dump_json()) < 1000  # the long claim is not echoed back whole


def test_node_limit_rejects_the_overflow_and_keeps_the_rest() -> None:
    store = GraphStore(limits=StoreLimits(max_nodes_per_graph=2))
    result = store.assert_graph(
        "g", [good_node(f"n{i}", f"claim number {i} about pumps") for i in range(3)], []
    )
    assert result.accepted_nodes == ["n0", "n1"]
    assert "limit of 2 nodes" in result.rejected[0].reason


def test_graph_count_limit_names_the_limit() -> None:
    store = GraphStore(limits=StoreLimits(max_graphs=1))
    store.assert_graph("a", [good_node()], [])
    with pytest.raises(LimitExceeded, match="limit of 1") as refused:
        store.assert_graph("b", [good_node()], [])
    assert "'b'" in str(refused.value) and refused.value.limit == "max_graphs"
    store.delete_graph("a")
    assert store.assert_graph("b", [good_node()], []).accepted_nodes == ["n1"]


@pytest.mark.parametrize(
    ("call", "fragment"),
    [
        (lambda s: s.check_structure("nope", "Z"), "graph_id 'nope' not found"),
        (
            lambda s: s.support_width("rack7", "Q"),
            "conclusion_id 'Q' is not a node of graph 'rack7'",
        ),
        (lambda s: s.mark_refuted("rack7", "Q", "why"), "node_id 'Q' is not a node"),
        (lambda s: s.mark_refuted("rack7", "D", ""), "reason must be a non-empty string"),
        (lambda s: s.critical_links("rack7", 7), "conclusion_id '7' is not a node"),
        (lambda s: s.critical_links("rack7", True), "conclusion_id must be a non-empty string"),
        (lambda s: s.critical_links("rack7", "Z\u200bQ"), "U+200B (ZERO WIDTH SPACE)"),
        (lambda s: s.assert_graph("rack7", "nodes", []), "nodes must be a list"),
        (lambda s: s.assert_graph("", [], []), "graph_id must be a non-empty string"),
        (
            lambda s: s.assert_graph("g", [good_node("__S__")], []).rejected[0].reason,
            "reserved",
        ),
        (lambda s: s.update_node("rack7", "D"), "needs confidence, run_id or both"),
        (lambda s: s.delete_graph("nope"), "graph_id 'nope' not found"),
    ],
)
def test_bad_calls_raise_store_errors_that_name_the_field(call: Any, fragment: str) -> None:
    store = GraphStore()
    for run_id, nodes, edges in RUNS:
        store.assert_graph("rack7", nodes, edges, run_id=run_id)
    try:
        text = call(store)
    except StoreError as refused:
        text = str(refused)
    assert fragment in text


def test_merged_ids_point_callers_to_the_kept_node() -> None:
    store = GraphStore()
    store.assert_graph("g", [good_node("r1:n1", "Server X runs Linux")], [], run_id="r1")
    store.assert_graph("g", [good_node("r2:n1", "server x runs linux.")], [], run_id="r2")
    with pytest.raises(NotFound, match="was merged into 'r1:n1'"):
        store.support_width("g", "r2:n1")
    # Re-sending the merged node and an edge to it resolves to the kept node.
    again = store.assert_graph(
        "g",
        [good_node("r2:n1", "server x runs linux."), good_node("r2:n2", "the kernel is recent")],
        [{"src": "r2:n2", "dst": "r2:n1", "relation": "supports"}],
        run_id="r2",
    )
    assert again.rejected == []
    assert again.accepted_edges == [["r2:n2", "r1:n1", "supports"]]


def test_mark_refuted_is_idempotent_and_keeps_the_first_reason() -> None:
    store = GraphStore()
    for run_id, nodes, edges in RUNS:
        store.assert_graph("rack7", nodes, edges, run_id=run_id)
    first = store.mark_refuted("rack7", "D", "survey column misread")
    second = store.mark_refuted("rack7", "D", "another reason")
    assert first.already_refuted is False and second.already_refuted is True
    assert second.width_before == second.width_after == 1
    node = next(n for n in store.get_graph("rack7").nodes if n.id == "D")
    assert node.refute_reason == "survey column misread"


def test_update_node_sets_confidence_and_adds_provenance() -> None:
    store = GraphStore()
    store.assert_graph("g", [good_node()], [], run_id="r1")
    result = store.update_node("g", "n1", confidence=0.95, run_id="v1")
    assert result.node.confidence == 0.95 and result.node.run_ids == ["r1", "v1"]
    with pytest.raises(InvalidInput, match=r"outside \[0, 1\]") as refused:
        store.update_node("g", "n1", confidence=2)
    assert refused.value.field == "confidence"


def test_reads_never_mutate_the_graph() -> None:
    store = GraphStore()
    for run_id, nodes, edges in RUNS:
        store.assert_graph("rack7", nodes, edges, run_id=run_id)
    snapshot = store.get_graph("rack7")
    store.check_structure("rack7", CONCLUSION)
    store.critical_links("rack7", CONCLUSION)
    store.support_width("rack7", CONCLUSION)
    store.surviving_claims("rack7")
    store.disputed_nodes("rack7", CONCLUSION)
    assert store.get_graph("rack7") == snapshot


def test_every_payload_is_json_serialisable() -> None:
    store = GraphStore()
    for run_id, nodes, edges in RUNS:
        json.dumps(store.assert_graph("rack7", nodes, edges, run_id=run_id).model_dump())
    for payload in (
        store.check_structure("rack7", CONCLUSION),
        store.critical_links("rack7", CONCLUSION),
        store.support_width("rack7", CONCLUSION),
        store.surviving_claims("rack7"),
        store.disputed_nodes("rack7", CONCLUSION),
        store.get_graph("rack7"),
        store.list_graphs(),
        store.mark_refuted("rack7", "D", "misread"),
        store.merge_duplicates("rack7"),
    ):
        json.dumps(payload.model_dump(by_alias=True))


def test_list_and_delete_graphs() -> None:
    store = GraphStore()
    store.assert_graph("b", [good_node()], [])
    store.assert_graph("a", [good_node(), good_node("n2", "the valve held")], [])
    listed = store.list_graphs()
    assert [graph.model_dump() for graph in listed.graphs] == [
        {"graph_id": "a", "nodes": 2, "edges": 0},
        {"graph_id": "b", "nodes": 1, "edges": 0},
    ]
    assert (
        listed.claim_bytes
        == store.claim_bytes
        == 2 * len("the pump failed") + len("the valve held")
    )
    assert listed.claim_bytes_limit == StoreLimits().max_claim_bytes
    assert store.delete_graph("a").model_dump() == {"ok": True, "graph_id": "a"}
    assert [g.graph_id for g in store.list_graphs().graphs] == ["b"]


def test_concurrent_ingests_lose_nothing() -> None:
    store = GraphStore()

    def worker(run: int) -> None:
        nodes = [
            good_node(f"r{run}:n{i}", f"pump {run} reading {i} was {run * 100 + i} bar")
            for i in range(20)
        ]
        store.assert_graph("g", nodes, [], run_id=f"r{run}")
        store.surviving_claims("g")

    threads = [threading.Thread(target=worker, args=(run,)) for run in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    graph = store.get_graph("g")
    assert len(graph.nodes) == 160
    # Claims that differ in their numbers are never merged.
    assert all(n.merged_ids == [] for n in graph.nodes)


def test_an_internal_failure_raises_as_the_bug_it_is_and_leaves_the_store_usable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from graph_server import checks

    store = GraphStore()
    for run_id, nodes, edges in RUNS:
        store.assert_graph("rack7", nodes, edges, run_id=run_id)

    def explode(*_: Any) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(checks, "check_structure", explode)
    with pytest.raises(RuntimeError, match="boom"):
        store.check_structure("rack7", CONCLUSION)
    assert store.support_width("rack7", CONCLUSION).disjoint_paths == 2


def test_edge_limit_rejects_the_overflow_and_keeps_the_rest() -> None:
    store = GraphStore(limits=StoreLimits(max_edges_per_graph=2))
    nodes = [good_node(f"n{i}", f"reading {i} from gauge {i * 7} is stable") for i in range(4)]
    edges = [{"src": f"n{i}", "dst": "n3", "relation": "supports"} for i in range(3)]
    result = store.assert_graph("g", nodes, edges)
    assert result.accepted_edges == [["n0", "n3", "supports"], ["n1", "n3", "supports"]]
    assert "limit of 2 edges" in result.rejected[0].reason
    # Re-asserting an existing edge is not a new edge and is still accepted.
    again = store.assert_graph("g", [], edges[:1])
    assert again.rejected == []
