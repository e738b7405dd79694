"""The records the store takes and returns, defined once (pydantic models).

:class:`graph_server.store.GraphStore` returns the answer records below (``GetGraphAnswer``,
``AssertGraphAnswer``, ...), and its signatures name the argument types below
(``GraphId``, ``Nodes``, ...). The MCP server derives each tool's JSON Schemas from those
same signatures (:func:`graph_server.tools.arguments_model`), so a tool's schema, the store's
Python types and the JSON a client receives (``record.model_dump(mode="json")``) are one
definition. Nothing here validates a call: the store does that, so library and MCP callers
are refused alike. Enums and defaults come from :mod:`graph_server.validation`. Values that
depend on the store a server runs on (its :class:`~graph_server.validation.StoreLimits` and
duplicate thresholds) are written as ``$name`` placeholders, in descriptions and in the
``maxLength`` of ids and texts, and filled in when the schema is rendered.

Item models (:class:`NodeIn`, ...) forbid unknown keys (``additionalProperties: false``);
answer records list every key the store returns, all required, and are frozen. A hit of
``search_evidence`` is the corpus's own record, :class:`corpus.views.ChunkView` (a TypedDict,
which pydantic validates and draws as well), so the chunk's JSON is defined once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from corpus.views import ChunkView
from graph_server.validation import (
    DEFAULT_CONFIDENCE,
    DEFAULT_SEARCH_K,
    EXPORT_FORMATS,
    MAX_SEARCH_K,
    NODE_TYPES,
    RELATIONS,
)

ID_RULE = (
    "1-$max_id_chars characters; surrounding spaces and zero-width characters are dropped, "
    "control or zero-width characters inside are refused; a number is taken as its decimal "
    "string."
)
Id = Annotated[str, Field(min_length=1, json_schema_extra={"maxLength": "$max_id_chars"})]
"""An id of any kind: its length limit is the store's ``max_id_chars``."""
Confidence = Annotated[float, Field(ge=0.0, le=1.0)]
Threshold = Annotated[float, Field(ge=0.0, le=1.0)]
Pair = Annotated[list[str], Field(min_length=2, max_length=2)]
Triple = Annotated[list[str], Field(min_length=3, max_length=3)]

CONFIDENCE_TEXT = (
    "How sure you are, from 0.0 to 1.0 (default $default_confidence). A numeric string "
    "such as '0.9' is accepted; true/false are not numbers."
)
RUN_IDS_TEXT = (
    "Runs that asserted this item (a list, or one run id). Optional; defaults to [run_id]."
)


class _Arguments(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _Answer(BaseModel):
    model_config = ConfigDict(frozen=True, populate_by_name=True)


# ------------------------------------------------------------------ argument parts


class NodeIn(_Arguments):
    """One claim as ``assert_graph`` takes it."""

    id: Id = Field(description="Node id, unique within the graph. " + ID_RULE)
    claim: str = Field(
        min_length=1,
        json_schema_extra={"maxLength": "$max_claim_chars"},
        description="The claim in one plain sentence, at most $max_claim_chars characters.",
    )
    type: str = Field(
        json_schema_extra={"enum": list(NODE_TYPES)},
        description="'given': stated in the evidence; 'inference': derived from other "
        "claims; 'assumption': taken without evidence; 'conclusion': the answer the "
        "argument is meant to reach.",
    )
    confidence: Confidence = Field(DEFAULT_CONFIDENCE, description=CONFIDENCE_TEXT)
    run_ids: list[Id] | None = Field(None, description=RUN_IDS_TEXT)
    source: Id | None = Field(
        None,
        description="What the claim is anchored to: for a given, the id of the evidence "
        "span it cites (e.g. 'D2.3'); for any node, an identity key you choose. Two nodes "
        "with different sources are never merged. Once set, an id keeps its source. "
        "Optional.",
    )


_ENDPOINT = "A node id (asserted earlier or in this call)."


class EdgeIn(_Arguments):
    """One link as ``assert_graph`` takes it: each endpoint under one of its two names."""

    model_config = ConfigDict(
        extra="forbid",
        populate_by_name=True,
        json_schema_extra={
            "allOf": [
                {"anyOf": [{"required": ["src"]}, {"required": ["from"]}]},
                {"anyOf": [{"required": ["dst"]}, {"required": ["to"]}]},
            ]
        },
    )

    src: Id | None = Field(None, description="Where the link starts (or use 'from').")
    dst: Id | None = Field(None, description="Where the link ends (or use 'to').")
    from_: Id | None = Field(None, alias="from", description="Same as 'src'.")
    to: Id | None = Field(None, description="Same as 'dst'.")
    relation: str = Field(
        json_schema_extra={"enum": list(RELATIONS)},
        description="'supports': src is a reason for dst; 'attacks': src argues against "
        "dst; 'assumes': dst relies on the assumption src.",
    )
    confidence: Confidence = Field(DEFAULT_CONFIDENCE, description=CONFIDENCE_TEXT)
    run_ids: list[Id] | None = Field(None, description=RUN_IDS_TEXT)


class SpanIn(_Arguments):
    """One evidence sentence as ``add_evidence`` takes it."""

    id: str = Field(description="The span's id, cited in a given's source.")
    text: str = Field(description="The sentence the span holds.")


# ------------------------------------------------------------------ store arguments

_GRAPH_ID = "Name of the graph to work on, e.g. 'cron-question'; yours to choose. " + ID_RULE
_NODE_ID = "Id of a node in this graph. " + ID_RULE
_CONCLUSION_ID = (
    "Id of the node to analyse as the conclusion (normally the node of type 'conclusion'). "
    + ID_RULE
)


@dataclass(frozen=True)
class Wire:
    """What a store argument is on the wire, where its Python type says what library callers
    pass: ``nodes`` are mappings in Python, :class:`NodeIn` objects in the tool's schema."""

    shape: Any


Items = Sequence[Mapping[str, Any]]
"""Nodes, edges or spans as library callers pass them (the store validates each)."""

GraphId = Annotated[Id, Field(description=_GRAPH_ID)]
NodeId = Annotated[Id, Field(description=_NODE_ID)]
ConclusionId = Annotated[Id, Field(description=_CONCLUSION_ID)]
Nodes = Annotated[
    Items,
    Wire(list[NodeIn]),
    Field(description="Claims to add (same id and claim again: run ids merge)."),
]
Edges = Annotated[
    Items | None,
    Wire(list[EdgeIn] | None),
    Field(
        description="Links to add; both endpoints must exist once this call's nodes are "
        "in. Optional."
    ),
]
Spans = Annotated[Items, Wire(list[SpanIn]), Field(description="Evidence sentences to register.")]
RunTag = Annotated[
    Id | None,
    Field(description="Tag for every node and edge here that names no run_ids. Optional."),
]
Dedup = Annotated[
    bool,
    Field(
        description="Merge new claims into existing duplicates and link contradictions "
        "(default true). False stores every node as sent; merge_duplicates can run later."
    ),
]


def _threshold(score: str, name: str) -> Any:
    """An optional similarity threshold, described by the ``score`` it bounds; its default is
    the store's setting ``name``."""
    return Field(
        description=f"{score} (0..1, default ${name}) at or above which two claims count as "
        "the same. Higher merges less.",
    )


JaccardThreshold = Annotated[
    Threshold | None, _threshold("Word-overlap score", "jaccard_threshold")
]
RatioThreshold = Annotated[
    Threshold | None, _threshold("Character-similarity score", "ratio_threshold")
]
Reason = Annotated[
    str,
    Field(
        min_length=1,
        json_schema_extra={"maxLength": "$max_reason_chars"},
        description="Why the claim is false, in one sentence (at most $max_reason_chars "
        "characters).",
    ),
]
WidthConclusion = Annotated[
    Id | None,
    Field(
        description="Conclusion whose support width to report before and after. Optional "
        "when the graph has exactly one node of type 'conclusion'."
    ),
]
NewConfidence = Annotated[
    Confidence | None, Field(description="New confidence, 0.0 to 1.0; replaces the current one.")
]
VerifierRun = Annotated[Id | None, Field(description="Run id to add to the claim's provenance.")]
ExportFormat = Annotated[
    str,
    Field(
        json_schema_extra={"enum": list(EXPORT_FORMATS)},
        description="json, graphml, mermaid or html.",
    ),
]
IndexPath = Annotated[str, Field(description="Path of the index file.")]
Query = Annotated[str, Field(description="What to look for (any text).")]
SearchK = Annotated[
    int,
    Field(
        ge=1,
        le=MAX_SEARCH_K,
        description=f"How many chunks to return (default {DEFAULT_SEARCH_K}).",
    ),
]
SearchDense = Annotated[
    bool,
    Field(
        description="Add dense (vector) rankings when the index holds vectors and the corpus "
        "extra is installed (default false: keyword BM25 only, as `logic-graph search`)."
    ),
]


# ------------------------------------------------------------------ answer parts


class NodeOut(_Answer):
    id: str
    claim: str
    type: str = Field(json_schema_extra={"enum": list(NODE_TYPES)})
    confidence: float
    run_ids: list[str]
    refuted: bool
    refute_reason: str | None
    aliases: list[str]
    merged_ids: list[str]
    source: str | None


class EdgeOut(_Answer):
    src: str
    dst: str
    relation: str = Field(json_schema_extra={"enum": list(RELATIONS)})
    confidence: float
    run_ids: list[str]


class Rejection(_Answer):
    at: str
    item: Any
    reason: str


class CitationCheck(_Answer):
    at: str
    id: str
    source: str | None
    ok: bool
    reason: str | None
    detail: str


class RankedLink(_Answer):
    edge: list[str]
    betweenness: float
    min_confidence_on_edge: float


class IsolatedClaim(_Answer):
    id: str
    run_count: int
    on_path: bool


class GraphCount(_Answer):
    graph_id: str
    nodes: int
    edges: int


# ------------------------------------------------------------------ tool answers


class Withheld(_Answer):
    reason: str
    size: int
    pairs: int
    claims: list[str]


class AssertGraphAnswer(_Answer):
    accepted_nodes: list[str]
    accepted_edges: list[Triple]
    rejected: list[Rejection]
    citations: list[CitationCheck]
    auto_merged: list[Pair]
    contradictions_created: list[Pair]
    contradictions_withheld: list[Withheld]


class MergeDuplicatesAnswer(_Answer):
    merges: list[Pair]
    contradictions_created: list[Pair]
    contradictions_withheld: list[Withheld]


class CheckStructureAnswer(_Answer):
    orphans: list[str]
    assumptions: list[str]
    cycles: list[list[str]]
    unreachable_conclusion: bool
    refuted_but_feeding: list[str]


class CriticalLinksAnswer(_Answer):
    min_cut_nodes: list[str]
    bridge_edges: list[Pair]
    ranked: list[RankedLink]


class SupportWidthAnswer(_Answer):
    disjoint_paths: int
    paths: list[list[str]]
    max_flow: float


class ArgumentWidthAnswer(_Answer):
    width: int
    arguments: list[list[str]]
    independent: list[list[str]]
    min_cut: list[str]
    capped: bool
    max_arguments: int


class SurvivingClaimsAnswer(_Answer):
    in_: list[str] = Field(alias="in")
    out: list[str]
    undecided: list[str]
    surviving: list[str]


class MarkRefutedAnswer(_Answer):
    ok: bool
    node_id: str
    already_refuted: bool
    conclusion_id: str | None
    width_before: int | None
    width_after: int | None


class DisputedNodesAnswer(_Answer):
    contradiction_pairs: list[Pair]
    isolated_load_bearing: list[IsolatedClaim]


class UpdateNodeAnswer(_Answer):
    ok: bool
    node: NodeOut


class GetGraphAnswer(_Answer):
    graph_id: str
    nodes: list[NodeOut]
    edges: list[EdgeOut]


class StoredGraph(GetGraphAnswer):
    """One graph in full as ``dump_state`` writes it: the snapshot, the registered evidence
    (id -> text) and the merge history (merged id -> kept id, merged id -> its claim)."""

    evidence: dict[str, str]
    merged_into: dict[str, str]
    merged_claim: dict[str, str]


class ExportGraphAnswer(_Answer):
    graph_id: str
    format: str = Field(json_schema_extra={"enum": list(EXPORT_FORMATS)})
    graph: dict[str, Any] | None
    content: str | None


class ListGraphsAnswer(_Answer):
    graphs: list[GraphCount]
    claim_bytes: int
    claim_bytes_limit: int


class DeleteGraphAnswer(_Answer):
    ok: bool
    graph_id: str


class AddEvidenceAnswer(_Answer):
    graph_id: str
    accepted: list[str]
    rejected: list[Rejection]
    spans: int


class SearchEvidenceAnswer(_Answer):
    index: str
    query: str
    dense_used: bool
    dense_note: str
    hits: list[ChunkView]
