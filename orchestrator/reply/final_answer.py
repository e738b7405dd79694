"""A plain-text reply's final answer: the ``ANSWER:`` line, or what stands in for it.

Replies written in the model's own words (the baseline arms of the evaluation, the worked
shape of an interrogation) end with an answer line the prompt asks for; weak models decorate
it, leave it out or box it, and this module reads all of those the same way, so that every
part of the project that reads such a reply agrees on its answer.

All functions are pure and never raise.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = frozenset(string.punctuation)


def normalize_answer(text: str) -> str:
    """SQuAD normalisation: lower case, drop ASCII punctuation, drop a/an/the, squeeze spaces."""
    lowered = text.lower()
    no_punctuation = "".join(ch for ch in lowered if ch not in _PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", no_punctuation).split())


# "ANSWER: x" on a line of its own, tolerating markdown decoration ("**Answer:** x", "> Answer -").
_ANSWER_LINE = re.compile(
    r"^[\s>*_#`-]*(?:final\s+)?answer[\s*_`]*[:=\uff1a][\s*_`]*(?P<value>.*?)\s*$",
    re.IGNORECASE | re.MULTILINE,
)
# Fallbacks when the line is missing: "the answer is x" or LaTeX \boxed{x}.
_ANSWER_PHRASE = re.compile(
    r"\b(?:the\s+)?(?:final\s+)?answer\s+is\s*:?\s*(?P<value>[^\n]+)", re.IGNORECASE
)
_BOXED = re.compile(r"\\boxed\{(?P<value>[^{}\n]+)\}")
_DECORATION = " \t*_`\"'"
# What a model writes when it declines; compared after SQuAD normalisation.
_REFUSALS = frozenset(
    {
        "unknown",
        "cannot be determined",
        "cannot determine",
        "not enough information",
        "insufficient information",
        "not determinable",
        "undetermined",
        "none",
        "n/a",
    }
)


@dataclass(frozen=True)
class ParsedAnswer:
    """A reply's final answer: ``value`` (None if none found or a refusal), ``refused``, and
    ``format``: "line" (an ANSWER line), "phrase" (a fallback pattern), "bare" (a one-line
    reply taken whole) or "missing"."""

    value: str | None
    refused: bool
    format: str


# A one-line reply of at most this many characters is taken as the answer itself: weak models
# often answer "Quelheim." without the ANSWER line, and that is still an answer.
BARE_ANSWER_CHARS = 200


def _clean(value: str) -> str:
    value = value.strip(_DECORATION)
    if value.endswith("."):
        value = value[:-1].rstrip(_DECORATION)
    return value


def _last(patterns: tuple[re.Pattern[str], ...], text: str) -> str | None:
    """The non-empty value of the match that starts last in `text`, over all `patterns`."""
    found = [(m.start(), _clean(m.group("value"))) for p in patterns for m in p.finditer(text)]
    found = [(start, value) for start, value in found if value]
    return max(found)[1] if found else None


def _find_answer(text: str) -> tuple[str | None, str]:
    """(answer, format) by the rules of `parse_answer`, before the refusal check."""
    value = _last((_ANSWER_LINE,), text)
    if value is not None:
        return value, "line"
    value = _last((_ANSWER_PHRASE, _BOXED), text)
    if value is not None:
        return value, "phrase"
    stripped = text.strip()
    # An empty "ANSWER:" is a missing answer, not a bare reply reading "ANSWER:".
    bare = "\n" not in stripped and len(stripped) <= BARE_ANSWER_CHARS
    if bare and _clean(stripped) and not _ANSWER_LINE.search(stripped):
        return _clean(stripped), "bare"
    return None, "missing"


def parse_answer(text: str | None) -> ParsedAnswer:
    """Find the final answer in a reply; never raises.

    The last non-empty ``ANSWER: ...`` line wins; without one, the last "the answer is ..." or
    ``\\boxed{...}``; without either, a reply of one short line is the answer. A value such as
    "unknown" is a refusal. Linear in the length of `text`.
    """
    value, form = _find_answer(text) if text else (None, "missing")
    if value is None:
        return ParsedAnswer(None, False, "missing")
    if normalize_answer(value) in _REFUSALS or value.lower() in _REFUSALS:
        return ParsedAnswer(None, True, form)
    return ParsedAnswer(value, False, form)
