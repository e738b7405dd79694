"""The worked shape: the argument graph of a calculation the model wrote in its own words.

A small model works a word problem out far better in plain text than as a JSON chain of cited
steps (docs/results/outside-150.md). In the worked shape the model writes its working as it
likes, with every calculation as an equation ("20 * 30 = 600"), and ends with an ``ANSWER:``
line; the system, not the model, draws the argument from it:

* each line of the working that holds equations is one **step**, a claim in the model's words;
* a step rests on what each number it starts from comes from: the question's sentence that
  states the number (a given, cited by its span id), or the earlier step that worked it out;
  a number from neither is a claim nothing supports, so the step cannot be derived;
* the **conclusion** (the answer) rests on the last step that reached its value.

Where a number may come from: the sentence that writes it (thousands separators and currency
signs aside); a percentage as its fraction too ("55%" gives 0.55); a multiplier written as a
word ("twice", "half", "a dozen", "three"); and the few constants of units and percentages in
:data:`CONSTANTS`, which need no source. Every step's equations are checked by
:mod:`orchestrator.checks.arithmetic` when the argument is judged, like any claim's.

All functions are pure and deterministic.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal

from orchestrator.checks.arithmetic import equations, normalised_numbers, side_numbers
from orchestrator.reply import (
    UNANSWERABLE,
    GraphBuilder,
    GraphParse,
    ReplyGraph,
    parse_answer,
)

MAX_STEPS = 30
"""Steps kept from one working; a longer one is cut (noted), since its later steps could only
rest on what the kept ones reached."""
MAX_STEP_CHARS = 300
"""A step's claim is its line, cut to this many characters (the line's equations are read
whole before the cut)."""
CONSTANTS = frozenset(Decimal(n) for n in ("1", "2", "7", "12", "24", "52", "60", "100", "365"))
"""Numbers a working may use without a source: one, two, and the days, months, hours,
weeks, minutes and percent that convert units."""
_WORD_NUMBERS: Mapping[str, tuple[str, ...]] = {
    "twice": ("2",),
    "double": ("2",),
    "triple": ("3",),
    "thrice": ("3",),
    "half": ("0.5", "2"),
    "quarter": ("0.25", "4"),
    "third": ("3",),
    "dozen": ("12",),
    "three": ("3",),
    "four": ("4",),
    "five": ("5",),
    "six": ("6",),
    "seven": ("7",),
    "eight": ("8",),
    "nine": ("9",),
    "ten": ("10",),
}
_WORD = re.compile(r"[a-z]+")
_PERCENT = re.compile(r"(\d+(?:\.\d+)?)\s*%")
_QUANTITY = re.compile(r"[$€£¥]?\d[\d,]*(?:\.\d+)?(?:\s*%|/\d+)?")
"""A quantity a word problem's sentence writes in digits; a fraction ("1/4") is one, used when
any of its numbers is (words such as "half" are left out: "half an hour" is an idiom as often
as a quantity)."""
_DECORATION = re.compile(r"\\[()\[\]]|[*#>`]")
"""Markdown and LaTeX markup around a line of working (bold, headings, quotes, code, math
brackets), which a step's claim leaves out."""
_TIMES = re.compile(r"(?<=[\d)%])\s*\*\s*(?=[$€£¥(]?\.?\d|\()")
"""A ``*`` between two operands: a multiplication, which the claim keeps ("3 * 4 = 12", not
"3 4 = 12"), unlike a ``*`` of bold or a bullet."""
_PREFIX = "s"
"""Step node ids are ``s1``, ``s2`` ...; givens ``g<n>``, unsupported numbers ``u<n>``, unused
quantities ``q<n>``."""


@dataclass(frozen=True)
class _Step:
    """One line of working: its text, the numbers it starts from, the values it reaches."""

    text: str
    starts_from: tuple[Decimal, ...]
    reaches: frozenset[Decimal]


def sentence_numbers(sentence: str) -> frozenset[Decimal]:
    """The numbers a question sentence gives a working: those it writes, a percentage's
    fraction as well, and its multiplier words.

    Examples
    --------
    >>> sorted(sentence_numbers("The price rose 55% in twice the time."))
    [Decimal('0.55'), Decimal('2'), Decimal('55')]
    """
    found = set(normalised_numbers(sentence))
    found.update(Decimal(value) / 100 for value in _PERCENT.findall(sentence.replace(",", "")))
    for word in _WORD.findall(sentence.lower()):
        found.update(Decimal(value) for value in _WORD_NUMBERS.get(word, ()))
    return frozenset(found)


def _worked_steps(text: str) -> list[_Step]:
    """The lines of ``text`` that hold equations, in order, each with the numbers it starts
    from (those no earlier equation of the same line computed) and the values it reaches."""
    steps = []
    for line in _continued(text.splitlines()):
        found = equations(line)
        if not found:
            continue
        starts: list[Decimal] = []
        reached: set[Decimal] = set()
        for left, right, left_value, right_value in found:
            for side, value in ((left, left_value), (right, right_value)):
                leaves, computed = side_numbers(side)
                starts.extend(n for n in leaves if n not in reached)
                reached.update(computed)
                reached.add(value)
        steps.append(_Step(_undecorated(line), tuple(dict.fromkeys(starts)), frozenset(reached)))
    return steps


def _undecorated(line: str) -> str:
    r"""``line`` as a step's claim: its markup left out, multiplications kept, one space
    between words.

    >>> _undecorated("**Step 1:** 3 * 4 = 12 pens")
    'Step 1: 3 * 4 = 12 pens'
    >>> _undecorated("* Total: \\(2*(5 + 1) = 12\\)")
    'Total: 2 * (5 + 1) = 12'
    """
    held = "\x00"  # stands for a kept "*" while the markup goes
    kept = _TIMES.sub(f" {held} ", line)
    return " ".join(_DECORATION.sub(" ", kept).split()).replace(held, "*")


def _continued(lines: list[str]) -> list[str]:
    """``lines`` with each line that opens with ``=`` joined to the line before it: a
    calculation set out over several lines ("= (360 / 1440) * 100", "= 0.25 * 100", "= 25%")
    is one chain of equalities, whose left sides are on the earlier lines."""
    joined: list[str] = []
    for line in lines:
        if joined and _DECORATION.sub(" ", line).strip().startswith("="):
            joined[-1] = f"{joined[-1]} {line.strip()}"
        else:
            joined.append(line)
    return joined


def worked_graph(
    text: str,
    spans: Mapping[str, str],
    *,
    max_steps: int = MAX_STEPS,
    every_quantity: bool = False,
) -> tuple[ReplyGraph | None, list[str]]:
    """The argument graph of a worked reply ``text`` (module docstring), and notes on what
    it could not use; ``spans`` maps the question's span ids to its sentences.

    The graph is None when the reply has no final answer (an ``ANSWER:`` line, "the answer
    is ...", or a boxed value); a declined answer ("unknown") concludes
    :data:`~orchestrator.reply.UNANSWERABLE`. A number no sentence states and no
    earlier step reached becomes an unsupported claim ("the number 17, stated nowhere in the
    question"), so the step using it, and everything resting on that step, has no derivation.
    A conclusion whose value no step reached rests on the sentence that states it, if one
    does, and else on nothing. With ``every_quantity`` (a word problem, whose sentences are
    the problem itself), each quantity a sentence states that the conclusion's derivation
    never starts from becomes one more premise of the conclusion, a claim nothing supports
    ("the 25 that D1.2 states is not needed for the answer"): a working that leaves a given
    quantity out has solved some other problem unless that claim holds, and the system cannot
    show it does. Cost: O(len(text) + steps x spans).
    """
    parsed = parse_answer(text)
    if parsed.refused:
        answer = UNANSWERABLE
    elif parsed.value is not None and parsed.format in ("line", "phrase"):
        answer = parsed.value
    else:  # a short reply taken whole is an answer elsewhere, but no working
        return None, ["the working ends with no answer line"]
    notes: list[str] = []
    steps = _worked_steps(text)
    if len(steps) > max_steps:
        notes.append(f"steps: {len(steps)} calculations, limit {max_steps}; the rest dropped")
        steps = steps[:max_steps]
    stated = {span_id: sentence_numbers(sentence) for span_id, sentence in spans.items()}
    builder = _Builder(spans)
    for index, step in enumerate(steps, 1):
        step_id = f"{_PREFIX}{index}"
        builder.node(step_id, step.text[:MAX_STEP_CHARS], "inference")
        for number in step.starts_from:
            source = _source(number, stated, steps[: index - 1], builder)
            if source is not None:
                builder.support(source, step_id)
    builder.node("c", answer, "conclusion")
    value = _number(answer)
    reached = [i for i, step in enumerate(steps, 1) if value is not None and value in step.reaches]
    if reached:
        builder.support(f"{_PREFIX}{reached[-1]}", "c")
    elif value is not None and (span_id := _stating(value, stated)) is not None:
        builder.support(builder.given(span_id), "c")
    elif value is None:
        notes.append(f"the answer {answer!r} is no number, and a working reads calculations only")
    else:
        notes.append(f"the answer {answer!r} is no value the working reached")
    if every_quantity and value is not None:
        notes += _premise_per_unused_quantity(builder, steps, spans, value)
    return builder.graph(answer), notes


def _premise_per_unused_quantity(
    builder: _Builder, steps: list[_Step], spans: Mapping[str, str], value: Decimal
) -> list[str]:
    """Make each quantity of ``spans`` that the conclusion's derivation never starts from one
    more premise of the conclusion, a claim nothing supports; a note for each."""
    notes = []
    for span_id, number in _unused_quantities(spans, _derivation_numbers(builder, steps, value)):
        builder.support(builder.unneeded(span_id, number), "c")
        notes.append(f"the working never uses the {_plain(number)} that {span_id} states")
    return notes


def _derivation_numbers(builder: _Builder, steps: list[_Step], value: Decimal) -> set[Decimal]:
    """The numbers the conclusion's derivation starts from: those of the steps it rests on,
    through the steps they rest on; the answer itself when no step reached it."""
    rests_on: dict[str, set[str]] = {}
    for edge in builder.edges:
        rests_on.setdefault(edge["dst"], set()).add(edge["src"])
    used, seen, todo = {value}, set(), list(rests_on.get("c", ()))
    while todo:
        node_id = todo.pop()
        if node_id in seen or not node_id.startswith(_PREFIX):
            continue
        seen.add(node_id)
        used.update(steps[int(node_id[len(_PREFIX) :]) - 1].starts_from)
        todo.extend(rests_on.get(node_id, ()))
    return used


def _unused_quantities(spans: Mapping[str, str], used: set[Decimal]) -> list[tuple[str, Decimal]]:
    """Each quantity written in digits in ``spans`` (span id, its number), in order, of which
    no reading is in ``used`` (a percentage may be used as its fraction). A quantity of 1 is
    never one: multiplying or dividing by it changes nothing, so a working may use it unsaid
    ("he uses 1 kg a day": 7 days are 7 kg)."""
    unused = []
    for span_id, sentence in spans.items():
        for mention in _QUANTITY.findall(sentence):
            readings = sentence_numbers(mention)
            if readings and not readings & used and readings != {Decimal(1)}:
                unused.append((span_id, max(readings)))
    return unused


def parse_worked(
    text: str, spans: Mapping[str, str], *, every_quantity: bool = False
) -> GraphParse:
    """A worked reply read as :func:`worked_graph` reads it: outcome ``strict`` with the
    graph, or ``dropped`` when the reply names no answer. There is no JSON to repair."""
    graph, notes = worked_graph(text, spans, every_quantity=every_quantity)
    return GraphParse("strict" if graph is not None else "dropped", graph, tuple(notes))


class _Builder(GraphBuilder):
    """A worked graph's builder: each number stated nowhere becomes one unsupported claim."""

    def __init__(self, spans: Mapping[str, str]) -> None:
        super().__init__(spans)
        self._unsupported: dict[Decimal, str] = {}
        self._unneeded = 0

    def unneeded(self, span_id: str, number: Decimal) -> str:
        """A claim nothing supports: that the quantity ``number`` of ``span_id`` plays no
        part in the answer."""
        self._unneeded += 1
        node_id = f"q{self._unneeded}"
        claim = f"the {_plain(number)} that {span_id} states is not needed for the answer"
        self.node(node_id, claim, "inference")
        return node_id

    def unsupported(self, number: Decimal) -> str:
        if number not in self._unsupported:
            self._unsupported[number] = f"u{len(self._unsupported) + 1}"
            claim = f"the number {_plain(number)}, stated nowhere in the question"
            self.node(self._unsupported[number], claim, "inference")
        return self._unsupported[number]


def _source(
    number: Decimal, stated: Mapping[str, frozenset[Decimal]], earlier: list[_Step], b: _Builder
) -> str | None:
    """The node a step's starting ``number`` rests on: the sentence stating it, else the
    latest earlier step that reached it, else nothing for a constant of :data:`CONSTANTS`
    (None), else an unsupported claim. A constant the question states still rests on its
    sentence ("Charlotte eats 2 times as much" for 2 x 2 = 4): a step resting on nothing
    at all would be an orphan, derived from nothing."""
    span_id = _stating(number, stated)
    if span_id is not None:
        return b.given(span_id)
    for index in range(len(earlier), 0, -1):
        if number in earlier[index - 1].reaches:
            return f"{_PREFIX}{index}"
    return None if number in CONSTANTS else b.unsupported(number)


def _stating(number: Decimal, stated: Mapping[str, frozenset[Decimal]]) -> str | None:
    """The first span (in the question's order) that states ``number``, or None."""
    return next((span_id for span_id, numbers in stated.items() if number in numbers), None)


def _number(answer: str) -> Decimal | None:
    """The answer's value when it is a number ("$186", "186 pages"), else None."""
    numbers = normalised_numbers(answer)
    if not numbers:
        return None
    return -numbers[0] if answer.strip().startswith("-") else numbers[0]


def _plain(value: Decimal) -> str:
    return format(value.normalize(), "f")
