"""Verdicts about the documents and about the answer: the loop end to end on scripted runs."""

from __future__ import annotations

import json
from typing import Any

import pytest
from canned_runs import GOOD, RACK7_TASK, Script, always
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from corpus.evidence import build_evidence
from graph_server.similarity import normalize
from orchestrator.api import RunConfig, run_task
from orchestrator.llm import ChatMessage
from orchestrator.llm.testing import ScriptedClient, ScriptedKwargs
from orchestrator.records.report import RunReport

FOUNDER_TASK: dict[str, Any] = {
    "question": "Where was the founder of Embstone Ironworks born?",
    "documents": [
        "Embstone Ironworks was founded by Orla Venn. It made rails.",
        "Orla Venn was born in Braskthorpe.",
        "Orla Vane was born in Braskmere.",
    ],
}


def node(node_id: str, node_type: str, claim: str, source: str = "none") -> dict[str, Any]:
    return {"id": node_id, "type": node_type, "source": source, "claim": claim, "confidence": 0.9}


def supports(src: str, dst: str) -> dict[str, Any]:
    return {"from": src, "to": dst, "relation": "supports", "confidence": 0.9}


def reply(nodes: list[dict[str, Any]], edges: list[dict[str, Any]], answer: str | None) -> str:
    graph = {"nodes": nodes, "edges": edges, "conclusion_node": nodes[-1]["id"], "answer": answer}
    return json.dumps(graph)


def founder_run(town: str, span: str) -> str:
    return reply(
        [
            node("n1", "given", "Embstone Ironworks was founded by Orla Venn", "D1.1"),
            node(
                "n2",
                "given",
                f"Orla V{'enn' if town == 'Braskthorpe' else 'ane'} was born in {town}",
                span,
            ),
            node("n3", "conclusion", f"The founder of Embstone Ironworks was born in {town}."),
        ],
        [supports("n1", "n3"), supports("n2", "n3")],
        town,
    )


def run(task: dict[str, Any], runs: dict[str, str], config: RunConfig) -> RunReport:
    client = ScriptedClient(Script(runs, votes=always("not_determinable")))
    return run_task(task, client=client, model="scripted", config=config)


def test_answers_about_different_towns_stay_two_candidates_with_their_true_run_support() -> None:
    runs = {
        "r1": founder_run("Braskthorpe", "D2.1"),
        "r2": founder_run("Braskthorpe", "D2.1"),
        "r3": founder_run("Braskmere", "D3.1"),
    }
    report = run(FOUNDER_TASK, runs, RunConfig(n=3, k=1, budget_calls=3))
    by_answer = {c["answer"]: c for c in report["candidates"]}
    assert set(by_answer) == {"Braskthorpe", "Braskmere"}
    assert by_answer["Braskthorpe"]["run_support"] == 2
    assert by_answer["Braskmere"]["run_support"] == 1
    assert report["answer"] == "Braskthorpe"
    assert not any(
        {m["kept"], m["merged"]} & {"answer:braskthorpe", "answer:braskmere"}
        for m in report["merges"]
    )


def test_an_answer_named_in_no_span_is_flagged_and_never_chosen() -> None:
    runs = {f"r{i}": founder_run("Braskthorpe", "D2.1") for i in (1, 2)}
    runs["r1"] = runs["r1"].replace('"answer": "Braskthorpe"', '"answer": "Paris"')
    runs["r2"] = runs["r1"]
    report = run(FOUNDER_TASK, runs, RunConfig(n=2, k=1, budget_calls=2))
    # Paris is in no span, so no derivation states it either: none is an argument for it.
    assert report["candidates"][0]["flags"] == ["answer_not_in_evidence"]
    assert {why["reason"] for why in report["candidates"][0]["set_aside"]} == {
        "answer_not_on_argument"
    }
    assert report["refused"] and report["refusal_reason"] == "no_grounded_conclusion"


UNANSWERABLE_RUN = reply(
    [node("n1", "conclusion", "The documents do not say where the founder was born.")],
    [],
    "unanswerable",
)


def test_a_run_that_finds_no_answer_does_not_veto_an_answer_another_run_verified() -> None:
    """It brings no argument, and only an argument may stand against a verified answer."""
    runs = {"r1": founder_run("Braskthorpe", "D2.1"), "r2": UNANSWERABLE_RUN}
    report = run(FOUNDER_TASK, runs, RunConfig(n=2, k=1, budget_calls=2))
    assert report["answer"] == "Braskthorpe"
    flags = {c["answer"]: c["flags"] for c in report["candidates"]}
    assert flags == {"Braskthorpe": [], "unanswerable": ["answer_unanswerable"]}


def test_when_no_argument_carries_an_answer_and_most_runs_found_none_the_refusal_says_so() -> None:
    runs = {"r1": founder_run("Braskmere", "D2.1"), "r2": UNANSWERABLE_RUN}
    report = run(FOUNDER_TASK, runs, RunConfig(n=2, k=1, budget_calls=2))
    assert report["refused"] and report["refusal_reason"] == "runs_found_no_answer"
    assert report["headline"] == "Refused: runs_found_no_answer"


def test_adaptive_spends_no_call_past_a_verified_first_run() -> None:
    runs = {"r1": founder_run("Braskthorpe", "D2.1"), "r2": UNANSWERABLE_RUN}
    report = run(FOUNDER_TASK, runs, RunConfig(n=2, k=1, budget_calls=4, adaptive=True))
    assert report["answer"] == "Braskthorpe"
    assert [r["outcome"] for r in report["runs"]] == ["strict", "not_started"]
    assert "not needed" in report["runs"][1]["errors"][0]


def test_adaptive_asks_the_other_runs_when_the_first_is_not_verified() -> None:
    runs = {"r1": UNANSWERABLE_RUN, "r2": founder_run("Braskthorpe", "D2.1")}
    report = run(FOUNDER_TASK, runs, RunConfig(n=2, k=1, budget_calls=4, adaptive=True))
    assert report["answer"] == "Braskthorpe"
    assert [r["outcome"] for r in report["runs"]] == ["strict", "strict"]


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_with_adaptive_runs_a_verified_first_answer_stands_whatever_n(n: int) -> None:
    """More calls only add: the other runs (here each a different, unverified answer or none)
    are never asked once the first run is verified, so the answer cannot fall as n grows."""
    runs = {"r1": founder_run("Braskthorpe", "D2.1")}
    runs |= {f"r{i}": UNANSWERABLE_RUN for i in range(2, n + 1)}
    report = run(FOUNDER_TASK, runs, RunConfig(n=n, k=1, budget_calls=n + 2, adaptive=True))
    assert report["answer"] == "Braskthorpe"
    assert report["totals"]["calls"] == 1


def with_attack(src: str, dst: str) -> str:
    """The good rack-7 reply, plus an attack from node ``src`` on node ``dst``."""
    graph = json.loads(GOOD)
    graph["edges"].append({"from": src, "to": dst, "relation": "attacks", "confidence": 0.9})
    return json.dumps(graph)


def test_a_single_runs_attack_does_not_sink_an_answer_three_runs_reached() -> None:
    runs = {"r1": GOOD, "r2": GOOD, "r3": with_attack("A", "Z")}
    report = run(RACK7_TASK, runs, RunConfig(n=3, k=2, budget_calls=3))
    assert report["attacks"] == [
        {"src": "D1.2", "dst": "answer:yes", "runs": ["r3"], "target_runs": 3, "counted": False}
    ]
    assert report["answer"] == "yes"


def test_an_attack_drawn_by_enough_runs_counts() -> None:
    runs = {"r1": GOOD, "r2": with_attack("A", "Z"), "r3": with_attack("A", "Z")}
    report = run(RACK7_TASK, runs, RunConfig(n=3, k=2, budget_calls=3))
    assert report["attacks"][0]["counted"] is True
    assert report["refused"]  # an unattacked given defeats the answer it attacks


def test_one_runs_attack_on_a_sentence_two_runs_cite_is_set_aside() -> None:
    # Seen on rack-7 seed 2 with the 0.5B: one run attacked the sentences other runs relied
    # on; at half the target's support it used to count and left every "yes" ungrounded.
    runs = {"r1": GOOD, "r2": with_attack("B", "A")}
    report = run(RACK7_TASK, runs, RunConfig(n=2, k=2, budget_calls=2))
    assert report["attacks"] == [
        {"src": "D2.1", "dst": "D1.2", "runs": ["r2"], "target_runs": 2, "counted": False}
    ]
    assert report["answer"] == "yes"


def test_with_a_single_usable_run_its_own_attacks_still_count() -> None:
    report = run(RACK7_TASK, {"r1": with_attack("A", "Z")}, RunConfig(n=1, k=1, budget_calls=1))
    assert report["attacks"][0]["counted"] is True and report["refused"]


def test_think_first_reasons_in_plain_text_then_writes_the_graph_in_one_conversation() -> None:
    def script(model: str, messages: list[ChatMessage], kwargs: ScriptedKwargs) -> str:
        if kwargs["role"] == "think":
            assert kwargs["response_format"] is None
            return "D2.1 says x9 runs Linux and D3.1 says cron needs Linux, so yes."
        assert messages[-2] == {
            "role": "assistant",
            "content": "D2.1 says x9 runs Linux and D3.1 says cron needs Linux, so yes.",
        }
        return GOOD

    client = ScriptedClient(script)
    config = RunConfig(n=2, k=2, budget_calls=3, think_first=True, structured_output=True)
    report = run_task(RACK7_TASK, client=client, model="scripted", config=config)
    assert [c["kwargs"]["role"] for c in client.calls] == ["think", "interrogation"]
    assert report["runs"][1]["outcome"] == "not_started"  # a run needs two calls; one was left
    assert report["answer"] == "yes"


# -- the promise, over many scripted graphs ----------------------------------------------

EVIDENCE = build_evidence(RACK7_TASK["documents"])
CLAIMS = [
    *(span.text for span in EVIDENCE.spans),
    "server x9 runs linux",
    "server x8 runs linux",
    "rack 9 survey row 7 lists server x9",
    RACK7_TASK["question"],
    RACK7_TASK["question"].rstrip("?"),
    "the cron scheduler does not run on linux hosts",
    "x9 can be used for the nightly cron job",
]
SOURCES = [*EVIDENCE.ids, "none", "D9.9", "D1", ""]


@st.composite
def model_reply(draw: st.DrawFn) -> str:
    count = draw(st.integers(1, 6))
    nodes = [
        node(
            f"n{i}",
            draw(st.sampled_from(["given", "given", "inference", "assumption"])),
            draw(st.sampled_from(CLAIMS)),
            draw(st.sampled_from(SOURCES)),
        )
        for i in range(1, count + 1)
    ]
    nodes.append(node(f"n{count + 1}", "conclusion", draw(st.sampled_from(CLAIMS))))
    ids = [n["id"] for n in nodes]
    edges = draw(
        st.lists(
            st.builds(
                lambda a, b, r: {"from": a, "to": b, "relation": r, "confidence": 0.8},
                st.sampled_from(ids),
                st.sampled_from(ids),
                st.sampled_from(["supports", "attacks", "assumes"]),
            ),
            max_size=8,
        )
    )
    return reply(nodes, edges, draw(st.sampled_from(["yes", "no", "x9", "unknown", "Paris"])))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(model_reply(), min_size=1, max_size=4))
def test_no_reported_given_lacks_a_verified_span_and_the_question_is_never_a_node(
    replies: list[str],
) -> None:
    runs = {f"r{i}": text for i, text in enumerate(replies, start=1)}
    report = run(RACK7_TASK, runs, RunConfig(n=len(runs), k=1, budget_calls=len(runs) + 3))
    question = normalize(RACK7_TASK["question"])
    for graph_node in report["graph"]["nodes"]:
        assert normalize(graph_node["claim"]) != question
        assert not graph_node["claim"].rstrip().endswith("?")
        if graph_node["type"] == "given":
            span = EVIDENCE.get(graph_node["source"])
            assert span is not None and graph_node["claim"] == span.text
    for entry in report["givens"]:
        assert entry["span"] is not None and entry["text"] == EVIDENCE.by_id[entry["span"]].text
    if not report["refused"]:
        assert report["answer"] in {"yes", "no", "x9"}
