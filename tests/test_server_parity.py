"""Library mode and MCP mode answer the same input with the same payload.

A seeded fuzz corpus of tool calls (well-formed calls, misspelt and unknown keys,
booleans where numbers belong, ``-0.0``, numeric strings, ids with spaces or
zero-width characters, JSON-encoded arrays, wrong types, missing arguments) runs
three ways against three fresh stores, in the same order: direct ``GraphStore``
method calls, an in-memory ``mcp.Client``, and raw JSON-RPC to a spawned
``python -m graph_server.server``. An error in library mode must be an MCP error
result with the same message; any other payload must equal the structured content.
"""

from __future__ import annotations

import inspect
import json
import random
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from raw_server import raw_server

from graph_server.errors import StoreError
from graph_server.fixture import CONCLUSION, RUNS
from graph_server.server import build_server, dispatch
from graph_server.store import GraphStore

GRAPHS = ["g", " g", "g\u200b", "h", 7]
NODE_IDS = ["A", "B", "C", "D", "E", "Z", " A ", "A\u200b", "N1", "N2", "B\u200bX", 3]
VALUES: list[Any] = [0.5, -0.0, 0.0, 1, "0.9", True, False, None, "nan", 1.5, [], {}, "high"]
CLAIMS = [
    "rack 9 has spare power",
    "Rack 9 has spare power.",
    "rack 9 has no spare power",
    "rack 9 has 4 spare slots",
    "rack 9 has 5 spare slots",
    "x" * 2_001,
]


def _node(rng: random.Random) -> Any:
    node: dict[str, Any] = {
        "id": rng.choice(NODE_IDS),
        "claim": rng.choice(CLAIMS),
        "type": rng.choice(["given", "inference", "assumption", "conclusion", "guess"]),
    }
    if rng.random() < 0.4:
        node["confidence"] = rng.choice(VALUES)
    if rng.random() < 0.2:
        node[rng.choice(["confidance", "source", "run_ids", "extra"])] = rng.choice(
            ["D1", "r2", 0.1, True, ["r1", "r2"]]
        )
    return json.dumps(node) if rng.random() < 0.1 else node


def _edge(rng: random.Random) -> Any:
    names = rng.choice([("src", "dst"), ("from", "to"), ("src", "to"), ("src", "weight")])
    edge: dict[str, Any] = {
        names[0]: rng.choice(NODE_IDS),
        names[1]: rng.choice(NODE_IDS),
        "relation": rng.choice(["supports", "attacks", "assumes", "causes"]),
    }
    if rng.random() < 0.3:
        edge["confidence"] = rng.choice(VALUES)
    return edge


def corpus(seed: int = 12, size: int = 220) -> list[tuple[str, dict[str, Any]]]:
    """A seeded sequence of tool calls, valid and invalid, sharing graph and node ids."""
    rng = random.Random(seed)
    calls: list[tuple[str, dict[str, Any]]] = [
        ("assert_graph", {"graph_id": "g", "nodes": nodes, "edges": edges, "run_id": run_id})
        for run_id, nodes, edges in RUNS
    ]
    for _ in range(size):
        tool = rng.choice(
            [
                "assert_graph",
                "assert_graph",
                "update_node",
                "mark_refuted",
                "check_structure",
                "support_width",
                "critical_links",
                "surviving_claims",
                "disputed_nodes",
                "merge_duplicates",
                "get_graph",
                "list_graphs",
                "delete_graph",
            ]
        )
        args: dict[str, Any] = {"graph_id": rng.choice(GRAPHS)}
        if tool == "assert_graph":
            args["nodes"] = [_node(rng) for _ in range(rng.randint(0, 4))]
            if rng.random() < 0.6:
                args["edges"] = [_edge(rng) for _ in range(rng.randint(0, 3))]
            if rng.random() < 0.2:
                args["nodes"] = json.dumps(args["nodes"])
            if rng.random() < 0.2:
                args["dedup"] = rng.choice([True, False, "false", "maybe", 1])
        elif tool == "update_node":
            args["node_id"] = rng.choice(NODE_IDS)
            args[rng.choice(["confidence", "confidance", "run_id"])] = rng.choice(VALUES)
        elif tool == "mark_refuted":
            args["node_id"] = rng.choice(NODE_IDS)
            args["reason"] = rng.choice(["misread", "", "  ", 5])
        elif tool in ("check_structure", "support_width", "critical_links", "disputed_nodes"):
            args["conclusion_id"] = rng.choice([CONCLUSION, " Z ", "Q", True])
        elif tool == "merge_duplicates":
            args[rng.choice(["jaccard_threshold", "ratio_threshold"])] = rng.choice(VALUES)
        elif tool == "list_graphs":
            args = {}
        elif tool == "delete_graph" and rng.random() < 0.7:
            continue  # keep the graphs alive for most of the corpus
        if rng.random() < 0.05:
            args["verbose"] = True
        if rng.random() < 0.03:
            args.pop("graph_id", None)
        calls.append((tool, args))
    return calls


def library_answer(store: GraphStore, tool: str, args: dict[str, Any]) -> Any:
    """The library call itself where Python can express it, else the shared dispatch."""
    method = getattr(store, tool)
    parameters = inspect.signature(method).parameters
    required = [name for name, p in parameters.items() if p.default is inspect.Parameter.empty]
    if set(args) <= set(parameters) and set(required) <= set(args) and None not in args.values():
        try:
            return method(**args).model_dump(mode="json", by_alias=True)
        except StoreError as refused:
            return {"error": str(refused)}
    return json.loads(json.dumps(dispatch(store, tool, args)))


def assert_same(tool: str, args: dict[str, Any], library: Any, error: bool, payload: Any) -> None:
    if "error" in library:
        assert error and payload == library["error"], (tool, args, payload, library)
    else:
        assert not error and payload == library, (tool, args, payload, library)


CORPUS = corpus()


def test_the_corpus_mixes_accepted_calls_errors_and_rejected_items() -> None:
    store = GraphStore()
    answers = [library_answer(store, tool, args) for tool, args in CORPUS]
    assert sum("error" in a for a in answers) > 40
    assert sum("error" not in a for a in answers) > 60
    assert sum(bool(a.get("rejected")) for a in answers) > 20


@pytest.mark.anyio
async def test_library_and_in_memory_mcp_give_the_same_payload_for_every_corpus_call() -> None:
    library = GraphStore()
    async with Client(build_server()) as client:
        for tool, args in CORPUS:
            result = await client.call_tool(tool, args)
            expected = library_answer(library, tool, args)
            payload = (
                result.content[0].text  # type: ignore[union-attr]
                if result.is_error
                else result.structured_content
            )
            assert_same(tool, args, expected, bool(result.is_error), payload)


def test_library_and_stdio_mcp_give_the_same_payload_for_every_corpus_call(
    tmp_path: Path,
) -> None:
    library = GraphStore()
    with raw_server(tmp_path) as server:
        for number, (tool, args) in enumerate(CORPUS, start=1):
            server.send_call(number, tool, args)
            reply = server.reply()
            assert reply["id"] == number
            result = reply["result"]
            payload = (
                result["content"][0]["text"] if result["isError"] else result["structuredContent"]
            )
            assert_same(tool, args, library_answer(library, tool, args), result["isError"], payload)
