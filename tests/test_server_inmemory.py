"""Through an in-memory MCP client, every tool returns exactly what library mode returns.

The same call sequence (the design's rack-7 fixture, then every tool) runs once
through ``mcp.Client(server)`` and once directly against a separate GraphStore;
each structured payload, and the JSON in its text content, must be equal.
"""

import json
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp_types import CallToolResult, TextContent

from graph_server.fixture import CONCLUSION, RUNS
from graph_server.server import build_server
from graph_server.store import GraphStore

pytestmark = pytest.mark.anyio

GRAPH = "rack7"
_ON_CONCLUSION = {"graph_id": GRAPH, "conclusion_id": CONCLUSION}

# (tool name, arguments). Arguments use the library's parameter names, so calling
# GraphStore methods with them as keywords also checks that the tools mirror it 1:1.
FIXTURE_SESSION: list[tuple[str, dict[str, Any]]] = [
    *(
        ("assert_graph", {"graph_id": GRAPH, "nodes": nodes, "edges": edges, "run_id": run_id})
        for run_id, nodes, edges in RUNS
    ),
    (
        "assert_graph",
        {
            "graph_id": GRAPH,
            "nodes": [
                {"id": "S1", "claim": "row 9 lists server x9", "type": "given", "source": "D2.1"},
                {"id": "S2", "claim": "row 9 lists server x9.", "type": "given"},
            ],
            "run_id": "r3",
            "dedup": False,
        },
    ),
    ("merge_duplicates", {"graph_id": GRAPH, "jaccard_threshold": 0.7, "ratio_threshold": 0.85}),
    ("check_structure", _ON_CONCLUSION),
    ("critical_links", _ON_CONCLUSION),
    ("support_width", _ON_CONCLUSION),
    ("argument_width", _ON_CONCLUSION),
    ("surviving_claims", {"graph_id": GRAPH}),
    ("disputed_nodes", _ON_CONCLUSION),
    ("update_node", {"graph_id": GRAPH, "node_id": "B", "confidence": 0.95, "run_id": "verify-1"}),
    ("mark_refuted", {"graph_id": GRAPH, "node_id": "D", "reason": "survey column misread"}),
    ("mark_refuted", {"graph_id": GRAPH, "node_id": "D", "reason": "asked twice"}),
    ("support_width", _ON_CONCLUSION),
    ("check_structure", _ON_CONCLUSION),
    ("get_graph", {"graph_id": GRAPH}),
    ("list_graphs", {}),
    ("delete_graph", {"graph_id": GRAPH}),
    ("list_graphs", {}),
]


def library_payloads(session: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    """Run ``session`` directly on a fresh GraphStore; payloads as they look after JSON."""
    store = GraphStore()
    records = [getattr(store, name)(**args) for name, args in session]
    return [record.model_dump(mode="json", by_alias=True) for record in records]


def text_of(result: CallToolResult) -> str:
    """The result's readable text content, concatenated."""
    return "".join(block.text for block in result.content if isinstance(block, TextContent))


async def call(client: Client, name: str, arguments: dict[str, Any]) -> Any:
    """Call a tool that must succeed; return its structured content.

    Also checks that the readable text content carries the same payload.
    """
    result = await client.call_tool(name, arguments)
    text = text_of(result)
    assert not result.is_error, f"{name} failed: {text}"
    assert json.loads(text) == result.structured_content
    return result.structured_content


async def test_every_tool_returns_the_library_mode_payload_for_the_fixture() -> None:
    async with Client(build_server()) as client:
        served = [await call(client, name, args) for name, args in FIXTURE_SESSION]

    assert served == library_payloads(FIXTURE_SESSION)
    called = {name for name, _ in FIXTURE_SESSION}
    assert len(called) == 13


async def test_fixture_answers_through_the_tools_match_the_design() -> None:
    async with Client(build_server()) as client:
        for name, args in FIXTURE_SESSION[:2]:
            await call(client, name, args)
        structure = await call(client, "check_structure", _ON_CONCLUSION)
        width = await call(client, "support_width", _ON_CONCLUSION)
        arguments = await call(client, "argument_width", _ON_CONCLUSION)
        refuted = await call(
            client, "mark_refuted", {"graph_id": GRAPH, "node_id": "D", "reason": "misread"}
        )

    assert structure["orphans"] == ["F", "G"]
    assert structure["unreachable_conclusion"] is False
    assert width["disjoint_paths"] == 2
    # r1 lists its reasons jointly: one argument, which any of its five claims breaks.
    assert (arguments["width"], arguments["arguments"]) == (1, [["A", "B", "C", "D", "E"]])
    assert (refuted["width_before"], refuted["width_after"]) == (2, 1)


async def test_server_shares_the_store_it_is_given_with_library_code() -> None:
    store = GraphStore()
    async with Client(build_server(store)) as client:
        for name, args in FIXTURE_SESSION[:2]:
            await call(client, name, args)
        listed = await call(client, "list_graphs", {})

    assert listed == store.list_graphs().model_dump()
    assert listed["graphs"] == [{"graph_id": GRAPH, "nodes": 8, "edges": 7}]


async def test_concurrent_calls_are_all_answered_and_leave_a_consistent_store() -> None:
    widths: dict[int, int] = {}

    async def build_check_maybe_delete(client: Client, i: int) -> None:
        graph_id = f"g{i}"
        for run_id, nodes, edges in RUNS:
            args = {"graph_id": graph_id, "nodes": nodes, "edges": edges, "run_id": run_id}
            await call(client, "assert_graph", args)
        width = await call(client, "support_width", {"graph_id": graph_id, "conclusion_id": "Z"})
        widths[i] = width["disjoint_paths"]
        if i % 2:
            await call(client, "delete_graph", {"graph_id": graph_id})

    async with Client(build_server()) as client:
        async with anyio.create_task_group() as group:
            for i in range(24):
                group.start_soon(build_check_maybe_delete, client, i)
        listed = await call(client, "list_graphs", {})

    assert widths == dict.fromkeys(range(24), 2)
    kept = sorted(f"g{i}" for i in range(0, 24, 2))
    assert listed["graphs"] == [{"graph_id": g, "nodes": 8, "edges": 7} for g in kept]


def served_index(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The rack-7 corpus ingested (keyword only) into an index the server may open."""
    from corpus_fixtures import write_corpus

    import corpus

    monkeypatch.setenv("LOGIC_GRAPH_INDEX_ROOTS", str(tmp_path))
    index = tmp_path / "index.sqlite"
    assert corpus.ingest(write_corpus(tmp_path / "docs"), index, dense=False).ok
    return index


async def test_search_evidence_is_keyword_only_unless_the_call_asks_for_dense(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = served_index(tmp_path, monkeypatch)
    arguments = {"index": str(index), "query": "which hall holds rack 7"}
    async with Client(build_server()) as client:
        plain = await call(client, "search_evidence", arguments)
        dense = await call(client, "search_evidence", {**arguments, "dense": True})
        bad = await client.call_tool("search_evidence", {**arguments, "dense": "yes"})

    assert plain["dense_note"] == "dense retrieval was turned off for this search"
    assert not dense["dense_used"] and "vectors" in dense["dense_note"]  # asked, none stored
    assert [hit["chunk_id"] for hit in dense["hits"]] == [hit["chunk_id"] for hit in plain["hits"]]
    assert bad.is_error and "dense" in text_of(bad)


async def test_an_agent_searches_registers_and_cites_evidence_and_misquotes_are_demoted(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import corpus

    index = served_index(tmp_path, monkeypatch)
    arguments = {"index": str(index), "query": "which hall holds rack 7", "k": 2}
    async with Client(build_server()) as client:
        found = await call(client, "search_evidence", arguments)
        bad_k = await client.call_tool("search_evidence", {**arguments, "k": 0})
        no_index = await client.call_tool(
            "search_evidence", {"index": str(tmp_path / "none.sqlite"), "query": "rack"}
        )
        # a sentence found this way is cited by id in a given, like any other source
        sentence = next(
            span for span in found["hits"][0]["spans"] if span["text"].startswith("Rack 7 stands")
        )
        spans = [{"id": s["id"], "text": s["text"]} for hit in found["hits"] for s in hit["spans"]]
        registered = await call(client, "add_evidence", {"graph_id": "g", "spans": spans})
        given = {"id": "g", "claim": sentence["text"], "type": "given", "source": sentence["id"]}
        misquote = {**given, "id": "m", "claim": "Rack 7 stands in hall C of the Quelheim site."}
        stored = await call(client, "assert_graph", {"graph_id": "g", "nodes": [given, misquote]})
        graph = await call(client, "get_graph", {"graph_id": "g"})

    assert found == corpus.search_evidence(str(index), "which hall holds rack 7", 2)
    assert found["hits"][0]["chunk_id"] == "racks/rack7-v1.2.md#p1c1"
    assert sentence["id"] == "racks/rack7-v1.2.md#p1c1:s3"
    assert bad_k.is_error and "k must be an integer in 1..50" in text_of(bad_k)
    assert no_index.is_error and text_of(no_index).startswith("index ")
    assert registered["spans"] == len(spans)
    assert [(c["id"], c["ok"], c["reason"]) for c in stored["citations"]] == [
        ("g", True, None),
        ("m", False, "name_mismatch"),
    ]
    assert {n["id"]: n["type"] for n in graph["nodes"]} == {"g": "given", "m": "assumption"}


async def test_search_evidence_gives_each_hit_the_title_line_of_its_file(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import corpus

    monkeypatch.setenv("LOGIC_GRAPH_INDEX_ROOTS", str(tmp_path))
    notes = tmp_path / "notes"
    notes.mkdir()
    # A fact from the middle of release notes names no release; the file's title does.
    body = "\n\n".join(f"* Fix number {i} makes the tool sturdier." for i in range(60))
    (notes / "2.23.0.txt").write_text(
        "Git v2.23 Release Notes\n=======================\n\n"
        + body
        + '\n\n* Two new commands "git switch" and "git restore" are introduced.\n',
        encoding="utf-8",
    )
    index = tmp_path / "index.sqlite"
    assert corpus.ingest(notes, index, dense=False).ok
    arguments = {"index": str(index), "query": "git switch introduced", "k": 1}
    async with Client(build_server()) as client:
        found = await call(client, "search_evidence", arguments)

    (hit,) = found["hits"]
    assert "git switch" in hit["text"] and "Release Notes" not in hit["text"]
    assert (hit["section"], hit["title"]) == ("", "Git v2.23 Release Notes")
