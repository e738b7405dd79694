"""Which claim pairs can merge at all, found without comparing every pair.

A pair of claims merges only if three things hold (see :mod:`graph_server.dedup`):
they agree on their *signature* (negation parity, numbers in order, identifier
tokens such as ``x9``), their content words pass the slot guard, and they are
similar. The first two are cheap to index, so the search starts from them:

- **Signature blocks.** Claims with different signatures never merge, so each
  block is searched on its own, and a claim alone in its block is not searched at
  all. Templated rows ("invoice 1042 ... lists 18 pallets") usually fall into
  blocks of one.
- **Content-word index.** The slot guard lets a pair through only when one claim's
  content words are all present in the other, or are one-edit typos of a word
  there (:func:`graph_server.similarity.is_variant`). So for every claim A, the
  claims B whose content covers A's are the intersection, over A's content words
  w, of the postings of w and of w's typo variants. The intersection starts from
  the rarest word and stops once a handful of candidates is left; each candidate
  is then checked with the exact rules, so the result is exactly the set of
  mergeable pairs (no pair is lost: every mergeable pair has a side whose content
  the other covers, and that side's query finds it).

Cost: O(total content words) to build the index, plus for each claim the size
of its smallest posting intersection. That is near-linear unless many claims
share all their content words (restatements of one claim, which do merge).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence

from graph_server.similarity import ClaimKey
from graph_server.slot_guard import TYPO_MIN_CHARS, TYPO_SHARED_PREFIX, is_variant

Signature = tuple[int, tuple[str, ...], frozenset[str]]
_ENOUGH = 4
"""Stop intersecting postings once this few candidates are left; they are checked exactly."""


def signature(key: ClaimKey) -> Signature:
    """What two claims must share to be mergeable: negation parity, numbers, identifiers.

    Parameters
    ----------
    key : ClaimKey
        A claim as :func:`~graph_server.similarity.claim_key` normalised it.

    Returns
    -------
    tuple
        ``(negations % 2, numbers, identifiers)``.

    Examples
    --------
    >>> from graph_server.similarity import claim_key
    >>> signature(claim_key("The x9 did not ship 40 units"))
    (1, ('40',), frozenset({'x9'}))
    """
    return (key.negations % 2, key.numbers, key.identifiers)


def block_numbers(keys: Sequence[ClaimKey], usable: Iterable[int]) -> dict[int, int]:
    """Signature block number of each usable claim whose block holds another claim.

    Blocks are numbered in order of first appearance. A claim alone in its block can
    merge with nothing, so it is left out of the search altogether. O(len(usable)).

    Parameters
    ----------
    keys : sequence of ClaimKey
        The claims.
    usable : iterable of int
        The indices into ``keys`` to block.

    Returns
    -------
    dict of int to int
        Block number by claim index, for the claims that share their block.

    Examples
    --------
    The negated claim and the one about 12 invoices are alone in their blocks:

    >>> from graph_server.fixture import INVOICES
    >>> from graph_server.similarity import claim_key
    >>> keys = [claim_key(text) for text in INVOICES]
    >>> block_numbers(keys, range(len(keys)))
    {0: 0, 1: 0, 2: 0}
    >>> block_numbers(keys, [0, 3, 4])
    {}
    """
    numbers: dict[Signature, int] = {}
    block_of: dict[int, int] = {}
    sizes: list[int] = []
    for i in usable:
        number = numbers.setdefault(signature(keys[i]), len(numbers))
        if number == len(sizes):
            sizes.append(0)
        sizes[number] += 1
        block_of[i] = number
    return {i: number for i, number in block_of.items() if sizes[number] > 1}


class Variants:
    """Typo variants (:func:`is_variant`) of a word among a fixed vocabulary, memoised.

    Only alphabetic words of at least ``TYPO_MIN_CHARS`` characters can have one.
    Words holding digits are stems of identifiers, which are part of the signature
    and so shared by both claims of any pair in a block. Words are bucketed by their
    shared prefix and length; a query looks at the lengths one shorter, equal and
    one longer. O(bucket size) per distinct query word.

    Parameters
    ----------
    words : iterable of str
        The vocabulary.

    Examples
    --------
    >>> variants = Variants(["ferrowell", "ferowell", "acme", "acne"])
    >>> variants.of("ferrowell"), variants.of("acme")
    (('ferowell',), ())
    """

    def __init__(self, words: Iterable[str]) -> None:
        self._buckets: dict[tuple[str, int], list[str]] = defaultdict(list)
        for word in set(words):
            if _may_have_variants(word):
                self._buckets[(word[:TYPO_SHARED_PREFIX], len(word))].append(word)
        self._memo: dict[str, tuple[str, ...]] = {}

    def of(self, word: str) -> tuple[str, ...]:
        """The typo variants of ``word`` in the vocabulary (``word`` itself excluded).

        Parameters
        ----------
        word : str
            Any word, in the vocabulary or not.

        Returns
        -------
        tuple of str
            The variants, sorted; empty for a short or non-alphabetic word.

        Examples
        --------
        >>> variants = Variants(["ferrowell", "ferowell", "ferrowood"])
        >>> variants.of("ferrowel")
        ('ferrowell',)
        >>> variants.of("ferowell"), variants.of("x9000000")
        (('ferrowell',), ())
        """
        found = self._memo.get(word)
        if found is None:
            found = ()
            if _may_have_variants(word):
                prefix, size = word[:TYPO_SHARED_PREFIX], len(word)
                found = tuple(
                    sorted(
                        other
                        for length in (size - 1, size, size + 1)
                        for other in self._buckets.get((prefix, length), ())
                        if other != word and is_variant(word, other)
                    )
                )
            self._memo[word] = found
        return found


def _may_have_variants(word: str) -> bool:
    return len(word) >= TYPO_MIN_CHARS and word.isalpha()


class ContentIndex:
    """Postings ``(signature, content word) -> claim indices`` over chosen claims.

    Parameters
    ----------
    keys : sequence of ClaimKey
        The claims.
    signatures : sequence of int
        The signature block number of each claim (:func:`block_numbers`), by index.
    members : iterable of int
        The indices of the claims to index.

    Attributes
    ----------
    variants : Variants
        The typo variants among the indexed claims' content words.

    Examples
    --------
    >>> from graph_server.fixture import invoice_claims
    >>> keys, signatures = invoice_claims()  # 0-2 restate one payment, 3-4 block alone
    >>> index = ContentIndex(keys, signatures, [0, 1, 2])
    >>> sorted(index.covering(keys[0], signatures[0]))
    [0, 1, 2]
    """

    def __init__(
        self, keys: Sequence[ClaimKey], signatures: Sequence[int], members: Iterable[int]
    ) -> None:
        self._postings: dict[tuple[int, str], set[int]] = defaultdict(set)
        self._blocks: dict[int, list[int]] = defaultdict(list)
        words: set[str] = set()
        for i in members:
            sig = signatures[i]
            self._blocks[sig].append(i)
            content = keys[i].content
            for word in content:
                self._postings[(sig, word)].add(i)
            words |= content
        self.variants = Variants(words)

    def covering(self, key: ClaimKey, sig: int) -> Iterable[int]:
        """Indexed claims of signature ``sig`` whose content holds every content word of
        ``key`` or a typo variant of it (a superset of those; callers check exactly).

        Parameters
        ----------
        key : ClaimKey
            The query claim.
        sig : int
            Its signature block number.

        Returns
        -------
        iterable of int
            Indices of indexed claims, ``key``'s own included when it is indexed; every claim
            of the block when ``key`` has no content word.

        Examples
        --------
        Claim 2 ("... to Ferowell") covers claim 1 ("... to Ferrowell") through the typo:

        >>> from graph_server.fixture import invoice_claims
        >>> keys, signatures = invoice_claims()
        >>> index = ContentIndex(keys, signatures, [0, 1, 2])
        >>> sorted(index.covering(keys[1], signatures[1]))
        [1, 2]
        """
        if not key.content:
            return self._blocks.get(sig, ())
        options: list[tuple[int, str, list[set[int]]]] = []
        for word in key.content:
            sets = [
                posting
                for form in (word, *self.variants.of(word))
                if (posting := self._postings.get((sig, form)))
            ]
            if not sets:
                return ()
            options.append((sum(len(s) for s in sets), word, sets))
        options.sort(key=lambda option: option[:2])
        found: set[int] | None = None
        for _size, _word, sets in options:
            expanded = sets[0] if len(sets) == 1 else set().union(*sets)
            found = expanded if found is None else found & expanded
            if len(found) <= _ENOUGH:
                break
        return found if found is not None else ()


def covering_pairs(
    keys: Sequence[ClaimKey],
    queries: Iterable[int],
    index: ContentIndex,
    signatures: Sequence[int],
    accept: Callable[[int, int], None],
    checkpoint: Callable[[], None] = lambda: None,
) -> None:
    """Call ``accept(i, j)`` for each query claim ``i`` and each indexed claim ``j != i``
    that covers it (see :meth:`ContentIndex.covering`).

    Parameters
    ----------
    keys : sequence of ClaimKey
        The claims.
    queries : iterable of int
        The indices of the claims to query.
    index : ContentIndex
        The indexed claims.
    signatures : sequence of int
        The signature block number of each claim, by index.
    accept : callable
        Called with each candidate pair ``(i, j)``; both orders of a pair may come.
    checkpoint : callable, optional
        Runs every 256 queries (the store's cancellation check); what it raises ends the call.

    Examples
    --------
    >>> from graph_server.fixture import invoice_claims
    >>> keys, signatures = invoice_claims()
    >>> index = ContentIndex(keys, signatures, [0, 1, 2])
    >>> pairs = []
    >>> covering_pairs(keys, [0, 1, 2], index, signatures, lambda i, j: pairs.append((i, j)))
    >>> sorted(pairs)
    [(0, 1), (0, 2), (1, 2), (2, 1)]
    """
    for count, i in enumerate(queries):
        if count % 256 == 0:
            checkpoint()
        for j in index.covering(keys[i], signatures[i]):
            if j != i:
                accept(i, j)
