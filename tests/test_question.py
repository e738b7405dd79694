"""Reading a question mechanically: its subject, what it asks, and the comparisons it makes."""

from __future__ import annotations

import doctest

import pytest
from docstrings import doctests, failures

from orchestrator.checks import question


def test_the_question_subject_is_its_names_and_numbers_else_its_content_words() -> None:
    assert question.subject_terms("Can server x9 be used for the nightly cron job?") == {"x9"}
    assert question.subject_terms("Who founded Embstone Foundry in 1934?") == {
        "embstone",
        "foundry",
        "1934",
    }
    assert question.subject_terms("is the nightly cron job allowed on weekends?") >= {"cron", "job"}


def test_the_kind_of_thing_asked_for_is_not_the_subject() -> None:
    # Any sentence about some river would name "river"; the brundrum is what must be reached.
    found = question.subject_terms(
        "On which river lies the town where the inventor of the brundrum was born?"
    )
    assert "river" not in found and "brundrum" in found
    assert "year" not in question.subject_terms("What year was the korhorn carved?")


def test_the_subject_comes_from_the_question_not_from_the_format_instruction_after_it() -> None:
    # "Answer" opens a sentence, so it looked like a name: every argument had to mention it,
    # and none could (logical_deduction items were all refused).
    newest = (
        "Which one is the newest: the minivan, the limousine, the sedan? Answer with the name only."
    )
    assert question.subject_terms(newest) >= {"newest", "minivan", "limousine", "sedan"}
    assert "answer" not in question.subject_terms(newest)
    assert "answer" not in question.subject_terms("How is Owen related to Susan? Provide one word.")
    assert question.subject_terms("Name the founder of Embstone Foundry") >= {"embstone", "foundry"}


def test_what_a_question_asks_about_its_names_is_its_other_words() -> None:
    assert question.relation_terms("Which town was settled earlier, Marrgard or Zarnmere?") == {
        "settl",
        "earlier",
    }
    assert question.relation_terms(
        "Which one finished third: Dan, Mel, Ana? Answer with the name."
    ) == {
        "finish",
        "third",
    }
    assert (
        question.relation_terms("Which one is the newest: the minivan, the sedan?") == frozenset()
    )
    # A comparative of a measured quality also asks for the quality, as evidence states it.
    longer = question.relation_terms("Which river is longer, the Arl River or the Kest River?")
    assert longer == {"longer", "long"}


def test_a_comparison_is_two_options_after_a_comparative() -> None:
    assert question.compared_options("Which town was settled earlier, Marrgard or Zarnmere?") == (
        frozenset({"marrgard"}),
        frozenset({"zarnmere"}),
    )
    paskham = question.compared_options(
        "Which company was founded earlier: the one that built the Paskham Bridge or the one "
        "that built the Bromgate Bridge?"
    )
    assert paskham == (frozenset({"paskham"}), frozenset({"bromgate"}))
    # A choice that compares nothing, or options listed without "or", is no comparison.
    assert question.compared_options("Was the bridge built by Amy or by Dan?") == ()
    assert question.compared_options("Which one finished third: Dan, Mel, Ana?") == ()


def test_a_comparison_knows_whether_the_smaller_number_wins() -> None:
    assert question.smaller_wins("Who was born earlier, Aldo Harnsen or Tamsin Morver?") is True
    assert (
        question.smaller_wins("Which river is longer, the Urra River or the Yssra River?") is False
    )
    # A comparative with no sure direction, or no comparison at all, says nothing.
    assert question.smaller_wins("Which parcel is lighter, the red one or the blue one?") is None
    assert question.smaller_wins("Was the bridge built by Amy or by Dan?") is None


def verify(claim: str, topic: str) -> str:
    """A claim-verification question as vitaminc asks it."""
    return (
        f'Claim: "{claim}" According to the passage about {topic}, is the claim true? Answer '
        'yes if the passage shows it is true, no if it shows it is false, or "unanswerable".'
    )


def test_a_quoted_statement_must_be_read_for_its_names_and_numbers_not_its_topic() -> None:
    # The topic "Catherine Hardwicke" is given by the question; "Fiona" must be read.
    born = "Catherine Hardwicke was born as Fiona Catherine Hardwicke ."
    assert question.stated_terms(verify(born, "X")) == {"catherine", "hardwicke", "fiona"}
    assert question.stated_terms(verify(born, "Catherine Hardwicke")) == {"fiona"}
    season = verify("The Patriots beat the Colts in a 2011 season match .", "2011 Patriots season")
    assert question.stated_terms(season) == {"colt"}


def test_a_number_after_a_bound_is_a_limit_not_a_value_to_find() -> None:
    sold = verify("INXS has sold more than 25 million units in the United States .", "INXS")
    assert "25" not in question.stated_terms(sold)
    reviews = verify("Less than 146 people reviewed it on Rotten Tomatoes .", "Film")
    assert question.stated_terms(reviews) == question.terms("Rotten Tomatoes")
    assert question.stated_terms(verify("Kuzma scored 24 points in one game .", "Kyle Kuzma")) == {
        "24"
    }


def test_a_statement_opens_on_a_capital_so_its_first_word_is_a_name_only_in_a_run() -> None:
    assert "more" not in question.stated_terms(
        verify("More than one judge joined the Supreme Court .", "X")
    )
    assert {"rachel", "riley"} <= question.stated_terms(
        verify("Rachel Riley joined Countdown at 22 .", "X")
    )


def test_accents_do_not_tell_names_apart() -> None:
    assert question.unaccented("Édouard Séguin") == "Edouard Seguin"
    assert question.stated_terms(
        verify("Edouard Seguin was employed in Spain .", "Édouard Séguin")
    ) == {"spain"}


def test_a_question_quoting_no_statement_states_nothing() -> None:
    assert (
        question.stated_terms("Which town was settled earlier, Marrgard or Zarnmere?")
        == frozenset()
    )
    # A quoted title of two words is no statement.
    assert question.stated_terms('Who directed "The Raven"?') == frozenset()
    # Only the question proper counts, not a quote in the format instruction after it.
    assert question.stated_terms('Is it raining? Answer "it is raining" or not.') == frozenset()


def test_a_question_asks_for_yes_or_no_only_when_its_last_sentence_opens_with_an_auxiliary() -> (
    None
):
    assert question.asks_yes_or_no("Does it logically follow that some cats are lions?") is True
    assert question.asks_yes_or_no("Can server x9 be used for the nightly cron job?") is True
    asked_for_a_thing = [
        "Git 2.25 gave it a command. In which Git release did that command learn 'add'?",
        "How many calories did he consume? Give a number.",
        "So who is a hero and who is a villain?",
        "What is Linda to Jayden?",
    ]
    assert [question.asks_yes_or_no(q) for q in asked_for_a_thing] == [False] * 4
    # Unclear openings, and yes/no offered as options, decide nothing.
    assert (
        question.asks_yes_or_no("If tea has 6 calories per ounce how many calories did he eat?")
        is None
    )
    assert question.asks_yes_or_no("Which is it: yes or no?") is None
    assert question.asks_yes_or_no("Claim: x. According to the passage, is the claim true?") is None


@pytest.mark.parametrize("test", doctests([question]), ids=lambda test: test.name)
def test_the_question_readers_examples_give_what_they_show(test: doctest.DocTest) -> None:
    if report := failures(test):
        pytest.fail(report, pytrace=False)
