"""Scoring: number extraction, math exact match, SQuAD-style EM / F1 and the `score` entry point."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evals.score import (
    answer_span,
    exact_match,
    extract_number,
    math_correct,
    score,
    token_f1,
)
from orchestrator.reply import normalize_answer


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("She pays 1,250 dollars in total.", "1250"),
        ("That is 12,345,678 grains.", "12345678"),
        ("It costs $18.", "18"),
        ("It costs \u20ac7.50 per kilo.", "7.5"),
        ("He walks 42km a day.", "42"),
        ("A rise of 15%.", "15"),
        ("Step one: 3 + 4 = 7.\n#### 72", "72"),
        ("#### 1,000", "1000"),
        (r"So the total is \boxed{36}.", "36"),
        (r"\boxed{\$1,200.00} and later 5", "1200"),
        (r"\boxed{x = \frac{1}{2} \text{ or } 9}", "9"),
        ("3 apples and 4 pears, so the answer is 7 fruits, not 9.", "7"),
        ("Final answer: 18", "18"),
        ("**Answer:** -12", "-12"),
        ("The temperature fell to -4 degrees overnight.", "-4"),
        ("The balance is \u22123.", "-3"),
        ("She owes -$5 after paying $-2 twice.", "-2"),
        ("He needs 2.50 liters.", "2.5"),
        ("The answer is 5.0", "5"),
        ("The answer is 0.0", "0"),
        ("The answer is .75", "0.75"),
        ("First 10, then 20, finally 30", "30"),
        ("Pages 3-4 were torn.", "4"),
        ("The answer is 100.", "100"),
        ("1,2345", "2345"),
        ("no digits here", None),
        ("", None),
        (None, None),
    ],
)
def test_extract_number_reads_the_final_answer(text: str | None, expected: str | None) -> None:
    assert extract_number(text) == expected


def test_marker_without_number_falls_back_to_the_last_number() -> None:
    assert extract_number("We have 4 boxes of 6. The answer is twenty-four") == "6"


def test_boxed_without_number_falls_back_to_later_rules() -> None:
    assert extract_number(r"\boxed{none} but the answer is 8") == "8"


def test_unclosed_boxed_is_ignored() -> None:
    assert extract_number(r"3 and \boxed{4") == "4"


@given(st.integers(min_value=-(10**12), max_value=10**12))
def test_integers_survive_thousands_separators(number: int) -> None:
    assert extract_number(f"the total is {number:,}") == str(number)


@given(st.decimals(min_value=-1000, max_value=1000, places=3, allow_nan=False))
def test_decimals_compare_equal_to_themselves_with_trailing_zeros(value: object) -> None:
    assert math_correct(f"answer: {value}0", str(value))


@pytest.mark.parametrize(
    ("prediction", "gold", "expected"),
    [
        ("The answer is 5.0", "5", True),
        ("So he pays $1,250.", "1250", True),
        ("#### 72", "72", True),
        ("It is 71.", "72", False),
        ("It is -5.", "5", False),
        ("I cannot tell.", "5", False),
        (None, "5", False),
        ("The answer is 1,000", "#### 1,000", True),
    ],
)
def test_math_correct_compares_final_numbers_exactly(
    prediction: str | None, gold: str, expected: bool
) -> None:
    assert math_correct(prediction, gold) is expected


def test_math_gold_without_a_number_is_a_dataset_error() -> None:
    with pytest.raises(ValueError, match="gold answer 'seven' contains no number"):
        math_correct("7", "seven")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The Eiffel Tower!", "eiffel tower"),
        ("  a   Tale of  an Apple ", "tale of apple"),
        ("Theatre", "theatre"),
        ("U.S.A.", "usa"),
        ("", ""),
    ],
)
def test_normalize_answer_follows_squad_rules(text: str, expected: str) -> None:
    assert normalize_answer(text) == expected


def test_exact_match_ignores_case_punctuation_and_articles() -> None:
    assert exact_match("the Quelmere.", "Quelmere") == 1.0
    assert exact_match("Quelmere town", "Quelmere") == 0.0


def test_token_f1_is_the_harmonic_mean_of_token_precision_and_recall() -> None:
    # prediction tokens: elvra, river, delta (3); gold: elvra, river (2); overlap 2
    precision, recall = 2 / 3, 2 / 2
    expected = 2 * precision * recall / (precision + recall)
    assert token_f1("the Elvra River delta", "Elvra River") == pytest.approx(expected)


def test_token_f1_counts_repeated_tokens_only_as_often_as_gold_has_them() -> None:
    assert token_f1("river river", "river") == pytest.approx(2 * 0.5 * 1 / 1.5)


def test_token_f1_of_empty_answers() -> None:
    assert token_f1("", "") == 1.0
    assert token_f1("the", "Quelmere") == 0.0
    assert token_f1("Quelmere", "Brask") == 0.0


def test_answer_span_takes_the_text_after_the_last_marker() -> None:
    text = "The founder was born somewhere.\nFinal answer: **Quelmere**.\n"
    assert answer_span(text) == "Quelmere"
    assert answer_span("  Quelmere \n") == "Quelmere"


def _qa_item(answer: str, aliases: list[str] | None = None) -> dict[str, object]:
    return {"id": "q1", "kind": "qa", "answer": answer, "answer_aliases": aliases or []}


def test_score_qa_uses_the_best_of_answer_and_aliases() -> None:
    result = score(_qa_item("Elvra River", ["Elvra"]), "Reasoning...\nAnswer: Elvra")
    assert result == {
        "correct": True,
        "em": 1.0,
        "f1": 1.0,
        "extracted": "Elvra",
        "contains": 1.0,
    }


def test_score_qa_sentence_answer_gets_partial_credit_but_is_not_correct() -> None:
    result = score(_qa_item("Quelmere"), "The founder was born in Quelmere.")
    assert result["correct"] is False
    assert result["em"] == 0.0
    assert 0.0 < result["f1"] < 1.0
    assert result["contains"] == 1.0


def test_score_treats_a_refusal_as_wrong() -> None:
    assert score(_qa_item("Quelmere"), None) == {
        "correct": False,
        "em": 0.0,
        "f1": 0.0,
        "extracted": None,
        "contains": 0.0,
    }
    math = score({"id": "m1", "kind": "math", "answer": "7"}, None)
    assert math["correct"] is False and math["extracted"] is None


def test_score_math_reports_the_extracted_number() -> None:
    result = score({"id": "m1", "kind": "math", "answer": "1250"}, "Total: $1,250.00")
    assert result == {"correct": True, "em": 1.0, "f1": 1.0, "extracted": "1250", "contains": 1.0}


def test_score_rejects_malformed_items_naming_the_field() -> None:
    with pytest.raises(ValueError, match="field 'kind'"):
        score({"id": "x", "kind": "poetry", "answer": "a"}, "a")
    with pytest.raises(ValueError, match="field 'answer'"):
        score({"id": "x", "kind": "qa", "answer": None}, "a")
