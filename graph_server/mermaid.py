"""Draw an argument graph as a Mermaid flowchart for report.md.

Shapes say what a claim is (given: cylinder, inference: box, assumption: flag, conclusion:
hexagon); classes say how it fared (chosen answer, other candidate, surviving, refuted,
disputed, not surviving). Edges: ``-->`` supports, ``-.->`` assumes, ``--x`` attacks (red).

Claim text is untrusted model output, so every character Mermaid could read as syntax is
written as an entity code (``#quot;``, ``#91;``, ...) and labels are cut to a fixed length.
Big graphs are cut to ``max_nodes`` nodes, keeping the most informative ones first (answers,
their evidence paths, disputed and refuted claims), and the diagram says how much was left out.
"""

from __future__ import annotations

from collections.abc import Iterable

from graph_server.record_data import EdgeData, GraphData, NodeData

DEFAULT_MAX_NODES = 60
LABEL_CHARS = 90
_SPECIAL = set('"#[](){}<>|&;`\\')
_SHAPES = {
    "given": ('[("', '")]'),
    "inference": ('["', '"]'),
    "assumption": ('>"', '"]'),
    "conclusion": ('{{"', '"}}'),
}
_CLASS_STYLES = {
    "chosen": "fill:#cfe8ff,stroke:#0050b3,stroke-width:3px,color:#000",
    "candidate": "fill:#e6f0ff,stroke:#5b7db1,stroke-width:2px,color:#000",
    "surviving": "fill:#e3f5e1,stroke:#2e7d32,color:#000",
    "refuted": "fill:#fde2e1,stroke:#c62828,stroke-dasharray:4 3,color:#555",
    "disputed": "fill:#fff1cc,stroke:#e69500,stroke-width:2px,color:#000",
    "unsupported": "fill:#eeeeee,stroke:#9e9e9e,color:#444",
}
_ARROWS = {"supports": "-->", "assumes": "-.->", "attacks": "--x"}


def escape_label(text: str, limit: int = LABEL_CHARS) -> str:
    """Claim text made safe inside a quoted Mermaid label.

    Parameters
    ----------
    text : str
        The claim.
    limit : int, optional
        The most characters kept (default :data:`LABEL_CHARS`); a longer text is cut and
        ends with an ellipsis.

    Returns
    -------
    str
        The text, whitespace collapsed, cut to ``limit``, syntax characters written as
        ``#<code>;`` entities.

    Examples
    --------
    >>> escape_label('Rack 7 "stands"   in [hall] B', limit=20)
    'Rack 7 #quot;stands#quot; in …'
    """
    flat = " ".join(str(text).split())
    if len(flat) > limit:
        flat = flat[: limit - 1] + "…"
    return "".join(
        "#quot;" if ch == '"' else f"#{ord(ch)};" if ch in _SPECIAL else ch for ch in flat
    )


def flowchart(
    graph: GraphData,
    *,
    chosen: str | None,
    candidates: Iterable[str],
    surviving: Iterable[str],
    disputed: Iterable[str],
    priority: Iterable[str] = (),
    max_nodes: int = DEFAULT_MAX_NODES,
) -> str:
    """The Mermaid flowchart of ``graph``, the same for equal input. O(V log V + E).

    Parameters
    ----------
    graph : dict
        ``{"nodes": [...], "edges": [...]}`` as ``GraphStore.get_graph`` returns it.
    chosen : str or None
        The answer chosen, if any.
    candidates, surviving, disputed : iterable of str
        The candidate answers, the surviving claims and the disputed ones (they set each
        node's class, :func:`node_state`).
    priority : iterable of str, optional
        Ids kept first (e.g. the chosen answer's evidence paths) when the graph has more
        than ``max_nodes`` nodes.
    max_nodes : int, optional
        The most nodes drawn (default :data:`DEFAULT_MAX_NODES`); a comment counts the rest.

    Returns
    -------
    str
        The Mermaid source, without fences.

    Examples
    --------
    >>> given = {"id": "A", "claim": "Rack 7 is in hall B", "type": "given", "refuted": False}
    >>> answer = {"id": "Z", "claim": "Rack 7 is cooled", "type": "conclusion", "refuted": False}
    >>> supports = {"src": "A", "dst": "Z", "relation": "supports"}
    >>> graph = {"nodes": [given, answer], "edges": [supports]}
    >>> chart = flowchart(graph, chosen="Z", candidates=["Z"], surviving=["A", "Z"], disputed=[])
    >>> print("\\n".join(line for line in chart.splitlines() if "classDef" not in line))
    flowchart TD
        n0[("Rack 7 is in hall B #40;A#41;")]
        n1{{"Rack 7 is cooled #40;Z#41;"}}
        n0 --> n1
        class n1 chosen
        class n0 surviving
    """
    nodes = {node["id"]: node for node in graph["nodes"]}
    candidate_set, surviving_set, disputed_set = set(candidates), set(surviving), set(disputed)
    kept = _select(graph, nodes, chosen, candidate_set, disputed_set, list(priority), max_nodes)
    alias = {node_id: f"n{i}" for i, node_id in enumerate(sorted(kept))}
    classes: dict[str, list[str]] = {name: [] for name in _CLASS_STYLES}
    for node_id, short in alias.items():
        state = node_state(nodes[node_id], chosen, candidate_set, surviving_set, disputed_set)
        classes[state].append(short)
    edge_lines, attack_links = _edge_lines(graph["edges"], alias)
    lines = ["flowchart TD", *_node_lines(nodes, alias), *edge_lines]
    lines += _style_lines(classes, attack_links)
    lines += _omitted_note(len(nodes), len(kept), len(graph["edges"]), len(edge_lines))
    return "\n".join(lines)


def _node_lines(nodes: dict[str, NodeData], alias: dict[str, str]) -> list[str]:
    """One line a drawn node, its shape saying its type and its label its claim and id."""
    lines = []
    for node_id, short in alias.items():
        left, right = _SHAPES.get(nodes[node_id]["type"], _SHAPES["inference"])
        label = escape_label(f"{nodes[node_id]['claim']} ({node_id})")
        lines.append(f"    {short}{left}{label}{right}")
    return lines


def _edge_lines(edges: list[EdgeData], alias: dict[str, str]) -> tuple[list[str], list[int]]:
    """One line an edge between drawn nodes, and the indices of the attacks among them (for
    their red ``linkStyle``)."""
    lines: list[str] = []
    attack_links: list[int] = []
    for edge in edges:
        if edge["src"] not in alias or edge["dst"] not in alias:
            continue
        if edge["relation"] == "attacks":
            attack_links.append(len(lines))
        arrow = _ARROWS.get(edge["relation"], "-->")
        lines.append(f"    {alias[edge['src']]} {arrow} {alias[edge['dst']]}")
    return lines, attack_links


def _style_lines(classes: dict[str, list[str]], attack_links: list[int]) -> list[str]:
    """The class definitions, each class's members and the attacks' red stroke."""
    lines = [f"    classDef {name} {style}" for name, style in _CLASS_STYLES.items()]
    lines += [
        f"    class {','.join(members)} {name}" for name, members in classes.items() if members
    ]
    if attack_links:
        lines.append(f"    linkStyle {','.join(map(str, attack_links))} stroke:#c62828")
    return lines


def _omitted_note(nodes: int, drawn_nodes: int, edges: int, drawn_edges: int) -> list[str]:
    """The closing comment of a cut chart, saying how much was left out (none when whole)."""
    if drawn_nodes == nodes:
        return []
    return [
        f"    %% {nodes - drawn_nodes} of {nodes} nodes and {edges - drawn_edges} edges not drawn"
    ]


def node_state(
    node: NodeData,
    chosen: str | None,
    candidates: set[str],
    surviving: set[str],
    disputed: set[str],
) -> str:
    """How a claim fared: the first of refuted, disputed, chosen, candidate, surviving or
    unsupported that applies.

    Parameters
    ----------
    node : dict
        A node as ``GraphStore.get_graph`` returns it (``id``, ``refuted``, ...).
    chosen : str or None
        The answer chosen, if any.
    candidates, surviving, disputed : set of str
        The candidate answers, the surviving claims and the disputed ones.

    Returns
    -------
    str
        The class name, a key of the flowchart's class styles.

    Examples
    --------
    >>> node = {"id": "A", "refuted": False}
    >>> node_state(node, "Z", {"Z"}, {"A", "Z"}, set())
    'surviving'
    >>> node_state(node, "Z", {"Z"}, {"A", "Z"}, {"A"})
    'disputed'
    """
    node_id = node["id"]
    if node["refuted"]:
        return "refuted"
    if node_id in disputed:
        return "disputed"
    if node_id == chosen:
        return "chosen"
    if node_id in candidates:
        return "candidate"
    return "surviving" if node_id in surviving else "unsupported"


def _select(
    graph: GraphData,
    nodes: dict[str, NodeData],
    chosen: str | None,
    candidates: set[str],
    disputed: set[str],
    priority: list[str],
    max_nodes: int,
) -> set[str]:
    """Every node when they fit; else the first ``max_nodes`` by importance, then degree."""
    if len(nodes) <= max_nodes:
        return set(nodes)
    degree: dict[str, int] = dict.fromkeys(nodes, 0)
    for edge in graph["edges"]:
        degree[edge["src"]] += 1
        degree[edge["dst"]] += 1
    ordered: list[str] = [chosen] if chosen in nodes else []
    ordered += [n for n in priority if n in nodes]
    ordered += sorted(candidates & set(nodes))
    ordered += sorted(disputed & set(nodes))
    ordered += sorted(n for n, node in nodes.items() if node["refuted"])
    ordered += sorted(nodes, key=lambda n: (-degree[n], n))
    return set(list(dict.fromkeys(ordered))[:max_nodes])
