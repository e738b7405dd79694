"""Sub-question retrieval: a multi-hop question's plan, checked, then retrieved hop by hop,
each later hop filled with the bridge the hop before it found.

A plan is a list of sub-questions in which ``#k`` stands for the answer of sub-question
``k`` ("Which company built the Faldcrest Bridge?", "Who or what is the founder of #1?",
"In which town was #2 born?"). This package does not make plans: the caller passes one
(``orchestrator.checks.decompose.decompose`` reads it off the question's grammar), and
:func:`check_plan` refuses one whose sub-question is about nothing the question or an
earlier hop names.

:func:`retrieve_plan` retrieves each sub-question on its own (keyword, dense when available,
fused by RRF; the chunks that name what it asks about first, :func:`names_subject`), with each
``#k`` replaced by **hop k's bridge**: from each of hop k's :data:`BRIDGE_HITS` best chunks
that name what it asks about, the first new name (:func:`corpus.entities.extract_entities`)
of its sentence that shares most relation words with hop k's query (:func:`bridge_names`;
no model). A sub-question that refers to a hop with several bridge names runs once per name,
and its rankings are interleaved (alternatives, not votes); with ``entities`` > 0, each query
also gets the entity-graph ranking of the bridge names it was filled with, as a third list.
The answer interleaves the hops' rankings and the question's own (first of each, then
second of each, ...): an RRF sum over them would lift the chunks that many hops rank in the
middle above each hop's best (measured: docs/results/multihop-retrieval.md). The question's
own best hits are kept as :func:`corpus.retrieval.retrieve` keeps them.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from corpus.embed import Embedder
from corpus.entities import FUNCTION_WORDS, entity_key, extract_entities, names_in
from corpus.evidence import split_sentences
from corpus.index import QueryGuard
from corpus.index_pin import PinnedIndex
from corpus.retrieval import (
    DEFAULT_DEPTH,
    KEEP_OWN,
    MAX_K,
    Dropped,
    Hit,
    Rankings,
    Searcher,
    check_retrieval,
    keep_own,
    own_best,
    query_terms,
    rrf_fuse,
    searching,
)

MAX_HOPS = 6
BRIDGE_HITS = 3
"""A hop's bridge is read from this many of its best chunks (one name each, from a chunk that
names what the hop asks about): a name can stand in several documents with different answers
(look-alikes, other versions), and the one the question means need not be the best ranked."""
MAX_FILLED = 4
"""A sub-question is run as at most this many queries (one per bridge name it refers to)."""
STEM_CHARS = 4
"""Words compare on their first four letters ("founder" and "founded", "headquartered"
and "head office" agree)."""
_PLACEHOLDER = re.compile(r"#(\d+)")
_CUT_SHORT = re.compile(r"\b(?:a|an|the)\W*$", re.IGNORECASE)
"""A sub-question ending on an article lost the rest of its noun phrase ("Which feature got
a?")."""


class PlanError(ValueError):
    """A plan that cannot be retrieved: its message names the sub-question and why.

    Examples
    --------
    >>> q = "In which town was the founder of Rookcombe Foundry born?"
    >>> try:
    ...     check_plan(q, ["In which town was #2 born?", "Who founded Rookcombe Foundry?"])
    ... except PlanError as exc:
    ...     print(exc)
    plan[0] 'In which town was #2 born?' refers to #2, but the first sub-question can refer
    to no earlier one
    """


@dataclass(frozen=True)
class Hop:
    """One sub-question's retrieval."""

    sub_question: str
    """As planned, with its ``#k`` placeholders."""
    queries: tuple[str, ...]
    """As run: one per choice of a bridge name of hop k for each ``#k`` (:func:`fill`)."""
    chunk_ids: tuple[str, ...]
    """Its fused ranking, best first (at most the depth)."""
    bridge: tuple[str, ...]
    """The names its best chunks give the hops that refer to it (may be empty)."""


@dataclass(frozen=True)
class PlanRetrieval:
    """The result of :func:`retrieve_plan`: the hits, best first; each hop's queries, ranking
    and bridge names; whether dense rankings were used (and why not); and the chunks dropped
    to keep the question's own best hits.

    Examples
    --------
    >>> asked = "Who founded Rookcombe Foundry?"
    >>> hop = Hop(asked, (asked,), ("foundry.md#p1c1",), ("Tamsin Vell",))
    >>> found = PlanRetrieval((), (hop,), False, "dense retrieval was turned off", ())
    >>> found.hops[0].bridge, found.dense_used
    (('Tamsin Vell',), False)
    """

    hits: tuple[Hit, ...]
    hops: tuple[Hop, ...]
    dense_used: bool
    dense_note: str
    dropped: tuple[Dropped, ...]


def check_plan(question: str, plan: Sequence[str]) -> list[str]:
    """``plan`` as a list of cleaned sub-questions, or :class:`PlanError` saying which
    sub-question is wrong and why.

    Parameters
    ----------
    question: the multi-hop question.
    plan: its sub-questions, ``#k`` standing for the answer of sub-question ``k``.

    Returns
    -------
    The sub-questions, whitespace collapsed.

    Raises
    ------
    PlanError: an empty plan or one of more than :data:`MAX_HOPS`; a sub-question that is
        blank, ends on an article (cut short: "Which feature got a?"), refers to itself or a
        later one (``#k`` with ``k`` not below its own number), names something the question
        does not name, or names nothing at all (no ``#k``, no name of the question and not
        only words of the question).

    Examples
    --------
    >>> q = "In which town was the founder of Rookcombe Foundry born?"
    >>> check_plan(q, ["Who founded Rookcombe Foundry?", "In which town was #1 born?"])
    ['Who founded Rookcombe Foundry?', 'In which town was #1 born?']
    >>> try:
    ...     check_plan(q, ["Who founded Rookcombe Foundry?", "Where is the Kest Bridge?"])
    ... except PlanError as exc:
    ...     print(exc)
    plan[1] 'Where is the Kest Bridge?' names 'kest bridge', which the question does not name
    """
    if not isinstance(question, str) or not question.strip():
        raise PlanError(f"question must be a non-empty string, got {question!r}")
    if isinstance(plan, str) or not isinstance(plan, Sequence) or not 1 <= len(plan) <= MAX_HOPS:
        raise PlanError(f"plan must be a list of 1 to {MAX_HOPS} sub-questions, got {plan!r}")
    asked = entity_key(question)
    asked_stems = _stems(question)
    return [_check_sub(number, sub, asked, asked_stems) for number, sub in enumerate(plan)]


def _check_sub(number: int, sub: object, asked: str, asked_stems: set[str]) -> str:
    """Sub-question ``number`` of a plan, whitespace collapsed, or the :class:`PlanError` of
    :func:`check_plan` (``asked``: the question's entity key; ``asked_stems``: its stems)."""
    if not isinstance(sub, str) or not sub.strip():
        raise PlanError(f"plan[{number}] must be a non-empty string, got {sub!r}")
    sub = " ".join(sub.split())
    if _CUT_SHORT.search(sub):
        raise PlanError(f"plan[{number}] {sub!r} ends on an article: it is cut short")
    names = names_in(sub)
    for name in names:
        if name.startswith("#") and not 1 <= int(name[1:]) <= number:
            raise PlanError(
                f"plan[{number}] {sub!r} refers to {name}, which is not an earlier "
                f"sub-question (it may refer to #1 to #{number})"
                if number
                else f"plan[0] {sub!r} refers to {name}, but the first sub-question "
                "can refer to no earlier one"
            )
        if not name.startswith("#") and name not in asked:
            raise PlanError(
                f"plan[{number}] {sub!r} names {name!r}, which the question does not name"
            )
    if not names and not _stems(sub) <= asked_stems:
        raise PlanError(
            f"plan[{number}] {sub!r} names nothing in the question or an earlier hop "
            "(no #k, no name of the question)"
        )
    return sub


def bridge_names(query: str, text: str) -> list[str]:
    """The name ``text`` gives in answer to ``query``, as written in ``text``, ``[]`` when it
    holds no name that ``query`` does not. Among the new names, the first by: a name holding
    a relation word of ``query`` ("Naren River" for "Which river ..."); then the name's
    sentence sharing the most relation words with ``query`` (words outside the names,
    compared on their first :data:`STEM_CHARS` letters); then a name sharing no word with the
    names of ``query`` (not "Rookcombe Works" for a question about "Rookcombe Foundry");
    then the earliest.

    Examples
    --------
    >>> bridge_names(
    ...     "Who or what is the founder of Rookcombe Foundry?",
    ...     "Rookcombe Foundry has its head office in Karnmere. "
    ...     "Rookcombe Foundry was founded by Vidar Tarvard.",
    ... )
    ['Vidar Tarvard']
    """
    wanted = _relation_stems(query)
    known = set(names_in(query))
    known_words = {word for name in known for word in name.split()}
    candidates: list[tuple[int, int, int, int, int, str]] = []
    for number, (start, end) in enumerate(split_sentences(text)):
        sentence = text[start:end]
        overlap = len(_relation_stems(sentence) & wanted)
        for position, name in enumerate(_names_as_written(sentence)):
            key = entity_key(name)
            if key in known:
                continue
            typed = bool(_stems(key) & wanted)  # "Which river ..." -> "Naren River"
            alike = bool(set(key.split()) & known_words)
            candidates.append((-typed, -overlap, alike, number, position, name))
    return [min(candidates)[-1]] if candidates else []


def names_subject(query: str, text: str) -> bool:
    """Whether ``text`` names what ``query`` asks about: one of the names of ``query`` (its
    ``#k`` placeholders aside), or ``query`` names nothing.

    >>> names_subject("Who founded Rookcombe Foundry?", "Rookcombe  foundry was founded in 1820.")
    True
    >>> names_subject("Who founded Rookcombe Foundry?", "Ostley Works was founded by Ulla Oss.")
    False
    """
    names = [name for name in names_in(query) if not name.startswith("#")]
    folded = entity_key(text)
    return not names or any(name in folded for name in names)


def _relation_stems(text: str) -> set[str]:
    """The stems (:func:`_stems`) of the words of ``text`` outside its names."""
    folded = " ".join(text.split()).casefold()
    for name in names_in(text):
        folded = folded.replace(name, " ")
    return _stems(folded)


def _names_as_written(sentence: str) -> list[str]:
    """The names of ``sentence`` in its own spelling, in order of :func:`extract_entities`."""
    folded = sentence.casefold()
    written: list[str] = []
    for key in extract_entities(sentence):
        at = folded.find(key)
        written.append(" ".join(sentence[at : at + len(key)].split()) if at >= 0 else key)
    return written


def _stems(text: str) -> set[str]:
    """The content words of ``text`` (function words dropped), cut to :data:`STEM_CHARS`."""
    return {term[:STEM_CHARS] for term in query_terms(text) if term not in FUNCTION_WORDS}


def fill(sub_question: str, bridges: Sequence[Sequence[str]]) -> list[str]:
    """The queries ``sub_question`` becomes: one per choice of a bridge name for each ``#k``
    it holds (``bridges[k-1]``; a hop that found none drops its ``#k``), in order, at most
    :data:`MAX_FILLED`.

    >>> fill("In which town was #2 born?", [["Rookcombe Foundry"], ["Vidar Tarvard", "Ulla Oss"]])
    ['In which town was Vidar Tarvard born?', 'In which town was Ulla Oss born?']
    """
    refs = sorted({int(ref) for ref in _PLACEHOLDER.findall(sub_question)})
    choices = itertools.product(*(bridges[ref - 1] or [""] for ref in refs))
    queries: list[str] = []
    for choice in itertools.islice(choices, MAX_FILLED):
        queries.append(_substitute(sub_question, dict(zip(refs, choice, strict=True))))
    return queries


def _substitute(sub_question: str, named: dict[int, str]) -> str:
    """``sub_question`` with each ``#k`` replaced by ``named[k]``, whitespace collapsed."""
    filled = _PLACEHOLDER.sub(lambda m: named[int(m.group(1))], sub_question)
    return " ".join(filled.split())


def interleave(rankings: Sequence[Sequence[str]]) -> list[str]:
    """The first of each ranking, then the second of each, ..., each id once.

    >>> interleave([["a", "b", "c"], ["d", "a", "e"]])
    ['a', 'd', 'b', 'c', 'e']
    """
    merged: dict[str, None] = {}
    for row in itertools.zip_longest(*rankings):
        merged.update((chunk, None) for chunk in row if chunk is not None)
    return list(merged)


def _asking(chunk_id: str, queries: Sequence[str], lists: Sequence[Rankings]) -> str:
    """The query of ``queries`` whose rankings (``lists``, one per query) rank ``chunk_id``
    best; the first query when none ranks it."""

    def rank(item: Rankings) -> int:
        ranks = [r.index(chunk_id) for r in item.all if chunk_id in r]
        return min(ranks, default=MAX_K * 10)

    return min(zip(queries, lists, strict=True), key=lambda pair: rank(pair[1]))[0]


def retrieve_plan(
    index_path: Path | str | PinnedIndex,
    question: str,
    plan: Sequence[str],
    k: int = 8,
    *,
    dense: bool | Embedder = False,
    entities: float = 0.0,
    keep: int = KEEP_OWN,
    depth: int = DEFAULT_DEPTH,
    guard: QueryGuard | None = None,
    variants: Sequence[str] = (),
    hyde: str | None = None,
) -> PlanRetrieval:
    """The top ``k`` chunks for ``question`` and its ``plan``, hop by hop (module docstring).
    Cost: one :func:`corpus.retrieval.retrieve` per query of each hop and one for the question.

    Parameters
    ----------
    index_path, question, k, dense, depth, guard, hyde : optional
        As for :func:`corpus.retrieval.retrieve` (``depth`` may be 0: then ``4 * k``).
    plan : sequence of str
        Sub-questions, ``#k`` standing for the answer of sub-question ``k`` (:func:`check_plan`).
    entities, keep, variants : float, int and sequence of str, optional
        Each hop's entity-graph ranking weight (0: none); the question's own best hits kept in
        the top ``k``; its rewrites (fused into its ranking; ``keep`` keeps only its own hits).

    Returns
    -------
    PlanRetrieval
        The hits, each hop's queries, ranking and bridge, and the chunks dropped for ``keep``.

    Raises
    ------
    PlanError, ValueError, CorpusIndexError
        A plan :func:`check_plan` refuses; another bad argument; an unusable index.

    Examples
    --------
    >>> from corpus import temporary_index
    >>> texts = {
    ...     "foundry.md": "Rookcombe Foundry was founded by Tamsin Vell.",
    ...     "vell.md": "Tamsin Vell was born in Harrowgate.",
    ... }
    >>> q = "In which town was the founder of Rookcombe Foundry born?"
    >>> plan = ["Who founded Rookcombe Foundry?", "In which town was #1 born?"]
    >>> with temporary_index(texts, dense=False) as index:
    ...     found = retrieve_plan(index, q, plan, k=2, dense=False)
    >>> found.hops[1].queries[0]
    'In which town was Tamsin Vell born?'
    >>> [hit.path for hit in found.hits]
    ['foundry.md', 'vell.md']
    """
    subs, phrasings = _checked(question, plan, variants, k, dense, depth, entities, keep, hyde)
    with searching(index_path, k, depth, dense, guard) as searcher:
        asked = searcher.asked(phrasings, hyde)
        hops, searched, graphs = _retrieve_hops(searcher, subs, entities)
        kept, dropped = _final(hops, asked, keep, k)
        hits = tuple(searcher.load_hits(kept, [*asked, *searched], graphs))
        return PlanRetrieval(hits, tuple(hops), *searcher.dense_state, tuple(dropped))


def _checked(
    question: str,
    plan: Sequence[str],
    variants: Sequence[str],
    k: int,
    dense: bool | Embedder,
    depth: int,
    entities: float,
    keep: int,
    hyde: str | None,
) -> tuple[list[str], list[str]]:
    """The checked sub-questions and the question's queries (it and its variants), or the
    error of :func:`retrieve_plan` for a bad argument (``depth`` may be 0 here)."""
    subs = check_plan(question, plan)
    for name, value, top in (("k", k, MAX_K), ("depth", depth, 10 * MAX_K), ("keep", keep, MAX_K)):
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= top:
            raise ValueError(f"{name} must be an integer from 0 to {top}, got {value!r}")
    if k < 1:
        raise ValueError(f"k must be an integer from 1 to {MAX_K}, got {k!r}")
    return subs, check_retrieval(question, variants, k, dense, max(depth, 1), entities, keep, hyde)


def _retrieve_hops(
    searcher: Searcher, subs: Sequence[str], entities: float
) -> tuple[list[Hop], list[Rankings], list[list[str]]]:
    """Each sub-question retrieved in turn, filled with the bridges of the hops before it;
    with every ranking made and every entity-graph ranking (for the hits' best ranks)."""
    hops: list[Hop] = []
    searched: list[Rankings] = []
    graphs: list[list[str]] = []
    for sub in subs:
        hop, lists, graph = _retrieve_hop(searcher, sub, [hop.bridge for hop in hops], entities)
        hops.append(hop)
        searched += lists
        graphs += graph
    return hops, searched, graphs


def _retrieve_hop(
    searcher: Searcher, sub: str, bridges: Sequence[Sequence[str]], entities: float
) -> tuple[Hop, list[Rankings], list[list[str]]]:
    """One sub-question: its queries (:func:`fill`) each ranked on its own (with the
    entity-graph ranking of the bridge names it was filled with), the rankings interleaved,
    and the bridge names of its best chunks; with its rankings and entity-graph rankings."""
    queries = fill(sub, bridges)
    given = [name for ref in _PLACEHOLDER.findall(sub) for name in bridges[int(ref) - 1]]
    lists = [searcher.rankings(query) for query in queries]
    fused = [searcher.fuse([one], entities=entities, seeds=0, names=given) for one in lists]
    headed = searcher.texts([chunk for pairs, _ in fused for chunk, _ in pairs], headed=True)
    ranking = interleave(
        [
            _subject_first(query, [chunk for chunk, _ in pairs], headed)
            for query, (pairs, _) in zip(queries, fused, strict=True)
        ]
    )
    bridge = _bridge(ranking[:BRIDGE_HITS], queries, lists, headed, searcher)
    return Hop(sub, tuple(queries), tuple(ranking), bridge), lists, [graph for _, graph in fused]


def _bridge(
    chunks: Sequence[str],
    queries: Sequence[str],
    lists: Sequence[Rankings],
    headed: dict[str, str],
    searcher: Searcher,
) -> tuple[str, ...]:
    """The bridge names of a hop's best ``chunks``: each chunk's answer (:func:`bridge_names`)
    to the query of ``queries`` that ranks it best, when it names what that query asks about
    (:func:`names_subject`, its section trail included: ``headed``)."""
    names: dict[str, None] = {}
    for chunk in chunks:
        query = _asking(chunk, queries, lists)
        if names_subject(query, headed.get(chunk, "")):
            names.update(dict.fromkeys(bridge_names(query, searcher.text(chunk))))
    return tuple(names)


def _subject_first(query: str, ranking: list[str], headed: dict[str, str]) -> list[str]:
    """``ranking`` with the chunks that name what ``query`` asks about (:func:`names_subject`,
    in their section trail and text: ``headed``) first, each part in its order: a chunk that
    does not name the hop's subject does not answer it, however many of its relation words
    it holds ("On which river lies Thorvby?" matches every "lies on the ... River")."""
    return sorted(ranking, key=lambda chunk: not names_subject(query, headed.get(chunk, "")))


def _final(
    hops: Sequence[Hop], asked: Sequence[Rankings], keep: int, k: int
) -> tuple[list[tuple[str, float]], list[Dropped]]:
    """The top ``k``: the hops' rankings and the question's own (``asked`` fused)
    interleaved, with the question's own best ``keep`` hits kept (:func:`keep_own`)."""
    question_ranking = [chunk for chunk, _ in rrf_fuse([r for item in asked for r in item.all])]
    order = interleave([*(hop.chunk_ids for hop in hops), question_ranking])
    final = [(chunk, 1.0 / rank) for rank, chunk in enumerate(order, 1)]
    return keep_own(final, own_best(asked[0], keep), k)
