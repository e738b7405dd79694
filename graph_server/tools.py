"""The MCP tools as data: the function each runs, its title, description and annotations.

:data:`TOOLS` lists the sixteen tools, one entry each. A tool is a
:class:`~graph_server.store.GraphStore` method (or :func:`search_evidence`); its JSON Schemas
are derived from that function's signature, as the MCP SDK derives them
(:mod:`graph_server.tool_spec`: the arguments from the parameters' type hints, the types of
:mod:`graph_server.records`; the answer from the return type), with the running store's
limits and duplicate thresholds written in (:func:`tool_listing`). The server
(:mod:`graph_server.server`) runs each call through :meth:`ToolSpec.run` and takes the
accepted argument names, the required ones and the defaults from the same spec, so a schema
and the call it describes cannot drift apart.

Adding a tool is one store method and one :class:`ToolSpec` line in :data:`TOOLS`.
"""

from __future__ import annotations

import functools
from pathlib import Path

import mcp_types as types

from graph_server import export
from graph_server.errors import StoreError
from graph_server.records import IndexPath, Query, SearchDense, SearchEvidenceAnswer, SearchK
from graph_server.store import CancelCheck, GraphStore
from graph_server.tool_spec import ToolSpec, placeholder_values
from graph_server.validation import (
    DEFAULT_SEARCH_K,
    MAX_SEARCH_K,
    MAX_SEARCH_QUERY_CHARS,
    StoreLimits,
)

INSTRUCTIONS = """\
External working memory for arguments. Write your reasoning as a typed graph of
claims (nodes) joined by supports / attacks / assumes edges, then let mechanical
checks tell you where it is weak. A typical session:
1. assert_graph: add nodes (given facts, inferences, assumptions, one conclusion)
   and edges; read `rejected` for anything the store refused and why.
2. check_structure: orphans, cycles, unreachable conclusion, refuted claims still
   feeding the conclusion.
3. support_width / argument_width / critical_links: how many independent routes
   and independent arguments carry the conclusion, and which single links it hangs on.
4. surviving_claims / disputed_nodes: what survives the attacks, what needs evidence.
5. mark_refuted / update_node as evidence arrives, then re-check.
search_evidence finds sentences in an ingested document index; add_evidence registers
them on a graph, and from then on each given must cite one (source) and restate it,
or it is kept as an assumption.
export_graph writes a graph out as json (replayable into assert_graph), graphml, mermaid or html.
Graph ids are yours to choose; graphs live in memory until delete_graph (and, when the
server was started with --state-file, are saved after every change and reloaded at start).
Unknown argument names are refused, never ignored."""

index_root_flags: list[Path] = []
"""The ``--index-root`` folders the server was started with (the environment adds more)."""


def search_evidence(
    index: IndexPath,
    query: Query,
    k: SearchK = DEFAULT_SEARCH_K,
    dense: SearchDense = False,
    *,
    cancel: CancelCheck | None = None,
) -> SearchEvidenceAnswer:
    """The ``search_evidence`` tool: the best chunks of a corpus index, cut into citable spans.

    Only indexes inside the served folders (``--index-root`` and
    ``LOGIC_GRAPH_INDEX_ROOTS``) are opened (:func:`corpus.documents.search_evidence`).

    Parameters
    ----------
    index : str
        Path of the index file.
    query : str
        What to look for.
    k : int, default 5
        How many chunks (1..50).
    dense : bool, default False
        Add dense rankings (keyword only by default, as ``logic-graph search``).
    cancel : callable, optional
        Checked while the query runs.

    Returns
    -------
    SearchEvidenceAnswer
        ``index``, ``query``, ``dense_used``, ``dense_note`` and the ``hits``.

    Raises
    ------
    StoreError
        For bad input, an index outside the served folders or an unusable index.

    Examples
    --------
    >>> search_evidence("/nowhere/idx.sqlite", "rack 7")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    graph_server.errors.StoreError: index: this server serves no index folders; ...
    """
    # Imported on first use: graph-only sessions never load the corpus code (the index,
    # readers, retrieval); they load only the stopwords of corpus.words.
    from corpus.documents import index_roots_from_env
    from corpus.documents import search_evidence as search

    roots = [*index_root_flags, *index_roots_from_env()]
    found = search(index, query, k, dense=dense, roots=roots, cancel=cancel)
    if "error" in found:
        raise StoreError(found["error"])
    return SearchEvidenceAnswer.model_validate(found)


@functools.lru_cache(maxsize=16)
def tool_listing(
    limits: StoreLimits, jaccard_threshold: float, ratio_threshold: float
) -> types.ListToolsResult:
    """The ``tools/list`` answer of a server whose store has these limits and thresholds."""
    values = placeholder_values(limits, jaccard_threshold, ratio_threshold)
    return types.ListToolsResult(tools=[spec.tool(values) for spec in TOOLS])


def _hints(
    *, read_only: bool, destructive: bool = False, idempotent: bool = False
) -> types.ToolAnnotations:
    if read_only:
        return types.ToolAnnotations(read_only_hint=True, open_world_hint=False)
    return types.ToolAnnotations(
        read_only_hint=False,
        destructive_hint=destructive,
        idempotent_hint=idempotent,
        open_world_hint=False,
    )


_READ = _hints(read_only=True)
_WRITE = _hints(read_only=False, destructive=True, idempotent=True)
_ADD = _hints(read_only=False, destructive=False, idempotent=True)

LIMITS_TEXT = (
    "Limits: $max_items_per_call nodes + edges per call, $max_nodes_per_graph nodes and "
    "$max_edges_per_graph edges per graph, $max_graphs graphs, claims up to "
    "$max_claim_chars characters, ids up to $max_id_chars, and $max_claim_bytes bytes of "
    "claim text across all graphs (the memory budget; a call over it is refused whole)."
)

TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        GraphStore.assert_graph,
        "Add claims and links to a graph",
        "Add nodes and edges to a graph (creating it on first use). Valid items are "
        "accepted even when others are rejected; each rejected item comes back with its "
        "position (at, e.g. 'nodes.3') and the reason. Unknown keys in a node or edge are "
        "rejected, not ignored. Re-sending the same payload changes nothing. New claims "
        "that restate existing ones are merged into them (unless dedup is false), so "
        "nodes can disappear into others: auto_merged lists [kept, merged] and the merged "
        "id keeps resolving to the kept node. Claims that contradict existing ones get "
        "mutual attack edges, capped: more than $max_rival_claims claims that differ only "
        "in one number are a list of different things and get none, and no contradiction "
        "passes $max_edges_per_graph edges; contradictions_withheld lists each case. "
        "Never merged: claims about different things (a different "
        "name, number or value in the same slot), a conclusion and a non-conclusion, and "
        "two nodes with different sources. On a graph with registered evidence "
        "(add_evidence), every given must cite a registered span in source and say what "
        "it says (its numbers and names occur in the span, its words are contained in "
        "it, no negation added); one that fails is stored as an assumption, and "
        "citations lists every check with its reason. All or nothing: if the call is cancelled "
        "before it commits, or would exceed the memory budget, nothing is applied and "
        "the error says so. " + LIMITS_TEXT,
        _WRITE,
    ),
    ToolSpec(
        GraphStore.merge_duplicates,
        "Merge duplicate claims",
        "Re-run duplicate detection over the whole graph, folding duplicates together. "
        "Merged nodes disappear (their claim is kept as an alias of the survivor, their "
        "id resolves to it). A second pass merges nothing. Returns merges [[kept, "
        "merged]], contradictions_created [[a, b]] and contradictions_withheld (the caps "
        "of assert_graph). A cancelled pass changes nothing.",
        _WRITE,
    ),
    ToolSpec(
        GraphStore.check_structure,
        "Check the graph's structure",
        "Find structural faults in the argument for a conclusion. Returns orphans "
        "(claims nothing supports that are neither givens nor assumptions), assumptions "
        "(unsupported assumptions), cycles (circular support, at most 10), "
        "unreachable_conclusion (true when no live given leads to it) and "
        "refuted_but_feeding (refuted claims with a support path to it).",
        _READ,
    ),
    ToolSpec(
        GraphStore.critical_links,
        "Find the links a conclusion hangs on",
        "Find the weakest points of the support for a conclusion. Returns min_cut_nodes "
        "(fewest claims whose failure cuts the conclusion off from the givens), "
        "bridge_edges (single links whose loss does the same) and ranked: every link on "
        "an evidence route with its betweenness and the lowest confidence on it, least "
        "confident first.",
        _READ,
    ),
    ToolSpec(
        GraphStore.support_width,
        "Count independent lines of support",
        "Count the independent (node-disjoint) routes from live given facts to a "
        "conclusion. Returns disjoint_paths (1 means a single point of failure, 0 no "
        "evidence), the paths themselves and max_flow (the same routes weighted by "
        "confidence).",
        _READ,
    ),
    ToolSpec(
        GraphStore.argument_width,
        "Count independent arguments",
        "Count the independent arguments for a conclusion. Reasons one run lists "
        "together for a claim are joint premises (all needed); an argument is a minimal "
        "set of claims that derives the conclusion from live givens that way. Returns "
        "width (the most arguments sharing no claim; 1 means one line that any of its "
        "claims can break, however many paths it has), arguments (each argument's claims "
        "without the conclusion), independent (a largest set of them sharing no claim), "
        "min_cut (fewest claims whose failure leaves no argument), capped (true when a "
        "claim had more than max_arguments derivations or the search ran out of work: "
        "width and cut are then lower bounds) and max_arguments. A search running past "
        "$max_request_seconds s ends with an error naming max_request_seconds.",
        _READ,
    ),
    ToolSpec(
        GraphStore.surviving_claims,
        "Which claims survive the attacks",
        "Label every claim by grounded argumentation semantics over the attack edges: "
        "refuted claims are out; a claim is in when all its attackers are out, out when "
        "an attacker is in, undecided otherwise (e.g. two claims attacking each other). "
        "surviving lists the claims that are not out (in or undecided: undecided claims "
        "count as surviving) and are either givens or reachable from a given that is not "
        "out through support edges between claims that are not out.",
        _READ,
    ),
    ToolSpec(
        GraphStore.mark_refuted,
        "Mark a claim refuted",
        "Record that a claim was shown false; it stops counting as support. This cannot "
        "be undone through the tools. Marking it again changes nothing and keeps the "
        "first reason. Returns ok, node_id, already_refuted, the conclusion_id used and "
        "its support width before and after (null when the graph has no single "
        "conclusion and none was named).",
        _WRITE,
    ),
    ToolSpec(
        GraphStore.disputed_nodes,
        "Find disputed claims",
        "List what needs more evidence before the conclusion can be trusted. "
        "contradiction_pairs: live claims attacking each other both ways (a pair with a "
        "refuted side is settled and left out). isolated_load_bearing: live claims "
        "asserted by exactly one run that lie on an evidence route to the conclusion "
        "(on_path true) or attack such a claim or the conclusion (on_path false), with "
        "their run_count. Claims without run ids (no provenance) are never reported as "
        "isolated, and the conclusion itself is not listed.",
        _READ,
    ),
    ToolSpec(
        GraphStore.update_node,
        "Update a claim's confidence or provenance",
        "Set a claim's confidence (overwriting the old value) and/or add a run that "
        "vouches for it. Needs at least one of the two. Returns ok and the updated node.",
        _WRITE,
    ),
    ToolSpec(
        GraphStore.get_graph,
        "Read a whole graph",
        "Return every node (claim, type, confidence, run_ids, refuted flag and reason, "
        "aliases, merged_ids, source) and every edge, sorted by id.",
        _READ,
    ),
    ToolSpec(
        GraphStore.export_graph,
        "Export a graph as JSON, GraphML, Mermaid or HTML",
        "Write a graph out for use elsewhere. format 'json': graph holds nodes and "
        "edges exactly as assert_graph takes them, evidence spans for add_evidence and "
        "refuted [{id, reason}] for mark_refuted (content is null); replayed into an "
        "empty graph in that order (assert_graph with dedup false) it gives the same "
        "checks. format 'graphml': content is GraphML text for Gephi, yEd or networkx. "
        "format 'mermaid': content is a Mermaid flowchart to show in chat (at most "
        f"{export.MERMAID_MAX_NODES} nodes; it says what was left out). format 'html': "
        "content is one self-contained page (no network) drawing every node, to save and "
        "open in a browser. For those three, graph is null.",
        _READ,
    ),
    ToolSpec(
        GraphStore.list_graphs,
        "List graphs",
        "List the graphs held in memory with their node and edge counts, and the claim "
        "bytes in use against the memory budget (claim_bytes, claim_bytes_limit).",
        _READ,
    ),
    ToolSpec(
        GraphStore.delete_graph,
        "Delete a graph",
        "Delete a graph and everything in it, freeing its memory and its share of the "
        "memory budget. This cannot be undone.",
        _WRITE,
    ),
    ToolSpec(
        GraphStore.add_evidence,
        "Register evidence spans on a graph",
        "Register evidence sentences ({id, text}) on a graph, creating it on first use. "
        "From then on assert_graph checks every given against them: a given must cite "
        "one of these ids in source and restate its text, or it is stored as an "
        "assumption (see citations in assert_graph's reply). Spans from search_evidence "
        "can be passed as they come. Re-sending a span changes nothing; a known id with "
        "a different text is rejected. Span text counts against the memory budget. " + LIMITS_TEXT,
        _ADD,
    ),
    ToolSpec(
        search_evidence,
        "Search a document index for evidence",
        "Search an index built by `logic-graph ingest` (keyword BM25; with dense=true also "
        "dense vectors when the index has them and the corpus extra is installed, fused by "
        "rank) and "
        "return the best chunks, each cut into sentences with stable ids "
        "(<chunk id>:s<n>), the file, page, section and character offsets. To ground a "
        "claim, put a sentence's id in a given node's source and its words in the claim. "
        f"Does not touch any graph. Limits: query up to {MAX_SEARCH_QUERY_CHARS:,} "
        f"characters, k up to {MAX_SEARCH_K}. "
        "Only indexes inside the folders the server was started with (--index-root DIR, "
        "or LOGIC_GRAPH_INDEX_ROOTS) are opened; any other path gets the same refusal.",
        _READ,
    ),
)

SPECS: dict[str, ToolSpec] = {spec.name: spec for spec in TOOLS}
"""The tools by name."""
