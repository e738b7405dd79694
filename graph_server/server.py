"""MCP stdio server: the GraphStore's functions exposed as MCP tools.

This is a transport layer only. Every tool call goes through :func:`dispatch`, which
checks the argument names strictly and hands the values to one shared
:class:`graph_server.store.GraphStore`; the store validates them and its dict comes
back unchanged (as structured content, plus the same dict as indented JSON text).
The store's ``{"error": ...}`` answers become MCP error results (``isError: true``)
carrying the store's message. So library mode and MCP mode answer the same input
with the same payload: there is no second validation layer that could disagree.

What lives here is declarative: each tool's input schema (what a model reads),
its typed output schema, its annotations and its description, with the store's
limits written in. The server is built on the SDK's low-level ``Server`` so that
only the tools capability is advertised (no empty prompts or resources).

Run it with ``python -m graph_server.server`` or the ``logic-graph-server`` script.
stdout carries the protocol (see :mod:`graph_server.transport`); logs go to stderr.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import anyio
import anyio.from_thread
import anyio.to_thread
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server

from graph_server import export
from graph_server.state import StateFile, StateFileError
from graph_server.store import CancelCheck, GraphStore
from graph_server.transport import Cancellations, stdio_transport
from graph_server.validation import EDGE_KEYS, NODE_KEYS, StoreLimits

SERVER_NAME = "logic-graph"

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
export_graph writes a graph out as json (replayable into assert_graph), graphml or mermaid.
Graph ids are yours to choose; graphs live in memory until delete_graph (and, when the
server was started with --state-file, are saved after every change and reloaded at start).
Unknown argument names are refused, never ignored."""

log = logging.getLogger("graph_server.server")
Payload = dict[str, Any]
Schema = dict[str, Any]


def package_version() -> str:
    """The installed logic-graph version (``0+unknown`` when run from a bare checkout)."""
    try:
        return version("logic-graph")
    except PackageNotFoundError:
        return "0+unknown"


# ------------------------------------------------------------------ schemas


def _obj(properties: dict[str, Schema], required: list[str], *, strict: bool = True) -> Schema:
    schema: Schema = {"type": "object", "properties": properties, "required": required}
    if strict:
        schema["additionalProperties"] = False
    return schema


def _list(items: Schema, description: str | None = None) -> Schema:
    schema: Schema = {"type": "array", "items": items}
    if description:
        schema["description"] = description
    return schema


_STR: Schema = {"type": "string"}
_STRS = _list(_STR)
_PAIRS = _list({"type": "array", "items": _STR, "minItems": 2, "maxItems": 2})
_TRIPLES = _list({"type": "array", "items": _STR, "minItems": 3, "maxItems": 3})
_NUMBER: Schema = {"type": "number"}
_OPTIONAL_STR: Schema = {"type": ["string", "null"]}
_OPTIONAL_INT: Schema = {"type": ["integer", "null"]}
_NODE_OUT = _obj(
    {
        "id": _STR,
        "claim": _STR,
        "type": {"type": "string", "enum": ["given", "inference", "assumption", "conclusion"]},
        "confidence": _NUMBER,
        "run_ids": _STRS,
        "refuted": {"type": "boolean"},
        "refute_reason": _OPTIONAL_STR,
        "aliases": _STRS,
        "merged_ids": _STRS,
        "source": _OPTIONAL_STR,
    },
    [
        "id",
        "claim",
        "type",
        "confidence",
        "run_ids",
        "refuted",
        "refute_reason",
        "aliases",
        "merged_ids",
        "source",
    ],
    strict=False,
)


_SEARCH_OUTPUT = _obj(
    {
        "index": _STR,
        "query": _STR,
        "dense_used": {"type": "boolean"},
        "dense_note": _STR,
        "hits": _list(
            _obj(
                {
                    "chunk_id": _STR,
                    "path": _STR,
                    "page": {"type": "integer"},
                    "section": _STR,
                    "version": _OPTIONAL_STR,
                    "score": _NUMBER,
                    "text": _STR,
                    "spans": _list(
                        _obj(
                            {
                                "id": _STR,
                                "text": _STR,
                                "start": {"type": "integer"},
                                "end": {"type": "integer"},
                            },
                            ["id", "text", "start", "end"],
                            strict=False,
                        )
                    ),
                },
                ["chunk_id", "path", "page", "section", "version", "score", "text", "spans"],
                strict=False,
            )
        ),
    },
    ["index", "query", "dense_used", "dense_note", "hits"],
    strict=False,
)


class _Inputs:
    """Input schema fragments, with the store's limits written into the descriptions."""

    def __init__(self, limits: StoreLimits) -> None:
        ids = limits.max_id_chars
        id_rule = (
            f"1-{ids} characters; surrounding spaces and zero-width characters are dropped, "
            "control or zero-width characters inside are refused; a number is taken as its "
            "decimal string."
        )
        self.graph_id = self._id(
            f"Name of the graph to work on, e.g. 'cron-question'; yours to choose. {id_rule}", ids
        )
        self.node_id = self._id(f"Id of a node in this graph. {id_rule}", ids)
        self.conclusion_id = self._id(
            "Id of the node to analyse as the conclusion (normally the node of type "
            f"'conclusion'). {id_rule}",
            ids,
        )
        self.run_id = self._id(
            "Provenance tag naming the reasoning run behind an item, e.g. 'r2'. Claims "
            f"asserted by several runs are corroborated. {id_rule}",
            ids,
        )
        self.confidence: Schema = {
            "type": "number",
            "minimum": 0.0,
            "maximum": 1.0,
            "description": "How sure you are, from 0.0 to 1.0 (default 0.8). A numeric "
            "string such as '0.9' is accepted; true/false are not numbers.",
        }
        run_ids = {
            "type": "array",
            "items": {"type": "string", "minLength": 1, "maxLength": ids},
            "description": "Runs that asserted this item (a list, or one run id). Optional; "
            "defaults to [run_id].",
        }
        self.node = _obj(
            {
                "id": self._id(f"Node id, unique within the graph. {id_rule}", ids),
                "claim": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": limits.max_claim_chars,
                    "description": "The claim in one plain sentence, at most "
                    f"{limits.max_claim_chars:,} characters.",
                },
                "type": {
                    "type": "string",
                    "enum": ["given", "inference", "assumption", "conclusion"],
                    "description": "'given': stated in the evidence; 'inference': derived "
                    "from other claims; 'assumption': taken without evidence; "
                    "'conclusion': the answer the argument is meant to reach.",
                },
                "confidence": self.confidence,
                "run_ids": run_ids,
                "source": self._id(
                    "What the claim is anchored to: for a given, the id of the evidence span "
                    "it cites (e.g. 'D2.3'); for any node, an identity key you choose. Two "
                    "nodes with different sources are never merged. Once set, an id keeps its "
                    "source. Optional.",
                    ids,
                ),
            },
            ["id", "claim", "type"],
        )
        assert set(self.node["properties"]) == set(NODE_KEYS)
        endpoint = self._id("A node id (asserted earlier or in this call).", ids)
        self.edge = _obj(
            {
                "src": {**endpoint, "description": "Where the link starts (or use 'from')."},
                "dst": {**endpoint, "description": "Where the link ends (or use 'to')."},
                "from": {**endpoint, "description": "Same as 'src'."},
                "to": {**endpoint, "description": "Same as 'dst'."},
                "relation": {
                    "type": "string",
                    "enum": ["supports", "attacks", "assumes"],
                    "description": "'supports': src is a reason for dst; 'attacks': src "
                    "argues against dst; 'assumes': dst relies on the assumption src.",
                },
                "confidence": self.confidence,
                "run_ids": run_ids,
            },
            ["relation"],
        )
        # Each endpoint is required under one of its two names.
        self.edge["allOf"] = [
            {"anyOf": [{"required": ["src"]}, {"required": ["from"]}]},
            {"anyOf": [{"required": ["dst"]}, {"required": ["to"]}]},
        ]
        assert set(self.edge["properties"]) == set(EDGE_KEYS)
        self.threshold = {"type": "number", "minimum": 0.0, "maximum": 1.0}

    @staticmethod
    def _id(description: str, max_length: int) -> Schema:
        return {
            "type": "string",
            "minLength": 1,
            "maxLength": max_length,
            "description": description,
        }


@dataclass(frozen=True)
class ToolSpec:
    """One MCP tool: what tools/list shows and how a call reaches the store."""

    name: str
    title: str
    description: str
    annotations: types.ToolAnnotations
    inputs: dict[str, Schema]
    required: tuple[str, ...]
    output: Schema
    run: Callable[[GraphStore, dict[str, Any], CancelCheck], Payload]

    def tool(self) -> types.Tool:
        return types.Tool(
            name=self.name,
            title=self.title,
            description=self.description,
            input_schema=_obj(self.inputs, list(self.required)),
            output_schema=self.output,
            annotations=self.annotations,
        )


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


def tool_specs(limits: StoreLimits) -> list[ToolSpec]:
    """The sixteen tools, their schemas and descriptions (limits taken from ``limits``)."""
    i = _Inputs(limits)
    graph_only = {"graph_id": i.graph_id}
    on_conclusion = {"graph_id": i.graph_id, "conclusion_id": i.conclusion_id}
    read = _hints(read_only=True)
    limits_text = (
        f"Limits: {limits.max_items_per_call:,} nodes + edges per call, "
        f"{limits.max_nodes_per_graph:,} nodes and {limits.max_edges_per_graph:,} edges per "
        f"graph, {limits.max_graphs:,} graphs, claims up to {limits.max_claim_chars:,} "
        f"characters, ids up to {limits.max_id_chars}, and {limits.max_claim_bytes:,} bytes "
        "of claim text across all graphs (the memory budget; a call over it is refused "
        "whole)."
    )
    return [
        ToolSpec(
            "assert_graph",
            "Add claims and links to a graph",
            "Add nodes and edges to a graph (creating it on first use). Valid items are "
            "accepted even when others are rejected; each rejected item comes back with its "
            "position (at, e.g. 'nodes.3') and the reason. Unknown keys in a node or edge are "
            "rejected, not ignored. Re-sending the same payload changes nothing. New claims "
            "that restate existing ones are merged into them (unless dedup is false), so "
            "nodes can disappear into others: auto_merged lists [kept, merged] and the merged "
            "id keeps resolving to the kept node. Claims that contradict existing ones get "
            "mutual attack edges. Never merged: claims about different things (a different "
            "name, number or value in the same slot), a conclusion and a non-conclusion, and "
            "two nodes with different sources. On a graph with registered evidence "
            "(add_evidence), every given must cite a registered span in source and say what "
            "it says (its numbers and names occur in the span, its words are contained in "
            "it, no negation added); one that fails is stored as an assumption, and "
            "citations lists every check with its reason. All or nothing: if the call is cancelled "
            "before it commits, or would exceed the memory budget, nothing is applied and "
            "the error says so. " + limits_text,
            _hints(read_only=False, destructive=True, idempotent=True),
            {
                "graph_id": i.graph_id,
                "nodes": _list(i.node, "Claims to add (same id and claim again: run ids merge)."),
                "edges": _list(
                    i.edge,
                    "Links to add; both endpoints must exist once this call's nodes are in. "
                    "Optional.",
                ),
                "run_id": {
                    **i.run_id,
                    "description": "Tag for every node and edge here that names no run_ids. "
                    "Optional.",
                },
                "dedup": {
                    "type": "boolean",
                    "description": "Merge new claims into existing duplicates and link "
                    "contradictions (default true). False stores every node as sent; "
                    "merge_duplicates can run later.",
                },
            },
            ("graph_id", "nodes"),
            _obj(
                {
                    "accepted_nodes": _STRS,
                    "accepted_edges": _TRIPLES,
                    "rejected": _list(
                        _obj(
                            {"at": _STR, "item": {}, "reason": _STR},
                            ["at", "item", "reason"],
                            strict=False,
                        )
                    ),
                    "citations": _list(
                        _obj(
                            {
                                "at": _STR,
                                "id": _STR,
                                "source": _OPTIONAL_STR,
                                "ok": {"type": "boolean"},
                                "reason": _OPTIONAL_STR,
                                "detail": _STR,
                            },
                            ["at", "id", "source", "ok", "reason", "detail"],
                            strict=False,
                        )
                    ),
                    "auto_merged": _PAIRS,
                    "contradictions_created": _PAIRS,
                },
                [
                    "accepted_nodes",
                    "accepted_edges",
                    "rejected",
                    "citations",
                    "auto_merged",
                    "contradictions_created",
                ],
                strict=False,
            ),
            lambda s, a, cancel: s.assert_graph(
                a["graph_id"],
                a["nodes"],
                a.get("edges"),
                run_id=a.get("run_id"),
                dedup=a.get("dedup", True),
                cancel=cancel,
            ),
        ),
        ToolSpec(
            "merge_duplicates",
            "Merge duplicate claims",
            "Re-run duplicate detection over the whole graph, folding duplicates together. "
            "Merged nodes disappear (their claim is kept as an alias of the survivor, their "
            "id resolves to it). A second pass merges nothing. Returns merges [[kept, "
            "merged]] and contradictions_created [[a, b]]. A cancelled pass changes nothing.",
            _hints(read_only=False, destructive=True, idempotent=True),
            {
                "graph_id": i.graph_id,
                "jaccard_threshold": {
                    **i.threshold,
                    "description": "Word-overlap score (0..1, default 0.7) at or above which "
                    "two claims count as the same. Higher merges less.",
                },
                "ratio_threshold": {
                    **i.threshold,
                    "description": "Character-similarity score (0..1, default 0.85) at or "
                    "above which two claims count as the same. Higher merges less.",
                },
            },
            ("graph_id",),
            _obj(
                {"merges": _PAIRS, "contradictions_created": _PAIRS},
                ["merges", "contradictions_created"],
                strict=False,
            ),
            lambda s, a, cancel: s.merge_duplicates(
                a["graph_id"],
                a.get("jaccard_threshold", 0.7),
                a.get("ratio_threshold", 0.85),
                cancel=cancel,
            ),
        ),
        ToolSpec(
            "check_structure",
            "Check the graph's structure",
            "Find structural faults in the argument for a conclusion. Returns orphans "
            "(claims nothing supports that are neither givens nor assumptions), assumptions "
            "(unsupported assumptions), cycles (circular support, at most 10), "
            "unreachable_conclusion (true when no live given leads to it) and "
            "refuted_but_feeding (refuted claims with a support path to it).",
            read,
            on_conclusion,
            ("graph_id", "conclusion_id"),
            _obj(
                {
                    "orphans": _STRS,
                    "assumptions": _STRS,
                    "cycles": _list(_STRS),
                    "unreachable_conclusion": {"type": "boolean"},
                    "refuted_but_feeding": _STRS,
                },
                [
                    "orphans",
                    "assumptions",
                    "cycles",
                    "unreachable_conclusion",
                    "refuted_but_feeding",
                ],
                strict=False,
            ),
            lambda s, a, _: s.check_structure(a["graph_id"], a["conclusion_id"]),
        ),
        ToolSpec(
            "critical_links",
            "Find the links a conclusion hangs on",
            "Find the weakest points of the support for a conclusion. Returns min_cut_nodes "
            "(fewest claims whose failure cuts the conclusion off from the givens), "
            "bridge_edges (single links whose loss does the same) and ranked: every link on "
            "an evidence route with its betweenness and the lowest confidence on it, least "
            "confident first.",
            read,
            on_conclusion,
            ("graph_id", "conclusion_id"),
            _obj(
                {
                    "min_cut_nodes": _STRS,
                    "bridge_edges": _PAIRS,
                    "ranked": _list(
                        _obj(
                            {
                                "edge": _list(_STR),
                                "betweenness": _NUMBER,
                                "min_confidence_on_edge": _NUMBER,
                            },
                            ["edge", "betweenness", "min_confidence_on_edge"],
                            strict=False,
                        )
                    ),
                },
                ["min_cut_nodes", "bridge_edges", "ranked"],
                strict=False,
            ),
            lambda s, a, _: s.critical_links(a["graph_id"], a["conclusion_id"]),
        ),
        ToolSpec(
            "support_width",
            "Count independent lines of support",
            "Count the independent (node-disjoint) routes from live given facts to a "
            "conclusion. Returns disjoint_paths (1 means a single point of failure, 0 no "
            "evidence), the paths themselves and max_flow (the same routes weighted by "
            "confidence).",
            read,
            on_conclusion,
            ("graph_id", "conclusion_id"),
            _obj(
                {"disjoint_paths": {"type": "integer"}, "paths": _list(_STRS), "max_flow": _NUMBER},
                ["disjoint_paths", "paths", "max_flow"],
                strict=False,
            ),
            lambda s, a, _: s.support_width(a["graph_id"], a["conclusion_id"]),
        ),
        ToolSpec(
            "argument_width",
            "Count independent arguments",
            "Count the independent arguments for a conclusion. Reasons one run lists "
            "together for a claim are joint premises (all needed); an argument is a minimal "
            "set of claims that derives the conclusion from live givens that way. Returns "
            "width (the most arguments sharing no claim; 1 means one line that any of its "
            "claims can break, however many paths it has), arguments (each argument's claims "
            "without the conclusion), independent (a largest set of them sharing no claim), "
            "min_cut (fewest claims whose failure leaves no argument), capped (true when a "
            "claim had more than max_arguments derivations or the search ran out of work: "
            "width and cut are then lower bounds) and max_arguments.",
            read,
            on_conclusion,
            ("graph_id", "conclusion_id"),
            _obj(
                {
                    "width": {"type": "integer"},
                    "arguments": _list(_STRS),
                    "independent": _list(_STRS),
                    "min_cut": _STRS,
                    "capped": {"type": "boolean"},
                    "max_arguments": {"type": "integer"},
                },
                ["width", "arguments", "independent", "min_cut", "capped", "max_arguments"],
                strict=False,
            ),
            lambda s, a, _: s.argument_width(a["graph_id"], a["conclusion_id"]),
        ),
        ToolSpec(
            "surviving_claims",
            "Which claims survive the attacks",
            "Label every claim by grounded argumentation semantics over the attack edges: "
            "refuted claims are out; a claim is in when all its attackers are out, out when "
            "an attacker is in, undecided otherwise (e.g. two claims attacking each other). "
            "surviving lists the claims that are not out (in or undecided: undecided claims "
            "count as surviving) and are either givens or reachable from a given that is not "
            "out through support edges between claims that are not out.",
            read,
            graph_only,
            ("graph_id",),
            _obj(
                {"in": _STRS, "out": _STRS, "undecided": _STRS, "surviving": _STRS},
                ["in", "out", "undecided", "surviving"],
                strict=False,
            ),
            lambda s, a, _: s.surviving_claims(a["graph_id"]),
        ),
        ToolSpec(
            "mark_refuted",
            "Mark a claim refuted",
            "Record that a claim was shown false; it stops counting as support. This cannot "
            "be undone through the tools. Marking it again changes nothing and keeps the "
            "first reason. Returns ok, node_id, already_refuted, the conclusion_id used and "
            "its support width before and after (null when the graph has no single "
            "conclusion and none was named).",
            _hints(read_only=False, destructive=True, idempotent=True),
            {
                "graph_id": i.graph_id,
                "node_id": i.node_id,
                "reason": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": limits.max_reason_chars,
                    "description": "Why the claim is false, in one sentence (at most "
                    f"{limits.max_reason_chars:,} characters).",
                },
                "conclusion_id": {
                    **i.conclusion_id,
                    "description": "Conclusion whose support width to report before and "
                    "after. Optional when the graph has exactly one node of type "
                    "'conclusion'.",
                },
            },
            ("graph_id", "node_id", "reason"),
            _obj(
                {
                    "ok": {"type": "boolean"},
                    "node_id": _STR,
                    "already_refuted": {"type": "boolean"},
                    "conclusion_id": _OPTIONAL_STR,
                    "width_before": _OPTIONAL_INT,
                    "width_after": _OPTIONAL_INT,
                },
                [
                    "ok",
                    "node_id",
                    "already_refuted",
                    "conclusion_id",
                    "width_before",
                    "width_after",
                ],
                strict=False,
            ),
            lambda s, a, _: s.mark_refuted(
                a["graph_id"], a["node_id"], a["reason"], a.get("conclusion_id")
            ),
        ),
        ToolSpec(
            "disputed_nodes",
            "Find disputed claims",
            "List what needs more evidence before the conclusion can be trusted. "
            "contradiction_pairs: live claims attacking each other both ways (a pair with a "
            "refuted side is settled and left out). isolated_load_bearing: live claims "
            "asserted by exactly one run that lie on an evidence route to the conclusion "
            "(on_path true) or attack such a claim or the conclusion (on_path false), with "
            "their run_count. Claims without run ids (no provenance) are never reported as "
            "isolated, and the conclusion itself is not listed.",
            read,
            on_conclusion,
            ("graph_id", "conclusion_id"),
            _obj(
                {
                    "contradiction_pairs": _PAIRS,
                    "isolated_load_bearing": _list(
                        _obj(
                            {
                                "id": _STR,
                                "run_count": {"type": "integer"},
                                "on_path": {"type": "boolean"},
                            },
                            ["id", "run_count", "on_path"],
                            strict=False,
                        )
                    ),
                },
                ["contradiction_pairs", "isolated_load_bearing"],
                strict=False,
            ),
            lambda s, a, _: s.disputed_nodes(a["graph_id"], a["conclusion_id"]),
        ),
        ToolSpec(
            "update_node",
            "Update a claim's confidence or provenance",
            "Set a claim's confidence (overwriting the old value) and/or add a run that "
            "vouches for it. Needs at least one of the two. Returns ok and the updated node.",
            _hints(read_only=False, destructive=True, idempotent=True),
            {
                "graph_id": i.graph_id,
                "node_id": i.node_id,
                "confidence": {
                    **i.confidence,
                    "description": "New confidence, 0.0 to 1.0; replaces the current one.",
                },
                "run_id": {**i.run_id, "description": "Run id to add to the claim's provenance."},
            },
            ("graph_id", "node_id"),
            _obj({"ok": {"type": "boolean"}, "node": _NODE_OUT}, ["ok", "node"], strict=False),
            lambda s, a, _: s.update_node(
                a["graph_id"], a["node_id"], confidence=a.get("confidence"), run_id=a.get("run_id")
            ),
        ),
        ToolSpec(
            "get_graph",
            "Read a whole graph",
            "Return every node (claim, type, confidence, run_ids, refuted flag and reason, "
            "aliases, merged_ids, source) and every edge, sorted by id.",
            read,
            graph_only,
            ("graph_id",),
            _obj(
                {
                    "graph_id": _STR,
                    "nodes": _list(_NODE_OUT),
                    "edges": _list(
                        _obj(
                            {
                                "src": _STR,
                                "dst": _STR,
                                "relation": {
                                    "type": "string",
                                    "enum": ["supports", "attacks", "assumes"],
                                },
                                "confidence": _NUMBER,
                                "run_ids": _STRS,
                            },
                            ["src", "dst", "relation", "confidence", "run_ids"],
                            strict=False,
                        )
                    ),
                },
                ["graph_id", "nodes", "edges"],
                strict=False,
            ),
            lambda s, a, _: s.get_graph(a["graph_id"]),
        ),
        ToolSpec(
            "export_graph",
            "Export a graph as JSON, GraphML or Mermaid",
            "Write a graph out for use elsewhere. format 'json': graph holds nodes and "
            "edges exactly as assert_graph takes them, evidence spans for add_evidence and "
            "refuted [{id, reason}] for mark_refuted (content is null); replayed into an "
            "empty graph in that order (assert_graph with dedup false) it gives the same "
            "checks. format 'graphml': content is GraphML text for Gephi, yEd or networkx. "
            "format 'mermaid': content is a Mermaid flowchart to show in chat (at most "
            f"{export.MERMAID_MAX_NODES} nodes; it says what was left out). For those two, "
            "graph is null.",
            read,
            {
                "graph_id": i.graph_id,
                "format": {
                    "type": "string",
                    "enum": list(export.FORMATS),
                    "description": "json, graphml or mermaid.",
                },
            },
            ("graph_id", "format"),
            _obj(
                {
                    "graph_id": _STR,
                    "format": {"type": "string", "enum": list(export.FORMATS)},
                    "graph": {"type": ["object", "null"]},
                    "content": _OPTIONAL_STR,
                },
                ["graph_id", "format", "graph", "content"],
                strict=False,
            ),
            lambda s, a, _: s.export_graph(a["graph_id"], a["format"]),
        ),
        ToolSpec(
            "list_graphs",
            "List graphs",
            "List the graphs held in memory with their node and edge counts, and the claim "
            "bytes in use against the memory budget (claim_bytes, claim_bytes_limit).",
            read,
            {},
            (),
            _obj(
                {
                    "graphs": _list(
                        _obj(
                            {
                                "graph_id": _STR,
                                "nodes": {"type": "integer"},
                                "edges": {"type": "integer"},
                            },
                            ["graph_id", "nodes", "edges"],
                            strict=False,
                        )
                    ),
                    "claim_bytes": {"type": "integer"},
                    "claim_bytes_limit": {"type": "integer"},
                },
                ["graphs", "claim_bytes", "claim_bytes_limit"],
                strict=False,
            ),
            lambda s, a, _: s.list_graphs(),
        ),
        ToolSpec(
            "delete_graph",
            "Delete a graph",
            "Delete a graph and everything in it, freeing its memory and its share of the "
            "memory budget. This cannot be undone.",
            _hints(read_only=False, destructive=True, idempotent=True),
            graph_only,
            ("graph_id",),
            _obj({"ok": {"type": "boolean"}, "graph_id": _STR}, ["ok", "graph_id"], strict=False),
            lambda s, a, _: s.delete_graph(a["graph_id"]),
        ),
        ToolSpec(
            "add_evidence",
            "Register evidence spans on a graph",
            "Register evidence sentences ({id, text}) on a graph, creating it on first use. "
            "From then on assert_graph checks every given against them: a given must cite "
            "one of these ids in source and restate its text, or it is stored as an "
            "assumption (see citations in assert_graph's reply). Spans from search_evidence "
            "can be passed as they come. Re-sending a span changes nothing; a known id with "
            "a different text is rejected. Span text counts against the memory budget. "
            + limits_text,
            _hints(read_only=False, destructive=False, idempotent=True),
            {
                "graph_id": i.graph_id,
                "spans": _list(
                    _obj(
                        {
                            "id": {
                                "type": "string",
                                "description": "The span's id, cited in a given's source.",
                            },
                            "text": {
                                "type": "string",
                                "description": "The sentence the span holds.",
                            },
                        },
                        ["id", "text"],
                    ),
                    "Evidence sentences to register.",
                ),
            },
            ("graph_id", "spans"),
            _obj(
                {
                    "graph_id": _STR,
                    "accepted": _STRS,
                    "rejected": _list(
                        _obj(
                            {"at": _STR, "item": {}, "reason": _STR},
                            ["at", "item", "reason"],
                            strict=False,
                        )
                    ),
                    "spans": {"type": "integer"},
                },
                ["graph_id", "accepted", "rejected", "spans"],
                strict=False,
            ),
            lambda s, a, _: s.add_evidence(a["graph_id"], a["spans"]),
        ),
        ToolSpec(
            "search_evidence",
            "Search a document index for evidence",
            "Search an index built by `logic-graph ingest` (keyword BM25, plus dense vectors "
            "when the index has them and the corpus extra is installed, fused by rank) and "
            "return the best chunks, each cut into sentences with stable ids "
            "(<chunk id>:s<n>), the file, page, section and character offsets. To ground a "
            "claim, put a sentence's id in a given node's source and its words in the claim. "
            "Does not touch any graph. Limits: query up to 1,000 characters, k up to 50. "
            "Only indexes inside the folders the server was started with (--index-root DIR, "
            "or LOGIC_GRAPH_INDEX_ROOTS) are opened; any other path gets the same refusal.",
            read,
            {
                "index": {"type": "string", "description": "Path of the index file."},
                "query": {"type": "string", "description": "What to look for (any text)."},
                "k": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 50,
                    "description": "How many chunks to return (default 5).",
                },
            },
            ("index", "query"),
            _SEARCH_OUTPUT,
            lambda s, a, cancel: _search_evidence(a["index"], a["query"], a.get("k", 5), cancel),
        ),
    ]


_index_root_flags: list[Path] = []
"""The ``--index-root`` folders main() was given (the environment variable adds more)."""


def _search_evidence(index: Any, query: Any, k: Any, cancel: CancelCheck) -> Payload:
    # Imported on first use: graph-only sessions never load the corpus code.
    from orchestrator.corpus.documents import index_roots_from_env, search_evidence

    roots = [*_index_root_flags, *index_roots_from_env()]
    return search_evidence(index, query, k, roots=roots, cancel=cancel)


# ----------------------------------------------------------------- dispatch


def dispatch(
    store: GraphStore,
    name: str,
    arguments: Any,
    cancel: CancelCheck | None = None,
    specs: dict[str, ToolSpec] | None = None,
) -> Payload:
    """Run one tool call against ``store``: the single path for MCP and library callers.

    Argument names are checked strictly (an unknown name is an error naming it and
    the accepted ones; a missing required one is an error naming it); ``null`` for an
    optional argument means "not given". The values go to the store unchanged, which
    validates them. Returns the store's dict (``{"error": ...}`` on failure).
    """
    table = specs if specs is not None else {spec.name: spec for spec in tool_specs(store.limits)}
    spec = table.get(name)
    if spec is None:
        return {"error": f"unknown tool {name!r}; the tools are: {', '.join(sorted(table))}"}
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        return {"error": f"arguments of {name} must be an object, got {type(arguments).__name__}"}
    unknown = sorted(str(key) for key in arguments if key not in spec.inputs)
    if unknown:
        accepted = ", ".join(sorted(spec.inputs)) or "none"
        return {
            "error": f"unknown argument {unknown[0]!r} for {name}; accepted arguments: {accepted}"
        }
    given = {key: value for key, value in arguments.items() if value is not None}
    missing = [key for key in spec.required if key not in given]
    if missing:
        return {"error": f"{missing[0]} is required for {name}"}
    return spec.run(store, given, cancel or (lambda: False))


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
    store: GraphStore,
    name: str,
    arguments: Any,
    cancel: CancelCheck,
    specs: dict[str, ToolSpec],
    state: StateFile | None,
) -> Payload:
    """:func:`dispatch`, then (with a state file) save before the reply, if the call wrote."""
    result = dispatch(store, name, arguments, cancel, specs)
    spec = specs.get(name)
    if state is None or "error" in result or spec is None or spec.annotations.read_only_hint:
        return result
    try:
        state.save(store)
    except OSError as exc:
        return {
            "error": f"{name} was applied in memory but the state file {state.path} could not "
            f"be written ({exc}); the change would be lost when the server stops"
        }
    return result


def build_server(
    store: GraphStore | None = None,
    cancellations: Cancellations | None = None,
    state: StateFile | None = None,
) -> Server[Any]:
    """Create the MCP server with every tool bound to one GraphStore.

    Input: an existing store (tests share one with library-mode code) or None for a
    fresh one, the connection's cancellation record (the stdio transport fills it) and
    an optional state file written after every call that changes something. Output: a
    low-level SDK ``Server`` for :func:`serve_stdio` or an in-memory ``mcp.Client``.
    """
    graphs = store if store is not None else GraphStore()
    cancels = cancellations if cancellations is not None else Cancellations()
    specs = {spec.name: spec for spec in tool_specs(graphs.limits)}
    listing = types.ListToolsResult(tools=[spec.tool() for spec in specs.values()])

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
            return (request_id is not None and cancels.is_cancelled(request_id)) or (
                _host_cancelled()
            )

        try:
            result = await anyio.to_thread.run_sync(
                lambda: _dispatch_and_save(
                    graphs, params.name, params.arguments, cancelled, specs, state
                )
            )
        finally:
            if request_id is not None:
                cancels.finished(request_id)
        if "error" in result:
            log.info("tool %s refused: %s", params.name, result["error"])
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=str(result["error"]))],
                is_error=True,
            )
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=json.dumps(result, indent=2))],
            structured_content=result,
            is_error=False,
        )

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
    _index_root_flags[:] = args.index_root
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
