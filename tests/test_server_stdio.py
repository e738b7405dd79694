"""The real thing: ``python -m graph_server.server`` spawned as a subprocess over stdio.

Uses the SDK's own stdio client, as any MCP host would, plus one raw JSON-RPC
conversation to check that junk on stdin cannot wedge the server.
"""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from raw_server import REPO_ROOT, SERVER_COMMAND, RawServer
from test_server_inmemory import FIXTURE_SESSION, GRAPH, call, library_payloads

from graph_server.fixture import CONCLUSION, RUNS

pytestmark = pytest.mark.anyio


READ_ONLY = {
    "check_structure",
    "critical_links",
    "support_width",
    "argument_width",
    "surviving_claims",
    "disputed_nodes",
    "get_graph",
    "list_graphs",
    "search_evidence",
    "export_graph",
}
# Every writing tool can remove or overwrite something: assert_graph merges nodes away,
# update_node overwrites a confidence, mark_refuted cannot be undone.
DESTRUCTIVE = {"assert_graph", "merge_duplicates", "mark_refuted", "update_node", "delete_graph"}
# add_evidence only adds: a known span id with another text is refused, never overwritten.
ADDITIVE = {"add_evidence"}
ALL_TOOLS = READ_ONLY | DESTRUCTIVE | ADDITIVE


@asynccontextmanager
async def stdio_session(log_dir: Path) -> AsyncIterator[Client]:
    """A client connected to a freshly spawned server; its stderr goes to a file."""
    params = StdioServerParameters(
        command=SERVER_COMMAND[0], args=SERVER_COMMAND[1:], cwd=REPO_ROOT
    )
    with (log_dir / "server.stderr").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=60) as client:
            yield client


def undescribed_properties(schema: dict[str, Any]) -> list[str]:
    """Names of properties (top level and in node/edge items) whose schema has no description."""
    missing = []
    objects = [("", schema)]
    for name, prop in schema.get("properties", {}).items():
        if prop.get("type") == "array" and "properties" in prop.get("items", {}):
            objects.append((f"{name}[].", prop["items"]))
    for prefix, obj in objects:
        for name, prop in obj.get("properties", {}).items():
            if not prop.get("description"):
                missing.append(prefix + name)
    return missing


async def test_tools_are_listed_with_described_schemas_and_honest_annotations(
    tmp_path: Path,
) -> None:
    async with stdio_session(tmp_path) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}

    assert set(tools) == ALL_TOOLS
    for name, tool in tools.items():
        assert tool.description and tool.description == tool.description.strip()
        assert tool.input_schema["type"] == "object"
        assert undescribed_properties(tool.input_schema) == [], name
        assert tool.input_schema["additionalProperties"] is False, name
        output = tool.output_schema
        assert output is not None and output["type"] == "object", name
        # Typed: every declared output field says what it holds, and all are required.
        assert output["properties"] and set(output["required"]) == set(output["properties"])
        assert all("type" in field for field in output["properties"].values()), name
        hints = tool.annotations
        assert hints is not None
        assert hints.read_only_hint is (name in READ_ONLY), name
        if name not in READ_ONLY:
            assert hints.destructive_hint is (name in DESTRUCTIVE), name
    assert tools["mark_refuted"].annotations.idempotent_hint is True  # type: ignore[union-attr]
    assert tools["check_structure"].input_schema["required"] == ["graph_id", "conclusion_id"]
    node = tools["assert_graph"].input_schema["properties"]["nodes"]["items"]
    assert node["properties"]["type"]["enum"] == ["given", "inference", "assumption", "conclusion"]
    assert node["additionalProperties"] is False and node["required"] == ["id", "claim", "type"]
    edge = tools["assert_graph"].input_schema["properties"]["edges"]["items"]
    assert edge["allOf"] == [
        {"anyOf": [{"required": ["src"]}, {"required": ["from"]}]},
        {"anyOf": [{"required": ["dst"]}, {"required": ["to"]}]},
    ]
    assert tools["assert_graph"].description is not None
    assert tools["surviving_claims"].description is not None
    assert tools["disputed_nodes"].description is not None
    assert "50,000 nodes + edges per call" in tools["assert_graph"].description
    assert "200,000,000 bytes of claim text" in tools["assert_graph"].description
    assert "undecided claims count as surviving" in tools["surviving_claims"].description
    assert "never reported as isolated" in tools["disputed_nodes"].description


async def test_fixture_over_stdio_matches_library_mode_also_under_concurrent_calls(
    tmp_path: Path,
) -> None:
    async with stdio_session(tmp_path) as client:
        served = [await call(client, name, args) for name, args in FIXTURE_SESSION]

        for run_id, nodes, edges in RUNS:
            args = {"graph_id": GRAPH, "nodes": nodes, "edges": edges, "run_id": run_id}
            await call(client, "assert_graph", args)
        answers: list[Any] = []

        async def check() -> None:
            args = {"graph_id": GRAPH, "conclusion_id": CONCLUSION}
            answers.append(await call(client, "check_structure", args))

        async with anyio.create_task_group() as group:
            for _ in range(40):
                group.start_soon(check)

    assert served == library_payloads(FIXTURE_SESSION)
    assert len(answers) == 40 and all(answer == answers[0] for answer in answers)
    assert answers[0]["orphans"] == ["F", "G"]


def test_junk_on_stdin_gets_an_error_reply_and_the_next_request_is_answered(
    tmp_path: Path,
) -> None:
    server = RawServer(errlog=tmp_path / "server.stderr")
    try:
        server.start()
        for junk in ["not json at all {", "[1, 2, 3]", '{"jsonrpc": "2.0"}', "\x00" * 64]:
            server.send(junk)
            # JSON-RPC: a line with no readable id is answered with id null.
            assert server.answer_to(None)["error"]["code"] in (-32700, -32600)
        server.send({"jsonrpc": "2.0", "id": 99, "method": "no/such/method"})
        assert server.answer_to(99)["error"]["code"] == -32601
        reply = server.request("tools/call", {"name": "list_graphs", "arguments": {}})["result"]
        assert reply["isError"] is False and reply["structuredContent"]["graphs"] == []
    finally:
        assert server.stop() == 0  # stdin closed: a clean exit
