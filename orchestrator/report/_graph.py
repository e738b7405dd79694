"""The report's sections read off the merged graph: every candidate answer with its support,
the chosen one, the claims refuted, the disputes left, and the givens with their spans."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from graph_server.record_data import NodeData
from orchestrator.checks import Candidate
from orchestrator.loop import LoopResult
from orchestrator.records import (
    AssessmentPart,
    CandidateRecord,
    ChosenRecord,
    ClaimRef,
    Disputes,
    GivenRecord,
)

if TYPE_CHECKING:
    from orchestrator.loop import CorpusRun

Nodes = dict[str, NodeData]
"""The graph's nodes by id."""
Claim = Callable[[str], ClaimRef]
"""A node id -> the id with its claim."""


def assessment_part(result: LoopResult, nodes: Nodes) -> AssessmentPart:
    """report.json's assessment: the chosen answer, the ranked candidates, the surviving
    claims, the labels, the claims refuted (with why) and the disputes left."""
    assessment = result.assessment
    claim = _claims(nodes)
    candidates = [
        _candidate(rank, c, result, claim) for rank, c in enumerate(assessment.candidates, 1)
    ]
    return {
        "chosen": _chosen(result, candidates),
        "candidates": candidates,
        "surviving_claims": [claim(n) for n in assessment.labels["surviving"]],
        "labels": {key: assessment.labels[key] for key in ("in", "out", "undecided")},
        "killed": [
            {"id": n, "claim": node["claim"], "reason": node["refute_reason"]}
            for n, node in sorted(nodes.items())
            if node["refuted"]
        ],
        "remaining_disputes": _remaining_disputes(result, nodes, claim),
    }


def _remaining_disputes(result: LoopResult, nodes: Nodes, claim: Claim) -> Disputes:
    """The disputes the loop left: contradiction pairs, single-run load-bearing claims (and
    whether each was verified), and the disputed claims never verified."""
    assessment = result.assessment
    verified = set(result.interrogated)
    return {
        "contradiction_pairs": [[claim(a), claim(b)] for a, b in assessment.contradiction_pairs],
        "isolated_load_bearing": [
            {**item, "claim": nodes[item["id"]]["claim"], "verified": item["id"] in verified}
            for item in assessment.isolated
        ],
        "unverified": [n for n in assessment.disputed if n not in verified],
    }


def _claims(nodes: Nodes) -> Claim:
    def claim(node_id: str) -> ClaimRef:
        node = nodes.get(node_id)
        return {"id": node_id, "claim": node["claim"] if node else ""}

    return claim


def _candidate(rank: int, c: Candidate, result: LoopResult, claim: Claim) -> CandidateRecord:
    info = result.answers.get(c.node_id)
    return {
        "rank": rank,
        "node_id": c.node_id,
        "answer": c.answer,
        "answer_key": c.answer_key,
        "claim": c.claim,
        "flags": list(c.flags),
        "failed_links": [link.to_dict() for link in c.failed_links],
        "answers_by_run": info["answers"] if info else [],
        "grounded": c.grounded,
        "refuted": c.refuted,
        "surviving": c.surviving,
        "width": c.width,
        "path_width": c.path_width,
        "max_flow": c.max_flow,
        "run_support": c.run_support,
        "run_ids": list(c.run_ids),
        "meets_k": c.grounded and c.width >= result.config.k,
        "arguments": [[claim(n) for n in argument] for argument in c.arguments],
        "argument_cut": list(c.argument_cut),
        "set_aside": [
            {"claims": [claim(n) for n in claims], "reason": reason}
            for claims, reason in c.set_aside
        ],
        "arguments_capped": c.arguments_capped,
        "paths": [[claim(n) for n in path] for path in c.paths],
        "structure": result.structure.get(c.node_id),
    }


def _chosen(result: LoopResult, candidates: list[CandidateRecord]) -> ChosenRecord:
    """The answer's support; on refusal the same keys with no answer and width 0."""
    if result.chosen is None:
        return {
            "node_id": None,
            "answer": None,
            "claim": None,
            "width": 0,
            "path_width": 0,
            "max_flow": 0.0,
            "run_support": 0,
            "meets_k": False,
            "arguments": [],
            "argument_cut": [],
            "arguments_capped": False,
            "paths": [],
            "min_cut_nodes": [],
            "bridge_edges": [],
        }
    entry = next(c for c in candidates if c["node_id"] == result.chosen.node_id)
    links = result.critical_links or {}
    return {
        "node_id": entry["node_id"],
        "answer": entry["answer"],
        "claim": entry["claim"],
        "width": entry["width"],
        "path_width": entry["path_width"],
        "max_flow": entry["max_flow"],
        "run_support": entry["run_support"],
        "meets_k": entry["meets_k"],
        "arguments": entry["arguments"],
        "argument_cut": entry["argument_cut"],
        "arguments_capped": entry["arguments_capped"],
        "paths": entry["paths"],
        "min_cut_nodes": links.get("min_cut_nodes", []),
        "bridge_edges": links.get("bridge_edges", []),
    }


def givens(result: LoopResult, nodes: Nodes, corpus: CorpusRun | None) -> list[GivenRecord]:
    """Every given in the graph with the span it stands for (all givens are span nodes); in a
    corpus run each also gains the file, page, chunk and offsets of the span it cites."""
    out: list[GivenRecord] = []
    for node_id, node in sorted(nodes.items()):
        if node["type"] != "given":
            continue
        span = result.evidence.get(node.get("source"))
        out.append(
            {
                "id": node_id,
                "span": span.id if span else None,
                "document": span.document if span else None,
                "sentence": span.sentence if span else None,
                "text": span.text if span else None,
                "claim": node["claim"],
                "run_ids": node["run_ids"],
                "refuted": node["refuted"],
            }
        )
    if corpus is not None:
        for given in out:
            given["citation"] = corpus.citation(given["span"])
    return out
