"""Registered evidence: once a graph holds spans, a given stands only if it cites one."""

from __future__ import annotations

from typing import Any, cast

import pytest

from graph_server.errors import InvalidInput, LimitExceeded
from graph_server.store import GraphStore
from graph_server.validation import StoreLimits

SPANS = [
    {"id": "D1.1", "text": "Orla Venn was born in Braskthorpe in 1848."},
    {"id": "D1.2", "text": "Braskthorpe is not on the coast."},
]


def given(node_id: str, claim: str, source: str | None) -> dict[str, Any]:
    node = {"id": node_id, "claim": claim, "type": "given"}
    return {**node, "source": source} if source is not None else node


@pytest.fixture
def store() -> GraphStore:
    store = GraphStore()
    assert store.add_evidence("g", SPANS).model_dump(by_alias=True) == {
        "graph_id": "g",
        "accepted": ["D1.1", "D1.2"],
        "rejected": [],
        "spans": 2,
    }
    return store


def test_a_given_that_restates_its_span_stays_a_given(store: GraphStore) -> None:
    reply = store.assert_graph("g", [given("a", "Orla Venn was born in Braskthorpe.", "D1.1")])
    assert [check.model_dump() for check in reply.citations] == [
        {
            "at": "nodes.0",
            "id": "a",
            "source": "D1.1",
            "ok": True,
            "reason": None,
            "detail": "restates D1.1",
        }
    ]
    assert store.get_graph("g").nodes[0].type == "given"


@pytest.mark.parametrize(
    ("node", "reason"),
    [
        (given("a", "Orla Venn was born in Braskmere.", "D1.1"), "name_mismatch"),
        (given("a", "Orla Venn was born in Braskthorpe in 1849.", "D1.1"), "number_mismatch"),
        (given("a", "Orla Venn was born in Braskthorpe.", None), "citation_missing"),
        (given("a", "Orla Venn was born in Braskthorpe.", "D9.9"), "citation_unknown"),
        (given("a", "Braskthorpe is on the coast.", "D1.2"), "quote_mismatch"),
    ],
)
def test_a_given_that_fails_its_citation_is_kept_as_an_assumption_with_the_reason(
    store: GraphStore, node: dict[str, Any], reason: str
) -> None:
    reply = store.assert_graph("g", [node])
    assert reply.accepted_nodes == ["a"]
    [check] = reply.citations
    assert (check.ok, check.reason) == (False, reason)
    assert store.get_graph("g").nodes[0].type == "assumption"


def test_without_registered_evidence_givens_are_taken_as_sent() -> None:
    store = GraphStore()
    reply = store.assert_graph("g", [given("a", "Anything at all.", None)])
    assert reply.citations == []
    assert store.get_graph("g").nodes[0].type == "given"


def test_other_node_types_are_never_checked(store: GraphStore) -> None:
    node = {"id": "c", "claim": "She was born inland.", "type": "conclusion"}
    assert store.assert_graph("g", [node]).citations == []


def test_spans_are_added_once_and_a_changed_text_is_refused(store: GraphStore) -> None:
    reply = store.add_evidence(
        "g",
        [
            SPANS[0],
            {"id": "D1.1", "text": "Orla Venn was born in Braskmere."},
            {"id": "D2.1", "text": "  Braskthorpe has a mill.  "},
            {"id": "D2.2", "text": ""},
            {"id": "D2.3", "text": "x", "page": 1},
            cast(Any, "not a span"),  # deliberately not a mapping
        ],
    )
    assert reply.accepted == ["D1.1", "D2.1"] and reply.spans == 3
    reasons = {item.at: item.reason for item in reply.rejected}
    assert reasons["spans.1"].startswith("span 'D1.1' already holds the text")
    assert reasons["spans.3"] == "text must be a non-empty string, got ''"
    assert reasons["spans.4"].startswith("unknown key 'page' in span")
    assert reasons["spans.5"].startswith("span must be an object")
    with pytest.raises(InvalidInput, match=r"^spans must be a list, got 'D1.1'$"):
        store.add_evidence("g", cast(Any, "D1.1"))  # deliberately not a list


def test_span_text_counts_against_the_memory_budget_and_is_freed_with_the_graph() -> None:
    store = GraphStore(limits=StoreLimits(max_claim_bytes=60))
    assert store.add_evidence("g", SPANS[:1]).spans == 1
    assert store.claim_bytes == len(SPANS[0]["text"])
    with pytest.raises(LimitExceeded, match=r"^memory budget exceeded"):
        store.add_evidence("h", SPANS[1:] * 1 + [{"id": "x", "text": "y" * 40}])
    assert [g.graph_id for g in store.list_graphs().graphs] == ["g"]  # h left no trace
    store.delete_graph("g")
    assert store.claim_bytes == 0
