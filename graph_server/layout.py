"""A layered drawing of an argument graph, computed in Python so a page needs no layout library.

Evidence flows left to right: a node's layer (its column) is the longest path to it from a
node nothing supports, so every ``supports``/``assumes`` edge points rightwards. ``attacks``
edges are left out of the layering: an attack and its target often support each other's
rivals, and letting attacks push columns would scatter the argument. Cycles among the
counted edges are broken by ignoring the edges a depth-first search finds going back.
Candidate answers (``last``) get the rightmost column, where a reader looks for the verdict.

Within a column, nodes are ordered by the barycentre heuristic (the mean row of their
neighbours in the column before, then after), a few sweeps each way: crossings drop a lot for
little work. Everything is sorted by id before it is used, so the same graph always gets the
same picture. Cost: O(SWEEPS * (V log V + E)).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

SWEEPS = 4
LAYERED_RELATIONS = ("supports", "assumes")


@dataclass(frozen=True)
class Placement:
    """Where each node goes: ``column`` (layer) and ``row`` (its rank within the column).

    Built by :func:`layered`.

    Examples
    --------
    >>> placement = layered(["A", "B"], [("A", "B", "supports")])
    >>> placement.column, placement.row, placement.columns, placement.rows
    ({'A': 0, 'B': 1}, {'A': 0, 'B': 0}, 2, 1)
    """

    column: dict[str, int]
    row: dict[str, int]
    columns: int
    """How many columns there are."""
    rows: int
    """The longest column's length."""


def layered(
    nodes: Sequence[str], edges: Iterable[tuple[str, str, str]], last: Iterable[str] = ()
) -> Placement:
    """Place ``nodes`` in columns and rows (see the module docstring).

    Parameters
    ----------
    nodes : sequence of str
        The node ids; repeats are placed once.
    edges : iterable of tuple of str
        ``(src, dst, relation)`` triples. Only ``supports`` and ``assumes`` edges between
        known nodes shape the picture.
    last : iterable of str, optional
        Nodes that go in the last column (the candidate answers); unknown ids are ignored.
        When they are not every node, the last column is at least the second.

    Returns
    -------
    Placement
        The column and row of every node, and the size of the grid.

    Examples
    --------
    ``X`` attacks, so it stays in the first column; the cycle ``C -> A -> C`` is broken
    at its back edge:

    >>> edges = [
    ...     ("A", "C", "supports"),
    ...     ("B", "C", "supports"),
    ...     ("C", "A", "supports"),
    ...     ("C", "Z", "supports"),
    ...     ("X", "C", "attacks"),
    ... ]
    >>> placement = layered(["A", "B", "C", "X", "Z"], edges, last=["Z"])
    >>> placement.column
    {'A': 0, 'B': 0, 'C': 1, 'X': 0, 'Z': 2}
    >>> placement.columns, placement.rows
    (3, 3)
    >>> layered(["A", "Z"], [], last=["Z"]).column
    {'A': 0, 'Z': 1}
    """
    ids = sorted(set(nodes))
    known = set(ids)
    links = sorted(
        {(s, d) for s, d, rel in edges if rel in LAYERED_RELATIONS and s in known and d in known}
    )
    forward = _acyclic(ids, links)
    column = _with_last_column(_longest_paths(ids, forward), set(last) & known, len(ids))
    order = _order(ids, column, links)
    row = {node: index for members in order for index, node in enumerate(members)}
    return Placement(
        column=column,
        row=row,
        columns=len(order),
        rows=max((len(members) for members in order), default=0),
    )


def _with_last_column(column: dict[str, int], final: set[str], count: int) -> dict[str, int]:
    """``column`` with the ``final`` nodes moved to the last column, which is at least the
    second unless they are all ``count`` nodes."""
    if not final:
        return column
    end = max(column.values(), default=0)
    if len(final) < count:
        end = max(end, 1)
    return {**column, **dict.fromkeys(sorted(final), end)}


def _acyclic(ids: list[str], links: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """``links`` less the back edges of an iterative depth-first search in id order."""
    out: dict[str, list[str]] = {node: [] for node in ids}
    for src, dst in links:
        out[src].append(dst)
    state: dict[str, int] = {}  # 1: on the stack, 2: done
    back: set[tuple[str, str]] = set()
    for root in ids:
        if root in state:
            continue
        state[root] = 1
        stack = [(root, iter(out[root]))]
        while stack:
            node, children = stack[-1]
            child = next(children, None)
            if child is None:
                state[node] = 2
                stack.pop()
            elif state.get(child) == 1:
                back.add((node, child))
            elif child not in state:
                state[child] = 1
                stack.append((child, iter(out[child])))
    return [link for link in links if link not in back]


def _longest_paths(ids: list[str], links: list[tuple[str, str]]) -> dict[str, int]:
    """Each node's longest path from a source, in a topological order (Kahn, by id)."""
    incoming = {node: 0 for node in ids}
    out: dict[str, list[str]] = {node: [] for node in ids}
    for src, dst in links:
        out[src].append(dst)
        incoming[dst] += 1
    column = dict.fromkeys(ids, 0)
    ready = [node for node in ids if incoming[node] == 0]
    while ready:
        node = ready.pop()
        for child in out[node]:
            column[child] = max(column[child], column[node] + 1)
            incoming[child] -= 1
            if incoming[child] == 0:
                ready.append(child)
    return column


def _order(ids: list[str], column: dict[str, int], links: list[tuple[str, str]]) -> list[list[str]]:
    """The nodes of each column, ordered by barycentre sweeps (ties keep the earlier order)."""
    width = max(column.values(), default=-1) + 1
    order: list[list[str]] = [[] for _ in range(width)]
    for node in ids:
        order[column[node]].append(node)
    before: dict[str, list[str]] = {node: [] for node in ids}
    after: dict[str, list[str]] = {node: [] for node in ids}
    for src, dst in links:
        if column[src] < column[dst]:
            before[dst].append(src)
            after[src].append(dst)
        elif column[dst] < column[src]:
            before[src].append(dst)
            after[dst].append(src)
    for _ in range(SWEEPS):
        for index in range(1, width):
            order[index] = _by_barycentre(order[index], before, order)
        for index in range(width - 2, -1, -1):
            order[index] = _by_barycentre(order[index], after, order)
    return order


def _by_barycentre(
    members: list[str], neighbours: dict[str, list[str]], order: list[list[str]]
) -> list[str]:
    """``members`` sorted by the mean row of their ``neighbours``; a node with none keeps its
    own row as its key, so it stays roughly where it was."""
    rank = {node: index for column in order for index, node in enumerate(column)}

    def key(item: tuple[int, str]) -> tuple[float, int]:
        index, node = item
        rows = [rank[other] for other in neighbours[node]]
        return (sum(rows) / len(rows) if rows else float(index), index)

    return [node for _, node in sorted(enumerate(members), key=key)]
