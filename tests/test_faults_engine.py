"""Fault tests for the graph engine and its server (issue 35): nothing lost, nothing unbounded.

Each test reproduces one defect the fault pass found, at a size that runs in well under a
second; the figures at full size (2,000 claims over MCP, 100 random state files, the big
graph) are printed by ``benchmarks/faults_engine.py``.
"""

from __future__ import annotations

import itertools
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from strategies import reproducible

from graph_server.dedup import _guard_pairs
from graph_server.similarity import ClaimKey, claim_key
from graph_server.state import StateFile
from graph_server.store import GraphStore
from graph_server.validation import StoreLimits


def templated(count: int, start: int = 0) -> list[dict[str, str]]:
    """Claims that differ only in one number: a list of racks, not rival readings."""
    return [
        {"id": f"n{i}", "claim": f"the server in rack {i} runs linux", "type": "given"}
        for i in range(start, start + count)
    ]


# ------------------------------------------------------------------ 1. dedup edge cap


def test_templated_claims_differing_in_one_number_make_no_attack_edges() -> None:
    store = GraphStore()
    result = store.assert_graph("g", templated(200))
    assert result["contradictions_created"] == []
    assert store.list_graphs()["graphs"] == [{"graph_id": "g", "nodes": 200, "edges": 0}]
    [withheld] = result["contradictions_withheld"]
    assert withheld["size"] == 200 and withheld["pairs"] == 200 * 199 // 2
    assert "max_rival_claims (32)" in withheld["reason"]
    assert withheld["claims"] == ["n0", "n1", "n10", "n100", "n101", "n102", "n103", "n104"]


def test_a_few_rival_readings_of_one_value_still_attack_each_other() -> None:
    store = GraphStore()
    claims = [
        {"id": f"r{i}", "claim": f"trellium melts at {t} C", "type": "given"}
        for i, t in enumerate((412, 350, 390))
    ]
    result = store.assert_graph("g", claims)
    assert result["contradictions_created"] == [["r0", "r1"], ["r0", "r2"], ["r1", "r2"]]
    assert result["contradictions_withheld"] == []
    assert store.list_graphs()["graphs"][0]["edges"] == 6


def test_templated_claims_added_one_call_at_a_time_stop_attacking_past_the_cap() -> None:
    store = GraphStore(limits=StoreLimits(max_rival_claims=4))
    for start in range(0, 10, 2):
        store.assert_graph("g", templated(2, start))
    # Pairs among the first four claims were rivals; later calls find a group of 6, 8, 10.
    assert store.list_graphs()["graphs"][0]["edges"] == 4 * 3
    again = store.merge_duplicates("g")
    assert again["contradictions_created"] == []
    assert [entry["size"] for entry in again["contradictions_withheld"]] == [10]


def test_contradictions_never_take_a_graph_past_its_edge_limit() -> None:
    store = GraphStore(limits=StoreLimits(max_edges_per_graph=5))
    claims = [
        {"id": f"v{i}", "claim": f"the pump read {40 + i} bar", "type": "given"} for i in range(4)
    ]
    result = store.assert_graph("g", claims, dedup=False)
    assert result["rejected"] == []
    merged = store.merge_duplicates("g")
    assert len(merged["contradictions_created"]) == 2  # four edges fit, the fifth pair would not
    assert store.list_graphs()["graphs"][0]["edges"] == 4
    [full] = merged["contradictions_withheld"]
    assert full["pairs"] == 4 and "max_edges_per_graph (5)" in full["reason"]


def test_a_state_file_written_after_templated_claims_loads_back(tmp_path: Path) -> None:
    store = GraphStore(limits=StoreLimits(max_edges_per_graph=1_000))
    store.assert_graph("g", templated(100))
    state = StateFile(tmp_path / "state.json")
    state.save(store)
    restored = GraphStore(limits=StoreLimits(max_edges_per_graph=1_000))
    assert state.load_into(restored) == 1
    assert restored.dump_state() == store.dump_state()


def every_pair_rivals(keys: list[ClaimKey], cap: int) -> set[tuple[int, int]]:
    """The capped guard pairs by comparing every pair: the oracle for ``_guard_pairs``.

    Two keys with the same content words are rivals when their numbers agree and their
    negation parities differ (their group: every key of that statement), or when their
    parities and number counts agree and the numbers differ at exactly one position (their
    group: every key agreeing with them everywhere but there). A pair counts only when its
    group holds at most ``cap`` keys.
    """
    found: set[tuple[int, int]] = set()
    for i, j in itertools.combinations(range(len(keys)), 2):
        a, b = keys[i], keys[j]
        if not a.content or a.content != b.content:
            continue
        if a.numbers == b.numbers and a.negations % 2 != b.negations % 2:
            group = [k for k in keys if (k.content, k.numbers) == (a.content, a.numbers)]
        elif (
            a.negations % 2 == b.negations % 2
            and len(a.numbers) == len(b.numbers)
            and sum(x != y for x, y in zip(a.numbers, b.numbers, strict=True)) == 1
        ):
            at = next(
                p for p, (x, y) in enumerate(zip(a.numbers, b.numbers, strict=True)) if x != y
            )
            rest = a.numbers[:at] + a.numbers[at + 1 :]
            group = [
                k
                for k in keys
                if (k.content, k.negations % 2, len(k.numbers))
                == (a.content, a.negations % 2, len(a.numbers))
                and k.numbers[:at] + k.numbers[at + 1 :] == rest
            ]
        else:
            continue
        if len(group) <= cap:
            found.add((i, j))
    return found


RIVAL_CLAIMS = st.lists(
    st.builds(
        "the {} pump {} read {} bar".format,
        st.sampled_from(["", "not", "never not"]),
        st.sampled_from(["", "3", "4"]),
        st.sampled_from(["40", "50", "60", "40 then 50"]),
    ),
    max_size=14,
)


@reproducible(200)
@given(claims=RIVAL_CLAIMS, cap=st.integers(min_value=2, max_value=8))
def test_capped_guard_pairs_match_the_every_pair_oracle(claims: list[str], cap: int) -> None:
    keys = [claim_key(claim) for claim in claims]
    pairs, over_cap = _guard_pairs(keys, cap)
    assert pairs == every_pair_rivals(keys, cap)
    uncapped, _ = _guard_pairs(keys, len(keys) + 1)
    withheld = sum(count for _, count in over_cap)
    assert len(uncapped) == len(pairs) + withheld
