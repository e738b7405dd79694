"""The argument graph as inline SVG, drawn once in Python (see :mod:`graph_server.layout`).

Claims are untrusted model output: every text and attribute value goes through
:func:`html.escape`, and node ids never reach an ``id`` attribute (elements are named by their
index, ``n12``, and the id only appears escaped in ``data-`` text). Classes carry everything the
page's script and style need (a node's state and type, an edge's relation and the states of its
ends), so filtering is a class on the ``<svg>`` and never a redraw.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass

from graph_server.layout import Placement, layered
from graph_server.record_data import EdgeData, GraphData, NodeData

NODE_W = 232
NODE_H = 58
GAP_X = 96
GAP_Y = 18
MARGIN = 24
MIN_VIEW = (1100, 560)
WRAP_ROWS = 24
FOLD_GAP = 28
LINE_CHARS = 34
ARGUMENT_COLOURS = (
    "#0072b2",
    "#d55e00",
    "#009e73",
    "#cc79a7",
    "#e69f00",
    "#56b4e9",
    "#7f3c8d",
    "#4d4d4d",
)
"""One colour per argument of the answer (Okabe-Ito, told apart by most colour-blind
readers); an answer wider than this reuses them, the legend still numbers each argument."""
REFUSED_COLOUR = "#b35900"


@dataclass(frozen=True)
class RefusedLink:
    """A link the chain check would not count, and why (``look_alike``, ``no_bridge``,
    ``off_subject``, ...); ``detail`` is the checker's sentence.

    Examples
    --------
    >>> link = RefusedLink("B", "Z", "look_alike", "B only restates the question")
    >>> link.reason
    'look_alike'
    """

    src: str
    dst: str
    reason: str
    detail: str


@dataclass(frozen=True)
class Drawing:
    """The SVG text and what the page needs to know about it; made by :func:`draw`.

    Examples
    --------
    >>> drawing = draw({"nodes": [], "edges": []}, {}, [], None, [])
    >>> drawing.svg.startswith('<svg id="graph"'), drawing.index, drawing.edges
    (True, {}, [])
    """

    svg: str
    index: dict[str, int]
    """Node id -> its element number (``n<i>``)."""
    edges: list[tuple[int, int, str, str | None]]
    """``(src, dst, relation, refused reason or None)`` per drawn edge, in drawing order."""


def esc(text: object) -> str:
    """Text made safe in HTML element content and in a quoted attribute; a lone surrogate
    (which JSON can carry but UTF-8 cannot) becomes "?". O(len(str(text))).

    Parameters
    ----------
    text : object
        Anything; it is written as ``str(text)``.

    Returns
    -------
    str
        The escaped text.

    Examples
    --------
    >>> esc('<b title="x">Acme & Co</b>')
    '&lt;b title=&quot;x&quot;&gt;Acme &amp; Co&lt;/b&gt;'
    >>> esc("lone \\ud800 surrogate"), esc(42)
    ('lone ? surrogate', '42')
    """
    plain = str(text).encode("utf-8", "replace").decode("utf-8")
    return html.escape(plain, quote=True)


def argument_colour(index: int) -> str:
    """The colour of the argument numbered ``index``, reusing :data:`ARGUMENT_COLOURS` in turn.

    Parameters
    ----------
    index : int
        The argument's number, from 0.

    Returns
    -------
    str
        A ``#rrggbb`` colour.

    Examples
    --------
    >>> argument_colour(0), argument_colour(1), argument_colour(len(ARGUMENT_COLOURS))
    ('#0072b2', '#d55e00', '#0072b2')
    """
    return ARGUMENT_COLOURS[index % len(ARGUMENT_COLOURS)]


def draw(
    graph: GraphData,
    states: dict[str, str],
    arguments: Sequence[Sequence[str]],
    answer: str | None,
    refused: Sequence[RefusedLink],
) -> Drawing:
    """The SVG of ``graph``, laid out by :func:`graph_server.layout.layered`.

    Parameters
    ----------
    graph : dict
        A ``get_graph`` payload: ``nodes`` (``id``, ``claim``, ``type``, optionally
        ``source``) and ``edges`` (``src``, ``dst``, ``relation``).
    states : dict of str to str
        Each node's state, written into its classes (``st-<state>``; default ``unsupported``).
    arguments : sequence of sequence of str
        The answer's arguments as node ids; each is drawn in its own colour.
    answer : str or None
        The answer's node id, which belongs to every argument.
    refused : sequence of RefusedLink
        Links drawn dashed with their reason written on them; one that matches a drawn
        supports or assumes edge replaces its look.

    Returns
    -------
    Drawing
        The SVG, each node's element number and the edges in drawing order.

    Examples
    --------
    >>> nodes = [{"id": "A", "claim": "Acme paid <40> invoices", "type": "given"},
    ...          {"id": "B", "claim": "Acme is rich", "type": "inference"},
    ...          {"id": "Z", "claim": "Acme is solvent", "type": "conclusion"}]
    >>> edges = [{"src": src, "dst": "Z", "relation": "supports"} for src in ("A", "B")]
    >>> graph = {"nodes": nodes, "edges": edges}
    >>> refused = [RefusedLink("B", "Z", "look_alike", "B restates the question")]
    >>> drawing = draw(graph, {"A": "proved", "Z": "proved"}, [["A", "Z"]], "Z", refused)
    >>> drawing.index, drawing.edges
    ({'A': 0, 'B': 1, 'Z': 2}, [(0, 2, 'supports', None), (1, 2, 'supports', 'look_alike')])
    >>> "Acme paid &lt;40&gt; invoices" in drawing.svg
    True
    """
    nodes = {node["id"]: node for node in graph["nodes"]}
    ids = sorted(nodes)
    index = {node_id: i for i, node_id in enumerate(ids)}
    relations = [(e["src"], e["dst"], e["relation"]) for e in graph["edges"]]
    answers = [n for n in ids if nodes[n]["type"] == "conclusion"]
    grid = _grid(layered(ids, relations, last=answers))
    member = _memberships(arguments)
    on_argument = set(member) | set(answers)
    parts: list[str] = []
    drawn: list[tuple[int, int, str, str | None]] = []
    for src, dst, relation, link in _edge_list(graph["edges"], nodes, refused):
        colour = None if link else _shared_argument(member, src, dst, answer, len(arguments))
        parts.append(_edge(len(drawn), grid, src, dst, relation, states, colour, link, on_argument))
        drawn.append((index[src], index[dst], relation, link.reason if link else None))
    parts += [_node(index[n], nodes[n], grid, states, member.get(n, []), on_argument) for n in ids]
    return Drawing(svg=_svg(grid, parts, len(ids)), index=index, edges=drawn)


def _memberships(arguments: Sequence[Sequence[str]]) -> dict[str, list[int]]:
    """Each node's argument numbers, in order: one coloured ring each."""
    member: dict[str, list[int]] = {}
    for k, argument in enumerate(arguments):
        for node_id in argument:
            member.setdefault(node_id, []).append(k)
    return member


def _edge_list(
    edges: list[EdgeData], nodes: dict[str, NodeData], refused: Sequence[RefusedLink]
) -> list[tuple[str, str, str, RefusedLink | None]]:
    """The lines to draw, in order: each edge between known nodes with the refused link that
    restyles it (an attack is never restyled), then the refused links that match no edge."""
    why = {(link.src, link.dst): link for link in refused}
    lines: list[tuple[str, str, str, RefusedLink | None]] = []
    for edge in sorted(edges, key=lambda e: (e["src"], e["dst"], e["relation"])):
        src, dst, relation = edge["src"], edge["dst"], edge["relation"]
        if src in nodes and dst in nodes:
            link = why.pop((src, dst), None) if relation != "attacks" else None
            lines.append((src, dst, relation, link))
    lines += [
        (src, dst, "refused", link)
        for (src, dst), link in sorted(why.items())
        if src in nodes and dst in nodes
    ]
    return lines


def _svg(grid: Grid, parts: list[str], claims: int) -> str:
    """The ``<svg>`` element holding ``parts``, its view box centred on the drawing."""
    width, height = grid.width, grid.height
    # A small graph is shown at no more than about its natural size, centred.
    view_w, view_h = max(width, MIN_VIEW[0]), max(height, MIN_VIEW[1])
    left, top = (width - view_w) // 2, (height - view_h) // 2
    view = f"{left} {top} {view_w} {view_h}"
    return (
        f'<svg id="graph" xmlns="http://www.w3.org/2000/svg" viewBox="{view}" '
        f'data-view="{view}" role="group" '
        f'aria-label="argument graph, {claims} claims">'
        f'{_markers()}<g id="viewport">{"".join(parts)}</g></svg>'
    )


@dataclass(frozen=True)
class Grid:
    """Each node's top-left corner, its layer, and the drawing's size (the layout :func:`draw`
    works on).

    Examples
    --------
    >>> grid = Grid(at={"A": (24, 24)}, column={"A": 0}, width=400, height=124)
    >>> grid.at["A"], grid.width
    ((24, 24), 400)
    """

    at: dict[str, tuple[int, int]]
    column: dict[str, int]
    width: int
    height: int


def _grid(place: Placement) -> Grid:
    """Layers left to right, each centred vertically; a layer longer than :data:`WRAP_ROWS`
    is folded into side-by-side sub-columns, so 125 givens make a block, not a needle that
    shrinks the whole drawing to fit the window."""
    members: dict[int, list[str]] = {}
    for node_id in sorted(place.row, key=place.row.__getitem__):
        members.setdefault(place.column[node_id], []).append(node_id)
    folds = {c: -(-len(ids) // WRAP_ROWS) for c, ids in members.items()}
    rows = {c: -(-len(ids) // folds[c]) for c, ids in members.items()}
    tallest = max(rows.values(), default=0)
    at: dict[str, tuple[int, int]] = {}
    x = MARGIN
    for column in range(place.columns):
        ids = members.get(column, [])
        offset = (tallest - rows.get(column, 0)) * (NODE_H + GAP_Y) // 2
        for rank, node_id in enumerate(ids):
            fold, row = divmod(rank, rows[column])
            at[node_id] = (x + fold * (NODE_W + FOLD_GAP), MARGIN + offset + row * (NODE_H + GAP_Y))
        x += folds.get(column, 1) * (NODE_W + FOLD_GAP) - FOLD_GAP + GAP_X
    # GAP_X more on the right (x already holds it): lines within the last column bulge there.
    return Grid(
        at=at, column=place.column, width=x + MARGIN, height=MARGIN * 2 + tallest * (NODE_H + GAP_Y)
    )


def _shared_argument(
    member: dict[str, list[int]], src: str, dst: str, answer: str | None, count: int
) -> str | None:
    """The colour of the first argument holding both ends (the answer belongs to them all)."""

    def held(node: str) -> set[int]:
        return set(range(count)) if node == answer else set(member.get(node, []))

    ends = held(src) & held(dst)
    return argument_colour(min(ends)) if ends else None


def _edge(
    number: int,
    grid: Grid,
    src: str,
    dst: str,
    relation: str,
    states: dict[str, str],
    colour: str | None,
    refused: RefusedLink | None,
    on_argument: set[str],
) -> str:
    sx, sy = grid.at[src]
    dx, dy = grid.at[dst]
    x1, y1, x2, y2 = sx + NODE_W, sy + NODE_H // 2, dx, dy + NODE_H // 2
    if grid.column[dst] > grid.column[src]:
        bend = max(48, (x2 - x1) // 2)
        path = f"M{x1},{y1} C{x1 + bend},{y1} {x2 - bend},{y2} {x2},{y2}"
    else:
        # Backwards or within a column (attacks, broken cycles): leave and arrive on the
        # right, bulging out, so the line never runs through the nodes it joins.
        x2 += NODE_W
        bend = GAP_X // 2 + abs(y2 - y1) // 6
        path = f"M{x1},{y1} C{x1 + bend},{y1} {x2 + bend},{y2} {x2},{y2}"
    kind = "refused" if refused is not None else relation
    classes = [
        "edge",
        f"rel-{kind}",
        f"end-{states.get(src, 'unsupported')}",
        f"end-{states.get(dst, 'unsupported')}",
    ]
    if not (src in on_argument and dst in on_argument):
        classes.append("off-arg")
    marker = "argument" if colour else kind
    stroke = f' stroke="{colour}"' if colour else ""
    marker_id = f"m-{marker}-{colour[1:]}" if colour else f"m-{marker}"
    title = f"{src} {kind} {dst}" + (f": {refused.reason} ({refused.detail})" if refused else "")
    out = (
        f'<g class="{" ".join(classes)}" id="e{number}">'
        f'<path d="{path}"{stroke} marker-end="url(#{marker_id})">'
        f"<title>{esc(title)}</title></path>"
    )
    if refused is not None:
        mx, my = (x1 + x2) // 2, (y1 + y2) // 2
        out += f'<text class="why" x="{mx}" y="{my - 4}">{esc(refused.reason)}</text>'
    return out + "</g>"


def _node(
    number: int,
    node: NodeData,
    grid: Grid,
    states: dict[str, str],
    arguments: list[int],
    on_argument: set[str],
) -> str:
    x, y = grid.at[node["id"]]
    state = states.get(node["id"], "unsupported")
    kind = node["type"]
    classes = ["node", f"st-{state}", f"ty-{kind}"] + (
        [] if node["id"] in on_argument else ["off-arg"]
    )
    rings = "".join(
        f'<rect class="ring" x="{-4 - 4 * k}" y="{-4 - 4 * k}" width="{NODE_W + 8 + 8 * k}" '
        f'height="{NODE_H + 8 + 8 * k}" rx="10" stroke="{argument_colour(a)}"/>'
        for k, a in enumerate(arguments)
    )
    caption = kind + (f" · {node['source']}" if kind == "given" and node.get("source") else "")
    lines = _wrap(node["claim"], 2)
    text = "".join(
        f'<text x="8" y="{32 + 15 * i}">{esc(line)}</text>' for i, line in enumerate(lines)
    )
    right, middle = NODE_W - 12, NODE_H // 2
    shape = (
        f'<path class="box" d="M12,0 H{right} L{NODE_W},{middle} L{right},{NODE_H} '
        f'H12 L0,{middle} Z"/>'
        if kind == "conclusion"
        else f'<rect class="box" width="{NODE_W}" height="{NODE_H}" '
        f'rx="{2 if kind == "given" else 8}"/>'
    )
    return (
        f'<g class="{" ".join(classes)}" id="n{number}" data-i="{number}" '
        f'data-id="{esc(node["id"])}" '
        f'transform="translate({x},{y})" tabindex="0" role="button">'
        f"<title>{esc(node['claim'])}</title>{rings}{shape}"
        f'<text class="cap" x="8" y="14">{esc(caption)}</text>{text}</g>'
    )


def _wrap(text: str, lines: int) -> list[str]:
    """The claim cut into ``lines`` lines of about ``LINE_CHARS``, an ellipsis if it is longer."""
    words = " ".join(str(text).split()).split(" ")
    out: list[str] = []
    current = ""
    for word in words:
        if len(word) > LINE_CHARS:
            word = word[: LINE_CHARS - 1] + "…"
        if current and len(current) + 1 + len(word) > LINE_CHARS:
            out.append(current)
            current = word
        else:
            current = f"{current} {word}" if current else word
    out.append(current)
    if len(out) > lines:
        last = out[lines - 1]
        out = [*out[: lines - 1], last[: LINE_CHARS - 1] + "…"]
    return out


_HEAD = "M0,0 L10,5 L0,10 Z"
_CROSS = "M0,0 L10,10 M0,10 L10,0"


def _markers() -> str:
    """Arrow heads: one per relation, and one per argument colour (a marker cannot take the
    colour of the line that uses it in every browser)."""
    heads = {
        "supports": "#555",
        "assumes": "#555",
        "attacks": "#c62828",
        "refused": REFUSED_COLOUR,
    }
    out = [
        f'<marker id="m-{name}" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" '
        f'markerHeight="7" orient="auto"><path d="{_CROSS if name == "attacks" else _HEAD}" '
        f'fill="{colour}" stroke="{colour}" stroke-width="2"/></marker>'
        for name, colour in heads.items()
    ]
    out += [
        f'<marker id="m-argument-{colour[1:]}" viewBox="0 0 10 10" refX="10" refY="5" '
        f'markerWidth="6" markerHeight="6" orient="auto"><path d="{_HEAD}" '
        f'fill="{colour}"/></marker>'
        for colour in ARGUMENT_COLOURS
    ]
    return f"<defs>{''.join(out)}</defs>"
