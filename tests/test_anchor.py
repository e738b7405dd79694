"""Anchoring a parsed run: givens become checked spans, conclusions become answers."""

from __future__ import annotations

from typing import Any

from corpus.evidence import build_evidence
from orchestrator.checks.anchor import AnchoredRun, anchor_run

EVIDENCE = build_evidence(
    [
        "Rack 7 survey, row 9: server x9; operating system: Linux; owner: platform team.",
        "Scheduling policy: the cron scheduler runs only on Linux hosts.",
    ]
)
QUESTION = "Can server x9 be used for the nightly cron job?"


def node(node_id: str, node_type: str, claim: str, source: str | None = None) -> dict[str, Any]:
    return {"id": node_id, "type": node_type, "claim": claim, "confidence": 0.9, "source": source}


def edge(src: str, dst: str, relation: str = "supports") -> dict[str, Any]:
    return {"src": src, "dst": dst, "relation": relation, "confidence": 0.9}


def graph(nodes: list[dict[str, Any]], edges: list[dict[str, Any]], answer: str | None) -> Any:
    """A parsed reply's graph for anchor_run (a partial ReplyGraph: no conclusion_from or
    leniencies unless a test adds them)."""
    return {"nodes": nodes, "edges": edges, "conclusion_node": nodes[-1]["id"], "answer": answer}


def anchor(
    run_id: str,
    nodes: list[dict[str, Any]],
    edges: list[dict[str, Any]],
    answer: str | None,
    answer_claims: dict[str, str] | None = None,
) -> AnchoredRun:
    """Run ``run_id``'s graph (its last node the conclusion) anchored to :data:`EVIDENCE`."""
    return anchor_run(run_id, graph(nodes, edges, answer), EVIDENCE, QUESTION, answer_claims or {})


def one_given(
    run_id: str, given: str, answer: str, conclusion: str = "Server x9 can run the cron job"
) -> AnchoredRun:
    """A run whose one given, citing D1.1, supports its conclusion."""
    nodes = [node("n1", "given", given, "D1.1"), node("n2", "conclusion", conclusion)]
    return anchor(run_id, nodes, [edge("n1", "n2")], answer)


def test_a_checked_given_becomes_its_span_and_the_conclusion_its_answer() -> None:
    run = one_given("r1", "Server x9 runs Linux", "Yes.")
    ids = [n["id"] for n in run.nodes]
    assert ids == ["D1.1", "answer:yes"]
    assert run.nodes[0]["claim"] == EVIDENCE.spans[0].text and run.nodes[0]["source"] == "D1.1"
    assert run.nodes[1]["source"] == "answer:yes"
    assert run.edges == [{**edge("D1.1", "answer:yes")}]
    assert run.conclusion == "answer:yes" and run.answer == "Yes." and run.answer_key == "yes"
    assert run.citations[0]["ok"] and run.citations[0]["span"] == "D1.1"


def test_a_given_failing_its_citation_is_kept_as_an_assumption_with_the_reason() -> None:
    run = one_given("r2", "Server x8 runs Linux", "yes")
    assert run.nodes[0] == {
        "id": "r2:n1",
        "claim": "Server x8 runs Linux",
        "type": "assumption",
        "confidence": 0.9,
        "source": None,
    }
    assert run.citations[0]["reason"] == "name_mismatch"


def test_the_question_is_never_a_node_whatever_its_type() -> None:
    run = anchor(
        "r1",
        [
            node("n1", "given", QUESTION, "D2.1"),
            node("n2", "inference", "can server x9 be used for the nightly cron job"),
            node("n3", "conclusion", "Server x9 can be used for the nightly cron job"),
        ],
        [edge("n1", "n3"), edge("n2", "n3")],
        "yes",
    )
    assert [n["id"] for n in run.nodes] == ["answer:yes"]
    assert run.edges == [] and len(run.notes) == 2


def test_two_givens_of_one_run_citing_one_span_are_one_node_and_no_self_loop_remains() -> None:
    run = anchor(
        "r1",
        [
            node("n1", "given", "Server x9 runs Linux", "D1.1"),
            node("n2", "given", "Rack 7 row 9 is server x9", "D1.1"),
            node("n3", "conclusion", "Server x9 can run the cron job"),
        ],
        [edge("n1", "n2"), edge("n1", "n3"), edge("n2", "n3")],
        "yes",
    )
    assert [n["id"] for n in run.nodes] == ["D1.1", "answer:yes"]
    assert run.edges == [edge("D1.1", "answer:yes")]


def test_a_later_run_with_the_same_answer_reuses_the_stored_conclusion_claim() -> None:
    run = anchor(
        "r3",
        [node("n1", "conclusion", "x9 is fine for cron")],
        [],
        "YES",
        {"answer:yes": "Server x9 can run the cron job"},
    )
    assert run.nodes[0]["claim"] == "Server x9 can run the cron job"
    assert run.conclusion_claim == "x9 is fine for cron"


def test_an_answer_naming_the_kind_asked_for_joins_the_one_without_it() -> None:
    nodes = [node("n1", "conclusion", "It flows into the Teven River")]
    run = anchor_run("r5", graph(nodes, [], "Teven River"), EVIDENCE, "Into which river?", {})
    assert run.answer == "Teven River" and run.answer_key == "teven"
    assert run.nodes[0]["id"] == "answer:teven"


def test_a_run_without_an_answer_keeps_a_conclusion_anchored_to_itself() -> None:
    run = anchor("r4", [node("n1", "conclusion", "x9 is fine for cron")], [], None)
    assert run.nodes[0]["id"] == run.nodes[0]["source"] == "r4:n1"
    assert run.answer_key == ""


def test_a_long_answer_is_shortened_to_the_span_evidence_and_conclusion_share() -> None:
    run = one_given(
        "r1",
        "Server x9 runs Linux",
        "server x9 server x9, which runs Linux and is in rack",
        "The server for the job is server x9.",
    )
    assert run.answer == "server x9" and run.answer_key == "server x9"
    assert run.leniencies == ["answer:cut"]


def test_a_long_answer_with_no_short_form_counts_as_a_compliance_failure() -> None:
    long_answer = "it depends on what the team decides about the schedule next week"
    run = anchor("r1", [node("n1", "conclusion", "It depends.")], [], long_answer)
    assert run.answer is None and run.answer_key == ""
    assert run.leniencies == ["answer:too_long"]
    assert any("no short form found" in note for note in run.notes)


def test_the_shown_conclusion_states_the_answer_about_the_question_subject() -> None:
    distractor = "Rack 7 has no spare power capacity this quarter."
    run = anchor("r1", [node("n1", "conclusion", distractor)], [], "yes")
    assert run.nodes[0]["claim"] == f"yes (the answer to: {QUESTION})"
    assert run.conclusion_claim == distractor  # the run's own sentence stays in its record
    on_subject = "Server x9 can take the nightly cron job."
    run = anchor("r1", [node("n1", "conclusion", on_subject)], [], "yes")
    assert run.nodes[0]["claim"] == on_subject


def test_a_guessed_conclusion_is_marked_so_it_cannot_ground_alone() -> None:
    parsed: Any = {
        **graph([node("n1", "conclusion", "yes")], [], "yes"),
        "conclusion_from": "built",
    }
    parsed["leniencies"] = ["conclusion:built"]
    run = anchor_run("r1", parsed, EVIDENCE, QUESTION, {})
    assert run.guessed_conclusion and run.leniencies == ["conclusion:built"]
    assert not anchor("r1", parsed["nodes"], [], "yes").guessed_conclusion


def test_a_conclusion_that_restates_the_question_is_kept_as_its_answer_when_the_run_has_one() -> (
    None
):
    question = "Claim: x9 runs Linux. Is the claim true?"
    evidence = build_evidence(["row 9: server x9; operating system: Linux"])
    parsed = graph(
        [
            node("n1", "given", "row 9: server x9; operating system: Linux", "D1.1"),
            node("n2", "conclusion", "Yes, is the claim true?"),
        ],
        [edge("n1", "n2")],
        "yes",
    )
    out = anchor_run("r1", parsed, evidence, question, {})
    assert out.conclusion == "answer:yes"
    assert [(e["src"], e["dst"]) for e in out.edges] == [("D1.1", "answer:yes")]
    shown = next(n["claim"] for n in out.nodes if n["id"] == "answer:yes")
    assert not shown.startswith("Yes, is the claim")  # the question is never a node's sentence
