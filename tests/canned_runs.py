"""Canned model replies for the orchestrator tests, built on the rack-7 example.

Interrogation replies are keyed by run id (the loop tags every call with its subject, ``r1`` ...
``rN`` for interrogations and repairs, the node id for verifications), so a scripted client
answers deterministically however the thread pool orders the calls.
"""

from __future__ import annotations

import json
import re
import threading
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from graph_server import fixture

ROOT = Path(__file__).resolve().parents[1]
RACK7_TASK: dict[str, Any] = json.loads((ROOT / "examples" / "rack7.json").read_text())


def model_graph(nodes: list[dict[str, Any]], edges: list[dict[str, Any]], conclusion: str) -> str:
    """An interrogation reply as a model writes it (edges with from/to)."""
    return json.dumps(
        {
            "nodes": nodes,
            "edges": [
                {
                    "from": e.get("src", e.get("from")),
                    "to": e.get("dst", e.get("to")),
                    "relation": e["relation"],
                    "confidence": e["confidence"],
                }
                for e in edges
            ],
            "conclusion_node": conclusion,
        }
    )


GOOD = model_graph(fixture.R1_NODES, fixture.R1_EDGES, fixture.CONCLUSION)
"""The design's r1 argument: width 2 (via the survey and via the Linux marking)."""

PARAPHRASE = model_graph(
    [
        {**n, "claim": n["claim"][0].upper() + n["claim"][1:] + "."}
        for n in fixture.R1_NODES
        if n["id"] != "F"
    ],
    [e for e in fixture.R1_EDGES],
    fixture.CONCLUSION,
)
"""The same argument in different case and punctuation: merges into GOOD's nodes."""

CONTRADICTING = model_graph(
    [
        {
            "id": "X",
            "claim": "the survey marks server x9 as not running linux",
            "type": "given",
            "confidence": 0.7,
        },
        {
            "id": "Y",
            "claim": "server x9 cannot be used for the nightly cron job",
            "type": "conclusion",
            "confidence": 0.7,
        },
    ],
    [{"src": "X", "dst": "Y", "relation": "supports", "confidence": 0.7}],
    "Y",
)
"""A misreading run: its given and its conclusion contradict GOOD's (negation guard)."""

MALFORMED = "Sure. Server x9 runs Linux, so yes, it can take the nightly cron job."
"""No JSON at all: neither repair (which answers the same) nor salvage can use it."""

SALVAGEABLE = GOOD[:-1] + ","
"""GOOD cut short with a dangling comma: strict JSON fails, json_repair recovers it."""

WRONG_TEXT = ("not running linux", "cannot be used")


def claim_of(messages: list[dict[str, Any]]) -> str:
    """The claim a verification prompt asks about (its ``Claim: "<json string>"`` line)."""
    match = re.search(r"^Claim: (.*)$", messages[-1]["content"], re.MULTILINE)
    assert match, "not a verification prompt"
    claim = json.loads(match.group(1))
    assert isinstance(claim, str)
    return claim


def verdict(name: str, reason: str = "the documents settle it") -> str:
    """A verification reply."""
    return json.dumps({"verdict": name, "reason": reason})


class Script:
    """A ScriptedClient script: interrogations from ``runs``, repairs from ``repairs`` (default:
    the same broken text again), verifications from ``votes(claim, nth)`` where ``nth`` counts
    the calls about that claim from 0 (thread-safe). Records which claims were verified."""

    def __init__(
        self,
        runs: Mapping[str, str | BaseException],
        *,
        repairs: dict[str, str] | None = None,
        votes: Callable[[str, int], str | BaseException] | None = None,
        barrier: threading.Barrier | None = None,
    ) -> None:
        self.runs = runs
        self.repairs = repairs or {}
        self.votes = votes or refute_wrong_claims
        self.barrier = barrier
        self._lock = threading.Lock()
        self.verified: dict[str, int] = defaultdict(int)

    def __call__(
        self, model: str, messages: list[dict[str, Any]], kwargs: dict[str, Any]
    ) -> str | BaseException:
        role, subject = kwargs["role"], kwargs["tags"]["subject"]
        if role == "interrogation":
            if self.barrier is not None:
                self.barrier.wait()
            return self.runs[subject]
        if role == "repair":
            answer = self.repairs.get(subject, self.runs[subject])
            assert isinstance(answer, str)
            return answer
        claim = claim_of(messages)
        with self._lock:
            nth = self.verified[claim]
            self.verified[claim] += 1
        return self.votes(claim, nth)


def refute_wrong_claims(claim: str, nth: int) -> str:
    """Two of three verifiers refute the misreading (the first one wrongly supports it); every
    other claim is supported."""
    if any(text in claim for text in WRONG_TEXT):
        return verdict("supported") if nth == 0 else verdict("refuted", "[D2] says Linux")
    return verdict("supported", "[D2] and [D3] state it")


def always(name: str) -> Callable[[str, int], str]:
    """Every verifier answers ``name``."""
    return lambda claim, nth: verdict(name)


def split_votes(claim: str, nth: int) -> str:
    """One supported, one refuted, one not determinable: no majority either way."""
    return verdict(("supported", "refuted", "not_determinable")[nth % 3])


def six_runs(**overrides: str | BaseException) -> dict[str, str | BaseException]:
    """r1..r6 all GOOD, with the given runs replaced."""
    runs: dict[str, str | BaseException] = {f"r{i}": GOOD for i in range(1, 7)}
    runs.update(overrides)
    return runs


def chain_run(prefix: str, claims: Iterable[str], conclusion: str, given: str) -> str:
    """A run with one given, a chain of single-run inferences and a conclusion."""
    nodes = [{"id": "g", "claim": given, "type": "given", "confidence": 0.9}]
    edges = []
    previous = "g"
    for i, claim in enumerate(claims):
        node_id = f"{prefix}{i}"
        nodes.append({"id": node_id, "claim": claim, "type": "inference", "confidence": 0.8})
        edges.append({"src": previous, "dst": node_id, "relation": "supports", "confidence": 0.8})
        previous = node_id
    nodes.append({"id": "c", "claim": conclusion, "type": "conclusion", "confidence": 0.8})
    edges.append({"src": previous, "dst": "c", "relation": "supports", "confidence": 0.8})
    return model_graph(nodes, edges, "c")
