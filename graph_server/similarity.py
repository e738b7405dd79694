"""Claim normalisation and exact candidate search for near-duplicate claims.

Two claims are *similar* when the Jaccard index of their normalised token sets
reaches ``jaccard_threshold`` OR ``rapidfuzz.fuzz.ratio`` of their normalised
strings reaches ``ratio_threshold`` (on a 0-1 scale). rapidfuzz replaces the
design's ``difflib`` ratio: it is the same Indel-based similarity family,
implemented in C++ with a score cut-off, and is roughly two orders of magnitude
faster.

Finding similar pairs does not compare every pair. Both searches are exact
filters, so the pairs found are exactly those a full pairwise loop would find:

- Jaccard uses prefix filtering: with tokens ordered rarest-first, two sets with
  Jaccard >= t share a token among the first ``|x| - ceil(t*|x|) + 1`` of either;
  and their sizes are within a factor t of each other (size filter).
- The ratio search compares a claim only with claims whose length allows the
  score: ``ratio <= 2*min(la, lb) / (la + lb)``, so a claim is checked against the
  length window ``[la, la * (2 - r) / r]`` of a length-sorted list.

The slot guard's token tests (:func:`is_variant`, :func:`differ_by_substitution`) are in
:mod:`graph_server.slot_guard` and are named here too; :mod:`graph_server.dedup` applies
them to pairs the search found, so the search itself stays exact.
"""

from __future__ import annotations

import math
import re
import unicodedata
from bisect import bisect_right
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from rapidfuzz import fuzz, process

from corpus.words import STOPWORDS as STOPWORDS
from graph_server.slot_guard import TYPO_MIN_CHARS as TYPO_MIN_CHARS
from graph_server.slot_guard import TYPO_SHARED_PREFIX as TYPO_SHARED_PREFIX
from graph_server.slot_guard import differ_by_substitution as differ_by_substitution
from graph_server.slot_guard import is_variant as is_variant

NEGATIONS = frozenset({"not", "no", "never", "cannot", "n't", "without", "false"})
# Auxiliaries carry tense/modality, not content: "X runs Linux" and "X does not run
# Linux" must land on the same guard key, so they are ignored by the guards only.
AUXILIARIES = frozenset({
    "do", "does", "did", "has", "have", "had", "will", "would", "can", "could", "shall",
    "should", "may", "might", "must", "be", "been", "being",
})  # fmt: skip

CITATION_MARKER = re.compile(r"[\[(]\s*D\d+(?:\.\d+)?(?:\s*,\s*D\d+(?:\.\d+)?)*\s*[\])]")
"""A document citation written into a claim: ``[D2]``, ``(D2.3)``, ``[D1, D3]``."""
_THOUSANDS = re.compile(r"(?<![\d.])(\d{1,3})((?:,\d{3})+)(?![\d,])")
_CONTRACTION = re.compile(r"n['’]t\b")
_NUMBER = re.compile(r"^\d+(?:\.\d+)?%?$")
_IDENTIFIER = re.compile(r"^(?=.*\d)(?=.*[^\W\d_])\w+$")
_TOKEN_CHARS = re.compile(r"n't|\d+(?:\.\d+)?%?|[^\W_]+")
_INITIALISM = re.compile(r"(?<![^\W\d_])(?:[^\W\d_]\.){2,}(?![^\W\d_])")


@dataclass(frozen=True)
class ClaimKey:
    """Everything dedup needs to know about one claim text; built by :func:`claim_key`.

    Examples
    --------
    >>> key = claim_key("The server does not run 84,200 jobs [D1].")
    >>> key.text, key.negations, key.numbers
    ('server does not run 84200 jobs', 1, ('84200',))
    >>> sorted(key.content)
    ['job', 'run', 'server']
    """

    text: str
    """Normalised claim: lowercased, NFC, punctuation and stopwords removed."""
    tokens: frozenset[str]
    """The distinct words of ``text``."""
    negations: int
    """How many negation words (:data:`NEGATIONS`) the claim holds, repeats counted."""
    numbers: tuple[str, ...]
    """Numeric tokens in order of appearance, canonicalised (``84,200`` -> ``84200``)."""
    content: frozenset[str]
    """Stemmed tokens minus negations, auxiliaries and numbers: the guards' key."""
    identifiers: frozenset[str]
    """Tokens mixing letters and digits (``x9``, ``a320``): names, never merged across."""


def claim_key(claim: str) -> ClaimKey:
    """Normalise one claim. O(len(claim)).

    Not cached here: a process-wide cache would keep the text of deleted graphs
    alive. The store keeps one cache per graph, dropped with the graph.

    Parameters
    ----------
    claim : str
        A claim as written; every field of the key comes from its :func:`tokenize` words.

    Returns
    -------
    ClaimKey
        Its normalised text and tokens, negation count, numbers, guard key and identifiers.

    Examples
    --------
    Auxiliaries and a trailing inflection do not reach the guards' key; numbers are
    canonical; a token mixing letters and digits is an identifier:

    >>> key = claim_key("Acme did not pay 3.50% to the A320 fleet")
    >>> key.numbers, sorted(key.content), sorted(key.identifiers)
    (('3.5%',), ['a320', 'acme', 'fleet', 'pay'], ['a320'])
    """
    words = tokenize(claim)
    numbers = tuple(_canonical_number(w) for w in words if _NUMBER.match(w))
    content = frozenset(
        _stem(w)
        for w in words
        if w not in NEGATIONS and w not in AUXILIARIES and not _NUMBER.match(w)
    )
    return ClaimKey(
        text=" ".join(words),
        tokens=frozenset(words),
        negations=sum(1 for w in words if w in NEGATIONS),
        numbers=numbers,
        content=content,
        identifiers=frozenset(w for w in words if _IDENTIFIER.match(w)),
    )


def collapse_initialisms(text: str) -> str:
    """``text`` with each run of dotted initials written as one word: "F.C." -> "FC",
    "J.R.R." -> "JRR". Read letter by letter, "Harrow F.C." names "f" and "c", words that
    match anything. O(len(text)).

    Parameters
    ----------
    text : str
        Any text.

    Returns
    -------
    str
        ``text`` with the dots of its initialisms removed; everything else unchanged.

    Examples
    --------
    >>> collapse_initialisms("Harrow F.C. was founded in 1881.")
    'Harrow FC was founded in 1881.'
    >>> collapse_initialisms("J.R.R. Tolkien, e.g. here")
    'JRR Tolkien, eg here'
    """
    return _INITIALISM.sub(lambda m: m.group(0).replace(".", ""), text)


def normalize(claim: str) -> str:
    """The normalised string compared by the ratio test: the :func:`tokenize` words, joined
    by single spaces. O(len(claim)).

    Parameters
    ----------
    claim : str
        A claim as written.

    Returns
    -------
    str
        Its normalised text (the same as :attr:`ClaimKey.text`).

    Examples
    --------
    >>> normalize("The Server, runs 84,200 jobs!")
    'server runs 84200 jobs'
    """
    return " ".join(tokenize(claim))


def tokenize(claim: str) -> list[str]:
    """Lowercase NFC tokens with thousands separators removed and stopwords dropped.

    Punctuation is dropped except a decimal point inside a number and a trailing
    ``%``; ``n't`` is split off as its own (negation) token. Citation markers
    (:data:`CITATION_MARKER`) go first: "[D2]" says where a claim comes from, not what
    it says, and as a token mixing letters and digits it would block the merge of one
    fact cited from two places. O(len(claim)).

    Parameters
    ----------
    claim : str
        A claim as written, citation markers and all.

    Returns
    -------
    list of str
        Its words in order, repeats kept.

    Examples
    --------
    >>> tokenize("Acme didn't pay 3.50% [D2]")
    ['acme', 'did', "n't", 'pay', '3.50%']
    """
    text = unicodedata.normalize("NFC", CITATION_MARKER.sub(" ", claim))
    text = collapse_initialisms(text).lower()
    text = _THOUSANDS.sub(lambda m: m.group(1) + m.group(2).replace(",", ""), text)
    text = _CONTRACTION.sub(" n't", text)
    return [w for w in _TOKEN_CHARS.findall(text) if w not in STOPWORDS]


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """Token-set Jaccard index; 0.0 when both are empty. O(min(|a|, |b|)).

    Parameters
    ----------
    a, b : frozenset of str
        Two token sets.

    Returns
    -------
    float
        ``|a & b| / |a | b|``, between 0 and 1.

    Examples
    --------
    >>> jaccard(frozenset({"red", "car"}), frozenset({"blue", "car"}))
    0.3333333333333333
    >>> jaccard(frozenset(), frozenset())
    0.0
    """
    shared = len(a & b)
    # |a | b| by inclusion-exclusion: same integer, without building the union set.
    union = len(a) + len(b) - shared
    return shared / union if union else 0.0


def is_similar(a: ClaimKey, b: ClaimKey, jaccard_threshold: float, ratio_threshold: float) -> bool:
    """The similarity rule itself, for one pair (the search below must agree with it).

    Parameters
    ----------
    a, b : ClaimKey
        The two claims.
    jaccard_threshold : float
        The Jaccard index of their token sets that makes them similar.
    ratio_threshold : float
        The ``rapidfuzz`` ratio of their texts, on a 0-1 scale, that makes them similar.

    Returns
    -------
    bool
        Whether either score reaches its threshold; false when either claim has no token.

    Examples
    --------
    >>> red, blue = claim_key("The red car is fast"), claim_key("The blue car is fast")
    >>> is_similar(red, blue, 0.7, 0.9), is_similar(red, blue, 0.5, 0.9)
    (False, True)
    >>> is_similar(red, claim_key("The red car is very fast"), 0.7, 0.9)
    True
    """
    if not a.tokens or not b.tokens:
        return False
    if jaccard(a.tokens, b.tokens) >= jaccard_threshold:
        return True
    return fuzz.ratio(a.text, b.text) >= ratio_threshold * 100.0


def similar_pairs(
    keys: Sequence[ClaimKey], jaccard_threshold: float, ratio_threshold: float
) -> set[tuple[int, int]]:
    """All index pairs ``(i, j)``, ``i < j``, whose claims are similar.

    Exactly the pairs a pairwise ``is_similar`` loop returns, found in roughly
    O(n * w) where w is the candidate window size instead of O(n^2).

    Parameters
    ----------
    keys : sequence of ClaimKey
        The claims; those with one normalised text are searched as one.
    jaccard_threshold, ratio_threshold : float
        The thresholds of :func:`is_similar`; each prunes its own search (shared rare
        tokens, close text lengths).

    Returns
    -------
    set of tuple of int
        The similar pairs of indices into ``keys``.

    Examples
    --------
    >>> texts = ["The red car is fast", "The blue car is fast", "The red car is very fast"]
    >>> similar_pairs([claim_key(text) for text in texts], 0.7, 0.9)
    {(0, 2)}
    """
    # Identical normalised texts are similar by definition (Jaccard and ratio are
    # both 1), and they are common: one claim restated by several runs. The
    # searches therefore run over one representative per distinct text.
    same_text: dict[str, list[int]] = defaultdict(list)
    for i, key in enumerate(keys):
        if key.tokens:
            same_text[key.text].append(i)
    representatives = [members[0] for members in same_text.values()]
    found = _jaccard_pairs(keys, representatives, jaccard_threshold)
    found |= _ratio_pairs(keys, representatives, ratio_threshold)

    pairs: set[tuple[int, int]] = set()
    for members in same_text.values():
        pairs.update((a, b) for x, a in enumerate(members) for b in members[x + 1 :])
    for first, second in found:
        for a in same_text[keys[first].text]:
            for b in same_text[keys[second].text]:
                pairs.add((min(a, b), max(a, b)))
    return pairs


def pairwise_similar_pairs(
    keys: Sequence[ClaimKey], jaccard_threshold: float, ratio_threshold: float
) -> set[tuple[int, int]]:
    """Reference implementation of :func:`similar_pairs`: every pair, O(n^2).

    The oracle for tests and the benchmark baseline, and the cheapest search for a handful
    of claims (dedup uses it inside small components).

    Parameters
    ----------
    keys : sequence of ClaimKey
        The claims, each compared with every later one.
    jaccard_threshold, ratio_threshold : float
        Passed to :func:`is_similar` for every pair.

    Returns
    -------
    set of tuple of int
        The similar pairs of indices into ``keys``, as :func:`similar_pairs` finds them.

    Examples
    --------
    >>> texts = ["The red car is fast", "The blue car is fast", "The red car is very fast"]
    >>> keys = [claim_key(text) for text in texts]
    >>> pairwise_similar_pairs(keys, 0.7, 0.9) == similar_pairs(keys, 0.7, 0.9) == {(0, 2)}
    True
    """
    return {
        (i, j)
        for i in range(len(keys))
        for j in range(i + 1, len(keys))
        if is_similar(keys[i], keys[j], jaccard_threshold, ratio_threshold)
    }


def _jaccard_pairs(
    keys: Sequence[ClaimKey], usable: list[int], threshold: float
) -> set[tuple[int, int]]:
    if threshold <= 0.0:
        # Every pair reaches a zero threshold, including pairs sharing no token,
        # which the shared-token index below would never meet.
        return {(i, j) for a, i in enumerate(usable) for j in usable[a + 1 :]}
    frequency = Counter(token for i in usable for token in keys[i].tokens)
    index: dict[str, list[tuple[int, int]]] = defaultdict(list)
    pairs: set[tuple[int, int]] = set()
    for i in usable:
        size = len(keys[i].tokens)
        ordered = sorted(keys[i].tokens, key=lambda t: (frequency[t], t))
        # The epsilon keeps ceil(0.7 * 10) at 7 despite binary floating point.
        prefix = size - math.ceil(threshold * size - 1e-9) + 1
        # Size filter: Jaccard <= min/max of the two sizes, so smaller or larger
        # sets than this band cannot reach the threshold (epsilons err towards checking).
        smallest, largest = threshold * size - 1e-9, size / threshold + 1e-9
        seen: set[int] = set()
        for token in ordered[: max(prefix, 1)]:
            for j, other_size in index[token]:
                if j not in seen and smallest <= other_size <= largest:
                    seen.add(j)
                    if jaccard(keys[i].tokens, keys[j].tokens) >= threshold:
                        pairs.add((j, i))
            index[token].append((i, size))
    return pairs


def _ratio_pairs(
    keys: Sequence[ClaimKey], usable: list[int], threshold: float
) -> set[tuple[int, int]]:
    by_length = sorted(usable, key=lambda i: (len(keys[i].text), i))
    lengths = [len(keys[i].text) for i in by_length]
    texts = [keys[i].text for i in by_length]
    stretch = (2.0 - threshold) / threshold if threshold > 0 else math.inf
    cutoff = threshold * 100.0
    pairs: set[tuple[int, int]] = set()
    for position, i in enumerate(by_length):
        end = bisect_right(lengths, lengths[position] * stretch + 1e-9)
        window = texts[position + 1 : end]
        if not window:
            continue
        matches = process.extract(
            texts[position], window, scorer=fuzz.ratio, score_cutoff=cutoff, limit=None
        )
        for _text, _score, offset in matches:
            j = by_length[position + 1 + offset]
            pairs.add((min(i, j), max(i, j)))
    return pairs


def _canonical_number(token: str) -> str:
    if "." not in token:
        return token
    whole, _, rest = token.partition(".")
    percent = "%" if rest.endswith("%") else ""
    fraction = rest.rstrip("%").rstrip("0")
    return f"{whole}.{fraction}{percent}" if fraction else f"{whole}{percent}"


def _stem(word: str) -> str:
    """Strip one inflection: ``-ies`` -> ``-y``; ``-es`` after s/ch/sh/x/z; ``-ing`` or
    ``-ed`` leaving 3+ letters (a doubled final consonant undone); else a plural ``-s``
    (not ``-ss``/``-us``/``-is``). Deterministic, O(len(word)).

    Deliberately crude: enough to equate "runs"/"run", "servers"/"server" or
    "running"/"run" for the guards, never used for the similarity scores themselves.
    It does not undo a silent e ("making" -> "mak", "make" -> "make"): dropping it would
    also equate "plane" with "plan", and the guards' keys would then call a claim about a
    plan's cost a numeric contradiction of one about a plane's.
    """
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("sses", "ches", "shes", "xes", "zes")):
        return word[:-2]
    for suffix in ("ing", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            root = word[: -len(suffix)]
            # "running" -> "runn" -> "run"; "planned" -> "plann" -> "plan"
            if len(root) > 3 and root[-1] == root[-2] and root[-1] not in "lsz":
                root = root[:-1]
            return root
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word
