"""Whatever a client sends, the server answers with a result and keeps serving.

Invalid calls come back as MCP error results (``isError``) whose text names the
offending field; the call after them is answered normally. The lenient coercions
real models need (numbers as strings, arrays as JSON text) are accepted and give
the same graph as well-typed input.
"""

import json
from typing import Any, cast

import pytest
from mcp import Client
from test_server_inmemory import GRAPH, call, text_of  # pytest puts tests/ on sys.path

from graph_server.fixture import CONCLUSION, R1_EDGES, R1_NODES, RUNS
from graph_server.server import build_server
from graph_server.store import GraphStore

pytestmark = pytest.mark.anyio

_NODE = {"id": "N", "claim": "a fresh claim about rack 9", "type": "given"}
_ON_CONCLUSION = {"graph_id": GRAPH, "conclusion_id": CONCLUSION}

# (case id, tool, arguments, text the error message must contain)
BAD_CALLS: list[tuple[str, str, dict[str, Any], str]] = [
    # wrong types
    (
        "graph_id_is_a_list",
        "check_structure",
        {"graph_id": ["g"], "conclusion_id": "Z"},
        "graph_id",
    ),
    ("graph_id_is_empty", "surviving_claims", {"graph_id": ""}, "graph_id"),
    (
        "conclusion_is_an_object",
        "support_width",
        {"graph_id": GRAPH, "conclusion_id": {}},
        "conclusion_id",
    ),
    (
        "threshold_is_a_word",
        "merge_duplicates",
        {"graph_id": GRAPH, "jaccard_threshold": "high"},
        "jaccard_threshold",
    ),
    (
        "threshold_out_of_range",
        "merge_duplicates",
        {"graph_id": GRAPH, "ratio_threshold": 7},
        "ratio_threshold",
    ),
    (
        "confidence_is_nan",
        "update_node",
        {"graph_id": GRAPH, "node_id": "B", "confidence": "nan"},
        "confidence",
    ),
    ("nodes_is_a_number", "assert_graph", {"graph_id": GRAPH, "nodes": 42}, "nodes"),
    ("nodes_is_prose", "assert_graph", {"graph_id": GRAPH, "nodes": "A supports C"}, "nodes"),
    ("nodes_is_broken_json", "assert_graph", {"graph_id": GRAPH, "nodes": '[{"id": "N",'}, "nodes"),
    (
        "nodes_nested_too_deep",
        "assert_graph",
        {"graph_id": GRAPH, "nodes": "[" * 100_000 + "]" * 100_000},
        "nodes",
    ),
    # missing fields
    ("no_conclusion_id", "check_structure", {"graph_id": GRAPH}, "conclusion_id"),
    ("no_reason", "mark_refuted", {"graph_id": GRAPH, "node_id": "D"}, "reason"),
    ("no_nodes", "assert_graph", {"graph_id": GRAPH, "edges": []}, "nodes"),
    ("no_arguments_at_all", "critical_links", {}, "graph_id"),
    (
        "one_megabyte_reason",
        "mark_refuted",
        {"graph_id": GRAPH, "node_id": "D", "reason": "y" * 1_000_000},
        "reason",
    ),
    # refused by the store itself
    (
        "unknown_graph",
        "check_structure",
        {"graph_id": "no-such-graph", "conclusion_id": "Z"},
        "no-such-graph",
    ),
    (
        "unknown_node",
        "mark_refuted",
        {"graph_id": GRAPH, "node_id": "Y", "reason": "r"},
        "node_id 'Y'",
    ),
    (
        "unknown_conclusion",
        "disputed_nodes",
        {"graph_id": GRAPH, "conclusion_id": "Q"},
        "conclusion_id 'Q'",
    ),
    ("update_with_nothing", "update_node", {"graph_id": GRAPH, "node_id": "B"}, "needs confidence"),
    ("unknown_tool", "format_hard_disk", {"graph_id": GRAPH}, "unknown tool 'format_hard_disk'"),
    # argument names are checked strictly
    (
        "misspelt_argument",
        "update_node",
        {"graph_id": GRAPH, "node_id": "B", "confidance": 0.1},
        "unknown argument 'confidance' for update_node; accepted arguments: confidence,",
    ),
    (
        "extra_argument_on_a_read",
        "check_structure",
        {"graph_id": GRAPH, "conclusion_id": "Z", "verbose": True},
        "unknown argument 'verbose'",
    ),
    (
        "confidence_is_a_boolean",
        "update_node",
        {"graph_id": GRAPH, "node_id": "B", "confidence": True},
        "confidence must be a number",
    ),
    (
        "node_id_with_zero_width_inside",
        "update_node",
        {"graph_id": GRAPH, "node_id": "B\u200bC", "confidence": 0.5},
        "U+200B",
    ),
    (
        "arguments_not_an_object_list_of_nodes_as_graph",
        "surviving_claims",
        {"graph_id": 3.5},
        "graph_id must be a non-empty string",
    ),
]


# (case id, the one bad item of an assert_graph call, its position, text its reason contains)
BAD_ITEMS: list[tuple[str, dict[str, Any], str, str]] = [
    ("node_is_a_number", {"nodes": [1]}, "nodes.0", "node must be an object"),
    ("node_without_claim", {"nodes": [{"id": "N", "type": "given"}]}, "nodes.0", "claim"),
    ("node_of_unknown_type", {"nodes": [{**_NODE, "type": "hypothesis"}]}, "nodes.0", "type"),
    ("node_confidence_word", {"nodes": [{**_NODE, "confidence": "very"}]}, "nodes.0", "confidence"),
    (
        "node_confidence_boolean",
        {"nodes": [{**_NODE, "confidence": True}]},
        "nodes.0",
        "confidence",
    ),
    ("node_source_empty", {"nodes": [{**_NODE, "source": ""}]}, "nodes.0", "source"),
    (
        "node_key_misspelt",
        {"nodes": [{**_NODE, "confidance": 0.1}]},
        "nodes.0",
        "unknown key 'confidance' in node; accepted keys: claim, confidence, id,",
    ),
    ("node_id_zero_width_inside", {"nodes": [{**_NODE, "id": "N\u200bM"}]}, "nodes.0", "U+200B"),
    (
        "edge_of_unknown_relation",
        {"nodes": [], "edges": [{"src": "A", "dst": "C", "relation": "causes"}]},
        "edges.0",
        "relation",
    ),
    (
        "edge_without_destination",
        {"nodes": [], "edges": [{"src": "A", "relation": "supports"}]},
        "edges.0",
        "dst (or to)",
    ),
    (
        "edge_key_misspelt",
        {"nodes": [], "edges": [{"src": "A", "dst": "C", "relation": "supports", "weight": 1}]},
        "edges.0",
        "unknown key 'weight' in edge",
    ),
    (
        "one_megabyte_claim",
        {"nodes": [{**_NODE, "claim": "x" * 1_000_000}]},
        "nodes.0",
        "claim has 1000000 characters",
    ),
]


@pytest.mark.parametrize(
    ("payload", "at", "named"), [c[1:] for c in BAD_ITEMS], ids=[c[0] for c in BAD_ITEMS]
)
async def test_a_bad_item_is_rejected_with_its_position_and_reason_exactly_as_in_library_mode(
    payload: dict[str, Any], at: str, named: str
) -> None:
    library = GraphStore()
    for run_id, nodes, edges in RUNS:
        library.assert_graph(GRAPH, nodes, edges, run_id=run_id)
    expected = library.assert_graph(GRAPH, **payload).model_dump(mode="json", by_alias=True)

    async with Client(build_server()) as client:
        await seeded_client_calls(client)
        before = await call(client, "get_graph", {"graph_id": GRAPH})
        served = await call(client, "assert_graph", {"graph_id": GRAPH, **payload})
        assert await call(client, "get_graph", {"graph_id": GRAPH}) == before

    assert served == expected
    [rejection] = served["rejected"]
    assert rejection["at"] == at and named in rejection["reason"]
    assert len(json.dumps(rejection)) < 5_000  # a 1 MB value is not echoed back


async def seeded_client_calls(client: Client) -> None:
    for run_id, nodes, edges in RUNS:
        await call(
            client,
            "assert_graph",
            {"graph_id": GRAPH, "nodes": nodes, "edges": edges, "run_id": run_id},
        )


@pytest.mark.parametrize(
    ("tool", "arguments", "named"), [c[1:] for c in BAD_CALLS], ids=[c[0] for c in BAD_CALLS]
)
async def test_bad_call_is_an_error_result_naming_the_field_and_the_next_call_is_answered(
    tool: str, arguments: dict[str, Any], named: str
) -> None:
    async with Client(build_server()) as client:
        await seeded_client_calls(client)
        before = await call(client, "get_graph", {"graph_id": GRAPH})

        result = await client.call_tool(tool, arguments)

        assert result.is_error
        message = text_of(result)
        assert named in message
        assert len(message) < 5_000  # a 1 MB value is not echoed back
        assert await call(client, "get_graph", {"graph_id": GRAPH}) == before
        assert (await call(client, "support_width", _ON_CONCLUSION))["disjoint_paths"] == 2


async def test_items_the_store_refuses_come_back_per_item_like_library_mode() -> None:
    dangling = {"src": "A", "dst": "nowhere", "relation": "supports"}
    args: dict[str, Any] = {"graph_id": GRAPH, "nodes": [_NODE], "edges": [dangling]}
    library = GraphStore()
    library.assert_graph(GRAPH, R1_NODES, R1_EDGES)

    async with Client(build_server()) as client:
        await call(
            client, "assert_graph", {"graph_id": GRAPH, "nodes": R1_NODES, "edges": R1_EDGES}
        )
        served = await call(client, "assert_graph", args)

    assert served == library.assert_graph(**args).model_dump(mode="json", by_alias=True)
    assert served["accepted_nodes"] == ["N"]
    assert [r["item"] for r in served["rejected"]] == [dangling]


async def test_numbers_and_arrays_sent_as_strings_build_the_same_graph() -> None:
    stringly_nodes = [
        {**node, "confidence": str(node["confidence"]), "run_ids": "r1"} for node in R1_NODES
    ]
    stringly_edges = [
        json.dumps({**edge, "confidence": str(edge["confidence"]), "run_ids": "r1"})
        for edge in R1_EDGES
    ]
    library = GraphStore()
    library.assert_graph(GRAPH, R1_NODES, R1_EDGES, run_id="r1")
    library.assert_graph(GRAPH, [{"id": "7", "claim": "rack 7 is cooled", "type": "assumption"}])
    library.merge_duplicates(GRAPH, 0.9, 0.95)

    async with Client(build_server()) as client:
        arrays_as_text = {
            "graph_id": GRAPH,
            "nodes": json.dumps(stringly_nodes),
            "edges": json.dumps(stringly_edges),
        }
        await call(client, "assert_graph", arrays_as_text)
        numeric_id = {"id": 7, "claim": "rack 7 is cooled", "type": "assumption"}
        await call(client, "assert_graph", {"graph_id": GRAPH, "nodes": [json.dumps(numeric_id)]})
        thresholds = {"graph_id": GRAPH, "jaccard_threshold": "0.9", "ratio_threshold": "0.95"}
        await call(client, "merge_duplicates", thresholds)
        served = await call(client, "get_graph", {"graph_id": GRAPH})

    assert served == library.get_graph(GRAPH).model_dump(mode="json", by_alias=True)


async def test_dedup_sent_as_text_and_a_numeric_source_act_like_library_mode() -> None:
    twin = {"id": "T", "claim": "A fresh claim about rack 9.", "type": "given", "source": "9"}
    library = GraphStore()
    library.assert_graph(GRAPH, [_NODE])
    library.assert_graph(GRAPH, [twin], dedup=cast(Any, "false"))  # text, as a client sends it

    async with Client(build_server()) as client:
        await call(client, "assert_graph", {"graph_id": GRAPH, "nodes": [_NODE]})
        sent = await call(
            client,
            "assert_graph",
            {"graph_id": GRAPH, "nodes": [{**twin, "source": 9}], "dedup": "false"},
        )
        served = await call(client, "get_graph", {"graph_id": GRAPH})

    assert sent["auto_merged"] == [] and len(served["nodes"]) == 2
    assert served == library.get_graph(GRAPH).model_dump(mode="json", by_alias=True)
