"""Bounded JSON schemas for structured output (``response_format`` of type ``json_schema``).

The bounds (item counts, string lengths, enums) keep a constrained decoder from producing a
runaway graph. Only keywords that llama.cpp's schema-to-grammar converter turns into grammar
are used: ``type``, ``properties``, ``required``, ``additionalProperties: false``, ``enum``,
``items`` with ``minItems``/``maxItems``, ``minLength``/``maxLength``, ``pattern`` (node ids
are ``n1``..``n99``; checked against xllamacpp 2026.10). ``minimum``/``maximum``
on numbers is stated for servers that honour it; llama.cpp ignores it, so parse.py checks the
range anyway. Property order is the order the model must write them in: the nodes first (each
with the reasons it rests on), then the conclusion id and the short answer, so the model picks
its conclusion after laying out the graph.

``strict`` is off by default: strict-mode providers (OpenAI) reject length keywords, while
non-strict servers treat the schema as guidance or, like llama.cpp, enforce it as grammar.

The value sets here (node types, relations, verdicts) are the single source of truth that
:mod:`orchestrator.reply.parse` validates against.
"""

from __future__ import annotations

from collections.abc import Sequence

# The graph's vocabulary is the engine's: one definition, in graph_server.validation.
from graph_server.validation import NODE_TYPES
from orchestrator.llm import JsonObject

SHAPES: tuple[str, ...] = ("graph", "chain", "worked", "reasoned")
"""Interrogation shapes: the full argument graph; the chain a small model can fill (the
answer, the ordered sentence ids leading to it, at most one short inference per step); the
worked shape, plain-text working with every calculation as an equation, whose graph the
system draws (:mod:`orchestrator.checks.derivation`); or the reasoned shape, the baselines'
own reasoned prompt (:mod:`orchestrator.reply.reasoned`), its reply read the same way."""
WORKING_SHAPES: tuple[str, ...] = ("worked", "reasoned")
"""The shapes whose reply is plain-text working: no JSON to hold it to or to repair, and the
system draws the argument graph from it."""
MAX_INFERENCE_CHARS = 160
VERDICTS: tuple[str, ...] = ("supported", "refuted", "not_determinable")
NODE_ID_PATTERN = "^n[1-9][0-9]?$"
NO_SOURCE = "none"
"""The ``source`` of a node that cites no evidence span (every node but a given)."""
MAX_SPAN_IDS = 2000
"""Enum size bound: a grammar with more alternatives gets slow to build in llama.cpp."""
MAX_ANSWER_CHARS = 80
DEFAULT_MAX_NODES = 8
"""Nodes of an interrogation graph when the caller sets no bound."""
DEFAULT_MAX_EDGES = 10
"""Ids per ``because`` / ``against`` list when the caller sets no bound."""
DEFAULT_MAX_CLAIM_CHARS = 160
"""Characters of a claim when the caller sets no bound."""


def interrogation_schema(
    max_nodes: int = DEFAULT_MAX_NODES,
    max_edges: int = DEFAULT_MAX_EDGES,
    max_claim_chars: int = DEFAULT_MAX_CLAIM_CHARS,
    span_ids: Sequence[str] = (),
    max_answer_chars: int = MAX_ANSWER_CHARS,
) -> JsonObject:
    """The JSON schema of an argument graph with at most ``max_nodes`` nodes (1..100),
    claims of at most ``max_claim_chars`` characters (16..2000), each node listing the ids of
    its reasons (``because``) and counter-evidence (``against``), at most ``max_edges`` (0..200)
    per list, and a short ``answer`` of at most ``max_answer_chars`` characters (8..500).

    Each node's ``source`` is one of ``span_ids`` (the task's evidence spans, at most
    :data:`MAX_SPAN_IDS`) or :data:`NO_SOURCE`, so a constrained decoder cannot invent a
    citation. Its property comes before ``claim``: the model picks the sentence, then says
    what it states.
    """
    _bounded("max_nodes", max_nodes, 1, 100)
    _bounded("max_edges", max_edges, 0, 200)
    _bounded("max_claim_chars", max_claim_chars, 16, 2000)
    _bounded("max_answer_chars", max_answer_chars, 8, 500)
    _check_span_ids(span_ids)
    # Ids have a fixed form so a constrained decoder cannot put the answer text or a
    # document number ("D2") where a node id belongs.
    node_id = {"type": "string", "pattern": NODE_ID_PATTERN}
    # Reasons are listed on the node they bear on; parse.py turns them into edges and caps
    # the total at max_edges (a per-graph total is not expressible as grammar).
    reasons = {"type": "array", "items": node_id, "minItems": 0, "maxItems": max(1, max_edges)}
    node = _object(
        {
            "id": node_id,
            "type": {"type": "string", "enum": list(NODE_TYPES)},
            "source": {"type": "string", "enum": [*dict.fromkeys(span_ids), NO_SOURCE]},
            "claim": {"type": "string", "minLength": 1, "maxLength": max_claim_chars},
            "because": reasons,
            "against": reasons,
            "confidence": {"type": "number", "minimum": 0, "maximum": 1},
        }
    )
    return _object(
        {
            "nodes": {"type": "array", "items": node, "minItems": 1, "maxItems": max_nodes},
            "conclusion_node": node_id,
            "answer": {"type": "string", "minLength": 1, "maxLength": max_answer_chars},
        }
    )


def chain_schema(
    span_ids: Sequence[str] = (),
    max_steps: int = 6,
    max_answer_chars: int = MAX_ANSWER_CHARS,
) -> JsonObject:
    """The JSON schema of a chain: 1..``max_steps`` (1..20) steps, each a ``sentence`` (one
    of ``span_ids``) and an ``inference`` of at most :data:`MAX_INFERENCE_CHARS` characters
    ("" for none), then the short ``answer``. The steps come first, so the model reads its way
    to the answer before writing it."""
    _bounded("max_steps", max_steps, 1, 20)
    _bounded("max_answer_chars", max_answer_chars, 8, 500)
    _check_span_ids(span_ids)
    sentence: JsonObject = {"type": "string"}
    if span_ids:
        sentence["enum"] = list(dict.fromkeys(span_ids))
    step = _object(
        {
            "sentence": sentence,
            "inference": {"type": "string", "minLength": 0, "maxLength": MAX_INFERENCE_CHARS},
        }
    )
    return _object(
        {
            "steps": {"type": "array", "items": step, "minItems": 1, "maxItems": max_steps},
            "answer": {"type": "string", "minLength": 1, "maxLength": max_answer_chars},
        }
    )


def chain_response_format(
    span_ids: Sequence[str] = (), max_steps: int = 6, *, strict: bool = False
) -> JsonObject:
    """``response_format`` for a chain-shaped interrogation (see :func:`chain_schema`)."""
    return _response_format("answer_chain", chain_schema(span_ids, max_steps), strict)


def plan_response_format(max_lookups: int = 4, max_chars: int = 300) -> JsonObject:
    """``response_format`` for a hop plan: ``{"lookups": [1..max_lookups questions]}``."""
    lookup = {"type": "string", "minLength": 1, "maxLength": max_chars}
    items = {"type": "array", "items": lookup, "minItems": 1, "maxItems": max_lookups}
    return _response_format("hop_plan", _object({"lookups": items}), False)


def lookup_response_format(span_ids: Sequence[str] = ()) -> JsonObject:
    """``response_format`` for one hop: a ``sentence`` (one of ``span_ids`` or ``"none"``) and
    a short ``answer``. The sentence comes first, so the model finds it before answering."""
    _check_span_ids(span_ids)
    sentence: JsonObject = {"type": "string"}
    if span_ids:
        sentence["enum"] = [*dict.fromkeys(span_ids), "none"]
    answer = {"type": "string", "minLength": 0, "maxLength": MAX_ANSWER_CHARS}
    return _response_format("hop_lookup", _object({"sentence": sentence, "answer": answer}), False)


def verification_schema(max_reason_chars: int = 300) -> JsonObject:
    """The JSON schema of a verdict: one of :data:`VERDICTS` plus a reason (16..2000 chars)."""
    _bounded("max_reason_chars", max_reason_chars, 16, 2000)
    return _object(
        {
            "verdict": {"type": "string", "enum": list(VERDICTS)},
            "reason": {"type": "string", "minLength": 1, "maxLength": max_reason_chars},
        }
    )


def interrogation_response_format(
    max_nodes: int = DEFAULT_MAX_NODES,
    max_edges: int = DEFAULT_MAX_EDGES,
    max_claim_chars: int = DEFAULT_MAX_CLAIM_CHARS,
    span_ids: Sequence[str] = (),
    *,
    strict: bool = False,
) -> JsonObject:
    """``response_format`` for an interrogation call (see :func:`interrogation_schema`)."""
    return _response_format(
        "argument_graph",
        interrogation_schema(max_nodes, max_edges, max_claim_chars, span_ids),
        strict,
    )


def verification_response_format(
    max_reason_chars: int = 300, *, strict: bool = False
) -> JsonObject:
    """``response_format`` for a verification call (see :func:`verification_schema`)."""
    return _response_format("verdict", verification_schema(max_reason_chars), strict)


MAX_QUERIES = 3
MAX_QUERY_CHARS = 200


def query_rewrite_response_format(*, strict: bool = False) -> JsonObject:
    """``response_format`` for a query rewrite: 1 to :data:`MAX_QUERIES` short queries."""
    query = {"type": "string", "minLength": 1, "maxLength": MAX_QUERY_CHARS}
    items = {"type": "array", "items": query, "minItems": 1, "maxItems": MAX_QUERIES}
    return _response_format("search_queries", _object({"queries": items}), strict)


def rerank_response_format(passages: int, *, strict: bool = False) -> JsonObject:
    """``response_format`` for the LLM reranker: every passage number of a pool of
    ``passages`` (1..1000) once, as a list of integers."""
    _bounded("passages", passages, 1, 1000)
    number = {"type": "integer", "minimum": 1, "maximum": passages}
    items = {"type": "array", "items": number, "minItems": passages, "maxItems": passages}
    return _response_format("passage_order", _object({"order": items}), strict)


def _object(properties: JsonObject) -> JsonObject:
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def _response_format(name: str, schema: JsonObject, strict: bool) -> JsonObject:
    return {
        "type": "json_schema",
        "json_schema": {"name": name, "strict": strict, "schema": schema},
    }


def _bounded(field: str, value: object, low: int, high: int) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise ValueError(f"{field}={value!r} is invalid: must be an integer in {low}..{high}")


def _check_span_ids(span_ids: Sequence[str]) -> None:
    if len(span_ids) > MAX_SPAN_IDS or not all(isinstance(i, str) and i for i in span_ids):
        raise ValueError(
            f"span_ids must be at most {MAX_SPAN_IDS} non-empty strings, got {len(span_ids)} items"
        )
