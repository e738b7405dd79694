"""The loop's state: the store is the one copy of the graph, and a run's record has one
owner (issue 33)."""

from __future__ import annotations

from typing import Any

from orchestrator.loop.stages.context import GRAPH_ID, GraphState
from orchestrator.loop.stages.runs import run_record, take_graph


def test_the_graph_state_reads_its_nodes_from_the_store_and_has_none_before_any_run() -> None:
    state = GraphState()
    assert state.nodes() == {}
    node = {"id": "n1", "claim": "the pump failed", "type": "given", "confidence": 0.8}
    state.store.assert_graph(GRAPH_ID, [node], [], run_id="r1")
    state.store.update_node(GRAPH_ID, "n1", confidence=0.5)
    assert state.nodes()["n1"]["confidence"] == 0.5


def test_a_run_record_carries_a_graph_only_until_it_is_taken_for_ingest() -> None:
    graph: Any = {"nodes": [], "edges": []}  # a partial ReplyGraph: only carried, never read
    run = run_record("r1", "strict", ["a note"], graph=graph, wait_s=1.5)
    assert (run["errors"], run["wait_s"], run["ingested"]) == (["a note"], 1.5, False)
    assert take_graph(run) is graph
    assert "graph" not in run and take_graph(run) is None
    assert "graph" not in run_record("r2", "call_failed", ["timeout"])
