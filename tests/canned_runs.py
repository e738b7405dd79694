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
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from orchestrator.llm import ChatMessage
from orchestrator.llm.testing import ScriptedKwargs

ROOT = Path(__file__).resolve().parents[1]
RACK7_TASK: dict[str, Any] = json.loads((ROOT / "examples" / "rack7.json").read_text())


def model_graph(
    nodes: list[dict[str, Any]],
    edges: list[dict[str, Any]],
    conclusion: str,
    answer: str | None = "yes",
) -> str:
    """An interrogation reply as a model writes it (edges with from/to, a short answer)."""
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
            "answer": answer,
        }
    )


def chain_reply(steps: Iterable[tuple[str, str]], answer: str) -> str:
    """A chain-shaped interrogation reply as a model writes it: ``(sentence id, inference)``
    steps, then the answer."""
    return json.dumps(
        {"steps": [{"sentence": s, "inference": i} for s, i in steps], "answer": answer}
    )


def _node(
    node_id: str, node_type: str, claim: str, confidence: float, source: str = "none"
) -> dict[str, Any]:
    return {
        "id": node_id,
        "type": node_type,
        "source": source,
        "claim": claim,
        "confidence": confidence,
    }


GOOD_NODES: list[dict[str, Any]] = [
    _node("A", "given", "the survey team inventoried every server in rack 7", 0.9, "D1.2"),
    _node("B", "given", "rack 7 survey row 9 lists server x9", 0.9, "D2.1"),
    _node("C", "inference", "server x9 was included in the survey", 0.85),
    _node("D", "given", "the cron scheduler runs only on linux hosts", 0.9, "D3.1"),
    _node("E", "inference", "server x9 can run the cron scheduler", 0.8),
    _node("Z", "conclusion", "server x9 can be used for the nightly cron job", 0.8),
    _node("F", "inference", "rack 7 has spare capacity", 0.6),
]
GOOD_EDGES: list[dict[str, Any]] = [
    {"src": "A", "dst": "C", "relation": "supports", "confidence": 0.9},
    {"src": "B", "dst": "C", "relation": "supports", "confidence": 0.9},
    {"src": "C", "dst": "E", "relation": "supports", "confidence": 0.8},
    {"src": "D", "dst": "E", "relation": "supports", "confidence": 0.85},
    {"src": "E", "dst": "Z", "relation": "supports", "confidence": 0.8},
    {"src": "D", "dst": "Z", "relation": "supports", "confidence": 0.7},
]
SPAN = {"A": "D1.2", "B": "D2.1", "D": "D3.1"}
"""Model node id -> the span node it becomes (its citation passes the check)."""
YES = "answer:yes"
NO = "answer:no"

GOOD = model_graph(GOOD_NODES, GOOD_EDGES, "Z")
"""The design's r1 argument on the rack-7 evidence: width 2 (via the survey and via the cron
policy), every given citing its sentence, answer "yes"."""

PARAPHRASE = model_graph(
    [
        {**n, "claim": n["claim"][0].upper() + n["claim"][1:] + "."}
        for n in GOOD_NODES
        if n["id"] != "F"
    ],
    GOOD_EDGES,
    "Z",
    answer="Yes.",
)
"""The same argument in different case and punctuation: merges into GOOD's nodes."""

CONTRADICTING = model_graph(
    [
        _node("X", "given", "the survey marks server x9 as not running linux", 0.7, "D2.1"),
        _node("Y", "conclusion", "server x9 cannot be used for the nightly cron job", 0.7),
    ],
    [{"src": "X", "dst": "Y", "relation": "supports", "confidence": 0.7}],
    "Y",
    answer="no",
)
"""A misreading run: its given misquotes D2.1 (a negation the sentence lacks, so it is kept
as an assumption) and its answer, "no", contradicts GOOD's (negation guard)."""

MALFORMED = "Sure. Server x9 runs Linux, so yes, it can take the nightly cron job."
"""No JSON at all: neither repair (which answers the same) nor salvage can use it."""

SALVAGEABLE = GOOD[:-1] + ",}"
"""GOOD with a dangling comma before its last brace: strict JSON fails, json_repair recovers
it."""

WRONG_TEXT = ("not running linux", "cannot be used")


def claim_of(messages: Sequence[Mapping[str, Any]]) -> str:
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
        self, model: str, messages: list[ChatMessage], kwargs: ScriptedKwargs
    ) -> str | BaseException:
        tags = kwargs["tags"]
        assert tags is not None
        role, subject = kwargs["role"], tags["subject"]
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
        return verdict("supported") if nth == 0 else verdict("refuted", "[D2.1] says Linux")
    return verdict("supported", "[D2.1] and [D3.1] state it")


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


def chain_run(
    prefix: str,
    claims: Iterable[str],
    conclusion: str,
    given: str,
    source: str = "D3.1",
    answer: str = "yes",
) -> str:
    """A run with one given (citing ``source``), a chain of single-run inferences and a
    conclusion giving ``answer``."""
    nodes = [_node("g", "given", given, 0.9, source)]
    edges = []
    previous = "g"
    for i, claim in enumerate(claims):
        node_id = f"{prefix}{i}"
        nodes.append(_node(node_id, "inference", claim, 0.8))
        edges.append({"src": previous, "dst": node_id, "relation": "supports", "confidence": 0.8})
        previous = node_id
    nodes.append(_node("c", "conclusion", conclusion, 0.8))
    edges.append({"src": previous, "dst": "c", "relation": "supports", "confidence": 0.8})
    return model_graph(nodes, edges, "c", answer)
