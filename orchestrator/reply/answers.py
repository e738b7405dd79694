"""Short answers: normalise them so runs that agree land in one cluster, exactly.

Every interrogation reply carries a short ``answer`` next to its conclusion sentence (a name,
a number, yes/no, or ``unanswerable``). Candidates are clustered by :func:`answer_key`, never
by fuzzy sentence similarity: "Quelheim" and "Quelmere" are different answers however alike
they look. The key folds only differences that cannot change the answer:

* case, Unicode compatibility forms, accents are kept (``Zürich`` is not ``Zurich``);
* punctuation and the articles *a*, *an*, *the*; a leading *in*, *at*, *on*, *from* or *by*
  before more words (``In Quelheim`` is ``Quelheim``);
* numbers: thousands separators, trailing zeros, a currency sign, number words up to twenty
  (``1,200.0``, ``$1200`` and ``1200`` are one answer; ``seven`` is ``7``);
* units: a number followed by a known unit word is written with the unit's short form
  (``1200 meters`` -> ``1200 m``);
* yes/no synonyms (``true``, ``correct``, ``it does`` ... -> ``yes``);
* refusals (``unknown``, ``cannot be determined``, ``not enough information`` ...) ->
  :data:`UNANSWERABLE`;
* given the question, a trailing word that only names the kind of thing asked for
  (:func:`asked_category`: "Into which river ...?" makes ``Teven River`` the answer ``Teven``).

The same key is the evaluation harness's answer normaliser for voting, so the orchestrator and
the self-consistency baseline cluster answers by one rule.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Collection, Sequence
from decimal import Decimal, InvalidOperation

UNANSWERABLE = "unanswerable"
YES, NO = "yes", "no"
MAX_SHORT_WORDS = 5
"""An answer of more words is not a short value (a name, a number, yes/no)."""
ANSWER_SHORT, ANSWER_CUT, ANSWER_TOO_LONG = "short", "cut", "too_long"

_ARTICLES = frozenset({"a", "an", "the"})
_LEADING_PREPOSITIONS = frozenset({"in", "at", "on", "from", "by"})
_YES = frozenset({"yes", "y", "true", "correct", "right", "it does", "yes it does", "affirmative"})
_NO = frozenset({"no", "n", "false", "incorrect", "wrong", "it does not", "no it does not"})
_REFUSALS = (
    "unanswerable",
    "unknown",
    "not answerable",
    "cannot be determined",
    "can not be determined",
    "cannot be answered",
    "cannot determine",
    "not enough information",
    "insufficient information",
    "insufficient evidence",
    "not stated",
    "not mentioned",
    "no answer",
    "none of the documents",
    "undetermined",
    "neither",
)
_NUMBER_WORDS = {
    "zero": 0,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
    "twenty": 20,
}
_UNITS = {
    "m": ("m", "meter", "meters", "metre", "metres"),
    "km": ("km", "kilometer", "kilometers", "kilometre", "kilometres"),
    "cm": ("cm", "centimeter", "centimeters", "centimetre", "centimetres"),
    "kg": ("kg", "kilogram", "kilograms", "kilo", "kilos"),
    "g": ("g", "gram", "grams"),
    "l": ("l", "liter", "liters", "litre", "litres"),
    "s": ("s", "sec", "secs", "second", "seconds"),
    "min": ("min", "mins", "minute", "minutes"),
    "h": ("h", "hr", "hrs", "hour", "hours"),
    "%": ("%", "percent", "per cent"),
    "year": ("year", "years", "yr", "yrs"),
    "day": ("day", "days"),
}
_FILLER_EDGES = frozenset(
    ["is", "was", "are", "were", "of", "in", "on", "at", "by", "to", "and", "or", "for", "with"]
)
"""Words an answer never opens or closes on ("is the innermost" is no answer)."""
_UNIT_OF = {spelling: short for short, spellings in _UNITS.items() for spelling in spellings}
_CURRENCY = "$€£¥"
_NUMBER = re.compile(r"^[-+]?\d+(?:\.\d+)?$")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}\b)")
_PUNCT = re.compile(r"[^\w\s%.-]|(?<!\d)\.|\.(?!\d)|-(?!\d)")


_COORDINATED = re.compile(r"\s*[;,]?\s+(?:and|but|while|whereas)\s+|\s*;\s*", re.IGNORECASE)
"""Where an answer joins clauses or items ("X is a hero, and Y is a villain")."""
_NOT_NAMES = frozenset({"i", "it", "this", "that", "he", "she", "they", "we", "yes", "no"})
"""Capitalised words that name nothing (a clause may open on them)."""
_CLAUSE_JOINS = re.compile(
    r"\s*[;,]\s*(?:(?:and|but|while|whereas)\s+)?|\s+(?:and|but|while|whereas)\s+", re.IGNORECASE
)
"""Where a compound answer joins its clauses ("X is a knight, Y is a knave, and Z is ...")."""
_CLAUSE = re.compile(
    r"^(?P<who>[^\W\d_][\w'-]*(?: [^\W\d_][\w'-]*){0,2})"
    r" (?:is|are|was|were) (?P<what>[\w'-]+(?: [\w'-]+){0,2})$"
)
"""One clause of a compound answer under :func:`_canonical_words`: a subject of at most three
words, a copula and a predicate of at most three ("aiden is sinner")."""
_UNDECIDED = frozenset({"or", "not", "no", "either", "neither", "nor", "if", "maybe", "unknown"})
"""Predicate words that leave a clause undecided ("a sinner or a saint")."""


_ASKED_FOR = re.compile(r"\b(?:which|what|whose)\s+([^\W\d_]+)", flags=re.IGNORECASE)


def asked_category(question: str) -> frozenset[str]:
    """The words after "which", "what" or "whose" in ``question``, lower-cased: the kind of
    thing it asks for ("On which river lies ...?" -> ``{"river"}``). O(len)."""
    return frozenset(word.lower() for word in _ASKED_FOR.findall(question))


def preferred_spelling(spellings: Sequence[str]) -> str:
    """Which of several spellings of one answer to show: the most frequent; among equals the
    fullest name (the longest key: ``Teven River`` over ``Teven``, while ``In Quelheim`` is no
    fuller than ``Quelheim``); then the first given. ``spellings`` must not be empty."""
    best = max(spellings.count(s) for s in spellings)
    frequent = [s for s in spellings if spellings.count(s) == best]
    longest = max(len(answer_key(s)) for s in frequent)
    return next(s for s in frequent if len(answer_key(s)) == longest)


def answer_clauses(answer: str) -> tuple[str, ...]:
    """The clauses of a compound answer, each folded as an answer is ("Aiden is a sinner" ->
    ``"aiden is sinner"``), sorted, or ``()`` when ``answer`` is not one. A compound answer is
    two or more parts joined by commas, semicolons, "and" or "but", each of them a clause: a subject
    that is no pronoun, "is" (are, was, were) and a predicate that decides something ("Jack is
    a sage/fool" or "a sinner or a saint" decides nothing). "Aiden is a sinner, and Logan is a
    saint" and "Logan is a saint and Aiden is a sinner" have the same clauses; "Tamsin Ossick
    and Kestrel Morvick" has none. Works on a key as well as on the answer it came from.
    O(len(answer))."""
    parts = [part for part in _CLAUSE_JOINS.split(answer.strip().rstrip(".!")) if part.strip()]
    if len(parts) < 2 or "/" in answer:
        return ()
    clauses = []
    for part in parts:
        clause = _canonical_words(_clean(part))
        match = _CLAUSE.match(clause)
        if match is None or match["who"].split()[0] in _NOT_NAMES:
            return ()
        if set(match["what"].split()) & _UNDECIDED:
            return ()
        clauses.append(clause)
    return tuple(sorted(clauses))


def clause_sides(clause: str) -> tuple[str, str]:
    """(subject, predicate) of one clause of :func:`answer_clauses` ("aiden is sinner" ->
    ``("aiden", "sinner")``). O(len(clause))."""
    match = _CLAUSE.match(clause)
    if match is None:
        raise ValueError(f"not a clause: {clause!r}")
    return match["who"], match["what"]


def answer_key(answer: object, category: Collection[str] = ()) -> str:
    """The cluster key of a short answer ("" for no answer at all); ``category``
    (:func:`asked_category` of the question) names words dropped from its end when more
    words remain. Deterministic, O(len)."""
    if not isinstance(answer, str):
        return ""
    text = _clean(answer)
    if not text:
        return ""
    if text in _YES:
        return YES
    if text in _NO:
        return NO
    if is_refusal(text):
        return UNANSWERABLE
    clauses = answer_clauses(answer)
    if clauses:  # "Logan is a saint, Aiden is a sinner" is "Aiden is a sinner and Logan ..."
        return " and ".join(clauses)
    words = _canonical_words(text).split()
    # "In Quelheim" answers "In which town ...?" just as "Quelheim" does.
    if len(words) > 1 and words[0] in _LEADING_PREPOSITIONS:
        words = words[1:]
    # "Teven River" answers "Into which river ...?" just as "Teven" does.
    while len(words) > 1 and words[-1] in category:
        words = words[:-1]
    key = " ".join(words)
    # Dropping articles can leave a yes/no word or a refusal ("A: Y" -> "y", "the unknown"):
    # fold them too, so that the key of a key is itself.
    if key in _YES:
        return YES
    if key in _NO:
        return NO
    if is_refusal(key):
        return UNANSWERABLE
    return key


def normalise_text(text: str) -> str:
    """Any text under the same folding as an answer, without the yes/no and refusal mapping:
    what an entity answer is looked up in (``f" {key} " in f" {normalise_text(span)} "``)."""
    return _canonical_words(_clean(text))


def _clean(text: str) -> str:
    folded = unicodedata.normalize("NFKC", text).casefold().strip()
    folded = _THOUSANDS.sub("", folded).replace("%", " %")
    folded = "".join(" " if char in _CURRENCY else char for char in folded)
    return " ".join(_PUNCT.sub(" ", folded).split())


def _canonical_words(text: str) -> str:
    words = [_canonical_number(w) for w in text.split() if w not in _ARTICLES]
    return " ".join(_join_units(words))


def is_refusal(text: str) -> bool:
    """Whether a short answer says the question cannot be answered."""
    folded = " ".join(text.casefold().replace("'", "").split()).strip(" .!")
    return folded in _REFUSALS or any(
        folded.startswith(phrase) for phrase in _REFUSALS if " " in phrase
    )


def is_entity(key: str) -> bool:
    """Whether a normalised answer names something (not yes/no, a refusal or a number):
    such an answer must occur in the evidence to be grounded."""
    if key in ("", YES, NO, UNANSWERABLE):
        return False
    return not all(_NUMBER.match(word) or word in _UNIT_OF.values() for word in key.split())


def _canonical_number(word: str) -> str:
    if word in _NUMBER_WORDS:
        return str(_NUMBER_WORDS[word])
    if not _NUMBER.match(word):
        return word
    try:
        value = Decimal(word).normalize()
    except InvalidOperation:  # pragma: no cover - the pattern only admits valid decimals
        return word
    text = format(value, "f")
    return text[1:] if text.startswith("+") else text


def _join_units(words: list[str]) -> list[str]:
    out: list[str] = []
    position = 0
    while position < len(words):
        word = words[position]
        two = " ".join(words[position : position + 2])
        if out and _NUMBER.match(out[-1]) and two in _UNIT_OF:
            out.append(_UNIT_OF[two])
            position += 2
            continue
        if out and _NUMBER.match(out[-1]) and word in _UNIT_OF:
            out.append(_UNIT_OF[word])
        else:
            out.append(word)
        position += 1
    return out


def shorten_answer(
    answer: str | None, conclusion: str | None, evidence_texts: Sequence[str]
) -> tuple[str | None, str]:
    """``(answer, form)``: a short answer as it is (:data:`ANSWER_SHORT`); a long one cut
    (:data:`ANSWER_CUT`) to its leading yes/no, or else to its first run of at most
    :data:`MAX_SHORT_WORDS` words that the evidence and the conclusion sentence also hold
    (longest at that start, holding a name or a number, not opening or closing on a filler or
    ending on an article); else, or when that run would drop a coordinate part of the answer
    that names something of its own (:func:`_drops_a_coordinate`), ``(None,
    ANSWER_TOO_LONG)``, a compliance failure. A long refusal or yes/no phrase
    that :func:`answer_key` already folds is short. ``evidence_texts`` are the spans under
    :func:`normalise_text`. Cost: O(words * MAX_SHORT_WORDS * evidence length).
    """
    if answer is None:
        return None, ANSWER_SHORT
    words = answer.split()
    if len(words) <= MAX_SHORT_WORDS or answer_key(answer) in (YES, NO, UNANSWERABLE):
        return answer, ANSWER_SHORT
    if answer_clauses(answer):
        return answer, ANSWER_SHORT  # a list of short facts, each checked on its own
    first = _clean(words[0])
    if first in (YES, NO):
        return first, ANSWER_CUT
    held = [f" {text} " for text in evidence_texts]
    said = f" {normalise_text(conclusion)} " if conclusion else None
    for start in range(len(words)):
        for end in range(min(len(words), start + MAX_SHORT_WORDS), start, -1):
            piece = " ".join(words[start:end]).strip(" ,;:.!?()[]\"'")
            key = normalise_text(piece)
            edges = key.split()[:1] + key.split()[-1:]
            if not key or any(w in _FILLER_EDGES for w in edges):
                continue
            if _clean(words[end - 1]) in _ARTICLES:
                continue  # "Haskthorpe, a": the key folds the article, the shown answer not
            if not _marks_a_name(piece):
                continue  # a run of common words is no answer
            padded = f" {key} "
            if (said is None or padded in said) and any(padded in text for text in held):
                if _drops_a_coordinate(answer, key):
                    return None, ANSWER_TOO_LONG
                return piece, ANSWER_CUT
    return None, ANSWER_TOO_LONG


def _marks_a_name(text: str) -> bool:
    """Whether ``text`` holds a capital or a digit: the mark of a name or a number."""
    return any(ch.isdigit() or ch.isupper() for ch in text)


def _drops_a_coordinate(answer: str, kept: str) -> bool:
    """Whether keeping only ``kept`` (a normalised run of ``answer``) would drop a coordinate
    part of the answer that names something of its own. "Aiden is a sinner, and Logan is a
    saint" cut to "Aiden is a sinner" would answer half of what was said, and "Tamsin Ossick
    and Kestrel Morvick" one of two founders: the answer gives several things and no cut can
    say which one is meant. Elaboration without a name of its own ("Haskthorpe, a town in the
    north") may go. O(len(answer))."""
    parts = _COORDINATED.split(answer)
    if len(parts) < 2:
        return False
    held = set(kept.split())
    for part in parts:
        if f" {kept} " in f" {normalise_text(part)} ":
            continue  # the part the cut keeps
        named = {
            name
            for word in part.split()
            if _marks_a_name(word)
            for name in normalise_text(word).split()  # articles fold away: "The" -> ""
        }
        if named - _NOT_NAMES - held:
            return True
    return False
