"""Equations a claim writes out, and whether they hold.

A model's reasoning step "the total is 25 + 9 + 13 = 57 slices" states something a machine can
check: 25 + 9 + 13 is 47. The chain check (:mod:`orchestrator.checks.chain`) refuses an argument
that holds such a false equation, whatever else it gets right.

An equation is two sides joined by ``=``, each side a number or an arithmetic expression of
numbers: ``+ - * / × ÷``, ``x`` between two numbers, parentheses, currency signs before a
number and thousands separators. A side with anything else (a letter, a ``%``) is not
arithmetic, so "x = 2 * 3 = 6" yields one equation, "2 * 3 = 6". Expressions are evaluated
with the usual precedence (``*`` and ``/`` before ``+`` and ``-``), in exact decimals.

Small models write much of their working in LaTeX (``\\( 248 \\times \\frac{3}{4} = 186 \\)``),
so its operators, fractions, delimiters and ``\\text{...}`` units are read as the plain
arithmetic they stand for. A lone number written right after a word ("1/4 of 248 = 62",
"6 times 6 = 36") is the end of a calculation told in words, which this reader cannot
evaluate: it is not taken as the whole left side, because "248 = 62" would be a false
equation the model never wrote.

All functions are pure and deterministic.
"""

from __future__ import annotations

import ast
import functools
import itertools
import operator
import re
from collections.abc import Callable
from decimal import Decimal, DivisionByZero, InvalidOperation

_HEAD = re.compile(r"\s*[\d.()+\-*/][\d\s.()+\-*/]*")
_TAIL = re.compile(r"[\d\s.()+\-*/]*[\d.()]\s*$")
"""The characters of a side once normalised (:func:`_normalised`): digits, points, operators,
parentheses and spaces."""
_TIMES = re.compile(r"(?<=[\d)])\s*[x×]\s*(?=[\d(])")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_CURRENCY = re.compile(r"[$€£¥](?=\s*[\d(])")
_LATEX_FRACTION = re.compile(r"\\[dt]?frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}")
_LATEX_TEXT = re.compile(r"\\(?:text|mathrm|textbf|mbox)\s*\{([^{}]*)\}")
_LATEX_TIMES = re.compile(r"\\(?:times|cdot|ast)(?![A-Za-z])")
_LATEX_DIVIDE = re.compile(r"\\div(?![A-Za-z])")
_LATEX_MARKUP = (
    (re.compile(r"\\(?:left|right|big|Big)(?=[()])"), ""),
    (re.compile(r"\\[()\[\]]"), " "),
    (re.compile(r"\{,\}"), ","),
    (re.compile(r"\\([$%])"), r"\1"),
)
_LATEX_SYMBOLS = ((_LATEX_TIMES, " * "), (_LATEX_DIVIDE, " / "), *_LATEX_MARKUP)
"""LaTeX for the arithmetic above: ``\\times`` and ``\\cdot`` multiply, ``\\div`` divides,
``\\left(`` is a parenthesis, ``\\(`` and ``\\[`` only delimit, ``{,}`` separates
thousands, ``\\%`` is a percent sign."""
_LATEX_UNIT = re.compile(r"(?<=[\d)}])\s*\\(?:text|mathrm|mbox)\s*\{[^{}\d]*\}")
"""``\\text{...}`` right after a number: a unit ("4 \\text{ eggs/day} \\times 102"), which
stands for nothing in the arithmetic, whatever words or slashes it holds."""
_PERCENT_RESULT = re.compile(r"\s*(-?\d+(?:\.\d+)?)\s*%")
"""A percentage written as an equation's result (:func:`_percent_result`)."""
_WORD_BEFORE = re.compile(r"[A-Za-z]\s*$")
_NUMBER = re.compile(r"(?<![\d.])\d+(?:\.\d+)?")
MAX_SIDE_CHARS = 200
"""A longer side is no calculation a reasoning step writes out; the bound keeps the work per
``=`` constant and the expression shallow enough to evaluate."""
EXACT_PLACES = 9
"""The precision an expression side is held to: exact decimals, less the rounding of a
division (1/3 + 1/3 and 2/3 differ in the 28th place)."""
_OPERATORS: dict[type[ast.operator], Callable[[Decimal, Decimal], Decimal]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
}


def equations(text: str) -> list[tuple[str, str, Decimal, Decimal]]:
    """The equations ``text`` writes out: (left side, right side, left value, right value)
    for each ``=`` whose two neighbouring sides are both arithmetic (module docstring); a side
    reaches from the ``=`` to the previous or next ``=``, or to the nearest character that is
    no part of arithmetic. Sides that cannot be evaluated (division by zero, a malformed
    number) are skipped. O(len(text))."""
    found = []
    pieces = _normalised(text).split("=")
    for before, after in itertools.pairwise(pieces):
        left, right = _tail(before), _head(after)
        values = _value(left), _value(right)
        if values[0] is not None and values[1] is None:
            right, values = _percent_result(after, values[0])
        if left and right and values[0] is not None and values[1] is not None:
            found.append((left, right, values[0], values[1]))
    return found


def _percent_result(after: str, left: Decimal) -> tuple[str, tuple[Decimal, Decimal | None]]:
    """The right side ``after`` an ``=`` when it is a percentage alone ("= 25%"), and its
    value: models write "(360 / 1440) * 100 = 25%" and "360 / 1440 = 25%" alike, so the
    percentage reads as its number of percent when ``left`` is that number, else as its
    fraction (0.25), and the side is written as that reading ("25", "0.25"), so that a
    result's precision is judged in the same unit. ``("", (left, None))`` when ``after``
    opens with no percentage."""
    match = _PERCENT_RESULT.match(after)
    if match is None or (match.end() < len(after) and after[match.end()].isalnum()):
        return "", (left, None)
    percent = Decimal(match.group(1))
    if abs(left - percent) <= _tolerance(_places(match.group(1))):
        return match.group(1), (left, percent)
    return _plain_exact(percent / 100), (left, percent / 100)


# The chain check asks this of each claim once per argument the claim is part of, and the
# argument search meets the same claim in many: a small bounded cache keeps that one parse.
@functools.lru_cache(maxsize=4096)
def false_equation(text: str) -> str | None:
    """The first equation of ``text`` whose sides differ by more than the rounding of a
    written result allows ("25 + 9 + 13 = 57" -> ``"25 + 9 + 13 = 57 (it is 47)"``), or None
    when every equation holds. A result written with d decimal places may be off by half a
    unit of the last place: "100 / 3 = 33.3" and "100 / 3 = 33" hold, "100 / 3 = 34" does
    not. O(len(text))."""
    for left, right, left_value, right_value in equations(text):
        if abs(left_value - right_value) > _tolerance(min(_places(left), _places(right))):
            if _is_number(right) or _is_number(left):
                actual = left_value if _is_number(right) else right_value
                return f"{left} = {right} (it is {_plain(actual)})"
            sides = f"{_plain(left_value)} and {_plain(right_value)}"
            return f"{left} = {right} (the sides are {sides})"
    return None


def side_numbers(side: str) -> tuple[list[Decimal], list[Decimal]]:
    """(the numbers ``side`` starts from, the values it computes on the way) for one side of
    an equation as :func:`equations` returns it: "25 + (0.76 * 25)" starts from 25, 0.76 and
    25 and computes 19 and 44. A signed number ("-996") is one number. Both empty when the
    side is no arithmetic. O(len(side))."""
    leaves: list[Decimal] = []
    computed: list[Decimal] = []
    try:
        _evaluate(ast.parse(side, mode="eval").body, (leaves, computed))
    except (SyntaxError, RecursionError, MemoryError, InvalidOperation, DivisionByZero, ValueError):
        return [], []
    return leaves, computed


def normalised_numbers(text: str) -> list[Decimal]:
    """The numbers of ``text`` as the equations read them (thousands separators and currency
    signs dropped, LaTeX read): "$380,000 and 4%" -> 380000, 4. O(len(text))."""
    return [Decimal(match) for match in _NUMBER.findall(_normalised(text))]


def _normalised(text: str) -> str:
    text = _delatexed(text)
    text = _THOUSANDS.sub("", text)
    text = _CURRENCY.sub("", text)
    return _TIMES.sub(" * ", text).replace("÷", "/").replace("−", "-")


def _delatexed(text: str) -> str:
    """``text`` with its LaTeX arithmetic written plainly: a fraction ``\\frac{a}{b}``
    becomes ``((a) / (b))``, ``\\text{ eggs}`` its words, and each symbol of
    :data:`_LATEX_SYMBOLS` its plain form."""
    if "\\" not in text and "{," not in text:
        return text
    text = _LATEX_UNIT.sub(" ", text)
    text = _LATEX_TEXT.sub(r" \1 ", text)
    text = _LATEX_FRACTION.sub(r"((\1) / (\2))", text)
    for pattern, plain in _LATEX_SYMBOLS:
        text = pattern.sub(plain, text)
    return re.sub(r"[ \t]+", " ", text)


_LATEX_SPOKEN = (
    (_LATEX_TIMES, " × "),
    (_LATEX_DIVIDE, " ÷ "),
    *_LATEX_MARKUP,
    (re.compile(r"_\{([^{}]*)\}"), r"_\1"),
)
""":data:`_LATEX_SYMBOLS` as a reader writes them (``×`` and ``÷`` for the operators), and a
subscript ``t_{total}`` as ``t_total``."""


def readable_latex(text: str) -> str:
    r"""``text`` with its LaTeX written as plain text for a person to read: ``\text{ yards}``
    as its words (units kept, unlike the arithmetic's reading), ``\frac{a}{b}`` as
    ``a / b`` (each side in parentheses when it holds more than one word or number), the
    operators as ``×`` and ``÷``, delimiters and sizing commands left out.

    Only for display: the checks read the text as the model wrote it.

    >>> readable_latex(r"\( t_{\text{slide}} = \frac{360 \text{ yards}}{60} = 6 \text{ min} \)")
    't_slide = (360 yards) / 60 = 6 min'
    >>> readable_latex("3 * 4 = 12")
    '3 * 4 = 12'
    """
    if "\\" not in text and "{," not in text:
        return text
    text = _LATEX_TEXT.sub(r"\1", text)
    text = _LATEX_FRACTION.sub(lambda m: f"{_grouped(m[1])} / {_grouped(m[2])}", text)
    for pattern, plain in _LATEX_SPOKEN:
        text = pattern.sub(plain, text)
    return " ".join(text.split())


def _grouped(side: str) -> str:
    """``side`` of a fraction, in parentheses when it is more than one word or number."""
    side = " ".join(side.split())
    return f"({side})" if " " in side else side


def _tail(piece: str) -> str:
    """The arithmetic at the end of ``piece`` (the text before an ``=``); "" when a word or
    a ``%`` is glued to it ("2x + 3", "A330 + 5", "50%") or it is longer than
    :data:`MAX_SIDE_CHARS`."""
    window = piece[-MAX_SIDE_CHARS:]
    match = _TAIL.search(window)
    if not match or (match.start() == 0 and len(piece) > MAX_SIDE_CHARS):
        return ""
    side = match.group().strip().lstrip("+*/)")
    start = match.start() + (len(match.group()) - len(match.group().lstrip()))
    if start > 0 and (window[start - 1].isalnum() or window[start - 1] == "%"):
        return ""
    if _is_number(side) and _WORD_BEFORE.search(window[:start]):
        return ""
    return _balanced(side)


def _head(piece: str) -> str:
    """The arithmetic at the start of ``piece`` (the text after an ``=``); "" when a word or
    a ``%`` is glued to it ("2x", "23.85%") or it is longer than :data:`MAX_SIDE_CHARS`."""
    window = piece[:MAX_SIDE_CHARS]
    match = _HEAD.match(window)
    if not match or (match.end() == len(window) and len(piece) > MAX_SIDE_CHARS):
        return ""
    side = match.group().strip().rstrip(".(+-*/ ")
    end = len(piece) - len(piece[match.start() :].lstrip()) + len(side)
    if end < len(piece) and (piece[end].isalnum() or piece[end] == "%"):
        return ""
    return _balanced(side)


def _balanced(side: str) -> str:
    """``side`` less a parenthesis of the prose around it ("(the total is 5 + 3 = 8)"), when
    its parentheses then pair up and it holds a digit; else ""."""
    while side.endswith(")") and side.count(")") > side.count("("):
        side = side[:-1].rstrip()
    while side.startswith("(") and side.count("(") > side.count(")"):
        side = side[1:].lstrip()
    depth = 0
    for char in side:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth < 0:
            return ""
    return side if depth == 0 and any(char.isdigit() for char in side) else ""


def _value(side: str) -> Decimal | None:
    """``side`` evaluated exactly, or None when it is not a well-formed expression."""
    if not side:
        return None
    try:
        return _evaluate(ast.parse(side, mode="eval").body)
    # A side is at most MAX_SIDE_CHARS long, but 100 nested parentheses are still no
    # arithmetic worth a crash.
    except (SyntaxError, RecursionError, MemoryError, InvalidOperation, DivisionByZero, ValueError):
        return None


def _evaluate(node: ast.expr, trace: tuple[list[Decimal], list[Decimal]] | None = None) -> Decimal:
    """``node``'s value; with ``trace``, each number it starts from (a signed one whole) is
    appended to ``trace[0]`` and each operation's value to ``trace[1]``."""
    # Only numbers and the four operations: anything else is no arithmetic (ValueError).
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        left, right = _evaluate(node.left, trace), _evaluate(node.right, trace)
        if isinstance(node.op, ast.Div) and right == 0:
            raise DivisionByZero("division by zero")
        value = _OPERATORS[type(node.op)](left, right)
        if trace is not None:
            trace[1].append(value)
        return value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        if not isinstance(node.operand, ast.Constant):
            value = _evaluate(node.operand, trace)
            return -value if isinstance(node.op, ast.USub) else value
        value = _evaluate(node.operand)
        value = -value if isinstance(node.op, ast.USub) else value
    elif isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        if isinstance(node.value, bool):
            raise ValueError("not a number")
        value = Decimal(str(node.value))
    else:
        raise ValueError("not arithmetic")
    if trace is not None:
        trace[0].append(value)
    return value


def _tolerance(places: int) -> Decimal:
    """Half a unit of the last of ``places`` decimals: how far a written result may be off."""
    return Decimal(5) * Decimal(10) ** -(places + 1)


def _is_number(side: str) -> bool:
    return re.fullmatch(r"-?\d+(?:\.\d+)?", side.replace(" ", "")) is not None


def _places(side: str) -> int:
    """Decimal places of a lone number (a written result's precision), or
    :data:`EXACT_PLACES` for an expression."""
    if not _is_number(side):
        return EXACT_PLACES
    _, _, decimals = side.replace(" ", "").partition(".")
    return len(decimals)


def _plain_exact(value: Decimal) -> str:
    """``value`` without an exponent or trailing zeros, all its places kept: 0.2385."""
    return format(value.normalize(), "f")


def _plain(value: Decimal) -> str:
    """``value`` to at most three decimals, without an exponent or trailing zeros: 47,
    33.333."""
    rounded = value if value == value.to_integral() else value.quantize(Decimal("0.001"))
    return format(rounded.normalize(), "f")
