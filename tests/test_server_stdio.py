"""The real thing: ``python -m graph_server.server`` spawned as a subprocess over stdio.

Uses the SDK's own stdio client, as any MCP host would, plus one raw JSON-RPC
conversation to check that junk on stdin cannot wedge the server.
"""

import json
import queue
import subprocess
import sys
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from test_server_inmemory import FIXTURE_SESSION, GRAPH, call, library_payloads

from graph_server.fixture import CONCLUSION, RUNS

pytestmark = pytest.mark.anyio

REPO_ROOT = Path(__file__).resolve().parent.parent
SERVER_COMMAND = [sys.executable, "-m", "graph_server.server"]

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
    lines: queue.Queue[str] = queue.Queue()
    with (tmp_path / "server.stderr").open("w") as errlog:
        server = subprocess.Popen(
            SERVER_COMMAND,
            cwd=REPO_ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errlog,
            text=True,
            encoding="utf-8",
        )
    assert server.stdin is not None and server.stdout is not None
    stdout = server.stdout

    def pump() -> None:
        for line in stdout:
            lines.put(line)

    threading.Thread(target=pump, daemon=True).start()

    def send(message: dict[str, Any] | str) -> None:
        assert server.stdin is not None
        text = message if isinstance(message, str) else json.dumps(message)
        server.stdin.write(text + "\n")
        server.stdin.flush()

    def answer_to(request_id: int | None) -> dict[str, Any]:
        while True:  # queue.get raises Empty instead of hanging the test
            reply = json.loads(lines.get(timeout=60))
            if reply.get("id") == request_id:
                return reply

    try:
        hello = {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"},
        }
        send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello})
        assert answer_to(1)["result"]["serverInfo"]["name"] == "logic-graph"
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        for junk in ["not json at all {", "[1, 2, 3]", '{"jsonrpc": "2.0"}', "\x00" * 64]:
            send(junk)
            # JSON-RPC: a line with no readable id is answered with id null.
            assert answer_to(None)["error"]["code"] in (-32700, -32600)  # type: ignore[arg-type]
        send({"jsonrpc": "2.0", "id": 2, "method": "no/such/method"})
        assert answer_to(2)["error"]["code"] == -32601
        call = {"name": "list_graphs", "arguments": {}}
        send({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": call})
        reply = answer_to(3)["result"]
        assert reply["isError"] is False and reply["structuredContent"]["graphs"] == []
    finally:
        server.stdin.close()
        try:
            assert server.wait(timeout=30) == 0  # stdin closed: a clean exit
        finally:
            if server.poll() is None:
                server.kill()
