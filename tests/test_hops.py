"""Hop-by-hop interrogation: a plan, one single-fact lookup per hop, and the chain the system
assembles from them, held to the same argument rules as any interrogation (issue 32)."""

from __future__ import annotations

import doctest
import importlib
import json
from collections.abc import Callable
from typing import Any

import pytest
from canned_runs import chain_reply
from docstrings import doctests, failures

from orchestrator.api import RunConfig, Task, model_defaults, model_hops, run_task
from orchestrator.checks import hops
from orchestrator.checks.hops import FOUND, NOT_IN_SENTENCE, OFF_HOP, Hop
from orchestrator.llm import ChatMessage
from orchestrator.llm.testing import ScriptedClient, ScriptedKwargs
from orchestrator.records.report import RunReport
from orchestrator.reply import graph_record
from orchestrator.reply.parse import parse_lookup, parse_plan

DOCUMENTS = [
    "Title: Faldhaven Bridge\nThe Faldhaven Bridge is a road bridge. It was built by "
    "Arlfield Works. It opened in 1881.",
    "Title: Arlfield Works\nArlfield Works is an engineering works. It was founded by Malin "
    "Corver. It is headquartered in Haskgard.",
    "Title: Arlstone Works\nArlstone Works is an engineering works. It was founded by Malin "
    "Corvane.",
    "Title: Malin Corver\nMalin Corver was an engineer. She was born in Kelvholt.",
    "Title: Malin Corvane\nMalin Corvane was an engineer. She was born in Kelvford.",
]
QUESTION = "In which town was the founder of the company that built the Faldhaven Bridge born?"
# What the question's grammar unwinds into (orchestrator.checks.decompose): no plan call.
PLAN = [
    "Which company built the Faldhaven Bridge?",
    "Who or what is the founder of #1?",
    "In which town was #2 born?",
]
LOOKUPS = {
    "Which company built the Faldhaven Bridge?": ("D1.2", "Arlfield Works"),
    "Who or what is the founder of Arlfield Works?": ("D2.2", "Malin Corver"),
    "In which town was Malin Corver born?": ("D4.2", "Kelvholt"),
}
# A question whose grammar does not unwind: its plan is asked of the model.
ODD_QUESTION = (
    "The Faldhaven Bridge's builder was founded by someone: in which town was that founder born?"
)
# The chain the model writes first cites the founder's sentence alone: it never reaches the
# bridge, so the chain check refuses it and the hops are asked.
WEAK_CHAIN = chain_reply([("D4.2", "")], "Kelvholt")


def scripted(
    plan: list[str], lookups: dict[str, tuple[str, str]], chain: str = WEAK_CHAIN
) -> ScriptedClient:
    """A model that writes ``chain``, then ``plan``, then answers each lookup from
    ``lookups`` (a lookup it was not given: no sentence)."""
    return ScriptedClient(script(plan, lookups, chain))


def script(
    plan: list[str], lookups: dict[str, tuple[str, str]], chain: str = WEAK_CHAIN
) -> Callable[[str, list[ChatMessage], ScriptedKwargs], str]:
    """:func:`scripted`'s answers, as a function of the messages."""

    def answer(model: str, messages: list[ChatMessage], kwargs: ScriptedKwargs) -> str:
        system, user = messages[0]["content"], messages[-1]["content"]
        if "single-fact lookups" in system:
            return json.dumps({"lookups": plan})
        if "one short question" in system:
            asked = user.split("Question: ", 1)[1].split("\n", 1)[0]
            sentence, value = lookups.get(asked, ("none", ""))
            return json.dumps({"sentence": sentence, "answer": value})
        if '"steps"' in system:
            return chain
        return json.dumps({"verdict": "not_determinable", "reason": "scripted"})

    return answer


def run(
    client: ScriptedClient,
    setting: str = "on_failure",
    budget: int = 7,
    question: str = QUESTION,
    documents: list[str] = DOCUMENTS,
) -> RunReport:
    config = RunConfig(
        n=1,
        k=2,
        budget_calls=budget,
        temperature=0.0,
        interrogation_shape="chain",
        hops=setting,
    )
    task = {"question": question, "documents": documents}
    return run_task(task, client=client, model="scripted", config=config)


def test_progress_after_each_call_says_which_were_hop_lookups() -> None:
    events: list[dict[str, Any]] = []
    config = RunConfig(
        n=1, budget_calls=7, temperature=0.0, interrogation_shape="chain", hops="first"
    )
    task = {"question": QUESTION, "documents": DOCUMENTS}
    run_task(
        task,
        client=scripted(PLAN, LOOKUPS),
        model="scripted",
        config=config,
        progress=events.append,
    )
    assert [event["role"] for event in events] == ["lookup"] * 3
    assert {event["step"] for event in events} == {"fan_out"}


def test_a_hop_chain_assembled_from_single_fact_lookups_answers_what_the_chain_could_not() -> None:
    without = run(scripted(PLAN, LOOKUPS), setting="off")
    assert without["refused"] and without["hops"] is None
    report = run(scripted(PLAN, LOOKUPS))
    assert report["answer"] == "Kelvholt"
    assert report["hops"] is not None
    assert report["hops"]["plan"] == PLAN
    assert [hop["status"] for hop in report["hops"]["hops"]] == [FOUND] * 3
    assert [hop["asked"] for hop in report["hops"]["hops"]] == list(LOOKUPS)
    assert report["hops"]["plan_source"] == "question"
    assert report["hops"]["calls"] == 3  # three lookups; the plan was read off the question


def test_a_shorter_derivation_that_stops_short_of_the_answer_does_not_hide_the_hops() -> None:
    # The first chain goes from the bridge's builder straight to "Kelvholt": that derivation
    # names no town, so it is no argument; the hops' longer one, which reaches Kelvholt, is.
    short = chain_reply([("D1.2", "")], "Kelvholt")
    report = run(scripted(PLAN, LOOKUPS, short))
    assert report["answer"] == "Kelvholt" and not report["candidates"][0]["flags"]
    set_aside = report["candidates"][0]["set_aside"]
    assert [(why["reason"], [c["id"] for c in why["claims"]]) for why in set_aside] == [
        ("answer_not_on_argument", ["D1.2"])
    ]


def test_a_question_whose_grammar_does_not_unwind_gets_the_models_plan() -> None:
    plan = [
        "Which company built the Faldhaven Bridge?",
        "Who founded #1?",
        "In which town was #2 born?",
    ]
    lookups = {**LOOKUPS, "Who founded Arlfield Works?": ("D2.2", "Malin Corver")}
    report = run(scripted(plan, lookups), question=ODD_QUESTION)
    assert report["hops"] is not None
    assert report["hops"]["plan_source"] == "model" and report["hops"]["plan"] == plan
    assert report["answer"] == "Kelvholt"
    assert report["hops"]["calls"] == 4  # the plan and three lookups
    assert report["budget"]["used"] <= 7


def test_a_lookup_answered_from_a_look_alike_breaks_the_chain() -> None:
    """The founder of Arlstone Works is not the founder of Arlfield Works: the sentence does
    not name the bridge value the earlier hop found."""
    lookups = {
        **LOOKUPS,
        "Who or what is the founder of Arlfield Works?": ("D3.2", "Malin Corvane"),
    }
    report = run(scripted(PLAN, lookups))
    assert report["refused"]
    assert report["hops"] is not None
    statuses = [hop["status"] for hop in report["hops"]["hops"]]
    assert statuses == [FOUND, OFF_HOP, hops.NOT_ASKED]


def test_an_answer_the_cited_sentence_does_not_hold_is_no_hop() -> None:
    lookups = {**LOOKUPS, "In which town was Malin Corver born?": ("D4.2", "Kelvford")}
    report = run(scripted(PLAN, lookups))
    assert report["refused"]
    assert report["hops"] is not None
    assert report["hops"]["hops"][2]["status"] == NOT_IN_SENTENCE


def test_a_plan_about_something_the_question_never_names_is_rejected() -> None:
    plan = ["Who designed the Orrin Tower?", "Where was #1 born?"]
    report = run(scripted(plan, LOOKUPS), question=ODD_QUESTION)
    assert report["refused"]
    assert report["hops"] is not None
    assert report["hops"]["hops"] == []
    assert report["hops"]["plan_problem"] is not None
    assert "names nothing of the question" in report["hops"]["plan_problem"]


def whole_chain(birth: str, answer: str) -> str:
    """A first chain through all three documents, ending on the inference ``birth``."""
    steps = [
        ("D1.2", "Arlfield Works built it"),
        ("D2.2", "Malin Corver founded Arlfield Works"),
        ("D4.2", birth),
    ]
    return chain_reply(steps, answer)


def test_a_grounded_first_chain_spends_no_call_on_hops() -> None:
    chain = whole_chain("Malin Corver was born in Kelvholt", "Kelvholt")
    client = scripted(PLAN, LOOKUPS, chain=chain)
    report = run(client)
    assert report["answer"] == "Kelvholt"
    assert report["hops"] is None
    assert not any("single-fact lookups" in call["messages"][0]["content"] for call in client.calls)


def test_a_first_chain_whose_verification_refutes_it_is_then_asked_hop_by_hop() -> None:
    """The first chain grounds "Kelvford" on a premise the verification refutes: that chain
    failed, only later, so the calls left ask the question hop by hop."""
    chain = whole_chain("Malin Corver was born in Kelvholt, so in Kelvford", "Kelvford")
    first = script(PLAN, LOOKUPS, chain=chain)

    def answer(model: str, messages: list[ChatMessage], kwargs: ScriptedKwargs) -> str:
        claim = messages[-1]["content"].partition("Claim:")[2]
        if "Kelvford" in claim:
            return json.dumps({"verdict": "refuted", "reason": "[D4.2] Kelvholt, not Kelvford."})
        return first(model, messages, kwargs)

    report = run(ScriptedClient(answer), budget=12)
    assert report["hops"] is not None and report["hops"]["trigger"] == "no grounded answer"
    assert report["answer"] == "Kelvholt"
    assert report["budget"]["used"] <= 12
    # The verification after the hops goes on from the first: no claim is asked twice.
    asked = [v["node_id"] for v in report["verifications"]]
    assert len(asked) == len(set(asked)) >= 1
    assert [v["round"] for v in report["verifications"]] == sorted(
        v["round"] for v in report["verifications"]
    )


def test_hops_asked_first_answer_without_the_chain_call_when_they_ground_an_answer() -> None:
    client = scripted(PLAN, LOOKUPS)
    report = run(client, setting="first")
    assert report["answer"] == "Kelvholt"
    assert report["hops"] is not None
    assert report["hops"]["trigger"] == "first" and report["hops"]["run_id"] == "r2"
    assert report["budget"]["used"] == 3  # the three lookups, and no chain
    assert not any('"steps"' in call["messages"][0]["content"] for call in client.calls)
    r1 = next(run for run in report["runs"] if run["run_id"] == "r1")
    assert r1["outcome"] == "not_started"


def test_hops_asked_first_that_fail_leave_the_question_to_the_chain() -> None:
    chain = whole_chain("Malin Corver was born in Kelvholt", "Kelvholt")
    client = scripted(PLAN, {}, chain=chain)  # no lookup finds its sentence
    report = run(client, setting="first")
    assert report["answer"] == "Kelvholt"
    assert report["hops"] is not None
    assert report["hops"]["trigger"] == "first" and report["hops"]["answer"] is None
    assert [run["run_id"] for run in report["runs"]] == ["r1", "r2"]
    assert any('"steps"' in call["messages"][0]["content"] for call in client.calls)


def test_hops_only_that_fail_refuse_without_asking_the_chain() -> None:
    chain = whole_chain("Malin Corver was born in Kelvholt", "Kelvholt")
    client = scripted(PLAN, {}, chain=chain)  # no lookup finds its sentence
    report = run(client, setting="only")
    assert report["refused"] and report["answer"] is None
    assert report["hops"] is not None
    assert report["hops"]["trigger"] == "first" and report["hops"]["answer"] is None
    assert not any('"steps"' in call["messages"][0]["content"] for call in client.calls)
    r1 = next(run for run in report["runs"] if run["run_id"] == "r1")
    assert r1["outcome"] == "not_started"
    # The first lookup finds no sentence, so the hops stop there: one call, and no other.
    assert report["budget"]["used"] == len(client.calls) == 1


def test_hops_only_that_ground_an_answer_give_what_hops_first_gives() -> None:
    only = run(scripted(PLAN, LOOKUPS), setting="only")
    first = run(scripted(PLAN, LOOKUPS), setting="first")
    assert only["answer"] == first["answer"] == "Kelvholt"
    assert only["budget"]["used"] == first["budget"]["used"] == 3
    assert only["candidates"] == first["candidates"]


def test_hops_auto_only_asks_the_hops_alone_only_where_the_question_spells_them_out() -> None:
    unwinds = scripted(PLAN, {}, chain=whole_chain("Malin Corver was born in Kelvholt", "Kelvholt"))
    report = run(unwinds, setting="auto_only")
    assert report["hops"] is not None
    assert report["refused"] and report["hops"]["trigger"] == "first"
    assert report["budget"]["used"] == len(unwinds.calls) == 1  # the one failed lookup
    odd = run(scripted(PLAN, LOOKUPS), setting="auto_only", question=ODD_QUESTION)
    off = run(scripted(PLAN, LOOKUPS), setting="off", question=ODD_QUESTION)
    assert odd["hops"] is None and odd["budget"]["used"] == off["budget"]["used"] == 1
    assert (odd["answer"], odd["refused"]) == (off["answer"], off["refused"])


def test_hops_auto_asks_first_a_question_that_spells_out_its_hops() -> None:
    client = scripted(PLAN, LOOKUPS)
    report = run(client, setting="auto", budget=3)
    assert report["config"]["hops"] == "auto"  # the setting as given; the hops say what ran
    assert report["hops"] is not None
    assert report["hops"]["trigger"] == "first" and report["hops"]["plan_source"] == "question"
    assert report["answer"] == "Kelvholt"
    assert report["budget"]["used"] == 3  # the three lookups, and no chain


def test_hops_auto_leaves_a_question_whose_plan_would_cost_a_call_to_the_chain_alone() -> None:
    """Where the grammar does not unwind, auto is off: the one chain, no plan asked."""
    client = scripted(PLAN, LOOKUPS)
    auto = run(client, setting="auto", question=ODD_QUESTION)
    off = run(scripted(PLAN, LOOKUPS), setting="off", question=ODD_QUESTION)
    assert auto["hops"] is None and auto["budget"]["used"] == off["budget"]["used"] == 1
    assert (auto["answer"], auto["refused"]) == (off["answer"], off["refused"])
    assert not any("single-fact lookups" in call["messages"][0]["content"] for call in client.calls)


def test_the_built_in_1_5b_asks_hop_by_hop_when_the_question_spells_out_its_hops() -> None:
    # the hops alone (no chain after hops that fail): chosen on multihop 340-379, hops.md
    assert model_hops("local-1.5b") == "auto_only"
    assert model_hops("local") == "off"
    # within the calls a comparison through two builders needs (four lookups)
    over_a_document = [Task(question, ("A document.",)) for question in (QUESTION, ODD_QUESTION)]
    assert model_defaults("local-1.5b", over_a_document[0]).sampling["budget_calls"] == 6
    assert model_defaults("local-1.5b", over_a_document[1]).sampling["budget_calls"] == 3


def test_hops_stop_where_the_call_budget_runs_out() -> None:
    report = run(scripted(PLAN, LOOKUPS), budget=3)
    assert report["refused"]
    assert report["budget"]["used"] <= 3
    assert report["hops"] is not None
    statuses = [hop["status"] for hop in report["hops"]["hops"]]
    assert statuses == [FOUND, FOUND, hops.NOT_ASKED]  # the chain and two lookups: 3 calls


def found(number: int, planned: str, answer: str) -> Hop:
    return Hop(number, planned, planned, f"D{number}.1", answer, FOUND, "")


def test_a_comparison_is_decided_by_the_numbers_its_hops_found() -> None:
    question = "Which company was founded earlier: the one that built the Kest Bridge or the one that built the Pask Bridge?"  # noqa: E501
    chain = [
        found(1, "Which company built the Kest Bridge?", "Dunhall Works"),
        found(2, "Which company built the Pask Bridge?", "Rookton Works"),
        found(3, "When was #1 founded?", "1840"),
        found(4, "When was #2 founded?", "1812"),
    ]
    assert hops.hop_answer(question, chain) == "Rookton Works"
    simple = "Which town was settled earlier, Marrgard or Zarnmere?"
    pair = [
        found(1, "When was Marrgard settled?", "1240"),
        found(2, "When was Zarnmere settled?", "1180"),
    ]
    assert hops.hop_answer(simple, pair) == "Zarnmere"
    assert hops.hop_answer(simple, pair[:1]) is None  # one option has no number


MILLS = [
    "Title: Harrow Mill\nHarrow Mill is a textile mill on the Arl. It was founded in 1790.",
    "Title: Kelby Works\nKelby Works is an engineering works. It was founded in 1815.",
    "Title: Harrow Forge\nHarrow Forge is a smithy. It was founded in 1750.",
]
EARLIER = "Which was founded earlier, Harrow Mill or Kelby Works?"
EARLIER_LOOKUPS = {
    "When was Harrow Mill founded?": ("D1.2", "1790"),
    "When was Kelby Works founded?": ("D2.2", "1815"),
}


DATED = [
    "Harrow Mill is a textile mill. Harrow Mill dates from 1790.",
    "Kelby Works is an engineering works. Kelby Works opened its doors in 1815.",
]
"""Sentences worded unlike the lookups, so that no hop's claim merges into its given."""


def test_a_comparisons_hops_rest_on_one_line_per_option_and_ground_the_winner() -> None:
    # "1790" and "1815" share no word: as one chain the second year would rest on the first
    # and the link would fail; as a join each line rests on its own sentence.
    one_sided = chain_reply([("D2.2", "")], "Kelby Works")
    report = run(scripted([], EARLIER_LOOKUPS, one_sided), question=EARLIER, documents=DATED)
    assert report["answer"] == "Harrow Mill"
    assert report["hops"] is not None
    assert report["hops"]["answer"] == "Harrow Mill"
    edges = {(edge["src"], edge["dst"]) for edge in report["graph"]["edges"]}
    assert {("D1.2", "r2:i1"), ("D2.2", "r2:i2")} <= edges
    assert {("r2:i1", "answer:harrow mill"), ("r2:i2", "answer:harrow mill")} <= edges
    assert ("r2:i1", "r2:i2") not in edges  # neither year rests on the other
    claims = {node["id"]: node["claim"] for node in report["graph"]["nodes"]}
    assert claims["r2:i1"] == "When was Harrow Mill founded? 1790"


def test_two_documents_its_founding_years_are_two_subjects_not_a_dispute() -> None:
    """ "It was founded in 1790." and "It was founded in 1815." differ in one number only, which
    the store reads as two readings of one claim; each given states whose year it is."""
    one_sided = chain_reply([("D2.2", "")], "Kelby Works")
    report = run(scripted([], EARLIER_LOOKUPS, one_sided), question=EARLIER, documents=MILLS)
    assert report["answer"] == "Harrow Mill"
    claims = {node["id"]: node["claim"] for node in report["graph"]["nodes"]}
    assert claims["D1.2"] == "It (Harrow Mill) was founded in 1790."
    assert claims["D2.2"] == "It (Kelby Works) was founded in 1815."
    assert report["contradictions_created"] == []
    edges = {(e["src"], e["relation"], e["dst"]) for e in report["graph"]["edges"]}
    assert not any(relation == "attacks" for _, relation, _ in edges)
    # "When was Harrow Mill founded? 1790" now says what its sentence says, so it is that
    # given: each option's line is its own sentence.
    assert {
        ("D1.2", "supports", "answer:harrow mill"),
        ("D2.2", "supports", "answer:harrow mill"),
    } <= edges


BUILDERS = [
    "Tullton Ironworks built the Dellcrest Bridge.",
    "Tullton Ironworks was founded in 1830.",
    "Gorrcombe Ironworks built the Wistwald Bridge.",
    "Gorrcombe Ironworks was founded in 1906.",
]
BUILDERS_EARLIER = (
    "Which company was founded earlier: the one that built the Dellcrest Bridge or the one "
    "that built the Wistwald Bridge?"
)
BUILDERS_LOOKUPS = {
    "Which company built the Dellcrest Bridge?": ("D1.1", "Tullton Ironworks"),
    "When was Tullton Ironworks founded?": ("D2.1", "1830"),
    "Which company built the Wistwald Bridge?": ("D3.1", "Gorrcombe Ironworks"),
    "When was Gorrcombe Ironworks founded?": ("D4.1", "1906"),
}


def test_the_other_option_a_hop_found_is_no_look_alike_of_the_answer() -> None:
    """Both builders are ironworks: "Gorrcombe Ironworks" on the losing line shares a word with
    the answer "Tullton Ironworks", which would read as a look-alike trap, but the hops found
    each as one option of the comparison, so the comparison tells them apart."""
    plan = [
        "Which company built the Dellcrest Bridge?",
        "When was #1 founded?",
        "Which company built the Wistwald Bridge?",
        "When was #3 founded?",
    ]
    client = scripted(plan, BUILDERS_LOOKUPS)
    report = run(client, setting="first", question=BUILDERS_EARLIER, documents=BUILDERS)
    assert report["answer"] == "Tullton Ironworks"
    chosen = next(c for c in report["candidates"] if c["answer"] == "Tullton Ironworks")
    assert chosen["failed_links"] == []


def test_a_look_alike_of_an_option_is_still_refused() -> None:
    """The exemption covers the two names the hops found, nothing else: a lookup answered from
    a near-miss's sentence still fails its hop."""
    lookups = {
        **BUILDERS_LOOKUPS,
        "Which company built the Wistwald Bridge?": ("D1.1", "Tullton Ironworks"),
    }
    plan = [
        "Which company built the Dellcrest Bridge?",
        "When was #1 founded?",
        "Which company built the Wistwald Bridge?",
        "When was #3 founded?",
    ]
    report = run(
        scripted(plan, lookups), setting="first", question=BUILDERS_EARLIER, documents=BUILDERS
    )
    assert report["refused"]


def test_the_values_the_hops_found_are_not_put_to_a_verification_vote() -> None:
    """The hop check tied each value to its sentence, as the citation check ties a given: a
    verifier that refutes every claim it is shown ("When was Harrow Mill founded? 1790") gets
    none of them, and the answer stands."""
    one_sided = chain_reply([("D2.2", "")], "Kelby Works")
    replies = script([], EARLIER_LOOKUPS, one_sided)

    def answer(model: str, messages: list[ChatMessage], kwargs: ScriptedKwargs) -> str:
        if "Claim:" in messages[-1]["content"]:
            return json.dumps({"verdict": "refuted", "reason": "[D1.2] scripted"})
        return replies(model, messages, kwargs)

    client = ScriptedClient(answer)
    report = run(client, question=EARLIER, documents=DATED)
    assert report["answer"] == "Harrow Mill"
    asked = [call["messages"][-1]["content"] for call in client.calls]
    assert not any("founded? 1790" in text or "founded? 1815" in text for text in asked)


def test_a_comparison_read_from_a_look_alike_is_still_refused() -> None:
    lookups = {**EARLIER_LOOKUPS, "When was Harrow Mill founded?": ("D3.2", "1750")}
    one_sided = chain_reply([("D2.2", "")], "Kelby Works")
    report = run(scripted([], lookups, one_sided), question=EARLIER, documents=MILLS)
    assert report["refused"]
    assert report["hops"] is not None
    assert report["hops"]["hops"][0]["status"] == OFF_HOP


def test_the_join_is_for_comparisons_only() -> None:
    pair = [found(1, "When was Marrgard settled?", "1240"), found(2, "Who settled #1?", "Ada")]
    spans = {"D1.1": "Marrgard was settled in 1240.", "D2.1": "Ada settled Marrgard."}
    assert hops.assembled_join("Who settled Marrgard?", pair, "Ada", spans) is None


def test_a_plan_that_stops_a_hop_short_of_what_the_question_asks_is_rejected() -> None:
    """ "Where was #2 born?" never says it asks for the town the question asks for."""
    short = ["Which company built the Faldhaven Bridge?", "Where is #1 based?"]
    assert "does not ask for the question's town" in (hops.plan_problem(short, QUESTION) or "")


def test_a_lookup_that_says_this_for_the_answer_before_it_gets_that_answer() -> None:
    plan = ["Which company built the Faldhaven Bridge?", "Who founded this company?"]
    assert hops.references(plan[1], 2) == [1]
    assert hops.fill(plan[1], ["Arlfield Works"]) == "Who founded this company? (Arlfield Works)"


def test_a_first_hop_from_a_look_alike_sentence_is_off_hop() -> None:
    """Both sentences say "bridge"; only a whole name of the lookup counts."""
    lookup = "Which company built the Faldhaven Bridge?"
    wrong = "It (Faldwald Bridge) was built by Vantton Works."
    right = "It (Faldhaven Bridge) was built by Vantley Works."
    problem = hops.hop_problem(wrong, "Vantton Works", lookup, [])
    assert problem is not None and problem[0] == OFF_HOP
    assert hops.hop_problem(right, "Vantley Works", lookup, []) is None


@pytest.mark.parametrize(
    ("plan", "problem"),
    [
        (["Who built #1?"], "refers to #1"),
        (["Who built the Kest Bridge?", "Who founded #3?"], "refers to #3"),
        ([], "no lookup"),
    ],
)
def test_a_plan_refers_only_to_earlier_lookups(plan: list[str], problem: str) -> None:
    assert problem in (hops.plan_problem(plan, "Who built the Kest Bridge?") or "")


def test_plan_and_lookup_replies_are_read_leniently_and_bounded() -> None:
    plan = parse_plan('```json\n{"lookups": ["a?", "", 3, "b?", "c?", "d?", "e?"]}\n```')
    assert plan.value == ["a?", "b?", "c?", "d?"]  # four at most; the empty and the number go
    assert parse_plan('{"lookups": []}').value is None
    assert parse_lookup('{"sentence": "[D2.3]", "answer": "Kelvholt"}').value == (
        "D2.3",
        "Kelvholt",
    )
    assert parse_lookup('{"sentence": "none", "answer": ""}').value is None
    assert parse_lookup("not json at all").value is None


def test_report_md_shows_each_hop_with_its_sentence() -> None:
    from orchestrator.report.markdown import render_markdown

    text = render_markdown(run(scripted(PLAN, LOOKUPS)))
    assert "## Hop by hop" in text
    assert (
        "| 2 | Who or what is the founder of Arlfield Works? | `D2.2` | Malin Corver | found |"
        in text
    )


def test_shuffled_runs_are_greedy_and_see_the_documents_in_another_order() -> None:
    from orchestrator.api import RunConfig as Config

    def first_lines(messages: list[ChatMessage]) -> list[str]:
        evidence = messages[-1]["content"].split("Question:")[0]
        return [line.split("]")[0] for line in evidence.splitlines() if line.endswith(".")][:1]

    client = scripted(PLAN, LOOKUPS)
    config = Config(
        n=3, k=1, budget_calls=3, temperature=0.8, interrogation_shape="chain",
        greedy_first=True, diversity="shuffle",
    )  # fmt: skip
    run_task(
        {"question": QUESTION, "documents": DOCUMENTS}, client=client, model="m", config=config
    )
    calls = [c for c in client.calls if '"steps"' in c["messages"][0]["content"]]
    assert [c["kwargs"]["temperature"] for c in calls] == [0.0, 0.0, 0.0]
    openings = [first_lines(c["messages"]) for c in calls]
    assert openings[0] == ["[D1.1"] and openings[1] != openings[0]
    shown = [c["messages"][-1]["content"].splitlines() for c in calls]
    ids = [sorted(line.split("]")[0] for line in lines if line.startswith("[D")) for lines in shown]
    assert ids[0] == ids[1] == ids[2]  # every sentence shown, each under its own id


def test_arm_7_with_shuffle_diversity_sees_the_same_orders_at_temperature_zero() -> None:
    from evals.arms import ArmSettings, self_consistency

    seen: list[tuple[float, str]] = []

    def answer(model: str, messages: list[ChatMessage], kwargs: ScriptedKwargs) -> str:
        seen.append((kwargs["temperature"], messages[-1]["content"]))
        return "Answer: Kelvholt"

    item = {"id": "x", "question": QUESTION, "documents": DOCUMENTS, "kind": "qa"}
    settings = ArmSettings(samples=3, sample_diversity="shuffle", seed=1)
    result = self_consistency(item, "m", ScriptedClient(answer), settings=settings)
    assert result.answer == "Kelvholt"
    assert [t for t, _ in seen] == [0.0, 0.0, 0.0]
    assert seen[0][1] != seen[1][1] != seen[2][1]
    assert DOCUMENTS[1].split("\n")[0] in seen[1][1]  # every document still there


TWO_ROADS = [
    "Title: Malin Corver\nMalin Corver was an engineer. She was born in Kelvholt.",
    "Title: Kelvholt\nKelvholt is a town. The engineer Malin Corver was born in Kelvholt.",
    "Title: Kelvford\nKelvford is a town on the Meva River.",
]


def two_roads(second: str) -> ScriptedClient:
    """A model whose chain cites D1.2 when it can see it, and else ``second``."""

    def answer(model: str, messages: list[ChatMessage], kwargs: ScriptedKwargs) -> str:
        user = messages[-1]["content"]
        if "[D1.2]" in user:
            return chain_reply([("D1.2", "")], "Kelvholt")
        if second == "none":
            return chain_reply([], "unanswerable")
        return chain_reply([(second, "")], "Kelvholt")

    return ScriptedClient(answer)


def leave_out_run(client: ScriptedClient, documents: list[str] = TWO_ROADS) -> RunReport:
    config = RunConfig(
        n=1, k=2, budget_calls=2, temperature=0.0, interrogation_shape="chain", leave_out=True
    )
    task = {"question": "Where was Malin Corver born?", "documents": documents}
    return run_task(task, client=client, model="m", config=config)


def test_leave_the_argument_out_finds_a_second_road_of_width_two() -> None:
    client = two_roads("D2.2")
    report = leave_out_run(client)
    assert report["answer"] == "Kelvholt"
    assert report["chosen"]["width"] == 2
    assert report["leave_out"] is not None
    assert report["leave_out"]["hidden"] == ["D1.2"]
    assert report["leave_out"]["answer"] == "Kelvholt"
    second = client.calls[1]["messages"][-1]["content"]
    assert "[D1.2]" not in second and "[D2.2]" in second  # ids kept, the argument hidden


def test_leave_the_argument_out_without_a_second_road_keeps_width_one() -> None:
    report = leave_out_run(two_roads("none"))
    assert report["answer"] == "Kelvholt"  # a run that finds nothing vetoes nothing
    assert report["chosen"]["width"] == 1
    assert report["leave_out"] is not None
    assert report["leave_out"]["asked"] and report["leave_out"]["answer"] == "unanswerable"


def test_an_answer_whose_left_out_run_verifies_another_is_refused_as_fragile() -> None:
    """The run that cannot see D1.2 verifies Kelvford from another page: it saw less evidence, so
    it must not outrank Kelvholt, and Kelvholt has lost its footing."""
    documents = [
        *TWO_ROADS[:1],
        "Title: Kelvford\nKelvford is a town. Malin Corver was born in Kelvford.",
    ]

    def answer(model: str, messages: list[ChatMessage], kwargs: ScriptedKwargs) -> str:
        if "[D1.2]" in messages[-1]["content"]:
            return chain_reply([("D1.2", "")], "Kelvholt")
        return chain_reply([("D2.2", "")], "Kelvford")

    report = leave_out_run(ScriptedClient(answer), documents)
    assert report["leave_out"] is not None
    assert report["leave_out"]["answer"] == "Kelvford"
    grounded = {c["answer"] for c in report["candidates"] if c["grounded"]}
    assert grounded == {"Kelvholt", "Kelvford"}
    assert report["answer"] is None and report["refusal_reason"] == "answer_fragile"
    assert "without those sentences" in report["statement"] and "Kelvford" in report["statement"]


def test_a_hop_citing_the_wrong_sentence_for_its_value_stands_on_the_one_that_carries_it() -> None:
    """As a given's wrong span number is repaired: one sentence holds the value and names the
    earlier answer, so the hop stands on it, and the report says what was cited."""
    lookups = {**LOOKUPS, "Who or what is the founder of Arlfield Works?": ("D2.3", "Malin Corver")}
    report = run(scripted(PLAN, lookups))
    assert report["answer"] == "Kelvholt"
    assert report["hops"] is not None
    second = report["hops"]["hops"][1]
    assert second["sentence"] == "D2.2" and "cited as D2.3" in second["detail"]


def test_a_hop_repaired_onto_the_sentence_that_carries_it_is_read_as_that_sentence_writes_it() -> (
    None
):
    """multihop-0104: "Elvow", cited from the wrong sentence, stood on the right one as "Elvow"
    and the next lookup asked about "Elvow". Read whole, the next lookup asks about the
    company the sentence names."""
    built = "Which company built the Faldhaven Bridge?"
    report = run(scripted(PLAN, {**LOOKUPS, built: ("D1.3", "Arlfield")}))
    assert report["hops"] is not None
    first = report["hops"]["hops"][0]
    assert first["sentence"] == "D1.2" and first["answer"] == "Arlfield Works"
    assert report["answer"] == "Kelvholt"


def test_a_hop_read_from_a_look_alike_paragraph_is_asked_once_more_without_it() -> None:
    founder = "Who or what is the founder of Arlfield Works?"

    def answer(model: str, messages: list[ChatMessage], kwargs: ScriptedKwargs) -> str:
        system, user = messages[0]["content"], messages[-1]["content"]
        if "one short question" in system:
            asked = user.split("Question: ", 1)[1].split("\n", 1)[0]
            if asked == founder and "[D3.1]" in user:  # the look-alike's paragraph is shown
                return json.dumps({"sentence": "D3.2", "answer": "Malin Corvane"})
            sentence, value = LOOKUPS.get(asked, ("none", ""))
            return json.dumps({"sentence": sentence, "answer": value})
        return WEAK_CHAIN

    report = run(ScriptedClient(answer))
    assert report["answer"] == "Kelvholt"
    assert report["hops"] is not None
    second = report["hops"]["hops"][1]
    assert (
        second["status"] == FOUND and "second try, without the document of D3.2" in second["detail"]
    )
    assert report["hops"]["calls"] == 4  # three lookups and the second try


def test_a_lookup_that_names_only_a_lower_case_object_stands_on_the_sentence_naming_it() -> None:
    """A lookup such as "Who or what is the inventor of the silhorn?" names no capitalised name:
    the question word that opens it is not one, so the sentence naming the silhorn is on the hop."""
    documents = [
        "The silhorn has seven strings. The silhorn was invented by Halla Ravow.",
        "The silzither was invented by Dagny Nylath.",
        "Halla Ravow was born in the town of Braskness.",
    ]
    question = "In which town was the inventor of the silhorn born?"
    plan = ["Who or what is the inventor of the silhorn?", "In which town was Halla Ravow born?"]
    lookups = dict(zip(plan, [("D1.2", "Halla Ravow"), ("D3.1", "Braskness")], strict=True))
    report = run(
        scripted(plan, lookups, chain_reply([("D3.1", "")], "Braskness")),
        question=question,
        documents=documents,
    )
    assert report["hops"] is not None
    assert [hop["status"] for hop in report["hops"]["hops"]] == [FOUND, FOUND]
    assert report["answer"] == "Braskness"
    look_alike = hops.hop_problem(
        "The silzither was invented by Dagny Nylath.", "Dagny Nylath", plan[0], []
    )
    assert look_alike is not None and look_alike[0] == OFF_HOP


def test_a_value_written_as_the_whole_sentence_is_read_as_the_name_the_sentence_gives() -> None:
    lookups = {
        **LOOKUPS,
        "In which town was Malin Corver born?": ("D4.2", "She was born in Kelvholt."),
    }
    report = run(scripted(PLAN, lookups))
    assert report["answer"] == "Kelvholt"
    assert report["hops"] is not None
    last = report["hops"]["hops"][2]
    assert last["answer"] == "Kelvholt" and "the reply wrote 'She was born" in last["detail"]


def test_a_look_alike_copy_of_the_sentences_name_is_read_as_the_sentence_writes_it() -> None:
    """The sentence is on the hop (it names the Faldhaven Bridge), and "Arlford Works" shares
    a word with the one name it gives: the value is that name, not the model's copy."""
    lookups = {**LOOKUPS, "Which company built the Faldhaven Bridge?": ("D1.2", "Arlford Works")}
    report = run(scripted(PLAN, lookups))
    assert report["answer"] == "Kelvholt"
    assert report["hops"] is not None
    assert report["hops"]["hops"][0]["answer"] == "Arlfield Works"


def test_a_value_unlike_any_name_of_its_sentence_stays_refused() -> None:
    lookups = {**LOOKUPS, "Which company built the Faldhaven Bridge?": ("D1.2", "Tullcombe Yard")}
    report = run(scripted(PLAN, lookups))
    assert report["refused"]
    assert report["hops"] is not None
    assert report["hops"]["hops"][0]["status"] in (NOT_IN_SENTENCE, OFF_HOP)


def test_a_value_that_is_what_the_lookup_asks_about_is_no_hop() -> None:
    problem = hops.hop_problem(
        "Malin Corver founded Arlfield Works.",
        "Arlfield Works",
        "Who or what is the founder of Arlfield Works?",
        ["Arlfield Works"],
    )
    assert problem is not None and problem[0] == hops.ANSWER_IS_ASKED


def test_a_value_that_is_part_of_a_name_of_its_sentence_is_read_as_the_whole_name() -> None:
    """multihop-0104: the first hop's "Elvow" made the next lookup ask where "Elvow" flows, and
    the model answered with the Elvow River itself."""
    sentence = "The Dellham Bridge crosses the Elvow River."
    lookup = "Which river is crossed by the Dellham Bridge?"
    assert hops.read_value(sentence, "Elvow", lookup, []) == "Elvow River"
    assert hops.read_value(sentence, "Elvow River", lookup, []) == "Elvow River"
    # Two names the part may stand for: it stays as the reply wrote it.
    both = "The Dellham Bridge crosses the Elvow River near Elvow Mill."
    assert hops.read_value(both, "Elvow", lookup, []) == "Elvow"


def test_a_value_that_is_part_of_what_the_lookup_asks_about_is_no_hop() -> None:
    lookup = "Into which river does the Gellen River flow?"
    sentence = "The Gellen River flows into the Hosk River."
    problem = hops.hop_problem(sentence, "Gellen", lookup, ["Gellen River"])
    assert problem is not None and problem[0] == hops.ANSWER_IS_ASKED
    assert hops.hop_problem(sentence, "Hosk River", lookup, ["Gellen River"]) is None
    # Read as its sentence writes it, the reply that named only the asked river's first word
    # gives the one river the sentence adds.
    assert hops.read_value(sentence, "Gellen", lookup, ["Gellen River"]) == "Hosk River"


@pytest.mark.parametrize(
    "test",
    # By import path: orchestrator.checks re-exports the function ``decompose`` under the
    # module's own name, and the function alone would leave out hops_in_force's example.
    doctests([hops, graph_record, importlib.import_module("orchestrator.checks.decompose")]),
    ids=lambda test: test.name,
)
def test_the_hop_rules_examples_give_what_they_show(test: doctest.DocTest) -> None:
    if report := failures(test):
        pytest.fail(report, pytrace=False)
