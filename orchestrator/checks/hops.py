"""Hop-by-hop interrogation, the rules: check a plan, check each hop, assemble the chain.

A small model that cannot write the whole chain for "In which town was the founder of the
company that built the Faldhaven Bridge born?" can often answer each of "Which company built
the Faldhaven Bridge?", "Who founded #1?" and "In which town was #2 born?" from one sentence.
So when the first chain fails the checks, the loop (:mod:`orchestrator.loop.stages.hops`) asks the
model for a *plan* (the lookups, a later one naming an earlier one's answer as ``#1``), then asks
each lookup alone: one sub-question, the evidence, one cited sentence and the value it gives.
The rules here, all mechanical, decide what counts:

* a plan (:func:`plan_problem`) refers only to earlier lookups, and each lookup names something
  of the question or refers to an earlier one: a plan about something else is no plan;
* a hop (:func:`hop_problem`) cites a sentence that holds its answer, and that names the
  *bridge*, the value an earlier hop found that this one refers to, or else something the
  lookup names. Sentences are read as :attr:`corpus.evidence.Span.checked_text` reads them,
  so "It (Arlfield Works) was founded by Malin Corver" names Arlfield Works;
* the system, not the model, assembles the argument: for a chain of lookups
  (:func:`assembled_chain`), the hops' sentences in order, each followed by the value it gave,
  and the last value as the answer; for a comparison (:func:`comparison_answer`), the option
  whose number wins, resting on one line of hops per option (:func:`assembled_join`). The
  argument then meets the same rules as any interrogation's (:mod:`orchestrator.checks.chain`).

All functions are pure and deterministic.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from decimal import Decimal, InvalidOperation

from graph_server.similarity import collapse_initialisms
from orchestrator.checks.links import look_alike
from orchestrator.checks.question import (
    asked,
    compared_options,
    name_runs,
    smaller_wins,
    subject_terms,
    terms,
    whole_names,
)
from orchestrator.reply import GraphBuilder, ReplyGraph, answer_key, asked_category, normalise_text

REFERENCE = re.compile(r"#\s?(\d+)")
"""How a lookup names an earlier lookup's answer: ``#1``."""
_WORDS = re.compile(r"[^\W_]+")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
"""A number as a sentence or a reply writes it ("1886", "907", "1,200")."""

FOUND = "found"
NO_SENTENCE = "no_sentence"
"""The reply names no sentence of the evidence (or says none answers)."""
NOT_IN_SENTENCE = "answer_not_in_sentence"
OFF_HOP = "sentence_off_hop"
"""The sentence names neither the bridge nor anything the lookup asks about."""
ANSWER_IS_ASKED = "answer_names_the_lookup"
"""The value is what the lookup asks about ("Who founded Kest Works?" "Kest Works")."""
UNREADABLE = "unreadable"
CALL_FAILED = "call_failed"
NOT_ASKED = "not_asked"
"""An earlier hop failed or the call budget ran out."""


@dataclass(frozen=True)
class Hop:
    """One lookup of a plan and what became of it."""

    number: int
    planned: str
    """The lookup as the plan wrote it: "Who founded #1?"."""
    asked: str
    """The lookup as sent, earlier answers filled in: "Who founded Arlfield Works?"."""
    sentence: str | None = None
    answer: str | None = None
    status: str = NOT_ASKED
    detail: str = ""

    def to_dict(self) -> dict[str, object]:
        """JSON-ready."""
        return asdict(self)


_BACK_REFERENCE = re.compile(
    r"\b(?:this|that|these|those|it|its|they|their|he|she|his|her)\b", re.I
)
"""Words with which a lookup may point at the answer before it ("Where is this company?")."""


def references(lookup: str, number: int = 0) -> list[int]:
    """The earlier lookups ``lookup`` (the ``number``-th, 1-based) refers to, in order of
    first mention: its ``#k``, or, when it has none and says "this", "it", "its" ..., the one
    just before it (the 1.5B writes "this company" for ``#1`` despite the prompt)."""
    explicit = list(dict.fromkeys(int(n) for n in REFERENCE.findall(lookup)))
    if explicit or number <= 1 or not _BACK_REFERENCE.search(lookup):
        return explicit
    return [number - 1]


def plan_problem(lookups: Sequence[str], question: str) -> str | None:
    """Why a plan cannot be followed, or None: a reference to itself, a later or a missing
    lookup, or a lookup that neither refers to an earlier one nor names anything of the
    question (its terms, :func:`orchestrator.checks.question.terms`). O(total length).

    >>> plan_problem(["Who built the Kest Bridge?", "Who founded #1?"], "Who founded the "
    ...     "company that built the Kest Bridge?") is None
    True
    >>> plan_problem(["Who founded #2?", "Who built it?"], "Who built the Kest Bridge?")
    'lookup 1 refers to #2, which is not an earlier lookup'
    """
    if not lookups:
        return "the plan has no lookup"
    wanted = terms(asked(question))
    for number, lookup in enumerate(lookups, 1):
        refs = references(lookup, number)
        for ref in refs:
            if not 1 <= ref < number:
                return f"lookup {number} refers to #{ref}, which is not an earlier lookup"
        if not refs and not terms(REFERENCE.sub(" ", lookup)) & wanted:
            return f"lookup {number} names nothing of the question and no earlier lookup"
    kind = terms(" ".join(sorted(asked_category(asked(question)))))
    if kind and not compared_options(question) and not terms(lookups[-1]) & kind:
        return f"the last lookup does not ask for the question's {' '.join(sorted(kind))}"
    return None


def fill(lookup: str, answers: Sequence[str]) -> str:
    """``lookup`` with each ``#k`` replaced by the k-th answer; a reference to an answer not
    found (yet) stays as written. A lookup that points back with "this" or "it" instead
    (:func:`references`) gets the answer it points at in brackets.

    >>> fill("Who founded #1, and where was #2 born?", ["Arlfield Works"])
    'Who founded Arlfield Works, and where was #2 born?'
    >>> fill("Where is this company based?", ["Arlfield Works"])
    'Where is this company based? (Arlfield Works)'
    """

    def answer(match: re.Match[str]) -> str:
        number = int(match.group(1))
        return answers[number - 1] if 1 <= number <= len(answers) else match.group(0)

    if REFERENCE.search(lookup):
        return REFERENCE.sub(answer, lookup)
    implicit = references(lookup, len(answers) + 1)
    return f"{lookup} ({answers[implicit[0] - 1]})" if implicit else lookup


def hop_problem(
    sentence: str, answer: str, lookup: str, bridges: Sequence[str]
) -> tuple[str, str] | None:
    """``(status, detail)`` when the hop's cited ``sentence`` (its checked text) does not
    carry it, else None: the answer must occur in the sentence, and the sentence must name
    every ``bridge`` (the answers of the lookups this one refers to) or, for a lookup that
    refers to none, a name or number of the ``lookup`` (:func:`subject_terms`). O(length).

    >>> hop_problem("It (Arlfield Works) was founded by Malin Corver.", "Malin Corver",
    ...     "Who founded Arlfield Works?", ["Arlfield Works"]) is None
    True
    >>> hop_problem("Malin Corver was born in Kelvholt.", "Kelvholt",
    ...     "Who founded Arlfield Works?", ["Arlfield Works"])[0]
    'sentence_off_hop'
    """
    text = f" {normalise_text(sentence)} "
    key = answer_key(answer)
    given = set(whole_names(answer))
    if _names_only_asked(given, _asked_names(lookup, bridges)):
        return ANSWER_IS_ASKED, f"{answer!r} is what the lookup asks about, not its answer"
    if not key or f" {key} " not in text:
        return NOT_IN_SENTENCE, f"{answer!r} does not occur in the cited sentence"
    for bridge in bridges:
        bridge_key = answer_key(bridge)
        if bridge_key and f" {bridge_key} " not in text:
            return OFF_HOP, f"the cited sentence does not name {bridge!r}, the earlier answer"
    if not bridges:
        # A whole name of the lookup, not one of its words: "the Faldwald Bridge" shares
        # "bridge" with "the Faldhaven Bridge" and is another bridge.
        named = [run for run in whole_names(lookup) if f" {run} " in f" {_folded(sentence)} "]
        if whole_names(lookup) and not named:
            return OFF_HOP, "the cited sentence names nothing the lookup names"
        if not whole_names(lookup) and not subject_terms(lookup) & terms(sentence):
            return OFF_HOP, "the cited sentence names nothing the lookup asks about"
    return None


def read_value(sentence: str, answer: str, lookup: str, bridges: Sequence[str]) -> str:
    """The value a hop gives, as its cited ``sentence`` (checked text) writes it.

    A lookup's reply is a sentence id and a value, and the value is the model's copy: the 1.5B
    writes the whole sentence ("Ostrthorpe lies on the Othith River."), or a look-alike of the
    name the sentence holds ("Embley Shipwrights" for "Embton Shipwrights"). The value that
    counts is one the sentence gives: a name of the sentence that the lookup (and its
    ``bridges``) does not already name, or a number of the sentence. The reply's ``answer``
    stands when the sentence holds it and it names nothing the lookup names; else the one such
    value the answer contains; else, when the answer contains none, the one name that looks
    like a name of the answer (:func:`orchestrator.checks.links.look_alike`); else, when the
    answer names only what the lookup asks about, the one name of the sentence that is of the
    kind the lookup asks for (:func:`orchestrator.reply.asked_category`: "river"). When none
    of these is unique the answer stands, and :func:`hop_problem` judges it. O(length).

    Parameters
    ----------
    sentence : str
        The cited sentence as the checks read it (:attr:`corpus.evidence.Span.checked_text`).
    answer : str
        The value the reply gave.
    lookup : str
        The lookup as asked, earlier answers filled in.
    bridges : sequence of str
        The earlier answers this lookup refers to.

    Returns
    -------
    str
        The value as the sentence writes it, or ``answer`` unchanged.

    Examples
    --------
    >>> read_value("Ostrthorpe lies on the Othith River.", "Ostrthorpe lies on the Othith "
    ...     "River.", "On which river lies Ostrthorpe?", ["Ostrthorpe"])
    'Othith River'
    >>> read_value("Embton Shipwrights built the Tamarwald Bridge.", "Embley Shipwrights",
    ...     "Which company built the Tamarwald Bridge?", [])
    'Embton Shipwrights'
    >>> read_value("Halla Corvist invented the ormzither.", "Isolde Korelm",
    ...     "Who invented the ormzither?", [])
    'Isolde Korelm'
    >>> read_value("Pravvale lies on the Hyvine River.", "Pravvale",
    ...     "On which river lies Pravvale?", ["Pravvale"])
    'Hyvine River'
    """
    named = _asked_names(lookup, bridges)
    given = whole_names(answer)
    key = answer_key(answer)
    if (
        key
        and f" {key} " in f" {normalise_text(sentence)} "
        and not any(_is_asked(run, named) for run in given)
    ):
        return _whole_name(sentence, given, named) or answer
    contained = _values_in_answer(sentence, answer, given, lookup, named)
    if len(set(contained)) != 1:
        return answer
    return _as_written(sentence, contained[0]) or answer


def _whole_name(sentence: str, given: list[str], named: set[str]) -> str | None:
    """The one name of ``sentence`` (not an asked one) that the answer's one name ``given`` is
    a part of, as the sentence writes it: "Elvow" cited from "... crosses the Elvow River" is
    the Elvow River, and the next lookup must ask about that. None when there is no such one
    name."""
    if len(given) != 1:
        return None
    part = f" {given[0]} "
    wholes = {run for run in whole_names(sentence) if run not in named and part in f" {run} "}
    wholes.discard(given[0])
    return _as_written(sentence, wholes.pop()) if len(wholes) == 1 else None


def _values_in_answer(
    sentence: str, answer: str, given: list[str], lookup: str, named: set[str]
) -> list[str]:
    """The values of ``sentence`` that :func:`read_value` may read ``answer`` (whose whole
    names are ``given``) as, in its order of preference (the first rule that finds any gives
    them all)."""
    names = [run for run in whole_names(sentence) if run not in named]
    answer_numbers = _NUMBER.findall(answer)
    contained = [run for run in names if run in given] + [
        number for number in _NUMBER.findall(sentence) if number in answer_numbers
    ]
    if not contained and not answer_numbers:
        contained = [run for run in names if any(look_alike(run, other) for other in given)]
    if not contained and _names_only_asked(given, named):
        # The reply named what the lookup asks about ("On which river lies Pravvale?"
        # "Pravvale"); the sentence it cites may still give one name of the kind asked for.
        kind = asked_category(lookup)
        contained = [run for run in names if kind & set(run.split())]
    return contained


def _names_only_asked(given: Iterable[str], asked: set[str]) -> bool:
    """Whether the whole names ``given`` (at least one) are each an asked name or a part of
    one: "Gellen" of "the Gellen River" is what the lookup asks about, not an answer to it."""
    given = set(given)
    return bool(given) and all(_is_asked(run, asked) for run in given)


def _is_asked(run: str, asked: set[str]) -> bool:
    """Whether the whole name ``run`` is one of the ``asked`` names or a part of one."""
    return any(f" {run} " in f" {name} " for name in asked)


def _asked_names(lookup: str, bridges: Sequence[str]) -> set[str]:
    """The whole names a lookup and its bridges name, folded."""
    return {run for text in (lookup, *bridges) for run in whole_names(text)}


def _as_written(sentence: str, value: str) -> str | None:
    """``value`` (a folded name or a number) as ``sentence`` writes it, or None."""
    words = r"\s+".join(re.escape(word) for word in value.split())
    found = re.search(rf"(?<![^\W_]){words}(?![^\W_])", collapse_initialisms(sentence), re.I)
    return found.group(0) if found else None


def _folded(text: str) -> str:
    return " ".join(name_runs(text)) + " " + " ".join(_WORDS.findall(text.casefold()))


def comparison_sides(question: str, hops: Sequence[Hop]) -> dict[int, int] | None:
    """Which option of a comparison question each hop stands for: hop index (0-based) ->
    option index (0 or 1, in the question's order), or None when the question compares
    nothing with a direction (:func:`orchestrator.checks.question.smaller_wins`). A hop stands
    for the option its lookup names, or the option of the lookup it refers to; a hop naming
    both or neither is left out. O(hops x length).

    >>> question = "Which was founded earlier, Kest Works or Arl Mill?"
    >>> hops = [Hop(1, "When was Kest Works founded?", "When was Kest Works founded?"),
    ...     Hop(2, "When was Arl Mill founded?", "When was Arl Mill founded?")]
    >>> comparison_sides(question, hops)
    {0: 0, 1: 1}
    """
    options = compared_options(question)
    if smaller_wins(question) is None or len(options) != 2:
        return None
    sides: dict[int, int] = {}
    for hop in hops:
        named = [i for i, option in enumerate(options) if terms(hop.planned) & option]
        via = [sides[r - 1] for r in references(hop.planned) if r - 1 in sides]
        if len(set(named + via)) == 1:
            sides[hop.number - 1] = (named + via)[0]
    return sides


def comparison_answer(question: str, hops: Sequence[Hop]) -> str | None:
    """The answer of a comparison question from its hops' numbers, or None when the question
    compares nothing with a direction or the hops do not give each option exactly one number
    (sides as :func:`comparison_sides` finds them). The answer is the value the winning
    option's first hop found ("the one that built the Kest Bridge": the company), else the
    option as the question writes it. O(hops x length)."""
    sides = comparison_sides(question, hops)
    if sides is None:
        return None
    numbers: dict[int, set[Decimal]] = {0: set(), 1: set()}
    for index, option in sides.items():
        value = _number(hops[index].answer or "")
        if value is not None and not references_of_number(hops, index):
            numbers[option].add(value)
    if any(len(found) != 1 for found in numbers.values()):
        return None
    first, second = (found.pop() for found in (numbers[0], numbers[1]))
    if first == second:
        return None
    winner = 0 if (first < second) == smaller_wins(question) else 1
    firsts = _first_hops(sides)
    entity = hops[firsts[winner]].answer if winner in firsts else None
    if entity is not None and _number(entity) is None:
        return entity
    return _option_texts(question)[winner]


def references_of_number(hops: Sequence[Hop], index: int) -> bool:
    """Whether a later hop refers to hop ``index`` (0-based): then its value is a bridge, not
    the number compared."""
    return any(index + 1 in references(hop.planned, hop.number) for hop in hops[index + 1 :])


def compared_entities(question: str, hops: Sequence[Hop]) -> frozenset[str]:
    """The names the hops found for a comparison's two options, folded as
    :func:`orchestrator.checks.question.name_runs` folds them (with their parts, as
    :func:`~orchestrator.checks.question.question_names` has them): "the one that built the
    Dellcrest Bridge" and "the one that built the Wistwald Bridge" found as Tullton Ironworks
    and Gorrcombe Ironworks. The comparison tells them apart, as a question that names its
    options does (:attr:`orchestrator.checks.chain.ChainContext.paired`), so the losing
    option's line is no look-alike of the answer. Empty unless each option's first hop found a
    name (not a number). O(hops x length).

    >>> question = ("Which company was founded earlier: the one that built the Dell Bridge "
    ...     "or the one that built the Wist Bridge?")
    >>> hops = [Hop(1, "Which company built the Dell Bridge?", "", "D1.1", "Tull Ironworks",
    ...     FOUND), Hop(2, "When was #1 founded?", "", "D2.1", "1830", FOUND),
    ...     Hop(3, "Which company built the Wist Bridge?", "", "D3.1", "Gorr Ironworks", FOUND)]
    >>> sorted(compared_entities(question, hops))
    ['gorr', 'gorr ironworks', 'ironworks', 'tull', 'tull ironworks']
    """
    firsts = [hops[index] for index in _first_hops(comparison_sides(question, hops)).values()]
    values = [hop.answer for hop in firsts if hop.status == FOUND and hop.answer]
    if len(values) != 2 or any(_number(value) is not None for value in values):
        return frozenset()
    return frozenset(name for value in values for name in name_runs(value))


def _first_hops(sides: Mapping[int, int] | None) -> dict[int, int]:
    """Option -> the index of its first hop, from :func:`comparison_sides`' hop -> option."""
    firsts: dict[int, int] = {}
    for index, option in sorted((sides or {}).items()):
        firsts.setdefault(option, index)
    return firsts


def assembled_chain(hops: Sequence[Hop], answer: str) -> dict[str, object]:
    """The chain-shaped reply the hops amount to (see :func:`orchestrator.reply.parse.parse_chain`):
    each hop's sentence, with the value it gave as the step's inference, then ``answer``."""
    return {
        "steps": [{"sentence": hop.sentence, "inference": hop.answer} for hop in hops],
        "answer": answer,
    }


def assembled_join(
    question: str, hops: Sequence[Hop], answer: str, spans: Mapping[str, str]
) -> ReplyGraph | None:
    """The argument of a comparison's hops, or None when ``question`` is no comparison or a
    hop stands for neither option (:func:`comparison_sides`; the hops are then one chain,
    :func:`assembled_chain`).

    A comparison rests on two lines, not one chain: "1861" for one option and "1883" for the
    other share no word, and neither follows from the other. So each option's hops form a line
    (a hop resting on its cited sentence and on the hop before it in its line), and the answer
    rests on the last hop of each line. A hop's claim is its lookup and the value it found
    ("When was Kest Works founded? 1861"): a number alone would not say what it is the number
    of. ``spans`` maps span ids to sentences (each found hop cites one). O(hops).

    >>> question = "Which was founded earlier, Kest Works or Arl Mill?"
    >>> hops = [Hop(1, "When was Kest Works founded?", "When was Kest Works founded?",
    ...     "D1.1", "1861", FOUND), Hop(2, "When was Arl Mill founded?",
    ...     "When was Arl Mill founded?", "D2.1", "1883", FOUND)]
    >>> spans = {"D1.1": "Kest Works was founded in 1861.", "D2.1": "Arl Mill dates from 1883."}
    >>> graph = assembled_join(question, hops, "Kest Works", spans)
    >>> [(edge["src"], edge["dst"]) for edge in graph["edges"]]
    [('g1', 'i1'), ('g2', 'i2'), ('i1', 'c'), ('i2', 'c')]
    >>> {node["id"]: node["claim"] for node in graph["nodes"]}["i1"]
    'When was Kest Works founded? 1861'
    """
    sides = comparison_sides(question, hops)
    if sides is None or len(sides) != len(hops) or set(sides.values()) != {0, 1}:
        return None
    builder = GraphBuilder(spans)
    last: dict[int, str] = {}  # option -> the latest hop of its line
    for index, hop in enumerate(hops):
        if hop.sentence is None or hop.answer is None:  # only found hops are assembled
            return None
        step = f"i{hop.number}"
        builder.node(step, f"{hop.asked} {hop.answer}", "inference")
        builder.support(builder.given(hop.sentence), step)
        if sides[index] in last:
            builder.support(last[sides[index]], step)
        last[sides[index]] = step
    builder.node("c", answer, "conclusion")
    for option in sorted(last):
        builder.support(last[option], "c")
    return builder.graph(answer)


def hop_answer(question: str, hops: Sequence[Hop]) -> str | None:
    """What the hops answer, when every hop was found: the comparison's winner for a
    comparison, else the last hop's value; None otherwise."""
    if not hops or any(hop.status != FOUND for hop in hops):
        return None
    if compared_options(question):
        return comparison_answer(question, hops)
    return hops[-1].answer


def hop_summary(hops: Sequence[Hop]) -> Mapping[str, int]:
    """How many hops ended in each status, sorted by status."""
    counts: dict[str, int] = {}
    for hop in hops:
        counts[hop.status] = counts.get(hop.status, 0) + 1
    return dict(sorted(counts.items()))


def _number(text: str) -> Decimal | None:
    found = re.findall(r"-?\d+(?:\.\d+)?", text.replace(",", ""))
    if len(found) != 1:
        return None
    try:
        return Decimal(found[0])
    except InvalidOperation:  # pragma: no cover - the pattern only matches numbers
        return None


def _option_texts(question: str) -> tuple[str, str]:
    """The two options of a comparison as the question writes them, as
    :func:`orchestrator.checks.question.compared_options` finds them."""
    proper = asked(question).rstrip("?")
    cut = max(proper.rfind(","), proper.rfind(":"))
    first, second = re.split(r"\bor\b", proper[cut + 1 :])
    return first.strip(), second.strip()
