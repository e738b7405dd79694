"""Read a multi-hop question's plan off its grammar, without a model call.

A 1.5B model plans badly: asked to split "In which town was the founder of the company that
built the Faldhaven Bridge born?" into lookups, it folded two hops into one or stopped a hop
short on 6 of 8 prose questions (docs/results/hops.md). Yet such a question *is* its plan: each
nested definite description is one lookup, innermost first. :func:`decompose` unwinds them:

* ``the N that|which|who V X`` -> "Which N V X?" ("the company that built the Faldhaven
  Bridge" -> "Which company built the Faldhaven Bridge?");
* ``the N of X`` -> "Who or what is the N of X?" ("the founder of #1");
* ``the N V-ed by X`` -> "Which N is V-ed by X?" ("the river crossed by the Marlcrest Bridge");
* ``the N where X AUX V`` -> "In which N AUX X V?" ("the town where #1 is headquartered" ->
  "In which town is #1 headquartered?");

each description is replaced by ``#k`` in what remains, and what remains at the end is the last
lookup ("In which town was #2 born?"). A comparison of two options ("Which was founded earlier,
A or B?") becomes one lookup of the compared fact per option ("When was A founded?"), after
the lookups an option's own description needs ("the one that built A"). The object X of a
description is a name (capitalised words, after an optional "the"), a lower-case single word
after "the" ("the dresselute"), or a ``#k``. A question of more than one sentence (a word
problem, a claim to check against a passage) is not unwound: its earlier sentences are the
setting, not descriptions to look up ("the perimeter of the room" in a word problem is worked
out, not found). Anything else returns None, and the loop asks the model for a plan. All
functions are pure and deterministic.
"""

from __future__ import annotations

import re

from corpus.evidence import split_sentences
from orchestrator.checks.question import DESCRIPTIONS, asked

MAX_LOOKUPS = 4
_DESCRIPTIONS = tuple(
    zip(
        DESCRIPTIONS,
        ("Which {n} {v} {x}?", "Which {n} is {v} by {x}?", "Who or what is the {n} of {x}?"),
        strict=True,
    )
)
_WHERE = re.compile(r"\bthe (\w+) where (.+?) (was|is|were|are) (\w+)$")
_COMPARISON = re.compile(
    r"^(?:Which|Who)(?: (\w+))? (was|is|were|are) (?:(\w+) )?(\w+)(?:,|:) (.+) or (.+)$"
)
_TRIVIAL = re.compile(r"^(?:what|who|which) (?:is|was|are|were) #\d+$", re.IGNORECASE)
_ADJECTIVES = {"longer": "long", "shorter": "long", "taller": "tall", "larger": "large"}
_TIME_WORDS = frozenset(["earlier", "later", "first", "last", "older", "younger"])


def decompose(question: str) -> list[str] | None:
    """The lookups ``question`` unwinds into (see the module docstring), or None when its
    grammar is not one of those or it asks a single fact.

    >>> decompose("In which town was the founder of the company that built the Kest Bridge born?")
    ['Which company built the Kest Bridge?', 'Who or what is the founder of #1?', \
'In which town was #2 born?']
    >>> decompose("On which river lies the town where Rookton Works is headquartered?")
    ['In which town is Rookton Works headquartered?', 'On which river lies #1?']
    >>> decompose("Which was founded earlier, Vell Works or Orm Works?")
    ['When was Vell Works founded?', 'When was Orm Works founded?']
    >>> decompose("What is the capital of Norway?") is None
    True
    >>> decompose("A room is 12 feet wide. What is the perimeter of the room?") is None
    True
    >>> decompose("Who was born earlier: the inventor of the isterpipe or Aldo Harnsen?")
    ['Who or what is the inventor of the isterpipe?', 'When was #1 born?', \
'When was Aldo Harnsen born?']
    """
    text = " ".join(asked(question).split()).rstrip("?").strip()
    if len(split_sentences(text)) > 1:
        return None
    compared = _comparison(text)
    if compared is not None:
        return compared if 2 <= len(compared) <= MAX_LOOKUPS else None
    lookups: list[str] = []
    rest = _unwind(text, lookups)
    if not lookups or _innermost(rest) is not None:
        return None
    if not _TRIVIAL.match(rest):  # "What is #1" asks nothing the lookups did not
        lookups.append(rest[0].upper() + rest[1:] + "?")
    return lookups if 2 <= len(lookups) <= MAX_LOOKUPS else None


def _unwind(text: str, lookups: list[str], kind: str | None = None) -> str:
    """``text`` with its descriptions replaced by ``#k``, innermost first, each one's lookup
    appended to ``lookups``; ``kind`` names what "the one that ..." is (the question's noun)."""
    while len(lookups) < MAX_LOOKUPS:
        found = _innermost(text, kind)
        if found is None:
            break
        start, end, lookup = found
        lookups.append(lookup)
        text = f"{text[:start]}#{len(lookups)}{text[end:]}"
    return text


def _innermost(text: str, kind: str | None = None) -> tuple[int, int, str] | None:
    """The description that starts last in ``text`` (so holds no other), as (start, end,
    lookup); None when there is none. "the one" is a ``kind``, when known."""
    best: tuple[int, int, str] | None = None
    for pattern, template in _DESCRIPTIONS:
        for match in pattern.finditer(text):
            if best is None or match.start() > best[0]:
                groups = dict(zip("nvx", match.groups()[:-1], strict=False))
                groups["x"] = match.groups()[-1]
                if groups["n"] == "one":
                    if kind is None:
                        continue
                    groups["n"] = kind
                best = (match.start(), match.end(), template.format(**groups))
    where = _WHERE.search(text)
    if where is not None and (best is None or where.start() > best[0]):
        noun, subject, aux, verb = where.groups()
        best = (where.start(), where.end(), f"In which {noun} {aux} {subject} {verb}?")
    return best


def _comparison(text: str) -> list[str] | None:
    """The lookups of a two-option comparison, or None for any other question."""
    match = _COMPARISON.match(text)
    if match is None:
        return None
    kind, aux, verb, comparative, first, second = match.groups()
    if comparative not in _TIME_WORDS and comparative not in _ADJECTIVES:
        return None
    if comparative not in _ADJECTIVES and verb is None:
        return None
    lookups: list[str] = []
    for option in (first.strip(), second.strip()):
        option = _unwind(option, lookups, kind)
        if len(lookups) >= MAX_LOOKUPS:
            return None
        if comparative in _ADJECTIVES:
            lookups.append(f"How {_ADJECTIVES[comparative]} is {option}?")
        else:
            lookups.append(f"When {aux} {option} {verb}?")
    return lookups


_UNWOUND = {"auto": "first", "auto_only": "only"}
"""What each automatic hop setting becomes for a question whose grammar unwinds into lookups."""


def hops_in_force(setting: str, question: str) -> str:
    """The hop setting a run of ``question`` follows: ``setting`` itself, except that ``auto``
    is ``first`` (and ``auto_only`` is ``only``) when the question's grammar unwinds into
    lookups (:func:`decompose`: the plan costs no call then) and ``off`` otherwise, where a
    plan would have to be asked of the model and the first chain is the measured default.

    >>> hops_in_force("auto", "Who founded the firm that built the Kest Bridge?")
    'first'
    >>> hops_in_force("auto", "What is the capital of Norway?")
    'off'
    >>> hops_in_force("auto_only", "Who founded the firm that built the Kest Bridge?")
    'only'
    >>> hops_in_force("on_failure", "What is the capital of Norway?")
    'on_failure'
    """
    if setting not in _UNWOUND:
        return setting
    return _UNWOUND[setting] if decompose(question) is not None else "off"
