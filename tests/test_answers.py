"""Short answers cluster by an exact normalised key, never by fuzzy similarity."""

from __future__ import annotations

import pytest
from hypothesis import assume, example, given
from hypothesis import strategies as st

from orchestrator.reply.answers import (
    UNANSWERABLE,
    answer_key,
    asked_category,
    is_entity,
    normalise_text,
    preferred_spelling,
    shorten_answer,
)


@pytest.mark.parametrize(
    ("spellings", "key"),
    [
        (["Yes", "yes.", "TRUE", "Yes, it does", "correct"], "yes"),
        (["No", "no!", "False", "incorrect"], "no"),
        (["Quelheim", "quelheim.", "The Quelheim", "  QUELHEIM ", "In Quelheim"], "quelheim"),
        (["1920", "in 1920"], "1920"),
        (["1,200", "1200", "1200.0", "$1,200"], "1200"),
        (["1,200 meters", "1200 m", "1200 metres"], "1200 m"),
        (["50%", "50 percent", "50 per cent"], "50 %"),
        (["seven", "7", "7.00"], "7"),
        (
            ["unknown", "Cannot be determined.", "Not enough information", "unanswerable"],
            UNANSWERABLE,
        ),
    ],
)
def test_spellings_of_one_answer_share_one_key(spellings: list[str], key: str) -> None:
    assert {answer_key(s) for s in spellings} == {key}


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Quelheim", "Quelmere"),
        ("Braskthorpe", "Braskmere"),
        ("1200", "1210"),
        ("-5", "5"),
        ("yes", "no"),
        ("Zürich", "Zurich"),
        ("Volen River", "Volen"),
        ("in", "on"),  # a one-word answer keeps its only word
    ],
)
def test_different_answers_never_share_a_key(a: str, b: str) -> None:
    assert answer_key(a) != answer_key(b)


def test_the_kind_of_thing_asked_for_is_folded_from_the_end_of_an_answer() -> None:
    category = asked_category("Into which river does the river crossed by the bridge flow?")
    assert category == {"river"}
    assert answer_key("Teven River", category) == answer_key("the Teven", category) == "teven"
    # Only at the end, never the whole answer, and never without the question's word.
    assert answer_key("River Teven", category) == "river teven"
    assert answer_key("River", category) == "river"
    assert answer_key("Teven River") == "teven river"


def test_the_shown_spelling_is_the_most_frequent_then_the_fullest_name() -> None:
    assert preferred_spelling(["Teven", "Teven River"]) == "Teven River"
    assert preferred_spelling(["In Quelheim", "Quelheim"]) == "In Quelheim"  # same key: first
    assert preferred_spelling(["Teven", "Teven River", "Teven"]) == "Teven"


def test_no_answer_has_the_empty_key() -> None:
    assert answer_key("") == answer_key("  ... ") == answer_key(None) == ""


def test_entities_are_names_not_numbers_yes_no_or_refusals() -> None:
    assert is_entity(answer_key("Volen River"))
    for answer in ("42", "1200 meters", "yes", "no", "unknown", ""):
        assert not is_entity(answer_key(answer))


def test_an_entity_key_is_found_in_text_normalised_the_same_way() -> None:
    assert (
        f" {answer_key('the Volen River')} " in f" {normalise_text('It lies on the Volen River.')} "
    )


@given(st.text(max_size=40))
@example("A:Y")  # an article dropped leaves a yes/no word
@example("the Unknown")  # ... or a refusal
def test_the_key_is_idempotent_and_total(text: str) -> None:
    key = answer_key(text)
    assert isinstance(key, str)
    assert answer_key(key) == key


@pytest.mark.parametrize(
    ("answer", "conclusion", "expected"),
    [
        ("Quelheim", None, ("Quelheim", "short")),
        (
            "Vennic-61 c Vennic-61 c, announced in 2017, is the innermos",
            "It is Vennic-61 c.",
            ("Vennic-61 c", "cut"),
        ),
        ("Yes, because the survey lists it as Linux", None, ("yes", "cut")),
        ("the evidence does not say where the founder was born", None, (None, "too_long")),
        (
            "not enough information to decide this question here",
            None,
            ("not enough information to decide this question here", "short"),
        ),
    ],
)
def test_a_long_answer_is_shortened(
    answer: str, conclusion: str | None, expected: tuple[str | None, str]
) -> None:
    evidence = [normalise_text("Vennic-61 c, announced in 2017, is the innermost planet.")]
    assert shorten_answer(answer, conclusion, evidence) == expected


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        # Two clauses, each naming someone: kept whole, each clause checked on its own.
        (
            "Aiden is a sinner, and Logan is a saint",
            ("Aiden is a sinner, and Logan is a saint", "short"),
        ),
        # Clauses that decide nothing are no compound answer, and half of one is no answer.
        ("Jack is a sage/fool, and Scarlett is a sage/fool", (None, "too_long")),
        ("Jack is a sage or a fool, and Scarlett is a sage", (None, "too_long")),
        ("Tamsin Ossick and Brisa Tarvelm founded the company", (None, "too_long")),
        # A run that keeps both coordinate names drops nothing that was named.
        (
            "Tamsin Ossick and Kestrel Morvick founded the company",
            ("Tamsin Ossick and Kestrel Morvick", "cut"),
        ),
        ("Aiden is a sinner; Logan is a saint", ("Aiden is a sinner; Logan is a saint", "short")),
        # Elaboration that names nothing of its own may still be cut away.
        ("Haskthorpe, which is small and old and cold", ("Haskthorpe", "cut")),
        ("Haskthorpe, a small town in the north", ("Haskthorpe", "cut")),  # not "Haskthorpe, a"
        ("Kestrel Morvick, born in the town of Haskthorpe", ("Kestrel Morvick", "cut")),
    ],
)
def test_a_cut_never_drops_a_coordinate_part_that_names_something(
    answer: str, expected: tuple[str | None, str]
) -> None:
    evidence = [
        normalise_text(text)
        for text in (
            "Logan said: Aiden is a sinner.",
            "Jack says that Scarlett lies.",
            "Tamsin Ossick and Kestrel Morvick founded the company.",
            "Haskthorpe is small. Kestrel Morvick was born in Haskthorpe.",
        )
    ]
    assert shorten_answer(answer, None, evidence) == expected


_NAME = st.from_regex(r"[A-Z][a-z]{2,8}", fullmatch=True)
_ROLES = ("knight", "knave", "saint", "sinner", "hero", "villain")
_ROLE = st.sampled_from(_ROLES)


@given(_NAME, _ROLE, _NAME, _ROLE, st.sampled_from([", and ", " and ", "; ", ", but "]))
def test_two_clauses_about_two_people_are_kept_whole_never_cut_to_one_of_them(
    first: str, first_role: str, second: str, second_role: str, joint: str
) -> None:
    # Names are names: not a role word of the other clause, not a pronoun ("They").
    ordinary = {*_ROLES, "she", "this", "that", "they", "yes", "the", "and", "but"}
    assume(first.lower() != second.lower() and not {first.lower(), second.lower()} & ordinary)
    answer = f"{first} is a {first_role}{joint}{second} is a {second_role}"
    # The evidence holds each clause on its own, as a quoted statement would.
    evidence = [
        normalise_text(f"{first} is a {first_role}."),
        normalise_text(f"{second} is a {second_role}."),
    ]
    assert shorten_answer(answer, None, evidence) == (answer, "short")
    swapped = f"{second} is a {second_role}, and {first} is a {first_role}."
    assert answer_key(swapped) == answer_key(answer) == answer_key(answer_key(answer))


@given(st.text(max_size=120), st.text(max_size=60))
def test_shortening_never_crashes_and_never_lengthens(answer: str, conclusion: str) -> None:
    short, form = shorten_answer(answer, conclusion, [normalise_text(conclusion)])
    assert form in ("short", "cut", "too_long")
    assert short is None or len(short) <= len(answer)
