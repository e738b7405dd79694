"""Equations a claim writes out are checked by evaluating them (orchestrator.checks.arithmetic)."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from orchestrator.checks.arithmetic import equations, false_equation
from orchestrator.checks.chain import ChainContext


def test_a_false_sum_is_caught_and_its_true_value_named() -> None:
    step = "The total number of slices eaten is 25 + 9 + 13 = 57 slices"
    assert false_equation(step) == "25 + 9 + 13 = 57 (it is 47)"
    assert false_equation("The total is 25 + 9 + 13 = 47 slices.") is None


def test_precedence_and_parentheses_are_those_of_arithmetic() -> None:
    assert false_equation("there are 17 + 7 * 2 = 31 people") is None
    assert false_equation("there are 17 + 7 * 2 = 48 people") == "17 + 7 * 2 = 48 (it is 31)"
    assert false_equation("The combined total is 28 + (83 - 47) = 60.") is not None
    assert false_equation("(so 2 * (3 + 1) = 8)") is None


def test_a_rounded_result_holds_to_half_a_unit_of_its_last_place() -> None:
    assert false_equation("100 / 3 = 33.3") is None
    assert false_equation("100 / 3 = 33") is None
    assert false_equation("100 / 3 = 34") == "100 / 3 = 34 (it is 33.333)"


def test_currency_thousands_and_times_signs_are_read() -> None:
    assert equations("He has $1,790 + $10 = $1,800 left.")[0][:2] == ("1790 + 10", "1800")
    assert false_equation("4 x 5 = 20 and 3 × 3 = 10") == "3 * 3 = 10 (it is 9)"
    assert false_equation("60 ÷ 4 = 15") is None


def test_latex_working_is_read_as_the_arithmetic_it_writes() -> None:
    assert false_equation(r"\( 248 \times 3 = 744 \)") is None
    assert false_equation(r"25 + (0.76 \times 25) = 25 + 19 = 44") is None
    assert false_equation(r"\(4 \times 102 = 408 \text{ eggs}\)") is None
    assert false_equation(r"380{,}000 \times 0.04 = 15{,}200") is None
    percent = r"\left( \frac{300}{1500} \right) \times 100 = \frac{2}{10} \times 100 = 20\%"
    assert false_equation(percent) is None
    assert false_equation(r"\[ \frac{1}{4} \times 92 = 24 \]") == "((1) / (4)) * 92 = 24 (it is 23)"
    assert false_equation(r"6 \cdot 7 = 43") == "6 * 7 = 43 (it is 42)"
    assert false_equation(r"90 \div 4 = 20") == "90 / 4 = 20 (it is 22.5)"


def test_a_calculation_told_in_words_is_not_cut_to_its_last_number() -> None:
    # "1/4 of 248 = 62" is not the false "248 = 62"; the words between hide the operation.
    for text in ["1/4 of 248 = 62", "6 times 6 = 36", "half of 90 = 45"]:
        assert false_equation(text) is None, text
    assert false_equation("Step 2: 62 + 1 = 64") == "62 + 1 = 64 (it is 63)"


def test_algebra_percentages_and_prose_are_no_arithmetic() -> None:
    # A letter or a % glued to a side makes it something else than a calculation.
    for text in [
        "Then we have 11 - (x + 3) = 2x.",
        "109 / 457 = 23.85%",
        "A330 + 5 = 12",
        "price = 12",
        "Version 2.0 = stable",
        "10 ÷ 0 = 3",
        "2 ** 3 = 9",
    ]:
        assert false_equation(text) is None, text
    # A variable's definition yields only the equation between numbers.
    assert [(a, b) for a, b, _, _ in equations("so x = 2 * 3 = 6.")] == [("2 * 3", "6")]


def test_an_argument_with_a_false_equation_does_not_count() -> None:
    question = "Ava sliced a kiwi into 25 pieces. She ate 3 ... How many slices were left?"
    context = ChainContext.of(question, ["Ava sliced a kiwi into 25 pieces."])
    wrong = ["Ava sliced a kiwi into 25 pieces.", "Ava and her friends ate 3 + 9 + 13 = 24 slices"]
    assert context.argument_problem("1", wrong) == "false_arithmetic"
    right = [wrong[0], "Ava and her friends ate 3 + 9 + 13 = 25 slices", "25 - 25 = 0 were left"]
    assert context.argument_problem("0", right) is None
    # Rule 8 still holds: an argument that never reaches the answer does not count.
    assert context.argument_problem("0", right[:2]) == "answer_not_on_argument"


EXPRESSIONS = st.recursive(
    st.integers(min_value=0, max_value=999).map(str),
    lambda inner: st.tuples(inner, st.sampled_from("+-*/"), inner).map(
        lambda t: f"({t[0]} {t[1]} {t[2]})"
    ),
    max_leaves=6,
)


def exact(expression: str) -> Fraction | None:
    """An independent evaluation: Python on exact fractions (None on division by zero)."""
    try:
        value = eval(expression.replace("/", "*Fraction(1)/"), {"Fraction": Fraction})
    except ZeroDivisionError:
        return None
    return Fraction(value)


@settings(max_examples=300, deadline=None)
@given(EXPRESSIONS)
def test_an_equation_holds_exactly_when_python_agrees(expression: str) -> None:
    value = exact(expression)
    if value is None or value.denominator != 1:
        return
    written = f"So the result is {expression} = {value.numerator} items."
    assert false_equation(written) is None
    wrong = f"So the result is {expression} = {value.numerator + 1} items."
    # A lone number after a word ends a calculation told in words, which is not read.
    assert (false_equation(wrong) is None) == expression.isdigit()


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80))
def test_any_text_is_read_without_crashing(text: str) -> None:
    found = false_equation(text)
    assert found is None or found.endswith(")")


def test_two_expressions_are_equal_up_to_the_rounding_of_a_division() -> None:
    assert false_equation("1/3 + 1/3 = 2/3") is None
    assert false_equation("1/3 + 1/3 = 3/4") == "1/3 + 1/3 = 3/4 (the sides are 0.667 and 0.75)"
    assert false_equation("9 = 2 + 3") == "9 = 2 + 3 (it is 5)"


def test_hostile_sides_are_no_arithmetic_and_cost_little() -> None:
    # Too long or too deep to be a reasoning step's calculation: skipped, never a crash.
    assert false_equation("(" * 1000 + "1" + ")" * 1000 + " = 2") is None
    assert false_equation("1 + " * 2000 + "1 = 5") is None
    assert false_equation("1 = " * 1500) is None
    # Within the bound, a long sum is still checked.
    assert false_equation("1 + " * 40 + "1 = 40") is not None


def test_a_latex_unit_after_a_number_stands_for_nothing_in_the_arithmetic() -> None:
    # The units sat between the numbers and the operators; read as words they hid the
    # calculation or, worse, cut it into a false one.
    assert false_equation(r"\[ 2 \text{ cycles} \times 497 \text{ minutes/cycle} = 994 \]") is None
    assert false_equation(r"\frac{768 \text{ eggs}}{12 \text{ eggs/dozen}} = 64") is None
    chained = r"\(6 \text{ (initial)} + 6 \times 6 = 6 + 36 = 42\)"
    assert [(a, b) for a, b, _, _ in equations(chained)] == [
        ("6 + 6 * 6", "6 + 36"),
        ("6 + 36", "42"),
    ]
    assert false_equation(r"\(3 \text{ packs} \times 10 = 40\)") == "3 * 10 = 40 (it is 30)"


def test_a_percentage_result_reads_as_percent_or_as_fraction_whichever_the_left_side_is() -> None:
    assert [(b, v) for _, b, _, v in equations("(300 / 1500) * 100 = 20%")] == [("20", Decimal(20))]
    assert [(b, v) for _, b, _, v in equations("300 / 1500 = 20%")] == [("0.2", Decimal("0.2"))]
    assert false_equation("300 / 1500 = 25%") == "300 / 1500 = 0.25 (it is 0.2)"
    assert false_equation("109 / 457 = 23.85%") is None
    assert equations("12 = 25%s") == []
