"""The worked shape: plain-text working whose argument graph the system draws
(orchestrator.checks.derivation), through the whole loop."""

from __future__ import annotations

import doctest
from decimal import Decimal
from fractions import Fraction
from typing import Any

import pytest
from docstrings import doctests, failures
from hypothesis import given, settings
from hypothesis import strategies as st

from orchestrator.api import RunConfig, run_task
from orchestrator.checks import derivation
from orchestrator.checks.derivation import (
    parse_worked,
    sentence_numbers,
    worked_graph,
)
from orchestrator.llm import ChatMessage
from orchestrator.llm.testing import Script, ScriptedClient, ScriptedKwargs
from orchestrator.records import TaskError
from orchestrator.reply import ReplyGraph

SPANS = {
    "D1.1": "Harper has to write a 248-page assignment.",
    "D1.2": "She has already written 1/4 of it.",
    "D1.3": "How many pages does she have left to write?",
}
QUESTION = " ".join(SPANS.values())
WORKING = """She has written 248 / 4 = 62 pages.
So 248 - 62 = 186 pages are left.
ANSWER: 186"""


def supports(graph: ReplyGraph) -> set[tuple[str, str]]:
    return {(e["src"], e["dst"]) for e in graph["edges"] if e["relation"] == "supports"}


def claims(graph: ReplyGraph) -> dict[str, str]:
    return {n["id"]: n["claim"] for n in graph["nodes"]}


def test_each_calculation_rests_on_the_sentences_and_results_it_starts_from() -> None:
    graph, notes = worked_graph(WORKING, SPANS)
    assert graph is not None and notes == []
    assert claims(graph) == {
        "s1": "She has written 248 / 4 = 62 pages.",
        "g1": SPANS["D1.1"],
        "g2": SPANS["D1.2"],
        "s2": "So 248 - 62 = 186 pages are left.",
        "c": "186",
    }
    assert supports(graph) == {("g1", "s1"), ("g2", "s1"), ("g1", "s2"), ("s1", "s2"), ("s2", "c")}
    givens = {n["id"]: n["source"] for n in graph["nodes"] if n["type"] == "given"}
    assert givens == {"g1": "D1.1", "g2": "D1.2"}


def test_a_number_from_nowhere_is_a_claim_nothing_supports() -> None:
    graph, _ = worked_graph("So 248 - 17 = 231 pages.\nANSWER: 231", SPANS)
    assert graph is not None
    assert claims(graph)["u1"] == "the number 17, stated nowhere in the question"
    assert ("u1", "s1") in supports(graph)
    assert not any(dst == "u1" for _, dst in supports(graph))


def test_latex_percentages_and_multiplier_words_are_read_as_the_question_gives_them() -> None:
    spans = {"D1.1": "A $380,000 house costs 4% more in fees.", "D1.2": "Twice that is what?"}
    working = r"\( 380{,}000 \times 0.04 = 15{,}200 \)" + "\n15200 * 2 = 30400\nANSWER: $30,400"
    graph, notes = worked_graph(working, spans)
    assert graph is not None and notes == []
    assert not any(node_id.startswith("u") for node_id in claims(graph))
    assert ("s2", "c") in supports(graph)
    assert sorted(sentence_numbers(spans["D1.1"])) == [Decimal("0.04"), Decimal(4), Decimal(380000)]


def test_an_answer_the_working_never_reached_rests_on_nothing() -> None:
    graph, notes = worked_graph("So 248 - 62 = 186.\nANSWER: 190", SPANS)
    assert graph is not None
    assert not any(dst == "c" for _, dst in supports(graph))
    assert notes == ["the answer '190' is no value the working reached"]


def test_a_reply_without_an_answer_line_is_dropped() -> None:
    parsed = parse_worked("248 - 62 = 186 and then I ran out of", SPANS)
    assert parsed.outcome == "dropped" and parsed.graph is None
    assert parsed.errors == ("the working ends with no answer line",)


ONE_RUN = RunConfig(n=1, k=1, budget_calls=2, temperature=0.0, interrogation_shape="worked")
ADAPTIVE = RunConfig(
    n=3,
    k=1,
    budget_calls=3,
    temperature=0.8,
    greedy_first=True,
    adaptive=True,
    interrogation_shape="worked",
)
"""Run 1 greedy; runs 2 and 3 sampled, only when run 1 gives no grounded answer."""


def run_worked(
    reply: str | Script, config: RunConfig = ONE_RUN
) -> tuple[dict[str, object], ScriptedClient]:
    """The loop on the Harper task, the model replying ``reply`` (a text, or a script)."""
    script = reply if callable(reply) else (lambda model, messages, kwargs: reply)
    client = ScriptedClient(script)
    task = {"question": QUESTION, "documents": [QUESTION]}
    return dict(run_task(task, client=client, model="m", config=config)), client


def test_the_loop_answers_from_working_whose_calculations_hold() -> None:
    report, client = run_worked(WORKING)
    assert report["answer"] == "186"
    first = client.calls[0]
    assert first["kwargs"]["response_format"] is None
    assert "ANSWER:" in first["messages"][0]["content"]
    graph_claims = {node["claim"] for node in report["graph"]["nodes"]}  # type: ignore[index]
    assert "So 248 - 62 = 186 pages are left." in graph_claims


def test_the_loop_refuses_working_with_a_false_calculation() -> None:
    report, _ = run_worked(
        WORKING.replace("248 - 62 = 186", "248 - 62 = 196").replace("ANSWER: 186", "ANSWER: 196")
    )
    assert report["answer"] is None
    assert report["refusal_reason"] == "no_grounded_conclusion"


def test_the_loop_refuses_working_that_starts_from_a_number_the_question_lacks() -> None:
    report, _ = run_worked("So 248 - 17 = 231 pages.\nANSWER: 231")
    assert report["answer"] is None


def test_a_worked_reply_without_an_answer_is_not_sent_to_repair() -> None:
    report, client = run_worked("248 - 62 = 186 and then")
    assert report["answer"] is None
    assert [call["kwargs"]["role"] for call in client.calls] == ["interrogation"]


def test_thinking_first_does_not_go_with_the_worked_shape() -> None:
    with pytest.raises(TaskError, match="think_first"):
        RunConfig(interrogation_shape="worked", think_first=True)


OPERATIONS = st.sampled_from(["+", "-", "*"])


@settings(max_examples=150, deadline=None)
@given(
    givens=st.lists(st.integers(min_value=3, max_value=999), min_size=2, max_size=5, unique=True),
    plan=st.lists(
        st.tuples(OPERATIONS, st.integers(0, 20), st.integers(0, 20)), min_size=1, max_size=6
    ),
)
def test_working_built_from_the_question_and_earlier_results_is_derived_throughout(
    givens: list[int], plan: list[tuple[str, int, int]]
) -> None:
    """An independent construction: each line combines two numbers already known (the
    question's or an earlier line's result), evaluated here with Fractions. The graph must hold
    no unsupported number, give every line a support (even a line of constants: each was
    stated or reached), and rest the answer on the last line."""
    spans = {f"D1.{i}": f"Crate {chr(64 + i)} holds {n} jars." for i, n in enumerate(givens, 1)}
    known: list[Fraction] = [Fraction(n) for n in givens]
    lines = []
    for operation, a, b in plan:
        left, right = known[a % len(known)], known[b % len(known)]
        value = {"+": left + right, "-": left - right, "*": left * right}[operation]
        lines.append(f"Then {left} {operation} {right} = {value}.")
        known.append(value)
    lines.append(f"ANSWER: {known[-1]}")
    graph, notes = worked_graph("\n".join(lines), spans)
    assert graph is not None and notes == []
    assert not any(node_id.startswith("u") for node_id in claims(graph))
    supported = {dst for _, dst in supports(graph)}
    assert all(f"s{i}" in supported for i in range(1, len(plan) + 1))
    assert {src for src, dst in supports(graph) if dst == "c"} == {f"s{len(plan)}"}


def test_a_constant_the_question_states_rests_on_its_sentence() -> None:
    spans = {"D1.1": "A pizza has 36 slices.", "D1.2": "Liam eats 2 a day, Cara 2 times as many."}
    working = "Cara eats 2 * 2 = 4.\nTogether 2 + 4 = 6 a day.\n36 / 6 = 6 days.\nANSWER: 6"
    graph, _ = worked_graph(working, spans)
    assert graph is not None
    cites = {node["id"]: node["source"] for node in graph["nodes"] if node["type"] == "given"}
    assert {cites[src] for src, dst in supports(graph) if dst == "s1"} == {"D1.2"}
    assert worked_graph("12 * 2 = 24\nANSWER: 24", spans)[0] is not None


def test_a_calculation_continued_on_lines_that_open_with_equals_is_one_step() -> None:
    spans = {"D1.1": "Of 1440 pups, 360 have spots.", "D1.2": "What percentage have spots?"}
    working = "Share = (360 / 1440) * 100\n= 0.25 * 100\n= 25%\nANSWER: 25"
    graph, notes = worked_graph(working, spans, every_quantity=True)
    assert graph is not None and notes == []
    assert claims(graph)["s1"] == "Share = (360 / 1440) * 100 = 0.25 * 100 = 25%"
    assert ("s1", "c") in supports(graph)


def test_in_a_word_problem_a_quantity_the_working_leaves_out_is_a_premise_nothing_supports() -> (
    None
):
    spans = {
        "D1.1": "Olivia got 25 new plants.",
        "D1.2": "She has 7 plants on each of 63 ledges and gives away 5 from each ledge.",
    }
    working = "7 * 63 = 441\n5 * 63 = 315\n441 - 315 = 126\nANSWER: 126"
    graph, notes = worked_graph(working, spans, every_quantity=True)
    assert graph is not None
    assert claims(graph)["q1"] == "the 25 that D1.1 states is not needed for the answer"
    assert ("q1", "c") in supports(graph) and not any(dst == "q1" for _, dst in supports(graph))
    assert notes == ["the working never uses the 25 that D1.1 states"]
    # Without the rule (documents, not a word problem) the same working stands; with all
    # quantities used it stands too.
    no_graph: Any = {"nodes": []}  # a partial ReplyGraph: claims reads only its nodes
    assert "q1" not in claims(worked_graph(working, spans)[0] or no_graph)
    used = "7 * 63 = 441\n5 * 63 = 315\n441 - 315 + 25 = 151\nANSWER: 151"
    assert worked_graph(used, spans, every_quantity=True)[1] == []


def test_a_fraction_or_a_percentage_counts_as_used_through_any_of_its_readings() -> None:
    spans = {"D1.1": "Harper wrote 1/4 of 248 pages.", "D1.2": "Prices rose 20% on $50."}
    working = "248 / 4 = 62\n50 * 0.2 = 10\n62 + 10 = 72\nANSWER: 72"
    assert worked_graph(working, spans, every_quantity=True)[1] == []


def test_a_quantity_of_one_may_be_used_silently_and_any_other_may_not() -> None:
    """Multiplying or dividing by 1 changes nothing, so a working may leave "1 kg a day" out
    of its equations (math-0354); a 7 left out is still a premise nothing supports."""
    spans = {"D1.1": "Flour costs 29 a kg.", "D1.2": "Tom uses 1 kg a day for 7 days."}
    assert worked_graph("7 * 29 = 203\nANSWER: 203", spans, every_quantity=True)[1] == []
    notes = worked_graph("1 * 29 = 29\nANSWER: 29", spans, every_quantity=True)[1]
    assert notes == ["the working never uses the 7 that D1.2 states"]


def test_the_loop_refuses_a_word_problem_working_that_leaves_a_quantity_out() -> None:
    report, _ = run_worked("So 248 - 100 = 148 pages.\nANSWER: 148")
    assert report["answer"] is None


def test_when_the_greedy_working_fails_sampled_workings_are_asked_and_can_answer() -> None:
    def reply(model: str, messages: list[ChatMessage], kwargs: ScriptedKwargs) -> str:
        greedy = kwargs["temperature"] == 0.0
        return "So 248 - 17 = 231 pages.\nANSWER: 231" if greedy else WORKING

    report, client = run_worked(reply, ADAPTIVE)
    assert report["answer"] == "186"
    assert [call["kwargs"]["temperature"] for call in client.calls] == [0.0, 0.8, 0.8]


def test_a_greedy_working_that_holds_needs_no_further_calls() -> None:
    # With 3 calls a verification round (3 votes) no longer fits once run 1 has answered.
    report, client = run_worked(WORKING, ADAPTIVE)
    assert report["answer"] == "186"
    assert len(client.calls) == 1


@pytest.mark.parametrize("test", doctests([derivation]), ids=lambda test: test.name)
def test_the_modules_examples_give_what_they_show(test: doctest.DocTest) -> None:
    if report := failures(test):
        pytest.fail(report, pytrace=False)
