"""What every stage of one run shares: the task, the store, the budget, the trace, the call
function that records every model call, and the timers (plumbing only; no rule lives here)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from corpus.evidence import Evidence, build_evidence
from graph_server.store import GraphStore
from orchestrator import parse
from orchestrator.answers import normalise_text
from orchestrator.budget import CallBudget
from orchestrator.calls import CallOutcome, CallSpec, make_call
from orchestrator.chain import ChainContext
from orchestrator.client import SupportsChat
from orchestrator.policy import call_seed
from orchestrator.records import CallRecord, PhaseRecord, RunRecord
from orchestrator.task import RunConfig, Task
from orchestrator.trace import Trace

GRAPH_ID = "task"

MAX_PARALLEL_CALLS = 64
"""Thread-pool ceiling; calls beyond it queue (the budget, not this, bounds how many run)."""

Progress = Callable[[dict[str, Any]], None]


@dataclass
class LoopContext:
    """One run's shared state. ``calls``, ``phases`` and ``local_s`` are appended to from
    worker threads under ``lock``; ``nodes`` is the store's latest view of the graph and
    ``claims`` the first claim seen under each node id (for the report's merge lines)."""

    task: Task
    client: SupportsChat
    model: str
    config: RunConfig
    trace: Trace
    progress: Progress | None
    store: GraphStore = field(default_factory=GraphStore)
    budget: CallBudget = field(init=False)
    compliance: parse.ComplianceTally = field(default_factory=parse.ComplianceTally)
    evidence: Evidence = field(init=False)
    evidence_texts: tuple[str, ...] = field(init=False)
    chain: ChainContext = field(init=False)
    spans: dict[str, str] = field(init=False)
    calls: list[CallRecord] = field(default_factory=list)
    phases: list[PhaseRecord] = field(default_factory=list)
    local_s: dict[str, float] = field(default_factory=dict)
    nodes: dict[str, dict[str, Any]] = field(default_factory=dict)
    claims: dict[str, str] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.budget = CallBudget(self.config.budget_calls)
        self.evidence = build_evidence(self.task.documents)
        # Normalised once: every assessment looks entity answers up in these.
        self.evidence_texts = tuple(normalise_text(span.text) for span in self.evidence.spans)
        self.chain = ChainContext.of(
            self.task.question,
            (span.checked_text for span in self.evidence.spans),
            {span.id: span.reading for span in self.evidence.spans if span.reading},
        )
        self.spans = {span.id: span.text for span in self.evidence.spans}

    def call(self, spec: CallSpec) -> CallOutcome:
        """Make one reserved logical call (:func:`orchestrator.calls.make_call`), keep its
        record, trace it and report progress."""
        outcome = make_call(self.client, self.model, spec)
        record = outcome.record
        with self.lock:
            self.calls.append(record)
            done = len(self.calls)
            known = sum(r["cost_usd"] for r in self.calls if r["cost_usd"] is not None)
            unknown = sum(1 for r in self.calls if r["cost_usd"] is None)
        self.trace.event(
            "call",
            step=spec.step,
            role=spec.role,
            subject=spec.subject,
            vote=spec.vote,
            ok=record["ok"],
            latency_s=record["latency_s"],
            attempts=record["attempts"],
            error=record["error"],
        )
        if self.progress is not None:
            self.progress(
                {
                    "step": spec.step,
                    "calls_done": done,
                    "budget_calls": self.budget.limit,
                    "cost_usd_known": round(known, 12),
                    "calls_cost_unknown": unknown,
                }
            )
        return outcome

    @contextmanager
    def timed(self, name: str) -> Iterator[None]:
        """Add the block's wall time to ``local_s[name]`` (where the non-model time goes)."""
        start = time.perf_counter()
        try:
            yield
        finally:
            with self.lock:
                self.local_s[name] = self.local_s.get(name, 0.0) + time.perf_counter() - start

    def seed(self, *parts: object) -> int | None:
        """The call's seed (:func:`orchestrator.policy.call_seed` of ``config.seed``)."""
        return call_seed(self.config.seed, *parts)

    def has_graph(self) -> bool:
        return any(g.graph_id == GRAPH_ID for g in self.store.list_graphs().graphs)

    def refresh_nodes(self) -> None:
        if self.has_graph():
            graph = self.store.get_graph(GRAPH_ID)
            self.nodes = {node.id: node.model_dump() for node in graph.nodes}


def run_record(run_id: str, outcome: str, errors: list[str]) -> RunRecord:
    """A run's record before anything of it was ingested."""
    return {
        "run_id": run_id,
        "outcome": outcome,
        "errors": list(errors),
        "ingested": False,
        "conclusion_node": None,
        "answer": None,
        "answer_key": "",
        "conclusion_claim": None,
        "accepted_nodes": 0,
        "accepted_edges": 0,
        "rejected": [],
        "wait_s": 0.0,
        "leniencies": [],
    }


def run_number(run_id: str) -> int:
    return int(run_id[1:]) if run_id[1:].isdigit() else 0
