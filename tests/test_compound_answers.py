"""Compound answers ("X is a warden, and Y is a trickster") are grounded clause by clause, and a
clause that the evidence only quotes or reports is never taken as established (issue 32)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from canned_runs import Script, always, model_graph

from orchestrator.api import RunConfig, run_task
from orchestrator.checks.chain import answer_follows, asserted_parts
from orchestrator.llm.testing import ScriptedClient
from orchestrator.records.report import RunReport
from orchestrator.reply.answers import answer_clauses, answer_key

# A puzzle written for these tests. Orla's words would make her a warden who lies, so she is a
# trickster; then not both are tricksters, so Pim is a warden, and his report about Orla holds.
VALLEY: dict[str, Any] = {
    "id": "valley",
    "question": "So who is a warden and who is a trickster?",
    "documents": [
        "A far valley is home only to wardens and tricksters. Wardens always tell the truth, "
        'and tricksters always lie. You meet 2 dwellers: Orla and Pim. Orla said, "Orla and '
        'Pim are both tricksters." Pim told you that Orla is a trickster.'
    ],
    "expected_answer": "Orla is a trickster, and Pim is a warden.",
}
ANSWER = "Orla is a trickster, and Pim is a warden"
ORLA_SAID, PIM_TOLD = "D1.4", "D1.5"


def chain_reply(answer: str) -> str:
    """A chain-shaped run through both statements to ``answer``."""
    steps = [
        {"sentence": ORLA_SAID, "inference": "Orla lies, for a warden could not say that"},
        {"sentence": PIM_TOLD, "inference": "Pim tells the truth about Orla"},
    ]
    return json.dumps({"steps": steps, "answer": answer})


def graph_reply(conclusion: str) -> str:
    """A graph-shaped run that cites Pim's report, infers that Pim is a warden and concludes
    ``conclusion``, with the compound answer."""
    nodes = [
        {"id": "n1", "type": "given", "source": PIM_TOLD, "confidence": 0.9}
        | {"claim": "Pim told you that Orla is a trickster."},
        {"id": "n2", "type": "inference", "source": "none", "confidence": 0.8}
        | {"claim": "Pim is a warden"},
        {"id": "n3", "type": "conclusion", "source": "none", "confidence": 0.8}
        | {"claim": conclusion},
    ]
    edges = [
        {"src": "n1", "dst": "n2", "relation": "supports", "confidence": 0.8},
        {"src": "n2", "dst": "n3", "relation": "supports", "confidence": 0.8},
    ]
    return model_graph(nodes, edges, "n3", answer=ANSWER)


def run(runs: dict[str, str], shape: str) -> RunReport:
    config = RunConfig(n=len(runs), k=1, budget_calls=len(runs), interrogation_shape=shape)
    client = ScriptedClient(Script(runs, votes=always("not_determinable")))
    return run_task(VALLEY, client=client, model="scripted", config=config)


def test_a_compound_answer_is_grounded_clause_by_clause() -> None:
    report = run({"r1": chain_reply(ANSWER)}, "chain")
    assert not report["refused"]
    assert report["answer"] == ANSWER
    assert report["chosen"]["width"] == 1
    assert report["candidates"][0]["flags"] == []


def test_runs_that_give_the_clauses_in_another_order_give_one_answer() -> None:
    reordered = "Pim is a warden and Orla is a trickster."
    report = run({"r1": chain_reply(ANSWER), "r2": chain_reply(reordered)}, "chain")
    assert len(report["candidates"]) == 1
    assert report["candidates"][0]["run_support"] == 2
    assert answer_key(ANSWER) == answer_key(reordered) == "orla is trickster and pim is warden"


def test_a_clause_found_only_inside_a_report_of_what_someone_said_does_not_ground() -> None:
    # "Orla is a trickster" stands in the cited sentence only as what Pim told you, and the
    # run's own conclusion says nothing of Orla.
    report = run({"r1": graph_reply("Pim is a warden.")}, "graph")
    assert report["refused"] and report["refusal_reason"] == "no_grounded_conclusion"
    set_aside = report["candidates"][0]["set_aside"]
    assert [why["reason"] for why in set_aside] == ["answer_not_on_argument"]


def test_the_same_run_grounds_the_answer_once_its_conclusion_asserts_both_clauses() -> None:
    report = run({"r1": graph_reply("Pim is a warden, and so Orla is a trickster.")}, "graph")
    assert not report["refused"] and report["answer"] == ANSWER


@pytest.mark.parametrize(
    "quoted",
    [
        'Aiden asserted: "Logan is a saint".',
        '"Logan is a saint," Aiden claimed.',
        "In Aiden's words: 'Logan is a saint'.",
        "Aiden: 'Logan is a saint'.",
        "Aiden told you that Logan is a saint.",
        "According to Aiden, Logan is a saint.",
        "If Aiden is a sinner, then Logan is a saint.",
        "Logan is a saint or Logan is a sinner.",
        "It is not true that Logan is a saint.",
    ],
)
def test_a_clause_inside_a_quotation_report_supposition_or_denial_is_not_established(
    quoted: str,
) -> None:
    clauses = answer_clauses("Aiden is a sinner, and Logan is a saint")
    assert "logan is saint" not in asserted_parts(quoted)
    # The argument names both people and asserts Aiden's clause; Logan's is only quoted.
    argument = [quoted, "Aiden is a sinner"]
    assert not answer_follows(" and ".join(clauses), argument, ["Aiden is a sinner."])
    assert answer_follows(" and ".join(clauses), [*argument, "Thus, Logan is a saint."])


def test_a_clause_about_someone_the_argument_never_names_is_not_reached() -> None:
    key = answer_key("Aiden is a sinner, and Logan is a saint")
    stated = ["Aiden is a sinner, and Logan is a saint."]
    assert not answer_follows(key, ["Aiden asserted that saints lie."], stated)  # no Logan
    assert not answer_follows(key, ["Saints always tell the truth."], stated)
    assert answer_follows(key, ["Aiden asserted: Logan is a sinner."], stated)
