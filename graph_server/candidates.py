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

from graph_server.similarity import TYPO_MIN_CHARS, TYPO_SHARED_PREFIX, ClaimKey, is_variant

Signature = tuple[int, tuple[str, ...], frozenset[str]]
_ENOUGH = 4
"""Stop intersecting postings once this few candidates are left; they are checked exactly."""


def signature(key: ClaimKey) -> Signature:
    """What two claims must share to be mergeable: negation parity, numbers, identifiers."""
    return (key.negations % 2, key.numbers, key.identifiers)


def block_numbers(keys: Sequence[ClaimKey], usable: Iterable[int]) -> dict[int, int]:
    """Signature block number of each usable claim whose block holds another claim.

    Blocks are numbered in order of first appearance. A claim alone in its block can
    merge with nothing, so it is left out of the search altogether.
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
    """

    def __init__(self, words: Iterable[str]) -> None:
        self._buckets: dict[tuple[str, int], list[str]] = defaultdict(list)
        for word in set(words):
            if _may_have_variants(word):
                self._buckets[(word[:TYPO_SHARED_PREFIX], len(word))].append(word)
        self._memo: dict[str, tuple[str, ...]] = {}

    def of(self, word: str) -> tuple[str, ...]:
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
    """Postings ``(signature, content word) -> claim indices`` over chosen claims."""

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
    that covers it (see :meth:`ContentIndex.covering`). ``checkpoint`` runs every 256
    queries (the store's cancellation check).
    """
    for count, i in enumerate(queries):
        if count % 256 == 0:
            checkpoint()
        for j in index.covering(keys[i], signatures[i]):
            if j != i:
                accept(i, j)
