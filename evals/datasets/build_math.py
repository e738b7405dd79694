"""Build ``math.jsonl``: 880 grade-school word problems from reasoning-gym's ``gsm_symbolic``.

Usage (needs the dev-only package ``reasoning-gym``; the output is committed, so running this is
only needed to rebuild or audit the set)::

    python -m evals.datasets.build_math [--seed 7001] [--count 880] [--out PATH]

``gsm_symbolic`` instantiates GSM8K-derived templates with fresh numbers and computes the answer
in code, so answers are exact. Some templates still produce flawed instances (a rounded
intermediate, a division that does not come out even), so each candidate is audited before it is
kept:

* the answer parses as a finite number and agrees with ``metadata.answer_value`` and with the
  number after ``####`` in the worked solution;
* every arithmetic chain written in the worked solution (``a op b = c`` with only numbers and
  operators on each side) holds exactly, allowing only the rounding implied by the number of
  decimals written on the right;
* the question shows no floating-point artefact (a number with five or more decimals);
* the question is not a duplicate of one already kept.

Candidates are drawn in index order from a generator seeded with ``--seed``, so the output is a
pure function of (seed, count, reasoning-gym version). Rejected indices and reasons go to stderr
and are listed in ``PROVENANCE.md``.
"""

from __future__ import annotations

import ast
import operator
import re
import sys
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from importlib import metadata
from pathlib import Path
from typing import Any

from evals.datasets.build_cli import one_file_args, write_built

GENERATOR = "gsm_symbolic"
LICENSE = "Apache-2.0"
DEFAULT_SEED = 7001
DEFAULT_COUNT = 880
# Candidates drawn before giving up; flawed instances are a small minority, so 3x is ample.
POOL_FACTOR = 3
DEFAULT_OUT = Path(__file__).resolve().parent / "math.jsonl"

_CURRENCY = str.maketrans({c: " " for c in "$\u20ac\u00a3\u00a5"})
# An arithmetic chain: numeric expressions joined by "=". An expression starts with a digit or
# "(" that does not continue a word or another expression (so "2x+110=278" is not read as
# "110=278"), and holds only digits, operators, brackets, dots, percent signs and spaces.
_CHAIN_RE = re.compile(
    r"(?<![\w.+\-*/\u00f7])[(\d][\d.\s+\-*/()%]*(?:=\s*-?[(\d][\d.\s+\-*/()%]*)+"
)
# Text ending in an operator: a chain found right after it is only the tail of an expression
# whose left part contains words or a "÷", so it cannot be checked on its own.
_OPERAND_BEFORE_RE = re.compile(r"(?:[+\-*/\u00f7\u00d7]|\bx)\s*$")
# A number with five or more decimals in a question is a float leak such as 0.6666666666666666.
_FLOAT_ARTEFACT_RE = re.compile(r"\d+\.\d{5,}")
_OPERATORS: dict[type, Callable[[Fraction, Fraction], Fraction]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
}


def _evaluate(expression: str) -> Fraction:
    """Exact value of an expression of numbers, + - * / and brackets ("5%" means 5/100)."""
    source = re.sub(r"(\d+(?:\.\d+)?)\s*%", r"(\1/100)", expression)

    def walk(node: ast.AST) -> Fraction:
        if isinstance(node, ast.Expression):
            return walk(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
            return Fraction(str(node.value))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -walk(node.operand)
        if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
            return _OPERATORS[type(node.op)](walk(node.left), walk(node.right))
        raise ValueError(f"unsupported expression {expression!r}")

    return walk(ast.parse(source, mode="eval"))


def _decimals(literal: str) -> int:
    """Digits after the decimal point in a plain number literal (0 for anything else)."""
    match = re.fullmatch(r"\s*-?\d+\.(\d+)\s*%?\s*", literal)
    return len(match.group(1)) if match else 0


def arithmetic_errors(solution: str) -> list[str]:
    """Equations in a worked solution that do not hold, as human-readable strings.

    A chain ``e1 = e2 = ... = v`` is checked link by link. Equality must be exact, except that a
    right-hand side written with d decimals may be off by half a unit in its last place.
    Chains with no operator anywhere (e.g. "x = 5") say nothing and are ignored.
    """
    errors = []
    # "12 x 3" and "12 × 3" are multiplications; commas are digit grouping.
    text = re.sub(r"(?<=[\d)])\s*[x\u00d7]\s*(?=[\d(])", " * ", solution.translate(_CURRENCY))
    text = re.sub(r"(?<=\d),(?=\d{3})", "", text)
    for match in _CHAIN_RE.finditer(text):
        if _OPERAND_BEFORE_RE.search(text[: match.start()]):
            continue  # the chain's left side starts earlier, in words ("7 kg * 2 - 5 = 9")
        parts = [p.strip() for p in match.group(0).split("=")]
        if not any(re.search(r"\d\s*[+\-*/]\s*[\d(]", p) for p in parts):
            continue
        try:
            values = [_evaluate(p) for p in parts]
        except (ValueError, SyntaxError, ZeroDivisionError):
            continue  # not arithmetic after all (e.g. a dangling operator); nothing to check
        for i in range(len(parts) - 1):
            places = _decimals(parts[i + 1])
            tolerance = Fraction(1, 2 * 10**places) if places else Fraction(0)
            if abs(values[i] - values[i + 1]) > tolerance:
                errors.append(f"{parts[i]} = {parts[i + 1]} (actually {float(values[i]):g})")
    return errors


def _canonical_number(value: Any) -> str | None:
    """A finite number (or numeric string) as a canonical decimal string, else None."""
    try:
        number = Decimal(str(value).replace(",", "").strip())
    except InvalidOperation:
        return None
    if not number.is_finite():
        return None
    number = number.normalize()
    return "0" if number == 0 else format(number, "f")


def audit(example: dict[str, Any]) -> list[str]:
    """Reasons to reject one generated example (empty when it is sound)."""
    meta = example.get("metadata", {})
    answer = _canonical_number(example.get("answer"))
    if answer is None:
        return [f"answer {example.get('answer')!r} is not a finite number"]
    reasons = []
    artefacts = _FLOAT_ARTEFACT_RE.findall(example.get("question", ""))
    if artefacts:
        reasons.append(f"floating-point artefact in the question: {artefacts[0]}")
    if _canonical_number(meta.get("answer_value")) != answer:
        reasons.append(f"answer {answer} != answer_value {meta.get('answer_value')!r}")
    solution = meta.get("answer_cot", "")
    if "####" not in solution:
        reasons.append("worked solution has no '####' line")
    elif _canonical_number(solution.rsplit("####", 1)[1]) != answer:
        reasons.append(f"worked solution ends with a different number than {answer}")
    reasons.extend(f"false step: {e}" for e in arithmetic_errors(solution))
    return reasons


def build(
    seed: int = DEFAULT_SEED, count: int = DEFAULT_COUNT
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Generate, audit and convert; returns (items, rejected) where rejected entries are
    ``{"source_index", "template", "reasons"}``. Raises RuntimeError if the pool runs dry."""
    import reasoning_gym  # dev-only dependency, imported here so the module imports without it

    version = metadata.version("reasoning-gym")
    pool = count * POOL_FACTOR
    dataset = reasoning_gym.create_dataset(GENERATOR, seed=seed, size=pool)
    items: list[dict[str, Any]] = []
    rejected: list[dict[str, Any]] = []
    questions: set[str] = set()
    for index in range(pool):
        if len(items) == count:
            break
        example = dataset[index]
        template = dataset.task_indices[index]
        reasons = audit(example)
        if example["question"] in questions:
            reasons.append("duplicate question")
        if reasons:
            rejected.append({"source_index": index, "template": template, "reasons": reasons})
            continue
        questions.add(example["question"])
        answer = _canonical_number(example["answer"])
        items.append(
            {
                "id": f"math-{index:04d}",
                "dataset": "math",
                "kind": "math",
                "question": example["question"],
                "documents": [],
                "paragraph_ids": [],
                "answer": answer,
                "answer_aliases": [],
                "supporting_ids": [],
                "meta": {
                    "source": "reasoning-gym",
                    "package_version": version,
                    "generator": GENERATOR,
                    "seed": seed,
                    "source_index": index,
                    "template": template,
                    "license": LICENSE,
                    "solution": example["metadata"]["answer_cot"],
                },
            }
        )
    if len(items) < count:
        raise RuntimeError(f"only {len(items)} of {count} candidates passed the audit")
    return items, rejected


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; prints a provenance summary to stderr."""
    args = one_file_args(__doc__, argv, "--seed", (DEFAULT_SEED, DEFAULT_COUNT, DEFAULT_OUT))
    items, rejected = build(args.seed, args.count)
    version = metadata.version("reasoning-gym")
    write_built(
        items,
        args.out,
        f" (reasoning-gym {version}, {GENERATOR}, seed {args.seed}); rejected {len(rejected)}:",
    )
    for entry in rejected:
        print(
            f"  index {entry['source_index']} (template {entry['template']}): "
            + "; ".join(entry["reasons"]),
            file=sys.stderr,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
