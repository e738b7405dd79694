"""A stored graph as one HTML page: ``export_graph`` with ``format: "html"``.

The page is :mod:`graph_server.html_view`'s, as report.html is, without what only a run knows
(the chosen answer, its arguments, the calls): every conclusion is drawn as a candidate, and
the graph's evidence spans become the documents, cited sentences marked.
"""

from __future__ import annotations

import re
from typing import Any

from graph_server.html_view import Document, Items, NodeLink, Page, Section, render_page
from graph_server.mermaid import node_state

_SPAN = re.compile(r"D(\d+)\.(\d+)")


def graph_html(
    graph: dict[str, Any], evidence: dict[str, str], surviving: list[str], disputed: list[str]
) -> str:
    """The page for ``graph`` (a ``get_graph`` payload) and its evidence spans (id -> text)."""
    nodes = graph["nodes"]
    conclusions = {node["id"] for node in nodes if node["type"] == "conclusion"}
    states = {
        node["id"]: node_state(node, None, conclusions, set(surviving), set(disputed))
        for node in nodes
    }
    refuted = [node for node in nodes if node["refuted"]]
    counts = {
        state: sum(1 for s in states.values() if s == state) for state in set(states.values())
    }
    summary = ", ".join(f"{counts[state]} {state}" for state in sorted(counts)) or "empty"
    return render_page(
        Page(
            title=f"graph {graph['graph_id']}",
            headline=f"Graph {graph['graph_id']}: {len(nodes)} claims, {len(graph['edges'])} links",
            statement=f"Exported from the graph store; claims by status: {summary}.",
            graph=graph,
            states=states,
            documents=_documents(evidence),
            sections=[
                Section(
                    "disputes",
                    "Refuted and disputed claims",
                    [
                        "Refuted:",
                        Items(
                            [
                                [NodeLink(n["id"], n["id"]), f": {n['refute_reason']}"]
                                for n in refuted
                            ]
                        ),
                        "Disputed (in a contradiction):",
                        Items([[NodeLink(n, n)] for n in disputed]),
                    ],
                )
            ],
        )
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
