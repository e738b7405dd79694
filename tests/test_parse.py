"""Reply parsing (§4.3): strict, repaired, salvaged, dropped; item validation; compliance."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from orchestrator.llm.errors import LLMTimeoutError
from orchestrator.reply.parse import (
    ComplianceTally,
    extract_json_text,
    parse_chain,
    parse_graph,
    parse_verdict,
    usable_runs,
)
from orchestrator.reply.schemas import (
    interrogation_response_format,
    interrogation_schema,
    verification_response_format,
)


def graph_json(**overrides: Any) -> dict[str, Any]:
    graph: dict[str, Any] = {
        "nodes": [
            {
                "id": "n1",
                "type": "given",
                "source": "D1.1",
                "claim": "Rack 7 hosts db-2.",
                "confidence": 0.9,
            },
            {
                "id": "n2",
                "type": "conclusion",
                "source": "none",
                "claim": "db-2 was patched.",
                "confidence": 0.7,
            },
        ],
        "edges": [{"from": "n1", "to": "n2", "relation": "supports", "confidence": 0.8}],
        "conclusion_node": "n2",
        "answer": "yes",
    }
    graph.update(overrides)
    return graph


GOOD = json.dumps(graph_json())


class RepairSpy:
    """A repair callable that returns a canned reply and remembers the error it was given."""

    def __init__(self, reply: str | BaseException) -> None:
        self.reply = reply
        self.errors: list[str] = []

    def __call__(self, error: str) -> str:
        self.errors.append(error)
        if isinstance(self.reply, BaseException):
            raise self.reply
        return self.reply


def test_clean_json_parses_strictly_into_the_normalised_graph() -> None:
    result = parse_graph(GOOD)
    assert result.outcome == "strict"
    assert result.errors == ()
    assert result.graph == {
        "conclusion_node": "n2",
        "conclusion_from": "declared",
        "leniencies": [],
        "answer": "yes",
        "nodes": [
            {
                "id": "n1",
                "claim": "Rack 7 hosts db-2.",
                "type": "given",
                "confidence": 0.9,
                "source": "D1.1",
            },
            {
                "id": "n2",
                "claim": "db-2 was patched.",
                "type": "conclusion",
                "confidence": 0.7,
                "source": None,
            },
        ],
        "edges": [{"src": "n1", "dst": "n2", "relation": "supports", "confidence": 0.8}],
    }


@pytest.mark.parametrize(
    "text",
    [
        f"```json\n{GOOD}\n```",
        f"```\n{GOOD}\n```\nHope this helps!",
        f"Sure. Here is the graph:\n{GOOD}\nLet me know if you need more.",
    ],
    ids=["json-fence", "bare-fence-and-trailer", "prose-wrapped"],
)
def test_fences_and_surrounding_prose_still_count_as_strict(text: str) -> None:
    result = parse_graph(text)
    assert result.outcome == "strict"
    assert result.graph is not None and result.graph["conclusion_node"] == "n2"


def test_extract_json_text_finds_the_outermost_object() -> None:
    assert extract_json_text('noise {"a": {"b": 1}} tail') == '{"a": {"b": 1}}'
    assert extract_json_text('cut off {"a": [1, 2') == '{"a": [1, 2'
    assert extract_json_text("no json here") is None


def test_trailing_commas_are_salvaged_by_the_lenient_parser() -> None:
    text = GOOD.replace("}]", "},]")
    result = parse_graph(text)
    assert result.outcome == "salvaged"
    assert result.graph is not None and len(result.graph["nodes"]) == 2
    assert any("strict parse: invalid JSON" in e for e in result.errors)


def test_a_truncated_reply_is_salvaged_with_what_survived() -> None:
    text = GOOD[: GOOD.index('"conclusion_node"')]  # cut mid-object, no closing brace
    result = parse_graph(text)
    assert result.outcome == "salvaged"
    assert result.graph is not None
    # conclusion_node was lost, but exactly one node is typed conclusion.
    assert result.graph["conclusion_node"] == "n2"
    assert any("conclusion_node missing" in e for e in result.errors)


def test_salvage_picks_the_last_usable_object_when_the_reply_holds_several() -> None:
    text = f'{{"note": "draft"}}\n{GOOD}\n{{"p.s.": "done"}}'
    result = parse_graph(text)
    assert result.outcome == "salvaged"
    assert result.graph is not None and result.graph["conclusion_node"] == "n2"


def test_the_repair_call_gets_the_parse_error_and_its_reply_counts_as_repaired() -> None:
    repair = RepairSpy(GOOD)
    result = parse_graph("I think the answer is yes.", repair)
    assert result.outcome == "repaired"
    assert result.repair_attempted is True
    assert repair.errors == ["no JSON object found (no '{' in the reply)"]
    assert result.graph is not None


def test_repair_is_also_asked_when_valid_json_lacks_a_usable_structure() -> None:
    repair = RepairSpy(GOOD)
    result = parse_graph('{"answer": "yes"}', repair)
    assert result.outcome == "repaired"
    assert "'nodes' must be a list" in repair.errors[0]


def test_repair_is_not_called_when_the_reply_is_already_strict() -> None:
    repair = RepairSpy(GOOD)
    assert parse_graph(GOOD, repair).outcome == "strict"
    assert repair.errors == []


def test_a_bad_repair_reply_falls_back_to_salvaging_the_original() -> None:
    repair = RepairSpy("still no json, sorry")
    result = parse_graph(GOOD.replace("}]", "},]"), repair)
    assert result.outcome == "salvaged"
    assert "salvaged from the original reply" in result.errors
    assert result.repair_attempted is True


def test_a_failing_repair_call_is_recorded_and_not_raised() -> None:
    repair = RepairSpy(LLMTimeoutError("no answer within 5s"))
    result = parse_graph("garbage", repair)
    assert result.outcome == "dropped"
    assert any("repair call failed: no answer within 5s" in e for e in result.errors)


@pytest.mark.parametrize(
    "text",
    ["", "The documents do not say.", "{{{{", '["just", "a", "list"]', "{}", '{"nodes": []}'],
)
def test_hopeless_replies_are_dropped_with_reasons_and_never_raise(text: str) -> None:
    result = parse_graph(text, RepairSpy("nope"))
    assert result.outcome == "dropped"
    assert result.graph is None
    assert result.errors


@given(st.text(max_size=300))
@settings(max_examples=150, deadline=None)
def test_arbitrary_text_never_crashes_the_parsers(text: str) -> None:
    graph = parse_graph(text)
    assert graph.outcome in ("strict", "salvaged", "dropped")
    assert (graph.graph is None) == (graph.outcome == "dropped")
    verdict = parse_verdict(text)
    assert (verdict.verdict is None) == (verdict.outcome == "dropped")


def test_src_dst_edge_keys_and_integer_ids_are_normalised() -> None:
    graph = graph_json(
        nodes=[
            {"id": 1, "claim": "a", "type": "Given", "confidence": "0.9"},
            {"id": 2, "claim": "b", "type": " CONCLUSION ", "confidence": 1},
        ],
        edges=[{"src": 1, "dst": "2", "relation": "Supports", "confidence": 0.5}],
        conclusion_node=2,
    )
    result = parse_graph(json.dumps(graph))
    assert result.outcome == "strict" and result.errors == ()
    assert result.graph is not None
    assert result.graph["edges"] == [
        {"src": "1", "dst": "2", "relation": "supports", "confidence": 0.5}
    ]
    assert [n["type"] for n in result.graph["nodes"]] == ["given", "conclusion"]
    assert result.graph["nodes"][0]["confidence"] == 0.9


def test_invalid_items_are_dropped_with_reasons_and_valid_ones_kept() -> None:
    graph = graph_json(
        nodes=[
            {"id": "n1", "claim": "a", "type": "given", "confidence": 0.9},
            {"id": "n2", "claim": "b", "type": "conclusion", "confidence": 0.6},
            {"id": "n3", "claim": "c", "type": "hunch", "confidence": 0.5},
            {"id": "n4", "claim": "d", "type": "given", "confidence": 1.5},
            {"id": "n1", "claim": "dup", "type": "given", "confidence": 0.5},
            {"id": "n5", "claim": "", "type": "given"},
            {"id": "n6", "claim": "e", "type": "assumption"},
            "not a node",
            {"id": "n7", "claim": "...", "type": "given", "confidence": 0.9},
        ],
        edges=[
            {"from": "n1", "to": "n2", "relation": "supports", "confidence": 0.8},
            {"from": "n1", "to": "n2", "relation": "supports", "confidence": 0.7},
            {"from": "n3", "to": "n2", "relation": "supports", "confidence": 0.8},
            {"from": "n6", "to": "n2", "relation": "assumes"},
            {"from": "n1", "to": "n2", "relation": "because", "confidence": 0.8},
            {"from": "n2", "to": "n2", "relation": "attacks", "confidence": 0.8},
            {"from": "n1", "src": "n6", "to": "n2", "relation": "attacks"},
            {"to": "n2", "relation": "supports"},
            {"from": "n1", "to": "n6", "relation": "attacks", "confidence": "high"},
        ],
    )
    result = parse_graph(json.dumps(graph))
    assert result.outcome == "strict"
    assert result.graph is not None
    assert [n["id"] for n in result.graph["nodes"]] == ["n1", "n2", "n4", "n6"]
    assert result.graph["nodes"][2]["confidence"] == 0.8  # 1.5 replaced, and said so below
    assert result.graph["nodes"][3]["confidence"] == 0.8  # default, and said so below
    assert result.graph["leniencies"] == ["confidence_defaulted:n4"]
    assert [(e["src"], e["dst"], e["relation"]) for e in result.graph["edges"]] == [
        ("n1", "n2", "supports"),
        ("n6", "n2", "assumes"),
        ("n1", "n6", "attacks"),  # its confidence "high" replaced by the default
    ]
    expected = [
        "nodes[2] dropped: type 'hunch' is not one of",
        "nodes[3]: confidence_defaulted: confidence 1.5 is outside 0..1; default 0.8 used",
        "nodes[4] dropped: duplicate id 'n1'",
        "nodes[5] dropped: claim must be a non-empty string",
        "nodes[6]: confidence missing; default 0.8 used",
        "nodes[7] dropped: is str",
        "nodes[8] dropped: claim '...' has no words",
        "edges[1] dropped: duplicate of an earlier supports edge n1->n2",
        "edges[2] dropped: 'from' names unknown node 'n3'",
        "edges[3]: confidence missing",
        "edges[4] dropped: relation 'because' is not one of",
        "edges[5] dropped: self-loop on 'n2'",
        "edges[6] dropped: 'from' and 'src' disagree",
        "edges[7] dropped: missing 'from' (or 'src')",
        "edges[8]: confidence_defaulted: confidence str 'high' is not a number",
    ]
    for prefix in expected:
        assert any(e.startswith(prefix) for e in result.errors), prefix
    assert len(result.errors) == len(expected)


def test_a_missing_conclusion_node_uses_the_single_conclusion_typed_node() -> None:
    graph = graph_json()
    del graph["conclusion_node"]
    result = parse_graph(json.dumps(graph))
    assert result.outcome == "strict"
    assert result.graph is not None and result.graph["conclusion_node"] == "n2"


@pytest.mark.parametrize(
    ("conclusion", "types", "answer"),
    [(None, ["given", "inference"], None), ("n9", ["given", "inference"], None)],
    ids=["none-typed", "dangling-id"],
)
def test_a_graph_without_a_conclusion_or_an_answer_is_dropped(
    conclusion: str | None, types: list[str], answer: str | None
) -> None:
    nodes = [
        {"id": f"n{i}", "claim": f"c{i}", "type": t, "confidence": 0.5}
        for i, t in enumerate(types, 1)
    ]
    graph = graph_json(nodes=nodes, edges=[], conclusion_node=conclusion, answer=answer)
    result = parse_graph(json.dumps(graph))
    assert result.outcome == "dropped"
    assert any(
        "no node has type 'conclusion' and the reply has no answer" in e for e in result.errors
    )


def test_a_run_with_confidences_2_to_6_keeps_its_nodes() -> None:
    nodes = [
        {"id": f"n{i}", "claim": f"claim {i}", "type": "given", "confidence": i}
        for i in range(2, 6)
    ]
    nodes.append({"id": "n6", "claim": "claim 6", "type": "conclusion", "confidence": 6})
    edges = [{"from": f"n{i}", "to": "n6", "relation": "supports", "confidence": 3} for i in (2, 3)]
    result = parse_graph(json.dumps(graph_json(nodes=nodes, edges=edges, conclusion_node="n6")))
    assert result.outcome == "strict" and result.graph is not None
    assert [n["id"] for n in result.graph["nodes"]] == ["n2", "n3", "n4", "n5", "n6"]
    assert {n["confidence"] for n in result.graph["nodes"]} == {0.8}
    assert len(result.graph["edges"]) == 2
    assert result.graph["leniencies"] == [f"confidence_defaulted:n{i}" for i in range(2, 7)]


@pytest.mark.parametrize(
    ("conclusion", "types", "claims", "chosen", "how"),
    [
        (None, ["given", "conclusion", "conclusion"], ["a", "b", "c"], "n3", "last_typed"),
        ("n9", ["given", "inference"], ["a", "so it is Quelheim"], "n2", "answer_node"),
        (None, ["given", "inference"], ["a", "b"], "c0", "built"),
        ("Quelheim", ["given", "given"], ["a", "Quelheim"], "c0", "built"),
    ],
    ids=["two-typed", "answer-holder", "built", "answer-in-a-given-only"],
)
def test_a_missing_conclusion_node_resolves(
    conclusion: str | None, types: list[str], claims: list[str], chosen: str, how: str
) -> None:
    nodes = [
        {"id": f"n{i}", "claim": claim, "type": t, "confidence": 0.5}
        for i, (t, claim) in enumerate(zip(types, claims, strict=True), 1)
    ]
    graph = graph_json(nodes=nodes, edges=[], conclusion_node=conclusion, answer="Quelheim")
    result = parse_graph(json.dumps(graph))
    assert result.outcome == "strict" and result.graph is not None
    assert result.graph["conclusion_node"] == chosen
    assert result.graph["conclusion_from"] == how
    assert result.graph["leniencies"] == [f"conclusion:{how}"]
    conclusions = [n for n in result.graph["nodes"] if n["type"] == "conclusion"]
    assert [n["id"] for n in conclusions] == [chosen]
    if how == "built":  # a conclusion made from the answer rests on nothing
        assert conclusions[0]["claim"] == "Quelheim"
        assert not [e for e in result.graph["edges"] if e["dst"] == chosen]


def test_a_reason_naming_an_unknown_node_drops_that_reason_only() -> None:
    nodes = [
        {"id": "n1", "type": "given", "claim": "a", "because": [], "confidence": 0.9},
        {"id": "n2", "type": "conclusion", "claim": "b", "because": ["n1", "n7"]},
    ]
    reply = {"nodes": nodes, "conclusion_node": "n2", "answer": "x"}
    result = parse_graph(json.dumps(reply))
    assert result.graph is not None and len(result.graph["nodes"]) == 2
    assert [(e["src"], e["dst"]) for e in result.graph["edges"]] == [("n1", "n2")]
    assert any("names unknown node 'n7'" in e for e in result.errors)


def test_the_declared_conclusion_is_the_only_conclusion_after_retyping() -> None:
    nodes = [
        {"id": "n1", "claim": "a", "type": "given", "confidence": 0.9},
        {"id": "n2", "claim": "b", "type": "inference", "confidence": 0.6},
        {"id": "n3", "claim": "c", "type": "conclusion", "confidence": 0.6},
    ]
    result = parse_graph(json.dumps(graph_json(nodes=nodes, edges=[], conclusion_node="n2")))
    assert result.graph is not None
    assert [n["type"] for n in result.graph["nodes"]] == ["given", "conclusion", "inference"]
    assert any("retyped 'conclusion'" in e for e in result.errors)
    assert any("retyped 'inference'" in e for e in result.errors)


def test_a_reply_without_an_edges_list_is_fine_and_has_only_its_inline_reasons() -> None:
    graph = graph_json()
    del graph["edges"]
    result = parse_graph(json.dumps(graph))
    assert result.outcome == "strict"
    assert result.graph is not None and result.graph["edges"] == []
    assert not any("edges" in e for e in result.errors)


def test_because_and_against_lists_become_supports_assumes_and_attacks_edges() -> None:
    reply = {
        "nodes": [
            {"id": "n1", "type": "given", "claim": "A holds.", "because": [], "confidence": 0.9},
            {"id": "n2", "type": "given", "claim": "B fails.", "confidence": 0.8},
            {"id": "n3", "type": "assumption", "claim": "C is typical.", "confidence": 0.5},
            {
                "id": "n4",
                "type": "conclusion",
                "claim": "So D.",
                "because": ["n1", "n3", "n1", "n4", "n9"],
                "against": ["n2"],
                "confidence": 0.7,
            },
        ],
        "conclusion_node": "n4",
        "answer": "D",
    }
    result = parse_graph(json.dumps(reply))
    assert result.graph is not None
    assert result.graph["edges"] == [
        {"src": "n1", "dst": "n4", "relation": "supports", "confidence": 0.7},
        {"src": "n3", "dst": "n4", "relation": "assumes", "confidence": 0.7},
        {"src": "n2", "dst": "n4", "relation": "attacks", "confidence": 0.7},
    ]
    problems = " | ".join(result.errors)
    assert "nodes[3].because[2] dropped: duplicate" in problems
    assert "own reason" in problems and "unknown node 'n9'" in problems


def test_inline_reasons_count_towards_the_edge_limit() -> None:
    nodes: list[dict[str, Any]] = [
        {"id": f"n{i}", "type": "given", "claim": f"Fact {i}."} for i in range(1, 5)
    ]
    nodes.append({"id": "n5", "type": "conclusion", "claim": "So.", "because": ["n1", "n2", "n3"]})
    reply = {"nodes": nodes, "conclusion_node": "n5", "answer": "x"}
    result = parse_graph(json.dumps(reply), max_edges=2)
    assert result.graph is not None and len(result.graph["edges"]) == 2
    assert any("over the limit of 2 edges" in e for e in result.errors)


def test_node_and_edge_limits_drop_the_excess_with_an_error() -> None:
    nodes = [{"id": f"n{i}", "claim": "x", "type": "given", "confidence": 0.5} for i in range(5)]
    nodes.append({"id": "c", "claim": "y", "type": "conclusion", "confidence": 0.5})
    edges = [{"from": f"n{i}", "to": "c", "relation": "supports"} for i in range(5)]
    text = json.dumps(graph_json(nodes=nodes, edges=edges, conclusion_node="c"))
    result = parse_graph(text, max_nodes=6, max_edges=2)
    assert result.graph is not None and len(result.graph["edges"]) == 2
    assert sum("over the limit of 2 edges" in e for e in result.errors) == 3
    cut = parse_graph(text, max_nodes=3)  # the conclusion was beyond the node limit:
    assert cut.graph is not None and cut.graph["conclusion_from"] == "built"  # made anew


def test_parse_results_serialise_to_json() -> None:
    result = parse_graph(GOOD.replace("}]", "},]"))
    data = json.loads(json.dumps(result.to_dict()))
    assert data["outcome"] == "salvaged" and isinstance(data["errors"], list)
    assert json.loads(json.dumps(parse_verdict("x").to_dict()))["verdict"] is None


# -- verdicts -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "verdict"),
    [
        ('{"verdict": "supported", "reason": "D1 says so."}', "supported"),
        ('```json\n{"verdict": "Refuted", "reason": "D2 contradicts it."}\n```', "refuted"),
        ('{"verdict": "not determinable", "reason": "No document covers it."}', "not_determinable"),
        ('Answer: {"verdict": "NOT-DETERMINABLE", "reason": "gap"}', "not_determinable"),
    ],
)
def test_verdicts_parse_strictly_with_normalised_spelling(text: str, verdict: str) -> None:
    result = parse_verdict(text)
    assert (result.outcome, result.verdict) == ("strict", verdict)
    assert result.reason


def test_a_sloppy_verdict_is_salvaged() -> None:
    result = parse_verdict("{'verdict': 'refuted', 'reason': 'D3 says the window was cancelled',")
    assert (result.outcome, result.verdict) == ("salvaged", "refuted")


def test_a_verdict_reply_can_be_repaired() -> None:
    repair = RepairSpy('{"verdict": "supported", "reason": "D1."}')
    result = parse_verdict("It is supported.", repair)
    assert (result.outcome, result.verdict, result.reason) == ("repaired", "supported", "D1.")


@pytest.mark.parametrize(
    "text",
    [
        '{"verdict": "probably", "reason": "hmm"}',
        '{"verdict": true}',
        '{"reason": "no verdict"}',
        "supported",
    ],
)
def test_unknown_or_missing_verdicts_are_dropped(text: str) -> None:
    result = parse_verdict(text)
    assert (result.outcome, result.verdict, result.reason) == ("dropped", None, None)
    assert result.errors


def test_a_missing_reason_keeps_the_verdict_and_says_so() -> None:
    result = parse_verdict('{"verdict": "refuted"}')
    assert (result.verdict, result.reason) == ("refuted", "")
    assert any("reason missing" in e for e in result.errors)


# -- compliance -----------------------------------------------------------------------------


def test_compliance_tally_counts_rates_and_merges() -> None:
    tally = ComplianceTally()
    for outcome in ("strict", "strict", "repaired", "dropped"):
        tally.record("model-a", outcome)
    other = ComplianceTally()
    other.record("model-a", "salvaged")
    other.record("model-b", "strict")
    tally.merge(other)
    data = tally.to_dict()
    assert list(data) == ["model-a", "model-b"]
    a = data["model-a"]
    assert (a["strict"], a["repaired"], a["salvaged"], a["dropped"], a["total"]) == (2, 1, 1, 1, 5)
    assert a["rates"]["strict"] == 0.4
    assert a["usable_rate"] == 0.8
    assert tally.counts("never-seen") == {"strict": 0, "repaired": 0, "salvaged": 0, "dropped": 0}
    with pytest.raises(ValueError, match="outcome"):
        tally.record("model-a", "fine")


def test_compliance_tally_is_thread_safe() -> None:
    tally = ComplianceTally()

    def work() -> None:
        for _ in range(500):
            tally.record("m", "strict")

    threads = [threading.Thread(target=work) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert tally.counts("m")["strict"] == 4000


# -- schemas --------------------------------------------------------------------------------

# Keywords llama.cpp's json-schema-to-grammar converter turns into grammar (plus number bounds,
# which it ignores harmlessly and parse.py enforces).
SUPPORTED_KEYWORDS = {
    "type",
    "properties",
    "required",
    "additionalProperties",
    "enum",
    "items",
    "minItems",
    "maxItems",
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "pattern",
}


def keywords(schema: Any) -> set[str]:
    found: set[str] = set()
    if isinstance(schema, dict):
        for key, value in schema.items():
            found.add(key)
            if key == "properties":
                for sub in value.values():
                    found |= keywords(sub)
            elif key == "items":
                found |= keywords(value)
    return found


def test_schemas_use_only_the_grammar_converter_subset_and_are_bounded() -> None:
    fmt = interrogation_response_format(max_nodes=6, max_edges=7, max_claim_chars=120)
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is False
    schema = fmt["json_schema"]["schema"]
    assert keywords(schema) <= SUPPORTED_KEYWORDS
    props = schema["properties"]
    assert list(props) == ["nodes", "conclusion_node", "answer"]
    assert props["nodes"]["maxItems"] == 6
    node = props["nodes"]["items"]
    assert node["additionalProperties"] is False
    assert node["properties"]["claim"]["maxLength"] == 120
    assert node["properties"]["type"]["enum"] == ["given", "inference", "assumption", "conclusion"]
    fields = ["id", "type", "source", "claim", "because", "against", "confidence"]
    assert list(node["properties"]) == fields and node["required"] == fields
    for reasons in ("because", "against"):
        assert node["properties"][reasons]["items"]["pattern"] == "^n[1-9][0-9]?$"
        assert node["properties"][reasons]["maxItems"] == 7
    assert node["properties"]["source"]["enum"] == ["none"]  # no spans: nothing to cite
    cited = interrogation_schema(span_ids=["D1.1", "D1.2"])["properties"]["nodes"]["items"]
    assert cited["properties"]["source"]["enum"] == ["D1.1", "D1.2", "none"]
    assert props["answer"]["maxLength"] == 80
    verdict = verification_response_format()["json_schema"]["schema"]
    assert keywords(verdict) <= SUPPORTED_KEYWORDS
    assert verdict["properties"]["verdict"]["enum"] == ["supported", "refuted", "not_determinable"]


def test_a_reply_that_fits_the_schema_parses_strictly_with_its_reasons_as_edges() -> None:
    schema = interrogation_schema()
    graph = graph_json()
    del graph["edges"]
    for node in graph["nodes"]:
        node.update(because=["n1"] if node["id"] == "n2" else [], against=[])
    assert set(graph) == set(schema["required"])
    node_fields = set(schema["properties"]["nodes"]["items"]["required"])
    assert all(set(node) == node_fields for node in graph["nodes"])
    result = parse_graph(json.dumps(graph))
    assert result.outcome == "strict" and result.errors == ()
    assert result.graph is not None
    assert result.graph["edges"] == [
        {"src": "n1", "dst": "n2", "relation": "supports", "confidence": 0.7}
    ]


@pytest.mark.parametrize(
    "kwargs", [{"max_nodes": 0}, {"max_edges": -1}, {"max_claim_chars": 5}, {"max_nodes": True}]
)
def test_schema_bounds_are_validated(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match=next(iter(kwargs))):
        interrogation_response_format(**kwargs)


def test_schema_node_ids_cannot_hold_answer_text_or_document_numbers() -> None:
    import re

    schema = interrogation_response_format()["json_schema"]["schema"]
    props = schema["properties"]
    id_fields = [
        props["conclusion_node"],
        props["nodes"]["items"]["properties"]["id"],
        props["nodes"]["items"]["properties"]["because"]["items"],
        props["nodes"]["items"]["properties"]["against"]["items"],
    ]
    for field in id_fields:
        pattern = field["pattern"]
        assert re.fullmatch(pattern.strip("^$"), "n5") and re.fullmatch(pattern.strip("^$"), "n12")
        for bad in ("Quelheim", "D2", "n0", "platform team", "n123"):
            assert not re.fullmatch(pattern.strip("^$"), bad)


def test_sources_are_read_as_span_ids_and_none_means_no_source() -> None:
    nodes = [
        {"id": "n1", "type": "given", "source": " [D2.3] ", "claim": "a b", "confidence": 0.9},
        {"id": "n2", "type": "given", "source": 7, "claim": "c d", "confidence": 0.9},
        {"id": "n3", "type": "conclusion", "source": "None", "claim": "e f", "confidence": 0.9},
    ]
    result = parse_graph(json.dumps(graph_json(nodes=nodes, edges=[], conclusion_node="n3")))
    assert result.graph is not None
    assert [n["source"] for n in result.graph["nodes"]] == ["D2.3", None, None]
    assert any("source int 7 is not text" in e for e in result.errors)


@pytest.mark.parametrize(("raw", "answer"), [("  Quel  heim ", "Quel heim"), (1848, "1848")])
def test_the_short_answer_is_kept_as_text(raw: object, answer: str) -> None:
    result = parse_graph(json.dumps(graph_json(answer=raw)))
    assert result.graph is not None and result.graph["answer"] == answer


@pytest.mark.parametrize("raw", [None, "", "x" * 1001, ["a"]])
def test_a_missing_or_unusable_answer_keeps_the_graph_and_says_why(raw: object) -> None:
    graph = graph_json(answer=raw)
    if raw is None:
        del graph["answer"]
    result = parse_graph(json.dumps(graph))
    assert result.outcome == "strict" and result.graph is not None
    assert result.graph["answer"] is None
    assert any("answer" in e for e in result.errors)


def test_usable_runs_counts_replies_usable_before_and_after_lenient_structure() -> None:
    numbered = graph_json(
        nodes=[
            {"id": "n1", "claim": "a", "type": "given", "confidence": 2},
            {"id": "n2", "claim": "b", "type": "conclusion", "confidence": 3},
        ]
    )
    unmarked = graph_json(conclusion_node="n9")
    unmarked["nodes"][1]["type"] = "inference"
    replies = [json.dumps(graph_json()), json.dumps(numbered), json.dumps(unmarked), "no json"]
    measured = usable_runs(replies)
    assert measured["replies"] == 4
    assert (measured["usable_before"], measured["usable_after"]) == (1, 3)
    assert measured["rate_after"] == 0.75
    assert measured["leniencies"] == {"conclusion:built": 1, "confidence_defaulted": 1}
    assert usable_runs([])["rate_before"] is None


CHAIN_SPANS = {"D1.1": "Rack 7 hosts db-2.", "D2.1": "db-2 was patched in May."}


def test_a_chain_reply_is_built_into_a_graph_whose_givens_are_the_cited_sentences() -> None:
    reply = {
        "steps": [
            {"sentence": "D1.1", "inference": ""},
            {"sentence": "[D2.1]", "inference": "the rack's database was patched"},
            {"sentence": "D7.7", "inference": "made up"},
        ],
        "answer": "yes",
    }
    result = parse_chain(json.dumps(reply), CHAIN_SPANS)
    assert result.outcome == "strict" and result.graph is not None
    nodes = {n["id"]: n for n in result.graph["nodes"]}
    assert [(n["type"], n["source"]) for n in nodes.values()] == [
        ("given", "D1.1"),
        ("given", "D2.1"),
        ("inference", None),
        ("conclusion", None),
    ]
    assert nodes["g1"]["claim"] == CHAIN_SPANS["D1.1"]
    assert [(e["src"], e["dst"]) for e in result.graph["edges"]] == [
        ("g1", "i2"),
        ("g2", "i2"),
        ("i2", "c"),
    ]
    assert result.graph["conclusion_node"] == "c" and result.graph["answer"] == "yes"
    assert result.errors == ("steps[2] dropped: 'D7.7' is no evidence sentence",)


@pytest.mark.parametrize(
    "reply", [{"steps": [{"sentence": "D1.1"}]}, {"steps": "D1.1", "answer": "yes"}, [1, 2]]
)
def test_a_chain_without_steps_or_an_answer_is_dropped(reply: object) -> None:
    assert parse_chain(json.dumps(reply), CHAIN_SPANS).outcome == "dropped"


@given(st.text(max_size=300))
def test_parse_chain_never_raises(text: str) -> None:
    result = parse_chain(text, CHAIN_SPANS)
    assert (result.graph is None) == (result.outcome == "dropped")


def test_a_parsed_reply_always_fits_the_store_it_is_anchored_into() -> None:
    from graph_server.validation import StoreLimits
    from orchestrator.reply.parse import MAX_CLAIM_CHARS, MAX_ID_CHARS

    store = StoreLimits()
    # Anchoring prefixes a node id with its run id ("r12:"), so leave room for that.
    assert MAX_ID_CHARS + len("r64:") <= store.max_id_chars
    assert store.max_claim_chars >= MAX_CLAIM_CHARS


def test_a_cited_given_declared_as_conclusion_keeps_its_citation_and_carries_the_answer() -> None:
    # A small model often names the one sentence that settles the question as its conclusion.
    nodes = [{"id": "n1", "type": "given", "source": "D2.1", "claim": "row 9: server x9; Linux"}]
    result = parse_graph(json.dumps(graph_json(nodes=nodes, conclusion_node="n1", answer="yes")))
    assert result.outcome == "strict" and result.graph is not None
    assert result.graph["conclusion_from"] == "on_given"
    given, conclusion = result.graph["nodes"]
    assert given == {**given, "type": "given", "source": "D2.1"}
    assert conclusion == {**conclusion, "id": "c0", "type": "conclusion", "claim": "yes"}
    assert result.graph["conclusion_node"] == "c0"
    assert [(e["src"], e["dst"], e["relation"]) for e in result.graph["edges"]] == [
        ("n1", "c0", "supports")
    ]
    assert result.graph["leniencies"] == ["conclusion:on_given"]


@pytest.mark.parametrize(
    ("source", "answer"), [(None, "yes"), ("D2.1", None)], ids=["uncited", "no-answer"]
)
def test_a_given_conclusion_without_a_citation_or_an_answer_is_retyped_as_before(
    source: str | None, answer: str | None
) -> None:
    nodes = [{"id": "n1", "type": "given", "source": source, "claim": "row 9: server x9"}]
    result = parse_graph(json.dumps(graph_json(nodes=nodes, conclusion_node="n1", answer=answer)))
    assert result.graph is not None and result.graph["conclusion_node"] == "n1"
    assert result.graph["nodes"][0]["type"] == "conclusion"
