"""Fault tests for the graph engine and its server (issue 35): nothing lost, nothing unbounded.

Each test reproduces one defect the fault pass found, at a size that runs in well under a
second; the figures at full size (2,000 claims over MCP, 100 random state files, the big
graph) are printed by ``tests/faults_engine.py``.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import secrets
from pathlib import Path
from xml.etree import ElementTree

import networkx as nx
import pytest
from fault_operations import reload_trial
from hypothesis import given
from hypothesis import strategies as st
from raw_server import raw_server
from strategies import reproducible

from graph_server import state as state_module
from graph_server.dedup_rivals import _guard_pairs
from graph_server.errors import Cancelled, LimitExceeded, NotFound
from graph_server.server import _dispatch_and_save
from graph_server.similarity import ClaimKey, claim_key
from graph_server.state import MAX_STATE_BYTES, StateFile, StateFileError, encode
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
    assert result.contradictions_created == []
    assert store.list_graphs().model_dump()["graphs"] == [
        {"graph_id": "g", "nodes": 200, "edges": 0}
    ]
    [withheld] = result.contradictions_withheld
    assert withheld.size == 200 and withheld.pairs == 200 * 199 // 2
    assert "max_rival_claims (32)" in withheld.reason
    assert withheld.claims == ["n0", "n1", "n10", "n100", "n101", "n102", "n103", "n104"]


def test_a_few_rival_readings_of_one_value_still_attack_each_other() -> None:
    store = GraphStore()
    claims = [
        {"id": f"r{i}", "claim": f"trellium melts at {t} C", "type": "given"}
        for i, t in enumerate((412, 350, 390))
    ]
    result = store.assert_graph("g", claims)
    assert result.contradictions_created == [["r0", "r1"], ["r0", "r2"], ["r1", "r2"]]
    assert result.contradictions_withheld == []
    assert store.list_graphs().graphs[0].edges == 6


def test_templated_claims_added_one_call_at_a_time_stop_attacking_past_the_cap() -> None:
    store = GraphStore(limits=StoreLimits(max_rival_claims=4))
    for start in range(0, 10, 2):
        store.assert_graph("g", templated(2, start))
    # Pairs among the first four claims were rivals; later calls find a group of 6, 8, 10.
    assert store.list_graphs().graphs[0].edges == 4 * 3
    again = store.merge_duplicates("g")
    assert again.contradictions_created == []
    assert [entry.size for entry in again.contradictions_withheld] == [10]


def test_contradictions_never_take_a_graph_past_its_edge_limit() -> None:
    store = GraphStore(limits=StoreLimits(max_edges_per_graph=5))
    claims = [
        {"id": f"v{i}", "claim": f"the pump read {40 + i} bar", "type": "given"} for i in range(4)
    ]
    result = store.assert_graph("g", claims, dedup=False)
    assert result.rejected == []
    merged = store.merge_duplicates("g")
    assert len(merged.contradictions_created) == 2  # four edges fit, the fifth pair would not
    assert store.list_graphs().graphs[0].edges == 4
    [full] = merged.contradictions_withheld
    assert full.pairs == 4 and "max_edges_per_graph (5)" in full.reason


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


# ------------------------------------------------------------------ 2. the state file

FIXTURES = Path(__file__).parent / "fixtures"


def saved_state(tmp_path: Path) -> tuple[StateFile, GraphStore]:
    """A state file holding a small graph with a merge, evidence and a refutation."""
    store = GraphStore()
    store.add_evidence("g", [{"id": "D1.1", "text": "Server x9 runs Linux."}])
    store.assert_graph(
        "g",
        [
            {"id": "a", "claim": "server x9 runs linux", "type": "given", "source": "D1.1"},
            {"id": "b", "claim": "the cron job runs on x9", "type": "conclusion"},
            {"id": "c", "claim": "the cron job runs on server x9", "type": "conclusion"},
        ],
        [{"src": "a", "dst": "b", "relation": "supports", "run_ids": ["r1"]}],
    )
    store.mark_refuted("g", "a", "misread")
    state = StateFile(tmp_path / "state.json")
    state.save(store)
    return state, store


def test_temporary_files_of_killed_writers_are_removed_at_start(tmp_path: Path) -> None:
    state, _ = saved_state(tmp_path)
    dead = [tmp_path / ".state.json.999999999.tmp", tmp_path / ".state.json.999999999.0a1b.tmp"]
    live = tmp_path / f".state.json.{os.getppid()}.0a1b.tmp"
    other = tmp_path / ".notes.json.999999999.tmp"
    for path in [*dead, live, other]:
        path.write_text("half a write")
    assert sorted(state.remove_stale_temporaries()) == sorted(dead)
    assert state.load_into(GraphStore()) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [live.name, other.name, "state.json"]
    )


def test_a_link_planted_at_a_temporary_name_is_never_written_through(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state, store = saved_state(tmp_path)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    (tmp_path / f".state.json.{os.getpid()}.tmp").symlink_to(victim)  # the old, fixed name
    state.save(store)
    monkeypatch.setattr(secrets, "token_hex", lambda _: "0" * 16)
    (tmp_path / f".state.json.{os.getpid()}.{'0' * 16}.tmp").symlink_to(victim)
    before = (tmp_path / "state.json").read_bytes()
    with pytest.raises(FileExistsError, match="no free temporary name"):
        state.save(store)
    assert victim.read_text() == "precious"
    assert (tmp_path / "state.json").read_bytes() == before


def test_a_symlinked_state_file_is_refused_and_stays_a_link(tmp_path: Path) -> None:
    state, _ = saved_state(tmp_path)
    link = tmp_path / "link.json"
    link.symlink_to(state.path)
    with pytest.raises(StateFileError, match=r"is a symbolic link .* pass the file's own path"):
        StateFile(link).load_into(GraphStore())
    assert link.is_symlink()


def test_a_state_file_linked_to_dev_zero_is_refused_without_reading(tmp_path: Path) -> None:
    link = tmp_path / "state.json"
    link.symlink_to("/dev/zero")
    with pytest.raises(StateFileError, match="symbolic link"):
        StateFile(link).load_into(GraphStore())


def test_a_fifo_at_the_state_path_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "state.json")
    with pytest.raises(StateFileError, match=r"is not a regular file \(a FIFO\)"):
        StateFile(tmp_path / "state.json").load_into(GraphStore())


def test_a_state_file_over_the_size_limit_is_refused_before_it_is_read(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    with path.open("wb") as handle:
        handle.truncate(MAX_STATE_BYTES + 1)  # sparse: no disk used
    with pytest.raises(StateFileError, match="larger than the limit of 1,073,741,824 bytes"):
        StateFile(path).load_into(GraphStore())


@pytest.mark.parametrize("version", [1, 2])
def test_a_deeply_nested_state_file_gets_a_one_line_error(tmp_path: Path, version: int) -> None:
    graphs = "[" * 100_000 + "]" * 100_000
    if version == 1:
        data = f'{{"format":"logic-graph-state","version":1,"graphs":{graphs}}}'.encode()
    else:
        data = encode([]).replace(b'"graphs":[]', f'"graphs":{graphs}'.encode())
        digest = hashlib.sha256(graphs.encode()).hexdigest()
        data = (
            data[: data.index(b'"sha256":"') + 10]
            + digest.encode()
            + data[data.index(b'","graphs"') :]
        )
    path = tmp_path / "state.json"
    path.write_bytes(data)
    with pytest.raises(StateFileError) as refused:
        StateFile(path).load_into(GraphStore())
    assert "nested deeper than 32 levels" in str(refused.value)
    assert "\n" not in str(refused.value)


def test_every_single_byte_flip_of_a_state_file_is_refused(tmp_path: Path) -> None:
    state, _ = saved_state(tmp_path)
    original = state.path.read_bytes()
    for position in range(len(original)):
        for flip in (0x01, 0x20):
            damaged = bytearray(original)
            damaged[position] ^= flip
            with pytest.raises(StateFileError):
                state._parse(bytes(damaged))  # what load_into reads the bytes with
    state.path.write_bytes(original[:-1] + b" ")
    with pytest.raises(StateFileError, match="is not valid JSON"):
        state.load_into(GraphStore())


def test_a_version_1_state_file_without_checksum_still_loads(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    path.write_bytes((FIXTURES / "state-v1.json").read_bytes())
    store = GraphStore()
    assert StateFile(path).load_into(store) == 1
    saved = json.loads(path.read_text(encoding="utf-8"))
    assert [graph.model_dump() for graph in store.dump_state()] == saved["graphs"]


def test_a_store_too_big_for_its_state_file_is_not_written_and_the_old_file_stays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state, store = saved_state(tmp_path)
    before = state.path.read_bytes()
    monkeypatch.setattr(state_module, "MAX_STATE_BYTES", len(before))
    answer = _dispatch_and_save(
        store,
        "assert_graph",
        {"graph_id": "g", "nodes": [{"id": "z", "claim": "one more claim", "type": "given"}]},
        lambda: False,
        state,
    )
    assert isinstance(answer["error"], str)
    assert "applied in memory but the state file" in answer["error"]
    assert "over the limit of" in answer["error"]
    assert state.path.read_bytes() == before
    assert StateFile(state.path).load_into(GraphStore()) == 1


def test_a_state_directory_of_another_user_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: os.stat(tmp_path).st_uid + 1)
    with pytest.raises(StateFileError, match="not to this server's user"):
        StateFile(tmp_path / "state.json").load_into(GraphStore())


@pytest.mark.parametrize("seed", range(6))
def test_a_state_file_saved_after_any_accepted_call_loads_back_equal(
    tmp_path: Path, seed: int
) -> None:
    assert reload_trial(seed, 25, tmp_path) is None


# ------------------------------------------------------------------ issue 37: no empty graph


def test_an_assert_graph_whose_every_node_is_rejected_creates_no_graph() -> None:
    store = GraphStore()
    answer = store.assert_graph("g", [{"id": "a", "claim": "", "type": "given"}])
    assert [item.at for item in answer.rejected] == ["nodes.0"]
    assert store.list_graphs().graphs == []
    refused = store.add_evidence("h", [{"id": "D1.1"}])
    assert len(refused.rejected) == 1 and store.list_graphs().graphs == []
    with pytest.raises(NotFound, match="graph_id 'g' not found"):
        store.get_graph("g")


def test_an_empty_graph_in_an_older_state_file_is_skipped_on_load(tmp_path: Path) -> None:
    empty = {"graph_id": "e", "nodes": [], "edges": [], "evidence": {}, "merged_into": {}}
    body = {"format": "logic-graph-state", "version": 1, "graphs": [{**empty, "merged_claim": {}}]}
    path = tmp_path / "state.json"
    path.write_text(json.dumps(body), encoding="utf-8")
    store = GraphStore()
    assert StateFile(path).load_into(store) == 0
    assert store.list_graphs().graphs == []


# ------------------------------------------------------------------ 8. JSON-RPC ids

BAD_IDS = ["1.5", "true", "null", '{"a": 1}', "[1]", "2.0"]


def test_requests_with_a_float_boolean_null_object_or_array_id_get_invalid_request(
    tmp_path: Path,
) -> None:
    with raw_server(tmp_path) as server:
        for bad in BAD_IDS:
            server.send(
                f'{{"jsonrpc":"2.0","id":{bad},"method":"tools/call","params":'
                f'{{"name":"assert_graph","arguments":{{"graph_id":"g","nodes":'
                f'[{{"id":"a","claim":"x runs","type":"given"}}]}}}}}}'
            )
            reply = server.reply(timeout=30)
            assert reply["id"] is None and reply["error"]["code"] == -32600, (bad, reply)
            assert "id must be a string or an integer" in reply["error"]["message"]
        server.send({"jsonrpc": "2.0", "method": "notifications/progress", "params": {}})
        server.send_call(5, "list_graphs", {})
        answer = server.answer_to(5)
    assert answer["result"]["structuredContent"]["graphs"] == []  # none of them ran


# ------------------------------------------------------------------ 10. GraphML export

ODD_CLAIM = "".join(chr(c) for c in range(1, 32)) + " \ufffe\uffff <&>\"' end"


def test_graphml_with_control_characters_parses_and_keeps_edges_apart() -> None:
    store = GraphStore()
    store.assert_graph(
        "g",
        [
            {"id": "a", "claim": ODD_CLAIM, "type": "given"},
            {"id": "b", "claim": 'the "cron" job\truns\non x9', "type": "conclusion"},
        ],
        [
            {"src": "a", "dst": "b", "relation": "supports", "run_ids": ["r1"]},
            {"src": "a", "dst": "b", "relation": "assumes"},
            {"src": "b", "dst": "a", "relation": "attacks"},
        ],
        dedup=False,
    )
    store.mark_refuted("g", "b", "bad\x02reason")
    content = store.export_graph("g", "graphml").content
    assert content is not None

    root = ElementTree.fromstring(content)  # an independent, strict XML parser
    namespace = "{http://graphml.graphdrawing.org/xmlns}"
    edge_ids = [edge.get("id") for edge in root.iter(f"{namespace}edge")]
    assert edge_ids == ["e0", "e1", "e2"]
    booleans = [
        data.text for data in root.iter(f"{namespace}data") if data.get("key") == "n_refuted"
    ]
    assert booleans == ["false", "true"]

    parsed = nx.parse_graphml(content, force_multigraph=True)
    kept = "\t\n\r"  # what XML 1.0 can carry; the rest became U+FFFD
    expected = "".join(c if c in kept else "\ufffd" for c in ODD_CLAIM[:31]) + ODD_CLAIM[31:]
    expected = expected.replace("\ufffe\uffff", "\ufffd\ufffd")
    assert parsed.nodes["a"]["claim"] == expected
    assert parsed.nodes["b"]["claim"] == 'the "cron" job\truns\non x9'
    assert parsed.nodes["b"]["refuted"] is True and parsed.nodes["a"]["refuted"] is False
    assert parsed.nodes["b"]["refute_reason"] == "bad\ufffdreason"
    relations = sorted(data["relation"] for _, _, data in parsed.edges(data=True))
    assert relations == ["assumes", "attacks", "supports"]
    assert parsed.edges["a", "b", "e1"]["run_ids"] == "r1"


# ------------------------------------------------------------------ 12. large graphs


def chain_store(steps: int, limits: StoreLimits | None = None) -> GraphStore:
    """A given, ``steps`` inferences in a row, then the conclusion ``c``."""
    store = GraphStore(limits=limits)
    ids = ["g", *(f"i{k}" for k in range(steps)), "c"]
    types = ["given", *["inference"] * steps, "conclusion"]
    nodes = [
        {"id": i, "claim": f"step {k} of the chain holds", "type": t}
        for k, (i, t) in enumerate(zip(ids, types, strict=True))
    ]
    edges = [
        {"src": a, "dst": b, "relation": "supports"}
        for a, b in itertools.pairwise(ids)  # a chain: every claim rests on the one before
    ]
    assert store.assert_graph("G", nodes, edges, dedup=False).rejected == []
    return store


def test_argument_width_on_a_chain_deeper_than_the_search_depth_is_capped_not_a_crash() -> None:
    deep = chain_store(1_500).argument_width("G", "c").model_dump()
    assert deep == {
        "width": 0,
        "arguments": [],
        "independent": [],
        "min_cut": [],
        "capped": True,
        "max_arguments": 32,
    }
    shallow = chain_store(50).argument_width("G", "c")
    assert shallow.width == 1 and shallow.capped is False


def test_argument_width_past_its_time_limit_ends_with_an_error_naming_the_limit() -> None:
    store = chain_store(5, StoreLimits(max_request_seconds=0.0))
    with pytest.raises(LimitExceeded) as refused:
        store.argument_width("G", "c")
    error = str(refused.value)
    assert refused.value.limit == "max_request_seconds"
    assert "argument_width stopped after 0 s" in error
    assert "max_request_seconds" in error and "7 claims and 6 links" in error


def test_a_cancelled_argument_width_says_so() -> None:
    with pytest.raises(Cancelled, match=r"^cancelled: argument_width stopped"):
        chain_store(5).argument_width("G", "c", cancel=lambda: True)
