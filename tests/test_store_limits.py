"""Fair and bounded: per-graph locks, all-or-nothing cancellation, the memory budget,
memory released on delete, and the id normalisation rule."""

from __future__ import annotations

import gc
import threading
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graph_server.errors import Cancelled, LimitExceeded
from graph_server.fixture import CONCLUSION, RUNS
from graph_server.store import GraphStore
from graph_server.validation import StoreLimits, normalise_id


def _claims(prefix: str, count: int) -> list[dict[str, Any]]:
    return [
        {"id": f"{prefix}{i}", "claim": f"{prefix} gauge {i} reads {i * 3} bar", "type": "given"}
        for i in range(count)
    ]


def _seeded(store: GraphStore, graph_id: str = "rack7") -> None:
    for run_id, nodes, edges in RUNS:
        store.assert_graph(graph_id, nodes, edges, run_id=run_id)


def test_work_on_one_graph_never_waits_for_a_busy_other_graph() -> None:
    store = GraphStore()
    _seeded(store, "other")
    inside, release = threading.Event(), threading.Event()

    def stall() -> bool:  # the cancel check runs while the ingest holds graph "busy"
        inside.set()
        release.wait(timeout=60)
        return False

    worker = threading.Thread(
        target=store.assert_graph, args=("busy", _claims("b", 5)), kwargs={"cancel": stall}
    )
    worker.start()
    try:
        assert inside.wait(timeout=60)
        # Graph "busy" is locked until release is set; these must not wait for it.
        assert store.check_structure("other", CONCLUSION).orphans == ["F", "G"]
        assert store.assert_graph("third", _claims("t", 3)).rejected == []
        assert [g.graph_id for g in store.list_graphs().graphs] == [
            "busy",
            "other",
            "third",
        ]
    finally:
        release.set()
        worker.join(timeout=60)
    assert len(store.get_graph("busy").nodes) == 5


@pytest.mark.parametrize("fire_at", [1, 2, 3, 4, 6])
def test_a_cancelled_ingest_leaves_the_graph_exactly_as_it_was(fire_at: int) -> None:
    store = GraphStore()
    _seeded(store)
    before, listed = store.get_graph("rack7"), store.list_graphs()
    checks = 0

    def cancel() -> bool:
        nonlocal checks
        checks += 1
        return checks >= fire_at

    # Re-asserted ids (their run ids and confidences change), new nodes, a restatement
    # that dedup would merge, an existing edge with a higher confidence and new edges.
    nodes = [
        {**RUNS[0][1][0], "confidence": 1.0, "run_ids": ["r9"]},
        *_claims("n", 2500),
        {"id": "dup", "claim": "The survey covers every server in rack 7.", "type": "given"},
    ]
    edges = [
        {**RUNS[0][2][0], "confidence": 1.0},
        {"src": "n1", "dst": "n2", "relation": "supports"},
    ]
    with pytest.raises(Cancelled) as refused:
        store.assert_graph("rack7", nodes, edges, run_id="r9", cancel=cancel)

    assert str(refused.value) == (
        "cancelled: assert_graph stopped before its commit point; nothing from this "
        "call was applied and the graph is as it was"
    )
    assert store.get_graph("rack7") == before and store.list_graphs() == listed
    # The same call without a cancel applies in full, merge included.
    applied = store.assert_graph("rack7", nodes, edges, run_id="r9")
    assert len(applied.accepted_nodes) == len(nodes) and applied.auto_merged == [["A", "dup"]]


def test_a_cancelled_first_ingest_leaves_no_graph_behind() -> None:
    store = GraphStore()
    with pytest.raises(Cancelled):
        store.assert_graph("new", _claims("n", 10), cancel=lambda: True)
    assert store.list_graphs().graphs == [] and store.claim_bytes == 0


def test_a_cancelled_merge_pass_changes_nothing() -> None:
    store = GraphStore()
    store.assert_graph("g", _claims("a", 5), dedup=False)
    store.assert_graph(
        "g", [{"id": "x", "claim": "a gauge 1 reads 3 bar.", "type": "given"}], dedup=False
    )
    before = store.get_graph("g")
    with pytest.raises(Cancelled):
        store.merge_duplicates("g", cancel=lambda: True)
    assert store.get_graph("g") == before
    assert store.merge_duplicates("g").merges == [["a1", "x"]]


def test_the_memory_budget_refuses_a_call_whole_and_names_the_limit() -> None:
    store = GraphStore(limits=StoreLimits(max_claim_bytes=1_000))
    first = store.assert_graph("a", _claims("a", 20))
    used = store.claim_bytes
    assert first.rejected == [] and 0 < used <= 1_000

    with pytest.raises(LimitExceeded) as over:
        store.assert_graph("b", _claims("b", 40))
    assert "memory budget exceeded" in str(over.value) and over.value.limit == "max_claim_bytes"
    assert "nothing from this call was applied" in str(over.value)
    assert store.claim_bytes == used and [g.graph_id for g in store.list_graphs().graphs] == ["a"]

    # Re-asserting what is stored costs nothing; deleting gives the budget back.
    assert store.assert_graph("a", _claims("a", 20)).rejected == []
    assert store.claim_bytes == used
    store.delete_graph("a")
    assert store.claim_bytes == 0
    assert store.assert_graph("b", _claims("b", 40)).rejected == []


def test_no_cache_keeps_the_text_of_a_deleted_graph() -> None:
    store = GraphStore()
    marker = "qzxv" + "kw" * 3
    nodes = [
        {"id": f"m{i}", "claim": f"{marker} sensor {i} reported {i} faults", "type": "given"}
        for i in range(50)
    ]
    store.assert_graph("doomed", nodes)
    store.merge_duplicates("doomed")
    del nodes
    store.delete_graph("doomed")
    gc.collect()

    def holds_marker(obj: Any) -> bool:
        if isinstance(obj, dict):
            items: Any = [*obj.keys(), *obj.values()]
        elif isinstance(obj, list | tuple | set | frozenset):
            items = obj
        else:
            return False
        return any(isinstance(item, str) and marker in item for item in items)

    assert not any(holds_marker(obj) for obj in gc.get_objects())


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("A", "A"),
        ("  A \t", "A"),
        ("A\u200b", "A"),
        ("\ufeffA", "A"),
        ("Cafe\u0301", "Café"),
        (7, "7"),
    ],
)
def test_ids_are_nfc_normalised_and_trimmed_of_spaces_and_zero_width_characters(
    raw: Any, expected: str
) -> None:
    assert normalise_id("id", raw, StoreLimits()) == (expected, None)


@pytest.mark.parametrize("raw", ["A\u200bB", "A\x00B", "A\nB", "", "\u200b", True, 1.5, None])
def test_ids_holding_control_or_invisible_characters_or_no_text_are_refused(raw: Any) -> None:
    value, problem = normalise_id("id", raw, StoreLimits())
    assert value is None and problem and problem.startswith("id ")


def test_three_spellings_of_one_id_are_one_node() -> None:
    store = GraphStore()
    claim = "the pump failed"
    result = store.assert_graph(
        "g",
        [{"id": spelling, "claim": claim, "type": "given"} for spelling in ("A", "A ", "A\u200b")],
    )
    assert result.accepted_nodes == ["A", "A", "A"]
    assert [n.id for n in store.get_graph("g").nodes] == ["A"]
    assert store.update_node(" g ", "A\u200b", confidence=-0.0).node.confidence == 0.0
    assert str(store.get_graph("g").nodes[0].confidence) == "0.0"


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=12))
def test_normalising_an_id_twice_changes_nothing(raw: str) -> None:
    value, _ = normalise_id("id", raw, StoreLimits())
    if value is not None:
        assert normalise_id("id", value, StoreLimits()) == (value, None)
