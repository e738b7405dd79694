"""Does an answer follow from its argument? The answer-on-argument check.

:func:`answer_follows` checks that a candidate's answer occurs in a claim of its argument, or
is recomputed from an operation one of them states; a compound answer ("X is a knight, and Y
is a knave") clause by clause (:func:`clauses_follow`), where a clause counts only when a
claim asserts it (:func:`orchestrator.checks.asserted.asserted_parts`).

All functions are pure and deterministic.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from decimal import Decimal, DivisionByZero, InvalidOperation

from graph_server.similarity import claim_key
from orchestrator.checks.asserted import asserted_parts
from orchestrator.checks.question import terms
from orchestrator.reply import answer_clauses, clause_sides, is_entity, normalise_text

_NUMBER = r"-?\d+(?:\.\d+)?"
_OPERATORS = {
    "+": "+",
    "plus": "+",
    "-": "-",
    "minus": "-",
    "*": "*",
    "x": "*",
    "×": "*",
    "times": "*",
    "multiplied by": "*",
    "/": "/",
    "÷": "/",
    "divided by": "/",
}
_OPERATION = re.compile(
    rf"({_NUMBER})((?:\s*(?:divided by|multiplied by|plus|minus|times|[+\-*/x×÷])\s*{_NUMBER})+)",
    re.IGNORECASE,
)
_STEP = re.compile(
    rf"\s*(divided by|multiplied by|plus|minus|times|[+\-*/x×÷])\s*({_NUMBER})", re.IGNORECASE
)


def answer_follows(key: str, argument: Sequence[str], stated: Sequence[str] = ()) -> bool:
    """Whether answer ``key`` (:func:`orchestrator.reply.answers.answer_key`) is carried by the
    ``argument`` claims: a name must occur in one of them; a number must occur in one, or be
    the value of an operation written in an argument claim or in ``stated`` (the runs'
    conclusion sentences) whose operands all occur in the argument. Yes/no and refusals are
    not looked up (True)."""
    if not key or not (is_entity(key) or re.fullmatch(_NUMBER, key)):
        return True
    clauses = answer_clauses(key)
    if clauses:
        return clauses_follow(clauses, argument, stated)
    padded = [f" {normalise_text(claim)} " for claim in argument]
    if any(f" {key} " in text for text in padded):
        return True
    if is_entity(key):
        return False
    target = Decimal(key)
    known = {number for claim in argument for number in claim_key(claim).numbers}
    for text in [*argument, *stated]:
        for operands, value in _operations(text):
            if value == target and all(claim_key(o).numbers[0] in known for o in operands):
                return True
    return False


def clauses_follow(clauses: Sequence[str], argument: Sequence[str], stated: Sequence[str]) -> bool:
    """Whether every clause of a compound answer (:func:`orchestrator.reply.answers.answer_clauses`)
    is reached by the ``argument`` claims: a claim, or a run's conclusion sentence in
    ``stated``, asserts the clause (:func:`asserted_parts`: not inside a quotation, a report of
    what someone said, a supposition, an alternative or a denial), and a claim of the argument
    names the clause's subject. "Logan told you that Aiden is a sinner" names Aiden and holds
    the words "Aiden is a sinner", but asserts nothing about him. O(total length)."""
    said = {part for text in [*argument, *stated] for part in asserted_parts(text)}
    named = [terms(claim) for claim in argument]
    for clause in clauses:
        subject = terms(clause_sides(clause)[0])
        if clause not in said or not any(subject <= found for found in named):
            return False
    return True


# -- helpers --------------------------------------------------------------------------------


def _operations(text: str) -> list[tuple[list[str], Decimal]]:
    """Each arithmetic chain written in ``text`` ("12 + 30 - 2"), evaluated left to right:
    (operand texts, value). Division by zero and malformed numbers are skipped."""
    found: list[tuple[list[str], Decimal]] = []
    for match in _OPERATION.finditer(text):
        operands = [match.group(1)]
        try:
            value = Decimal(match.group(1))
            for word, number in _STEP.findall(match.group(2)):
                operand = Decimal(number)
                operands.append(number)
                op = _OPERATORS[" ".join(word.casefold().split())]
                if op == "+":
                    value += operand
                elif op == "-":
                    value -= operand
                elif op == "*":
                    value *= operand
                else:
                    value /= operand
        except (InvalidOperation, DivisionByZero):
            continue
        found.append((operands, value.normalize()))
    return found
