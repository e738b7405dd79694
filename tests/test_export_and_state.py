"""export_graph's three formats, the store's state dump, and ``--state-file`` across kill -9."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

import networkx as nx
import pytest
from raw_server import REPO_ROOT, SERVER_COMMAND, RawServer

from graph_server.errors import InvalidInput, NotFound
from graph_server.fixture import CONCLUSION, RUNS
from graph_server.records import GetGraphAnswer
from graph_server.server import dispatch
from graph_server.state import STATE_FORMAT, StateFile, StateFileError
from graph_server.store import GraphStore
from graph_server.validation import StoreLimits

GRAPH = "rack7"
SPAN = {"id": "D1.1", "text": "The nightly cron job needs 2 GB of memory."}
CITING = {
    "id": "M",
    "type": "given",
    "claim": "the nightly cron job needs 2 GB of memory",
    "source": "D1.1",
}


def fixture_store() -> GraphStore:
    """The rack-7 fixture with everything export must carry: merges, evidence, a refutation."""
    store = GraphStore()
    for run_id, nodes, edges in RUNS:
        store.assert_graph(GRAPH, nodes, edges, run_id=run_id)
    restated = {"id": "B2", "claim": "Server x9 is listed in the rack 7 survey.", "type": "given"}
    assert store.assert_graph(GRAPH, [restated], run_id="r3").auto_merged == [["B", "B2"]]
    store.add_evidence(GRAPH, [SPAN])
    cited = store.assert_graph(
        GRAPH, [CITING], [{"src": "M", "dst": CONCLUSION, "relation": "supports"}]
    )
    assert cited.rejected == [] and cited.citations[0].ok
    assert store.mark_refuted(GRAPH, "D", "survey column misread").ok
    return store


def all_checks(store: GraphStore, graph_id: str) -> dict[str, Any]:
    return {
        "check_structure": store.check_structure(graph_id, CONCLUSION),
        "support_width": store.support_width(graph_id, CONCLUSION),
        "critical_links": store.critical_links(graph_id, CONCLUSION),
        "surviving_claims": store.surviving_claims(graph_id),
        "disputed_nodes": store.disputed_nodes(graph_id, CONCLUSION),
    }


def without_merge_history(graph: GetGraphAnswer) -> dict[str, Any]:
    nodes = [n.model_dump(exclude={"aliases", "merged_ids"}) for n in graph.nodes]
    return {**graph.model_dump(), "nodes": nodes}


def test_json_export_replayed_into_a_fresh_store_gives_the_same_graph_and_checks() -> None:
    store = fixture_store()
    exported = store.export_graph(GRAPH, "json")
    assert exported.format == "json" and exported.graph_id == GRAPH
    graph = json.loads(json.dumps(exported.graph))  # what a client gets over the wire

    fresh = GraphStore()
    replay = fresh.assert_graph("copy", graph["nodes"], graph["edges"], dedup=False)
    assert replay.rejected == []
    assert fresh.add_evidence("copy", graph["evidence"]).rejected == []
    for refuted in graph["refuted"]:
        assert fresh.mark_refuted("copy", refuted["id"], refuted["reason"]).ok

    assert all_checks(fresh, "copy") == all_checks(store, GRAPH)
    original = without_merge_history(store.get_graph(GRAPH))
    assert without_merge_history(fresh.get_graph("copy")) == {**original, "graph_id": "copy"}
    assert fresh.export_graph("copy", "json").graph == exported.graph


def test_graphml_export_reads_back_into_networkx_with_every_claim_and_link() -> None:
    store = fixture_store()
    content = store.export_graph(GRAPH, "graphml").content
    parsed = nx.parse_graphml(content, force_multigraph=True)
    graph = store.get_graph(GRAPH)

    assert sorted(parsed.nodes) == [node.id for node in graph.nodes]
    assert parsed.number_of_edges() == len(graph.edges)
    assert parsed.nodes["D"]["refuted"] is True
    assert parsed.nodes["D"]["refute_reason"] == "survey column misread"
    assert parsed.nodes["M"]["source"] == "D1.1"
    relations = sorted(data["relation"] for _, _, data in parsed.edges(data=True))
    assert relations == sorted(edge.relation for edge in graph.edges)


def test_mermaid_export_is_a_flowchart_with_one_line_per_claim_and_link() -> None:
    store = fixture_store()
    content = store.export_graph(GRAPH, "mermaid").content
    assert content is not None
    graph = store.get_graph(GRAPH)

    assert content.startswith("flowchart TD")
    assert f"#40;{CONCLUSION}#41;" in content  # ids in labels, parentheses escaped
    links = [
        line for line in content.splitlines() if "-->" in line or "--x" in line or "-.->" in line
    ]
    assert len(links) == len(graph.edges)
    assert "class " in content and "refuted" in content


def test_export_is_deterministic() -> None:
    for fmt in ("json", "graphml", "mermaid"):
        assert fixture_store().export_graph(GRAPH, fmt) == fixture_store().export_graph(GRAPH, fmt)


def test_export_graph_refuses_an_unknown_format_or_graph_naming_the_field() -> None:
    store = fixture_store()
    with pytest.raises(InvalidInput, match="format must be one of graphml, json, mermaid"):
        store.export_graph(GRAPH, "dot")
    with pytest.raises(NotFound, match="graph_id 'nope' not found"):
        store.export_graph("nope", "json")
    assert dispatch(store, "export_graph", {"graph_id": GRAPH}) == {
        "error": "format is required for export_graph"
    }


def test_a_state_dump_restores_every_graph_with_its_merge_history_and_evidence() -> None:
    store = fixture_store()
    store.assert_graph("second", [{"id": "x", "claim": "x holds", "type": "conclusion"}])
    dumped = [graph.model_dump(mode="json") for graph in store.dump_state()]

    restored = GraphStore()
    restored.restore_state(dumped)

    assert restored.dump_state() == store.dump_state()
    assert restored.list_graphs() == store.list_graphs()
    assert all_checks(restored, GRAPH) == all_checks(store, GRAPH)
    merged = next(node for node in store.get_graph(GRAPH).nodes if node.merged_ids)
    # A merged id still resolves to the node it was merged into.
    again = restored.assert_graph(
        GRAPH, [], [{"src": merged.merged_ids[0], "dst": "Z", "relation": "supports"}]
    )
    assert again.accepted_edges == [[merged.id, "Z", "supports"]]


def test_a_state_dump_over_the_memory_budget_is_refused_naming_the_limit() -> None:
    dumped = [graph.model_dump() for graph in fixture_store().dump_state()]
    small = GraphStore(limits=StoreLimits(max_claim_bytes=100))
    with pytest.raises(InvalidInput, match=r"graphs\.0 \('rack7'\): memory budget exceeded"):
        small.restore_state(dumped)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"format": "logic-graph-state", "version": 1, "graphs": [', "is not valid JSON"),
        ('{"name": "someone else\'s file"}', "was not written by logic-graph-server"),
        ('{"format": "logic-graph-state", "version": 99, "graphs": []}', "has version 99"),
        (
            '{"format": "logic-graph-state", "version": 1, "graphs": [{"graph_id": "g"}]}',
            r"graphs\.0 \('g'\): missing key 'nodes'",
        ),
    ],
)
def test_a_corrupt_or_foreign_state_file_is_refused_and_left_untouched(
    tmp_path: Path, text: str, message: str
) -> None:
    path = tmp_path / "state.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(StateFileError, match=message):
        StateFile(path).load_into(GraphStore())
    assert path.read_text(encoding="utf-8") == text


def test_a_saved_state_file_loads_back_into_an_equal_store(tmp_path: Path) -> None:
    store = fixture_store()
    state = StateFile(tmp_path / "state.json")
    state.save(store)
    saved = json.loads((tmp_path / "state.json").read_text(encoding="utf-8"))
    assert saved["format"] == STATE_FORMAT
    assert [p.name for p in tmp_path.iterdir()] == ["state.json"]  # no temporary left behind

    restored = GraphStore()
    assert state.load_into(restored) == 1
    assert restored.dump_state() == store.dump_state()


def test_graphs_survive_kill_9_of_a_server_with_a_state_file(tmp_path: Path) -> None:
    state = tmp_path / "graphs.json"
    first = RawServer("--state-file", str(state), errlog=tmp_path / "stderr")
    try:
        first.start()
        for run_id, nodes, edges in RUNS:
            first.call(
                "assert_graph",
                {"graph_id": GRAPH, "nodes": nodes, "edges": edges, "run_id": run_id},
            )
        first.call("mark_refuted", {"graph_id": GRAPH, "node_id": "D", "reason": "misread"})
        before = first.call("get_graph", {"graph_id": GRAPH})
        os.kill(first.process.pid, signal.SIGKILL)  # no chance to flush or clean up
        assert first.process.wait(timeout=30) == -signal.SIGKILL
    finally:
        first.kill()

    second = RawServer("--state-file", str(state), errlog=tmp_path / "stderr")
    try:
        second.start()
        assert second.call("get_graph", {"graph_id": GRAPH}) == before
        width = second.call("support_width", {"graph_id": GRAPH, "conclusion_id": CONCLUSION})
        assert width["disjoint_paths"] == 1
    finally:
        second.kill()


def test_a_server_given_a_foreign_state_file_exits_with_an_error_naming_it(tmp_path: Path) -> None:
    state = tmp_path / "notes.json"
    state.write_text('{"todo": []}', encoding="utf-8")
    done = subprocess.run(
        [*SERVER_COMMAND, "--state-file", str(state)],
        cwd=REPO_ROOT,
        stdin=subprocess.PIPE,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert f"state file {state} was not written by logic-graph-server" in done.stderr
    assert state.read_text(encoding="utf-8") == '{"todo": []}'


def test_server_help_prints_usage_and_exits_without_waiting_on_stdin() -> None:
    # stdin is a pipe nobody closes: a server that started serving would hang here.
    with subprocess.Popen(
        [*SERVER_COMMAND, "--help"],
        cwd=REPO_ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as process:
        try:
            code = process.wait(timeout=60)  # the usage text fits in the pipe's buffer
        finally:
            if process.poll() is None:
                process.kill()
        assert process.stdout is not None
        out = process.stdout.read()
    assert code == 0
    assert "usage: logic-graph-server" in out and "--state-file PATH" in out
