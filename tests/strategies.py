"""Hypothesis strategies for random argument graphs and near-duplicate claim lists.

Shared by the cross-check tests. Graph cases carry their own plain description
(nodes, edges, refuted set) so oracles can be computed from it without reading
the store back; claim lists mix paraphrases, negations, numeric variants,
punctuation and unicode so the dedup search meets its awkward inputs.
"""

from __future__ import annotations

import hashlib
import unicodedata
from dataclasses import dataclass

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

CONFIDENCE_STEPS = 20
"""Confidences are multiples of 1/20 so oracles can use exact integer capacities."""


def reproducible(max_examples: int, *also_suppressed: HealthCheck) -> settings:
    """Settings for a property test checked against an oracle: the same examples every run
    (derandomized, no example database), no deadline, and ``too_slow`` (plus
    ``also_suppressed``) not raised, since the oracles are exhaustive and slow."""
    return settings(
        max_examples=max_examples,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, *also_suppressed],
    )


@dataclass(frozen=True)
class Node:
    id: str
    type: str
    units: int
    """Confidence in twentieths."""
    run_ids: tuple[str, ...]


@dataclass(frozen=True)
class Edge:
    src: str
    dst: str
    relation: str
    units: int


@dataclass(frozen=True)
class GraphCase:
    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]
    refuted: tuple[str, ...]
    """Ids marked refuted after ingest, in this order."""
    conclusion: str
    """The id the checks are asked about (not always the conclusion-typed node)."""

    def node(self, node_id: str) -> Node:
        return next(n for n in self.nodes if n.id == node_id)


def distinct_claim(node_id: str) -> str:
    """A claim no other id's claim resembles: one 24-letter token derived from a hash.

    Letters only (no digits, so no numeric guard; no stopwords or negations), and
    two such tokens never reach the similarity thresholds, so ingest never merges.
    """
    digest = hashlib.sha256(node_id.encode()).hexdigest()[:24]
    return "".join(chr(ord("a") + int(ch, 16)) for ch in digest)


@st.composite
def argument_graphs(draw: st.DrawFn, max_nodes: int = 40) -> GraphCase:
    """Layered argument graphs: mostly edges from higher to lower index, some back edges.

    Node ``n0`` is the conclusion-typed node; higher indices lean towards givens.
    Relations are mostly supports, some assumes and attacks (half of those mutual,
    so undecided labels occur); a few nodes are refuted; the queried conclusion is
    usually ``n0`` but sometimes any node.
    """
    # Half the examples are small (exhaustive-ish corners), half fairly large.
    size = draw(st.integers(1, 8) | st.integers(9, max_nodes))
    ids = [f"n{i}" for i in range(size)]
    nodes = []
    for index, node_id in enumerate(ids):
        if index == 0:
            node_type = "conclusion"
        else:
            # Givens are likelier deeper in the layering, as in real arguments.
            given_bias = 2 + (6 * index) // size
            roll = draw(st.integers(min_value=0, max_value=9))
            node_type = "given" if roll < given_bias else "assumption" if roll == 9 else "inference"
        units = draw(st.integers(min_value=0, max_value=CONFIDENCE_STEPS))
        runs = draw(st.sets(st.sampled_from(["r1", "r2", "r3"]), min_size=1, max_size=2))
        nodes.append(Node(node_id, node_type, units, tuple(sorted(runs))))

    edges: dict[tuple[str, str, str], Edge] = {}

    def add(low: int, high: int, relation: str, backwards: bool) -> None:
        src, dst = (ids[low], ids[high]) if backwards else (ids[high], ids[low])
        units = draw(st.integers(min_value=0, max_value=CONFIDENCE_STEPS))
        edges[(src, dst, relation)] = Edge(src, dst, relation, units)

    # Every claim that is not a given leans on something a few layers deeper, so
    # evidence usually reaches the conclusion and widths above 1 are common.
    for low, node in enumerate(nodes[:-1]):
        if node.type != "given":
            high = min(size - 1, low + draw(st.integers(min_value=1, max_value=3)))
            add(low, high, "supports" if node.type != "assumption" else "assumes", False)
    # Then random extra edges: mostly short hops from a deeper claim to a shallower
    # one, sometimes a long jump, sometimes a back edge (one in `back_odds`; 0: the
    # graph stays acyclic, 3: cycles abound).
    back_odds = draw(st.sampled_from([10, 0, 3]))
    for _ in range(draw(st.integers(min_value=0, max_value=2 * size)) if size > 1 else 0):
        low = draw(st.integers(min_value=0, max_value=size - 2))
        if draw(st.integers(min_value=0, max_value=3)) == 0:
            high = draw(st.integers(min_value=low + 1, max_value=size - 1))
        else:
            high = min(size - 1, low + draw(st.integers(min_value=1, max_value=4)))
        backwards = bool(back_odds) and draw(st.integers(0, back_odds - 1)) == 0
        roll = draw(st.integers(min_value=0, max_value=9))
        relation = "supports" if roll < 6 else "assumes" if roll < 8 else "attacks"
        add(low, high, relation, backwards)
        if relation == "attacks" and draw(st.booleans()):
            add(low, high, relation, not backwards)
    refuted = draw(st.lists(st.sampled_from(ids), max_size=max(1, size // 4), unique=True))
    pick_other = draw(st.integers(min_value=0, max_value=3)) == 0
    conclusion = draw(st.sampled_from(ids)) if pick_other else "n0"
    return GraphCase(tuple(nodes), tuple(edges.values()), tuple(refuted), conclusion)


# ---------------------------------------------------------------------- claims

ENTITIES = (
    "server x9",
    "Acme Corp",
    "the Riverside clinic",
    "Zürich office",
    "trellium",
    "rack 7",
    "Dr. Müller",
    "Ωmega lab",
    "Café Noir",
    "the 2019 audit",
    "Nakamura's team",
    "Boîte Noire SA",
)
PREDICATES = (
    "runs Linux",
    "melts at {n} C",
    "employs {n} people",
    "was founded in {n}",
    "reported revenue of {n} dollars",
    "is listed in the survey",
    "can run the cron scheduler",
    "has {n} uptime",
    "passed the safety inspection",
    "is located near the river",
)
NUMBERS = ("412", "350", "84,200", "84200", "5.50", "5.5", "12%", "0.5", "2024", "1,000,000")
NEGATIONS = (
    ("runs", "does not run"),
    ("runs", "doesn't run"),
    ("runs", "doesn’t run"),
    ("is", "is not"),
    ("was", "was never"),
    ("has", "has no"),
    ("can", "cannot"),
    ("passed", "never passed"),
)
OPERATIONS = (
    "upper",
    "lower",
    "period",
    "quote",
    "stopword",
    "negate",
    "renumber",
    "nfd",
    "drop",
    "swap",
    "emoji",
    "spaces",
)


def _apply(claim: str, operation: str, pick: int) -> str:
    words = claim.split()
    if operation == "upper":
        return claim.upper()
    if operation == "lower":
        return claim.lower()
    if operation == "period":
        return claim + ".!?,;"[pick % 5]
    if operation == "quote":
        return f"“{claim}”"
    if operation == "stopword":
        words.insert(pick % (len(words) + 1), ("the", "that", "a", "it")[pick % 4])
        return " ".join(words)
    if operation == "negate":
        for plain, negated in NEGATIONS[pick % len(NEGATIONS) :] + NEGATIONS:
            if f" {plain} " in f" {claim} ":
                return f" {claim} ".replace(f" {plain} ", f" {negated} ", 1).strip()
        return "not " + claim
    if operation == "renumber":
        for number in NUMBERS:
            if number in claim:
                return claim.replace(number, NUMBERS[pick % len(NUMBERS)], 1)
        return claim
    if operation == "nfd":
        return unicodedata.normalize("NFD", claim)
    if operation == "drop" and len(words) > 1:
        del words[pick % len(words)]
        return " ".join(words)
    if operation == "swap" and len(words) > 1:
        i = pick % (len(words) - 1)
        words[i], words[i + 1] = words[i + 1], words[i]
        return " ".join(words)
    if operation == "emoji":
        return claim + " 🚀"
    if operation == "spaces":
        return claim.replace(" ", (" ", "  ", "\t", "\n")[pick % 4])
    return claim


@st.composite
def claim_lists(draw: st.DrawFn, max_size: int = 24) -> list[str]:
    """A few base claims plus variants of them, and occasionally arbitrary text."""
    bases = draw(
        st.lists(
            st.tuples(
                st.sampled_from(ENTITIES), st.sampled_from(PREDICATES), st.sampled_from(NUMBERS)
            ),
            min_size=1,
            max_size=6,
        )
    )
    base_claims = [f"{entity} {predicate.format(n=n)}" for entity, predicate, n in bases]
    claims = []
    for _ in range(draw(st.integers(min_value=1, max_value=max_size))):
        if draw(st.integers(min_value=0, max_value=11)) == 0:
            claims.append(draw(st.text(min_size=1, max_size=30)))
            continue
        claim = draw(st.sampled_from(base_claims))
        for operation in draw(st.lists(st.sampled_from(OPERATIONS), max_size=3)):
            claim = _apply(claim, operation, draw(st.integers(min_value=0, max_value=99)))
        claims.append(claim)
    return claims
