"""A multi-hop question's plan read off its grammar (orchestrator.checks.decompose): each nested
description is one lookup, innermost first, with ``#k`` for an earlier answer."""

from __future__ import annotations

import pytest

from evals.datasets import load_dataset
from orchestrator.checks.decompose import decompose
from orchestrator.checks.hops import plan_problem


@pytest.mark.parametrize(
    ("question", "lookups"),
    [
        (
            "Who founded the company that built the Orrinmark Bridge?",
            ["Which company built the Orrinmark Bridge?", "Who founded #1?"],
        ),
        (
            "Into which river does the river crossed by the Tamarcrest Bridge flow?",
            ["Which river is crossed by the Tamarcrest Bridge?", "Into which river does #1 flow?"],
        ),
        (
            "On which river lies the town where the inventor of the brundrum was born?",
            [
                "Who or what is the inventor of the brundrum?",
                "In which town was #1 born?",
                "On which river lies #2?",
            ],
        ),
        (
            "Which company was founded earlier: the one that built the Kest Bridge or the one "
            "that built the Pask Bridge?",
            [
                "Which company built the Kest Bridge?",
                "When was #1 founded?",
                "Which company built the Pask Bridge?",
                "When was #3 founded?",
            ],
        ),
        (
            "Which river is longer, the Elvey River or the Elvra River?",
            ["How long is the Elvey River?", "How long is the Elvra River?"],
        ),
        (
            "Who directed the film that won the Veldt Prize?",
            ["Which film won the Veldt Prize?", "Who directed #1?"],
        ),
    ],
)
def test_nested_descriptions_unwind_innermost_first(question: str, lookups: list[str]) -> None:
    assert decompose(question) == lookups


@pytest.mark.parametrize(
    "question",
    [
        "What is the capital of Norway?",  # one fact: no plan to read
        "Was the db-2 primary patched?",
        "Is the following claim true?",
        "",
    ],
)
def test_a_question_of_one_fact_or_another_grammar_has_no_plan(question: str) -> None:
    assert decompose(question) is None


@pytest.mark.parametrize(
    "question",
    [  # the outside_docs questions whose plans were "Which feature got a?" and the like
        "In which Git release was the non-cone mode deprecated for the feature that got a "
        "dedicated command in Git 2.25?",
        "Git 2.25 gave the management of sparsely checked-out working trees a dedicated "
        "command. In which Git release did that command learn an 'add' subcommand?",
        "Node.js deprecation DEP0005 lists the methods to use instead of the Buffer() "
        "constructor. In which version was the first of them added?",
    ],
)
def test_a_description_whose_object_is_a_lower_case_word_without_the_is_no_lookup(
    question: str,
) -> None:
    assert decompose(question) is None


@pytest.mark.parametrize(
    "question",
    [  # math-0063 and vitaminc-21745: "the cost of the field" and "the community of Rochester"
        "James is raising money for a field trip. The charity will cover 1/2 of the cost of the "
        "field trip. How much money is James missing if he has $145 and the trip costs $910?",
        'Claim: "Brue Coffee shop is one of the establishments in the community of Rochester, '
        'New York." According to the passage about Rochester, is the claim true?',
    ],
)
def test_a_question_of_several_sentences_is_not_unwound_its_first_ones_set_the_scene(
    question: str,
) -> None:
    assert decompose(question) is None


def test_no_word_problem_or_claim_of_the_shipped_sets_is_unwound() -> None:
    """Before the one-sentence rule, 19 math items and 1 vitaminc item were read as hop
    questions ("Who or what is the end of the summer?")."""
    for dataset in ("math", "vitaminc"):
        assert [item["id"] for item in load_dataset(dataset) if decompose(item["question"])] == []


@pytest.mark.parametrize("dataset", ["multihop", "prose"])
def test_every_generated_question_unwinds_into_a_plan_the_plan_check_accepts(
    dataset: str,
) -> None:
    """An independent check of the reading: the hop rules (orchestrator.checks.hops.plan_problem)
    accept every plan, and each has as many lookups as the question has hops."""
    for item in load_dataset(dataset):
        lookups = decompose(item["question"])
        assert lookups is not None, item["question"]
        assert plan_problem(lookups, item["question"]) is None, (item["question"], lookups)
        assert len(lookups) >= item["meta"]["hops"], (item["question"], lookups)
