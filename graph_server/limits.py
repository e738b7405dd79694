"""The store's enums, defaults and hard limits, defined once.

The store, the MCP tool schemas (graph_server.tools) and their descriptions all read them
from here (or from :mod:`graph_server.validation`, which names them again).
"""

from __future__ import annotations

from dataclasses import dataclass

from corpus.limits import MAX_SEARCH_K as MAX_SEARCH_K

NODE_TYPES = ("given", "inference", "assumption", "conclusion")
RELATIONS = ("supports", "attacks", "assumes")
DEFAULT_CONFIDENCE = 0.8
DEFAULT_JACCARD_THRESHOLD = 0.7
"""Word-overlap score at or above which two claims count as duplicates."""
DEFAULT_RATIO_THRESHOLD = 0.85
"""Character-similarity score (0..1) at or above which two claims count as duplicates."""
DEFAULT_SEARCH_K = 5
"""Chunks ``search_evidence`` returns when no ``k`` is given."""
MAX_SEARCH_QUERY_CHARS = 1_000
"""Longest ``search_evidence`` query (the corpus layer enforces it)."""
EXPORT_FORMATS = ("graphml", "json", "mermaid", "html")
"""What ``export_graph`` writes (graph_server.export)."""


@dataclass(frozen=True)
class StoreLimits:
    """Hard limits; every one is enforced with an error that names it.

    Examples
    --------
    >>> limits = StoreLimits(max_id_chars=3)
    >>> limits.max_id_chars, limits.max_graphs
    (3, 1000)
    >>> from graph_server.validation import normalise_id
    >>> normalise_id("id", "ABCD", limits)
    (None, "id 'ABCD' is longer than the limit of 3 characters")
    """

    max_graphs: int = 1_000
    max_nodes_per_graph: int = 20_000
    max_edges_per_graph: int = 100_000
    max_claim_chars: int = 2_000
    max_id_chars: int = 200
    max_reason_chars: int = 2_000
    max_items_per_call: int = 50_000
    max_claim_bytes: int = 200_000_000
    """Memory budget: UTF-8 bytes of claim text held across all graphs together."""
    max_request_seconds: float = 30.0
    """Longest an argument search (``argument_width``) may run for one request; past it
    the call ends with an error naming this limit. The search is memoised and capped in
    work too, so this bites only on very large graphs."""
    max_rival_claims: int = 32
    """Largest group of claims that differ only in one number (or only in negation) whose
    pairs dedup turns into mutual attacks. A bigger group is a list of different things
    ("rack 1" ... "rack 2000"), not rival readings of one value: its claims stay apart,
    with no attack edges, and the reply's ``contradictions_withheld`` says so. Without
    this cap n such claims make n(n-1) attack edges."""
