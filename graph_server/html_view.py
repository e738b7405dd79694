"""One self-contained HTML page for an argument graph: report.html and ``export_graph`` html.

The page works offline and alone: the drawing is SVG made at build time
(:mod:`graph_server.svg_graph`), the style and the script are inlined from the files beside this
module, and a Content-Security-Policy allows nothing but those two (by hash) and the page's
own data: no request can leave it, and an injected ``<script>`` would not run even if escaping
failed. The escaping itself is in one place: a caller describes its sections as text, tables
and node links (:class:`Section`), never as HTML.

The same :class:`Page` always gives the same bytes (no time, no randomness, ids by index).
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from graph_server.record_data import GraphData
from graph_server.svg_graph import (
    NODE_H,
    NODE_W,
    Drawing,
    RefusedLink,
    argument_colour,
    draw,
    esc,
)

STATES = ("chosen", "candidate", "surviving", "disputed", "refuted", "unsupported")
LARGE = 150
"""Above this many claims the page opens on the answer's arguments rather than on all."""
STATE_WORDS = {
    "chosen": "chosen answer",
    "candidate": "other candidate",
    "surviving": "surviving",
    "disputed": "disputed",
    "refuted": "refuted",
    "unsupported": "not grounded",
}


@dataclass(frozen=True)
class NodeLink:
    """Text that selects a node of the graph when clicked (plain text if it is not drawn).

    Examples
    --------
    >>> from graph_server.fixture import acme_notes
    >>> links = Items([[NodeLink("A", "the payment")], [NodeLink("Q", "gone")]])
    >>> acme_notes(r"<li>.*?</li>", links)
    ['<li><a href="#n0" class="to-node" data-node="0">the payment</a></li>', '<li>gone</li>']
    """

    node_id: str
    text: str


Cell = str | NodeLink | None
"""A table cell or list item part; None is shown as "-"."""


@dataclass(frozen=True)
class Table:
    """A table: ``headers``, then ``rows`` of cells (:data:`Cell`), all escaped.

    Examples
    --------
    >>> from graph_server.fixture import acme_notes
    >>> table = Table(("claim", "run"), [(NodeLink("A", "A"), None), ("<b>", "r1")])
    >>> acme_notes(r"<t[hd]>.*?</t[hd]>", table)
    ['<th>claim</th>', '<th>run</th>', '<td><a href="#n0" class="to-node" data-node="0">A</a></td>',
     '<td>-</td>', '<td>&lt;b&gt;</td>', '<td>r1</td>']
    """

    headers: tuple[str, ...]
    rows: Sequence[Sequence[Cell]]


@dataclass(frozen=True)
class Items:
    """A bulleted list; each item is its parts run together. An empty list reads "None.".

    Examples
    --------
    >>> from graph_server.fixture import acme_notes
    >>> answer = Items([[NodeLink("Z", "Z"), " is the answer"]])
    >>> acme_notes(r"<li>.*?</li>|<p>None.</p>", answer, Items([]))
    ['<li><a href="#n1" class="to-node" data-node="1">Z</a> is the answer</li>', '<p>None.</p>']
    """

    items: Sequence[Sequence[Cell]]


Block = str | Table | Items
"""A paragraph, a table or a list."""


@dataclass(frozen=True)
class Section:
    """A titled part of the page; ``key`` names its element (``sec-<key>``), ``blocks`` are
    its paragraphs, tables and lists in order.

    Examples
    --------
    >>> from graph_server.fixture import acme_notes
    >>> acme_notes(r'<section id="sec-notes">.*?</section>', "Acme <paid>.")
    ['<section id="sec-notes"><h2>Notes</h2><p>Acme &lt;paid&gt;.</p></section>']
    """

    key: str
    title: str
    blocks: Sequence[Block]


@dataclass(frozen=True)
class Document:
    """A document as its sentences ``(span id, text)`` in order; ``title`` names it.

    A sentence some given cites is marked and linked to the nodes citing it.

    Examples
    --------
    >>> import re
    >>> from graph_server.fixture import acme_page
    >>> document = Document("D1", [("D1.1", "Acme paid its debts."), ("D1.2", "It grew.")])
    >>> html = acme_page(documents=[document])
    >>> re.findall(r'<span class="sent[^"]*" id="s.">', html)
    ['<span class="sent cited" id="s0">', '<span class="sent" id="s1">']
    """

    title: str
    sentences: Sequence[tuple[str, str]]


@dataclass(frozen=True)
class Page:
    """Everything one page shows. ``graph`` is a ``get_graph`` payload; ``states`` maps a node
    id to one of :data:`STATES`; ``arguments`` are the answer's (``answer``) node-disjoint
    arguments, each drawn in its own colour.

    Examples
    --------
    >>> import re
    >>> from graph_server.fixture import acme_graph
    >>> graph = acme_graph()
    >>> page = Page(
    ...     "Acme", "Acme is solvent", "Is Acme solvent?", graph, {"A": "surviving", "Z": "chosen"},
    ...     answer="Z", arguments=[["A"]],
    ... )
    >>> html = render_page(page)
    >>> re.search(r"<title>.*?</title>", html)[0], "argument 1:" in html
    ('<title>Acme</title>', True)
    """

    title: str
    headline: str
    statement: str
    graph: GraphData
    states: dict[str, str]
    answer: str | None = None
    arguments: Sequence[Sequence[str]] = ()
    refused: Sequence[RefusedLink] = ()
    documents: Sequence[Document] = ()
    documents_note: str = ""
    sections: Sequence[Section] = field(default_factory=tuple)
    """Shown before the documents."""
    appendix: Sequence[Section] = field(default_factory=tuple)
    """Shown after the documents (the calls and their cost)."""
    sources: dict[str, str] = field(default_factory=dict)
    """Span id -> where its document comes from (a corpus run's file, page and chunk)."""


def render_page(page: Page) -> str:
    """The page's HTML text: one self-contained document, the same bytes for the same page.

    Parameters
    ----------
    page : Page
        What to show.

    Returns
    -------
    str
        The HTML, with its style, script and data inlined.

    Examples
    --------
    >>> import re
    >>> from graph_server.fixture import acme_graph
    >>> graph = acme_graph()
    >>> page = Page("Acme", "Acme <b>solvent</b>?", "Is Acme solvent?", graph, {"Z": "chosen"})
    >>> html = render_page(page)
    >>> html.startswith("<!DOCTYPE html>"), html == render_page(page)
    (True, True)
    >>> re.search(r"<h1>.*?</h1>", html)[0]
    '<h1>Acme &lt;b&gt;solvent&lt;/b&gt;?</h1>'
    >>> re.search(r'content="(default-src[^;]*);', html)[1]
    "default-src 'none'"
    """
    drawing = draw(page.graph, page.states, page.arguments, page.answer, page.refused)
    style, script = _asset("html_view.css"), _asset("html_view.js")
    documents, sentence_of = _documents(page, drawing)
    data = _data(page, drawing, sentence_of)
    policy = (
        "default-src 'none'; base-uri 'none'; form-action 'none'; "
        f"style-src '{_sha256(style)}'; script-src '{_sha256(script)}'"
    )
    body = [
        f'<header><h1>{esc(page.headline)}</h1><p class="statement">{esc(page.statement)}</p>'
        "</header>",
        _toolbar(page),
        '<main><div id="canvas">',
        drawing.svg,
        '</div><aside id="inspector"><p class="hint">Click a claim to see it whole, with its '
        "runs, confidence, status and the sentence it cites.</p></aside></main>",
        _arguments(page, drawing),
        _refused(page, drawing),
        *(_section(section, drawing) for section in page.sections),
        documents,
        *(_section(section, drawing) for section in page.appendix),
    ]
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{policy}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(page.title)}</title><style>{style}</style></head><body>"
        + "\n".join(body)
        + f'\n<script type="application/json" id="lg-data">{_json(data)}</script>'
        f"\n<script>{script}</script></body></html>\n"
    )


def _asset(name: str) -> str:
    return resources.files("graph_server").joinpath(name).read_text(encoding="utf-8")


def _sha256(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode()


def _json(data: Any) -> str:
    """JSON that cannot end its ``<script>`` element or open a comment inside it (ASCII, so
    a lone surrogate in model text cannot make the page unwritable as UTF-8)."""
    text = json.dumps(data, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _data(page: Page, drawing: Drawing, sentence_of: dict[str, tuple[int, str]]) -> dict[str, Any]:
    """What the script needs to fill the inspector: the full text of every node."""
    member: dict[str, list[int]] = {}
    for k, argument in enumerate(page.arguments):
        for node_id in argument:
            member.setdefault(node_id, []).append(k)
    nodes = {node["id"]: node for node in page.graph["nodes"]}
    return {
        "nodes": [
            {
                "id": node_id,
                "claim": nodes[node_id]["claim"],
                "type": nodes[node_id]["type"],
                "state": STATE_WORDS[page.states.get(node_id, "unsupported")],
                "confidence": nodes[node_id].get("confidence"),
                "runs": nodes[node_id].get("run_ids", []),
                "source": nodes[node_id].get("source"),
                "sentence": sentence_of.get(str(nodes[node_id].get("source")), (-1, None))[0],
                "text": sentence_of.get(str(nodes[node_id].get("source")), (-1, None))[1],
                "reason": nodes[node_id].get("refute_reason"),
                "from": page.sources.get(str(nodes[node_id].get("source"))),
                "arguments": member.get(node_id, []),
            }
            for node_id in sorted(drawing.index, key=drawing.index.__getitem__)
        ],
        "edges": [list(edge) for edge in drawing.edges],
        "box": [NODE_W, NODE_H],
        "large": LARGE,
        "focus": sorted(
            drawing.index[n]
            for n in {*member, *([page.answer] if page.answer else [])}
            if n in drawing.index
        ),
    }


def _toolbar(page: Page) -> str:
    boxes = "".join(
        f'<label class="st-{state}"><input type="checkbox" checked data-state="{state}"> '
        f"{esc(STATE_WORDS[state])}</label>"
        for state in STATES
    )
    return (
        '<nav id="toolbar"><button id="zoom-in" type="button">+</button>'
        '<button id="zoom-out" type="button">−</button>'
        '<button id="fit" type="button">fit</button>'
        '<button id="show-all" type="button" hidden>show all claims</button>'
        '<input id="search" type="search" placeholder="find a claim" aria-label="find a claim">'
        '<label><input type="checkbox" id="only-args"> only the answers\' arguments</label>'
        f'<span class="states">{boxes}</span>'
        f'<span class="count">{len(page.graph["nodes"])} claims, '
        f"{len(page.graph['edges'])} links</span></nav>"
    )


def _cell(cell: Cell, drawing: Drawing) -> str:
    if cell is None:
        return "-"
    if isinstance(cell, NodeLink):
        number = drawing.index.get(cell.node_id)
        if number is None:
            return esc(cell.text)
        return f'<a href="#n{number}" class="to-node" data-node="{number}">{esc(cell.text)}</a>'
    return esc(cell)


def _block(block: Block, drawing: Drawing) -> str:
    if isinstance(block, Table):
        head = "".join(f"<th>{esc(h)}</th>" for h in block.headers)
        rows = "".join(
            "<tr>" + "".join(f"<td>{_cell(c, drawing)}</td>" for c in row) + "</tr>"
            for row in block.rows
        )
        return f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"
    if isinstance(block, Items):
        items = "".join(
            "<li>" + "".join(_cell(c, drawing) for c in item) + "</li>" for item in block.items
        )
        return f"<ul>{items}</ul>" if items else "<p>None.</p>"
    return f"<p>{esc(block)}</p>"


def _section(section: Section, drawing: Drawing) -> str:
    blocks = "".join(_block(block, drawing) for block in section.blocks)
    return f'<section id="sec-{esc(section.key)}"><h2>{esc(section.title)}</h2>{blocks}</section>'


def _arguments(page: Page, drawing: Drawing) -> str:
    if not page.arguments:
        return ""
    items = []
    for k, argument in enumerate(page.arguments):
        links = ", ".join(_cell(NodeLink(n, n), drawing) for n in argument)
        items.append(
            f'<li><svg class="swatch" viewBox="0 0 12 12"><rect width="12" height="12" '
            f'fill="{argument_colour(k)}"/></svg> argument {k + 1}: {links}</li>'
        )
    return (
        '<section id="sec-arguments"><h2>The answer\'s arguments</h2><p>Each independent line '
        "of evidence is ringed and drawn in its own colour.</p>"
        f"<ul>{''.join(items)}</ul></section>"
    )


def _refused(page: Page, drawing: Drawing) -> str:
    if not page.refused:
        return ""
    rows = [
        (NodeLink(link.src, link.src), NodeLink(link.dst, link.dst), link.reason, link.detail)
        for link in page.refused
    ]
    table = Table(("from", "to", "reason", "detail"), rows)
    return _section(
        Section(
            "refused",
            "Links that do not count",
            ["The chain check refused these links; they are dashed on the graph.", table],
        ),
        drawing,
    )


def _documents(page: Page, drawing: Drawing) -> tuple[str, dict[str, tuple[int, str]]]:
    """The documents with every cited sentence marked and linked to the nodes citing it;
    and span id -> (sentence number, text), for the script."""
    citing: dict[str, list[str]] = {}
    for node in page.graph["nodes"]:
        if node.get("source") is not None and node["type"] == "given":
            citing.setdefault(str(node["source"]), []).append(node["id"])
    sentence_of: dict[str, tuple[int, str]] = {}
    blocks = []
    for document in page.documents:
        parts = []
        for span, text in document.sentences:
            number = sentence_of.setdefault(span, (len(sentence_of), text))[0]
            nodes = sorted(citing.get(span, []), key=lambda n: drawing.index.get(n, -1))
            links = "".join(
                f'<a href="#n{drawing.index[n]}" class="to-node" data-node="{drawing.index[n]}">'
                f"{esc(n)}</a>"
                for n in nodes
                if n in drawing.index
            )
            cited, by = (" cited", f'<span class="by">{links}</span>') if links else ("", "")
            parts.append(
                f'<span class="sent{cited}" id="s{number}"><b class="span">{esc(span)}</b> '
                f"{esc(text)}{by}</span> "
            )
        blocks.append(f"<article><h3>{esc(document.title)}</h3><p>{''.join(parts)}</p></article>")
    if not blocks:
        return "", sentence_of
    note = f"<p>{esc(page.documents_note)}</p>" if page.documents_note else ""
    return (
        f'<section id="sec-documents"><h2>Documents</h2>{note}{"".join(blocks)}</section>',
        sentence_of,
    )
