"""The tool table: schemas derived from the typed models, one source for defaults and enums.

Also the store's ``merge_duplicates`` default: the store's own thresholds.
"""

import inspect
from typing import Any

import pytest
from mcp import Client

from graph_server import records, validation
from graph_server.errors import InvalidInput
from graph_server.server import build_server, dispatch
from graph_server.store import GraphStore
from graph_server.tool_spec import placeholder_values, render_schema
from graph_server.tools import SPECS, TOOLS, search_evidence, tool_listing
from graph_server.validation import StoreLimits

NEAR_DUPLICATES = [
    {"id": "a", "claim": "the pump at site four failed twice", "type": "given"},
    {"id": "b", "claim": "the pump at site four failed twice today", "type": "given"},
]


def strict_store() -> GraphStore:
    store = GraphStore(jaccard_threshold=1.0, ratio_threshold=1.0)
    store.assert_graph("g", NEAR_DUPLICATES, run_id="r1")
    return store


def test_merge_duplicates_without_thresholds_uses_the_stores_own() -> None:
    store = strict_store()
    assert store.merge_duplicates("g") == records.MergeDuplicatesAnswer(
        merges=[], contradictions_created=[], contradictions_withheld=[]
    )
    assert store.merge_duplicates("g", None, None).merges == []
    assert store.merge_duplicates("g", 0.7, 0.85).merges == [["a", "b"]]


def test_merge_duplicates_tool_without_thresholds_uses_the_stores_own() -> None:
    store = strict_store()
    answer = dispatch(store, "merge_duplicates", {"graph_id": "g", "jaccard_threshold": None})
    assert answer == {"merges": [], "contradictions_created": [], "contradictions_withheld": []}
    with pytest.raises(InvalidInput, match=r"^jaccard_threshold") as refused:
        GraphStore().merge_duplicates("nope", 1.5)
    assert refused.value.field == "jaccard_threshold"


def test_every_tool_is_a_store_method_or_the_search_taking_its_argument_names() -> None:
    assert len(SPECS) == len(TOOLS) == 16
    for spec in TOOLS:
        method: Any = search_evidence if spec.name == "search_evidence" else None
        method = method or getattr(GraphStore, spec.name)
        assert spec.call is method
        parameters = set(inspect.signature(method).parameters) - {"self", "cancel"}
        assert parameters == set(spec.accepted), spec.name


def test_each_tools_answer_schema_is_the_return_type_of_its_method() -> None:
    assert SPECS["get_graph"].answer is records.GetGraphAnswer
    assert SPECS["search_evidence"].answer is records.SearchEvidenceAnswer
    assert all(spec.answer.__module__ == "graph_server.records" for spec in TOOLS)


def test_item_models_accept_exactly_the_keys_the_store_accepts() -> None:
    values = placeholder_values(StoreLimits(), 0.7, 0.85)
    node = render_schema(records.NodeIn, values)
    edge = render_schema(records.EdgeIn, values)
    span = render_schema(records.SpanIn, values)
    assert tuple(node["properties"]) == validation.NODE_KEYS
    assert set(edge["properties"]) == set(validation.EDGE_KEYS)
    assert tuple(span["properties"]) == validation.SPAN_KEYS


def test_defaults_and_enums_in_the_schemas_come_from_validation() -> None:
    listing = {tool.name: tool for tool in tool_listing(StoreLimits(), 0.7, 0.85).tools}
    assert_graph = listing["assert_graph"].input_schema["properties"]
    node = assert_graph["nodes"]["items"]["properties"]
    assert node["type"]["enum"] == list(validation.NODE_TYPES)
    assert node["confidence"]["default"] == validation.DEFAULT_CONFIDENCE
    relation = assert_graph["edges"]["items"]["properties"]["relation"]
    assert relation["enum"] == list(validation.RELATIONS)
    k = listing["search_evidence"].input_schema["properties"]["k"]
    assert (k["default"], k["maximum"]) == (validation.DEFAULT_SEARCH_K, validation.MAX_SEARCH_K)
    # dense: keyword-only by default, as `logic-graph search` and corpus.retrieve
    assert SPECS["search_evidence"].defaults == {"k": validation.DEFAULT_SEARCH_K, "dense": False}
    dense = listing["search_evidence"].input_schema["properties"]["dense"]
    assert (dense["type"], dense["default"]) == ("boolean", False)
    assert SPECS["assert_graph"].defaults == {"dedup": True}
    assert SPECS["merge_duplicates"].defaults == {}


def test_search_limits_agree_with_the_corpus_layer_that_enforces_them() -> None:
    documents = pytest.importorskip("corpus.documents")
    assert documents.MAX_SEARCH_K == validation.MAX_SEARCH_K
    assert documents.MAX_SEARCH_QUERY_CHARS == validation.MAX_SEARCH_QUERY_CHARS
    default_k = inspect.signature(documents.search_evidence).parameters["k"].default
    assert default_k == validation.DEFAULT_SEARCH_K


@pytest.mark.anyio
async def test_listing_shows_the_running_stores_limits_and_thresholds() -> None:
    store = GraphStore(limits=StoreLimits(max_id_chars=7, max_claim_chars=9), jaccard_threshold=0.5)
    async with Client(build_server(store)) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    merge = tools["merge_duplicates"].input_schema["properties"]
    assert "default 0.5)" in merge["jaccard_threshold"]["description"]
    assert "default 0.85)" in merge["ratio_threshold"]["description"]
    node = tools["assert_graph"].input_schema["properties"]["nodes"]["items"]["properties"]
    assert node["id"]["maxLength"] == 7 and node["claim"]["maxLength"] == 9
    assert "at most 9 characters" in node["claim"]["description"]
    graph_id = tools["get_graph"].input_schema["properties"]["graph_id"]
    assert "1-7 characters" in graph_id["description"]
    assert "$" not in str([tool.model_dump() for tool in tools.values()])
