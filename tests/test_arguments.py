"""Argument width (graph_server.arguments): joint premises, independent arguments, the cut.

The examples pin the definition on hand-built graphs; the property tests build small random
graphs with per-run edges through ``GraphStore.assert_graph`` and compare every answer with a
brute-force oracle written from the fixpoint reading of the definition (a set of claims is
sufficient when the target is derivable inside it; arguments are the minimal sufficient sets;
width and cut by trying every subset), never from the engine's own helpers.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from typing import Any

import networkx as nx
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import distinct_claim, reproducible

from graph_server.arguments import (
    argument_width,
    enumerate_arguments,
    max_disjoint,
    min_hitting_set,
    premise_sets,
)
from graph_server.errors import NotFound
from graph_server.fixture import CONCLUSION, RUNS
from graph_server.store import GraphStore

GID = "g"
RUN_IDS = ("r1", "r2", "r3", "r4")


def node(node_id: str, node_type: str = "inference") -> dict[str, Any]:
    return {"id": node_id, "claim": distinct_claim(node_id), "type": node_type}


def supports(*pairs: str) -> list[dict[str, Any]]:
    """``"a>b"`` is a supports edge from a to b."""
    return [
        {"src": pair.split(">")[0], "dst": pair.split(">")[1], "relation": "supports"}
        for pair in pairs
    ]


def store_with(*runs: tuple[str, list[dict[str, Any]], list[dict[str, Any]]]) -> GraphStore:
    store = GraphStore()
    for run_id, nodes, edges in runs:
        result = store.assert_graph(GID, nodes, edges, run_id=run_id, dedup=False)
        assert result.rejected == [], result
    return store


SENTENCES = [node(s, "given") for s in ("s1", "s2", "s3", "s4", "s5", "s6")]


# ---------------------------------------------------------------------- examples


def test_a_conclusion_resting_jointly_on_three_sentences_has_width_1() -> None:
    store = store_with(
        ("r1", [*SENTENCES[:3], node("c", "conclusion")], supports("s1>c", "s2>c", "s3>c"))
    )

    result = store.argument_width(GID, "c")

    assert result.width == 1
    assert result.arguments == [["s1", "s2", "s3"]]
    assert len(result.min_cut) == 1
    assert store.support_width(GID, "c").disjoint_paths == 3


def test_two_runs_with_disjoint_sentence_chains_to_one_answer_have_width_2() -> None:
    conclusion = node("c", "conclusion")
    store = store_with(
        ("r1", [*SENTENCES[:2], node("i1"), conclusion], supports("s1>i1", "s2>i1", "i1>c")),
        ("r2", [*SENTENCES[2:4], node("i2"), conclusion], supports("s3>i2", "s4>i2", "i2>c")),
    )

    result = store.argument_width(GID, "c")

    assert result.width == 2
    assert result.independent == [["i1", "s1", "s2"], ["i2", "s3", "s4"]]
    assert len(result.min_cut) == 2


def test_two_runs_drawing_the_same_chain_have_width_1() -> None:
    chain = (
        [*SENTENCES[:2], node("i1"), node("c", "conclusion")],
        supports("s1>i1", "s2>i1", "i1>c"),
    )
    store = store_with(("r1", *chain), ("r2", *chain))

    result = store.argument_width(GID, "c")

    assert result.width == 1
    assert result.arguments == [["i1", "s1", "s2"]]


def test_a_merged_claim_has_one_premise_set_per_run() -> None:
    store = store_with(
        ("r1", [*SENTENCES[:2], node("m")], supports("s1>m", "s2>m")),
        ("r2", [SENTENCES[2], node("m")], supports("s3>m")),
    )
    graph = store._graphs[GID].graph

    assert premise_sets(graph, "m") == [frozenset({"s3"}), frozenset({"s1", "s2"})]
    assert store.argument_width(GID, "m").arguments == [["s3"], ["s1", "s2"]]


def test_a_refuted_premise_sinks_its_whole_premise_set() -> None:
    store = store_with(("r1", [*SENTENCES[:2], node("c", "conclusion")], supports("s1>c", "s2>c")))
    store.mark_refuted(GID, "s2", "misread")

    assert store.argument_width(GID, "c").width == 0
    assert store.support_width(GID, "c").disjoint_paths == 1


def test_an_unsupported_assumption_among_the_premises_leaves_no_argument() -> None:
    nodes = [SENTENCES[0], node("a", "assumption"), node("c", "conclusion")]
    store = store_with(("r1", nodes, supports("s1>c", "a>c")))

    result = store.argument_width(GID, "c")

    assert (result.width, result.arguments, result.min_cut) == (0, [], [])


def test_a_support_cycle_is_not_an_argument() -> None:
    nodes = [SENTENCES[0], node("a"), node("b"), node("c", "conclusion")]
    store = store_with(
        ("r1", nodes, supports("a>b", "b>c")),
        ("r2", nodes, supports("b>a")),
        ("r3", nodes, supports("s1>a")),
    )

    assert store.argument_width(GID, "c").arguments == [["a", "b", "s1"]]


def test_the_design_fixture_is_one_argument_though_it_has_two_disjoint_paths() -> None:
    store = GraphStore()
    for run_id, nodes, edges in RUNS:
        store.assert_graph(GID, nodes, edges, run_id=run_id)

    result = store.argument_width(GID, CONCLUSION)

    assert result.width == 1
    assert result.arguments == [["A", "B", "C", "D", "E"]]
    assert result.min_cut == ["A"]
    assert store.support_width(GID, CONCLUSION).disjoint_paths == 2


def nine_arguments() -> nx.MultiDiGraph:
    """c rests jointly on p and q; each has three one-sentence alternatives: 9 arguments."""
    graph = nx.MultiDiGraph()
    for name, kind in [("c", "conclusion"), ("p", "inference"), ("q", "inference")]:
        graph.add_node(name, type=kind, refuted=False)
    for index in range(6):
        graph.add_node(f"s{index}", type="given", refuted=False)
        graph.add_edge(
            f"s{index}", "p" if index < 3 else "q", key="supports", run_ids={f"r{index}"}
        )
    graph.add_edge("p", "c", key="supports", run_ids={"r9"})
    graph.add_edge("q", "c", key="supports", run_ids={"r9"})
    return graph


def test_more_derivations_than_the_cap_are_cut_and_flagged() -> None:
    graph = nine_arguments()

    full, full_capped = enumerate_arguments(graph, "c", max_arguments=9)
    cut, capped = enumerate_arguments(graph, "c", max_arguments=4)

    assert (len(full), full_capped) == (9, False)
    assert (len(cut), capped) == (4, True)
    assert set(cut) < set(full)
    assert argument_width(graph, "c", max_arguments=9).width == 1  # all of them need p and q


def test_running_out_of_union_work_keeps_only_real_derivations_and_is_flagged() -> None:
    graph = nine_arguments()

    full, _ = enumerate_arguments(graph, "c")
    starved, capped = enumerate_arguments(graph, "c", max_unions=5)

    assert capped is True
    assert set(starved) < set(full)


def test_a_cap_below_one_is_refused() -> None:
    graph = nx.MultiDiGraph()
    graph.add_node("c", type="conclusion", refuted=False)
    with pytest.raises(ValueError, match="max_arguments"):
        enumerate_arguments(graph, "c", max_arguments=0)
    with pytest.raises(ValueError, match="max_unions"):
        enumerate_arguments(graph, "c", max_unions=0)


def test_the_packing_and_the_cut_can_differ_in_size() -> None:
    # Three arguments pairwise sharing one claim (a triangle): one fits, two claims cut them.
    family = [frozenset("ab"), frozenset("bc"), frozenset("ca")]

    assert max_disjoint(family) == [0]
    assert len(min_hitting_set(family)) == 2


def test_an_empty_argument_cannot_be_hit() -> None:
    with pytest.raises(ValueError, match="empty"):
        min_hitting_set([frozenset()])


def test_an_unknown_conclusion_is_an_error_naming_it() -> None:
    store = store_with(("r1", [SENTENCES[0]], []))

    with pytest.raises(NotFound, match="conclusion_id 'Q'"):
        store.argument_width(GID, "Q")


# ------------------------------------------------------------ property cross-check


@dataclass(frozen=True)
class Case:
    types: dict[str, str]
    edges: dict[tuple[str, str], frozenset[str]]
    """(src, dst) -> the runs that drew the supports edge (empty: no provenance)."""
    refuted: frozenset[str]
    target: str


@st.composite
def run_graphs(draw: st.DrawFn) -> Case:
    """Up to 9 claims, supports edges each drawn by a few runs (or none), some refuted."""
    size = draw(st.integers(1, 9))
    ids = [f"n{i}" for i in range(size)]
    kinds = st.sampled_from(["given", "given", "inference", "inference", "assumption"])
    types = {node_id: "conclusion" if i == 0 else draw(kinds) for i, node_id in enumerate(ids)}
    edges: dict[tuple[str, str], frozenset[str]] = {}
    for _ in range(draw(st.integers(0, 4 * size)) if size > 1 else 0):
        src, dst = draw(st.lists(st.sampled_from(ids), min_size=2, max_size=2, unique=True))
        if draw(st.integers(0, 4)) > 0 and ids.index(src) < ids.index(dst):
            src, dst = dst, src  # mostly from deeper to shallower claims; some back edges
        runs = draw(st.sets(st.sampled_from(RUN_IDS), max_size=1 + draw(st.integers(0, 1))))
        edges[(src, dst)] = edges.get((src, dst), frozenset()) | runs
    refuted = frozenset(draw(st.lists(st.sampled_from(ids), max_size=2, unique=True)))
    target = draw(st.sampled_from(ids)) if draw(st.integers(0, 3)) == 0 else "n0"
    return Case(types, edges, refuted, target)


def ingest(case: Case) -> GraphStore:
    nodes = [node(node_id, kind) for node_id, kind in case.types.items()]
    store = GraphStore()
    assert store.assert_graph(GID, nodes, dedup=False).rejected == []
    for (src, dst), runs in sorted(case.edges.items()):
        edge = {"src": src, "dst": dst, "relation": "supports", "run_ids": sorted(runs)}
        assert store.assert_graph(GID, [], [edge]).rejected == []
    for node_id in sorted(case.refuted):
        assert store.mark_refuted(GID, node_id, "test").ok
    return store


def oracle_premises(case: Case, node_id: str) -> list[set[str]]:
    groups: dict[str, set[str]] = {}
    for (src, dst), runs in case.edges.items():
        if dst == node_id:
            for run in runs or {""}:
                groups.setdefault(run, set()).add(src)
    return list(groups.values())


def derives_target(case: Case, claims: frozenset[str]) -> bool:
    """Whether the target follows inside ``claims`` (plus the target) by the fixpoint."""
    usable = (claims | {case.target}) - case.refuted
    derived = {c for c in usable if case.types[c] == "given" and c != case.target}
    changed = True
    while changed:
        changed = False
        for claim in usable - derived:
            premise_groups = oracle_premises(case, claim)
            if any(group <= derived for group in premise_groups):
                derived.add(claim)
                changed = True
    return case.target in derived


def oracle_arguments(case: Case) -> list[frozenset[str]]:
    if case.target in case.refuted:
        return []
    others = sorted(set(case.types) - {case.target})
    sufficient = [
        frozenset(subset)
        for size in range(len(others) + 1)
        for subset in combinations(others, size)
        if derives_target(case, frozenset(subset))
    ]
    return [s for s in sufficient if not any(t < s for t in sufficient)]


def oracle_width(family: list[frozenset[str]]) -> int:
    for size in range(len(family), 0, -1):
        for chosen in combinations(family, size):
            if all(a.isdisjoint(b) for a, b in combinations(chosen, 2)):
                return size
    return 0


ORACLE_RUNS = reproducible(300)
"""As many random graphs as the brute-force oracle's exhaustive search affords."""


def oracle_cut_size(family: list[frozenset[str]]) -> int:
    elements = sorted(set().union(*family)) if family else []
    for size in range(len(elements) + 1):
        for cut in combinations(elements, size):
            if all(not claims.isdisjoint(cut) for claims in family):
                return size
    raise AssertionError("the set of every element always meets the family")


@ORACLE_RUNS
@given(run_graphs())
def test_argument_width_matches_brute_force_on_small_random_graphs(case: Case) -> None:
    store = ingest(case)
    family = oracle_arguments(case)

    result = store.argument_width(GID, case.target)

    assert result.capped is False
    assert sorted(map(frozenset, result.arguments), key=sorted) == sorted(family, key=sorted)
    assert result.width == oracle_width(family) == len(result.independent)
    chosen = [frozenset(a) for a in result.independent]
    assert all(a.isdisjoint(b) for a, b in combinations(chosen, 2))
    assert len(result.min_cut) == oracle_cut_size(family)
    assert all(not claims.isdisjoint(result.min_cut) for claims in family)


@reproducible(200)
@given(st.lists(st.frozensets(st.sampled_from("abcdefg"), min_size=1, max_size=4), max_size=9))
def test_packing_and_cut_match_brute_force_on_random_families(
    family: list[frozenset[str]],
) -> None:
    chosen = max_disjoint(family)
    cut = min_hitting_set(family)

    assert len(chosen) == oracle_width(family)
    assert all(family[i].isdisjoint(family[j]) for i, j in combinations(chosen, 2))
    assert len(cut) == oracle_cut_size(family)
    assert all(not claims.isdisjoint(cut) for claims in family)


def case_graph(case: Case) -> nx.MultiDiGraph:
    """The case as the store's multigraph, built directly (no store helpers)."""
    graph = nx.MultiDiGraph()
    for node_id, kind in case.types.items():
        graph.add_node(node_id, type=kind, refuted=node_id in case.refuted)
    for (src, dst), runs in sorted(case.edges.items()):
        graph.add_edge(src, dst, key="supports", run_ids=set(runs))
    return graph


def test_a_longer_chain_naming_the_subject_is_not_hidden_by_a_shorter_one_that_does_not() -> None:
    # r1 concludes from "cron runs only on Linux" alone; r2 from that and "x9 runs Linux".
    graph = nx.MultiDiGraph()
    for name, kind in [("yes", "conclusion"), ("linux_only", "given"), ("x9_linux", "given")]:
        graph.add_node(name, type=kind, refuted=False)
    graph.add_edge("linux_only", "yes", key="supports", run_ids={"r1", "r2"})
    graph.add_edge("x9_linux", "yes", key="supports", run_ids={"r2"})

    def names_x9(claims: frozenset[str]) -> bool:
        return "x9_linux" in claims

    assert argument_width(graph, "yes").arguments == (("linux_only",),)
    found = argument_width(graph, "yes", admissible=names_x9)
    assert found.arguments == (("linux_only", "x9_linux"),) and found.width == 1


@ORACLE_RUNS
@given(run_graphs(), st.frozensets(st.sampled_from([f"n{i}" for i in range(9)]), max_size=3))
def test_admissible_arguments_agree_with_the_oracle_on_small_random_graphs(
    case: Case, marked: frozenset[str]
) -> None:
    # Admissible: the argument holds a marked claim (as an argument must name the subject).
    def admissible(claims: frozenset[str]) -> bool:
        return bool(claims & marked)

    found = argument_width(case_graph(case), case.target, admissible=admissible)
    family = [frozenset(claims) for claims in found.arguments]

    assert found.capped is False
    # Every argument is admissible and sufficient, and none holds another.
    assert all(admissible(claims) and derives_target(case, claims) for claims in family)
    assert not any(a < b for a in family for b in family)
    # Every minimal sufficient set that is admissible is found: nothing smaller can hide it.
    assert {a for a in oracle_arguments(case) if admissible(a)} <= set(family)
    assert found.width == oracle_width(family) == len(found.independent)
