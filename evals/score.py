"""Scoring of model answers against gold answers, for the two dataset kinds.

* ``math`` items: exact match on the final number. `extract_number` pulls one number out of free
  text (see its docstring for the order of preference) and both sides are compared as exact
  decimals, so ``5.0`` equals ``5`` and ``1,250`` equals ``1250``.
* ``qa`` items: SQuAD-style exact match and token F1 over normalised text (lower case, ASCII
  punctuation removed, the articles a/an/the removed, whitespace collapsed), taking the best
  score over the gold answer and its aliases. The text scored is the span after the last
  "answer is" / "Answer:" marker when the prediction has one, else the whole prediction.

`score(item, prediction)` is the single entry point the harness uses. Every function here is
pure and linear in the length of its inputs.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from decimal import Decimal, InvalidOperation
from typing import Any

from orchestrator.reply import normalize_answer

# One number: an optional sign (ASCII hyphen or the Unicode minus), an optional currency sign
# between sign and digits ("-$5" and "$-5" both read -5), then either comma-grouped thousands or
# plain digits, then an optional decimal part. A sign only counts when it does not follow a
# letter, digit or closing bracket, so "3-4" and "x-5" read 3 and 4 / 5, not negatives.
_NUMBER_RE = re.compile(
    r"(?<![\w.)\]])(?P<sign>[-\u2212]?)[$\u20ac\u00a3\u00a5]?(?P<sign2>[-\u2212]?)"
    r"(?P<body>\d{1,3}(?:,\d{3})+(?!\d|,\d)|\d+(?:\.\d+)?|\.\d+)"
    r"(?P<frac>(?<=\d)\.\d+)?"
)
_MARKERS_RE = re.compile(
    r"(?:the\s+(?:final\s+)?answer\s+is\s*:?|final\s+answer\s*[:=]|answer\s*[:=])\s*",
    re.IGNORECASE,
)


def _canonical(number: str) -> str:
    """Render a decimal literal canonically: no grouping, no trailing zeros, no exponent."""
    value = Decimal(number).normalize()
    if value == 0:
        return "0"  # Decimal keeps the sign of -0; an answer of "-0" is just 0.
    return format(value, "f")


def _numbers(text: str) -> list[str]:
    """All numbers in `text`, in order, as canonical decimal strings."""
    found = []
    for match in _NUMBER_RE.finditer(text):
        digits = match.group("body").replace(",", "") + (match.group("frac") or "")
        negative = bool(match.group("sign") or match.group("sign2"))
        found.append(_canonical(("-" if negative else "") + digits))
    return found


def _boxed_contents(text: str) -> list[str]:
    r"""Contents of every ``\boxed{...}``, honouring nested braces; unclosed ones are skipped."""
    contents = []
    start = text.find("\\boxed{")
    while start != -1:
        depth, i = 1, start + len("\\boxed{")
        while i < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        if depth == 0:
            contents.append(text[start + len("\\boxed{") : i - 1])
        start = text.find("\\boxed{", start + 1)
    return contents


def extract_number(text: str | None) -> str | None:
    r"""The final numeric answer in `text` as a canonical decimal string, or None if none.

    Order of preference (the first source that yields a number wins):

    1. the first number after the last ``####`` (GSM8K's solution marker);
    2. the last number inside the last ``\boxed{...}`` that holds one;
    3. the first number after the last "the answer is" / "final answer:" / "answer:" marker;
    4. the last number anywhere in the text.

    Thousands commas, currency signs, units and percent signs are ignored; negatives and decimals
    are kept; the result has no trailing zeros (``"5.0"`` -> ``"5"``). Numbers written as words
    and fractions such as ``3/4`` are not interpreted (``3/4`` reads as 4 under rule 4).
    """
    if not text:
        return None
    if "####" in text:
        after = _numbers(text.rsplit("####", 1)[1])
        if after:
            return after[0]
    for content in reversed(_boxed_contents(text)):
        inside = _numbers(content)
        if inside:
            return inside[-1]
    markers = list(_MARKERS_RE.finditer(text))
    if markers:
        after = _numbers(text[markers[-1].end() :])
        if after:
            return after[0]
    everything = _numbers(text)
    return everything[-1] if everything else None


def math_correct(prediction: str | None, gold: str) -> bool:
    """Whether the final number of `prediction` equals the number in `gold`.

    Raises ValueError when `gold` holds no number: that is a dataset bug, not a wrong answer.
    """
    gold_number = extract_number(gold)
    if gold_number is None:
        raise ValueError(f"gold answer {gold!r} contains no number")
    predicted = extract_number(prediction)
    if predicted is None:
        return False
    try:
        return Decimal(predicted) == Decimal(gold_number)
    except InvalidOperation:  # unreachable for regex output; kept so bad input cannot crash
        return False


def exact_match(prediction: str, gold: str) -> float:
    """1.0 when the normalised prediction equals the normalised gold answer, else 0.0."""
    return float(normalize_answer(prediction) == normalize_answer(gold))


def token_f1(prediction: str, gold: str) -> float:
    """Harmonic mean of token precision and recall over normalised tokens (SQuAD v2 rules).

    When either side normalises to no tokens, the score is 1.0 only if both do.
    """
    predicted_tokens = normalize_answer(prediction).split()
    gold_tokens = normalize_answer(gold).split()
    if not predicted_tokens or not gold_tokens:
        return float(predicted_tokens == gold_tokens)
    overlap = sum((Counter(predicted_tokens) & Counter(gold_tokens)).values())
    if overlap == 0:
        return 0.0
    precision = overlap / len(predicted_tokens)
    recall = overlap / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


def answer_span(prediction: str) -> str:
    """The text after the last answer marker, up to the end of that line; else the whole text.

    A trailing full stop is dropped. This lets a model reason first and end with
    "Answer: <short answer>" without the reasoning diluting exact match.
    """
    markers = list(_MARKERS_RE.finditer(prediction))
    if not markers:
        return prediction.strip()
    # Markdown emphasis and quotes around the span are decoration, not part of the answer.
    span = prediction[markers[-1].end() :].split("\n", 1)[0].strip(" \t*_`\"'")
    return span[:-1].rstrip(" \t*_`\"'") if span.endswith(".") else span


def _contains(prediction: str, gold: str) -> float:
    """1.0 when the normalised gold tokens occur as a contiguous run in the prediction's."""
    predicted_tokens = normalize_answer(prediction).split()
    gold_tokens = normalize_answer(gold).split()
    if not gold_tokens:
        return 0.0
    width = len(gold_tokens)
    runs = (predicted_tokens[i : i + width] for i in range(len(predicted_tokens) - width + 1))
    return float(any(run == gold_tokens for run in runs))


def score(item: Mapping[str, Any], prediction: str | None) -> dict[str, Any]:
    """Score one prediction for one dataset item.

    Inputs: an item in the common format (see `evals.datasets`): ``kind``, ``answer`` and
    optionally ``answer_aliases`` are used; `prediction` is the model's answer text, or None when
    the system gave none (a refusal scores as wrong).

    Output: ``{"correct": bool, "em": float, "f1": float, "extracted": str | None,
    "contains": float}``. For math, ``extracted`` is the canonical final number and em = f1 =
    contains = 1.0 exactly when correct. For QA, ``extracted`` is the answer span that was scored,
    em / f1 are the best over gold and aliases, ``correct`` is em == 1.0, and ``contains`` (a
    lenient secondary signal, never used for ``correct``) says whether some gold answer appears
    verbatim, after normalisation, inside the span.

    Raises ValueError for a malformed item (unknown kind, missing or non-string answer).
    """
    kind = item.get("kind")
    gold = item.get("answer")
    if not isinstance(gold, str):
        raise ValueError(f"item {item.get('id')!r}: field 'answer' must be a string, got {gold!r}")
    if kind == "math":
        correct = math_correct(prediction, gold)
        hit = float(correct)
        return {
            "correct": correct,
            "em": hit,
            "f1": hit,
            "extracted": extract_number(prediction),
            "contains": hit,
        }
    if kind == "qa":
        aliases = item.get("answer_aliases") or []
        golds = [gold, *[a for a in aliases if isinstance(a, str)]]
        if prediction is None:
            return {"correct": False, "em": 0.0, "f1": 0.0, "extracted": None, "contains": 0.0}
        span = answer_span(prediction)
        em = max(exact_match(span, g) for g in golds)
        return {
            "correct": em == 1.0,
            "em": em,
            "f1": max(token_f1(span, g) for g in golds),
            "extracted": span,
            "contains": max(_contains(span, g) for g in golds),
        }
    raise ValueError(f"item {item.get('id')!r}: field 'kind' must be 'math' or 'qa', got {kind!r}")


# --- outcomes: what an answer, a refusal or a failure scores ---------------------------------

CORRECT, WRONG, ABSTAINED, NO_ANSWER, ERROR = "correct", "wrong", "abstained", "no_answer", "error"
OUTCOMES = (CORRECT, WRONG, ABSTAINED, NO_ANSWER, ERROR)


def outcome(
    *, answerable: bool, answer: str | None, refused: bool, correct: bool, error: bool
) -> str:
    """How one result counts, one of `OUTCOMES`.

    An error is neither an answer nor an abstention. A refusal (an explicit "unknown", a tied
    vote, the orchestrator declining) is an abstention whatever the item. A reply with no
    readable answer and no refusal is `NO_ANSWER`: not answered, but not an abstention either.
    Any answer to an unanswerable item is wrong; otherwise `correct` decides.
    """
    if error:
        return ERROR
    if refused:
        return ABSTAINED
    if answer is None:
        return NO_ANSWER
    return CORRECT if answerable and correct else WRONG


def is_answerable(item: Mapping[str, Any]) -> bool:
    """False only for items marked ``meta.answerable: false`` (the evidence does not settle
    them, so abstaining is the right response)."""
    meta = item.get("meta")
    return not (isinstance(meta, Mapping) and meta.get("answerable") is False)


def scored_row(item: Mapping[str, Any], answer: str | None, refused: bool) -> dict[str, Any]:
    """The fields :func:`row_outcome` reads, for ``answer`` (None: no answer) given to
    ``item``: a study's row for a decision the harness did not record itself."""
    correct = answer is not None and not refused and bool(score(item, answer)["correct"])
    return {
        "answer": answer,
        "refused": refused,
        "correct": correct,
        "answerable": is_answerable(item),
    }


def row_outcome(row: Mapping[str, Any]) -> str:
    """The result row's `outcome`, recomputed from its fields for rows written before
    outcomes were recorded (those items were all answerable unless the row says otherwise)."""
    recorded = row.get("outcome")
    if recorded in OUTCOMES:
        return str(recorded)
    answer = row.get("answer")
    return outcome(
        answerable=row.get("answerable") is not False,
        answer=answer if isinstance(answer, str) else None,
        refused=bool(row.get("refused")),
        correct=bool(row.get("correct")),
        error=bool(row.get("error")),
    )
