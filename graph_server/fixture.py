"""The canonical rack-7 fixture: a small argument graph with known answers.

Used by the demo (``python -m graph_server.demo``), the tests, the MCP tests and
the benchmarks, so every layer is checked against the same hand-computed graph.
Run r1 argues that server x9 can take the nightly cron job; run r2 adds one
unsupported objection that attacks the survey's coverage.
"""

from __future__ import annotations

import re
from typing import Any, cast

import networkx as nx

from graph_server.candidates import block_numbers
from graph_server.html_view import Block, Page, Section, render_page
from graph_server.record_data import GraphData
from graph_server.similarity import ClaimKey, claim_key
from graph_server.store import GraphStore

CONCLUSION = "Z"

R1_NODES: list[dict[str, Any]] = [
    {
        "id": "A",
        "type": "given",
        "claim": "the survey covers every server in rack 7",
        "confidence": 0.9,
    },
    {
        "id": "B",
        "type": "given",
        "claim": "server x9 is listed in the rack 7 survey",
        "confidence": 0.9,
    },
    {
        "id": "C",
        "type": "inference",
        "claim": "server x9 was included in the survey",
        "confidence": 0.85,
    },
    {
        "id": "D",
        "type": "given",
        "claim": "the survey marks server x9 as running linux",
        "confidence": 0.9,
    },
    {
        "id": "E",
        "type": "inference",
        "claim": "server x9 can run the cron scheduler",
        "confidence": 0.8,
    },
    {
        "id": "Z",
        "type": "conclusion",
        "claim": "server x9 can be used for the nightly cron job",
        "confidence": 0.8,
    },
    {"id": "F", "type": "inference", "claim": "rack 7 has spare capacity", "confidence": 0.6},
]
R1_EDGES: list[dict[str, Any]] = [
    {"src": src, "dst": dst, "relation": "supports", "confidence": confidence}
    for src, dst, confidence in [
        ("A", "C", 0.9),
        ("B", "C", 0.9),
        ("C", "E", 0.8),
        ("D", "E", 0.85),
        ("E", "Z", 0.8),
        ("D", "Z", 0.7),
    ]
]
R2_NODES: list[dict[str, Any]] = [
    {
        "id": "G",
        "type": "inference",
        "claim": "the rack 7 survey is outdated and unreliable",
        "confidence": 0.6,
    },
]
# Models often write "from"/"to"; the fixture uses that spelling for r2 on purpose.
R2_EDGES: list[dict[str, Any]] = [
    {"from": "G", "to": "A", "relation": "attacks", "confidence": 0.6}
]

RUNS: list[tuple[str, list[dict[str, Any]], list[dict[str, Any]]]] = [
    ("r1", R1_NODES, R1_EDGES),
    ("r2", R2_NODES, R2_EDGES),
]
TRELLIUM: list[tuple[str, str, str]] = [
    ("n1", "Trellium melts at 412 C", "r1"),
    ("n2", "Trellium melts at 412 C.", "r2"),
    ("n3", "Trellium melts at 350 C", "r3"),
]
"""Two wordings of one reading and a rival reading, as ``(node id, claim, run id)`` rows."""
INVOICES: list[str] = [
    "Acme paid 40 invoices",
    "Acme has paid 40 invoices to Ferrowell",
    "Acme paid 40 invoices to Ferowell",
    "Acme did not pay 40 invoices",
    "Apex paid 12 invoices",
]
"""One payment said three ways (one with a typo), its negation and an unrelated claim."""


def rack7_store(graph_id: str = "rack7") -> GraphStore:
    """A fresh store holding the fixture's two runs under ``graph_id`` (for examples).

    Parameters
    ----------
    graph_id : str, optional
        The id the fixture is stored under.

    Returns
    -------
    GraphStore
        A store holding that one graph: the runs r1 and r2, asserted with dedup.

    Examples
    --------
    >>> rack7_store().list_graphs().graphs[0].nodes
    8
    """
    store = GraphStore()
    for run_id, nodes, edges in RUNS:
        store.assert_graph(graph_id, nodes, edges, run_id=run_id)
    return store


def claims_graph(rows: list[tuple[str, str, str]] = TRELLIUM) -> nx.MultiDiGraph:
    """A stored argument graph of unlinked inferences, as the dedup examples read it.

    Parameters
    ----------
    rows : list of tuple of str, optional
        One ``(node id, claim, run id)`` per node (default: :data:`TRELLIUM`).

    Returns
    -------
    networkx.MultiDiGraph
        One inference node per row, with the attributes the store keeps (confidence 0.8,
        no aliases, not refuted) and no edges.

    Examples
    --------
    >>> graph = claims_graph()
    >>> sorted(graph.nodes), graph.nodes["n2"]["claim"], graph.nodes["n2"]["run_ids"]
    (['n1', 'n2', 'n3'], 'Trellium melts at 412 C.', {'r2'})
    """
    graph = nx.MultiDiGraph()
    for node, claim, run in rows:
        attributes = {"aliases": [], "merged_ids": [], "confidence": 0.8, "refuted": False}
        graph.add_node(node, claim=claim, run_ids={run}, type="inference", **attributes)
    return graph


def invoice_claims(texts: list[str] = INVOICES) -> tuple[list[ClaimKey], list[int]]:
    """The claims of ``texts`` as the candidate search reads them (the candidates examples).

    Parameters
    ----------
    texts : list of str, optional
        The claims (default: :data:`INVOICES`).

    Returns
    -------
    keys : list of ClaimKey
        Each claim normalised (:func:`graph_server.similarity.claim_key`).
    signatures : list of int
        Each claim's signature block number (:func:`graph_server.candidates.block_numbers`),
        -1 for a claim alone in its block.

    Examples
    --------
    >>> keys, signatures = invoice_claims()
    >>> signatures, keys[1].content == keys[0].content | {"ferrowell"}
    ([0, 0, 0, -1, -1], True)
    """
    keys = [claim_key(text) for text in texts]
    blocks = block_numbers(keys, range(len(keys)))
    return keys, [blocks.get(i, -1) for i in range(len(keys))]


def joint_premises_graph() -> nx.MultiDiGraph:
    """A conclusion ``t`` that run r1 drew from givens ``a`` and ``b`` together, and run r2
    from ``c`` alone: two arguments, ``{a, b}`` and ``{c}`` (the argument examples).

    Returns
    -------
    networkx.MultiDiGraph
        Nodes ``a``, ``b``, ``c`` (givens) and ``t`` (the conclusion), none refuted, and
        their three supports edges.

    Examples
    --------
    >>> sorted(joint_premises_graph().in_edges("t", data="run_ids"))
    [('a', 't', {'r1'}), ('b', 't', {'r1'}), ('c', 't', {'r2'})]
    """
    graph = nx.MultiDiGraph()
    for node, kind in [("a", "given"), ("b", "given"), ("c", "given"), ("t", "conclusion")]:
        graph.add_node(node, type=kind, refuted=False)
    for src, run in [("a", "r1"), ("b", "r1"), ("c", "r2")]:
        graph.add_edge(src, "t", "supports", run_ids={run})
    return graph


def acme_graph() -> dict[str, Any]:
    """A two-claim graph as ``get_graph`` gives it, for the page examples: the given ``A``
    ("Acme paid its debts", citing span D1.1) supports the conclusion ``Z`` ("Acme is
    solvent").

    Returns
    -------
    dict
        ``nodes`` and ``edges``, a fresh copy each call.

    Examples
    --------
    >>> [node["id"] for node in acme_graph()["nodes"]], acme_graph()["edges"][0]["relation"]
    (['A', 'Z'], 'supports')
    """
    return {
        "nodes": [
            {"id": "A", "claim": "Acme paid its debts", "type": "given", "source": "D1.1"},
            {"id": "Z", "claim": "Acme is solvent", "type": "conclusion"},
        ],
        "edges": [{"src": "A", "dst": "Z", "relation": "supports"}],
    }


def acme_page(**parts: Any) -> str:
    """The HTML page of :func:`acme_graph` for "Is Acme solvent?", no claim states given,
    with ``parts`` (sections, documents, ...) added: the page examples' one line.

    Parameters
    ----------
    **parts
        Further fields of :class:`graph_server.html_view.Page`.

    Returns
    -------
    str
        :func:`graph_server.html_view.render_page` of that page.

    Examples
    --------
    >>> acme_page().startswith("<!DOCTYPE html>")
    True
    """
    graph = cast(GraphData, acme_graph())  # the page reads only the keys it holds
    return render_page(Page("t", "Acme", "Is Acme solvent?", graph, {}, **parts))


def acme_notes(pattern: str, *blocks: Block) -> list[str]:
    """What matches ``pattern`` in :func:`acme_page` with ``blocks`` shown as a section
    "Notes" (key ``notes``): the block examples' one line.

    Parameters
    ----------
    pattern : str
        A regular expression (:func:`re.findall` semantics).
    *blocks : Block
        The section's paragraphs, tables and lists, in order.

    Returns
    -------
    list
        Every match, in page order.

    Examples
    --------
    >>> acme_notes(r"<h2>Notes</h2><p>.*?</p>", "Paid.")
    ['<h2>Notes</h2><p>Paid.</p>']
    """
    return re.findall(pattern, acme_page(sections=[Section("notes", "Notes", blocks)]))


def support_chain() -> nx.MultiDiGraph:
    """A small stored graph for the check examples: givens ``A`` and ``B`` support the
    claim ``C``, which supports the conclusion ``Z``.

    Returns
    -------
    networkx.MultiDiGraph
        Four unrefuted nodes (confidence 0.9, run r1) and three supports edges (0.8).

    Examples
    --------
    >>> sorted(support_chain().edges(keys=True))
    [('A', 'C', 'supports'), ('B', 'C', 'supports'), ('C', 'Z', 'supports')]
    """
    graph = nx.MultiDiGraph()
    for node, kind in [("A", "given"), ("B", "given"), ("C", "claim"), ("Z", "conclusion")]:
        graph.add_node(node, type=kind, refuted=False, confidence=0.9, run_ids=["r1"])
    supports = [("A", "C"), ("B", "C"), ("C", "Z")]
    graph.add_edges_from([(u, v, "supports") for u, v in supports], confidence=0.8)
    return graph
