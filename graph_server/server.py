"""MCP stdio server: the GraphStore's functions exposed as MCP tools.

This is a transport layer only: registration and error translation. Every tool call goes
through :func:`dispatch`, which checks the argument names strictly and hands the values to
the tool's function (:meth:`graph_server.tool_spec.ToolSpec.run`), a method of one shared
:class:`graph_server.store.GraphStore`; the store validates them and its record comes back
as JSON (structured content, plus the same object as indented JSON text). Only here does a
:class:`~graph_server.errors.StoreError` become the ``{"error": ...}`` answer, and then an
MCP error result (``isError: true``) carrying the store's message. So library mode and MCP
mode answer the same input with the same record: there is no second validation layer that
could disagree. Any other exception is a bug and propagates.

What the tools are (names, descriptions, annotations, and the JSON Schemas derived from
the store's signatures) lives in :mod:`graph_server.tools`; the records in
:mod:`graph_server.records`; enums and defaults in :mod:`graph_server.validation`.
The server is built on the SDK's low-level ``Server`` so that only the tools capability
is advertised (no empty prompts or resources).

Run it with ``python -m graph_server.server`` or the ``logic-graph-server`` script.
stdout carries the protocol (see :mod:`graph_server.transport`); logs go to stderr.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import anyio
import anyio.from_thread
import anyio.to_thread
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server

from graph_server import tools
from graph_server.errors import StoreError
from graph_server.state import StateFile, StateFileError
from graph_server.store import CancelCheck, GraphStore
from graph_server.tools import INSTRUCTIONS, SPECS, tool_listing
from graph_server.transport import Cancellations, stdio_transport

SERVER_NAME = "logic-graph"
log = logging.getLogger("graph_server.server")
Answer = dict[str, object]
"""A tool's answer as JSON: the store's record, or ``{"error": ...}``."""


def package_version() -> str:
    """The installed logic-graph version (``0+unknown`` when run from a bare checkout)."""
    try:
        return version("logic-graph")
    except PackageNotFoundError:
        return "0+unknown"


def dispatch(
    store: GraphStore, name: str, arguments: Any, cancel: CancelCheck | None = None
) -> Answer:
    """Run one tool call against ``store``: the single path for MCP and library callers.

    Parameters
    ----------
    store : GraphStore
        The store the call reads or changes.
    name : str
        The tool's name (see :data:`graph_server.tools.TOOLS`).
    arguments : Any
        A dict, or None for none. ``null`` means "not given"; a missing optional
        argument takes its schema's default. The store validates the values.
    cancel : callable, optional
        Returns True once the caller wants the call abandoned.

    Returns
    -------
    dict
        The store's record as JSON, or ``{"error": ...}``: for an unknown tool, arguments
        that are not an object, an unknown argument name (naming it and the accepted ones),
        a missing required argument (naming it), or a :class:`StoreError` the call raised.

    Examples
    --------
    >>> dispatch(GraphStore(), "list_graphs", {})
    {'graphs': [], 'claim_bytes': 0, 'claim_bytes_limit': 200000000}
    >>> dispatch(GraphStore(), "get_graph", {"graph_id": "g"})
    {'error': "graph_id 'g' not found (0 graphs stored; see list_graphs)"}
    """
    spec = SPECS.get(name)
    if spec is None:
        return {"error": f"unknown tool {name!r}; the tools are: {', '.join(sorted(SPECS))}"}
    arguments = {} if arguments is None else arguments
    if not isinstance(arguments, dict):
        return {"error": f"arguments of {name} must be an object, got {type(arguments).__name__}"}
    accepted = spec.accepted
    unknown = sorted(str(key) for key in arguments if key not in accepted)
    if unknown:
        names = ", ".join(sorted(accepted)) or "none"
        return {"error": f"unknown argument {unknown[0]!r} for {name}; accepted arguments: {names}"}
    given = {key: value for key, value in arguments.items() if value is not None}
    missing = [key for key in spec.required if key not in given]
    if missing:
        return {"error": f"{missing[0]} is required for {name}"}
    try:
        record = spec.run(store, {**spec.defaults, **given}, cancel or (lambda: False))
    except StoreError as refused:
        return {"error": str(refused)}
    answer: Answer = record.model_dump(mode="json", by_alias=True)
    return answer


def _host_cancelled() -> bool:
    """Whether the task that started this worker thread was cancelled (SDK interrupt)."""
    try:
        anyio.from_thread.check_cancelled()
    except anyio.get_cancelled_exc_class():
        return True
    except RuntimeError:  # not in an anyio worker thread
        return False
    return False


def _dispatch_and_save(
    store: GraphStore, name: str, arguments: Any, cancel: CancelCheck, state: StateFile | None
) -> Answer:
    """:func:`dispatch`, then (with a state file) save before the reply, if the call wrote.

    Returns the answer, or an error saying the change is only in memory if the save failed.
    """
    result = dispatch(store, name, arguments, cancel)
    spec = SPECS.get(name)
    if state is None or "error" in result or spec is None or spec.annotations.read_only_hint:
        return result
    try:
        state.save(store)
    except (OSError, StateFileError) as exc:
        return {
            "error": f"{name} was applied in memory but the state file {state.path} could not "
            f"be written ({exc}); the change would be lost when the server stops"
        }
    return result


def _reply(name: str, result: Answer) -> types.CallToolResult:
    """The MCP result for a store answer: ``{"error": ...}`` becomes ``isError: true``."""
    if "error" in result:
        log.info("tool %s refused: %s", name, result["error"])
        text = types.TextContent(type="text", text=str(result["error"]))
        return types.CallToolResult(content=[text], is_error=True)
    text = types.TextContent(type="text", text=json.dumps(result, indent=2))
    return types.CallToolResult(content=[text], structured_content=result, is_error=False)


def build_server(
    store: GraphStore | None = None,
    cancellations: Cancellations | None = None,
    state: StateFile | None = None,
) -> Server[Any]:
    """Create the MCP server with every tool bound to one GraphStore.

    Parameters
    ----------
    store : GraphStore, optional
        An existing store (tests share one with library mode); None for a fresh one.
    cancellations : Cancellations, optional
        The connection's cancellation record (the stdio transport fills it).
    state : StateFile, optional
        Written after every call that changes something.

    Returns
    -------
    Server
        A low-level SDK server (for :func:`serve_stdio` or an in-memory ``mcp.Client``)
        whose ``tools/list`` shows the store's own limits and thresholds.
    """
    graphs = store if store is not None else GraphStore()
    cancels = cancellations if cancellations is not None else Cancellations()
    listing = tool_listing(graphs.limits, graphs.jaccard_threshold, graphs.ratio_threshold)

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return listing

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        request_id = ctx.request_id
        if request_id is not None:
            cancels.started(request_id)

        def cancelled() -> bool:
            return (
                request_id is not None and cancels.is_cancelled(request_id)
            ) or _host_cancelled()

        try:
            result = await anyio.to_thread.run_sync(
                lambda: _dispatch_and_save(graphs, params.name, params.arguments, cancelled, state)
            )
        finally:
            if request_id is not None:
                cancels.finished(request_id)
        return _reply(params.name, result)

    return Server(
        SERVER_NAME,
        version=package_version(),
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


async def serve_stdio(store: GraphStore | None = None, state: StateFile | None = None) -> None:
    """Serve one GraphStore over stdin/stdout until stdin closes."""
    cancellations = Cancellations()
    server = build_server(store, cancellations, state)
    async with stdio_transport(cancellations) as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="logic-graph-server",
        description="MCP server for typed argument graphs, speaking JSON-RPC on stdin/stdout "
        "(logs on stderr) until stdin closes. Register it with an MCP host (e.g. "
        "`claude mcp add logic-graph -- logic-graph-server`); see docs/mcp.md.",
    )
    parser.add_argument(
        "--state-file",
        type=Path,
        metavar="PATH",
        help="keep graphs in PATH: loaded at start, rewritten atomically after every change "
        "(default: graphs live in memory only)",
    )
    parser.add_argument(
        "--index-root",
        type=Path,
        action="append",
        default=[],
        metavar="DIR",
        help="a folder whose corpus indexes search_evidence may open, subfolders included "
        "(repeatable; LOGIC_GRAPH_INDEX_ROOTS adds more, separated by ':'; default: none, "
        "so search_evidence refuses every index)",
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    """Console entry point: serve one GraphStore over stdio until stdin closes."""
    args = _arguments(argv)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    tools.index_root_flags[:] = args.index_root
    store = GraphStore()
    state = None
    if args.state_file is not None:
        state = StateFile(args.state_file)
        try:
            loaded = state.load_into(store)
        except StateFileError as exc:
            print(f"error: {exc}", file=sys.stderr)
            raise SystemExit(2) from None
        log.info("state file %s: %d graphs loaded", args.state_file, loaded)
    log.info("logic-graph MCP server %s starting on stdio", package_version())
    try:
        anyio.run(serve_stdio, store, state)
    except KeyboardInterrupt:
        log.info("interrupted; exiting")


if __name__ == "__main__":
    main()
