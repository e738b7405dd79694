"""The mechanical citation check: is a ``given`` really what the span it cites says?

A model's ``given`` is only a claim with a ``source`` (a span id, such as the orchestrator's
``D2.3`` from :mod:`corpus.evidence`, or a span an MCP agent registered with
``add_evidence``). It becomes a given in the graph when, in this order:

1. it names a source at all (else ``citation_missing``);
2. the source is a span of this task (else ``citation_unknown``);
3. every number of the claim occurs in the span (else ``number_mismatch``);
4. every name-like word of the claim occurs in the span, compared case-insensitively (else
   ``name_mismatch``): words with a capital letter (except a function word opening the
   sentence) and words mixing letters and digits (``x9``);
5. the claim is lexically contained in the span (else ``quote_mismatch``): at least
   :data:`MIN_CONTAINMENT` of its content words (stemmed, without stopwords) occur in the
   span, and the claim and the span hold the same negation words (a claim that adds "not"
   or drops it says the opposite).

Rules 3 and 4 catch the misquotes that matter most (a wrong year, "Ferrowood" for
"Ferrowell"); rule 5 catches a claim that borrows a span's names but says something else.
docs/orchestrator.md gives the measurement behind :data:`MIN_CONTAINMENT`.

:func:`anchor_citation` adds one repair: when the cited span fails but exactly one other span
of the task passes every rule (best containment first, measured as rule 5 measures it: against
the span's reading too), the given is anchored to that span and the report says which number
the model wrote. Small models copy a sentence faithfully and then
write the number of its neighbour; what the claim says is still checked against the documents,
only the pointer is mended. A given with no source at all is not searched for.

A claim that fails stays in the graph as an ``assumption`` (a premise nothing supports) and the
reason is reported, so a bad citation can never ground an answer but is never silently lost.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from graph_server.similarity import (
    CITATION_MARKER,
    NEGATIONS,
    ClaimKey,
    claim_key,
    collapse_initialisms,
)

CITATION_MISSING = "citation_missing"
CITATION_UNKNOWN = "citation_unknown"
NUMBER_MISMATCH = "number_mismatch"
NAME_MISMATCH = "name_mismatch"
QUOTE_MISMATCH = "quote_mismatch"
REASONS = (CITATION_MISSING, CITATION_UNKNOWN, NUMBER_MISMATCH, NAME_MISMATCH, QUOTE_MISMATCH)

MIN_CONTAINMENT = 0.75
"""Share of a given's content words that must occur in its span (see docs/orchestrator.md)."""

_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
_OPENERS = frozenset({
    "a", "according", "after", "all", "also", "an", "and", "are", "as", "at", "because",
    "before", "both", "but", "by", "did", "do", "does", "each", "every", "finally", "first",
    "for", "from", "he", "hence", "her", "here", "his", "how", "if", "in", "into", "is",
    "it", "its", "next", "no", "now", "on", "one", "or", "she", "since", "so", "some",
    "that", "the", "their", "then", "there", "therefore", "these", "they", "this", "those",
    "thus", "to", "was", "we", "were", "what", "when", "where", "which", "while", "who",
    "whom", "whose", "why", "yes",
})  # fmt: skip
"""Function words that are capitalised only because they open the claim ("If James has 14
friends", "So Mara Vance ..."), and the question words that open a lookup ("Who invented the
silhorn?" names nothing but the silhorn)."""


class Span(Protocol):
    """What the check needs of a span: its id, its text and, where it differs, its reading
    (:attr:`corpus.evidence.Span.reading`: "It (Harrow Mill) was founded ...").

    Examples
    --------
    :class:`TextSpan` is one:

    >>> span: Span = TextSpan("D1.1", "It was founded in 1790.", reading="Harrow Mill")
    >>> span.id, span.reading
    ('D1.1', 'Harrow Mill')
    """

    @property
    def id(self) -> str: ...

    @property
    def text(self) -> str: ...

    @property
    def reading(self) -> str | None: ...


class Evidence(Protocol):
    """What the check needs of the evidence: spans in order, and a lookup by id (None for an
    unknown id or a non-string).

    Examples
    --------
    :class:`SpanTable` is one:

    >>> evidence: Evidence = SpanTable({"D1.1": "Harrow Mill was founded in 1790."})
    >>> [span.id for span in evidence.spans]
    ['D1.1']
    """

    @property
    def spans(self) -> Sequence[Span]: ...

    def get(self, span_id: object) -> Span | None:
        """The span named ``span_id``.

        Parameters
        ----------
        span_id : object
            A span id as a model wrote it (any value).

        Returns
        -------
        Span or None
            The span, or None for an unknown id or a non-string.

        Examples
        --------
        >>> evidence: Evidence = SpanTable({"D1.1": "Harrow Mill was founded in 1790."})
        >>> evidence.get("D1.1").text, evidence.get("D9"), evidence.get(7)
        ('Harrow Mill was founded in 1790.', None, None)
        """


@dataclass(frozen=True)
class TextSpan:
    """A span known only by id and text (the store's registered evidence).

    Examples
    --------
    >>> TextSpan("D1.1", "Harrow Mill was founded in 1790.")
    TextSpan(id='D1.1', text='Harrow Mill was founded in 1790.', reading=None)
    """

    id: str
    text: str
    reading: str | None = None


@dataclass(frozen=True)
class SpanTable:
    """Registered spans, id -> text, as :class:`Evidence` for the checks.

    ``spans`` lists them as :class:`TextSpan` in the order of ``texts``.

    Examples
    --------
    >>> table = SpanTable({"D1.1": "Harrow Mill was founded in 1790.", "D1.2": "It closed."})
    >>> [span.id for span in table.spans]
    ['D1.1', 'D1.2']
    """

    texts: dict[str, str]

    @property
    def spans(self) -> Sequence[Span]:
        return [TextSpan(span_id, text) for span_id, text in self.texts.items()]

    def get(self, span_id: object) -> Span | None:
        """The span named ``span_id`` in ``texts``.

        Parameters
        ----------
        span_id : object
            A span id as a model wrote it; surrounding whitespace is ignored.

        Returns
        -------
        Span or None
            A :class:`TextSpan` with the stripped id, or None for an unknown id or a
            non-string.

        Examples
        --------
        >>> table = SpanTable({"D1.1": "Harrow Mill was founded in 1790."})
        >>> table.get(" D1.1 ")
        TextSpan(id='D1.1', text='Harrow Mill was founded in 1790.', reading=None)
        >>> table.get("D9"), table.get(["D1.1"])
        (None, None)
        """
        if not isinstance(span_id, str):
            return None
        text = self.texts.get(span_id.strip())
        return None if text is None else TextSpan(span_id.strip(), text)


@dataclass(frozen=True)
class CitationCheck:
    """Outcome of :func:`check_citation`: ``reason`` is None exactly when the citation holds.

    Attributes
    ----------
    reason : str or None
        The failed rule (one of :data:`REASONS`), or None.
    detail : str
        What was checked, in words, for the report.
    span : Span or None
        The span the claim was checked against (None when it names no known span).
    corrected_from : str or None
        See below.
    ok : bool
        Whether the claim may stand as a given (``reason is None``).

    Examples
    --------
    >>> check = CitationCheck(NUMBER_MISMATCH, "number(s) ['1791'] do not occur in D1.1", None)
    >>> check.ok, CitationCheck(None, "restates D1.1", None).ok
    (False, True)
    """

    reason: str | None
    detail: str
    span: Span | None
    corrected_from: str | None = None
    """The span id the model wrote, when :func:`anchor_citation` moved the citation."""

    @property
    def ok(self) -> bool:
        """Whether the claim may stand as a given."""
        return self.reason is None


def check_citation(
    claim: str, source: object, evidence: Evidence, *, min_containment: float = MIN_CONTAINMENT
) -> CitationCheck:
    """Check one given (``claim`` citing span id ``source``) against ``evidence``.

    Cost: O(len(claim) + len(span)).

    Parameters
    ----------
    claim : str
        The given's text.
    source : object
        The span id it cites, as the model wrote it (a non-string or ``"none"`` names none).
    evidence : Evidence
        The spans of the task.
    min_containment : float, optional
        Rule 5's threshold (changed only to measure the rule).

    Returns
    -------
    CitationCheck
        The first failing rule of the module docstring, or an ok check holding the span.

    Examples
    --------
    >>> evidence = SpanTable({"D1.1": "Harrow Mill was founded in 1790 by Ada Korick."})
    >>> check_citation("Harrow Mill was founded in 1790", "D1.1", evidence).detail
    'restates D1.1'
    >>> for claim, source in [
    ...     ("Harrow Mill was founded in 1790", None),
    ...     ("Harrow Mill was founded in 1790", "D9"),
    ...     ("Harrow Mill was founded in 1791", "D1.1"),
    ...     ("Ferrowood Mill was founded in 1790", "D1.1"),
    ...     ("Korick founded a bakery in 1790", "D1.1"),
    ...     ("Harrow Mill was not founded in 1790", "D1.1"),
    ... ]:
    ...     print(check_citation(claim, source, evidence).reason)
    citation_missing
    citation_unknown
    number_mismatch
    name_mismatch
    quote_mismatch
    quote_mismatch
    """
    if not isinstance(source, str) or not source.strip() or source.strip().lower() == "none":
        return CitationCheck(CITATION_MISSING, "the given names no source span", None)
    span = evidence.get(source)
    if span is None:
        return CitationCheck(
            CITATION_UNKNOWN, f"{source.strip()!r} is not a known evidence span", None
        )
    failed = _misquote(CITATION_MARKER.sub(" ", claim), span, min_containment)
    if failed is None:
        return CitationCheck(None, f"restates {span.id}", span)
    return CitationCheck(*failed, span)


def _reading(span: Span) -> str:
    """What a claim citing ``span`` is checked and ranked against: its text and its reading.

    A claim may name what the sentence's opening "It" stands for: the words of its reading
    count as the span's own ("Harrow Mill was founded in 1790" cites "It was founded in 1790").
    """
    return f"{span.text} {span.reading}" if span.reading else span.text


def _misquote(text: str, span: Span, min_containment: float) -> tuple[str, str] | None:
    """The first of rules 3 to 5 that ``text`` breaks against ``span``, as (reason, detail)."""
    read = _reading(span)
    said, quoted = claim_key(text), claim_key(read)
    missing_numbers = sorted(set(said.numbers) - set(quoted.numbers))
    if missing_numbers:
        return NUMBER_MISMATCH, f"number(s) {missing_numbers} do not occur in {span.id}"
    span_words = {_name_form(word) for word in _WORD.findall(read)}
    missing_names = [word for word in name_words(text) if _name_form(word) not in span_words]
    if missing_names:
        return NAME_MISMATCH, f"name(s) {missing_names} do not occur in {span.id}"
    problem = _quote_problem(said, quoted, span.id, min_containment)
    return None if problem is None else (QUOTE_MISMATCH, problem)


def _quote_problem(
    said: ClaimKey, quoted: ClaimKey, span_id: str, min_containment: float
) -> str | None:
    """Why rule 5 fails (too few of the claim's words in the span, a negation added or
    dropped), or None when the claim is lexically contained in the span."""
    share = containment(said.content, quoted.content)
    if share < min_containment:
        return (
            f"only {share:.0%} of the claim's words occur in {span_id} "
            f"(at least {min_containment:.0%} needed)"
        )
    added = sorted((said.tokens & NEGATIONS) - quoted.tokens)
    if added:
        return f"negation {added} does not occur in {span_id}"
    dropped = sorted((quoted.tokens & NEGATIONS) - said.tokens)
    if dropped:
        return f"negation {dropped} of {span_id} is missing from the claim"
    return None


def anchor_citation(claim: str, source: object, evidence: Evidence) -> CitationCheck:
    """:func:`check_citation`, then the repair of the module docstring when the cited span
    fails. Cost: O(spans) citation checks when the cited span fails, else one.

    Parameters
    ----------
    claim : str
        The given's text.
    source : object
        The span id it cites, as the model wrote it.
    evidence : Evidence
        The spans of the task.

    Returns
    -------
    CitationCheck
        The check against the cited span when it holds, names no source, or no single other
        span passes; else an ok check holding that span, with ``corrected_from`` set to
        ``source``.

    Examples
    --------
    The model copied the sentence of D1.2 but wrote D1.1:

    >>> evidence = SpanTable(
    ...     {"D1.1": "Harrow Mill was founded in 1790.", "D1.2": "Harrow Mill closed in 1905."}
    ... )
    >>> check = anchor_citation("Harrow Mill closed in 1905", "D1.1", evidence)
    >>> check.ok, check.span.id, check.corrected_from
    (True, 'D1.2', 'D1.1')
    >>> check.detail
    'restates D1.2 (cited as D1.1: number_mismatch)'
    >>> anchor_citation("Harrow Mill closed in 1906", "D1.1", evidence).reason
    'number_mismatch'
    """
    check = check_citation(claim, source, evidence)
    if check.ok or check.reason == CITATION_MISSING:
        return check
    said = claim_key(claim).content
    passing = [
        (containment(said, claim_key(_reading(span)).content), span)
        for span in evidence.spans
        if check_citation(claim, span.id, evidence).ok
    ]
    best = max((share for share, _ in passing), default=None)
    winners = [span for share, span in passing if share == best]
    if len(winners) != 1:
        return check
    cited = source.strip() if isinstance(source, str) else repr(source)
    detail = f"restates {winners[0].id} (cited as {cited}: {check.reason})"
    return CitationCheck(None, detail, winners[0], corrected_from=cited)


def name_words(text: str) -> list[str]:
    """Name-like words of ``text`` in order, each once: capitalised words (a function word
    opening the text excepted) and words that mix letters and digits. O(len(text)).

    Parameters
    ----------
    text : str
        A claim.

    Returns
    -------
    list of str
        The words as written; dotted initials are one word ("F.C." is "FC").

    Examples
    --------
    >>> name_words("The x9 engine of Harrow F.C. and the Harrow fleet")
    ['x9', 'Harrow', 'FC']
    """
    found: list[str] = []
    for position, word in enumerate(_WORD.findall(collapse_initialisms(text))):
        has_digit = any(char.isdigit() for char in word)
        has_alpha = any(char.isalpha() for char in word)
        capitalised = any(char.isupper() for char in word)
        if position == 0 and word.casefold() in _OPENERS:
            continue
        if (capitalised or (has_digit and has_alpha)) and word not in found:
            found.append(word)
    return found


def _name_form(word: str) -> str:
    # Possessives and a plural "s" do not change the name: "Korick's" cites "Korick".
    folded = word.casefold().replace("’", "'")
    for suffix in ("'s", "s'", "s"):
        if folded.endswith(suffix) and len(folded) > len(suffix) + 2:
            return folded[: -len(suffix)]
    return folded


def containment(claim_words: frozenset[str], span_words: frozenset[str]) -> float:
    """Share of ``claim_words`` found in ``span_words`` (1.0 for a claim with no content).

    Parameters
    ----------
    claim_words, span_words : frozenset of str
        The content words of the claim and of the span (:attr:`ClaimKey.content
        <graph_server.similarity.ClaimKey.content>`).

    Returns
    -------
    float
        ``|claim_words & span_words| / |claim_words|``, between 0 and 1.

    Examples
    --------
    >>> containment(frozenset({"mill", "found", "bakery"}), frozenset({"mill", "found"}))
    0.6666666666666666
    >>> containment(frozenset(), frozenset({"mill"}))
    1.0
    """
    if not claim_words:
        return 1.0
    return len(claim_words & span_words) / len(claim_words)
