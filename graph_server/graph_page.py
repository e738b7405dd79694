"""A stored graph as one HTML page: ``export_graph`` with ``format: "html"``.

The page is :mod:`graph_server.html_view`'s, as report.html is, without what only a run knows
(the chosen answer, its arguments, the calls): every conclusion is drawn as a candidate, and
the graph's evidence spans become the documents, cited sentences marked.
"""

from __future__ import annotations

import re

from graph_server.html_view import Document, Items, NodeLink, Page, Section, render_page
from graph_server.mermaid import node_state
from graph_server.record_data import GraphData, NodeData

_SPAN = re.compile(r"D(\d+)\.(\d+)")


def graph_html(
    graph: GraphData, evidence: dict[str, str], surviving: list[str], disputed: list[str]
) -> str:
    """The page for ``graph`` and its evidence spans.

    Spans named ``D<document>.<sentence>`` are grouped into their documents in order; any
    other span ids make one last document, "other evidence".

    Parameters
    ----------
    graph : dict
        A ``get_graph`` payload: ``graph_id``, ``nodes`` (each with ``id``, ``claim``,
        ``type`` and ``refuted``; a refuted one with its ``refute_reason``) and ``edges``.
    evidence : dict of str to str
        The graph's evidence spans, id -> text.
    surviving : list of str
        The claims that survive the attacks (:func:`graph_server.semantics.surviving`).
    disputed : list of str
        The claims in a contradiction (:func:`graph_server.disputes.contradiction_pairs`).

    Returns
    -------
    str
        The HTML page (:func:`graph_server.html_view.render_page`).

    Examples
    --------
    >>> import re
    >>> nodes = [{"id": "A", "claim": "Acme paid", "type": "given", "refuted": False},
    ...          {"id": "B", "claim": "Acme is broke", "type": "inference", "refuted": True,
    ...           "refute_reason": "no evidence"},
    ...          {"id": "Z", "claim": "Acme is solvent", "type": "conclusion", "refuted": False}]
    >>> edges = [{"src": "A", "dst": "Z", "relation": "supports"}]
    >>> graph = {"graph_id": "g1", "nodes": nodes, "edges": edges}
    >>> html = graph_html(graph, {"D1.1": "Acme paid.", "note": "An aside."}, ["A"], [])
    >>> print(re.search(r'<p class="statement">(.*?)</p>', html)[1])
    Exported from the graph store; claims by status: 1 candidate, 1 refuted, 1 surviving.
    >>> re.findall(r"<h3>(.*?)</h3>", html)
    ['D1', 'other evidence']
    """
    nodes = graph["nodes"]
    conclusions = {node["id"] for node in nodes if node["type"] == "conclusion"}
    states = {
        node["id"]: node_state(node, None, conclusions, set(surviving), set(disputed))
        for node in nodes
    }
    return render_page(
        Page(
            title=f"graph {graph['graph_id']}",
            headline=f"Graph {graph['graph_id']}: {len(nodes)} claims, {len(graph['edges'])} links",
            statement=f"Exported from the graph store; claims by status: {_tally(states)}.",
            graph=graph,
            states=states,
            documents=_documents(evidence),
            sections=[_disputes(nodes, disputed)],
        )
    )


def _tally(states: dict[str, str]) -> str:
    """How many claims are in each state, states in alphabetical order ("empty" for none)."""
    counts = {
        state: sum(1 for s in states.values() if s == state) for state in set(states.values())
    }
    return ", ".join(f"{counts[state]} {state}" for state in sorted(counts)) or "empty"


def _disputes(nodes: list[NodeData], disputed: list[str]) -> Section:
    """The section listing the refuted claims with their reasons, then the disputed ones."""
    refuted = [node for node in nodes if node["refuted"]]
    return Section(
        "disputes",
        "Refuted and disputed claims",
        [
            "Refuted:",
            Items([[NodeLink(n["id"], n["id"]), f": {n['refute_reason']}"] for n in refuted]),
            "Disputed (in a contradiction):",
            Items([[NodeLink(n, n)] for n in disputed]),
        ],
    )


def _documents(evidence: dict[str, str]) -> list[Document]:
    """Spans named ``D<doc>.<sentence>`` grouped into their documents in order; any other
    span ids together in one last group."""
    grouped: dict[int, list[tuple[int, str, str]]] = {}
    other: list[tuple[str, str]] = []
    for span, text in evidence.items():
        match = _SPAN.fullmatch(span)
        if match:
            document, sentence = int(match[1]), int(match[2])
            grouped.setdefault(document, []).append((sentence, span, text))
        else:
            other.append((span, text))
    documents = [
        Document(f"D{number}", [(span, text) for _, span, text in sorted(sentences)])
        for number, sentences in sorted(grouped.items())
    ]
    if other:
        documents.append(Document("other evidence", sorted(other)))
    return documents
