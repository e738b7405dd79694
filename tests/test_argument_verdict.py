"""The verdict counts independent arguments: joint premises are one line, runs add lines only
when their arguments share no claim (rack-7 evidence, scripted runs)."""

from __future__ import annotations

from typing import Any

import pytest
from canned_runs import GOOD, RACK7_TASK, SPAN, YES, Script, always, chain_run, model_graph

from orchestrator.api import RunConfig, run_task
from orchestrator.checks.chain import ChainContext
from orchestrator.llm.testing import ScriptedClient
from orchestrator.records.report import ChosenRecord, RunReport

CONCLUSION = "server x9 can be used for the nightly cron job"
SURVEY_ROW = "Rack 7 survey, row 9: server x9; operating system: Linux; owner: platform team."
PLACEMENT = "The nightly cron job may be placed on any server that can run the cron scheduler."

JOINT = model_graph(
    [
        {
            "id": "A",
            "type": "given",
            "claim": "The survey team inventoried every server in rack 7.",
            "source": "D1.2",
            "confidence": 0.9,
        },
        {"id": "B", "type": "given", "claim": SURVEY_ROW, "source": "D2.1", "confidence": 0.9},
        {
            "id": "D",
            "type": "given",
            "claim": "The cron scheduler runs only on Linux hosts.",
            "source": "D3.1",
            "confidence": 0.9,
        },
        {"id": "Z", "type": "conclusion", "claim": CONCLUSION, "source": "none", "confidence": 0.8},
    ],
    [{"src": s, "dst": "Z", "relation": "supports", "confidence": 0.9} for s in "ABD"],
    "Z",
)
"""One run whose answer rests jointly on three cited sentences."""

VIA_SURVEY = chain_run("p", ["server x9 runs linux"], CONCLUSION, SURVEY_ROW, source="D2.1")
VIA_POLICY = chain_run(
    "q",
    ["server x9 may take the nightly cron job once it runs cron"],
    CONCLUSION,
    PLACEMENT,
    "D3.2",
)


def run(runs: dict[str, str], n: int) -> RunReport:
    client = ScriptedClient(Script(runs, votes=always("supported")), cost_per_call=0.001)
    config = RunConfig(n=n, k=2)
    return run_task(RACK7_TASK, client=client, model="scripted", config=config)


def yes_with(runs: dict[str, str], width: int, run_support: int) -> tuple[RunReport, ChosenRecord]:
    """(report, chosen answer) of ``runs``, one interrogation each, checked to answer yes at
    ``width`` with ``run_support``."""
    report = run(runs, n=len(runs))
    chosen = report["chosen"]
    assert (chosen["node_id"], chosen["width"], chosen["run_support"]) == (YES, width, run_support)
    return report, chosen


def test_one_run_resting_jointly_on_three_sentences_has_width_1() -> None:
    report, chosen = yes_with({"r1": JOINT}, width=1, run_support=1)
    assert len(chosen["arguments"]) == 1
    assert chosen["meets_k"] is False
    assert "rests on 1 independent line of evidence (argument width 1" in report["statement"]


def test_two_runs_with_disjoint_sentence_chains_to_the_same_answer_have_width_2() -> None:
    report, chosen = yes_with({"r1": VIA_SURVEY, "r2": VIA_POLICY}, width=2, run_support=2)
    assert [[step["id"] for step in a] for a in chosen["arguments"]] == [
        ["D2.1", "r1:p0"],
        ["D3.2", "r2:q0"],
    ]
    assert chosen["meets_k"] is True
    assert "rests on 2 independent lines of evidence (argument width 2" in report["statement"]


def test_two_runs_with_the_same_chain_have_width_1_and_run_support_2() -> None:
    _, chosen = yes_with({"r1": VIA_SURVEY, "r2": VIA_SURVEY}, width=1, run_support=2)
    assert len(chosen["arguments"]) == 1


def test_the_rack7_design_run_drawn_three_times_is_one_argument() -> None:
    _, chosen = yes_with({f"r{i}": GOOD for i in range(1, 4)}, width=1, run_support=3)
    claims = {step["id"] for step in chosen["arguments"][0]}
    assert claims == {SPAN["A"], SPAN["B"], SPAN["D"], "r1:C", "r1:E"}
    assert len(chosen["argument_cut"]) == 1


POLICY = "The cron scheduler runs only on Linux hosts."


def test_an_argument_that_never_names_the_subject_is_no_support_whatever_another_run_drew() -> None:
    # r1 restates the cron policy as an inference from the survey row (about x9); it merges
    # into the policy's span, so the merged graph has D2.1 -> D3.1. r2 answers "no" from the
    # policy alone. The policy is evidence in its own right and borrows nothing from r1: both
    # answers rest on {D3.1}, which never names x9, so neither counts (seen with the 0.5B on
    # rack-7, chain shape, seed 1, which answered "no" at width 1).
    drawn = model_graph(
        [
            {"id": "B", "type": "given", "claim": SURVEY_ROW, "source": "D2.1", "confidence": 0.9},
            {"id": "D", "type": "inference", "claim": POLICY, "source": "none", "confidence": 0.9},
            {"id": "Z", "type": "conclusion", "claim": CONCLUSION, "source": "none"},
        ],
        [
            {"src": "B", "dst": "D", "relation": "supports", "confidence": 0.9},
            {"src": "D", "dst": "Z", "relation": "supports", "confidence": 0.9},
        ],
        "Z",
    )
    alone = chain_run("n", [], "server x9 cannot take the nightly cron job", POLICY, "D3.1", "no")
    report = run({"r1": drawn, "r2": alone}, n=2)

    widths = {c["answer"]: c["width"] for c in report["candidates"]}
    assert widths == {"yes": 0, "no": 0}
    assert report["refused"] is True


HARDWICKE_TASK = {
    "id": "hardwicke",
    "question": (
        'Claim: "Catherine Hardwicke was born as Fiona Catherine Hardwicke ." According to the '
        "passage about Catherine Hardwicke, is the claim true? Answer yes, no or unanswerable."
    ),
    "documents": [
        "Catherine Hardwicke (born Helen Catherine Hardwicke) is an American film director."
    ],
}


def verify_claim(task: dict[str, Any]) -> RunReport:
    """The report of one run that cites the passage and then restates the claim as true."""
    restating = chain_run(
        "s",
        ["The passage states that Catherine Hardwicke was born as Fiona Catherine Hardwicke."],
        "the claim that Catherine Hardwicke was born as Fiona Catherine Hardwicke is true",
        task["documents"][0],
        source="D1.1",
    )
    client = ScriptedClient(Script({"r1": restating}, votes=always("supported")))
    return run_task(task, client=client, model="scripted", config=RunConfig(n=1, k=1))


def test_a_yes_that_only_restates_the_quoted_claim_is_refused() -> None:
    report = verify_claim(HARDWICKE_TASK)
    assert report["chosen"]["node_id"] is None
    assert report["refusal_reason"] == "no_grounded_conclusion"
    (yes,) = [c for c in report["candidates"] if c["node_id"] == YES]
    assert yes["width"] == 0
    assert [aside["reason"] for aside in yes["set_aside"]] == ["statement_not_in_evidence"]


def test_the_same_yes_counts_when_the_cited_passage_holds_the_claims_names() -> None:
    document = HARDWICKE_TASK["documents"][0].replace("Helen", "Fiona")
    report = verify_claim({**HARDWICKE_TASK, "documents": [document]})
    assert report["chosen"]["node_id"] == YES and report["chosen"]["width"] == 1


def test_a_yes_to_a_question_that_asks_for_a_thing_is_refused() -> None:
    notes = 'Git 2.26 release notes: "git sparse-checkout" learned an "add" subcommand.'
    task = {
        "question": "Git 2.25 gave sparse checkouts a command. "
        "In which Git release did that command learn an 'add' subcommand?",
        "documents": [notes],
    }
    says_yes = chain_run("s", ["sparse-checkout learned add in git 2.26"], "yes", notes, "D1.1")
    client = ScriptedClient(Script({"r1": says_yes}, votes=always("supported")))
    report = run_task(task, client=client, model="scripted", config=RunConfig(n=1, k=1))
    assert report["answer"] is None and report["refusal_reason"] == "no_grounded_conclusion"
    (yes,) = [c for c in report["candidates"] if c["node_id"] == YES]
    assert "answer_other_kind" in yes["flags"]


RIVERS = ["The Elvey River is 484 km long.", "The Elvra River is 310 km long."]
WHICH_RIVER = "Which river is longer, the Elvey River or the Elvra River?"


@pytest.mark.parametrize(
    ("question", "answer", "flagged"),
    [
        (WHICH_RIVER, "484", True),
        (WHICH_RIVER, "484 km", True),
        (WHICH_RIVER, "the elvey river", False),
        ("Which opened earlier, Bridge 7 or Bridge 9?", "bridge 7", False),
        ("Which opened earlier, Bridge 7 or Bridge 9?", "1850", True),
        ("How long is the Elvey River?", "484", False),
    ],
)
def test_a_number_is_no_answer_to_a_choice_between_two_named_options(
    question: str, answer: str, flagged: bool
) -> None:
    assert ChainContext.of(question, RIVERS).number_for_a_choice(answer) is flagged


def test_a_length_given_for_which_river_is_longer_is_refused() -> None:
    task = {"question": WHICH_RIVER, "documents": RIVERS}
    says_length = chain_run(
        "s", ["the Elvey River is 484 km long"], "484", RIVERS[0], "D1.1", answer="484"
    )
    client = ScriptedClient(Script({"r1": says_length}, votes=always("supported")))
    report = run_task(task, client=client, model="scripted", config=RunConfig(n=1, k=1))
    assert report["answer"] is None and report["refusal_reason"] == "no_grounded_conclusion"
    (length,) = [c for c in report["candidates"] if c["answer"] == "484"]
    assert "answer_not_an_option" in length["flags"]


RELEASE_NOTES = (
    'Git 2.23 release notes. "git branch --list" learned to show the detached HEAD first. '
    'Two new commands "git switch" and "git restore" are introduced.'
)
WHICH_RELEASE = "Which Git release introduced the git switch command?"


def test_an_argument_counts_only_when_its_evidence_names_the_thing_asked_about() -> None:
    context = ChainContext.of(WHICH_RELEASE, [RELEASE_NOTES])
    about_branch = 'Git 2.23 release notes. "git branch --list" learned to show the HEAD first.'
    about_switch = 'Two new commands "git switch" and "git restore" are introduced in Git 2.23.'
    assert context.names_a_thing([about_switch])
    assert not context.names_a_thing([about_branch])
    assert ChainContext.of("Which Git release came first?", []).names_a_thing([about_branch])


def test_a_release_argued_from_a_sentence_about_another_command_is_refused() -> None:
    task = {"question": WHICH_RELEASE, "documents": [RELEASE_NOTES]}
    other_command = chain_run(
        "s",
        ["git switch was introduced in Git 2.23"],
        "Git 2.23",
        "Git 2.23 release notes.",
        "D1.1",
        answer="Git 2.23",
    )
    client = ScriptedClient(Script({"r1": other_command}, votes=always("supported")))
    report = run_task(task, client=client, model="scripted", config=RunConfig(n=1, k=1))
    assert report["answer"] is None
    (release,) = [c for c in report["candidates"] if c["answer"] == "Git 2.23"]
    assert [aside["reason"] for aside in release["set_aside"]] == ["named_thing_not_cited"]
