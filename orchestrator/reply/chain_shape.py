"""The chain shape of an interrogation reply: evidence sentences and inferences, built into a
graph (see :func:`orchestrator.reply.parse.parse_chain`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from orchestrator.reply.fields import (
    CONCLUSION_DECLARED,
    DEFAULT_CONFIDENCE,
    MAX_CLAIM_CHARS,
    kind_of,
    read_answer,
    read_source,
)
from orchestrator.reply.graph_record import ReplyEdge, ReplyGraph, ReplyNode
from orchestrator.reply.top import read_top


def normalise_chain(
    value: Any, spans: Mapping[str, str], max_steps: int
) -> tuple[ReplyGraph | None, list[str], str | None]:
    """(the built graph or None, item errors, the fatal problem or None) for a loaded chain
    reply ``value``; ``spans`` maps span ids to sentences, steps past ``max_steps`` are dropped
    (noted). Never raises. Cost: O(steps)."""
    top = read_top(value, "steps", list, "a list")
    obj, steps, errors = top.obj, top.value, top.errors
    if top.problem is not None:
        return None, errors, top.problem
    answer = read_answer(obj, errors)
    if answer is None:
        return None, errors, "the chain has no answer"
    if len(steps) > max_steps:
        errors.append(f"steps: {len(steps)} given, limit {max_steps}; the rest dropped")
    nodes: list[ReplyNode] = []
    edges: list[ReplyEdge] = []
    pending: list[str] = []  # what the next inference (or the conclusion) rests on
    cited: dict[str, str] = {}  # span id -> given node id, one node per sentence

    def rests_on(node_id: str) -> None:
        for src in dict.fromkeys(pending):
            edges.append(
                {
                    "src": src,
                    "dst": node_id,
                    "relation": "supports",
                    "confidence": DEFAULT_CONFIDENCE,
                }
            )
        pending[:] = [node_id]

    for index, step in enumerate(steps[:max_steps], 1):
        read = _read_step(step, f"steps[{index - 1}]", spans, errors)
        if read is None:
            continue
        span_id, inference = read
        if span_id not in cited:
            cited[span_id] = f"g{index}"
            nodes.append(_node(f"g{index}", spans[span_id], "given", span_id))
        pending.append(cited[span_id])
        if any(char.isalnum() for char in inference):
            nodes.append(_node(f"i{index}", inference, "inference", None))
            rests_on(f"i{index}")
    nodes.append(_node("c", answer, "conclusion", None))
    rests_on("c")
    graph: ReplyGraph = {
        "conclusion_node": "c",
        "conclusion_from": CONCLUSION_DECLARED,
        "answer": answer,
        "nodes": nodes,
        "edges": edges,
        "leniencies": [],
    }
    return graph, errors, None


def _read_step(
    step: object, where: str, spans: Mapping[str, str], errors: list[str]
) -> tuple[str, str] | None:
    """``(span id, inference)`` of one chain step at ``where``, the inference "" when there is
    none or it is too long (noted); None when the step is dropped (noted in ``errors``)."""
    if not isinstance(step, dict):
        errors.append(f"{where} dropped: is {kind_of(step)}, not an object")
        return None
    span_id = read_source(step.get("sentence"), where, errors)
    if span_id is None or span_id not in spans:
        errors.append(f"{where} dropped: {step.get('sentence')!r} is no evidence sentence")
        return None
    raw = step.get("inference")
    inference = " ".join(raw.split()) if isinstance(raw, str) else ""
    if len(inference) > MAX_CLAIM_CHARS:
        errors.append(f"{where}.inference has {len(inference)} characters; ignored")
        return span_id, ""
    return span_id, inference


def _node(node_id: str, claim: str, node_type: str, source: str | None) -> ReplyNode:
    """A chain node: every claim a chain states has the default confidence."""
    return {
        "id": node_id,
        "claim": claim,
        "type": node_type,
        "confidence": DEFAULT_CONFIDENCE,
        "source": source,
    }
