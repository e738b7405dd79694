"""The fields of a model reply, read leniently: ids, confidences, cited spans, answers.

Shared by the reply shapes (:mod:`.graph_shape`, :mod:`.chain_shape`, :mod:`.verdict_shape`)
behind :mod:`.parse`. Every reader takes the raw
JSON value and returns the normalised value; a problem is either returned (the item is dropped
by the caller) or appended to the caller's ``errors`` list (the item is kept). None raises.
"""

from __future__ import annotations

import math
from typing import Any

from orchestrator.llm import JsonObject
from orchestrator.reply.schemas import NO_SOURCE

DEFAULT_CONFIDENCE = 0.8
CONFIDENCE_DEFAULTED = "confidence_defaulted"
"""Leniency tag of a node whose confidence was not a number in 0..1 (see
:func:`read_confidence`)."""
CONCLUSION_DECLARED = "declared"
CONCLUSION_ONLY_TYPED = "only_typed"
CONCLUSION_LAST_TYPED = "last_typed"
CONCLUSION_ANSWER_NODE = "answer_node"
CONCLUSION_BUILT = "built"
CONCLUSION_ON_GIVEN = "on_given"
CONCLUSION_SOURCES = (
    CONCLUSION_DECLARED,
    CONCLUSION_ON_GIVEN,
    CONCLUSION_ONLY_TYPED,
    CONCLUSION_LAST_TYPED,
    CONCLUSION_ANSWER_NODE,
    CONCLUSION_BUILT,
)
"""How a run's conclusion was found. ``declared`` and ``only_typed`` are the model's own marking;
``on_given`` is a declared conclusion that is a cited sentence, so a conclusion stating the
answer is added on top of it (the model concluded from that sentence). The others are
guesses, so such a run counts toward its answer's run support but cannot ground the answer by
itself (:func:`orchestrator.checks.assess.answer_flags`)."""
GUESSED_CONCLUSIONS = frozenset({CONCLUSION_LAST_TYPED, CONCLUSION_ANSWER_NODE, CONCLUSION_BUILT})
# A model's reply is held to tighter bounds than the store accepts from an MCP agent
# (graph_server.validation.StoreLimits: ids 200, claims 2,000 characters): a node id longer than
# 64 characters or a claim past 1,000 is a runaway reply, not a claim, and anchoring prefixes
# ids with the run id, which must still fit the store's limit
# (tests/test_parse.py checks the two stay in that order).
MAX_ID_CHARS = 64
MAX_CLAIM_CHARS = 1000


def read_source(value: Any, where: str, errors: list[str]) -> str | None:
    """A node's cited span id as trimmed text; absent, empty or ``"none"`` is no source."""
    if value is None:
        return None
    if not isinstance(value, str):
        errors.append(f"{where}: source {kind_of(value)} is not text; treated as no source")
        return None
    text: str = value.strip().strip("[]").strip()
    if not text or text.lower() == NO_SOURCE:
        return None
    if len(text) > MAX_ID_CHARS:
        errors.append(f"{where}: source has {len(text)} characters; treated as no source")
        return None
    return text


def read_answer(obj: JsonObject, errors: list[str]) -> str | None:
    """The reply's answer, whitespace collapsed; None (noted) when missing or unusable. A long
    answer is kept here (up to a claim's length): :func:`orchestrator.reply.answers.shorten_answer`
    cuts it to its short value once the evidence is at hand."""
    raw = obj.get("answer")
    if isinstance(raw, int | float) and not isinstance(raw, bool):
        raw = str(raw)
    if not isinstance(raw, str) or not raw.strip():
        errors.append(f"field 'answer' must be a short non-empty string, got {kind_of(raw)}")
        return None
    answer = " ".join(raw.split())
    if len(answer) > MAX_CLAIM_CHARS:
        errors.append(f"answer has {len(answer)} characters, limit {MAX_CLAIM_CHARS}; ignored")
        return None
    return answer


def read_identifier(value: Any, field: str) -> tuple[str | None, str | None]:
    """A node id as a trimmed string; integer ids are accepted and written as strings."""
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str) or not value.strip():
        return None, f"{field} must be a non-empty string, got {kind_of(value)}"
    value = value.strip()
    if len(value) > MAX_ID_CHARS:
        return None, f"{field} has {len(value)} characters, limit {MAX_ID_CHARS}"
    return value, None


def read_confidence(item: JsonObject, where: str, errors: list[str]) -> tuple[float, bool]:
    """The item's confidence in 0..1 (numeric strings are read), and whether a value the
    model wrote was replaced. A non-numeric or out-of-range value becomes
    :data:`DEFAULT_CONFIDENCE` with a note naming :data:`CONFIDENCE_DEFAULTED`: small models
    number their nodes (2, 3, 4 ...) or write "high", which says nothing about the claim, so
    the item is kept and the slip recorded. A missing one gets the default too (noted)."""
    if "confidence" not in item or item["confidence"] is None:
        errors.append(f"{where}: confidence missing; default {DEFAULT_CONFIDENCE} used")
        return DEFAULT_CONFIDENCE, False
    raw = item["confidence"]
    number: float | None = None
    if isinstance(raw, int | float) and not isinstance(raw, bool):
        number = float(raw)
    elif isinstance(raw, str):
        try:
            number = float(raw.strip())
        except ValueError:
            number = None
    if number is None or not math.isfinite(number):
        problem = f"confidence {kind_of(raw)} is not a number"
    elif not 0.0 <= number <= 1.0:
        problem = f"confidence {raw!r} is outside 0..1"
    else:
        return number, False
    errors.append(f"{where}: {CONFIDENCE_DEFAULTED}: {problem}; default {DEFAULT_CONFIDENCE} used")
    return DEFAULT_CONFIDENCE, True


def single_object(value: Any, errors: list[str]) -> JsonObject | None:
    """The value if it is an object; a list holding exactly one object is unwrapped (noted)."""
    if isinstance(value, dict):
        return value
    if isinstance(value, list) and len(value) == 1 and isinstance(value[0], dict):
        errors.append("top level was a one-element list; used the object inside")
        return value[0]
    return None


def kind_of(value: Any) -> str:
    """``value``'s type and a repr cut to 40 characters, for error messages (``nothing`` for
    None)."""
    if value is None:
        return "nothing"
    text = repr(value)
    shown = text if len(text) <= 40 else text[:37] + "..."
    return f"{type(value).__name__} {shown}"
