"""Evidence spans: a task's documents cut into sentences with short, stable ids.

A *span* is one sentence of one document, addressed as ``D<document>.<sentence>`` (both
1-based): ``D2.3`` is the third sentence of the second document. Givens cite spans, the
prompts show the evidence as numbered spans, and the report quotes them, so the split must be
deterministic (same text, same ids) and must not cut inside an abbreviation ("Dr. Kell"), a
decimal ("3.5 kg"), an initial ("J. Marsh") or a quotation.

Splitting rules, in order:

1. A blank line, or a line that starts a list item or a Markdown heading, always ends a
   sentence: documents often carry headings and bullet points without final punctuation.
2. Inside a block, a sentence ends at ``.``, ``!`` or ``?`` (one or more), optionally followed
   by closing quotes or brackets, then whitespace, then a character that can open a sentence
   (an upper-case letter, a digit, an opening quote or bracket).
3. A ``.`` does not end a sentence after a known abbreviation (:data:`ABBREVIATIONS`) or a
   single upper-case initial.

Cost: O(len(text)) per document.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

from corpus.reference import sentence_readings

ABBREVIATIONS = frozenset({
    "approx", "apr", "aug", "ave", "co", "corp", "dec", "dept", "dr", "e.g", "est", "etc",
    "feb", "fig", "ft", "gen", "i.e", "inc", "jan", "jr", "jul", "jun", "ltd", "mar", "mr",
    "mrs", "ms", "mt", "nov", "oct", "prof", "rev", "sep", "sept", "sr", "st", "u.k", "u.s",
    "vol", "vs",
})  # fmt: skip
"""Lower-case words that a full stop follows without ending the sentence."""

_BLOCK_BREAK = re.compile(r"\n[ \t]*\n|\n(?=[ \t]*(?:[-*+•]|\d+[.)]|#+)[ \t])")
# A stop starts only where a run of punctuation starts, and its runs are taken possessively:
# without that, a long run such as "....." is re-scanned from every position in it.
_END = re.compile(r"(?<![.!?])[.!?]++[\"'”’)\]]*+(?=\s+[\"'“‘(\[]?[A-Z0-9])")
_WORD_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz.")
_CLOSERS = "\"'”’)]"
_SPAN_ID = re.compile(r"^D([1-9][0-9]*)\.([1-9][0-9]*)$")


@dataclass(frozen=True)
class Span:
    """One sentence of one document."""

    id: str
    """``D<document>.<sentence>``, both numbers 1-based."""
    document: int
    sentence: int
    text: str
    """The sentence with its whitespace collapsed to single spaces."""
    start: int
    end: int
    """Character offsets of the sentence in its document (``document[start:end]``)."""
    reading: str | None = None
    """What the mechanical checks read instead of :attr:`text`, when it differs: the sentence
    without the title line it runs into, with the document's subject in brackets after an
    opening "It" or "The mill" and its document's :attr:`heading` in brackets at its end
    (:mod:`corpus.reference`); None when it reads as it stands. Prompts keep :attr:`text`;
    a stored given says :attr:`statement`."""
    statement: str | None = None
    """What a given citing the sentence says: :attr:`reading` without the heading
    (:func:`corpus.reference.statements`), so that "It was founded in 1790." in one document
    and "It was founded in 1815." in another are two subjects' years in a graph, not rival
    readings of one claim; None when the sentence states it as it stands."""
    heading: str = ""
    """What the sentence's document stands under when it is a piece of a longer file (a
    retrieved chunk's section trail or file title), ``""`` for none: prompts show it once
    above the document."""

    @property
    def checked_text(self) -> str:
        """:attr:`reading` when there is one, else :attr:`text`."""
        return self.reading or self.text


@dataclass(frozen=True)
class Evidence:
    """Every span of a task's documents, in document and sentence order."""

    spans: tuple[Span, ...]

    @property
    def ids(self) -> tuple[str, ...]:
        """Span ids in order (the enum a given's ``source`` is constrained to)."""
        return tuple(span.id for span in self.spans)

    @cached_property
    def by_id(self) -> dict[str, Span]:
        """Span id -> span."""
        return {span.id: span for span in self.spans}

    def get(self, span_id: object) -> Span | None:
        """The span with this id, or None (also for non-string input)."""
        if not isinstance(span_id, str):
            return None
        return self.by_id.get(span_id.strip())

    def render(self, order: Sequence[int] | None = None) -> str:
        """The evidence for a prompt: one ``[D1.2] sentence`` line per span, a blank line
        between documents; ``(no documents)`` when there is none. A document with a
        :attr:`Span.heading` opens with one uncitable line naming it (:func:`heading_line`).
        ``order`` (document numbers, 1-based) shows the documents in another order, each span
        keeping its id: a run made different by what it sees rather than by sampling
        (:func:`shuffled_order`). Documents ``order`` leaves out are not shown.

        >>> evidence = build_evidence(["Added in: v18.3.0.", "Rack 7 is in hall B."],
        ...                           headings=["Net > socket.end()", ""])
        >>> print(evidence.render(order=[2, 1]))
        [D2.1] Rack 7 is in hall B.
        <BLANKLINE>
        (D1 is under the heading: Net > socket.end())
        [D1.1] Added in: v18.3.0.
        """
        if not self.spans:
            return "(no documents)"
        by_document: dict[int, list[Span]] = {}
        for span in self.spans:
            by_document.setdefault(span.document, []).append(span)
        shown = list(order) if order is not None else sorted(by_document)
        lines: list[str] = []
        for number in shown:
            for index, span in enumerate(by_document.get(number, ())):
                # A heading line opens its document, even when its first sentence is left out.
                headed = index == 0 and bool(span.heading)
                if lines and (span.sentence == 1 or headed):
                    lines.append("")
                if headed:
                    lines.append(heading_line(span.document, span.heading))
                lines.append(f"[{span.id}] {span.text}")
        return "\n".join(lines) if lines else "(no documents)"


def heading_line(document: int, heading: str) -> str:
    """The line shown above document ``document`` standing under ``heading``: plainly not a
    ``[D<i>.<j>]`` span line, so that it cannot be cited.

    >>> heading_line(2, "Git v2.23 Release Notes")
    '(D2 is under the heading: Git v2.23 Release Notes)'
    """
    return f"(D{document} is under the heading: {heading})"


def split_sentences(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` offsets of the sentences of ``text`` (see the module rules).

    Leading and trailing whitespace is outside every span; empty pieces are skipped.
    """
    if not isinstance(text, str):
        raise ValueError(f"text must be a string, got {type(text).__name__}")
    pieces: list[tuple[int, int]] = []
    block_start = 0
    for brk in [*_BLOCK_BREAK.finditer(text), None]:
        block_end = brk.start() if brk else len(text)
        cut = block_start
        for stop in _END.finditer(text, block_start, block_end):
            if _is_abbreviation(text, cut, stop.end()):
                continue
            pieces.append((cut, stop.end()))
            cut = stop.end()
        pieces.append((cut, block_end))
        block_start = brk.end() if brk else len(text)
    spans: list[tuple[int, int]] = []
    for start, end in pieces:
        chunk = text[start:end]
        stripped = chunk.strip()
        if stripped:
            offset = start + len(chunk) - len(chunk.lstrip())
            spans.append((offset, offset + len(stripped)))
    return spans


def build_evidence(documents: Sequence[str], headings: Sequence[str] | None = None) -> Evidence:
    """Split every document into spans ``D<i>.<j>``; a document with no text has none.

    ``headings[i]`` is what document ``i + 1`` stands under (``""``: nothing), when the
    documents are pieces of longer files (retrieved chunks, :attr:`corpus.retrieval.Hit.heading`):
    its spans carry it as :attr:`Span.heading` and are read under it
    (:func:`corpus.reference.sentence_readings`). None (the default): no document has a heading.
    """
    if headings is not None and len(headings) != len(documents):
        raise ValueError(f"{len(headings)} headings for {len(documents)} documents")
    spans: list[Span] = []
    for doc_no, document in enumerate(documents, 1):
        heading = headings[doc_no - 1] if headings is not None else ""
        pieces = split_sentences(document)
        read = sentence_readings(document, pieces, heading)
        for sent_no, ((start, end), (reading, statement)) in enumerate(
            zip(pieces, read, strict=True), 1
        ):
            spans.append(
                Span(
                    id=f"D{doc_no}.{sent_no}",
                    document=doc_no,
                    sentence=sent_no,
                    text=" ".join(document[start:end].split()),
                    start=start,
                    end=end,
                    reading=reading,
                    statement=statement,
                    heading=heading,
                )
            )
    return Evidence(tuple(spans))


def shuffled_order(count: int, seed: int) -> tuple[int, ...]:
    """A permutation of the document numbers ``1..count`` fixed by ``seed``, never the given
    order when ``count`` > 1: documents sorted by the SHA-256 of ``(seed, number)`` (stable
    across Python versions, unlike :mod:`random`), rotated by one when that sorting leaves them
    as they were. O(count log count).

    >>> shuffled_order(4, 2) != (1, 2, 3, 4) and sorted(shuffled_order(4, 2)) == [1, 2, 3, 4]
    True
    """
    numbers = sorted(
        range(1, count + 1),
        key=lambda n: hashlib.sha256(f"{seed}:{n}".encode()).hexdigest(),
    )
    if count > 1 and numbers == list(range(1, count + 1)):
        numbers = numbers[1:] + numbers[:1]
    return tuple(numbers)


def is_span_id(value: object) -> bool:
    """Whether ``value`` has the shape of a span id (``D2.3``); it may still not exist."""
    return isinstance(value, str) and _SPAN_ID.match(value.strip()) is not None


def _is_abbreviation(text: str, start: int, end: int) -> bool:
    """Whether the full stop ending ``text[start:end]`` belongs to an abbreviation or an
    initial: the last word (letters and dots, from its first letter) of the piece, before its
    closing quotes or brackets, is one letter in upper case or is in :data:`ABBREVIATIONS`.

    Only the tail of the piece is read, never the whole piece: a sentence that keeps going
    past many initials ("hall D. ... hall D. ...") would otherwise be re-read at every stop.
    The word before a stop holds no whitespace and a stop is followed by whitespace, so the
    tails read for the stops of one text do not overlap: O(len(text)) over a whole split.
    """
    while end > start and text[end - 1] in _CLOSERS:
        end -= 1
    if end == start or text[end - 1] != ".":
        return False
    run = end
    while run > start and text[run - 1] in _WORD_CHARS:
        run -= 1
    while run < end and text[run] == ".":
        run += 1
    if run == end:
        return False
    word = text[run : end - 1]
    if len(word) == 1 and word.isupper():
        return True
    return word.lower().rstrip(".") in ABBREVIATIONS
