"""The shapes of the two hop-by-hop replies (see :mod:`orchestrator.checks.hops`): a plan
``{"lookups": [QUESTION, ...]}`` and a lookup ``{"sentence": SENTENCE_NUMBER, "answer":
SHORT_ANSWER}``. Read through :func:`orchestrator.reply.parse.parse_plan` and
:func:`orchestrator.reply.parse.parse_lookup`."""

from __future__ import annotations

from typing import Any

from orchestrator.reply.fields import kind_of, read_answer, read_source
from orchestrator.reply.top import read_top

MAX_LOOKUPS = 4
"""A plan with more lookups is cut to this many (noted): a chain longer than four hops is
beyond what one small model's lookups can carry, and each costs a call."""
MAX_LOOKUP_CHARS = 300


def normalise_plan(value: Any) -> tuple[list[str] | None, list[str], str | None]:
    """(the lookups or None, item errors, the fatal problem or None) for a loaded plan reply.
    Lookups that are not text, empty or longer than :data:`MAX_LOOKUP_CHARS` are dropped
    (noted); whitespace is collapsed. Never raises."""
    top = read_top(value, "lookups", list, "a list")
    items, errors = top.value, top.errors
    if top.problem is not None:
        return None, errors, top.problem
    lookups: list[str] = []
    for index, item in enumerate(items):
        if not isinstance(item, str) or not item.strip():
            errors.append(f"lookups[{index}] dropped: {kind_of(item)}, not a question")
            continue
        text = " ".join(item.split())
        if len(text) > MAX_LOOKUP_CHARS:
            errors.append(f"lookups[{index}] dropped: {len(text)} characters")
            continue
        lookups.append(text)
    if len(lookups) > MAX_LOOKUPS:
        errors.append(f"lookups: {len(lookups)} given, limit {MAX_LOOKUPS}; the rest dropped")
        lookups = lookups[:MAX_LOOKUPS]
    if not lookups:
        return None, errors, "the plan has no lookup"
    return lookups, errors, None


def normalise_lookup(value: Any) -> tuple[tuple[str, str] | None, list[str], str | None]:
    """((span id, answer) or None, item errors, the fatal problem or None) for a loaded lookup
    reply. A reply without a sentence (or ``"none"``) or without an answer finds nothing.
    Never raises."""
    top = read_top(value, "sentence", str, "a string")
    obj, errors = top.obj, top.errors
    if top.problem is not None:
        return None, errors, top.problem
    span_id = read_source(obj.get("sentence"), "sentence", errors)
    if span_id is None:
        return None, errors, "the lookup names no sentence"
    answer = read_answer(obj, errors)
    if answer is None:
        return None, errors, "the lookup has no answer"
    return (span_id, answer), errors, None
