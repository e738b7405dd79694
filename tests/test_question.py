"""Reading a question mechanically: its subject, what it asks, and the comparisons it makes."""

from __future__ import annotations

from orchestrator.question import compared_options, relation_terms, smaller_wins, subject_terms


def test_the_question_subject_is_its_names_and_numbers_else_its_content_words() -> None:
    assert subject_terms("Can server x9 be used for the nightly cron job?") == {"x9"}
    assert subject_terms("Who founded Embstone Foundry in 1934?") == {
        "embstone",
        "foundry",
        "1934",
    }
    assert subject_terms("is the nightly cron job allowed on weekends?") >= {"cron", "job"}


def test_the_kind_of_thing_asked_for_is_not_the_subject() -> None:
    # Any sentence about some river would name "river"; the brundrum is what must be reached.
    found = subject_terms(
        "On which river lies the town where the inventor of the brundrum was born?"
    )
    assert "river" not in found and "brundrum" in found
    assert "year" not in subject_terms("What year was the korhorn carved?")


def test_the_subject_comes_from_the_question_not_from_the_format_instruction_after_it() -> None:
    # "Answer" opens a sentence, so it looked like a name: every argument had to mention it,
    # and none could (logical_deduction items were all refused).
    newest = (
        "Which one is the newest: the minivan, the limousine, the sedan? Answer with the name only."
    )
    assert subject_terms(newest) >= {"newest", "minivan", "limousine", "sedan"}
    assert "answer" not in subject_terms(newest)
    assert "answer" not in subject_terms("How is Owen related to Susan? Provide one word.")
    assert subject_terms("Name the founder of Embstone Foundry") >= {"embstone", "foundry"}


def test_what_a_question_asks_about_its_names_is_its_other_words() -> None:
    assert relation_terms("Which town was settled earlier, Marrgard or Zarnmere?") == {
        "settl",
        "earlier",
    }
    assert relation_terms("Which one finished third: Dan, Mel, Ana? Answer with the name.") == {
        "finish",
        "third",
    }
    assert relation_terms("Which one is the newest: the minivan, the sedan?") == frozenset()


def test_a_comparison_is_two_options_after_a_comparative() -> None:
    assert compared_options("Which town was settled earlier, Marrgard or Zarnmere?") == (
        {"marrgard"},
        {"zarnmere"},
    )
    paskham = compared_options(
        "Which company was founded earlier: the one that built the Paskham Bridge or the one "
        "that built the Bromgate Bridge?"
    )
    assert paskham == ({"paskham"}, {"bromgate"})
    # A choice that compares nothing, or options listed without "or", is no comparison.
    assert compared_options("Was the bridge built by Amy or by Dan?") == ()
    assert compared_options("Which one finished third: Dan, Mel, Ana?") == ()


def test_a_comparison_knows_whether_the_smaller_number_wins() -> None:
    assert smaller_wins("Who was born earlier, Aldo Harnsen or Tamsin Morver?") is True
    assert smaller_wins("Which river is longer, the Urra River or the Yssra River?") is False
    # A comparative with no sure direction, or no comparison at all, says nothing.
    assert smaller_wins("Which parcel is lighter, the red one or the blue one?") is None
    assert smaller_wins("Was the bridge built by Amy or by Dan?") is None
