"""Pages for graphs saved outside a running server: an ``export_graph`` json file, a state file.

Both are read back through a fresh :class:`~graph_server.store.GraphStore` (the export
replayed the way its docs say, the state file through :class:`~graph_server.state.StateFile`),
so a page shows what the store itself would check and every validation rule applies to the
file; then ``export_graph`` html draws it. A file that is neither raises
:class:`ViewError` with a sentence saying why.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from graph_server._store_persist import assert_batches, refuse_failures
from graph_server.errors import StoreError
from graph_server.state import STATE_FORMAT, StateFile, StateFileError
from graph_server.store import GraphStore


class ViewError(Exception):
    """The file cannot be drawn; the message says why.

    Examples
    --------
    >>> export_html({"nodes": [{"id": "A"}], "edges": [], "evidence": [], "refuted": []}, "g")
    Traceback (most recent call last):
    ...
    graph_server.html_files.ViewError: the export does not load into a graph store: 'claim'
    """


def is_export(data: Any) -> bool:
    """Whether ``data`` is an ``export_graph`` json answer, or the ``graph`` object inside one.

    Parameters
    ----------
    data : object
        A decoded JSON file: the answer itself (its ``format`` is ``"json"``) or its graph.

    Returns
    -------
    bool
        True when the graph holds ``nodes``, ``edges``, ``evidence`` and ``refuted``.

    Examples
    --------
    >>> graph = {"nodes": [], "edges": [], "evidence": [], "refuted": []}
    >>> is_export({"format": "json", "graph": graph}), is_export(graph)
    (True, True)
    >>> is_export({"nodes": []}), is_export([])
    (False, False)
    """
    inner = data.get("graph") if isinstance(data, dict) and data.get("format") == "json" else data
    return isinstance(inner, dict) and {"nodes", "edges", "evidence", "refuted"} <= set(inner)


def is_state(data: Any) -> bool:
    """Whether ``data`` is a state file of the server (its ``format`` is ``STATE_FORMAT``).

    Parameters
    ----------
    data : object
        A decoded JSON file; only its ``format`` is read, the rest is checked on loading.

    Returns
    -------
    bool
        True for a state file.

    Examples
    --------
    >>> is_state({"format": STATE_FORMAT}), is_state({"format": "json"})
    (True, False)
    """
    return isinstance(data, dict) and data.get("format") == STATE_FORMAT


def export_html(data: dict[str, Any], default_id: str) -> str:
    """The page of an export (see :func:`is_export`), replayed into a fresh store.

    Parameters
    ----------
    data : dict
        The export: an ``export_graph`` json answer or the ``graph`` object inside one.
    default_id : str
        The graph id to use when ``data`` names none.

    Returns
    -------
    str
        The ``export_graph`` html page of the replayed graph.

    Raises
    ------
    ViewError
        The export does not load into a graph store (a key missing, an item refused).

    Examples
    --------
    >>> import re
    >>> from graph_server.fixture import rack7_store
    >>> store = rack7_store()
    >>> _ = store.add_evidence("rack7", [{"id": "D1.1", "text": "Rack 7 was surveyed."}])
    >>> export = store.export_graph("rack7", "json").model_dump()
    >>> re.findall(r"<h1>.*?</h1>|<h3>.*?</h3>", export_html(export, "unused"))
    ['<h1>Graph rack7: 8 claims, 7 links</h1>', '<h3>D1</h3>']
    >>> re.search(r"<h1>.*?</h1>", export_html(export["graph"], "mine"))[0]
    '<h1>Graph mine: 8 claims, 7 links</h1>'
    """
    graph_id = str(data.get("graph_id") or default_id)
    graph = data["graph"] if data.get("format") == "json" else data
    store = GraphStore()
    step = store.limits.max_items_per_call
    try:
        # The export's own replay order: nodes and edges, then evidence, then refutations.
        for nodes, edges in assert_batches(graph["nodes"], graph["edges"], step):
            refuse_failures(store.assert_graph(graph_id, nodes, edges, dedup=False).rejected)
        spans = list(graph["evidence"])
        for start in range(0, len(spans), step):
            refuse_failures(store.add_evidence(graph_id, spans[start : start + step]).rejected)
        for item in graph["refuted"]:
            store.mark_refuted(graph_id, item["id"], item["reason"])
    except (KeyError, TypeError, ValueError, StoreError) as exc:
        raise ViewError(f"the export does not load into a graph store: {exc}") from None
    return _html(store, graph_id)


def state_html(path: Path, graph_id: str | None) -> tuple[str, str]:
    """``(graph id, page)`` of one graph of the state file at ``path``.

    Parameters
    ----------
    path : pathlib.Path
        The state file (a missing file in an existing directory holds no graph).
    graph_id : str or None
        The graph to draw; None for the only graph there is.

    Returns
    -------
    graph_id : str
        The graph drawn.
    page : str
        Its ``export_graph`` html page.

    Raises
    ------
    ViewError
        The state file cannot be read, ``graph_id`` is not in it, or it is None and the file
        holds other than one graph.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     state_html(Path(folder) / "absent.json", None)
    Traceback (most recent call last):
    ...
    graph_server.html_files.ViewError: .../absent.json holds 0 graphs; choose one with --graph
    (none stored)
    """
    store = GraphStore()
    try:
        StateFile(path).load_into(store)
    except StateFileError as exc:
        raise ViewError(str(exc)) from None
    ids = [item.graph_id for item in store.list_graphs().graphs]
    if graph_id is None:
        if len(ids) != 1:
            raise ViewError(
                f"{path} holds {len(ids)} graphs; choose one with --graph "
                f"({', '.join(ids) or 'none stored'})"
            )
        graph_id = ids[0]
    if graph_id not in ids:
        raise ViewError(f"{path} has no graph {graph_id!r} (it holds: {', '.join(ids)})")
    return graph_id, _html(store, graph_id)


def _html(store: GraphStore, graph_id: str) -> str:
    try:
        answer = store.export_graph(graph_id, "html")
    except StoreError as exc:
        raise ViewError(str(exc)) from None
    return str(answer.content)
