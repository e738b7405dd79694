"""Function words that carry no content: dropped from claim keys and from search queries.

One list for both users: :mod:`graph_server.similarity` (claim keys, so "the pump" and "a
pump" compare equal) and :mod:`corpus.retrieval` (the search words of a query). It lives in
the lowest layer so that both can import it.
"""

from __future__ import annotations

STOPWORDS = frozenset(
    {
        "a",
        "an",
        "and",
        "are",
        "at",
        "in",
        "is",
        "it",
        "of",
        "on",
        "that",
        "the",
        "this",
        "to",
        "was",
        "were",
    }
)
"""Lower-case function words."""
