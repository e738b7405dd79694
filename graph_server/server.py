"""MCP stdio server: the GraphStore's functions exposed as MCP tools.

This is a transport layer only. Every tool hands its validated arguments to one
shared :class:`graph_server.store.GraphStore` and returns the store's dict unchanged
(as structured content, plus the same dict as indented JSON text). The store's
``{"error": ...}`` answers become MCP error results (``isError: true``).

What lives here is declarative: parameter types, their descriptions and the lenient
coercions real clients need (numbers sent as strings, numeric ids, arrays or
objects sent as JSON-encoded strings). Graph logic stays in the store.

Run it with ``python -m graph_server.server`` or the ``logic-graph-server`` script.
stdout carries the protocol; logs go to stderr.
"""

import inspect
import json
import logging
import sys
from collections.abc import Callable
from typing import Annotated, Any, Literal, NotRequired

from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import BeforeValidator, Field
from typing_extensions import TypedDict

from graph_server.store import GraphStore
from graph_server.validation import StoreLimits

SERVER_NAME = "logic-graph"

INSTRUCTIONS = """\
External working memory for arguments. Write your reasoning as a typed graph of
claims (nodes) joined by supports / attacks / assumes edges, then let mechanical
checks tell you where it is weak. A typical session:
1. assert_graph: add nodes (given facts, inferences, assumptions, one conclusion)
   and edges; read `rejected` for anything the store refused and why.
2. check_structure: orphans, cycles, unreachable conclusion, refuted claims still
   feeding the conclusion.
3. support_width / critical_links: how many independent routes carry the
   conclusion, and which single links it hangs on.
4. surviving_claims / disputed_nodes: what survives the attacks, what needs evidence.
5. mark_refuted / update_node as evidence arrives, then re-check.
Graph ids are yours to choose; graphs live in memory until delete_graph."""

log = logging.getLogger("graph_server.server")

# The schema advertises the store's default limits so a model learns them up front;
# the store still enforces its own limits on every call.
_LIMITS = StoreLimits()

ToolFn = Callable[..., dict[str, Any]]


def _decode_json_text(value: Any) -> Any:
    """Decode a string that JSON-encodes an array or object; pass anything else on.

    Models often send a list or an object as a JSON string. Strings that are not
    such JSON (including nesting too deep to parse) are passed on untouched, so
    validation reports the field with its usual message. O(len(value)).
    """
    if not isinstance(value, str):
        return value
    try:
        decoded = json.loads(value)
    except (ValueError, RecursionError):
        return value
    return decoded if isinstance(decoded, list | dict) else value


# --- parameter types: descriptions are what a model reads in the input schema ---

GraphId = Annotated[
    str,
    Field(
        min_length=1,
        max_length=_LIMITS.max_id_chars,
        coerce_numbers_to_str=True,
        description="Name of the graph to work on; any non-empty string you choose, "
        "e.g. 'cron-question'. Graphs are independent of each other.",
    ),
]
NodeId = Annotated[
    str,
    Field(
        min_length=1,
        max_length=_LIMITS.max_id_chars,
        coerce_numbers_to_str=True,
        description="Id of a node in this graph, e.g. 'r1:n4' (unique within the graph).",
    ),
]
ConclusionId = Annotated[
    str,
    Field(
        min_length=1,
        max_length=_LIMITS.max_id_chars,
        coerce_numbers_to_str=True,
        description="Id of the node to analyse as the conclusion (normally the node "
        "of type 'conclusion').",
    ),
]
Confidence = Annotated[
    float,
    Field(
        ge=0.0,
        le=1.0,
        allow_inf_nan=False,
        description="How sure you are, from 0.0 (not at all) to 1.0 (certain). "
        "Optional; the store uses 0.8 when omitted.",
    ),
]
RunId = Annotated[
    str,
    Field(
        min_length=1,
        max_length=_LIMITS.max_id_chars,
        coerce_numbers_to_str=True,
        description="Provenance tag naming the reasoning run that produced an item, "
        "e.g. 'r2'. Claims asserted by several runs are corroborated.",
    ),
]

RunIds = Annotated[
    list[RunId] | RunId,
    BeforeValidator(_decode_json_text),
    Field(description="Runs that asserted this item (a list, or one run id). Optional."),
]


class NodeSpec(TypedDict):
    """One claim in the argument graph."""

    id: NodeId
    claim: Annotated[
        str,
        Field(
            min_length=1,
            max_length=_LIMITS.max_claim_chars,
            description="The claim in one plain sentence, e.g. 'server x9 runs linux'.",
        ),
    ]
    type: Annotated[
        Literal["given", "inference", "assumption", "conclusion"],
        Field(
            description="'given': stated in the evidence; 'inference': derived from other "
            "claims; 'assumption': taken for granted without evidence; 'conclusion': the "
            "answer the argument is meant to reach."
        ),
    ]
    confidence: NotRequired[Confidence]
    run_ids: NotRequired[RunIds]
    source: NotRequired[
        Annotated[
            str,
            Field(
                min_length=1,
                max_length=_LIMITS.max_id_chars,
                coerce_numbers_to_str=True,
                description="What the claim is anchored to: for a given, the id of the "
                "evidence span it cites (e.g. 'D2.3'); for any node, an identity key you "
                "choose. Two nodes with different sources are never merged (and do not "
                "attack each other for it). Once set, an id keeps its source. Optional.",
            ),
        ]
    ]


_Endpoint = Annotated[
    str,
    Field(
        min_length=1,
        max_length=_LIMITS.max_id_chars,
        coerce_numbers_to_str=True,
        description="A node id.",
    ),
]

# Functional form because "from" is a Python keyword; both spellings of each
# endpoint are accepted by the store, so both appear in the schema.
EdgeSpec = TypedDict(
    "EdgeSpec",
    {
        "src": NotRequired[_Endpoint],
        "dst": NotRequired[_Endpoint],
        "from": NotRequired[_Endpoint],
        "to": NotRequired[_Endpoint],
        "relation": Annotated[
            Literal["supports", "attacks", "assumes"],
            Field(
                description="'supports': src is a reason for dst; 'attacks': src argues "
                "against dst; 'assumes': dst relies on the assumption src."
            ),
        ],
        "confidence": NotRequired[Confidence],
        "run_ids": NotRequired[RunIds],
    },
)
EdgeSpec.__doc__ = (
    "A directed link between two nodes: give 'src' and 'dst' (or 'from' and 'to') "
    "plus the relation."
)

Nodes = Annotated[
    list[Annotated[NodeSpec, BeforeValidator(_decode_json_text)]],
    BeforeValidator(_decode_json_text),
    Field(
        description="Claims to add. Nodes already in the graph may be repeated (same id "
        "and same claim: their run ids are merged)."
    ),
]
Edges = Annotated[
    list[Annotated[EdgeSpec, BeforeValidator(_decode_json_text)]] | None,
    BeforeValidator(_decode_json_text),
    Field(
        description="Links to add. Both endpoints must exist once this call's nodes "
        "are in (or were asserted earlier). Optional."
    ),
]
Threshold = Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)]

# --- tool annotations (hints for clients deciding what needs user approval) ---

READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)
ADDITIVE = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)
REFUTE = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
DESTRUCTIVE = ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=False)


def _answer(result: dict[str, Any]) -> dict[str, Any]:
    """Return a store result unchanged, or raise the store's error as an MCP error result."""
    if "error" in result:
        raise ToolError(str(result["error"]))
    return result


def build_server(store: GraphStore | None = None) -> MCPServer:
    """Create the MCP server with every tool bound to one GraphStore.

    Input: an existing store (tests share one with library-mode code) or None for a
    fresh one. Output: an :class:`MCPServer` ready for ``run("stdio")`` or an
    in-memory ``mcp.Client``.
    """
    graphs = store if store is not None else GraphStore()
    server = MCPServer(SERVER_NAME, instructions=INSTRUCTIONS)

    def tool(title: str, annotations: ToolAnnotations) -> Callable[[ToolFn], ToolFn]:
        """Register a tool; its docstring, dedented, is the description a model reads."""

        def register(fn: ToolFn) -> ToolFn:
            description = inspect.cleandoc(fn.__doc__ or "")
            server.add_tool(fn, title=title, description=description, annotations=annotations)
            return fn

        return register

    @tool(title="Add claims and links to a graph", annotations=ADDITIVE)
    def assert_graph(
        graph_id: GraphId,
        nodes: Nodes,
        edges: Edges = None,
        run_id: Annotated[
            RunId | None,
            Field(
                description="Tag applied to every node and edge here that names no "
                "run_ids. Optional."
            ),
        ] = None,
        dedup: Annotated[
            bool,
            Field(
                description="Merge new claims into existing duplicates and link "
                "contradictions (default true). False stores every node as sent, with "
                "no merges and no contradictions; merge_duplicates can run later."
            ),
        ] = True,
    ) -> dict[str, Any]:
        """Add nodes and edges to a graph (creating it on first use).

        Valid items are accepted even when others are rejected. New claims that
        duplicate existing ones are merged automatically (unless dedup is false);
        claims that contradict existing ones get mutual attack edges. Never merged (and
        not made to attack each other): claims about different things (a different
        name, number or value in the same slot), a conclusion and a non-conclusion, and
        two nodes with different sources. A node's optional source is what its claim
        is anchored to: for a given, the id of the evidence span it cites; for any
        node, an identity key you choose. Returns accepted_nodes, accepted_edges,
        rejected (each with the item and the reason), auto_merged [[kept, merged]] and
        contradictions_created [[a, b]].
        """
        return _answer(graphs.assert_graph(graph_id, nodes, edges, run_id=run_id, dedup=dedup))

    @tool(title="Merge duplicate claims", annotations=DESTRUCTIVE)
    def merge_duplicates(
        graph_id: GraphId,
        jaccard_threshold: Annotated[
            Threshold,
            Field(
                description="Word-overlap score (0..1) at or above which two claims "
                "count as the same. Higher merges less."
            ),
        ] = 0.7,
        ratio_threshold: Annotated[
            Threshold,
            Field(
                description="Character-similarity score (0..1) at or above which two "
                "claims count as the same. Higher merges less."
            ),
        ] = 0.85,
    ) -> dict[str, Any]:
        """Re-run duplicate detection over the whole graph, folding duplicates together.

        Merged nodes disappear (their claim text is kept as an alias of the survivor).
        Returns merges [[kept, merged]] and contradictions_created [[a, b]].
        """
        return _answer(graphs.merge_duplicates(graph_id, jaccard_threshold, ratio_threshold))

    @tool(title="Check the graph's structure", annotations=READ_ONLY)
    def check_structure(graph_id: GraphId, conclusion_id: ConclusionId) -> dict[str, Any]:
        """Find structural faults in the argument for a conclusion.

        Returns orphans (claims nothing supports), assumptions, cycles (circular
        reasoning), unreachable_conclusion (true when no given fact leads to it) and
        refuted_but_feeding (refuted claims still feeding the conclusion).
        """
        return _answer(graphs.check_structure(graph_id, conclusion_id))

    @tool(title="Find the links a conclusion hangs on", annotations=READ_ONLY)
    def critical_links(graph_id: GraphId, conclusion_id: ConclusionId) -> dict[str, Any]:
        """Find the weakest points of the support for a conclusion.

        Returns min_cut_nodes (fewest claims whose failure cuts the conclusion off from
        the givens), bridge_edges (single links whose loss does the same) and ranked
        links, least confident first.
        """
        return _answer(graphs.critical_links(graph_id, conclusion_id))

    @tool(title="Count independent lines of support", annotations=READ_ONLY)
    def support_width(graph_id: GraphId, conclusion_id: ConclusionId) -> dict[str, Any]:
        """Count the independent (node-disjoint) routes from given facts to a conclusion.

        Returns disjoint_paths (1 means a single point of failure), the paths
        themselves and max_flow (the same cut weighted by confidence).
        """
        return _answer(graphs.support_width(graph_id, conclusion_id))

    @tool(title="Which claims survive the attacks", annotations=READ_ONLY)
    def surviving_claims(graph_id: GraphId) -> dict[str, Any]:
        """Label every claim by grounded argumentation semantics.

        Returns in (accepted), out (defeated by an accepted attacker), undecided, and
        surviving (accepted claims still connected to the given facts).
        """
        return _answer(graphs.surviving_claims(graph_id))

    @tool(title="Mark a claim refuted", annotations=REFUTE)
    def mark_refuted(
        graph_id: GraphId,
        node_id: NodeId,
        reason: Annotated[
            str,
            Field(
                min_length=1,
                max_length=_LIMITS.max_reason_chars,
                description="Why the claim is false, in one sentence.",
            ),
        ],
        conclusion_id: Annotated[
            ConclusionId | None,
            Field(
                description="Conclusion whose support width to report before and after. "
                "Optional when the graph has exactly one node of type 'conclusion'."
            ),
        ] = None,
    ) -> dict[str, Any]:
        """Record that a claim was shown false; it stops counting as support.

        Marking it again changes nothing. Returns ok, node_id, already_refuted, the
        conclusion_id used and its support width before and after (null when the
        graph has no single conclusion and none was named).
        """
        return _answer(graphs.mark_refuted(graph_id, node_id, reason, conclusion_id))

    @tool(title="Find disputed claims", annotations=READ_ONLY)
    def disputed_nodes(graph_id: GraphId, conclusion_id: ConclusionId) -> dict[str, Any]:
        """List what needs more evidence before the conclusion can be trusted.

        Returns contradiction_pairs (claims attacking each other) and
        isolated_load_bearing (claims the conclusion depends on that only one run
        asserted, with their run_count and whether they lie on a support path).
        """
        return _answer(graphs.disputed_nodes(graph_id, conclusion_id))

    @tool(title="Update a claim's confidence or provenance", annotations=ADDITIVE)
    def update_node(
        graph_id: GraphId,
        node_id: NodeId,
        confidence: Annotated[
            Confidence | None,
            Field(description="New confidence, 0.0 to 1.0. Omit to keep the current one."),
        ] = None,
        run_id: Annotated[
            RunId | None,
            Field(description="Run id to add to the claim's provenance. Optional."),
        ] = None,
    ) -> dict[str, Any]:
        """Set a claim's confidence and/or add a run that vouches for it.

        Returns ok and the updated node.
        """
        return _answer(graphs.update_node(graph_id, node_id, confidence=confidence, run_id=run_id))

    @tool(title="Read a whole graph", annotations=READ_ONLY)
    def get_graph(graph_id: GraphId) -> dict[str, Any]:
        """Return every node (with confidence, run_ids, refuted flag, aliases, source) and edge."""
        return _answer(graphs.get_graph(graph_id))

    @tool(title="List graphs", annotations=READ_ONLY)
    def list_graphs() -> dict[str, Any]:
        """List the graphs held in memory with their node and edge counts."""
        return _answer(graphs.list_graphs())

    @tool(title="Delete a graph", annotations=DESTRUCTIVE)
    def delete_graph(graph_id: GraphId) -> dict[str, Any]:
        """Delete a graph and everything in it. This cannot be undone."""
        return _answer(graphs.delete_graph(graph_id))

    return server


def main() -> None:
    """Console entry point: serve one GraphStore over stdio until stdin closes."""
    logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    log.info("logic-graph MCP server starting on stdio")
    try:
        build_server().run("stdio")
    except KeyboardInterrupt:
        log.info("interrupted; exiting")


if __name__ == "__main__":
    main()
